"""The values :func:`~.guard.state_kept` saves before an audited step and compares after it,
bit for bit: the two costs of the state the audit keeps (a ResNet18's 47 MB each step).

* **Saving** — the contiguous CPU tensors of 64 KiB and more are copied into one buffer, which
  on Linux (transparent huge pages not ``never``) is first advised to be backed by huge pages: a
  fresh copy is new memory from the OS, and the page faults of its first write cost more than
  the copy itself (47 MB, one thread: ~21 ms as 122 clones, ~14 ms into one advised buffer).
  When the step is over the buffer is given back (:func:`released`) and kept for the next audit
  (at most :data:`SPARE_BYTES` in all): its pages are faulted in already, so the next save is a
  copy only (ResNet18's 47 MB: ~9 ms into a fresh buffer, ~5 ms into a kept one).  Any other
  tensor is cloned, strides kept.
* **Comparing** — two such tensors are compared with the C library's ``memcmp`` (bytes equal is
  bits equal: NaN as NaN, -0.0 apart from 0.0), about twice as fast as ``torch.equal`` on their
  elements as integers (47 MB: ~7 ms against ~16 ms), which is kept for any other tensor and
  where there is no C library to call.

Both are exact: nothing is sampled, hashed or skipped.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys
import threading
from typing import Any

import torch

__all__ = ["SPARE_BYTES", "released", "same_bits", "saved_values"]

#: Below this many bytes a tensor is cloned and compared with ``torch.equal``: for a small one the
#: buffer's views and the C call cost more than they save (a 2-layer toy BERT's 41 tensors:
#: ~66 us cloned, ~280 us into the buffer).
_BIG = 1 << 16
#: Each saved tensor starts this many bytes into the buffer (any dtype can view it there).
_ALIGN = 64
#: Linux's huge page size and ``MADV_HUGEPAGE``.
_HUGE = 2 << 20
_MADV_HUGEPAGE = 14


def _libc() -> Any:
    """The C library, with ``memcmp`` and (on Linux) ``madvise`` typed; ``None`` without one."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None)
        libc.memcmp.restype = ctypes.c_int
        libc.memcmp.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]
        if sys.platform.startswith("linux"):
            libc.madvise.restype = ctypes.c_int
            libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    except (OSError, AttributeError, TypeError):  # no C library by that name (Windows: None)
        return None
    return libc


_LIBC = _libc()


def _huge_pages() -> bool:
    """Can a buffer be advised onto huge pages (Linux, transparent huge pages not ``never``)?
    Without them one fresh buffer faults in as many pages as the clones, and costs as much."""
    if _LIBC is None or not sys.platform.startswith("linux"):
        return False
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled", encoding="ascii") as file:
            return "[never]" not in file.read()
    except OSError:
        return False


_HUGE_PAGES = _huge_pages()

#: The most bytes of saved-value buffers kept between audits for the next one to reuse (their
#: pages already faulted in); a buffer larger than this is freed when its step is over.
SPARE_BYTES = 512 << 20
#: Buffers given back and not taken again, and the lock around taking and giving them.
_SPARE: list[torch.Tensor] = []
_SPARE_LOCK = threading.Lock()


class _Values(list):
    """:func:`saved_values`' list, with the buffer its large values are views of (or ``None``)."""

    buffer: torch.Tensor | None = None


def _flat(tensor: torch.Tensor) -> bool:
    """Is ``tensor`` a plain contiguous CPU tensor of at least ``_BIG`` bytes, whose elements are
    its ``nbytes`` bytes from ``data_ptr()`` (not a subclass, sparse, quantized, meta or
    conjugate/negative view)?"""
    return (
        type(tensor) in (torch.Tensor, torch.nn.Parameter)
        and tensor.device.type == "cpu"
        and tensor.layout == torch.strided
        and tensor.nbytes >= _BIG
        and not tensor.is_quantized
        and not tensor.is_conj()
        and not tensor.is_neg()
        and tensor.is_contiguous()
    )


def saved_values(tensors: list[torch.Tensor]) -> list[torch.Tensor]:
    """A copy of each of ``tensors``' values (detached, same shape and dtype): the large flat CPU
    ones in one huge-page-advised buffer where there are huge pages (one an earlier step gave back
    where one is large enough), the others (and all, without them) cloned with their strides.
    Once nothing reads them any more, :func:`released` gives the buffer back for reuse."""
    offsets, total = [], 0
    for tensor in tensors:
        if _flat(tensor):
            offsets.append(total)
            total += -(-tensor.nbytes // _ALIGN) * _ALIGN
        else:
            offsets.append(None)
    buffer = _taken(total) if total and _HUGE_PAGES else None
    values = _Values()
    values.buffer = buffer
    with torch.no_grad():
        for tensor, offset in zip(tensors, offsets):
            if offset is None or buffer is None:
                values.append(tensor.detach().clone())
                continue
            size = tensor.nbytes
            value = buffer[offset : offset + size].view(tensor.dtype).view(tensor.shape)
            value.copy_(tensor.detach())
            values.append(value)
    return values


def released(values: list[torch.Tensor]) -> None:
    """Give back the buffer of ``values`` (from :func:`saved_values`), which no one may read
    afterwards: the next :func:`saved_values` may write another step's values into it.  Kept
    while the buffers kept come to at most :data:`SPARE_BYTES`, the largest first."""
    buffer = getattr(values, "buffer", None)
    if buffer is None:
        return
    values.buffer = None  # type: ignore[attr-defined]
    values.clear()
    with _SPARE_LOCK:
        kept, total = [], 0
        for spare in sorted([*_SPARE, buffer], key=lambda spare: -spare.nbytes):
            if total + spare.nbytes <= SPARE_BYTES and len(kept) < 2:  # parameters', inputs'
                kept.append(spare)
                total += spare.nbytes
        _SPARE[:] = kept


def _taken(size: int) -> torch.Tensor:
    """A buffer of at least ``size`` bytes: the smallest one given back that is large enough,
    else a new one (:func:`_buffer`)."""
    with _SPARE_LOCK:
        fitting = [i for i, spare in enumerate(_SPARE) if spare.nbytes >= size]
        if fitting:
            return _SPARE.pop(min(fitting, key=lambda i: _SPARE[i].nbytes))
    return _buffer(size)


def _buffer(size: int) -> torch.Tensor:
    """``size`` uninitialised bytes on the CPU, advised to be backed by huge pages before their
    first write (the advice is only advice: a kernel may not follow it)."""
    if size < _HUGE:
        return torch.empty(size, dtype=torch.uint8)
    raw = torch.empty(size + _HUGE, dtype=torch.uint8)
    start = raw.data_ptr()
    aligned = -(-start // _HUGE) * _HUGE
    _LIBC.madvise(aligned, size // _HUGE * _HUGE, _MADV_HUGEPAGE)
    return raw[aligned - start : aligned - start + size]


#: The integer type a tensor's elements are compared as, by element size, where ``memcmp`` is
#: not used: integer equality is equality of bits.  A 16-byte element (complex128) is two words.
_WORDS = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64, 16: torch.int64}


def same_bits(tensor: torch.Tensor, values: torch.Tensor) -> bool:
    """Do ``tensor`` and ``values`` (same shape and dtype) hold the same bits?  NaN as NaN,
    -0.0 apart from 0.0.  A meta tensor has no bits: the same shape and dtype are the same.

    >>> a = torch.tensor([0.0, float("nan")])
    >>> same_bits(a, a.clone()), same_bits(a, torch.tensor([-0.0, float("nan")]))
    (True, False)
    """
    if tensor.device.type == "meta":
        return True
    if _LIBC is not None and _flat(tensor) and _flat(values):
        size = tensor.nbytes
        if size != values.nbytes:
            return False
        return size == 0 or _LIBC.memcmp(tensor.data_ptr(), values.data_ptr(), size) == 0
    if tensor.is_quantized:  # (torch 2.13 crashes viewing one as integers)
        return bool(torch.equal(tensor, values))
    words = _WORDS.get(tensor.element_size(), torch.uint8)
    try:
        if words.itemsize == tensor.element_size():  # a view of any strides
            return bool(torch.equal(tensor.view(words), values.view(words)))
        return bool(torch.equal(tensor.reshape(-1).view(words), values.reshape(-1).view(words)))
    except RuntimeError:  # a view that cannot be reinterpreted
        return bool(torch.equal(tensor, values))
