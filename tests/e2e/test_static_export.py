"""(2) ``python -m stridewidget EXPR --html`` page: the interactive widget with no kernel and no
network — the same picture as the scene says, hover linking, escaped names."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from playwright.sync_api import expect

from stridewidget import __main__ as cli

from .conftest import require_or_skip, screenshot

HIGHLIGHTED = re.compile(r"(^|\s)sw-hl(\s|$)")
EVIL = '<img src=x onerror="window.__pwned = 1">'


@pytest.fixture
def export(tmp_path):
    require_or_skip(
        all((cli.VENDOR / name).is_file() for name in cli._VENDOR_FILES),
        "offline page assets missing: run scripts/fetch_static_assets.sh",
    )

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
        state = json.loads(
            re.search(
                r'<script type="application/vnd.jupyter.widget-state\+json">(.*?)</script>',
                page,
                re.S,
            ).group(1)
        )
        scene = next(m for m in state["state"].values() if m["model_name"] == "AnyModel")
        return out.as_uri(), scene["state"]["scene"]

    return write


def test_static_page_renders_offline_and_links_hover(export, page):
    uri, scene = export("(lambda a: {'a': a, 'cols': a[:, ::2]})(torch.arange(12.0).reshape(3, 4))")
    page.goto(uri)
    root = page.locator(".sw-root")
    expect(root).to_have_count(1, timeout=30_000)
    # the same picture as the scene: every shown storage cell and every logical cell
    storage_cells = root.locator(".sw-scell")
    expect(storage_cells).to_have_count(len(scene["storages"][0]["cells"]["index"]))
    shown = sorted(
        int(c) for c in storage_cells.evaluate_all("els => els.map(e => e.dataset.cell)")
    )
    assert shown == scene["storages"][0]["cells"]["index"]
    expect(root.locator(".sw-lcell")).to_have_count(12 + 6)
    # hover cols[2, 1] -> storage[10] (offset 0 + 2·4 + 1·2), and a[2, 2] which aliases it
    root.locator('.sw-lcell[data-tensor="t1"][data-r="2"][data-c="1"]').hover()
    expect(root.locator('.sw-scell[data-cell="10"]')).to_have_class(HIGHLIGHTED)
    expect(root.locator('.sw-lcell[data-tensor="t0"][data-r="2"][data-c="2"]')).to_have_class(
        HIGHLIGHTED
    )
    expect(root.locator('.sw-scell[data-cell="11"]')).not_to_have_class(HIGHLIGHTED)
    expect(root.locator(".sw-status")).to_contain_text("storage[10] = 10.")
    # storage -> logical: an untouched-by-cols cell lights up a only
    root.locator('.sw-scell[data-cell="5"]').hover()
    expect(root.locator(".sw-lcell.sw-hl")).to_have_count(1)
    screenshot(page, "static_export_hover", full_page=True)
    assert page.external_requests == []  # nothing was fetched from the network
    assert not [line for line in page.console_log if line.startswith(("error", "pageerror"))]


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
        expect(fallback.locator(".sws-lcell")).to_have_count(6)
        expect(fallback.locator('.sws-lcell[data-r="2"][data-c="1"] title')).to_have_text(
            "x[2, 1] → storage[5] = 5."
        )
        assert tab.locator(".sw-root").count() == 0
        screenshot(tab, "static_export_no_javascript")
    finally:
        context.close()
