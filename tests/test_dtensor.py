"""sw.inspect of a DTensor against torch's own answers: every rank's ``to_local()`` under
``LocalTensorMode`` (shape, strides, offset, storage bytes, values), ``full_tensor()``,
``_compute_local_shape_and_global_offset``, ``d.placements`` and ``d.device_mesh``; who holds a
global element by brute force over each rank's values.  One CPU process, a fake process group."""

from __future__ import annotations

import itertools
import math

import pytest
import torch
import torch.distributed as dist

import stridewidget as sw
from stridewidget.errors import LayoutError
from stridewidget.layout.distributed import DistributedLayout

if not dist.is_available():
    pytest.skip("torch.distributed is not available in this torch build", allow_module_level=True)

from torch.distributed._local_tensor import LocalTensorMode
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import (
    DTensor,
    Partial,
    Replicate,
    Shard,
    distribute_tensor,
)
from torch.distributed.tensor._utils import _compute_local_shape_and_global_offset
from torch.distributed.tensor.placement_types import _StridedShard


def _all_ranks(mesh_shape, placements, source, names=None):
    """Distribute ``source`` under LocalTensorMode: every rank's local tensor in this process."""
    with LocalTensorMode(math.prod(mesh_shape)):
        mesh = init_device_mesh("cpu", mesh_shape, mesh_dim_names=names)
        d = distribute_tensor(source, mesh, placements)
        full = d.full_tensor()
    return d, full


def _check_against_torch(d, source, full):
    lay = sw.inspect(d)
    assert isinstance(lay, DistributedLayout)
    assert lay.global_shape == tuple(source.shape) == tuple(d.shape)
    assert lay.mesh_shape == tuple(d.device_mesh.shape)
    assert lay.mesh_dim_names == d.device_mesh.mesh_dim_names
    assert [str(p) for p in lay.placements] == [_torch_words(p) for p in d.placements]
    locals_ = d.to_local()._local_tensors
    assert set(lay.present_ranks) == set(locals_) and lay.computed_ranks == ()
    for rank_full in full._local_tensors.values() if full is not None else ():
        assert torch.equal(rank_full, source)  # the oracle sees what we were given
    grid = d.device_mesh.mesh.tolist()
    holders = {}
    for shard in lay.ranks:
        local = locals_[shard.rank]
        rank = grid
        for c in shard.coordinate:
            rank = rank[c]
        assert rank == shard.rank
        assert shard.local.shape == tuple(local.shape) == shard.shape
        assert shard.local.strides == local.stride()
        assert shard.local.offset == local.storage_offset()
        assert shard.local.storage_nbytes == local.untyped_storage().nbytes()
        shape, offset = _compute_local_shape_and_global_offset(
            source.shape, lay.mesh_shape, list(shard.coordinate), d.placements
        )
        assert tuple(shape) == shard.shape
        assert all(not i or i[0] == o for i, o in zip(shard.indices, offset))
        # brute force: the source's values are their own flat indices
        mine = {int(v) for v in local.reshape(-1).tolist()}
        assert mine == {_flat(index, source.shape) for index in itertools.product(*shard.indices)}
        for v in mine:
            holders.setdefault(v, set()).add(shard.rank)
    for index in itertools.product(*(range(n) for n in source.shape)):
        flat = _flat(index, source.shape)
        assert set(lay.holders(index)) == holders.get(flat, set())
        for rank, cell in lay.where(index):  # the storage element each holder keeps it in
            storage = locals_[rank].untyped_storage()
            kept = torch.tensor(storage[cell * 4 : cell * 4 + 4], dtype=torch.uint8)
            assert kept.view(source.dtype).item() == flat
    return lay


def _flat(index, shape):
    return sum(i * math.prod(shape[k + 1 :]) for k, i in enumerate(index))


def _torch_words(p):
    if isinstance(p, _StridedShard):
        return f"StridedShard(dim={p.dim}, split_factor={p.split_factor})"
    if isinstance(p, Shard):
        return f"Shard({p.dim})"
    if isinstance(p, Partial):
        return f"Partial({p.reduce_op})"
    assert isinstance(p, Replicate)
    return "Replicate()"


def test_shard_shard_on_a_2x4_mesh(group):
    group(8)
    source = torch.arange(64.0).reshape(8, 8)
    d, full = _all_ranks((2, 4), [Shard(0), Shard(1)], source, ("dp", "tp"))
    lay = _check_against_torch(d, source, full)
    assert (
        lay.rank(6).explain() == "rank 6 at (1, 2) holds rows 4–7 and columns 4–5: a (4, 2) "
        "local tensor, strides (2, 1), offset 0, storage 8, contiguous"
    )
    assert lay.uneven_words() == []
    assert str(lay).startswith("DTensor float32 (8, 8) on mesh (dp=2, tp=4) [Shard(0), Shard(1)]")
    assert "every rank's local tensor was read" in lay.explain()


def test_replicate_and_partial(group):
    group(8)
    source = torch.arange(12.0).reshape(3, 4)
    d, full = _all_ranks((2, 4), [Replicate(), Shard(1)], source)
    lay = _check_against_torch(d, source, full)
    assert lay.holders((0, 0)) == (0, 4)
    with LocalTensorMode(8):
        mesh = init_device_mesh("cpu", (2, 4))
        p = DTensor.from_local(torch.ones(3, 4), mesh, [Partial(), Replicate()])
    words = sw.inspect(p).explain()
    assert [str(x) for x in sw.inspect(p).placements] == ["Partial(sum)", "Replicate()"]
    assert "Partial(sum) — holds partial values: the tensor is the sum over its 2 ranks" in words


def test_uneven_shard_says_who_holds_fewer(group):
    group(4)
    source = torch.arange(7.0 * 3).reshape(7, 3)
    d, full = _all_ranks((4,), [Shard(0)], source)
    lay = _check_against_torch(d, source, full)
    assert [s.shape for s in lay.ranks] == [(2, 3), (2, 3), (2, 3), (1, 3)]
    assert lay.uneven_words() == [
        "uneven: dim 0 (7) — most ranks hold 2; rank 3 holds 1 (1 fewer, padded to 2 for collectives)"
    ]
    # torch's own padding for its collectives: the pad size of each rank's chunk
    _, pad_sizes = Shard(0)._split_tensor(source, 4, with_padding=True)
    assert pad_sizes == [max(s.shape[0] for s in lay.ranks) - s.shape[0] for s in lay.ranks]


def test_more_ranks_than_rows_leaves_a_rank_empty(group):
    group(4)
    source = torch.arange(6.0).reshape(2, 3)
    d, full = _all_ranks((4,), [Shard(0)], source)
    lay = _check_against_torch(d, source, full)
    assert lay.rank(3).shape == (0, 3)
    assert lay.rank(3).explain().startswith("rank 3 at (3,) holds no element (rows none")


def test_three_d_tensor(group):
    group(8)
    source = torch.arange(4.0 * 6 * 5).reshape(4, 6, 5)
    d, full = _all_ranks((2, 2, 2), [Shard(2), Shard(0), Replicate()], source)
    lay = _check_against_torch(d, source, full)
    assert "dim 2 indices 0–2" in lay.rank(0).explain()
    assert any("uneven: dim 2 (5)" in line for line in lay.uneven_words())


def test_strided_shard_against_torchs_documented_offsets(group):
    """torch's own example (``_compute_local_shape_and_global_offset``'s comment): 8 elements,
    placements S(0), SS(0, split_factor=2) on a (2, 2) mesh give [0, 2], [1, 3], [4, 6], [5, 7].
    Read one real rank at a time: torch 2.13's LocalTensorMode gives some ranks of a strided
    shard another rank's rows (and ``full_tensor()`` then repeats rows), so it is no oracle here."""
    placements = [Shard(0), _StridedShard(0, split_factor=2)]
    documented = {0: (0, 2), 1: (1, 3), 2: (4, 6), 3: (5, 7)}
    for rank, expected in documented.items():
        group(4, rank=rank)
        mesh = init_device_mesh("cpu", (2, 2))
        d = distribute_tensor(torch.arange(8.0), mesh, placements)
        lay = sw.inspect(d)
        assert lay.present_ranks == (rank,)
        assert lay.rank(rank).indices == (expected,)
        assert lay.local.shape == tuple(d.to_local().shape)
        assert [s.indices for s in lay.ranks] == [(documented[r],) for r in range(4)]
        shape, offset = _compute_local_shape_and_global_offset(
            (8,), (2, 2), list(lay.rank(rank).coordinate), d.placements
        )
        assert shape == (2,) and offset == (expected[0],)
        assert str(lay.placements[1]) == "StridedShard(dim=0, split_factor=2)"
        assert "elements 0, 2" in lay.rank(0).explain()
        dist.destroy_process_group()


def test_one_rank_present_the_others_computed(group):
    group(8, rank=3)
    mesh = init_device_mesh("cpu", (2, 4), mesh_dim_names=("dp", "tp"))
    d = distribute_tensor(torch.arange(64.0).reshape(8, 8), mesh, [Shard(0), Shard(1)])
    lay = sw.inspect(d)
    local = d.to_local()
    assert lay.this_rank == 3 and lay.present_ranks == (3,)
    assert lay.computed_ranks == (0, 1, 2, 4, 5, 6, 7)
    assert lay.local.shape == tuple(local.shape) and lay.local.strides == local.stride()
    assert lay.local.storage_nbytes == local.untyped_storage().nbytes()
    assert str(lay) == (
        "DTensor float32 (8, 8) on mesh (dp=2, tp=4) [Shard(0), Shard(1)] · "
        "rank 3: float32 (4,2):(2,1) +0 · storage 8 · contiguous"
    )
    assert "(computed from the placements)" in lay.rank(0).explain()
    assert "read: rank 3; the other 7 ranks' shares are computed" in lay.explain()


def test_drawing_refuses_in_one_line(group):
    """A picture of a DTensor among other tensors is refused, and a text or a plot of it (alone,
    sw.render_svg and sw.show draw it: tests/test_dtensor_picture.py, test_dtensor_widget.py)."""
    group(8, rank=3)
    mesh = init_device_mesh("cpu", (2, 4))
    d = distribute_tensor(torch.arange(64.0).reshape(8, 8), mesh, [Shard(0), Shard(1)])
    show = lambda d: sw.show(d, torch.zeros(2))  # noqa: E731
    for draw in (show, lambda d: sw.render_svg(d, torch.zeros(2)), sw.render_text, sw.plot):
        with pytest.raises(LayoutError) as caught:
            draw(d)
        message = str(caught.value)
        assert "\n" not in message and "sw.inspect(d)" in message
        # it names no other function than the one called (the review saw "sw.show:" everywhere)
        assert draw is show or not message.startswith("sw.show"), message
    sw.render_svg(d.to_local())  # this rank's local tensor is a real tensor: drawn


def test_bad_questions_get_one_line(group):
    group(2)
    with LocalTensorMode(2):
        mesh = init_device_mesh("cpu", (2,))
        d = distribute_tensor(torch.arange(4.0), mesh, [Shard(0)])
    lay = sw.inspect(d)
    with pytest.raises(IndexError, match="not in the global shape"):
        lay.holders((9,))
    with pytest.raises(KeyError, match="rank 5 is not in this mesh"):
        lay.rank(5)


def test_compat_fallbacks_give_torchs_answers():
    """The _compat fallbacks: torch.chunk's arithmetic for a Shard without the torch method,
    no local tensors for a plain tensor, no split factor for a plain Shard."""
    from stridewidget._compat import local_tensors_by_rank, shard_positions, strided_split_factor

    class Bare:  # a placement whose class has no local_shard_size_and_offset
        pass

    for length, chunks in ((7, 4), (2, 4), (8, 2), (0, 3), (5, 1)):
        expected = [list(c.tolist()) for c in torch.arange(length).chunk(chunks)]
        expected += [[]] * (chunks - len(expected))
        for rank in range(chunks):
            assert shard_positions(Bare(), length, chunks, rank) == expected[rank]
            assert shard_positions(Shard(0), length, chunks, rank) == expected[rank]
    assert local_tensors_by_rank(torch.zeros(2)) is None
    assert strided_split_factor(Shard(0)) is None


def test_display_shows_the_distributed_picture(group):
    """``display(d)`` in IPython: the formatter shows the DTensor's own live picture (not a storage
    that is nowhere), torch's repr as its text, the saved keyless picture as its HTML."""
    from stridewidget.notebook.display import _bundle_for

    group(2)
    mesh = init_device_mesh("cpu", (2,))
    d = distribute_tensor(torch.arange(4.0), mesh, [Shard(0)])

    shell = type("Shell", (), {})()
    shell.user_ns = {"d": d}
    data, _ = _bundle_for(shell)(d)
    assert "application/vnd.jupyter.widget-view+json" in data
    assert data["text/plain"] == repr(d)
    assert "<svg" in data["text/html"] and "sws-dcell" not in data["text/html"]
