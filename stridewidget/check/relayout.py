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
from typing import NamedTuple

import torch

__all__ = ["Relayout", "relayouts"]

#: A stride no real layout gives a size-1 dim: a kernel that multiplies by it reads garbage.
_ODD_STRIDE = 7919
#: Random mixes tried at most per tensor (a small tensor has few distinct ones).
_RANDOM_TRIES = 64


class Relayout(NamedTuple):
    name: str
    make: Callable[[torch.Tensor], torch.Tensor]


def _copy_into(view: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        view.copy_(t)
    return view


def _dims_ordered(t: torch.Tensor, order: Sequence[int]) -> torch.Tensor:
    """Fresh storage whose dims are laid out outermost-first in ``order`` (a permutation)."""
    buffer = torch.empty([t.shape[d] for d in order], dtype=t.dtype, device=t.device)
    inverse = sorted(range(t.dim()), key=lambda d: order[d])
    return _copy_into(buffer.permute(inverse), t)


def _offset(t: torch.Tensor, offset: int) -> torch.Tensor:
    buffer = torch.empty(t.numel() + offset, dtype=t.dtype, device=t.device)
    return _copy_into(buffer[offset:].view(t.shape), t)


def _gapped(t: torch.Tensor, step: int, pad: int) -> torch.Tensor:
    """Every dim padded by ``pad`` cells and the last one read every ``step`` cells."""
    shape = [n + pad for n in t.shape]
    shape[-1] = t.shape[-1] * step + pad
    buffer = torch.empty(shape, dtype=t.dtype, device=t.device)
    view = buffer[tuple(slice(0, n) for n in t.shape[:-1])][..., : t.shape[-1] * step : step]
    return _copy_into(view, t)


def _size_one_strides(t: torch.Tensor, stride: int) -> torch.Tensor:
    base = torch.empty(t.shape, dtype=t.dtype, device=t.device)
    strides = [stride if n == 1 else s for n, s in zip(t.shape, base.stride())]
    return _copy_into(base.as_strided(t.shape, strides), t)


def _memory_format(t: torch.Tensor, memory_format: torch.memory_format) -> torch.Tensor:
    return _copy_into(torch.empty_like(t, memory_format=memory_format), t)


def _fixed(t: torch.Tensor) -> Iterator[Relayout]:
    """The layouts every tensor gets first, those its rank allows."""
    ndim = t.dim()
    if ndim >= 2:
        yield Relayout("F-contiguous", lambda x: _dims_ordered(x, list(range(ndim))[::-1]))
    if ndim >= 1:
        yield Relayout("gapped slice", lambda x: _gapped(x, 2, 1))
    yield Relayout("storage offset", lambda x: _offset(x, 3))
    if ndim == 4:
        yield Relayout("channels-last", lambda x: _memory_format(x, torch.channels_last))
    if ndim == 5:
        yield Relayout("channels-last-3d", lambda x: _memory_format(x, torch.channels_last_3d))
    if 1 in t.shape:
        yield Relayout("stride 0 on size-1 dims", lambda x: _size_one_strides(x, 0))
        yield Relayout("odd strides on size-1 dims", lambda x: _size_one_strides(x, _ODD_STRIDE))
    if ndim >= 3:
        yield Relayout("last two dims swapped", lambda x: _dims_ordered(x, _swap_last(ndim)))


def _swap_last(ndim: int) -> list[int]:
    return [*range(ndim - 2), ndim - 1, ndim - 2]


def _random(t: torch.Tensor, rng: random.Random) -> Iterator[Relayout]:
    """Seeded mixes: a random dim order, then a gap and an offset on a fresh copy of it."""
    while True:
        order = list(range(t.dim()))
        rng.shuffle(order)
        step, pad, offset = rng.randint(1, 3), rng.randint(0, 2), rng.randint(0, 5)

        def make(x: torch.Tensor, order=order, step=step, pad=pad, offset=offset) -> torch.Tensor:
            ordered = _dims_ordered(x, order) if x.dim() else x
            gapped = _gapped(ordered, step, pad) if x.dim() else ordered
            return _offset(gapped, offset) if offset else gapped

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
