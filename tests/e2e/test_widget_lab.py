"""(1) The widget in a live JupyterLab: hover links both ways and reaches the kernel; an in-place
write through a view refreshes the displayed widgets after the cell."""

from __future__ import annotations

import re

import nbformat
from playwright.sync_api import expect

from .conftest import kernel_eval, poll_kernel, screenshot

HIGHLIGHTED = re.compile(r"(^|\s)sw-hl(\s|$)")
CELLS = [
    "import torch, stridewidget as sw\n%load_ext stridewidget\nbase = torch.arange(12.0).reshape(3, 4)\nbase",
    "w = sw.show(base, bt=base.t())\nw",
    "d = torch.arange(120).reshape(10, 3, 4)\nwd = sw.show(d=d)\nwd",
]


def test_hover_reaches_kernel_and_in_place_write_refreshes(lab_server, page):
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in CELLS])
    notebook.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nbformat.write(notebook, lab_server["root"] / "widget_e2e.ipynb")
    page.goto(f"{lab_server['url']}/lab/tree/widget_e2e.ipynb?token={lab_server['token']}&reset")
    page.wait_for_function(
        "() => window.jupyterapp?.shell.currentWidget?.sessionContext?.session?.kernel?.status === 'idle'",
        timeout=120_000,
    )
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    roots = page.locator(".jp-OutputArea-output .sw-root")
    expect(roots).to_have_count(3, timeout=90_000)
    shown_by_formatter, shown_by_show, deep = roots.nth(0), roots.nth(1), roots.nth(2)
    # `%load_ext` + a bare tensor: the widget, not torch's text
    expect(shown_by_formatter.locator(".sws-lcell")).to_have_count(12)

    # logical -> storage: base[1, 2] lives at storage[6] (row-major, offset 0)
    shown_by_show.locator('.sws-lcell[data-tensor="t0"][data-r="1"][data-c="2"]').hover()
    storage_cell = shown_by_show.locator('.sws-scell[data-storage="s0"][data-cell="6"]')
    expect(storage_cell).to_have_class(HIGHLIGHTED)
    # the same storage cell is bt[2, 1]: the aliasing logical cell lights up too
    expect(
        shown_by_show.locator('.sws-lcell[data-tensor="t1"][data-r="2"][data-c="1"]')
    ).to_have_class(HIGHLIGHTED)
    expect(shown_by_show.locator('.sws-scell[data-storage="s0"][data-cell="7"]')).not_to_have_class(
        HIGHLIGHTED
    )
    expect(shown_by_show.locator(".sw-status")).to_contain_text("storage[6]")
    expected = "{'tensor': 't0', 'name': 'base', 'index': [1, 2], 'storage': 's0', 'cell': 6}"
    assert poll_kernel(page, "w.hovered", expected) == expected
    screenshot(page, "lab_hover")

    # in place, through a view (base[1] is a view of base): after the cell both widgets redraw
    kernel_eval(page, "base[1].fill_(-5.0)")
    for root in (shown_by_formatter, shown_by_show):
        expect(root).to_contain_text("-5.", timeout=20_000)
    # the redrawn widget still links hover, now with the new value
    shown_by_show.locator('.sws-lcell[data-tensor="t1"][data-r="0"][data-c="1"]').hover()
    expect(shown_by_show.locator(".sw-status")).to_contain_text("storage[4] = -5.")
    shown_by_formatter.locator('.sws-lcell[data-r="0"][data-c="0"]').hover()
    expect(shown_by_formatter.locator(".sw-status")).to_contain_text("storage[0] = 0.")
    screenshot(page, "lab_after_inplace_write")
    assert kernel_eval(page, "print(w.scene['storages'][0]['cells']['text'][4:8])").strip() == (
        "['-5.', '-5.', '-5.', '-5.']"
    )

    # the slice picker: d lists 8 of its 10 slices; asking for d[8] makes Python draw it
    expect(deep).not_to_contain_text("d[8, :, :]")
    deep.locator(".sw-pick-index").fill("8")
    deep.locator(".sw-pick-show").click()
    assert poll_kernel(page, "wd.picked", "{'d': [[8]]}") == "{'d': [[8]]}"
    expect(deep).to_contain_text("d[8, :, :]", timeout=20_000)
    # its cells are the ones torch puts there: d[8, 2, 3] is storage[8·12 + 2·4 + 3] = 107
    index = kernel_eval(
        page, "print([s['lead'] for s in wd.scene['tensors'][0]['logical']['slices']].index([8]))"
    )
    deep.locator(f'.sws-lcell[data-slice="{index.strip()}"][data-r="2"][data-c="3"]').hover()
    expect(deep.locator(".sw-status")).to_contain_text("storage[107]")
    screenshot(page, "lab_slice_picker")


LUMINANCE = """(el) => {
  const [r, g, b] = getComputedStyle(el).color.match(/[\\d.]+/g).map(Number);
  return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255;
}"""


def test_widget_follows_the_dark_theme(lab_server, page):
    notebook = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell(
                "import torch, stridewidget as sw\nsw.show(x=torch.arange(6.0).reshape(2, 3))"
            )
        ]
    )
    notebook.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nbformat.write(notebook, lab_server["root"] / "theme_e2e.ipynb")
    page.goto(f"{lab_server['url']}/lab/tree/theme_e2e.ipynb?token={lab_server['token']}&reset")
    page.wait_for_function(
        "() => window.jupyterapp?.shell.currentWidget?.sessionContext?.session?.kernel?.status === 'idle'",
        timeout=120_000,
    )
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    root = page.locator(".jp-OutputArea-output .sw-root")
    expect(root).to_have_count(1, timeout=90_000)
    light_text = root.locator(".sw-status").evaluate(LUMINANCE)
    page.evaluate(
        "() => window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Dark'})"
    )
    page.wait_for_function("() => document.body.dataset.jpThemeLight === 'false'", timeout=30_000)
    page.wait_for_timeout(500)  # theme CSS variables settle
    dark_text = root.locator(".sw-status").evaluate(LUMINANCE)
    screenshot(page, "lab_dark_theme")
    # dark theme: light text (and the other way round), not the light theme's dark text
    assert light_text < 0.5 < dark_text, (light_text, dark_text)
    page.evaluate(
        "() => window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Light'})"
    )
