"""Issue 22 §3, 5-D thinning, in Chromium at 1,280 px: the issue's 5-D view lists 8 of its 48
slices.  On the static page (``python -m stridewidget EXPR --html``: the widget with no kernel,
painting the picture Python laid out) the slices left out are named in a visible line, as in the
static SVG, and every drawn logical cell holds its real value (compared with torch).  Screenshots: ``artifacts/screenshots/thinning-*.png``."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
import torch

import stridewidget as sw
from stridewidget.scene.build import build_scene

from .conftest import screenshot

EXPR = "torch.arange(720.).reshape(2, 3, 4, 5, 6).permute(4, 2, 0, 3, 1)"


def _view():
    return eval(EXPR, {"torch": torch})


@pytest.fixture
def static_page(tmp_path, browser):
    out = tmp_path / "page.html"
    result = subprocess.run(
        [sys.executable, "-m", "stridewidget", f"{{'x': {EXPR}}}", "--html", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    state = re.search(
        r'<script type="application/vnd\.stridewidget\.view\+json">(.*?)</script>',
        out.read_text(),
        re.S,
    ).group(1)
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.goto(out.as_uri())
    page.locator(".sw-root").wait_for(timeout=30_000)
    assert "picture" in json.loads(state)["state"]
    # the scene the page's picture was laid out from, built here from the same expression
    yield page, build_scene({"x": _view()})
    context.close()


_PAINTED = """() => [...document.querySelectorAll(".sw-root g.sws-lcell")].map((g) => [
  g.dataset.index, g.querySelector("text.sws-role-v")?.textContent ?? null,
])"""


def test_static_page_names_left_out_slices_and_draws_real_values(static_page):
    page, scene = static_page
    gaps = [s for s in scene["tensors"][0]["logical"]["slices"] if s["kind"] == "gap"]
    notes = page.locator(".sw-root .sws-gap-note text")
    assert notes.count() >= len(gaps) == 1
    assert notes.first.is_visible()
    said = " ".join(notes.all_text_contents())
    assert said.startswith(f"⋯ {gaps[0]['count']} slices not shown: ")
    assert "x[0, 3, 1, :, :]" in said
    # the same words as the static SVG's
    static = sw.render_svg(x=_view())
    assert all(text in static for text in notes.all_text_contents())
    x = _view()
    cells = page.evaluate(_PAINTED)
    listed = sum(len(s["rows"]) * len(s["cols"]) for s in scene["tensors"][0]["logical"]["slices"]
                 if s["kind"] != "gap")  # fmt: skip
    assert len(cells) == listed
    for index, text in cells:
        at = tuple(int(i) for i in index.split(","))
        assert text is not None and float(text) == x[at].item(), (at, text)
    screenshot(page, "thinning-static-page-1280-default", full_page=True)


def test_static_svg_names_left_out_slices(page):
    page.set_viewport_size({"width": 1280, "height": 900})
    # the keyed SVG export (its groups name the notes); the saved fallback draws the same texts
    page.set_content(f"<body style='margin:8px'>{sw.render_svg(x=_view())}</body>")
    notes = page.locator(".sws-gap-note text")
    text = " ".join(notes.all_text_contents())
    assert all(note in sw.render_html(x=_view()) for note in notes.all_text_contents())
    assert text.startswith("⋯ 40 slices not shown: x[0, 3, 1, :, :],")
    for part in ("x[1:5, :, :, :, :]", "x[5, :3, :, :, :]", "x[5, 3, 0, :, :]"):
        assert part in text
    for k in range(notes.count()):
        assert notes.nth(k).is_visible()
        box = notes.nth(k).bounding_box()
        assert box["x"] + box["width"] <= 1280
    screenshot(page, "thinning-static-svg-1280", full_page=True)
