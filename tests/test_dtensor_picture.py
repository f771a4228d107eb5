"""sw.render_svg / sw.render_html of a DTensor against torch's own answers: each global cell's
title names exactly the ranks whose ``to_local()`` (under ``LocalTensorMode``) holds that
element's value, and the storage index it names holds it there; each drawn rank strip shows that
rank's storage in order; the mesh shows every rank.  One CPU process, a fake process group."""

from __future__ import annotations

import itertools
import math
import re
import xml.etree.ElementTree as ET

import pytest
import torch
import torch.distributed as dist

import stridewidget as sw
from stridewidget.errors import LayoutError
from stridewidget.render.distributed import draw_distributed
from stridewidget.render.primitives import MAX_WIDTH, PAD
from stridewidget.render.svg import svg_of_picture

if not dist.is_available():
    pytest.skip("torch.distributed is not available in this torch build", allow_module_level=True)

from torch.distributed._local_tensor import LocalTensorMode
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import DTensor, Partial, Replicate, Shard, distribute_tensor

NS = {"s": "http://www.w3.org/2000/svg"}
SVG_G, SVG_TEXT = "{http://www.w3.org/2000/svg}g", "{http://www.w3.org/2000/svg}text"
TITLE = re.compile(r"rank (\d+) at \(([\d, ]*)\) local storage\[([\d,]+)\]")  # digits grouped


def _all_ranks(mesh_shape, placements, source, names=None):
    with LocalTensorMode(math.prod(mesh_shape)):
        mesh = init_device_mesh("cpu", mesh_shape, mesh_dim_names=names)
        return distribute_tensor(source, mesh, placements)


def _groups(svg: str, cls: str) -> list[ET.Element]:
    root = ET.fromstring(svg)
    return [g for g in root.iter(SVG_G) if cls in (g.get("class") or "").split()]


def _title(g: ET.Element) -> str:
    return g.find("s:title", NS).text


def _keyed(d) -> str:
    """The SVG of ``d``'s picture with its hover groups and titles (``sw.render_svg(d)`` writes
    them while they fit its 64 kB budget: tests/test_dtensor_bounds.py)."""
    return svg_of_picture(draw_distributed(d))


def _check(d, source, locals_=None, partial=False):
    """The SVG of ``d`` against every rank's ``to_local()`` values (``source``: arange, so a
    value names its global element)."""
    svg = _keyed(d)
    locals_ = locals_ if locals_ is not None else d.to_local()._local_tensors
    grid = d.device_mesh.mesh.tolist()
    coords = {}
    for coord in itertools.product(*(range(n) for n in d.device_mesh.shape)):
        rank = grid
        for c in coord:
            rank = rank[c]
        coords[int(rank)] = coord
    holders: dict[float, set[int]] = {}
    for rank, local in locals_.items():
        for v in local.reshape(-1).tolist():
            holders.setdefault(v, set()).add(rank)
    cells = _groups(svg, "sws-dcell")
    assert cells
    seen = set()
    for g in cells:
        index = tuple(int(i) for i in g.get("data-index").split(",") if i != "")
        seen.add(index)
        title = _title(g)
        assert title.startswith(f"d[{', '.join(map(str, index))}] → ")
        value = source[index].item()
        named = {
            int(r): (tuple(int(c) for c in re.findall(r"\d+", co)), int(cell.replace(",", "")))
            for r, co, cell in TITLE.findall(title)
        }
        if partial:  # every rank holds a summand, not the value: who holds it by placement
            assert set(named) == set(locals_)
            assert "partial" in title
        else:
            assert set(named) == holders.get(value, set()), title
        for rank, (coord, cell) in named.items():
            assert coord == coords[rank]
            local = locals_[rank]
            kept = local.untyped_storage()[cell * 4 : cell * 4 + 4]
            stored = torch.tensor(list(kept), dtype=torch.uint8).view(local.dtype).item()
            # a shard or replica keeps the element's value; a partial one its summand, the
            # local tensor's own element at that index
            assert stored == (local[index].item() if partial else value)
    # the grid shows the window of a tensor that shape: every element of a small one
    if source.numel() <= 256 and max(source.shape, default=1) <= 32:
        assert seen == set(itertools.product(*(range(n) for n in source.shape)))
    # each drawn rank strip: that rank's storage, in storage order
    strips = _groups(svg, "sws-rank-strip")
    assert 1 <= len(strips) <= 4
    for strip in strips:
        rank = int(strip.get("data-rank"))
        local = locals_[rank]
        storage = torch.tensor([], dtype=local.dtype).set_(local.untyped_storage())
        shown = []
        for cell in strip.iter(SVG_G):
            if "sws-scell" in (cell.get("class") or ""):
                texts = [t.text for t in cell.iter(SVG_TEXT)]
                shown.append((int(cell.get("data-cell")), texts))
        order = [c for c, _ in shown]
        assert order == sorted(set(order)) and order[-1] < storage.numel()  # storage order
        if storage.numel() <= 32:  # a small storage: every cell
            assert order == list(range(storage.numel()))
        for c, texts in shown:  # a float's text has its point ("8."); the storage index none
            values = [float(t) for t in texts if _num(t) and "." in t]
            assert values == [storage[c].item()], (rank, c, texts)
    # the mesh: every rank, with its coordinate
    boxes = {int(g.get("data-rank")): g for g in _groups(svg, "sws-mesh-rank")}
    assert set(boxes) == set(coords)
    for rank, g in boxes.items():
        words = [t.text for t in g.iter(SVG_TEXT)]
        assert f"r{rank}" in words and str(coords[rank]) in words
    return svg


def _num(text):
    try:
        float(text)
    except (TypeError, ValueError):
        return False
    return True


def test_shard_shard_on_a_2x4_mesh(group):
    group(8)
    source = torch.arange(64.0).reshape(8, 8)
    d = _all_ranks((2, 4), [Shard(0), Shard(1)], source, ("dp", "tp"))
    svg = _check(d, source)
    assert "mesh (dp=2, tp=4)" in svg
    assert "ranks 4–7: (4, 2) local tensors, strides (2, 1), contiguous" in svg


def test_one_d_mesh_shard_1(group):
    group(4)
    source = torch.arange(24.0).reshape(3, 8)
    _check(_all_ranks((4,), [Shard(1)], source), source)


def test_replicate(group):
    group(8)
    source = torch.arange(12.0).reshape(3, 4)
    svg = _check(_all_ranks((2, 4), [Replicate(), Shard(1)], source), source)
    assert "rank 0 at (0, 0) local storage[0]; rank 4 at (1, 0) local storage[0]" in svg


def test_uneven_shard(group):
    group(2)
    source = torch.arange(21.0).reshape(7, 3)
    svg = _check(_all_ranks((2,), [Shard(0)], source), source)
    assert "uneven: dim 0 (7)" in svg


def test_three_d_tensor(group):
    group(8)
    source = torch.arange(4.0 * 6 * 5).reshape(4, 6, 5)
    svg = _check(_all_ranks((2, 2, 2), [Shard(2), Shard(0), Replicate()], source), source)
    assert "d[0, :, :]" in svg


def test_partial(group):
    group(4)
    with LocalTensorMode(4):
        mesh = init_device_mesh("cpu", (4,))
        d = DTensor.from_local(torch.arange(6.0).reshape(2, 3), mesh, [Partial()])
    svg = _check(d, torch.arange(6.0).reshape(2, 3), partial=True)
    op = d.placements[0].reduce_op  # torch's own word for the reduction
    for g in _groups(svg, "sws-dcell"):
        assert f"the value is the {op} over mesh dim 'dim0'" in _title(g)


def test_one_real_rank_draws_its_own_strip(group):
    group(8, rank=3)
    mesh = init_device_mesh("cpu", (2, 4))
    d = distribute_tensor(torch.arange(64.0).reshape(8, 8), mesh, [Shard(0), Shard(1)])
    svg = sw.render_svg(d)
    strips = _groups(svg, "sws-rank-strip")
    assert [s.get("data-rank") for s in strips] == ["3"]
    cell = next(g for g in _groups(svg, "sws-dcell") if g.get("data-index") == "0,7")
    assert _title(cell) == "d[0, 7] → rank 3 at (0, 3) local storage[1]"
    other = next(g for g in _groups(svg, "sws-dcell") if g.get("data-index") == "7,0")
    assert "rank 4 at (1, 0) local index not read" in _title(other)
    assert "computed from the placements" in svg


def test_html_fallback_and_a_dtensor_among_other_tensors_refused(group):
    group(4)
    source = torch.arange(8.0).reshape(2, 4)
    d = _all_ranks((4,), [Shard(1)], source)
    page = sw.render_html(d)
    assert "<svg" in page and "sws-dcell" not in page and "mesh dim" in page
    with pytest.raises(
        LayoutError
    ) as caught:  # drawn alone (sw.show(d): tests/test_dtensor_widget.py)
        sw.show(d, torch.zeros(2))
    assert "\n" not in str(caught.value) and "sw.inspect(d)" in str(caught.value)
    assert "sw.show(d)" in str(caught.value)
    with pytest.raises(LayoutError):  # a DTensor among other tensors: still refused
        sw.render_svg(d, torch.zeros(2))


@pytest.mark.parametrize(
    "mesh_shape, placements, shape",
    [
        ((32,), [Shard(1)], (8, 32)),  # 32 columns in blocks, a mesh of 32 boxes that wraps
        ((2, 4), [Shard(0), Shard(1)], (100, 100)),  # elided like a tensor that shape
    ],
)
def test_wide_and_big_stay_within_the_column(group, mesh_shape, placements, shape):
    group(math.prod(mesh_shape))
    source = torch.arange(float(math.prod(shape))).reshape(shape)
    d = _all_ranks(mesh_shape, placements, source)
    svg = _check(d, source)
    width = float(ET.fromstring(svg).get("width"))
    assert width <= MAX_WIDTH + PAD
    for g in _groups(svg, "sws-dcell") + _groups(svg, "sws-mesh-rank"):
        for rect in g.iter("{http://www.w3.org/2000/svg}rect"):
            assert float(rect.get("x")) + float(rect.get("width")) <= width
