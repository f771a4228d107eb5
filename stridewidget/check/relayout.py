"""The layouts the fuzzer tries: the same values as a tensor, in fresh storage laid out otherwise.

Each :class:`Relayout` builds a NEW tensor (never a view of the caller's) holding ``t``'s values:
transposed-contiguous (F order), other dim orders, gapped slices of a bigger storage, a storage
offset, channels-last(-3d) where the rank fits, stride-0 and odd strides on dims of size 1.  The
layouts a function is most likely to get wrong come first; seeded random mixes follow.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NamedTuple

import torch

from ..limits import FUZZ_RANDOM_TRIES as _RANDOM_TRIES

__all__ = ["Relayout", "not_relaid", "relayouts"]

#: A stride no real layout gives a size-1 dim: a kernel that multiplies by it reads garbage.
_ODD_STRIDE = 7919


def not_relaid(t: torch.Tensor) -> str | None:
    """Why ``t`` cannot be laid out otherwise (``None`` when it can): a nested, sparse or
    quantized tensor has no strided storage to rebuild, and a wrapper subclass (its own
    ``__torch_dispatch__``) keeps its data in tensors of its own.

    >>> not_relaid(torch.ones(2, 3)) is None, not_relaid(torch.ones(2, 3).to_sparse())
    (True, 'torch.sparse_coo: no strides to vary')
    """
    if t.is_nested:
        return "a nested tensor: its components have no single layout to vary"
    if t.layout != torch.strided:
        return f"{t.layout}: no strides to vary"
    if t.is_quantized:
        return "quantized: torch cannot rebuild it in another storage"
    kind = type(t)
    if kind is not torch.nn.Parameter and kind.__torch_dispatch__ is not _PLAIN_DISPATCH:
        return f"a {kind.__name__}, a wrapper subclass (its own __torch_dispatch__)"
    return None


_PLAIN_DISPATCH = torch.Tensor.__torch_dispatch__


class Relayout(NamedTuple):
    name: str
    make: Callable[[torch.Tensor], torch.Tensor]


def _laid_out(
    t: torch.Tensor, order: Sequence[int], step: int = 1, pad: int = 0, offset: int = 0
) -> torch.Tensor:
    """A fresh copy of ``t`` whose dims are laid out outermost-first in ``order``, the innermost
    one every ``step`` elements, each outer row ``pad`` elements longer than it needs, the first
    element ``offset`` elements into the storage."""
    strides = [0] * t.dim()
    extent = step
    for d in reversed(order):
        strides[d] = extent
        extent = extent * t.shape[d] + pad
    size = offset + 1 + sum(max(n - 1, 0) * s for n, s in zip(t.shape, strides))
    return _copy_into(_filler(size, t).as_strided(t.shape, strides, offset), t)


def _filler(size: int, t: torch.Tensor) -> torch.Tensor:
    """A buffer whose cells outside the copy hold a value no real data has (NaN, the largest
    int, True): a function reading them gets a loud wrong answer, the same one every run."""
    if t.dtype.is_floating_point or t.dtype.is_complex:
        value: Any = float("nan")
    elif t.dtype == torch.bool:
        value = True
    else:
        value = torch.iinfo(t.dtype).max
    return torch.full((size,), value, dtype=t.dtype, device=t.device)


def _copy_into(view: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        view.copy_(t)
    return view


def _size_one_strides(t: torch.Tensor, stride: int) -> torch.Tensor:
    strides = [stride if n == 1 else s for n, s in zip(t.shape, _contiguous_strides(t.shape))]
    return _copy_into(_filler(max(t.numel(), 1), t).as_strided(t.shape, strides), t)


def _fixed(t: torch.Tensor) -> Iterator[Relayout]:
    """The layouts every tensor gets first, those its rank allows."""
    ndim = t.dim()
    natural = list(range(ndim))
    if ndim >= 2:
        yield Relayout("F-contiguous", lambda x: _laid_out(x, natural[::-1]))
    if ndim >= 1:
        yield Relayout("gapped slice", lambda x: _laid_out(x, natural, step=2, pad=1))
    yield Relayout("storage offset", lambda x: _laid_out(x, natural, offset=3))
    if ndim == 4:
        yield Relayout("channels-last", lambda x: _laid_out(x, [0, 2, 3, 1]))
    if ndim == 5:
        yield Relayout("channels-last-3d", lambda x: _laid_out(x, [0, 2, 3, 4, 1]))
    if 1 in t.shape:
        yield Relayout("stride 0 on size-1 dims", lambda x: _size_one_strides(x, 0))
        yield Relayout("odd strides on size-1 dims", lambda x: _size_one_strides(x, _ODD_STRIDE))
    if ndim >= 3:
        swapped = [*range(ndim - 2), ndim - 1, ndim - 2]
        yield Relayout("last two dims swapped", lambda x: _laid_out(x, swapped))


def _random(t: torch.Tensor, rng: random.Random) -> Iterator[Relayout]:
    """Seeded mixes of a dim order, a step, a padding and an offset."""
    while True:
        order = list(range(t.dim()))
        rng.shuffle(order)
        step, pad, offset = rng.randint(1, 3), rng.randint(0, 2), rng.randint(0, 5)

        def make(x: torch.Tensor, order=order, step=step, pad=pad, offset=offset) -> torch.Tensor:
            return _laid_out(x, order, step, pad, offset)

        yield Relayout(f"dims {order}, step {step}, pad {pad}, offset {offset}", make)


def relayouts(t: torch.Tensor, rng: random.Random) -> Iterator[tuple[str, torch.Tensor]]:
    """``(name, fresh tensor)`` for each layout to try for ``t``: the fixed ones first, then at
    most :data:`_RANDOM_TRIES` random mixes; a layout equal to plain contiguous storage, or to
    one already given, is skipped.

    >>> import random
    >>> t = torch.arange(6.0).reshape(2, 3)
    >>> [(name, x.stride(), torch.equal(x, t)) for name, x in itertools.islice(relayouts(t, random.Random(0)), 3)]
    [('F-contiguous', (1, 2), True), ('gapped slice', (7, 2), True), ('storage offset', (3, 1), True)]
    """
    seen = {(tuple(t.shape), _contiguous_strides(t.shape), 0, t.numel())}
    for relayout in itertools.chain(_fixed(t), itertools.islice(_random(t, rng), _RANDOM_TRIES)):
        made = relayout.make(t)
        key = (tuple(made.shape), made.stride(), made.storage_offset(), _storage_size(made))
        if key not in seen:
            seen.add(key)
            yield relayout.name, made


def _contiguous_strides(shape: Sequence[int]) -> tuple[int, ...]:
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def _storage_size(t: torch.Tensor) -> int:
    return t.untyped_storage().nbytes() // t.element_size()
