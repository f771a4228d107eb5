"""The slice picker (issue 35 §3): a widget's ``picked`` trait makes Python draw a slice the
picture left out.  Oracles: torch's own element addresses (data_ptr) and the count of slices."""

from __future__ import annotations

import itertools
import math

import pytest
import torch
import traitlets

import stridewidget as sw
from stridewidget.scene.build import build_scene


def _addresses(t: torch.Tensor, lead: tuple[int, ...], drawn: dict) -> list[list[int | None]]:
    """Storage index of each shown element of the 2-D slice t[lead] (the rows and columns the
    slice lists; None on an elided one), by torch's own pointers."""
    base, size = t.untyped_storage().data_ptr(), t.element_size()
    piece = t[lead]
    return [
        [
            None if r is None or c is None else (piece[r, c].data_ptr() - base) // size
            for c in drawn["cols"]
        ]
        for r in drawn["rows"]
    ]


CASES = {
    "5-d permuted": (torch.arange(720.0).reshape(2, 3, 4, 5, 6).permute(4, 2, 0, 3, 1), (3, 1, 1)),
    "3-d deep": (torch.arange(120).reshape(10, 3, 4), (8,)),
    "4-d strided": (torch.arange(2000.0).reshape(10, 5, 8, 5)[:, ::2], (7, 2)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_picked_slice_is_drawn_with_torchs_addresses_and_the_gaps_still_count_every_slice(name):
    t, lead = CASES[name]
    before = build_scene({"t": t})["tensors"][0]["logical"]["slices"]
    assert list(lead) not in [s.get("lead") for s in before]  # the picture left it out
    w = sw.show(t=t)
    w.picked = {"t": [list(lead)]}
    slices = w.scene["tensors"][0]["logical"]["slices"]
    (drawn,) = [s for s in slices if s["kind"] == "slice" and tuple(s["lead"]) == lead]
    assert drawn["addr"] == _addresses(t, lead, drawn)
    listed = sum(s["kind"] == "slice" for s in slices)
    left_out = sum(s["count"] for s in slices if s["kind"] == "gap")
    assert listed + left_out == math.prod(t.shape[:-2])
    # and the painted picture has its cells: one logical cell per element of the slice
    index = slices.index(drawn)
    painted = [
        g for g in _groups(w.picture["items"]) if g[1] == "sws-lcell" and g[2].get("slice") == index
    ]
    shown = sum(a is not None for row in drawn["addr"] for a in row)
    assert len(painted) == shown
    w.close()


def _groups(items):
    for item in items:
        if item[0] == "g":
            yield item
            yield from _groups(item[4])


def test_a_pick_outside_the_tensor_is_a_one_line_error_and_changes_nothing():
    t = torch.arange(120).reshape(10, 3, 4)
    w = sw.show(t=t)
    before = w.picture
    for bad, words in [
        ({"t": [[10]]}, r"t\[10, …\] is no slice of t"),
        ({"t": [[1, 2]]}, "is no slice of t"),
        ({"u": [[1]]}, "no tensor named 'u'"),
    ]:
        with pytest.raises(traitlets.TraitError, match=words) as info:
            w.picked = bad
        assert "\n" not in str(info.value)
    assert w.picture == before and w.picked == {}
    w.close()


def test_a_pick_the_tensor_lost_by_an_in_place_resize_is_dropped_on_refresh():
    t = torch.arange(120).reshape(10, 3, 4)
    w = sw.show(t=t)
    w.picked = {"t": [[9]]}
    t.resize_(2, 3, 4)
    w.refresh()
    leads = [s.get("lead") for s in w.scene["tensors"][0]["logical"]["slices"]]
    assert leads == [[0], [1]]
    w.close()


def test_every_slice_can_be_picked_one_at_a_time():
    t = torch.arange(2 * 5 * 3 * 2 * 2).reshape(2, 5, 3, 2, 2).transpose(0, 2)
    for lead in itertools.product(*map(range, t.shape[:-2])):
        scene = build_scene({"t": t}, picked={"t": [lead]})
        (drawn,) = [
            s
            for s in scene["tensors"][0]["logical"]["slices"]
            if s["kind"] == "slice" and tuple(s["lead"]) == lead
        ]
        assert drawn["addr"] == _addresses(t, lead, drawn)
