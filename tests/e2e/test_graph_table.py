"""The static table of ``sw.graph`` (what a saved notebook shows): it renders in a browser with
no kernel and no JavaScript, one row per node, each drawn copy's SVG visible, and every string a
graph supplies escaped."""

from __future__ import annotations

import dataclasses

import torch
from playwright.sync_api import expect

import stridewidget as sw

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
