"""Pure stride functions: contiguity tests, addresses, spans, and the checks of a strided view.

Everything here takes tuples of ints (sizes, strides, an offset, a storage size) and returns ints,
tuples or booleans: no tensors, no arrays, in the spirit of PyTorch's ``torch/_prims_common``.
:class:`~stridewidget.layout.layout.Layout` reads its flags from these; ``sw.as_strided`` refuses
exactly what :func:`check_view` names, and the JS playground (``js/playground/math.js``) mirrors
:func:`check_view` and :func:`first_out_of_bounds` so that both name the same problem.

Units: strides, offsets and storage sizes count storage cells; ``width`` is how many cells one
element covers (1 for every torch tensor).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from .ints import INT64_MAX

__all__ = [
    "address",
    "check_view",
    "contiguous_strides",
    "first_out_of_bounds",
    "flat_stride",
    "is_channels_last",
    "is_contiguous",
    "is_f_contiguous",
    "is_non_overlapping_and_dense",
    "span",
    "view_strides",
]


def contiguous_strides(shape: Sequence[int]) -> tuple[int, ...]:
    """Row-major (C) strides, in elements, of a contiguous tensor of ``shape``.

    >>> contiguous_strides((2, 3, 4))
    (12, 4, 1)
    """
    strides = []
    expected = 1
    for n in reversed(shape):
        strides.append(expected)
        expected *= max(n, 1)
    return tuple(reversed(strides))


def _dense_in_order(
    shape: Sequence[int], strides: Sequence[int], order: Sequence[int], width: int = 1
) -> bool:
    """True if walking dims in ``order`` (fastest first) finds strides w, w*n0, w*n0*n1, ...

    ``width`` is the number of cells one element covers.  Size-1 dims are skipped: their stride
    never matters (PyTorch's rule).
    """
    expected = width
    for d in order:
        if shape[d] != 1:
            if strides[d] != expected:
                return False
            expected *= shape[d]
    return True


def is_contiguous(shape: Sequence[int], strides: Sequence[int], width: int = 1) -> bool:
    """C-contiguous by PyTorch's rule: empty tensors are, size-1 dims' strides don't matter.

    ``width`` is the number of storage cells one element covers (NumPy's rule for byte strides:
    contiguous means the last stride is the item size).

    >>> is_contiguous((3, 4), (4, 1)), is_contiguous((4, 3), (1, 4)), is_contiguous((1, 4), (99, 1))
    (True, False, True)
    >>> is_contiguous((2,), (4,), width=4), is_contiguous((2,), (1,), width=4)
    (True, False)
    """
    if math.prod(shape) == 0:
        return True
    return _dense_in_order(shape, strides, range(len(shape) - 1, -1, -1), width)


def is_f_contiguous(shape: Sequence[int], strides: Sequence[int], width: int = 1) -> bool:
    """Fortran-contiguous (first dim fastest), same conventions as :func:`is_contiguous`.

    >>> is_f_contiguous((4, 3), (1, 4))
    True
    """
    if math.prod(shape) == 0:
        return True
    return _dense_in_order(shape, strides, range(len(shape)), width)


def is_channels_last(shape: Sequence[int], strides: Sequence[int], width: int = 1) -> bool:
    """Channels-last (NHWC, 4-D) or channels-last-3d (NDHWC, 5-D) contiguous, PyTorch's rule.

    >>> is_channels_last((2, 3, 4, 5), (60, 1, 15, 3))
    True
    >>> is_channels_last((2, 3), (3, 1))
    False
    """
    if len(shape) == 4:
        return _dense_in_order(shape, strides, (1, 3, 2, 0), width)
    if len(shape) == 5:
        return _dense_in_order(shape, strides, (1, 4, 3, 2, 0), width)
    return False


def is_non_overlapping_and_dense(
    shape: Sequence[int], strides: Sequence[int], width: int = 1
) -> bool:
    """Covers a gap-free block with no cell twice, in some order of the dims.

    Negative strides (NumPy) count by their size: ``a[::-1]`` is dense.  ``width`` is the number
    of cells one element covers: elements ``width`` cells wide tile a block only when they start
    ``width`` cells apart.

    >>> is_non_overlapping_and_dense((3, 4), (1, 3))      # a transpose
    True
    >>> is_non_overlapping_and_dense((3, 2), (4, 1))      # x[:, :2] of a (3, 4)
    False
    """
    if is_contiguous(shape, strides, width):
        return True
    pairs = sorted((abs(s), n) for n, s in zip(shape, strides) if n != 1)
    expected = width
    for stride, n in pairs:
        if stride != expected:
            return False
        expected *= n
    return True


def address(shape: Sequence[int], strides: Sequence[int], offset: int, index: Sequence[int]) -> int:
    """Storage index of a logical multi-index: ``offset + sum(i_k * stride_k)``.

    Negative indices count from the end, as in Python.  Raises :class:`IndexError` out of bounds.

    >>> address((3, 4), (1, 3), 0, (1, 2))
    7
    >>> address((3, 4), (4, 1), 2, (-1, -1))
    13
    """
    if len(index) != len(shape):
        raise IndexError(
            f"index {tuple(index)} has {len(index)} entries, the view has {len(shape)} dims"
        )
    position = offset
    for dim, (i, n, s) in enumerate(zip(index, shape, strides)):
        if not -n <= i < n:
            raise IndexError(f"index {i} is out of bounds for dim {dim} of size {n}")
        position += (i % n) * s
    return position


def span(
    shape: Sequence[int], strides: Sequence[int], offset: int, width: int = 1
) -> tuple[int, int] | None:
    """Inclusive ``(lo, hi)`` range of storage cells a view touches; ``None`` when it is empty.

    >>> span((3, 2), (4, 1), 1)
    (1, 10)
    >>> span((3,), (-2,), 4)        # NumPy-style negative stride
    (0, 4)
    """
    lo = hi = offset
    for n, s in zip(shape, strides):
        if n == 0:
            return None
        if s > 0:
            hi += s * (n - 1)
        elif s < 0:
            lo += s * (n - 1)
    return lo, hi + width - 1


def flat_stride(shape: Sequence[int], strides: Sequence[int]) -> int | None:
    """The single stride of ``view(-1)`` if the elements form one evenly strided run, else None.

    >>> flat_stride((2, 3), (6, 2)), flat_stride((3, 4), (1, 3))
    (2, None)
    """
    dims = [(n, s) for n, s in zip(shape, strides) if n != 1]
    if not dims:
        return 1
    step = dims[-1][1]
    expected = step
    for n, s in reversed(dims):
        if s != expected:
            return None
        expected *= n
    return step


def view_strides(
    shape: Sequence[int], strides: Sequence[int], new_shape: Sequence[int]
) -> tuple[int, ...] | None:
    """The strides of ``x.view(new_shape)`` for ``x`` of ``shape`` and ``strides``; ``None`` when
    no view can have that shape (``reshape`` then copies).  ``new_shape`` may hold one ``-1``.
    The rule of torch's ``computeStride``: each run of dims that is contiguous in memory may be
    split or merged, never crossed.

    >>> view_strides((3, 4), (4, 1), (12,)), view_strides((3, 4), (1, 3), (12,))
    ((1,), None)
    >>> view_strides((2, 3, 4), (12, 4, 1), (2, -1, 2))
    (12, 2, 1)
    """
    shape, strides, new = tuple(shape), tuple(strides), list(new_shape)
    numel = math.prod(shape)
    if -1 in new:
        known = math.prod(n for n in new if n != -1)
        new[new.index(-1)] = numel // known if known else 0
    if math.prod(new) != numel:
        return None
    if numel == 0 or not shape:
        return strides if tuple(new) == shape else contiguous_strides([max(n, 1) for n in new])
    result = [0] * len(new)
    view_d = len(new) - 1
    base, tensor_numel, view_numel = strides[-1], 1, 1
    for d in range(len(shape) - 1, -1, -1):
        tensor_numel *= shape[d]
        if d == 0 or (shape[d - 1] != 1 and strides[d - 1] != tensor_numel * base):
            while view_d >= 0 and (view_numel < tensor_numel or new[view_d] == 1):
                result[view_d] = view_numel * base
                view_numel *= new[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if d > 0:
                base, tensor_numel, view_numel = strides[d - 1], 1, 1
    return tuple(result) if view_d == -1 else None


def first_out_of_bounds(
    size: Sequence[int], stride: Sequence[int], offset: int, storage_size: int
) -> tuple[int, ...] | None:
    """The first logical index, in row-major order, whose address is ``>= storage_size``.

    Strides are non-negative, so addresses grow along every dim: in the first slab along dim 0 that
    reaches past the end, look for the first sub-slab that does, and so on.  O(ndim).

    >>> first_out_of_bounds((4, 3), (3, 1), 0, 10), first_out_of_bounds((4, 3), (3, 1), 0, 12)
    ((3, 1), None)
    """
    reach = [s * (n - 1) for n, s in zip(size, stride)]
    if offset + sum(reach) < storage_size:
        return None
    index = []
    position = offset
    for d, (n, s) in enumerate(zip(size, stride)):
        rest = sum(reach[d + 1 :])
        if s == 0:
            i = 0
        else:
            need = storage_size - position - rest  # smallest i with position + s*i + rest >= end
            i = max(0, -(-need // s))
        index.append(min(i, n - 1))
        position += s * index[-1]
    return tuple(index)


def check_view(
    size: Sequence[int], stride: Sequence[int], storage_offset: int, storage_size: int
) -> str | None:
    """The first problem ``sw.as_strided`` refuses a view for, as its message; ``None`` if valid.

    Checked in this order: ``size`` and ``stride`` of different lengths, a negative size, a
    negative stride, a negative offset, more than ``2**63 - 1`` elements, and the first index
    whose element lies past the storage's ``storage_size`` elements.  Its JS twin is
    ``checkView(size, stride, storageOffset, storageSize)`` in ``js/core/strides.js``.

    >>> check_view((4, 3), (2, 1), 0, 10) is None
    True
    >>> print(check_view((4,), (3,), 1, 10))  # doctest: +NORMALIZE_WHITESPACE
    as_strided: index (3,) maps to storage element 10, but the storage has only 10 elements
    (valid: 0..9); size (4,), stride (3,), storage_offset 1
    """
    size, stride, offset = tuple(size), tuple(stride), storage_offset
    if len(size) != len(stride):
        return f"as_strided: size {size} has {len(size)} dims but stride {stride} has {len(stride)}"
    if any(n < 0 for n in size):
        return f"as_strided: size {size} has a negative entry"
    if any(s < 0 for s in stride):
        return (
            f"as_strided: stride {stride} has a negative entry; torch views cannot step backwards "
            "(use `torch.flip`, which copies)"
        )
    if offset < 0:
        return f"as_strided: storage_offset {offset} is negative"
    numel = math.prod(size)
    if numel > INT64_MAX:
        return (
            f"as_strided: size {size} has {numel} elements, more than torch's limit of 2**63 - 1 "
            "(its element count is a 64-bit int); use fewer or smaller dimensions"
        )
    if numel > 0:
        bad = first_out_of_bounds(size, stride, offset, storage_size)
        if bad is not None:
            where = offset + sum(i * s for i, s in zip(bad, stride))
            return (
                f"as_strided: index {bad} maps to storage element {where}, but the storage has only "
                f"{storage_size} elements (valid: 0..{storage_size - 1}); "
                f"size {size}, stride {stride}, storage_offset {offset}"
            )
    return None
