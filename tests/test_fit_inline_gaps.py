"""Two 4-D tensors fit the height budget (issue 36 "Fit"): the last step of the over-budget ladder
sets a strip's gap markers beside its cells instead of on rows of their own.

Two ``randn(8, 8, 8, 8)`` were 1,724 px tall in a 900 px column (budget 1,540): their two strips
took eight rows each, three of them a marker alone.  Oracles: the picture's own height against
:func:`height_budget`, and brute force over torch's element offsets (``data_ptr`` of every
element) for the cells a marker takes over: every storage cell a tensor reads is drawn or inside
exactly one marker, and each marker's read count is the count of read offsets in its range.
"""

from __future__ import annotations

import re

import pytest
import torch
from test_gap_reads import _read_offsets
from test_strip_rows import _groups

from stridewidget.notebook.picture import laid_out
from stridewidget.render.picture import height_budget
from stridewidget.scene.build import build_scene


def _two_4d():
    return {"a": torch.randn(8, 8, 8, 8), "b": torch.randn(8, 8, 8, 8)}


def _heads_q_k():
    q = torch.randn(2, 5, 32).view(2, 5, 4, 8).transpose(1, 2)
    return {"q": q, "k": q.contiguous()}


def _two_3d():
    return {"a": torch.randn(16, 16, 16), "b": torch.randn(16, 16, 16).transpose(0, 2)}


def _nchw_nhwc():
    x = torch.randn(4, 8, 6, 6)
    return {"nchw": x, "nhwc": x.contiguous(memory_format=torch.channels_last)}


CASES = {"two 8x8x8x8": _two_4d, "heads q, k": _heads_q_k, "two 16^3": _two_3d}
CASES["nchw + channels-last 4x8x6x6"] = _nchw_nhwc


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("width", [876, 1240])
@pytest.mark.parametrize("name", sorted(CASES))
def test_two_4d_tensors_fit_the_height_budget(name, width, seed):
    torch.manual_seed(seed)
    scene = build_scene(CASES[name]())
    picture = laid_out(scene, width, None)
    assert picture.height <= height_budget(scene, width), (picture.height, width)


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_read_cell_is_drawn_or_counted_in_one_marker(name):
    torch.manual_seed(0)
    tensors = CASES[name]()
    scene = build_scene(tensors)
    picture = laid_out(scene, 876, None)
    ids = {t["name"]: t["storage"] for t in scene["tensors"]}
    cells = list(_groups(picture.items, "sws-scell"))
    markers = list(_groups(picture.items, "sws-gap"))
    for storage in {s["id"] for s in scene["storages"]}:
        read = set().union(*(_read_offsets(t) for n, t in tensors.items() if ids[n] == storage))
        own = [g for g in cells if g.data["storage"] == storage]
        drawn = {g.data["cell"] for g in own}
        # the strip's band of rows: a marker in it is this storage's
        top = min(g.children[0].y for g in own)
        bottom = max(g.children[0].y for g in own)
        ranges = []
        for marker in markers:
            if not top <= marker.children[0].y <= bottom:
                continue
            found = re.search(r"storage\[([\d,]+)\] … storage\[([\d,]+)\]", marker.title)
            lo, hi = (int(v.replace(",", "")) for v in found.groups())
            ranges.append((lo, hi))
            words = marker.title.split(":")[0]
            count = len({c for c in read if lo <= c <= hi})
            if "read cells not drawn" in words:
                assert words.startswith(f"{count:,} read cells"), (words, count)
        assert ranges  # the case has markers to check
        for cell in read:
            inside = sum(lo <= cell <= hi for lo, hi in ranges)
            assert (cell in drawn) + inside == 1, (storage, cell, cell in drawn, inside)
