"""The static table of ``sw.graph`` (what a saved notebook shows): it renders in a browser with
no kernel and no JavaScript, one row per node, each drawn copy's SVG visible, and every string a
graph supplies escaped."""

from __future__ import annotations

import dataclasses

import torch
from playwright.sync_api import expect

import stridewidget as sw
from stridewidget.style import contrast_ratio

from .conftest import screenshot

EVIL = '<img src=x onerror="window.__pwned = 1">'


class Merge(torch.nn.Module):
    def forward(self, x):
        return x.transpose(1, 2).reshape(x.shape[0], -1)


def test_graph_table_renders_and_escapes(page, tmp_path):
    g = sw.graph(Merge(), torch.randn(2, 3, 4), stage="aten")
    (copy,) = g.copies
    # a hostile user path and reason (file names come from the user's code)
    g.nodes[g.nodes.index(copy)] = dataclasses.replace(copy, where=EVIL, reason=EVIL)
    path = tmp_path / "graph.html"
    path.write_text(f"<!DOCTYPE html><html><body>{g._repr_html_()}</body></html>")
    page.goto(path.as_uri())
    table = page.locator(".stridewidget-graph table")
    expect(table).to_have_count(1, timeout=30_000)
    expect(table.locator("tbody tr")).to_have_count(len(g.nodes))
    figure = page.locator(".stridewidget-graph figure svg")
    expect(figure.first).to_be_visible()
    assert figure.first.bounding_box()["width"] > 50
    assert page.evaluate("window.__pwned") is None
    assert page.locator("img").count() == 0
    expect(page.get_by_text(EVIL).first).to_be_visible()  # shown as text, not markup
    screenshot(page, "graph_table")


def _hex(rgb: str) -> str:
    r, g, b = (int(v) for v in rgb[rgb.index("(") + 1 : rgb.index(")")].split(",")[:3])
    return f"#{r:02x}{g:02x}{b:02x}"


def test_graph_table_reads_in_a_dark_page(page, tmp_path):
    """A dark theme's light text (nbconvert --theme dark, JupyterLab Dark) never lands on the
    pale rows: every row's drawn text against its drawn background, >= 4.5:1."""

    def mixed(x):
        y = x.t().contiguous()
        z = x.view(-1)
        z.add_(1)
        return y, z

    g = sw.graph(mixed, torch.randn(3, 4), stage="export")
    path = tmp_path / "dark.html"
    path.write_text(
        "<!DOCTYPE html><html><body style='background:#111111;color:#eeeeee'>"
        f"{g._repr_html_()}</body></html>"
    )
    page.set_viewport_size({"width": 900, "height": 900})
    page.goto(path.as_uri())
    rows = page.locator(".stridewidget-graph tbody tr")
    expect(rows).to_have_count(len(g.nodes), timeout=30_000)
    drawn = rows.evaluate_all(
        """rs => rs.map(r => { const s = getComputedStyle(r.querySelector('td'));
               const bg = getComputedStyle(r).backgroundColor;
               return [r.cells[1].textContent, bg, s.color]; })"""
    )
    seen = set()
    for kind, background, colour in drawn:
        if background in ("rgba(0, 0, 0, 0)", "transparent"):
            background = "rgb(17, 17, 17)"  # the page's own, under an uncoloured row
        else:
            seen.add(kind)
        assert contrast_ratio(_hex(background), _hex(colour)) >= 4.5, (kind, background, colour)
    assert seen == {"copy", "view", "in-place"}
    screenshot(page, "graph_table_dark_900")
