"""The live widget's DOM draws what memory holds and what each tensor reads (issue 22 §1).

The committed bundle draws every case of the oracle corpus (``tests/oracle_cells.py``) in
Chromium; from the DOM, each storage cell's value text must be the raw element at its storage
index (read through a plain tensor over the same storage), each logical cell's text ``t[idx]``,
and each stride arrow of each tensor (the picture draws every tensor's) must start on the cell of
the offset and end on the cell of offset + stride.  The widget paints the picture Python laid out
(its ``picture`` trait), so this is the static SVG's oracle (``tests/test_cell_oracle.py``) run on
the painted DOM.
"""

from __future__ import annotations

import pytest
from oracle_cells import arrow_ends, corpus, logical_value, magnitude, matches, raw_cell
from test_label_sizes import too_small

from stridewidget.notebook.picture import picture_of
from stridewidget.scene.build import build_scene

from .lint_corpus import CASES as LINT_CASES
from .lint_corpus import tensors_of
from .test_visual_lint_widget import _RENDER, ROOM, lint_page  # noqa: F401 (a fixture)

pytestmark = pytest.mark.browser

# Value texts by the cell whose box holds their centre; arrow ends in page coordinates.
_READ_DOM = """
() => {
  const centre = (node) => { const b = node.getBoundingClientRect(); return [b.left + b.width / 2, b.top + b.height / 2]; };
  const inside = ([x, y], b, slack = 0) => x >= b.left - 0.5 && x <= b.right + 0.5 && y >= b.top - slack && y <= b.bottom + slack;
  const texts = [...document.querySelectorAll("#pic text.sws-role-v")].map((t) => [centre(t), t.textContent]);
  const within = (cell) => { const b = cell.getBoundingClientRect(); return texts.filter(([c]) => inside(c, b)).map(([, text]) => text); };
  const box = (g) => g.querySelector("rect");
  const storage = [...document.querySelectorAll("#pic g.sws-scell")].map((g) => ({
    storage: g.dataset.storage, cell: Number(g.dataset.cell), texts: within(box(g)), box: box(g).getBoundingClientRect().toJSON(),
  }));
  const logical = [...document.querySelectorAll("#pic g.sws-lcell")].map((g) => ({
    tensor: g.dataset.tensor, slice: Number(g.dataset.slice), r: Number(g.dataset.r), c: Number(g.dataset.c), texts: within(box(g)),
  }));
  const arrows = [...document.querySelectorAll("#pic g.sws-arrow")].map((g) => {
    const path = g.querySelector("path");
    const m = path.getScreenCTM();
    const at = (length) => { const p = path.getPointAtLength(length); return [p.x * m.a + p.y * m.c + m.e, p.x * m.b + p.y * m.d + m.f]; };
    return { tensor: g.dataset.tensor, dims: g.dataset.dim.split(",").map(Number), start: at(0), end: at(path.getTotalLength()) };
  });
  return { storage, logical, arrows };
}
"""

CASES = corpus()


def _index(slice_, r, c):
    index = list(slice_["lead"])
    if slice_["rows"] is not None:
        index.append(slice_["rows"][r])
    if slice_["cols"] is not None:
        index.append(slice_["cols"][c])
    return tuple(index)


def _inside(point, box, slack=3.0):
    x, y = point
    return (
        box["left"] - 0.5 <= x <= box["right"] + 0.5
        and box["top"] - slack <= y <= box["bottom"] + slack
    )


@pytest.mark.parametrize("name", sorted(CASES))
def test_widget_dom_draws_memory_and_reads(lint_page, name):  # noqa: F811 (the fixture)
    page = lint_page
    tensors = CASES[name]()
    objects = list(tensors.values())
    scene = build_scene(tensors)
    state = {"picture": picture_of(scene, ROOM, None), "wrap": None, "hovered": None}
    page.evaluate(_RENDER, ["widget", state])
    page.locator("#pic .sw-root").first.wait_for()
    dom = page.evaluate(_READ_DOM)
    owners = {t["storage"]: objects[t["order"]] for t in reversed(scene["tensors"])}
    storage_values = [
        v
        for s in scene["storages"]
        for v in (raw_cell(owners[s["id"]], c) for c in s["cells"]["index"])
    ]
    scale = magnitude(storage_values)
    checked_storage = 0
    for cell in dom["storage"]:
        expected = raw_cell(owners[cell["storage"]], cell["cell"])
        assert len(cell["texts"]) <= 1, cell
        for text in cell["texts"]:
            assert matches(text, expected, scale), (cell["storage"], cell["cell"], text, expected)
            checked_storage += 1
    assert checked_storage or not any(s["has_values"] for s in scene["storages"])
    by_id = {t["id"]: t for t in scene["tensors"]}
    checked_logical = dict.fromkeys(by_id, 0)
    for cell in dom["logical"]:
        tensor = by_id[cell["tensor"]]
        slice_ = tensor["logical"]["slices"][cell["slice"]]
        expected = logical_value(objects[tensor["order"]], _index(slice_, cell["r"], cell["c"]))
        scale_here = max(scale, magnitude([expected]))
        for text in cell["texts"]:
            assert matches(text, expected, scale_here), (cell, text, expected)
            checked_logical[cell["tensor"]] += 1
    assert all(checked_logical.values()), checked_logical
    boxes = {(c["storage"], c["cell"]): c["box"] for c in dom["storage"]}
    for tensor in scene["tensors"]:
        arrows = [a for a in dom["arrows"] if a["tensor"] == tensor["id"]]
        assert len(arrows) <= len(tensor["arrows"]), (tensor["name"], arrows)
        for arrow in arrows:
            # a merged arrow (d0,d1 +1) stands for dims of one stride: each has the same ends
            for dim in arrow["dims"]:
                start, end = arrow_ends(objects[tensor["order"]], dim)
                assert _inside(arrow["start"], boxes[(tensor["storage"], start)]), (tensor, arrow)
                assert _inside(arrow["end"], boxes[(tensor["storage"], end)]), (tensor, arrow)


_TEXT_SIZES = """
() => [...document.querySelectorAll("#pic svg text")]
  .filter((t) => t.getBoundingClientRect().width > 0)
  .map((t) => [t.textContent, parseFloat(getComputedStyle(t).fontSize)])
"""


def test_widget_text_sizes(lint_page):  # noqa: F811 (the fixture)
    """Values and labels >= 11 px, storage indices >= 9 px, over the lint corpus (issue 22 §4)."""
    page = lint_page
    small = {}
    for case in [c for c in LINT_CASES if not c.playground]:
        scene = build_scene(tensors_of(case), wrap=case.wrap)
        state = {"picture": picture_of(scene, ROOM, None), "wrap": None, "hovered": None}
        page.evaluate(_RENDER, ["widget", state])
        page.locator("#pic .sw-root").first.wait_for()
        texts = page.evaluate(_TEXT_SIZES)
        assert texts
        if too_small(texts):
            small[case.name] = too_small(texts)[:4]
    assert not small
