"""Exact layout facts of live tensors that the sanitizer needs, each with its proof (a witness).

Every question is answered twice: first by a cheap test that settles the common case (a contiguous
tensor cannot overlap itself; byte ranges that do not meet cannot share a byte), and only when that
cannot decide, by the exact solver of :mod:`stridewidget.layout.overlap`.  Metadata only: no values read.
"""

from __future__ import annotations

from typing import NamedTuple

import torch

from ..layout.overlap import internal_overlap_witness, ranges_overlap_witness
from ..layout.strides import first_out_of_bounds
from ..limits import WITNESS_SPLIT_LIMIT as _SPLIT_LIMIT

__all__ = [
    "Witness",
    "byte_span",
    "internal_witness",
    "other_index_witness",
    "out_of_bounds_witness",
    "overlap_witness",
    "same_view",
    "unwrapped",
]


class Witness(NamedTuple):
    """Two indices that reach one storage element, and that element.

    ``first`` indexes the written tensor; ``second`` indexes it too (internal overlap) or the other
    tensor (partial overlap); ``address`` is the storage element both reach, counted in the written
    tensor's elements from the storage's start, as ``storage_offset()`` is.  For an out-of-bounds
    view ``first == second``: an index whose element lies past the end of the storage.

    >>> import torch
    >>> t = torch.arange(10.0).as_strided((4, 3), (2, 1))
    >>> w = internal_witness(t)
    >>> w, t.storage_offset() + sum(i * s for i, s in zip(w.first, t.stride()))
    (Witness(first=(0, 2), second=(1, 0), address=2), 2)
    """

    first: tuple[int, ...]
    second: tuple[int, ...]
    address: int


_DEFAULT_DISPATCH = torch.Tensor.__torch_dispatch__
#: Per type: is it a Tensor subclass whose geometry is its own (no ``__torch_dispatch__``)?
_OWN_GEOMETRY: dict[type, bool] = {}


def unwrapped(value: object) -> torch.Tensor | None:
    """``value`` as a plain ``torch.Tensor`` over the same memory, with the same sizes, strides
    and offset, or ``None``.  A subclass without a ``__torch_dispatch__`` of its own
    (``as_subclass``) is its own geometry: an alias, made without its ``__torch_function__``; a
    ``Parameter`` (torch's own ``__torch_function__``) is used as it is.  A wrapper subclass (its
    own ``__torch_dispatch__``: DTensor, traceable wrappers) is not checked: ``None``.

    >>> class Mine(torch.Tensor): pass
    >>> t = torch.arange(6.0).as_subclass(Mine)[::2]
    >>> p = unwrapped(t)
    >>> type(p).__name__, p.stride(), p.data_ptr() == t.data_ptr()
    ('Tensor', (2,), True)
    """
    kind = type(value)
    if kind is torch.Tensor or kind is torch.nn.Parameter:  # no alias per optimizer parameter
        return value  # type: ignore[return-value]
    own = _OWN_GEOMETRY.get(kind)
    if own is None:
        own = _OWN_GEOMETRY[kind] = (
            issubclass(kind, torch.Tensor)
            and getattr(kind, "__torch_dispatch__", None) is _DEFAULT_DISPATCH
        )
    if not own:
        return None
    try:
        return value.as_subclass(torch.Tensor)  # type: ignore[attr-defined]
    except (RuntimeError, TypeError):  # no alias to make (an opaque tensor): not checked
        return None


def _address(t: torch.Tensor, index: tuple[int, ...]) -> int:
    return t.storage_offset() + sum(i * s for i, s in zip(index, t.stride()))


def internal_witness(t: torch.Tensor) -> Witness | None:
    """Two different indices of ``t`` whose elements are one storage element, or ``None``.

    >>> internal_witness(torch.zeros(3).expand(2, 3))
    Witness(first=(0, 0), second=(1, 0), address=0)
    >>> internal_witness(torch.zeros(4, 4)[:, ::2]) is None
    True
    """
    if t.is_contiguous() or t.numel() <= 1:
        return None
    pair = internal_overlap_witness(tuple(t.shape), t.stride())
    if pair is None:
        return None
    return Witness(pair[0], pair[1], _address(t, pair[0]))


def byte_span(t: torch.Tensor) -> tuple[int, int]:
    """The first byte of ``t``'s first element and one past its last element's last byte."""
    itemsize = t.element_size()
    start = t.storage_offset() * itemsize
    reach = sum((n - 1) * s for n, s in zip(t.shape, t.stride())) * itemsize
    return start, start + reach + itemsize


def overlap_witness(written: torch.Tensor, other: torch.Tensor) -> Witness | None:
    """An index of ``written`` and one of ``other`` whose elements share a byte, or ``None``.

    The two may live in two storage objects over one memory (``torch.from_numpy`` of two views
    of one array): their bytes are placed by address.  ``address`` is in ``written``'s elements
    from its storage's start.

    >>> x = torch.arange(10.0)
    >>> overlap_witness(x.as_strided((5,), (2,), 1), x[:5])
    Witness(first=(1,), second=(3,), address=3)
    >>> overlap_witness(x[::2], x[1::2]) is None    # interleaved: byte ranges meet, bytes don't
    True
    """
    if written.numel() == 0 or other.numel() == 0:
        return None
    shift = _base(other) - _base(written)  # other's storage start, in written's byte offsets
    start_w, end_w = byte_span(written)
    start_o, end_o = (b + shift for b in byte_span(other))
    if end_w <= start_o or end_o <= start_w:
        return None
    size_w, size_o = written.element_size(), other.element_size()
    found = ranges_overlap_witness(
        tuple(written.shape), [s * size_w for s in written.stride()], start_w, size_w,
        tuple(other.shape), [s * size_o for s in other.stride()], start_o, size_o,
    )  # fmt: skip
    if found is None:
        return None
    return Witness(found[0], found[1], found[2] // size_w)


def _base(t: torch.Tensor) -> int:
    """Where ``t``'s storage starts in memory (meta tensors: 0, compared within one storage)."""
    return 0 if t.device.type == "meta" else t.untyped_storage().data_ptr()


def same_view(written: torch.Tensor, other: torch.Tensor) -> bool:
    """Does an elementwise op read, at each index of ``written``, exactly the element it writes?
    ``other`` broadcast to ``written``'s shape must be the same elements of the same storage.

    >>> x = torch.zeros(3, 4)
    >>> same_view(x, x.view(3, 4)), same_view(x, x.t()), same_view(x, x[0])
    (True, False, False)
    """
    if other.element_size() != written.element_size() or other.dim() > written.dim():
        return False
    size = written.element_size()
    if (
        _base(other) + other.storage_offset() * size
        != _base(written) + written.storage_offset() * size
    ):
        return False
    lead = written.dim() - other.dim()
    for n, s, m, r in zip(
        written.shape[lead:], written.stride()[lead:], other.shape, other.stride()
    ):
        if n > 1 and (m != n or r != s):
            return False
    return all(n == 1 for n in written.shape[:lead])


def out_of_bounds_witness(t: torch.Tensor, nbytes: int) -> Witness | None:
    """An index of ``t`` whose element reaches past a storage of ``nbytes`` bytes, or ``None``.

    >>> base = torch.arange(10.0)
    >>> view = base[4:]
    >>> _ = base.untyped_storage().resize_(6 * base.element_size())
    >>> out_of_bounds_witness(view, view.untyped_storage().nbytes())
    Witness(first=(2,), second=(2,), address=6)
    """
    if t.numel() == 0 or byte_span(t)[1] <= nbytes:
        return None
    storage_size = nbytes // t.element_size()
    index = first_out_of_bounds(tuple(t.shape), t.stride(), t.storage_offset(), storage_size)
    if index is None:  # the last element is only partly inside: the highest index reaches out
        index = tuple(n - 1 for n in t.shape)
    return Witness(index, index, _address(t, index))


def other_index_witness(
    written: torch.Tensor, other: torch.Tensor, spread: bool = True
) -> Witness | None:
    """For an elementwise op: an index of ``written`` and a DIFFERENT index of ``other``
    (broadcast to ``written``'s shape) sharing a byte, or ``None``.  Memory shared only at the
    same index (``b[0:6:2]`` and ``b[0:9:3]`` share element 0, index 0 of both) is read before
    it is written: order cannot matter.  After broadcasting, an element of ``other`` is read at
    every index along a broadcast dim (stride 0, ``written``'s size > 1): where ``written``
    shares it at all, another index reads it (``m.div_(m[:, :1])``).  ``spread=False``: an op
    that writes each element with the bits it reads (a ``copy_``) leaves such an element as it
    was, and only indices apart along the other dims count.  Exact: the index boxes are split along each dim into
    blocks whose two ranges are disjoint, each decided by the solver (pruned where nothing
    meets); past ``_SPLIT_LIMIT`` blocks it answers with any overlap (conservative).

    >>> b = torch.arange(10.0)
    >>> other_index_witness(b[0:6:2], b[0:9:3]) is None
    True
    >>> other_index_witness(b[1:4], b[0:3])
    Witness(first=(1,), second=(2,), address=2)
    >>> m = torch.zeros(3, 4)
    >>> other_index_witness(m, m[:, :1])   # m[2, 0] is written at (2, 0), read at (2, 1) too
    Witness(first=(2, 0), second=(2, 0), address=8)
    """
    if written.element_size() != other.element_size():
        return overlap_witness(written, other)
    try:
        wide = other.expand(written.shape)
    except RuntimeError:  # not broadcastable: torch refuses the call itself
        return overlap_witness(written, other)
    found = overlap_witness(written, wide)
    if found is None:
        return None
    dims = [d for d in range(written.dim()) if wide.stride(d) != 0 and written.shape[d] > 1]
    if any(found.first[d] != found.second[d] for d in dims):
        return _own_index(found, other, written.dim())
    broadcast = [d for d in range(written.dim()) if wide.stride(d) == 0 and written.shape[d] > 1]
    if (
        spread and broadcast
    ):  # a broadcast dim: the element read at ``second`` is read at every index along it
        d = broadcast[0]
        second = list(found.second)
        second[d] = (found.first[d] + 1) % written.shape[d]
        return _own_index(Witness(found.first, tuple(second), found.address), other, written.dim())
    budget = [_SPLIT_LIMIT]
    for d in dims:
        found = _off_diagonal(written, wide, d, 0, written.shape[d], budget)
        if found is not None:
            return _own_index(found, other, written.dim())
        if budget[0] <= 0:
            return _own_index(overlap_witness(written, wide), other, written.dim())
    return None


def _off_diagonal(
    written: torch.Tensor, wide: torch.Tensor, d: int, lo: int, hi: int, budget: list[int]
) -> Witness | None:
    """A witness with index ``i`` of ``written`` and ``j`` of ``wide``, both in ``[lo, hi)`` on
    dim ``d`` and ``i[d] != j[d]``: the square split in halves, its two off-diagonal blocks
    solved, its two diagonal ones split again where anything meets."""
    if hi - lo < 2 or budget[0] <= 0:
        return None
    mid = (lo + hi) // 2
    for (a, b), (c, e) in (((lo, mid), (mid, hi)), ((mid, hi), (lo, mid))):
        budget[0] -= 1
        found = overlap_witness(written.narrow(d, a, b - a), wide.narrow(d, c, e - c))
        if found is not None:
            first = (*found.first[:d], found.first[d] + a, *found.first[d + 1 :])
            second = (*found.second[:d], found.second[d] + c, *found.second[d + 1 :])
            return Witness(first, second, found.address)
    for a, b in ((lo, mid), (mid, hi)):
        if overlap_witness(written.narrow(d, a, b - a), wide.narrow(d, a, b - a)) is not None:
            found = _off_diagonal(written, wide, d, a, b, budget)
            if found is not None:
                return found
    return None


def _own_index(found: Witness | None, other: torch.Tensor, rank: int) -> Witness | None:
    """``found`` with its second index in ``other``'s own dims (broadcast dims dropped or 0)."""
    if found is None:
        return None
    lead = rank - other.dim()
    second = tuple(0 if n == 1 else i for n, i in zip(other.shape, found.second[lead:]))
    return Witness(found.first, second, found.address)
