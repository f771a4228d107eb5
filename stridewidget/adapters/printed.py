"""The values a tensor's own ``repr`` formats: all of them, or for an elided tensor the edge items.

torch and NumPy pick one number format per printed tensor over exactly these values, so a logical
grid that shows a tensor's values in its library's format decides it over them too (the storage
strip, raw memory shared by several tensors, decides its own over its cells).
"""

from __future__ import annotations

import sys
from typing import Any

from .._compat import torch_summary_options

__all__ = ["printed_values"]


def _edge_indices(size: int, edge_items: int) -> list[int]:
    if size <= 2 * edge_items:
        return list(range(size))
    return list(range(edge_items)) + list(range(size - edge_items, size))


def printed_values(obj: Any) -> list[Any] | None:
    """The values ``repr(obj)`` prints, as Python numbers (read lazily: conj / neg applied,
    quantized dequantized); ``None`` where there are none to read (meta tensors; the scene asks
    only of tensors whose cells it could read, never of a FakeTensor).

    >>> import torch, numpy as np
    >>> printed_values(torch.tensor([1e-5, 1.0, 2.0])[1:])
    [1.0, 2.0]
    >>> len(printed_values(np.arange(2000.0)))  # NumPy elides past 1000: 3 at each end
    6
    """
    if type(obj).__module__.startswith("numpy"):
        from .numpy import within_buffer

        if not within_buffer(obj):  # an as_strided view past its block: never read
            return None
        np = sys.modules["numpy"]
        options = np.get_printoptions()
        threshold, edge_items = options["threshold"], options["edgeitems"]
        if obj.size > threshold:
            obj = obj[np.ix_(*[_edge_indices(n, edge_items) for n in obj.shape])]
        return np.asarray(obj).ravel().tolist()
    if obj.device.type == "meta" or not _within_storage(obj):
        return None
    try:
        return _torch_printed(obj)
    except RuntimeError:  # e.g. a per-channel quantized view torch cannot index: grid decides
        return None


def _within_storage(t: Any) -> bool:
    """Whether every element of ``t`` lies inside its storage as it is now: a view whose storage
    was shrunk (``resize_``, ``set_``) must never be read (torch checks bounds only when a view is
    made, so reading it would read freed memory)."""
    try:
        if t.numel() == 0:
            return True
        last = t.storage_offset() + sum((n - 1) * s for n, s in zip(t.shape, t.stride()))
        return (last + 1) * t.element_size() <= t.untyped_storage().nbytes()
    except (RuntimeError, NotImplementedError, TypeError):  # no storage to check: do not read
        return False


def _torch_printed(t: Any) -> list[Any]:
    threshold, edge_items = torch_summary_options()
    if t.numel() > threshold:
        # the edge indices of every dim at once (broadcast index tensors): a gather of the shown
        # elements only, never one dim at a time (expand(n, n) would materialise 6·n elements)
        torch = sys.modules["torch"]
        ndim = t.dim()
        index = tuple(
            torch.tensor(_edge_indices(size, edge_items), device=t.device).reshape(
                [-1 if k == dim else 1 for k in range(ndim)]
            )
            for dim, size in enumerate(t.shape)
        )
        t = t[index]
    if t.is_quantized:
        t = t.dequantize()
    return t.resolve_conj().resolve_neg().reshape(-1).tolist()
