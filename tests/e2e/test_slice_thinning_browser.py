"""Issue 22 §3, 5-D thinning, in Chromium at 1,280 px: the issue's 5-D view lists 8 of its 48
slices.  On the static page (``python -m stridewidget EXPR --html``: the widget with no kernel)
the slices left out are named in a visible line, the panel grid has no hole, and an outer index
the scene did not list, picked in the selector, draws its real values (compared with torch).  The
static SVG names them too.  Screenshots: ``artifacts/screenshots/thinning-*.png``."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
import torch

import stridewidget as sw

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
    yield page, json.loads(state)["state"]["scene"]
    context.close()


def _panel_values(page) -> list[tuple[str, bool, list[tuple[int, int, str]]]]:
    return page.locator(".sw-tensor .sw-panel").evaluate_all(
        """panels => panels.map((p) => [
          p.querySelector('.sw-slice-label').textContent,
          p.classList.contains('sw-panel-filled'),
          [...p.querySelectorAll('.sw-lcell')].map((c) => {
            const texts = [...c.parentNode.querySelectorAll('.sw-cell-text')];
            const x = Number(c.getAttribute('x')), y = Number(c.getAttribute('y'));
            const w = Number(c.getAttribute('width')), h = Number(c.getAttribute('height'));
            const t = texts.find((t) => { const tx = Number(t.getAttribute('x')), ty = Number(t.getAttribute('y'));
              return tx > x && tx < x + w && ty > y && ty < y + h; });
            return [Number(c.dataset.r), Number(c.dataset.c), t ? t.textContent : null];
          }),
        ])"""
    )


def _check_grid_against_torch(page, outer: int) -> list[bool]:
    x = _view()
    panels = _panel_values(page)
    labels = [label for label, _, _ in panels]
    assert labels == [f"x[{outer}, {i}, {j}, :, :]" for i in range(4) for j in range(2)]
    for label, _, cells in panels:
        lead = [int(v) for v in re.findall(r"\d+", label)[:3]]
        assert len(cells) == 5 * 3
        for r, c, text in cells:
            assert text is not None, f"{label}[{r}, {c}] has no value drawn"
            assert float(text) == x[(*lead, r, c)].item(), (label, r, c, text)
    assert page.locator(".sw-panel-missing").count() == 0
    return [filled for _, filled, _ in panels]


def test_static_page_names_left_out_slices_and_draws_a_picked_unlisted_one(static_page):
    page, scene = static_page
    gaps = [s for s in scene["tensors"][0]["logical"]["slices"] if s["kind"] == "gap"]
    note = page.locator(".sw-left-out")
    assert note.count() == len(gaps) == 1
    assert note.first.is_visible()
    assert note.first.text_content() == f"⋯ {gaps[0]['count']} slices not shown: {gaps[0]['text']}"
    assert "x[0, 3, 1, :, :]" in note.first.text_content()
    # the default grid: all 8 positions drawn, the one the scene left out marked as such
    filled = _check_grid_against_torch(page, 0)
    assert filled == [False] * 7 + [True]
    screenshot(page, "thinning-static-page-1280-default", full_page=True)
    # the picker offers every index of dim 0; 2 is one the scene did not list
    select = page.locator(".sw-outer-picker select")
    options = select.locator("option").evaluate_all("os => os.map((o) => Number(o.value))")
    assert options == list(range(6))
    select.select_option("2")
    assert _check_grid_against_torch(page, 2) == [True] * 8
    page.locator(".sw-tensor").first.scroll_into_view_if_needed()
    screenshot(page, "thinning-static-page-1280-picked-2", full_page=True)


def test_static_svg_names_left_out_slices(page):
    page.set_viewport_size({"width": 1280, "height": 900})
    page.set_content(f"<body style='margin:8px'>{sw.render_html(x=_view())}</body>")
    notes = page.locator(".sws-gap-note text")
    text = " ".join(notes.all_text_contents())
    assert text.startswith("⋯ 40 slices not shown: x[0, 3, 1, :, :],")
    for part in ("x[1:5, :, :, :, :]", "x[5, :3, :, :, :]", "x[5, 3, 0, :, :]"):
        assert part in text
    for k in range(notes.count()):
        assert notes.nth(k).is_visible()
        box = notes.nth(k).bounding_box()
        assert box["x"] + box["width"] <= 1280
    screenshot(page, "thinning-static-svg-1280", full_page=True)
