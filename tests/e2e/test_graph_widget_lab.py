"""``g`` (an ``sw.graph``) at the end of a cell in a live JupyterLab: the nodes as a table; clicking
a node (or moving with the keyboard) makes the kernel draw that node's layout beside its inputs'.
The oracle for the picture is computed in the kernel from the FX graph's own values, not from the
widget: the drawn tensors' names, their symbolic layout texts and their logical cell counts, and
which of them share a storage strip (the program replayed on real tensors).  Screenshots in both
themes at 1,280 px and in a 900 px window."""

from __future__ import annotations

import ast

import nbformat
import pytest
from playwright.sync_api import expect

from .conftest import SCREENSHOTS, kernel_eval, screenshot

pytestmark = pytest.mark.browser

SETUP = """\
import torch, stridewidget as sw
from torch.export import Dim

class Tokens(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(3, 3)

    def forward(self, x):
        t = x.permute(0, 2, 1).reshape(x.shape[0], -1, x.shape[1])
        return self.lin(t).transpose(1, 2).contiguous()

program = torch.export.export(
    Tokens(), (torch.randn(2, 3, 4),), dynamic_shapes={"x": {0: Dim("batch")}}
)
g = sw.graph(program, stage="export")
g"""

# the oracle, in the kernel: what node `i` and its inputs are, from the FX graph itself
ORACLE = """\
def _header(layout):
    # symbolic: the symbols and the sizes drawn at; concrete: shape:strides +offset
    if getattr(layout, "is_symbolic", False):
        return str(layout.example())
    join = lambda xs: ",".join(map(str, xs))
    return f"({join(layout.shape)}):({join(layout.strides)}) +{layout.offset}"

def _expected(i):
    import math
    node = g.nodes[i].node
    real = g.run()
    vals = [(n.name, sw.inspect(n.meta["val"])) for n in (node, *node.all_input_nodes)
            if isinstance(n.meta.get("val"), torch.Tensor)]
    drawn = lambda lay: lay.example() if getattr(lay, "is_symbolic", False) else lay
    return [
        ("%" + name, _header(lay), math.prod(drawn(lay).shape),
         [sw.same_storage(real[name], real[other]) for other, _ in vals])
        for name, lay in vals
    ]
"""

LIVE = (
    "import warnings; warnings.simplefilter('ignore', DeprecationWarning); "
    "print([w.selected for w in list(sw.graph.GraphWidget.widgets.values()) "
    "if isinstance(w, sw.graph.GraphWidget)])"
)


def _open(lab_server, page):
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(SETUP)])
    notebook.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nbformat.write(notebook, lab_server["root"] / "graph_e2e.ipynb")
    page.goto(f"{lab_server['url']}/lab/tree/graph_e2e.ipynb?token={lab_server['token']}&reset")
    page.wait_for_function(
        "() => window.jupyterapp?.shell.currentWidget?.sessionContext?.session?.kernel?.status === 'idle'",
        timeout=120_000,
    )
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    root = page.locator(".jp-OutputArea-output .sw-graph")
    expect(root).to_have_count(1, timeout=120_000)
    kernel_eval(page, ORACLE)
    return root


PICTURE_STORAGES = (
    "import warnings; warnings.simplefilter('ignore', DeprecationWarning); "
    "print([t['storage'] for t in [w for w in list(sw.graph.GraphWidget.widgets.values()) "
    "if isinstance(w, sw.graph.GraphWidget)][-1].picture['tensors']])"
)


def _check_drawn(page, root, index: int) -> None:
    expect(root.locator(".sw-graph-caption")).to_have_attribute("data-drawn", str(index))
    expected = ast.literal_eval(kernel_eval(page, f"print(_expected({index}))"))
    picture = root.locator(".sw-graph-picture svg.sws-picture")
    # its title: "memory layout of a: <layout>; b: <layout>[; both over storage s0]"
    parts = picture.get_attribute("aria-label").removeprefix("memory layout of ").split("; ")
    names = [part.split(": ", 1)[0] for part in parts if ": " in part]
    assert names == [name for name, *_ in expected]
    # which storage each drawn tensor is over: the picture's own table (the painter's input)
    storages = ast.literal_eval(kernel_eval(page, PICTURE_STORAGES))
    for position, (name, _, numel, shares) in enumerate(expected):
        drawn = root.locator(f'.sw-graph-picture .sws-lcell[data-tensor="t{position}"]')
        expect(drawn).to_have_count(numel)
        assert [storages[position] == other for other in storages] == shares, name


def _shots(page, root, name: str) -> None:
    screenshot(page, f"graph_lab_{name}")
    root.screenshot(path=str(SCREENSHOTS / f"graph_lab_{name}_widget.png"))
    picture = root.locator(".sw-graph-picture")
    picture.scroll_into_view_if_needed()
    picture.screenshot(path=str(SCREENSHOTS / f"graph_lab_{name}_picture.png"))


# every word of a layout / where / op cell (split where the cell may wrap: spaces, after ":", "-"
# and '/') must be drawn on one line: a word with two client rects was cut in the middle
BROKEN_WORDS = """(root) => {
  const broken = [];
  for (const cell of root.querySelectorAll('.sw-graph-layout, .sw-graph-where, .sw-graph-op')) {
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let text = walker.nextNode(); text; text = walker.nextNode()) {
      const re = /[^\\s:/-]+[:/-]?/g;
      for (let m = re.exec(text.data); m; m = re.exec(text.data)) {
        const range = document.createRange();
        range.setStart(text, m.index);
        range.setEnd(text, m.index + m[0].length);
        const lines = new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top)));
        if (lines.size > 1) broken.push(m[0]);
      }
    }
  }
  return broken;
}"""


def _broken_words(root):
    return root.evaluate(BROKEN_WORDS)


def _row_in_view(root, index: int) -> bool:
    return root.evaluate(
        """(root, index) => {
          const wrap = root.querySelector('.sw-graph-table-wrap').getBoundingClientRect();
          const head = root.querySelector('.sw-graph-table thead').getBoundingClientRect().height;
          const row = root.querySelectorAll('tr.sw-graph-row')[index].getBoundingClientRect();
          return row.top >= wrap.top + head - 1 && row.bottom <= wrap.bottom + 1;
        }""",
        index,
    )


def test_clicking_a_node_draws_it_beside_its_inputs(lab_server, page):
    page.set_viewport_size({"width": 1280, "height": 1000})
    root = _open(lab_server, page)
    count = int(kernel_eval(page, "print(len(g.nodes))"))
    rows = root.locator("tr.sw-graph-row")
    expect(rows).to_have_count(count)
    names = ast.literal_eval(kernel_eval(page, "print([n.name for n in g.nodes])"))
    assert rows.locator(".sw-graph-name").all_text_contents() == names

    kinds = ast.literal_eval(kernel_eval(page, "print([n.kind for n in g.nodes])"))
    copies = [i for i, kind in enumerate(kinds) if kind == "copy"]
    assert len(copies) == 1
    _check_drawn(page, root, copies[0])  # shown first: what a reader came for
    permute = names.index("permute")
    rows.nth(permute).click()
    _check_drawn(page, root, permute)  # a view: over its input's strip
    assert kernel_eval(page, LIVE).strip() == f"[{permute}]"  # the selection reached the kernel
    _shots(page, root, "light_1280")

    # keyboard: the selected row has the focus; ArrowDown selects the next node
    expect(rows.nth(permute)).to_be_focused()
    page.keyboard.press("ArrowDown")
    _check_drawn(page, root, permute + 1)
    page.keyboard.press("ArrowDown")
    _check_drawn(page, root, permute + 2)
    assert kernel_eval(page, LIVE).strip() == f"[{permute + 2}]"

    page.evaluate(
        "() => window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Dark'})"
    )
    page.wait_for_function("() => document.body.dataset.jpThemeLight === 'false'", timeout=30_000)
    page.wait_for_timeout(500)
    _shots(page, root, "dark_1280")
    rows.nth(count - 1).focus()
    page.keyboard.press("End")  # the last row: at 900 px the rows rewrap taller, pushing it down
    _check_drawn(page, root, count - 1)
    page.set_viewport_size({"width": 900, "height": 1000})
    page.wait_for_timeout(500)
    assert _row_in_view(root, count - 1)
    assert _broken_words(root) == []
    linear = names.index("linear")  # three inputs: the tokens, the weight, the bias
    rows.nth(linear).click()
    _check_drawn(page, root, linear)
    page.wait_for_timeout(300)
    _shots(page, root, "dark_900")
    page.evaluate(
        "() => window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Light'})"
    )
    page.wait_for_function("() => document.body.dataset.jpThemeLight === 'true'", timeout=30_000)
    page.wait_for_timeout(500)
    _shots(page, root, "light_900")
    assert page.external_requests == []
