"""A long storage strip keeps at most ``max_strip_rows`` rows (issue 36 "Fit"): the rows its
stride arrows start or end in first, the first rows after them; runs left out are one marker
each.  Oracles: the same picture drawn with no row cap (every arrow it draws is still drawn),
and brute force over torch's own element offsets for what each marker says it leaves out
(``tests/test_gap_reads.py`` checks the marker words the same way)."""

from __future__ import annotations

import pytest
import torch

from stridewidget.render import picture as picture_module
from stridewidget.render import strip_rows as strip_module
from stridewidget.render.picture import draw
from stridewidget.scene.build import build_scene

CASES = {
    "5-d permuted": lambda: {
        "p": torch.arange(720.0).reshape(2, 3, 4, 5, 6).permute(4, 2, 0, 3, 1)
    },
    "attention heads": lambda: (lambda q: {"q": q, "h": q.view(2, 5, 4, 8).transpose(1, 2)})(
        torch.arange(320.0).reshape(2, 5, 32)
    ),
    "channels-last batch": lambda: {
        "c": torch.arange(600.0).reshape(2, 3, 10, 10).contiguous(memory_format=torch.channels_last)
    },
    "transpose of a long run": lambda: (lambda x: {"x": x, "xt": x.t()})(
        torch.arange(600.0).reshape(20, 30)
    ),
}


def _groups(items, cls):
    for item in items:
        if getattr(item, "cls", None) is not None:
            if cls in item.cls.split():
                yield item
            yield from _groups(item.children, cls)


def _rows_and_arrows(scene, every_tensor=False):
    # the height cap alone (no weight ladder); ``every_tensor``: none listed in words (a picture
    # with no row cap is too tall, and two tensors too tall for the budget list the last)
    picture = draw(scene, width=900, light=False, every_tensor=every_tensor)
    cells = list(_groups(picture.items, "sws-scell"))
    rows = {round(g.children[0].y) for g in cells}
    arrows = {
        (g.data.get("tensor"), g.data.get("dim")) for g in _groups(picture.items, "sws-arrow")
    }
    markers = list(_groups(picture.items, "sws-gap"))
    return rows, arrows, markers


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_long_strip_keeps_few_rows_and_every_arrow(name, monkeypatch):
    scene = build_scene(CASES[name]())
    rows, arrows, _ = _rows_and_arrows(scene)
    limit = strip_module.LIMITS["max_strip_rows"]
    monkeypatch.setitem(strip_module.LIMITS, "max_strip_rows", 10**6)
    monkeypatch.setattr(picture_module, "_STRIP_ROWS_TALL", ())  # nor its height ladder's
    monkeypatch.setattr(picture_module, "_ARROWS_TALL", ())  # (its rows and arrows)
    all_rows, all_arrows, _ = _rows_and_arrows(scene, every_tensor=True)
    assert len(all_rows) > limit  # the case needs the cap
    assert arrows == all_arrows  # no stride arrow lost to the cap
    assert len(rows) < len(all_rows)
    assert len(rows) <= limit, (len(rows), limit)
