"""The widget in marimo (``mo.ui.anywidget``, served by a headless ``marimo run`` on 127.0.0.1):
it renders, hover reaches Python, an in-place write followed by ``w.refresh()`` redraws it (marimo
has no after-cell hook), and it follows marimo's theme rather than the OS setting."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from .conftest import marimo_app, screenshot

pytestmark = pytest.mark.browser

HIGHLIGHTED = re.compile(r"(^|\s)sw-hl(\s|$)")
APP = """
import marimo

app = marimo.App()


@app.cell
def _():
    import marimo as mo
    import torch

    import stridewidget as sw

    return mo, sw, torch


@app.cell
def _(mo, sw, torch):
    base = torch.arange(12.0).reshape(3, 4)
    w = sw.show(base, bt=base.t())
    widget = mo.ui.anywidget(w)
    widget
    return base, w, widget


@app.cell
def _(mo, w, widget):
    mo.md(f"hovered: `{widget.value.get('hovered')}` / w.hovered: `{w.hovered}`")
    return


@app.cell
def _(mo):
    write = mo.ui.button(label="write in place", value=0, on_click=lambda count: count + 1)
    write
    return (write,)


@app.cell
def _(base, w, write):
    if write.value:
        base[1].fill_(-5.0)  # in place, through a view
        w.refresh()  # no IPython after-cell hook in marimo: the documented way
    return
"""

LUMINANCE = """(el) => {
  const [r, g, b] = getComputedStyle(el).color.match(/[\\d.]+/g).map(Number);
  return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255;
}"""


def test_marimo_renders_links_hover_refreshes_and_follows_its_theme(browser, page, tmp_path):
    page.emulate_media(color_scheme="dark")  # the OS says dark, marimo's page is light
    with marimo_app(tmp_path, APP) as url:
        page.goto(url)
        root = page.locator(".sw-root")  # Playwright's CSS locators pierce marimo's shadow root
        expect(root).to_have_count(1, timeout=90_000)
        expect(root.locator(".sws-lcell")).to_have_count(24)

        # marimo's light theme wins over the OS: dark text
        status = root.locator(".sw-status")
        assert status.evaluate(LUMINANCE) < 0.5
        screenshot(page, "marimo_light_on_dark_os", full_page=True)

        # hover: logical -> storage in the page, and the value reaches Python (both sides)
        root.locator('.sws-lcell[data-tensor="t0"][data-r="1"][data-c="2"]').hover()
        expect(root.locator('.sws-scell[data-cell="6"]')).to_have_class(HIGHLIGHTED)
        hovered = "{'tensor': 't0', 'name': 'base', 'index': [1, 2], 'storage': 's0', 'cell': 6}"
        expect(page.get_by_text("hovered:")).to_contain_text(
            f"hovered: {hovered} / w.hovered: {hovered}", timeout=20_000
        )

        # an in-place write in a later cell, then w.refresh(): the widget redraws
        expect(root).not_to_contain_text("-5.")
        page.get_by_role("button", name="write in place").click()
        expect(root).to_contain_text("-5.", timeout=20_000)
        root.locator('.sws-lcell[data-tensor="t1"][data-r="0"][data-c="1"]').hover()
        expect(root.locator(".sw-status")).to_contain_text("storage[4] = -5.")

        # marimo switches to its dark theme (what its theme setting does to <body>)
        page.evaluate(
            "() => { document.body.classList.remove('light', 'light-theme');"
            " document.body.classList.add('dark', 'dark-theme');"
            " document.body.dataset.theme = 'dark'; }"
        )
        expect(root).to_have_attribute("data-sw-scheme", "dark", timeout=5_000)
        assert status.evaluate(LUMINANCE) > 0.5
        screenshot(page, "marimo_dark_theme", full_page=True)
        assert page.external_requests == []
