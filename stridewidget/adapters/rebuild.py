"""Rebuilding a freed view over memory that a live tensor / array still holds.

The widget holds shown tensors weakly; a temporary view (``show(x[:, ::2])``) dies at once but
reads memory ``x`` keeps.  A rebuild is only honest while that memory is still the view's: the same
allocation (data pointer) and at least as many bytes as the view reaches.  Otherwise the view is
reported gone, with why, and the live tensor is never touched (``set_`` over a too-small storage
would grow the user's storage).
"""

from __future__ import annotations

import sys
import warnings
from typing import Any

from .._compat import neg_view
from ..layout.layout import Layout

__all__ = ["array_memory", "rebuild_array", "rebuild_tensor", "tensor_memory"]

# Why a held view is not redrawn although something it came from is still alive.
MEMORY_CHANGED = "freed; its base no longer holds its memory (set_, resize_)"
PER_CHANNEL = "freed; torch cannot rebuild a per-channel quantized view (it sets no strides)"


def reach_bytes(layout: Layout) -> int:
    """The bytes of storage the layout reads up to (0 for an empty view)."""
    if any(size == 0 for size in layout.shape):
        return 0
    last = layout.offset + sum((size - 1) * abs(s) for size, s in zip(layout.shape, layout.strides))
    return (last + 1) * layout.itemsize


def tensor_memory(t: Any) -> tuple[int | None, int]:
    """``(data pointer, nbytes)`` of a tensor's storage; no pointer where it has none (fake)."""
    storage = t.untyped_storage()
    try:
        with warnings.catch_warnings():  # a FakeTensor warns (its pointer is 0, compared as is)
            warnings.simplefilter("ignore", UserWarning)
            pointer = storage.data_ptr()
    except RuntimeError:  # functional storages have no data pointer
        pointer = None
    return pointer, storage.nbytes()


def rebuild_tensor(bases: list[Any], layout: Layout, dtype: Any, memory: tuple) -> Any | str:
    """The view ``layout`` described, over the first live base still holding ``memory``.

    Returns the view, or why there is none.  A quantized view keeps its base's quantizer; a
    conj / neg view gets its lazy bit back, so it reads what the freed view read.
    """
    pointer, _ = memory
    holders = [b for b in bases if tensor_memory(b)[0] == pointer]
    holders = [b for b in holders if tensor_memory(b)[1] >= reach_bytes(layout)]
    if not holders:
        return MEMORY_CHANGED
    quantized = [b for b in holders if b.is_quantized and b.dtype == dtype]
    if quantized:
        base = quantized[0]
        torch = sys.modules["torch"]
        if base.qscheme() != torch.per_tensor_affine:
            return PER_CHANNEL
        return base.as_strided(layout.shape, layout.strides, layout.offset)
    base = holders[0]
    view = base.new_empty(0, dtype=dtype, requires_grad=False)
    view = view.set_(base.untyped_storage(), layout.offset, layout.shape, layout.strides)
    if "conj" in layout.notes:
        view = view.conj()
    if "neg" in layout.notes:
        view = neg_view(view)
    return view


def array_memory(a: Any) -> tuple[int, int]:
    """``(data address, nbytes)`` of a root ndarray's own buffer."""
    return a.__array_interface__["data"][0], a.nbytes


class _Interface:
    """An object NumPy reads an array from (``__array_interface__``), keeping ``base`` alive."""

    def __init__(self, interface: dict, base: Any) -> None:
        self.__array_interface__ = interface
        self.base = base


def rebuild_array(
    root: Any, layout: Layout, dtype: Any, byte_offset: int, writeable: bool, memory: tuple
) -> Any | str:
    """The array view over ``root``'s buffer, read-only unless both it and ``root`` were writeable.

    Built like ``np.lib.stride_tricks.as_strided`` (an array interface over the root's buffer), so a
    non-contiguous root works and nothing is copied.
    """
    if array_memory(root) != memory:
        return MEMORY_CHANGED
    np = sys.modules["numpy"]
    dtype = np.dtype(dtype)
    interface = {
        "data": (memory[0] + byte_offset, not (writeable and root.flags.writeable)),
        "shape": tuple(layout.shape),
        "strides": tuple(layout.byte_strides),
        "typestr": dtype.str,
        "descr": dtype.descr,
        "version": 3,
    }
    return np.asarray(_Interface(interface, root))
