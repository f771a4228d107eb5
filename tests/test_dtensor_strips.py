"""Which ranks' storages a DTensor's picture draws as strips, and what it says of the others,
against torch's own answers: every rank's ``to_local()`` under ``LocalTensorMode`` (arange: a
value names its global element) and ``full_tensor()``.  The strips hold as many distinct
elements as at most :data:`MAX_RANK_STRIPS` ranks can; an element or rank whose storage is not
drawn says so in its hover line."""

from __future__ import annotations

import itertools
import math

import pytest
import torch
import torch.distributed as dist

import stridewidget as sw
from stridewidget.render.distributed import MAX_RANK_STRIPS, draw_distributed
from stridewidget.render.primitives import Group

if not dist.is_available():
    pytest.skip("torch.distributed is not available in this torch build", allow_module_level=True)

from torch.distributed._local_tensor import LocalTensor, LocalTensorMode
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import DTensor, Partial, Replicate, Shard, distribute_tensor


def _dtensor(mesh_shape, placements, shape):
    with LocalTensorMode(math.prod(mesh_shape)):
        mesh = init_device_mesh("cpu", mesh_shape)
        source = torch.arange(float(math.prod(shape))).reshape(shape)
        return distribute_tensor(source, mesh, placements)


def _groups(items, cls, out=None):
    out = [] if out is None else out
    for item in items:
        if isinstance(item, Group):
            if item.cls == cls:
                out.append(item)
            _groups(item.children, cls, out)
    return out


def _values(d) -> dict[int, set[float]]:
    """Each rank's elements, read from torch's own local tensors."""
    return {r: set(t.flatten().tolist()) for r, t in d.to_local()._local_tensors.items()}


def _full(d) -> set[float]:
    full = d.full_tensor()
    full = full._local_tensors[0] if isinstance(full, LocalTensor) else full
    return set(full.flatten().tolist())


def _best_cover(values: dict[int, set[float]], limit: int) -> int:
    """The most distinct elements any ``limit`` ranks hold (brute force over torch's values)."""
    import itertools

    ranks = sorted(values)
    return max(
        len(set().union(*(values[r] for r in chosen)))
        for chosen in itertools.combinations(ranks, min(limit, len(ranks)))
    )


CASES = {
    "even 8x8 on 2x4": ((2, 4), [Shard(0), Shard(1)], (8, 8)),
    "[Shard(1), Replicate()] 40x40 on 2x4": ((2, 4), [Shard(1), Replicate()], (40, 40)),
    "uneven 7x5 on 2x4": ((2, 4), [Shard(0), Shard(1)], (7, 5)),
    "[Replicate(), Shard(0)] 6x4 on 2x4": ((2, 4), [Replicate(), Shard(0)], (6, 4)),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_strips_hold_as_many_elements_as_strips_can(group, case):
    mesh_shape, placements, shape = CASES[case]
    group(math.prod(mesh_shape))
    d = _dtensor(mesh_shape, placements, shape)
    values, full = _values(d), _full(d)
    picture = draw_distributed(d)
    drawn = [g.data["rank"] for g in _groups(picture.items, "sws-rank-strip")]
    held = set().union(*(values[r] for r in drawn))
    assert len(held) == _best_cover(values, MAX_RANK_STRIPS)
    assert all(values[r] for r in drawn)  # no empty rank drawn
    # no strip is a replica of the others' elements
    for r in drawn:
        assert values[r] - set().union(*(values[o] for o in drawn if o != r))
    if len(held) == len(full):  # the strips hold every element: each has a drawn holder
        for g in _groups(picture.items, "sws-dcell"):
            assert "storage is not drawn:" not in g.title
    # every rank not drawn says so on its mesh box, with why and its layout
    for g in _groups(picture.items, "sws-mesh-rank"):
        rank = g.data["rank"]
        said = f"rank {rank}'s storage is not drawn: "
        assert (said in g.title) == (rank not in drawn), g.title
        if rank not in drawn:
            local = d.to_local()._local_tensors[rank]
            assert f"strides {tuple(local.stride())}" in g.title or local.numel() == 0


def test_even_8x8_every_element_without_a_drawn_holder_says_so(group):
    group(8)
    d = _dtensor((2, 4), [Shard(0), Shard(1)], (8, 8))
    values = _values(d)
    picture = draw_distributed(d)
    drawn = {g.data["rank"] for g in _groups(picture.items, "sws-rank-strip")}
    assert len(drawn) == MAX_RANK_STRIPS
    unheld = 0
    for g in _groups(picture.items, "sws-dcell"):
        index = tuple(int(i) for i in g.data["index"].split(","))
        value = float(index[0] * 8 + index[1])
        (holder,) = [r for r, v in values.items() if value in v]
        if holder in drawn:
            assert "storage is not drawn:" not in g.title
            continue
        unheld += 1
        assert f"rank {holder}'s storage is not drawn: at most {MAX_RANK_STRIPS} strips" in g.title
        assert "its layout: (4, 2) local tensor, strides (2, 1), contiguous" in g.title
    assert unheld == 64 - 8 * MAX_RANK_STRIPS


def test_a_replica_not_drawn_names_the_strip_holding_its_elements(group):
    group(8)
    d = _dtensor((2, 4), [Shard(1), Replicate()], (40, 40))
    picture = draw_distributed(d)
    drawn = [g.data["rank"] for g in _groups(picture.items, "sws-rank-strip")]
    assert drawn == [0, 4]  # ranks 0–3 hold columns 0–19, ranks 4–7 columns 20–39 (torch's)
    assert _values(d)[0] | _values(d)[4] == _full(d)
    (box,) = [g for g in _groups(picture.items, "sws-mesh-rank") if g.data["rank"] == 5]
    assert "rank 5's storage is not drawn: its elements are all in the drawn strips" in box.title
    for g in _groups(picture.items, "sws-dcell"):
        assert "(storage not drawn)" in g.title  # three of its four holders


def test_partial_summands_are_each_their_own(group):
    group(4)
    with LocalTensorMode(4):
        mesh = init_device_mesh("cpu", (4,))
        d = DTensor.from_local(torch.arange(6.0).reshape(2, 3), mesh, [Partial()])
    picture = draw_distributed(d)
    drawn = [g.data["rank"] for g in _groups(picture.items, "sws-rank-strip")]
    assert drawn == [0, 1, 2, 3]  # four summands, none a replica of another
    sw.inspect(d)  # still reads


def test_local_tensors_made_in_the_mode_show_their_values(group):
    # each rank's local tensor is a transposed (non-contiguous) block, made under the mode
    group(8)
    base = torch.arange(64.0).reshape(8, 8)

    def blk(r):
        return base[(r // 4) * 4 : (r // 4) * 4 + 4, (r % 4) * 2 : (r % 4) * 2 + 2]

    with LocalTensorMode(8):
        mesh = init_device_mesh("cpu", (2, 4))
        lt = LocalTensor({r: torch.empty(2, 4).copy_(blk(r).t()).t() for r in range(8)})
        d = DTensor.from_local(
            lt, mesh, [Shard(0), Shard(1)], run_check=False, shape=(8, 8), stride=(8, 1)
        )
    inner = d.to_local()._local_tensors
    svg = sw.render_svg(d)
    assert "no values" not in svg
    picture = draw_distributed(d)
    for g in _groups(picture.items, "sws-rank-strip"):
        rank = g.data["rank"]
        torch_local = inner[rank]
        while isinstance(torch_local, LocalTensor):  # torch's own answer for that rank
            torch_local = torch_local._local_tensors[rank]
        assert torch.equal(torch_local, blk(rank)) and torch_local.stride() == (1, 4)
        cells = _groups(g.children, "sws-scell")
        storage = torch.as_strided(torch_local, (8,), (1,), 0)
        for cell in cells:
            value = storage[int(cell.data["cell"])].item()
            assert f" = {value:g}." in cell.title, cell.title
    assert sw.inspect(d).rank(5).local.strides == (1, 4)


def _texts(items, out=None):
    out = [] if out is None else out
    for item in items:
        if isinstance(item, Group):
            _texts(item.children, out)
        elif hasattr(item, "text"):
            out.append(item.text)
    return out


def test_a_partial_strip_cell_holds_a_summand_and_each_strip_is_titled_by_its_rank(group):
    group(4)
    with LocalTensorMode(4):
        mesh = init_device_mesh("cpu", (4,))
        d = DTensor.from_local(torch.arange(6.0).reshape(2, 3), mesh, [Partial()])
    inner = d.to_local()._local_tensors
    picture = draw_distributed(d)
    strips = _groups(picture.items, "sws-rank-strip")
    assert strips
    for g in strips:
        rank = g.data["rank"]
        local = inner[rank]
        words = _texts(g.children)
        assert any(t.startswith(f"rank {rank}'s storage · ") for t in words), words
        assert not any(t.startswith("storage s") for t in words)
        for cell in _groups(g.children, "sws-scell"):
            k = int(cell.data["cell"])
            # torch's local tensor: the element whose storage index is k (its strides)
            (index,) = [
                i
                for i in itertools.product(*map(range, local.shape))
                if local.storage_offset() + sum(a * s for a, s in zip(i, local.stride())) == k
            ]
            assert f" = {local[index].item():g}." in cell.title
            at = ", ".join(map(str, index))
            assert cell.title.endswith(f" · holds a summand of d[{at}] (Partial(sum))"), cell.title


def test_show_of_a_mesh_or_a_process_group_names_show(group):
    group(4)
    mesh = init_device_mesh("cpu", (4,))
    for x, kind in ((mesh, "DeviceMesh"), (dist.group.WORLD, "ProcessGroup")):
        with pytest.raises(TypeError) as error:
            sw.show(x)
        said = str(error.value)
        assert said.startswith("stridewidget.show() takes a torch.Tensor") and kind in said
        assert "inspect()" not in said and "\n" not in said


def test_a_picture_over_its_height_budget_draws_fewer_strips_and_lists_the_rest(group):
    from stridewidget.render.picture import height_budget

    group(8)
    with LocalTensorMode(8):
        d = distribute_tensor(torch.randn(16, 16, 16), init_device_mesh("cpu", (8,)), [Shard(2)])
    inner = d.to_local()._local_tensors
    budget = height_budget({"tensors": [{"layout": {"shape": [16, 16, 16]}}]})
    w = sw.show(d)
    picture = draw_distributed(d)
    assert picture.height <= budget and w.picture["height"] <= budget
    assert len(w._repr_mimebundle_()[0]["text/html"].encode()) <= 64_000
    drawn = {g.data["rank"] for g in _groups(picture.items, "sws-rank-strip")}
    assert 0 < len(drawn) < MAX_RANK_STRIPS  # the grid goes above the mesh: room for strips
    words = " ".join(_texts(picture.items))
    assert "within the picture's height budget" in words
    for g in _groups(picture.items, "sws-mesh-rank"):
        rank, local = g.data["rank"], inner[g.data["rank"]]
        assert (f"rank {rank}'s storage is not drawn: " in g.title) == (rank not in drawn)
        if rank not in drawn:  # its layout, as torch has it
            assert f"{tuple(local.shape)} local tensor, strides {tuple(local.stride())}" in g.title
    # ranks 0–3 hold the most distinct elements: left out for the budget, the others for the cap
    for rank in set(range(MAX_RANK_STRIPS)) - drawn:
        (box,) = [g for g in _groups(picture.items, "sws-mesh-rank") if g.data["rank"] == rank]
        assert "the picture's height budget leaves room for" in box.title
    w.close()
