"""The checked ``as_strided``: a view is validated before torch ever sees it.

The checks themselves are pure (:func:`stridewidget.layout.strides.check_view`, which the JS
playground mirrors); this module reads the tensor, asks them, refuses quantized schemes torch has
no strided views of, and warns about (or refuses) self-overlap.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

from ..errors import LayoutError, safe_repr
from ..layout.ints import as_index, as_indices
from ..layout.layout import Layout
from ..layout.strides import check_view
from .inspect import inspect
from .numpy import is_ndarray
from .objects import _describe, conversion_hint
from .torch import _torch, is_tensor

__all__ = ["OverlapWarning", "as_strided"]


class OverlapWarning(UserWarning):
    """A checked ``as_strided`` view reads some storage cells more than once."""


def as_strided(
    x: Any,
    size: Sequence[int],
    stride: Sequence[int],
    storage_offset: int | None = None,
    *,
    allow_overlap: bool | None = None,
) -> Any:
    """A checked ``torch.as_strided``: the view is validated before torch ever sees it.

    * ``storage_offset`` defaults to ``x``'s own offset, as in ``torch.as_strided``; an explicit
      offset counts from the start of the *storage*, not from ``x[0]``.
    * A view that would leave the storage raises :class:`LayoutError` naming the first
      out-of-bounds index and the storage size (``torch.as_strided`` checks this too, but only on
      some devices and paths, and never says which index).
    * Negative strides, negative sizes and length mismatches are refused.
    * Self-overlap (two indices on one cell): ``allow_overlap=None`` warns with
      :class:`OverlapWarning`, ``True`` allows silently (broadcasts, sliding windows), ``False`` raises.

    >>> import torch, stridewidget as sw
    >>> x = torch.arange(10.0)
    >>> sw.as_strided(x, (4, 3), (2, 1), allow_overlap=True)[1]
    tensor([2., 3., 4.])
    >>> sw.as_strided(x[2:], (2,), (1,))          # keeps x[2:]'s offset
    tensor([2., 3.])
    >>> sw.as_strided(x, (4,), (3,), storage_offset=1)
    Traceback (most recent call last):
      ...
    stridewidget.errors.LayoutError: as_strided: index (3,) maps to storage element 10, but the \
storage has only 10 elements (valid: 0..9); size (4,), stride (3,), storage_offset 1
    """
    if not is_tensor(x):
        hint = " Use `torch.from_numpy(x)` (no copy)." if is_ndarray(x) else conversion_hint(x)
        raise TypeError(f"sw.as_strided needs a torch.Tensor, got {_describe(x)}.{hint}")
    layout = inspect(x)
    if allow_overlap is not None and not isinstance(allow_overlap, bool):
        # np.False_ or 0 would only warn where False raises: the check is asked exactly
        raise TypeError(
            "as_strided: allow_overlap must be True, False or None (a Python bool), got "
            f"{safe_repr(allow_overlap)} ({type(allow_overlap).__module__}."
            f"{type(allow_overlap).__qualname__})"
        )
    size = as_indices(size, "as_strided: size")
    stride = as_indices(stride, "as_strided: stride")
    offset = (
        layout.offset
        if storage_offset is None
        else as_index(storage_offset, "as_strided: storage_offset")
    )
    problem = check_view(size, stride, offset, layout.storage_size)
    if problem is not None:
        raise LayoutError(problem)
    torch = _torch()
    if x.is_quantized and x.qscheme() not in (torch.per_tensor_affine, torch.per_tensor_symmetric):
        raise LayoutError(
            f"as_strided: torch makes no strided views of a {x.qscheme()} quantized tensor (its "
            "scales follow one axis); use the integer codes `x.int_repr()`, or dequantize first"
        )
    _check_overlap(
        Layout(size, stride, offset, layout.itemsize, layout.storage_size), allow_overlap
    )
    return torch.as_strided(x, size, stride, offset)


def _check_overlap(view_layout: Layout, allow_overlap: bool | None) -> None:
    """Warn (``None``) or raise (``False``) when the view overlaps itself; ``True`` skips the
    search, which can be costly for huge views."""
    witness = None if allow_overlap is True else view_layout.overlap_witness
    if witness is None:
        return
    message = (
        f"as_strided: size {view_layout.shape}, stride {view_layout.strides} overlaps itself: "
        f"indices {witness[0]} and {witness[1]} are both storage element "
        f"{view_layout.address(witness[0])}; "
        "in-place writes through it would hit some elements more than once"
    )
    if allow_overlap is False:
        raise LayoutError(message)
    warnings.warn(message + " (pass allow_overlap=True to silence)", OverlapWarning, stacklevel=3)
