"""Issue 36, truth (hostile review 2026-12-05): the slice picker's "(N not drawn)" came from the
scene, before the height ladder drew fewer panels, so the toolbar and the card said two counts
for one tensor ("9994 not drawn" beside "⋯ 9,996 slices not shown").  Now the picker's count is
the card's: torch's number of 2-D slices less the panels the picture draws."""

from __future__ import annotations

import math
import re

import pytest
import torch

from stridewidget.notebook.picture import picture_of
from stridewidget.scene.build import build_scene

CASES = {
    "meta 10^4 cube": lambda: {"x": torch.empty(10**4, 10**4, 10**4, device="meta")},
    "randn 2x8x16x16": lambda: {"x": torch.randn(2, 8, 16, 16)},
    "three views": lambda: (lambda x: {"a": x, "b": x.transpose(0, 2), "c": x[:, ::2]})(
        torch.randn(33, 8, 33)
    ),
    "10-D pair": lambda: (lambda x: {"x": x, "y": x.permute(*range(9, -1, -1))})(
        torch.zeros([2] * 10)
    ),
    "17-D meta": lambda: {"x": torch.empty([3] * 17, device="meta")},
}


def _walk(items):
    for item in items:
        yield item
        if item[0] == "g":
            yield from _walk(item[4])


@pytest.mark.parametrize("width", [876, 1256])
@pytest.mark.parametrize("name", sorted(CASES))
def test_the_pickers_count_is_the_cards_and_torchs(name, width):
    tensors = CASES[name]()
    scene = build_scene(tensors)
    listed = picture_of(scene, width, None)
    items = list(_walk(listed["items"]))
    for t in listed["tensors"]:
        x = tensors[t["name"]]
        panels = {g[2]["slice"] for g in items if g[1] == "sws-lcell" and g[2]["tensor"] == t["id"]}
        left_out = math.prod(x.shape[:-2]) - len(panels)  # torch's slices less those drawn
        notes = [
            int(m.group(1).replace(",", ""))
            for i in items
            if i[0] == "t"
            for m in [re.match(rf"⋯ ([\d,]+) slices not shown: {re.escape(t['name'])}\[", i[3])]
            if m
        ]
        if t["pick"] is None:
            assert left_out == 0 and not notes
            continue
        assert t["pick"]["left_out"] == left_out == sum(notes), (t["name"], t["pick"], notes)
