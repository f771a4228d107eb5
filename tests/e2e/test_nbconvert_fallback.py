"""(3) ``nbconvert --execute --to html``: without widget state every widget output falls back to
its static SVG (``text/html`` of the mime bundle) — no JS, no kernel — with names escaped; with
widget state the interactive widget renders (its CDN scripts answered from local copies)."""

from __future__ import annotations

import pathlib
import re
import subprocess
import sys

import anywidget
import nbformat
from playwright.sync_api import expect

from .conftest import screenshot
from .svg_chunks import text_chunks
from .visual_lint import counts, lint

EVIL = '<img src=x onerror="window.__pwned = 1">'
CELLS = [
    "import torch, stridewidget as sw\n%load_ext stridewidget\nx = torch.arange(12.0).reshape(3, 4)\nx",
    f"sw.show(x, xt=x.t(), **{{{EVIL!r}: x[:, ::2]}})",
    "display(torch.arange(3.0).expand(2, 3))",
]


def convert(tmp_path, name: str, *options: str):
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in CELLS])
    notebook.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    source = tmp_path / f"{name}.ipynb"
    nbformat.write(notebook, source)
    subprocess.run(
        [
            sys.executable, "-m", "nbconvert", "--to", "html", "--execute", str(source),
            *options, "--output-dir", str(tmp_path), "--output", name,
        ],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    return (tmp_path / f"{name}.html").as_uri()


def test_nbconvert_without_widget_state_shows_the_svg_fallback(page, tmp_path):
    page.goto(convert(tmp_path, "fallback", "--ExecutePreprocessor.store_widget_state=False"))
    fallbacks = page.locator(".stridewidget-fallback")
    expect(fallbacks).to_have_count(3, timeout=30_000)
    assert page.locator(".sw-root").count() == 0  # no widget state: no live widget
    # a picture, not an app: no per-cell groups or keys; the layout in words once per picture
    assert (
        page.locator(
            ".stridewidget-fallback svg .sws-lcell, .stridewidget-fallback [data-cell]"
        ).count()
        == 0
    )
    words = [fallbacks.nth(k).locator("svg").get_attribute("aria-label") for k in range(3)]
    assert words[0] == "memory layout of x: float32 (3,4):(4,1) +0 · storage 12 · contiguous"
    assert "xt: float32 (4,3):(1,4) +0" in words[1] and "all 3 over storage s0" in words[1]
    # the expanded tensor reads each storage cell twice: each is marked ×2
    marks = text_chunks(fallbacks.nth(2).locator("svg"))
    assert marks.count("A×2") == 3, marks
    # a hostile name is text, not markup
    expect(fallbacks.nth(1)).to_contain_text(EVIL)
    assert page.locator(".stridewidget-fallback img").count() == 0
    assert page.evaluate("window.__pwned") is None
    # legible inside nbconvert's own page and styles: no text on another, none cut, none faint
    for k in range(3):
        found = counts(lint(page, f".stridewidget-fallback >> nth={k}"))
        assert (found["overlaps"], found["clipped"], found["low_contrast"]) == (0, 0, 0), found
    screenshot(page, "nbconvert_svg_fallback", full_page=True)


# nbconvert's page loads these from CDNs; here they come from checksummed local copies
# (conftest's cdn_copies) and from the installed anywidget.
CDN = [
    (re.compile(r"/require(\.min)?\.js$"), lambda copies: copies["require.js"]),
    (re.compile(r"/@jupyter-widgets/html-manager@[^/]+/dist/embed-amd\.js$"),
     lambda copies: copies["html-manager-embed-amd.js"]),
    (re.compile(r"/anywidget@[^/]+/dist/index(\.js)?$"),
     lambda copies: pathlib.Path(anywidget.__file__).parent / "nbextension" / "index.js"),
]  # fmt: skip


def test_nbconvert_with_widget_state_renders_the_interactive_widget(page, tmp_path, cdn_copies):
    served: list[str] = []

    def from_local_copies(route) -> None:
        for pattern, path in CDN:
            if pattern.search(route.request.url):
                served.append(route.request.url)
                route.fulfill(path=str(path(cdn_copies)), content_type="application/javascript")
                return
        route.fallback()  # everything else: the fixture's offline rule

    page.route(re.compile(r"^https://"), from_local_copies)
    page.goto(convert(tmp_path, "with_state"))
    roots = page.locator(".sw-root")
    expect(roots).to_have_count(3, timeout=30_000)
    assert page.locator(".stridewidget-fallback").count() == 0  # the widget replaced it
    second = roots.nth(1)
    second.locator('.sws-lcell[data-tensor="t1"][data-r="2"][data-c="1"]').hover()  # x.t()[2, 1]
    expect(second.locator(".sw-status")).to_contain_text("storage[6] = 6.")
    expect(second).to_contain_text(EVIL)
    assert page.evaluate("window.__pwned") is None
    assert len(served) == 3, served
    screenshot(page, "nbconvert_with_widget_state", full_page=True)
