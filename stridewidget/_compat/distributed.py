"""What a ``DTensor`` keeps behind private names: every rank's local tensor under
``LocalTensorMode`` and the global indices a strided shard (FSDP2 + TP) gives one rank; and
what FSDP2 keeps behind them: the unsharded parameter each sharded one stands for."""

from __future__ import annotations

import sys
from typing import Any

__all__ = [
    "fsdp_parameter_pairs",
    "local_tensors_by_rank",
    "shard_positions",
    "strided_split_factor",
]


def local_tensors_by_rank(local: Any) -> dict[int, Any] | None:
    """Every rank's tensor when ``local`` is a ``LocalTensor`` (``LocalTensorMode`` simulates all
    ranks in one process), else ``None`` (a real rank holds only its own).
    ``LocalTensor._local_tensors``, checked on torch 2.13; without it, ``None``: only the
    current rank's tensor is read and every other rank's shape is computed from the placements.

    >>> import torch
    >>> local_tensors_by_rank(torch.zeros(2)) is None
    True
    """
    module = sys.modules.get("torch.distributed._local_tensor")
    cls = getattr(module, "LocalTensor", None)
    if cls is None or not isinstance(local, cls):
        return None
    tensors = getattr(local, "_local_tensors", None)
    if not isinstance(tensors, dict):
        return None
    out = {}
    for rank, tensor in tensors.items():
        # a local tensor made under LocalTensorMode (``torch.empty(...)`` in the mode, then
        # ``DTensor.from_local``) is itself a LocalTensor: its own rank's tensor holds the values
        while isinstance(tensor, cls) and isinstance(getattr(tensor, "_local_tensors", None), dict):
            tensor = tensor._local_tensors.get(rank, tensor._local_tensors.get(int(rank)))
        if tensor is not None:
            out[int(rank)] = tensor
    return out


def strided_split_factor(placement: Any) -> int | None:
    """The split factor of a ``_StridedShard`` placement (the strided shard FSDP2 + TP make), else
    ``None``.  The class is private (``torch.distributed.tensor.placement_types._StridedShard``),
    checked on torch 2.13; without it no placement is a strided shard.

    >>> from torch.distributed.tensor import Shard
    >>> strided_split_factor(Shard(0)) is None
    True
    """
    module = sys.modules.get("torch.distributed.tensor.placement_types")
    cls = getattr(module, "_StridedShard", None)
    if cls is None or not isinstance(placement, cls):
        return None
    return int(placement.split_factor)


def shard_positions(placement: Any, length: int, num_chunks: int, coordinate: int) -> list[int]:
    """The positions, among ``length`` indices along the sharded dim, that mesh coordinate
    ``coordinate`` of ``num_chunks`` holds under one ``Shard`` / ``_StridedShard`` placement.

    A plain ``Shard`` splits as ``torch.chunk`` does (public: ``Shard.local_shard_size_and_offset``,
    with the same arithmetic as fallback); a ``_StridedShard`` asks its private
    ``_local_shard_size_and_offset(..., offset_mode=ALL)``, checked on torch 2.13; without it a
    strided shard raises a one-line ``LookupError``.

    >>> from torch.distributed.tensor import Shard
    >>> shard_positions(Shard(0), 7, 4, 3), shard_positions(Shard(0), 7, 4, 0)
    ([6], [0, 1])
    """
    if strided_split_factor(placement) is None:
        size_offset = getattr(type(placement), "local_shard_size_and_offset", None)
        if size_offset is not None:
            size, offset = size_offset(length, num_chunks, coordinate)
        else:  # torch.chunk's arithmetic
            chunk = -(-length // num_chunks) if num_chunks else 0
            offset = min(coordinate * chunk, length)
            size = min(chunk, length - offset)
        return list(range(int(offset), int(offset) + int(size)))
    modes = sys.modules.get("torch.distributed.tensor.placement_types")
    mode = getattr(getattr(modes, "_StridedShardOffsetMode", None), "ALL", None)
    method = getattr(placement, "_local_shard_size_and_offset", None)
    if mode is None or method is None:
        raise LookupError(
            f"stridewidget: this torch does not say which indices {placement!r} gives a rank"
        )
    size, offsets = method(length, num_chunks, coordinate, offset_mode=mode)
    if int(size) == 0:
        return []
    if isinstance(offsets, int):
        return list(range(offsets, offsets + int(size)))
    return [int(o) for o in offsets]


def fsdp_parameter_pairs(model: Any) -> list[tuple[Any, Any]]:
    """``(sharded, unsharded)`` for each parameter FSDP2 (``fully_shard``) manages in ``model``:
    the sharded ``DTensor`` the module holds between steps, and the plain ``nn.Parameter`` its
    forward computes with, the leaf autograd accumulates the gradient into (FSDP2's
    post-backward hook then reduce-scatters it into the sharded one's ``.grad``).  An unsharded
    parameter not yet made (no all-gather ran) is left out.  ``FSDPModule._get_fsdp_state()``,
    its ``_fsdp_param_group.fsdp_params`` and each one's ``sharded_param`` /
    ``_unsharded_param``, checked on torch 2.13; without them, no pair.

    >>> import torch
    >>> fsdp_parameter_pairs(torch.nn.Linear(2, 2))
    []
    """
    pairs = []
    for module in model.modules():
        state_of = getattr(module, "_get_fsdp_state", None)
        if state_of is None:
            continue
        try:
            group = getattr(state_of(), "_fsdp_param_group", None)
        except Exception:  # not an FSDP2 module after all, or its state changed shape
            continue
        for fsdp_param in getattr(group, "fsdp_params", None) or ():
            sharded = getattr(fsdp_param, "sharded_param", None)
            unsharded = getattr(fsdp_param, "_unsharded_param", None)
            if sharded is not None and unsharded is not None:
                pairs.append((sharded, unsharded))
    return pairs
