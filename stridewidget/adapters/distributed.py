"""A live ``torch.distributed.tensor.DTensor`` read into a :class:`DistributedLayout`.

Reads metadata only: the mesh, the placements, and each local tensor's shape, strides, offset
and storage (every rank's under ``LocalTensorMode``, else this rank's).  Which global indices a
rank holds comes from the placements, as torch splits them (``torch.chunk`` for ``Shard``, the
strided shard's own offsets); no collective is run and no value is read.
"""

from __future__ import annotations

import itertools
import sys
from typing import Any

from .._compat import local_tensors_by_rank, shard_positions, strided_split_factor
from ..errors import LayoutError
from ..layout.distributed import DistributedLayout, Placement, RankShard
from .torch import _torch_layout

__all__ = ["distributed_layout", "is_dtensor", "local_tensors"]


def is_dtensor(x: Any) -> bool:
    """Is ``x`` a ``DTensor``?  Never imports torch.distributed.

    >>> import torch
    >>> is_dtensor(torch.zeros(2))
    False
    """
    module = sys.modules.get("torch.distributed.tensor")
    cls = getattr(module, "DTensor", None)
    return cls is not None and isinstance(x, cls)


def _placement(p: Any) -> Placement:
    factor = strided_split_factor(p)
    if factor is not None:
        return Placement("strided_shard", dim=int(p.dim), split_factor=factor)
    try:
        if p.is_shard():
            return Placement("shard", dim=int(p.dim))
        if p.is_partial():
            return Placement("partial", reduce_op=str(p.reduce_op))
        if p.is_replicate():
            return Placement("replicate")
    except (AttributeError, TypeError, ValueError):  # not a torch placement at all
        pass
    raise LayoutError(f"sw.inspect: a DTensor placement stridewidget does not know: {p!r}")


def _indices(
    placements: tuple[Any, ...], shape: tuple[int, ...], mesh_shape: tuple[int, ...], coord: tuple
) -> tuple[tuple[int, ...], ...]:
    """The global indices along each dim that the rank at ``coord`` holds: shards applied left to
    right over the mesh dims, each splitting what the ones before it left (as torch does)."""
    held = [list(range(n)) for n in shape]
    for mesh_dim, p in enumerate(placements):
        if not p.is_shard() and strided_split_factor(p) is None:
            continue
        dim = int(p.dim)
        positions = shard_positions(p, len(held[dim]), mesh_shape[mesh_dim], coord[mesh_dim])
        held[dim] = [held[dim][i] for i in positions]
    return tuple(tuple(h) for h in held)


def _this_rank() -> int | None:
    dist = sys.modules.get("torch.distributed")
    if dist is None or not dist.is_initialized():
        return None
    return int(dist.get_rank())


def _group_alive() -> bool:
    """Is the default process group still there (``torch.distributed`` is initialized)?"""
    import torch.distributed as dist

    return bool(dist.is_available() and dist.is_initialized())


def distributed_layout(d: Any) -> DistributedLayout:
    """The :class:`DistributedLayout` of a live ``DTensor``: what ``sw.inspect(d)`` returns.

    One real rank (3 of 8, a fake process group): its own local tensor is read, the other
    ranks' shares are computed from the placements.

    >>> import torch, torch.distributed as dist
    >>> from torch.distributed.device_mesh import init_device_mesh
    >>> from torch.distributed.tensor import Shard, distribute_tensor
    >>> from torch.testing._internal.distributed.fake_pg import FakeStore
    >>> dist.init_process_group("fake", store=FakeStore(), rank=3, world_size=8)
    >>> mesh = init_device_mesh("cpu", (2, 4))
    >>> lay = distributed_layout(distribute_tensor(torch.zeros(8, 8), mesh, [Shard(0), Shard(1)]))
    >>> print(lay.rank(3).explain())
    rank 3 at (0, 3) holds rows 0–3 and columns 6–7: a (4, 2) local tensor, strides (2, 1), offset 0, storage 8, contiguous
    >>> lay.computed_ranks
    (0, 1, 2, 4, 5, 6, 7)
    >>> dist.destroy_process_group()
    """
    try:
        mesh = d.device_mesh
        grid = mesh.mesh.tolist()
        mesh_shape = tuple(int(n) for n in mesh.shape)
        names = mesh.mesh_dim_names
        local = d.to_local()
    except Exception as error:  # a mesh whose process group is gone, or a half-built DTensor
        raise LayoutError(
            f"sw.inspect: cannot read this DTensor's mesh ({type(error).__name__}: {error}); "
            "is its process group still initialized?"
        ) from None
    if local_tensors_by_rank(local) is None and not _group_alive():
        # this process's rank is no longer known: every share would be computed and its own
        # real local tensor dropped, silently
        raise LayoutError(
            "sw.inspect: this DTensor's process group is gone (destroy_process_group() ran), so "
            "which rank this process is cannot be read; d.to_local() is its local tensor"
        )
    placements = tuple(d.placements)
    try:
        shape = tuple(int(n) for n in d.shape)
    except (AttributeError, TypeError, ValueError):  # a LocalIntNode: one size per rank
        raise LayoutError(
            f"sw.inspect: this DTensor's global shape differs between ranks ({tuple(d.shape)}): "
            "DTensor.from_local(..., shape=, stride=) gives it the one global shape"
        ) from None
    by_rank = local_tensors_by_rank(local)
    this = _this_rank()
    ranks = []
    for coord in itertools.product(*(range(n) for n in mesh_shape)):
        rank = grid
        for c in coord:
            rank = rank[c]
        rank = int(rank)
        mine = local if rank == this else None
        tensor = by_rank.get(rank) if by_rank is not None else mine
        lay = None if tensor is None else _torch_layout(tensor)
        ranks.append(RankShard(rank, coord, _indices(placements, shape, mesh_shape, coord), lay))
    return DistributedLayout(
        global_shape=shape,
        dtype=str(d.dtype).removeprefix("torch."),
        mesh_shape=mesh_shape,
        mesh_dim_names=None if names is None else tuple(names),
        placements=tuple(_placement(p) for p in placements),
        ranks=tuple(ranks),
        this_rank=this,
        itemsize=int(d.dtype.itemsize),
        read_placement=_placement,
    )


def local_tensors(d: Any) -> dict[int, Any]:
    """The local tensors of ``d`` that are in this process, by rank: every rank's under
    ``LocalTensorMode``, else this rank's own (none when this process is no rank of the mesh).

    >>> import torch, torch.distributed as dist
    >>> from torch.distributed.device_mesh import init_device_mesh
    >>> from torch.distributed.tensor import Shard, distribute_tensor
    >>> from torch.testing._internal.distributed.fake_pg import FakeStore
    >>> dist.init_process_group("fake", store=FakeStore(), rank=1, world_size=2)
    >>> d = distribute_tensor(torch.arange(4.0), init_device_mesh("cpu", (2,)), [Shard(0)])
    >>> {rank: tuple(t.shape) for rank, t in local_tensors(d).items()}
    {1: (2,)}
    >>> dist.destroy_process_group()
    """
    local = d.to_local()
    by_rank = local_tensors_by_rank(local)
    if by_rank is not None:
        return by_rank
    this = _this_rank()
    return {} if this is None else {this: local}
