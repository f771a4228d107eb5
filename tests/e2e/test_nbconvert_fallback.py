"""(3) ``nbconvert --execute --to html`` without widget state: every widget output falls back to
its static SVG (``text/html`` of the mime bundle) — no JS, no kernel — with names escaped."""

from __future__ import annotations

import subprocess
import sys

import nbformat
from playwright.sync_api import expect

from .conftest import screenshot

EVIL = '<img src=x onerror="window.__pwned = 1">'
CELLS = [
    "import torch, stridewidget as sw\n%load_ext stridewidget\nx = torch.arange(12.0).reshape(3, 4)\nx",
    f"sw.show(x, xt=x.t(), **{{{EVIL!r}: x[:, ::2]}})",
    "display(torch.arange(3.0).expand(2, 3))",
]


def test_nbconvert_without_widget_state_shows_the_svg_fallback(page, tmp_path):
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in CELLS])
    notebook.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    source = tmp_path / "fallback.ipynb"
    nbformat.write(notebook, source)
    subprocess.run(
        [
            sys.executable, "-m", "nbconvert", "--to", "html", "--execute", str(source),
            "--ExecutePreprocessor.store_widget_state=False",
            "--output-dir", str(tmp_path), "--output", "fallback",
        ],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    page.goto((tmp_path / "fallback.html").as_uri())
    fallbacks = page.locator(".stridewidget-fallback")
    expect(fallbacks).to_have_count(3, timeout=30_000)
    assert page.locator(".sw-root").count() == 0  # no widget state: no live widget
    # one logical cell per element: x (12); x, x.t(), x[:, ::2] (12 + 12 + 6); expand (6)
    for k, count in enumerate((12, 30, 6)):
        expect(fallbacks.nth(k).locator("svg .sws-lcell")).to_have_count(count)
    # the picture is right: x[1, 2] is storage[6] = 6., and its tooltip says so
    cell = fallbacks.nth(0).locator('.sws-lcell[data-r="1"][data-c="2"]')
    expect(cell.locator("title")).to_have_text("x[1, 2] → storage[6] = 6.")
    # the expanded tensor reads each storage cell twice: each is marked ×2
    expect(fallbacks.nth(2).locator(".sws-scell.sws-multi")).to_have_count(3)
    # a hostile name is text, not markup
    expect(fallbacks.nth(1)).to_contain_text(EVIL)
    assert page.locator(".stridewidget-fallback img").count() == 0
    assert page.evaluate("window.__pwned") is None
    fallbacks.nth(0).locator('.sws-lcell[data-r="1"][data-c="2"]').hover()
    screenshot(page, "nbconvert_svg_fallback", full_page=True)
