"""A big DTensor's picture stays honest and bounded (issue 39, review 3): a shortened global
grid shows a cell of every rank holding elements (or names in words the ranks it leaves out),
against torch's own ``to_local()`` under ``LocalTensorMode``; ``sw.render_svg(d)`` fits the
64 kB budget of any one picture; a mesh too big to draw box by box keeps its rows and columns.
One CPU process, a fake process group."""

from __future__ import annotations

import itertools
import math
import re

import pytest
import torch
import torch.distributed as dist

import stridewidget as sw
from stridewidget.limits import MAX_DTENSOR_SVG_BYTES
from stridewidget.render.distributed import draw_distributed
from stridewidget.render.primitives import Group, Text

if not dist.is_available():
    pytest.skip("torch.distributed is not available in this torch build", allow_module_level=True)

from torch.distributed._local_tensor import LocalTensorMode
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import Shard, distribute_tensor

BIG = [
    pytest.param((8,), (64, 64), [Shard(1)], id="64x64-over-8-Shard(1)"),
    pytest.param((8,), (64, 64), [Shard(0)], id="64x64-over-8-Shard(0)"),
    pytest.param((2, 64), (128, 128), [Shard(0), Shard(1)], id="mesh-2x64"),
    pytest.param((16, 16), (64, 64), [Shard(0), Shard(1)], id="mesh-16x16"),
    pytest.param((8,), (16, 16, 16), [Shard(2)], id="3d-over-8-Shard(2)"),  # many slices
]


def _all_ranks(mesh_shape, placements, shape):
    source = torch.arange(float(math.prod(shape))).reshape(shape)
    with LocalTensorMode(math.prod(mesh_shape)):
        return distribute_tensor(source, init_device_mesh("cpu", mesh_shape), placements)


def _holders_by_torch(d):
    """Global element (flat, the arange's value) -> the ranks whose to_local() holds it."""
    out: dict[int, set[int]] = {}
    for rank, local in d.to_local()._local_tensors.items():
        for v in local.reshape(-1).tolist():
            out.setdefault(int(v), set()).add(rank)
    return out


@pytest.mark.parametrize("mesh_shape, shape, placements", BIG)
def test_a_shortened_grid_shows_every_rank_or_names_it(group, mesh_shape, shape, placements):
    group(math.prod(mesh_shape))
    d = _all_ranks(mesh_shape, placements, shape)
    holders = _holders_by_torch(d)
    picture = draw_distributed(d)
    cells = [g for g in picture.items if isinstance(g, Group) and g.cls == "sws-dcell"]
    drawn: set[int] = set()
    for cell in cells:
        index = tuple(map(int, cell.data["index"].split(",")))
        ranks = set(map(int, cell.data["ranks"].split(",")))
        assert ranks == holders[sum(i * math.prod(shape[k + 1 :]) for k, i in enumerate(index))]
        drawn |= ranks
    holding = {r for rs in holders.values() for r in rs}
    missing = holding - drawn
    words = " ".join(t.text for t in picture.items if isinstance(t, Text))
    if math.prod(mesh_shape) <= 8 and len(shape) == 2:
        assert not missing  # each of 8 ranks' blocks keeps a row or a column
    if missing:
        said = re.search(r"not drawn in the shortened grid: the elements of ([\d,]+) ranks?", words)
        assert said and int(said.group(1).replace(",", "")) == len(missing), words
    else:
        assert "not drawn in the shortened grid" not in words


@pytest.mark.parametrize("mesh_shape, shape, placements", BIG)
def test_render_svg_of_a_big_dtensor_fits_the_budget(group, mesh_shape, shape, placements):
    group(math.prod(mesh_shape))
    d = _all_ranks(mesh_shape, placements, shape)
    svg = sw.render_svg(d)
    assert len(svg.encode()) <= MAX_DTENSOR_SVG_BYTES
    assert 'aria-label="distributed layout of d' in svg or "<title>" in svg


def test_render_svg_of_a_small_dtensor_keeps_its_hover_titles(group):
    group(8)
    d = _all_ranks((2, 4), [Shard(0), Shard(1)], (4, 6, 5))
    svg = sw.render_svg(d)
    # a title on every global cell drawn, each naming a rank (against the picture's own keys)
    assert svg.count("<title>") > 4 * 6 and " → rank " in svg


@pytest.mark.parametrize(
    "mesh_shape", [(2, 64), (16, 16), (2, 2, 32), (128,)], ids=lambda m: "x".join(map(str, m))
)
def test_a_big_mesh_keeps_its_rows_and_columns(group, mesh_shape):
    group(math.prod(mesh_shape))
    d = _all_ranks(
        mesh_shape,
        [Shard(0)] + [Shard(1)] * (len(mesh_shape) > 1) + [Shard(2) for _ in mesh_shape[2:]],
        (8, 8, 8)[: max(2, len(mesh_shape))],
    )
    # torch's own rank at each mesh coordinate
    flat = d.device_mesh.mesh.reshape(-1).tolist()
    coord_of = dict(zip(flat, itertools.product(*map(range, mesh_shape)), strict=True))
    picture = draw_distributed(d)
    boxes = [g for g in picture.items if isinstance(g, Group) and g.cls == "sws-mesh-rank"]
    assert boxes and len(boxes) <= 64
    place = {}
    for box in boxes:
        rect = box.children[0]
        coord = coord_of[box.data["rank"]]
        texts = " ".join(t.text for t in box.children if isinstance(t, Text))
        assert f"({', '.join(map(str, coord))}" in texts
        place[coord] = (rect.x, rect.y)
    rows = {c[:-1] for c in place}
    if len(mesh_shape) > 1:
        # every drawn mesh row is one line of boxes, in order; its columns go left to right
        lines = {row: {place[c][1] for c in place if c[:-1] == row} for row in rows}
        assert all(len(ys) == 1 for ys in lines.values())
        ys = [lines[row].pop() for row in sorted(rows)]
        assert ys == sorted(ys) and len(set(ys)) == len(ys)
        assert (0,) * (len(mesh_shape) - 1) in rows and tuple(
            n - 1 for n in mesh_shape[:-1]
        ) in rows
        for row in rows:
            xs = [place[c][0] for c in sorted(c for c in place if c[:-1] == row)]
            assert xs == sorted(xs)
    words = " ".join(t.text for t in picture.items if isinstance(t, Text))
    if len(boxes) < math.prod(mesh_shape):
        rows_n = math.prod(mesh_shape[:-1])
        row_word = "row" if rows_n == 1 else "rows"
        assert f"{rows_n} {row_word} × {mesh_shape[-1]} columns of boxes" in words, words
        assert f"{math.prod(mesh_shape) - len(boxes)} ranks left out" in words
