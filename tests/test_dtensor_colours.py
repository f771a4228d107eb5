"""Ranks drawn in a DTensor's picture are told apart (issue 39, review 3): the 7 tensor colours
repeat past 7 groups of ranks, so each cell's and mesh box's bar is a colour × a number of
notches; any two groups of ranks (torch's: the ranks whose ``to_local()`` hold the same
elements) drawn in one picture differ in the bar (up to 49 groups) and in the rank written in
the cell; no text sits on a bar, and the cell's words read on its fill in both themes (WCAG
4.5:1).  One CPU process, a fake process group, ``LocalTensorMode``."""

from __future__ import annotations

import itertools
import math

import pytest
import torch
import torch.distributed as dist

from stridewidget.render.distributed import draw_distributed
from stridewidget.render.primitives import Group, Rect, Text
from stridewidget.style import STYLE, contrast_ratio

if not dist.is_available():
    pytest.skip("torch.distributed is not available in this torch build", allow_module_level=True)

from torch.distributed._local_tensor import LocalTensorMode
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import Replicate, Shard, distribute_tensor


def _all_ranks(mesh_shape, placements, shape):
    source = torch.arange(float(math.prod(shape))).reshape(shape)
    with LocalTensorMode(math.prod(mesh_shape)):
        return distribute_tensor(source, init_device_mesh("cpu", mesh_shape), placements)


def _look(group: Group) -> tuple:
    """What a reader sees of a cell or a box: its bar (colour and pieces) and its words."""
    bar = tuple(r.fill for r in group.children[1:] if isinstance(r, Rect))  # colour, pieces
    words = tuple(t.text for t in group.children if isinstance(t, Text))
    return bar, words


@pytest.mark.parametrize("theme", ["light", "dark"])
@pytest.mark.parametrize(
    "mesh_shape, placements, shape",
    [
        ((16,), [Shard(1)], (2, 16)),  # 16 groups of one rank: colours repeat past 7
        ((12, 2), [Shard(0), Replicate()], (12, 3)),  # 12 groups of two replicas
    ],
)
def test_ranks_drawn_are_told_apart(group, theme, mesh_shape, placements, shape):
    group(math.prod(mesh_shape))
    d = _all_ranks(mesh_shape, placements, shape)
    # torch's groups: ranks whose local tensors hold the same values
    by_values: dict[tuple, set[int]] = {}
    for rank, local in d.to_local()._local_tensors.items():
        by_values.setdefault(tuple(local.reshape(-1).tolist()), set()).add(rank)
    group_of = {r: k for k, ranks in enumerate(by_values.values()) for r in ranks}
    picture = draw_distributed(d, theme=theme)
    seen: dict[int, tuple] = {}  # group -> the bar it is drawn with
    colours = STYLE["themes"][theme]
    for g in picture.items:
        if not isinstance(g, Group) or g.cls not in ("sws-dcell", "sws-mesh-rank"):
            continue
        rank = g.data["rank"] if g.cls == "sws-mesh-rank" else int(g.data["ranks"].split(",")[0])
        bar, words = _look(g)
        assert seen.setdefault(group_of[rank], bar) == bar  # one group, one bar
        assert f"r{rank}" in " ".join(words)
        body = g.children[0]
        assert body.fill == colours["cell_bg"]  # the theme's fill under the words
        bars = [r for r in g.children[1:] if isinstance(r, Rect)]
        for t in (t for t in g.children if isinstance(t, Text)):
            assert all(t.y - t.size > r.y + r.h for r in bars)  # no word on a bar
            assert contrast_ratio(t.fill, body.fill) >= 4.5, (t, body.fill)
    assert len(seen) == len(by_values)
    for a, b in itertools.combinations(seen, 2):
        assert seen[a] != seen[b], (a, b)
