"""(2) ``python -m stridewidget EXPR --html`` page: the interactive widget with no kernel and no
network — the picture Python laid out, painted, hover linking, the values/index toggle (the row
width says it needs a kernel), escaped names, the page's theme."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
import torch
from playwright.sync_api import expect

from stridewidget.scene.build import build_scene

from .conftest import screenshot
from .svg_chunks import text_chunks

HIGHLIGHTED = re.compile(r"(^|\s)sw-hl(\s|$)")
EVIL = '<img src=x onerror="window.__pwned = 1">'


@pytest.fixture
def export(tmp_path):
    def write(expr: str) -> tuple[str, dict]:
        out = tmp_path / "page.html"
        result = subprocess.run(
            [sys.executable, "-m", "stridewidget", expr, "--html", str(out)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert result.returncode == 0, result.stderr
        page = out.read_text()
        view = json.loads(
            re.search(
                r'<script type="application/vnd\.stridewidget\.view\+json">(.*?)</script>',
                page,
                re.S,
            ).group(1)
        )
        assert "picture" in view["state"] and "scene" not in view["state"]  # Python laid it out
        # the scene the page's picture was laid out from, built here from the same expression
        # (a mapping of names: the names the command line gives it)
        tensors = eval(expr, {"torch": torch})
        scene = build_scene(tensors) if isinstance(tensors, dict) else None
        return out.as_uri(), scene

    return write


def test_static_page_renders_offline_and_links_hover(export, page):
    uri, scene = export("(lambda a: {'a': a, 'cols': a[:, ::2]})(torch.arange(12.0).reshape(3, 4))")
    page.goto(uri)
    root = page.locator(".sw-root")
    expect(root).to_have_count(1, timeout=30_000)
    # the same picture as the scene: every shown storage cell and every logical cell
    storage_cells = root.locator(".sws-scell")
    expect(storage_cells).to_have_count(len(scene["storages"][0]["cells"]["index"]))
    shown = sorted(
        int(c) for c in storage_cells.evaluate_all("els => els.map(e => e.dataset.cell)")
    )
    assert shown == scene["storages"][0]["cells"]["index"]
    expect(root.locator(".sws-lcell")).to_have_count(12 + 6)
    # hover cols[2, 1] -> storage[10] (offset 0 + 2·4 + 1·2), and a[2, 2] which aliases it
    root.locator('.sws-lcell[data-tensor="t1"][data-r="2"][data-c="1"]').hover()
    expect(root.locator('.sws-scell[data-cell="10"]')).to_have_class(HIGHLIGHTED)
    expect(root.locator('.sws-lcell[data-tensor="t0"][data-r="2"][data-c="2"]')).to_have_class(
        HIGHLIGHTED
    )
    expect(root.locator('.sws-scell[data-cell="11"]')).not_to_have_class(HIGHLIGHTED)
    expect(root.locator(".sw-status")).to_contain_text("storage[10] = 10.")
    # storage -> logical: an untouched-by-cols cell lights up a only
    root.locator('.sws-scell[data-cell="5"]').hover()
    expect(root.locator(".sws-lcell.sw-hl")).to_have_count(1)
    screenshot(page, "static_export_hover", full_page=True)
    # the row width needs Python to lay the strip out again: without a kernel the page says so
    expect(root.locator("input.sw-wrap")).to_be_disabled()
    expect(root.locator(".sw-needs-kernel")).to_contain_text("needs a kernel")
    # what cells show is a class switch: it works without a kernel, nothing is laid out again
    root.locator('.sw-mode-button[data-mode="index"]').click()
    expect(root.locator(".sws-role-v").first).to_be_hidden()
    expect(root.locator(".sws-role-i").first).to_be_visible()
    assert page.external_requests == []  # nothing was fetched from the network
    assert not [line for line in page.console_log if line.startswith(("error", "pageerror"))]


LUMINANCE = """(el) => {
  const [r, g, b] = getComputedStyle(el).color.match(/[\\d.]+/g).map(Number);
  return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255;
}"""
FILL_LUMINANCE = LUMINANCE.replace(".color.", ".fill.")


def test_static_page_follows_the_os_unless_the_page_names_its_theme(export, page):
    uri, _ = export("torch.arange(6.0).reshape(2, 3)")
    page.emulate_media(color_scheme="light")
    page.goto(uri)
    status = page.locator(".sw-root .sw-status")
    expect(status).to_have_count(1, timeout=30_000)
    assert status.evaluate(LUMINANCE) < 0.5  # dark text on a light page
    # the painted picture follows too (its colours are light-dark() of the two palettes)
    background = page.locator(".sw-root svg.sws-picture > rect").first
    assert background.evaluate(FILL_LUMINANCE) > 0.5
    page.emulate_media(color_scheme="dark")
    assert status.evaluate(LUMINANCE) > 0.5
    assert background.evaluate(FILL_LUMINANCE) < 0.5
    screenshot(page, "static_export_os_dark")
    # a host that marks its theme (marimo's .light / .dark, VS Code's body classes) beats the OS
    for host_class, text_is_light in (("light", False), ("vscode-light", False), ("dark", True)):
        page.evaluate(f"document.body.className = {host_class!r}")
        assert (status.evaluate(LUMINANCE) > 0.5) is text_is_light, host_class
    page.evaluate("document.body.className = ''")
    page.emulate_media(color_scheme="light")
    # VS Code's variables, when the host defines them, win over the palette
    page.evaluate("document.body.style.setProperty('--vscode-editor-foreground', 'rgb(255, 0, 0)')")
    assert status.evaluate("e => getComputedStyle(e).color") == "rgb(255, 0, 0)"


def test_static_page_shows_hostile_names_as_text(export, page):
    uri, _ = export(f"{{{EVIL!r}: torch.zeros(2, 2)}}")
    page.goto(uri)
    root = page.locator(".sw-root")
    expect(root).to_have_count(1, timeout=30_000)
    expect(root).to_contain_text(EVIL)
    assert page.locator("img").count() == 0
    assert page.evaluate("window.__pwned") is None
    screenshot(page, "static_export_hostile_name")


def test_static_page_without_javascript_shows_the_svg_picture(export, browser):
    uri, _ = export("torch.arange(6.0).reshape(2, 3).t()")
    context = browser.new_context(
        java_script_enabled=False, viewport={"width": 1000, "height": 700}
    )
    try:
        tab = context.new_page()
        tab.goto(uri)
        fallback = tab.locator(".stridewidget-fallback")
        expect(fallback).to_have_count(1)
        # the picture (no per-cell keys: the page with JavaScript is the interactive one), its
        # layout in words once
        assert fallback.locator("svg [data-cell], svg .sws-lcell").count() == 0
        words = fallback.locator("svg").get_attribute("aria-label")
        assert words == "memory layout of x: float32 (3,2):(1,3) +0 · storage 6 · F-contiguous"
        texts = text_chunks(fallback.locator("svg"))
        assert [texts.count(f"{v}.") for v in range(6)] == [2] * 6  # in the strip and the grid
        assert tab.locator(".sw-root").count() == 0
        screenshot(tab, "static_export_no_javascript")
    finally:
        context.close()
