"""Which torch work the copy trackers record: not their own, not this package's.

* ``Depth.in_dispatch`` (per thread): the trackers' dispatch handlers running (> 0 while any
  runs).  Calls a handler makes (the op itself, metadata reads) are the tracker's own, not the
  user's, for every tracker in the stack.
* :func:`unseen`: the package's own torch work inside a user's ``track_copies()`` block stays out
  of the user's log.  ``sw.audit`` keeps and gives back the model's state, runs its step and
  builds its report; a picture reads the values it draws (``build_scene``); ``log.show`` makes
  views of storages it recorded; ``sw.fuzz_layouts``, ``sw.graph`` and ``sw.playground`` make
  their own tensors and run their own ops.  Every tracking block open on this thread when it starts
  (:func:`opened`) is hushed for its length: its modes pass each call and op through, on every
  thread torch runs them on (an autograd device thread, a TorchScript fork: torch hands them the
  same mode objects); a tracker opened inside (the audit's own) records as usual.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["THREAD", "Depth", "Hushed", "opened", "unseen"]


class Hushed:
    """The interception modes of one tracking block, as :func:`unseen` hushes them: each
    mode's ``quiet`` count (its handlers pass every call and op through while it is > 0), and
    what to run when they record again (``woken``)."""

    __slots__ = ("modes", "woken")

    def __init__(self, modes: tuple[Any, ...], woken: tuple[Callable[[], Any], ...]) -> None:
        self.modes, self.woken = modes, woken

    def hush(self) -> None:
        for mode in self.modes:
            mode.quiet += 1

    def wake(self) -> None:
        for mode in self.modes:
            mode.quiet -= 1
        for woken in self.woken:
            woken()


class Depth:
    """One thread's state.  A plain object: the handlers read and write it per op, at a fifth
    of the cost of a ``threading.local``'s attribute."""

    __slots__ = ("in_dispatch", "open")

    def __init__(self) -> None:
        self.in_dispatch = 0
        self.open: list[Hushed] = []  # the tracking blocks open on this thread, oldest first


class _ThreadState(threading.local):
    def __init__(self) -> None:
        self.depth = Depth()  # this thread's own (an autograd device thread has its own)


THREAD = _ThreadState()


@contextmanager
def opened(block: Hushed) -> Iterator[None]:
    """``block`` is open on this thread for the ``with`` block (an :func:`unseen` in it hushes
    it)."""
    blocks = THREAD.depth.open
    blocks.append(block)
    try:
        yield
    finally:
        for k in range(len(blocks) - 1, -1, -1):
            if blocks[k] is block:
                del blocks[k]
                break


@contextmanager
def unseen() -> Iterator[None]:
    """The block's torch calls and ATen ops are recorded by no tracker open on this thread now;
    a tracker opened inside the block records as usual.

    >>> import torch, stridewidget as sw
    >>> x = torch.arange(6.0).reshape(2, 3)
    >>> with sw.track_copies() as log:
    ...     with unseen():
    ...         hidden = x.t().contiguous()
    ...         with sw.track_copies() as inner:
    ...             y = x.t().contiguous()
    ...     z = x.flip(0)
    >>> [e.call for e in inner.events], [e.call for e in log.events]
    (['torch.Tensor.t', 'torch.Tensor.contiguous'], ['torch.Tensor.flip'])
    """
    hushed = list(THREAD.depth.open)
    for block in hushed:
        block.hush()
    try:
        yield
    finally:
        for block in reversed(hushed):
            block.wake()
