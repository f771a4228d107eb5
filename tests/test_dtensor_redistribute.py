"""``sw.inspect(d).redistribute(placements)`` against torch's own redistribute: under
``LocalTensorMode`` (every rank's local tensor in one process, a fake process group) run
``d.redistribute(mesh, target)`` and compare each rank's ``to_local()`` before and after.  The
sources are ``torch.arange``, so each value names its global element: the elements a rank newly
holds must be what stridewidget says it receives, and each named sender must have held it.  From
a Partial, each rank's summand carries a bit of its own, so a reduced value says which summands
were added."""

from __future__ import annotations

import math

import pytest
import torch
import torch.distributed as dist

import stridewidget as sw
from stridewidget.errors import LayoutError

if not dist.is_available():
    pytest.skip("torch.distributed is not available in this torch build", allow_module_level=True)

from torch.distributed._local_tensor import LocalTensorMode, rank_map
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import DTensor, Partial, Replicate, Shard, distribute_tensor


def _flat(index, shape):
    return sum(i * math.prod(shape[k + 1 :]) for k, i in enumerate(index))


def _values(t):
    return {int(v) for v in t.reshape(-1).tolist()}


def _check_moves(mesh_shape, shape, source_placements, target_placements, dtype=torch.float64):
    """Distribute an arange, redistribute it with torch, compare with stridewidget's count."""
    world = math.prod(mesh_shape)
    with LocalTensorMode(world):
        mesh = init_device_mesh("cpu", mesh_shape)
        d = distribute_tensor(
            torch.arange(math.prod(shape), dtype=dtype).reshape(shape), mesh, source_placements
        )
        after = d.redistribute(mesh, target_placements)
        assert list(after.placements) == list(target_placements)
    move = sw.inspect(d).redistribute(target_placements)
    before_locals = d.to_local()._local_tensors
    after_locals = after.to_local()._local_tensors
    itemsize = torch.empty((), dtype=dtype).element_size()
    total = 0
    for rank in range(world):
        new = _values(after_locals[rank]) - _values(before_locals[rank])
        received = move.received(rank)
        assert {_flat(i, shape) for i in received} == new, rank
        for index, senders in received.items():
            assert list(senders) == [()]
            (sender,) = senders.values()
            holders = [r for r in range(world) if _flat(index, shape) in _values(before_locals[r])]
            assert sender == min(holders)  # the lowest-numbered rank that held it
        m = move.move(rank)
        assert m.receives == len(new) and m.receive_bytes == len(new) * itemsize
        total += len(new) * itemsize
    assert move.total_bytes == total
    assert sum(m.sends for m in move.moves) == move.total_elements
    return move


@pytest.mark.parametrize(
    ("mesh_shape", "shape", "source", "target"),
    [
        ((4,), (8, 6), [Shard(0)], [Replicate()]),
        ((4,), (8, 6), [Replicate()], [Shard(1)]),
        ((4,), (8, 6), [Shard(0)], [Shard(1)]),
        ((3,), (7, 5), [Shard(0)], [Shard(1)]),  # uneven both ways
        ((4,), (5,), [Shard(0)], [Replicate()]),  # uneven, one rank holds 0
        ((2, 4), (8, 8), [Shard(0), Shard(1)], [Replicate(), Shard(1)]),
        ((2, 4), (8, 8), [Shard(0), Shard(1)], [Shard(1), Shard(0)]),
        ((2, 3), (7, 5), [Shard(0), Replicate()], [Replicate(), Shard(0)]),
        ((2, 2), (3, 4, 5), [Shard(2), Shard(0)], [Shard(1), Replicate()]),
    ],
)
def test_what_each_rank_newly_holds_is_what_it_receives(group, mesh_shape, shape, source, target):
    group(math.prod(mesh_shape))
    _check_moves(mesh_shape, shape, source, target)


def test_explain_words(group):
    group(8)
    move = _check_moves(
        (2, 4), (8, 8), [Shard(0), Shard(1)], [Replicate(), Shard(1)], torch.float32
    )
    words = move.explain().splitlines()
    assert words[0] == (
        "redistribute [Shard(0), Shard(1)] → [Replicate(), Shard(1)]: 256 B move in all "
        f"({move.total_elements} elements of float32, 4 B each)"
    )
    m = move.move(0)
    assert words[1] == (
        f"rank 0 receives {m.receives} elements ({m.receive_bytes} B) from rank "
        f"{m.from_ranks[0]}; sends {m.sends} elements ({m.send_bytes} B) to rank {m.to_ranks[0]}"
    )
    assert "lowest-numbered holder" in words[-1]


def test_nothing_moves_when_nothing_changes(group):
    group(4)
    move = _check_moves((4,), (8, 4), [Shard(0)], [Shard(0)])
    assert move.total_bytes == 0
    assert "rank 0 receives 0 elements (0 B); sends 0 elements (0 B)" in move.explain()


def _partial(mesh_shape, shape, placements):
    """A Partial DTensor whose summand on each partial coordinate ``p`` is
    ``flat * 2**W + 2**p``: a sum of summands says which were added (bits) and of what."""
    world = math.prod(mesh_shape)
    partial = [m for m, p in enumerate(placements) if isinstance(p, Partial)]
    with LocalTensorMode(world):
        mesh = init_device_mesh("cpu", mesh_shape)
        grid = mesh.mesh.tolist()
    coords = {}
    for index in (
        torch.cartesian_prod(*[torch.arange(n) for n in mesh_shape])
        .reshape(-1, len(mesh_shape))
        .tolist()
    ):
        rank = grid
        for c in index:
            rank = rank[c]
        coords[rank] = tuple(index)

    def summand_id(rank):
        return _flat([coords[rank][m] for m in partial], [mesh_shape[m] for m in partial])

    full = torch.arange(math.prod(shape), dtype=torch.float64).reshape(shape) * 2**world
    with LocalTensorMode(world):
        mesh = init_device_mesh("cpu", mesh_shape)
        nonpartial = [Replicate() if isinstance(p, Partial) else p for p in placements]
        base = distribute_tensor(full, mesh, nonpartial).to_local()
        bases = getattr(base, "_local_tensors", None)  # all Replicate: one plain tensor

        def mine(r):
            return (base if bases is None else bases[r]) + 2 ** summand_id(r)

        local = rank_map(mine)
        d = DTensor.from_local(
            local, mesh, placements, shape=torch.Size(shape), stride=full.stride()
        )
    return d, mesh, summand_id, coords, partial


@pytest.mark.parametrize(
    ("mesh_shape", "shape", "source", "target"),
    [
        ((4,), (6, 3), [Partial()], [Replicate()]),
        ((4,), (6, 3), [Partial()], [Shard(0)]),  # a reduce-scatter
        ((2, 2), (4, 6), [Partial(), Shard(1)], [Replicate(), Shard(1)]),
        ((2, 2), (4, 6), [Partial(), Replicate()], [Replicate(), Shard(0)]),
        ((2, 2), (5, 3), [Shard(0), Partial()], [Replicate(), Replicate()]),
    ],
)
def test_partial_counts_every_summand(group, mesh_shape, shape, source, target):
    world = math.prod(mesh_shape)
    group(world)
    d, mesh, summand_id, coords, partial = _partial(mesh_shape, shape, source)
    with LocalTensorMode(world):
        after = d.redistribute(mesh, target)
    move = sw.inspect(d).redistribute(target)
    assert move.reduction == "sum"
    before_locals = d.to_local()._local_tensors
    after_locals = after.to_local()._local_tensors
    total = 0
    for rank in range(world):
        torch_got = {}
        for v in after_locals[rank].reshape(-1).tolist():
            v = int(v)
            bits = v % 2**world
            count = bin(bits).count("1")
            flat = (v - bits) // 2**world // count
            ids = {b for b in range(world) if bits >> b & 1}
            held = {int(u) >> world for u in before_locals[rank].reshape(-1).tolist()}
            if flat in held:
                ids.discard(summand_id(rank))
            if ids:
                torch_got[flat] = ids
        ours = {
            _flat(index, shape): {_flat(s, [mesh_shape[m] for m in partial]) for s in summands}
            for index, summands in move.received(rank).items()
        }
        assert ours == torch_got, rank
        for index, summands in move.received(rank).items():
            for s, sender in summands.items():
                holders = [
                    r
                    for r in range(world)
                    if tuple(coords[r][m] for m in partial) == s
                    and _flat(index, shape)
                    in {int(u) >> world for u in before_locals[r].reshape(-1).tolist()}
                ]
                assert sender == min(holders)  # the lowest-numbered holder of that summand
        count = sum(len(ids) for ids in torch_got.values())
        assert move.move(rank).receives == count
        total += count * 8
    assert move.total_bytes == total
    assert "a reduction (sum): every partial holder sends its summand" in move.explain()


def test_partial_kept_moves_only_the_other_dims(group):
    group(4)
    d, mesh, *_ = _partial((2, 2), (4, 4), [Partial(), Shard(0)])
    with LocalTensorMode(4):
        after = d.redistribute(mesh, [Partial(), Replicate()])
    move = sw.inspect(d).redistribute([Partial(), Replicate()])
    assert move.reduction is None
    for rank in range(4):
        before = {int(v) for v in d.to_local()._local_tensors[rank].reshape(-1).tolist()}
        new = {int(v) for v in after.to_local()._local_tensors[rank].reshape(-1).tolist()} - before
        assert move.move(rank).receives == len(new)


def test_bad_targets_are_one_line_errors(group):
    group(4)
    with LocalTensorMode(4):
        mesh = init_device_mesh("cpu", (2, 2))
        d = distribute_tensor(torch.arange(12.0).reshape(3, 4), mesh, [Shard(0), Replicate()])
    lay = sw.inspect(d)
    for bad, words in [
        ([Shard(2), Replicate()], "Shard(2) on mesh dim 0, but the tensor has 2 dims"),
        ([Shard(0)], "1 placement for a 2-dim mesh (2, 2)"),
        ([Replicate(), Partial()], "to Partial(sum) on mesh dim 1 from Replicate()"),
        (["Shard(x)", Replicate()], "'Shard(x)' is not Shard(dim), Replicate() or Partial(op)"),
        ([object(), Replicate()], "stridewidget does not know"),
    ]:
        with pytest.raises(LayoutError) as caught:
            lay.redistribute(bad)
        assert words in str(caught.value)
        assert "\n" not in str(caught.value)
    # torch agrees these are wrong (with a bare IndexError)
    for bad in ([Shard(0)], [Shard(2), Replicate()]):
        with pytest.raises(IndexError), LocalTensorMode(4):
            d.redistribute(mesh, bad)
    assert lay.redistribute([Shard(-1), Replicate()]).target_placements == (
        "Shard(1)",
        "Replicate()",
    )


def test_a_lone_placement_or_none_is_a_one_line_redistribute_error(group):
    group(4)
    with LocalTensorMode(4):
        mesh = init_device_mesh("cpu", (2, 2))
        d = distribute_tensor(torch.arange(12.0).reshape(3, 4), mesh, [Shard(0), Replicate()])
        flat = distribute_tensor(
            torch.arange(12.0).reshape(3, 4), init_device_mesh("cpu", (4,)), [Shard(0)]
        )
    lay = sw.inspect(d)
    for bad, words in [
        ("Shard(0)", "one placement 'Shard(0)' for a 2-dim mesh (2, 2): pass a list"),
        (Shard(0), "one placement Shard(dim=0) for a 2-dim mesh (2, 2): pass a list"),
        (None, "no placements (None) for a 2-dim mesh (2, 2): pass a list"),
        ([Replicate(), None], "stridewidget does not know: None"),
        ([Replicate(), 5], "stridewidget does not know: 5"),
    ]:
        with pytest.raises(LayoutError) as caught:
            lay.redistribute(bad)
        message = str(caught.value)
        assert message.startswith("redistribute: ") and words in message, message
        assert "\n" not in message
    # a single placement alone is the whole target of a 1-D mesh, as a list of one is
    one = sw.inspect(flat)
    for alone in ("Shard(1)", Shard(1)):
        assert one.redistribute(alone) == one.redistribute([Shard(1)])
    with pytest.raises(LayoutError, match=r"^redistribute: no placements \(None\)"):
        one.redistribute(None)
