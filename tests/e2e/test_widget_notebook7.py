"""The widget in Jupyter Notebook 7: render, hover reaching the kernel, the row-width control
syncing both ways, an in-place write refreshing it after the cell, and the Notebook's dark theme."""

from __future__ import annotations

import re

import nbformat
import pytest
from playwright.sync_api import expect

from .conftest import kernel_eval, poll_kernel, screenshot

pytestmark = pytest.mark.browser

HIGHLIGHTED = re.compile(r"(^|\s)sw-hl(\s|$)")
CELLS = [
    "import torch, stridewidget as sw\nbase = torch.arange(12.0).reshape(3, 4)",
    "w = sw.show(base, bt=base.t())\nw",
]
LUMINANCE = """(el) => {
  const [r, g, b] = getComputedStyle(el).color.match(/[\\d.]+/g).map(Number);
  return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255;
}"""


def test_notebook7_hover_wrap_refresh_and_theme(notebook_server, page):
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in CELLS])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    nbformat.write(notebook, notebook_server["root"] / "nb7.ipynb")
    page.emulate_media(color_scheme="dark")  # the OS says dark; Notebook's light theme must win
    page.goto(f"{notebook_server['url']}/notebooks/nb7.ipynb?token={notebook_server['token']}")
    page.wait_for_function(
        "() => window.jupyterapp?.shell.currentWidget?.sessionContext?.session?.kernel"
        "?.status === 'idle'",
        timeout=120_000,
    )
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    root = page.locator(".jp-OutputArea-output .sw-root")
    expect(root).to_have_count(1, timeout=90_000)
    expect(root.locator(".sws-lcell")).to_have_count(24)
    assert root.locator(".sw-status").evaluate(LUMINANCE) < 0.5

    # hover: base[1, 2] is storage[6], which bt[2, 1] reads too; the kernel sees it
    root.locator('.sws-lcell[data-tensor="t0"][data-r="1"][data-c="2"]').hover()
    expect(root.locator('.sws-scell[data-cell="6"]')).to_have_class(HIGHLIGHTED)
    expect(root.locator('.sws-lcell[data-tensor="t1"][data-r="2"][data-c="1"]')).to_have_class(
        HIGHLIGHTED
    )
    expected = "{'tensor': 't0', 'name': 'base', 'index': [1, 2], 'storage': 's0', 'cell': 6}"
    assert poll_kernel(page, "w.hovered", expected) == expected

    # the row width both ways: page -> kernel, kernel -> page
    root.locator("input.sw-wrap").fill("6")
    root.locator("input.sw-wrap").dispatch_event("change")
    assert poll_kernel(page, "w.wrap", "6") == "6"
    kernel_eval(page, "w.wrap = 3")
    expect(root.locator("input.sw-wrap")).to_have_value("3", timeout=20_000)
    screenshot(page, "notebook7_hover")

    # an in-place write through a view, in a later cell: the after-cell hook redraws the widget
    kernel_eval(page, "base[1].fill_(-5.0)")
    expect(root).to_contain_text("-5.", timeout=20_000)

    page.evaluate(
        "() => window.jupyterapp.commands.execute('apputils:change-theme',"
        " {theme: 'JupyterLab Dark'})"
    )
    page.wait_for_function("() => document.body.dataset.jpThemeLight === 'false'", timeout=30_000)
    page.wait_for_timeout(500)  # theme CSS variables settle
    assert root.locator(".sw-status").evaluate(LUMINANCE) > 0.5
    screenshot(page, "notebook7_dark_theme")
    page.evaluate(
        "() => window.jupyterapp.commands.execute('apputils:change-theme',"
        " {theme: 'JupyterLab Light'})"
    )
    assert page.external_requests == []
