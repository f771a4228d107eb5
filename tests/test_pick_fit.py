"""Issue 36, the one picture fits (review 2026-12-05): a reader who picked a slice in the widget's
slice picker got every panel drawn (the widget laid out with ``thin_panels=False``), so one pick in
a tensor of many slices grew the picture far past its height budget (a 2x8x16x16 tensor 2,274 px
at 900 px, the 10^4-cube 2,181 px; budget 1,600 less the controls).  Now the height ladder still
draws fewer panels, always keeping (and drawing) the slices picked (of many picks, the most recent
as many as fit: each "show" adds one); the picker's "(N not drawn)" stays torch's count of 2-D
slices less the panels drawn.

Oracles: torch's shapes (slices a tensor has), torch's own indexing (``x[i].storage_offset()`` for
each drawn cell of a picked panel), the issue's budget (1,600 px for more than 2 dims, less the
controls above the picture)."""

from __future__ import annotations

import math
import re

import pytest
import torch

from stridewidget.limits import PICTURE_HEIGHT_ND
from stridewidget.notebook.widget import StrideWidget
from stridewidget.render.picture import controls_height

CASES = {
    "randn 2x8x16x16": lambda: {"x": torch.randn(2, 8, 16, 16)},
    "arange 4x6x33x33": lambda: {"x": torch.arange(4 * 6 * 33 * 33.0).reshape(4, 6, 33, 33)},
    "randn 40x33x33": lambda: {"x": torch.randn(40, 33, 33)},
    "meta 10^4 cube": lambda: {"x": torch.empty(10**4, 10**4, 10**4, device="meta")},
    "three views": lambda: (lambda x: {"a": x, "b": x.transpose(0, 2), "c": x[:, ::2]})(
        torch.randn(33, 8, 33)
    ),
    "5-D permuted": lambda: {"p": torch.randn(3, 4, 5, 12, 12).permute(1, 0, 2, 4, 3)},
}


def _walk(items):
    for item in items:
        yield item
        if item[0] == "g":
            yield from _walk(item[4])


def _picks(x: torch.Tensor, how: str) -> list[list[int]]:
    """Slices a reader might pick: the middle one, then one just before the last; or eight spread
    over the tensor (each "show" adds one to the widget's ``picked``)."""
    lead = x.shape[:-2]
    if how == "eight":
        total = math.prod(lead)
        flat = [(k + 1) * total // 9 for k in range(8)]
        return [[int(i) for i in torch.unravel_index(torch.tensor(f), lead)] for f in flat]
    picks = [[n // 2 for n in lead], [max(n - 2, 0) for n in lead]]
    return picks[:1] if how == "middle" else picks


@pytest.mark.parametrize("how", ["middle", "two", "eight"])
@pytest.mark.parametrize("width", [900, 1280])
@pytest.mark.parametrize("case", sorted(CASES))
def test_picked_slices_are_drawn_within_the_height_budget(case, width, how):
    torch.manual_seed(0)
    tensors = CASES[case]()
    w = StrideWidget(tensors)
    w.width = width - 24  # what the front end reports: the page's margins and the root's padding
    name, x = next(iter(tensors.items()))
    picks = _picks(x, how)
    w.picked = {name: picks}
    listed = w.picture
    items = list(_walk(listed["items"]))
    tensor = next(t for t in listed["tensors"] if t["name"] == name)
    cells = [i[2] for i in items if i[1] == "sws-lcell" and i[2]["tensor"] == tensor["id"]]
    # each picked slice is drawn (of eight, the most recent at least: the rest as they fit), each
    # of its cells where torch's indexing puts it
    for k, pick in enumerate(picks):
        mine = [c for c in cells if [int(v) for v in c["index"].split(",")][:-2] == pick]
        assert mine or (how == "eight" and k < len(picks) - 1), (pick, "not drawn")
        for c in mine:
            index = tuple(int(v) for v in c["index"].split(","))
            assert c["addr"] == x[index].storage_offset(), (index, c["addr"])
    # the picker's count: torch's 2-D slices less the panels drawn, as the card's notes say
    for t in listed["tensors"]:
        y = tensors[t["name"]]
        panels = {c["slice"] for c in (i[2] for i in items if i[1] == "sws-lcell")
                  if c["tensor"] == t["id"]}  # fmt: skip
        left_out = math.prod(y.shape[:-2]) - len(panels)
        pattern = rf"⋯ ([\d,]+) slices? not shown: {re.escape(t['name'])}\["
        notes = [int(m.group(1).replace(",", "")) for i in items if i[0] == "t"
                 for m in [re.match(pattern, i[3])] if m]  # fmt: skip
        assert (t["pick"] or {"left_out": 0})["left_out"] == left_out == sum(notes), t["name"]
    # the widget (controls and picture) within the 1,600 px
    longest = max((t["name"] for t in listed["tensors"] if t["pick"]), key=len, default=None)
    count = max((t["pick"]["left_out"] for t in listed["tensors"] if t["pick"]), default=0)
    controls = controls_height(width - 24, longest, count)
    assert listed["height"] + controls <= PICTURE_HEIGHT_ND, (listed["height"], controls)
