"""Issue 39 (review 3, a hostile user's findings): each against torch's own answer.

* ``sw.inspect`` of a LocalTensor raised ``AttributeError`` (uneven shard) or silently gave one
  rank's layout as if it were a plain tensor (even shard); it is one line, as drawing is.
* A DTensor made by ``from_local`` without ``shape=`` over uneven locals has a global shape torch
  gives as a ``LocalIntNode`` (one size per rank): ``AttributeError``, now one line.
* ``explain()`` of a job's rank 40 (of 64) listed ranks 0–15, all computed, and never rank 40's
  own real layout.
* The list of ranks whose storages are not drawn read ``ranks 3, 4, …, 45 (33 indices)`` for a
  set of six runs.
* An arrow's title said "moves 1 storage cells".
"""

from __future__ import annotations

import html
import re

import pytest
import torch

import stridewidget as sw


def test_inspect_of_a_local_tensor_is_one_line_even_or_uneven(group):
    from torch.distributed._local_tensor import LocalTensorMode
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import Shard, distribute_tensor

    group(8)
    with LocalTensorMode(8):
        mesh = init_device_mesh("cpu", (2, 4))
        uneven = distribute_tensor(torch.arange(35.0).reshape(7, 5), mesh, [Shard(0), Shard(1)])
        even = distribute_tensor(torch.arange(64.0).reshape(8, 8), mesh, [Shard(0), Shard(1)])
    for d in (uneven, even):
        lt = d.to_local()
        assert len(lt._local_tensors) == 8  # torch's own: a wrapper of every rank's tensor
        with pytest.raises(sw.LayoutError) as raised:
            sw.inspect(lt)
        assert "\n" not in str(raised.value) and "LocalTensor" in str(raised.value)
        assert sw.inspect(d).global_shape == tuple(d.shape)  # the DTensor itself reads


def test_a_dtensor_whose_global_shape_differs_by_rank_is_one_line(group):
    from torch.distributed._local_tensor import LocalTensorMode
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import DTensor, Partial, Replicate, Shard, distribute_tensor

    group(8)
    with LocalTensorMode(8):
        mesh = init_device_mesh("cpu", (2, 4))
        r = distribute_tensor(torch.arange(15.0).reshape(3, 5), mesh, [Replicate(), Shard(1)])
        dp = DTensor.from_local(r.to_local(), mesh, [Partial("sum"), Shard(1)], run_check=False)
    with pytest.raises((TypeError, AttributeError, ValueError)):
        [int(n) for n in dp.shape]  # torch's own shape has no one int per dim
    for call in (sw.inspect, sw.show, sw.render_svg):
        with pytest.raises(sw.LayoutError) as raised:
            call(dp)
        assert "\n" not in str(raised.value) and "differs between ranks" in str(raised.value)


def test_explain_says_the_read_rank_past_the_first_ranks(group):
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import Shard, distribute_tensor

    group(64, rank=40)
    d = distribute_tensor(torch.zeros(64, 6).t(), init_device_mesh("cpu", (64,)), [Shard(1)])
    local = d.to_local()  # torch's own: this rank's local tensor
    words = sw.inspect(d).explain()
    line = next(x for x in words.splitlines() if x.startswith("rank 40"))
    assert f"strides {tuple(local.stride())}" in line and "computed" not in line
    assert f"({local.shape[0]}, {local.shape[1]}) local tensor" in line


def test_ranks_not_drawn_are_named_as_runs(group):
    from torch.distributed._local_tensor import LocalTensorMode
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import Shard, distribute_tensor

    group(64)
    with LocalTensorMode(64):
        mesh = init_device_mesh("cpu", (8, 8))
        d = distribute_tensor(torch.arange(144.0).reshape(12, 12), mesh, [Shard(0), Shard(1)])
    shapes = {r: tuple(t.shape) for r, t in d.to_local()._local_tensors.items()}
    svg = sw.render_svg(d)
    lines = re.findall(r"ranks? ([\d,– …]+)(?: \(\d+ ranks\))?: \((\d+), (\d+)\) local", svg)
    assert lines  # the picture lists ranks whose storages it does not draw
    for line in lines:
        runs, rows, cols = line
        named = set()
        for part in runs.split(", "):
            if part == "…":
                continue
            lo, _, hi = part.partition("–")
            named |= set(range(int(lo), int(hi or lo) + 1))
        # every rank a run names holds a local tensor of the shape the line says (torch's)
        assert named and all(shapes[r] == (int(rows), int(cols)) for r in named), line
    assert "indices" not in " ".join(re.findall(r">([^<]*local tensors[^<]*)<", svg))


def test_an_arrow_of_stride_one_moves_one_storage_cell():
    svg = sw.render_svg(torch.arange(6.0).reshape(2, 3))
    assert "moves 1 storage cell<" in svg or "moves 1 storage cell" in svg
    assert "moves 1 storage cells" not in svg and "moves 3 storage cells" in svg


@pytest.mark.parametrize("width", [876, 1240])
def test_a_small_4d_dtensor_draws_a_rank_storage_within_its_budget(group, width):
    """(4, 8, 12, 10) over a (2, 4) mesh: its global grid took the whole height budget and no
    rank's storage was drawn; now the grid draws fewer panels and a rank's real storage shows."""
    from torch.distributed._local_tensor import LocalTensorMode
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import Shard, distribute_tensor

    from stridewidget.render.distributed import draw_distributed
    from stridewidget.render.picture import height_budget

    group(8)
    with LocalTensorMode(8):
        mesh = init_device_mesh("cpu", (2, 4))
        x = distribute_tensor(
            torch.arange(3840.0).reshape(4, 8, 12, 10), mesh, [Shard(3), Shard(1)]
        )
    picture = draw_distributed(x, "x", width=width)
    strips = [g for g in picture.items if getattr(g, "cls", "") == "sws-rank-strip"]
    assert strips, "no rank's storage drawn"
    locals_ = x.to_local()._local_tensors
    for strip in strips:  # the strip's heading names its rank's real local layout (torch's)
        rank = strip.data["rank"]
        local = locals_[rank]
        assert f"a {tuple(local.shape)} local tensor, strides {tuple(local.stride())}" in (
            strip.title
        )
    budget = height_budget({"tensors": [{"layout": {"shape": [4, 8, 12, 10]}}]})
    assert picture.height <= budget


def test_a_partial_cell_names_its_reduction(group):
    """Every Partial cell was marked Σ, a sum sign on a max; torch's full_tensor() is the max."""
    from torch.distributed._local_tensor import LocalTensorMode, rank_map
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import DTensor, Partial

    group(4)
    with LocalTensorMode(4):
        mesh = init_device_mesh("cpu", (4,))
        q = DTensor.from_local(rank_map(lambda r: torch.ones(2, 3) * r), mesh, [Partial("max")])
        s = DTensor.from_local(rank_map(lambda r: torch.ones(2, 3) * r), mesh, [Partial()])
        assert torch.equal(q.full_tensor()._local_tensors[0], torch.full((2, 3), 3.0))
    words_max = re.findall(r">([^<]+)<", sw.render_svg(q))
    words_sum = re.findall(r">([^<]+)<", sw.render_svg(s))
    assert "Σ" not in "".join(words_max) and any(w.endswith("·max") for w in words_max)
    assert any(w.endswith("Σ") for w in words_sum)


def test_the_partial_legend_names_the_mesh_dims_it_reduces_over(group):
    """[Partial("sum"), Replicate()] on a (2, 2) mesh: each element has 4 holders but the value
    is the sum over mesh dim 0 only (torch's full_tensor()); the legend said "their sum"."""
    from torch.distributed._local_tensor import LocalTensorMode, rank_map
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import DTensor, Partial, Replicate

    group(4)
    with LocalTensorMode(4):
        mesh = init_device_mesh("cpu", (2, 2))
        lt = rank_map(lambda r: torch.arange(6.0).reshape(2, 3) + r)
        d = DTensor.from_local(lt, mesh, [Partial("sum"), Replicate()], shape=(2, 3), stride=(3, 1))
        full = d.full_tensor()._local_tensors[0]
        locals_ = {r: t.clone() for r, t in d.to_local()._local_tensors.items()}
    coords = {r: tuple(c) for r, c in zip(range(4), [(0, 0), (0, 1), (1, 0), (1, 1)])}
    # torch's own answer: the sum over mesh dim 0 (ranks of one dim-1 coordinate)
    assert torch.equal(full, locals_[0] + locals_[2])
    assert not torch.equal(full, sum(locals_.values()))
    assert coords[2] == (1, 0)
    words = html.unescape(" ".join(re.findall(r">([^<]+)<", sw.render_svg(d))))
    assert "the value is the sum over mesh dim 'dim0'" in words
    assert "their sum" not in words and "· ·" not in words
