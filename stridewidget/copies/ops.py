"""What one ATen op does: moves data, writes an argument, makes a view or computes.

Decided once per op from its schema and tags (:class:`OpInfo`, kept in an :class:`OpCache`),
and, for an op that is neither a primitive data movement (:data:`COPY_OPS`) nor a view, by
following its reference decomposition on meta tensors (:func:`moves_data`): those verdicts live in
``adapters/aten.py`` (shared with ``sw.graph``) and are re-exported here.  :func:`note_op` adds
what one op call did to the :class:`Pending` record of the user-level call in progress.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import torch

from .._compat import op_runner
from ..adapters.aten import (
    COMPOSITE_IMPLICIT,
    COPY_OPS,
    MISSING,
    SCATTERS_INTO,
    OpCache,
    OpInfo,
    argument_value,
    call_key,
    moves_data,
    moves_data_answers,
    op_info,
    undecomposed,
)
from .snapshot import (
    _PLAIN_TENSOR_TYPES,
    Extent,
    Snapshot,
    arrays_in,
    data_nbytes,
    storage_extents,
)

__all__ = [
    "COMPOSITE_IMPLICIT",
    "COPY_OPS",
    "MISSING",
    "NO_SNAPSHOTS",
    "OP_ENTRIES",
    "PLAIN_OPS",
    "SCATTERS_INTO",
    "WRITES_SELF",
    "OpCache",
    "OpInfo",
    "Pending",
    "argument_value",
    "call_key",
    "moves_data",
    "moves_data_answers",
    "note_op",
    "op_entry",
    "op_info",
]


class Pending:
    """What the ATen ops of the call in progress did."""

    __slots__ = (
        "before",
        "bytes_copied",
        "copied_into",
        "fresh_copy",
        "keep_layouts",
        "ops",
        "transforms",
        "written",
    )

    def __init__(self) -> None:
        self.ops: list[str] = []
        # set by a recorder subclass's op mode: read this call's layouts (see Recorder)
        self.keep_layouts = False
        # snapshots of the tensors ops wrote to (by id), taken before the first such op ran: a
        # dict of its own from the first such op (most calls have none), read-only until then
        self.before: Mapping[int, Snapshot] = NO_SNAPSHOTS
        self.bytes_copied = 0
        self.fresh_copy = False  # an out-of-place copy op ran: its result is new storage
        # storages written by in-place and out= ops, and the subset written by copy ops (copy_,
        # cat.out): tuples, as most calls write nothing (a write makes the next tuple)
        self.written: tuple[Extent, ...] = ()
        self.copied_into: tuple[Extent, ...] = ()
        self.transforms: tuple[str, ...] = ()  # the functorch transforms running (see CopyEvent)


#: :attr:`Pending.before` of a call no op has rewritten the layout of a tensor in (yet).
NO_SNAPSHOTS: Mapping[int, Snapshot] = MappingProxyType({})


def note_op(
    func: Any, info: OpInfo, args: tuple[Any, ...], kwargs: dict, result: Any, pending: Pending
) -> None:
    """Add what one ATen op did (its name, what it wrote, the bytes it moved) to ``pending``."""
    pending.ops.append(info.name)
    written = info.written
    if written and not info.is_copy:  # in-place arithmetic (add_, mul_): writes, moves none
        for position, name in written:
            value = args[position] if position < len(args) else kwargs.get(name)
            if type(value) in _PLAIN_TENSOR_TYPES:
                pending.written += storage_extents(value)
            else:
                for tensor in arrays_in(value, []):
                    pending.written += storage_extents(tensor)
    elif written:
        moves = info.moves(args, kwargs)
        itself = _copied_from_itself(info.name, args) if moves else ()
        for position, name in written:
            for tensor in arrays_in(argument_value(args, kwargs, position, name), []):
                extents = storage_extents(tensor)
                pending.written += extents
                if moves and id(tensor) not in itself:
                    pending.copied_into += extents
                    pending.bytes_copied += info.moved_bytes(args, kwargs, tensor)
    elif (info.is_copy and info.moves(args, kwargs)) or (
        not func.is_view and moves_data(func, args, kwargs)
    ):  # (moves() is False for an op that is not a copy: not called for one)
        pending.fresh_copy = True
        pending.bytes_copied += data_nbytes(result)
    elif not info.is_copy and (func.is_view or undecomposed(func)):
        # never moves data, whatever its arguments (a view, or an op with no decomposition to
        # branch on dtypes): noted by name from now on
        PLAIN_OPS.add(id(func))


def _copied_from_itself(name: str, args: tuple[Any, ...]) -> set[int]:
    """The ids of the tensors a ``copy_`` (each entry of a ``_foreach_copy_``) copies from their
    own data: ATen's copy returns at once when its source is its destination's data exactly (one
    storage, offset, sizes, strides, dtype, conj and neg bits), moving nothing; a
    ``_foreach_copy_`` on the CPU runs that copy per entry (a GPU's fused kernel may not)."""
    if name == "aten.copy_" and len(args) >= 2:
        return {id(args[0])} if _same_data(args[0], args[1]) else set()
    if name != "aten._foreach_copy_" or len(args) < 2:
        return set()
    pairs = zip(args[0], args[1])
    return {id(d) for d, s in pairs if _same_data(d, s) and d.device.type == "cpu"}


def _same_data(dst: Any, src: Any) -> bool:
    if dst is src:
        return True
    if not isinstance(dst, torch.Tensor) or not isinstance(src, torch.Tensor):
        return False
    try:
        address = dst.untyped_storage().data_ptr()
        return (
            address != 0  # (a meta or empty storage has no address to tell two apart)
            and address == src.untyped_storage().data_ptr()
            and dst.device == src.device
            and dst.storage_offset() == src.storage_offset()
            and dst.shape == src.shape
            and dst.stride() == src.stride()
            and dst.dtype == src.dtype
            and dst.is_conj() == src.is_conj()
            and dst.is_neg() == src.is_neg()
        )
    except (RuntimeError, NotImplementedError):  # a fake tensor's storage: no address
        return False


#: ids of ops (kept alive by op_info's cache) that write no argument and never move data: views and
#: compute ops whose decomposition was followed once (:func:`moves_data`).  The op mode notes such
#: an op by its name only, without calling :func:`note_op`.
PLAIN_OPS: set[int] = set()


#: ids of ops (kept alive by :data:`OP_ENTRIES`) that write only ``self`` and move no data
#: (``add_``, ``mul_``, ``lerp_``: an AdamW step's most common ops): the op mode notes such an op
#: on a plain tensor as :func:`note_op` would, without the call.
WRITES_SELF: set[int] = set()


#: In-place ops that write data into ``self`` and never change its layout (shape, strides, offset,
#: storage), besides those tagged ``pointwise`` (``add_``, ``mul_``, ``lerp_``, ``addcdiv_`` ...):
#: an in-place pointwise op cannot resize ``self``.
_DATA_ONLY = frozenset(
    {
        "copy_",
        "zero_",
        "fill_",
        "masked_fill_",
        "masked_scatter_",
        "index_put_",
        "_index_put_impl_",
        "index_copy_",
        "index_fill_",
        "index_add_",
        "scatter_",
        "scatter_add_",
        "scatter_reduce_",
        "uniform_",
        "normal_",
        "bernoulli_",
        "random_",
        "exponential_",
        "geometric_",
        "cauchy_",
        "log_normal_",
        "threshold_",
    }
)
#: In-place list ops that write data into every list they write and never change a layout: the
#: ``_foreach_*_`` ops (in-place pointwise math, ``_foreach_copy_``, ``_foreach_zero_``: as
#: ``add_`` on each entry) and the fused optimizers, which update parameters, gradients and
#: state in place.  Their written lists need no snapshot before they run (a fused AdamW step
#: writes 4 lists of every parameter).
_LISTS_DATA_ONLY = frozenset({"_fused_adam_", "_fused_adamw_", "_fused_sgd_", "_fused_adagrad_"})


def _lists_data_only(packet: str) -> bool:
    return (packet.startswith("_foreach_") and packet.endswith("_")) or packet in _LISTS_DATA_ONLY


#: id(op) -> :func:`op_entry`'s entry for it (the op kept in it, so the id stays its own).
OP_ENTRIES: dict[int, tuple[Any, OpInfo, tuple[tuple[int, str], ...], Any]] = {}


def op_entry(func: Any) -> tuple[Any, OpInfo, tuple[tuple[int, str], ...], Any]:
    """``(func, op_info(func), relaid, run)``, cached per op: ``run`` is what calling ``func``
    runs (:func:`~stridewidget._compat.op_runner`: one Python frame fewer per op); ``relaid`` are the written arguments whose
    layout the op may change (``t_``, ``resize_``, ``set_``, any ``out=``), of which the op mode
    snapshots the layout before the op runs; an in-place op that writes only data (``add_``) has
    none, so its call's input snapshot serves as its output's too.

    >>> import torch
    >>> op_entry(torch.ops.aten.add_.Tensor)[2], op_entry(torch.ops.aten.t_.default)[2]
    ((), ((0, 'self'),))
    >>> op_entry(torch.ops.aten._foreach_mul_.Scalar)[2], op_entry(torch.ops.aten._fused_adamw_.default)[2]
    ((), ())
    """
    entry = OP_ENTRIES.get(id(func))
    if entry is not None and entry[0] is func:
        return entry
    info = op_info(func)
    packet = func.overloadpacket.__name__
    data_only = packet in _DATA_ONLY or torch.Tag.pointwise in func.tags
    relaid = (
        ()
        if _lists_data_only(packet)
        else tuple(w for w in info.written if not (data_only and w[1] == "self"))
    )
    entry = OP_ENTRIES[id(func)] = (func, info, relaid, op_runner(func))
    if info.written == ((0, "self"),) and not info.is_copy:
        WRITES_SELF.add(id(func))
    return entry
