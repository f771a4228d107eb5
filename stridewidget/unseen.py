"""Which torch work on this thread the copy trackers record.

Two counts per thread, read by the trackers' handlers on every call and op:

* ``in_dispatch``: the trackers' dispatch handlers running (> 0 while any runs).  Calls a handler
  makes (the op itself, metadata reads) are the tracker's own, not the user's, for every tracker
  in the stack.
* ``unseen``: the trackers opened at or below this nesting level record nothing
  (:func:`unseen`): the package's own torch work inside a user's ``track_copies()`` block stays
  out of the user's log.  ``sw.audit`` keeps and gives back the model's state, runs its step and
  builds its report; a picture reads the values it draws (``build_scene``) and ``log.show`` makes
  views of storages it recorded.  A tracker opened inside (the audit's own) records as usual.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["THREAD", "Depth", "opened", "unseen"]


class Depth:
    """One thread's counts (see the module docstring).  A plain object: the handlers read and
    write it per op, at a fifth of the cost of a ``threading.local``'s attribute."""

    __slots__ = ("in_dispatch", "level", "unseen")

    def __init__(self) -> None:
        self.in_dispatch = 0
        self.level = 0  # tracking blocks open on this thread
        self.unseen = 0  # those at or below this level record nothing


class _ThreadState(threading.local):
    def __init__(self) -> None:
        self.depth = Depth()  # this thread's own (an autograd device thread has its own)


THREAD = _ThreadState()

#: A mode's level when no tracking block opened it: it records (no level is this high).
NEVER_UNSEEN = sys.maxsize


@contextmanager
def opened() -> Iterator[int]:
    """One more tracking block open on this thread, for the block: its level (its modes record
    while the level is above :attr:`Depth.unseen`)."""
    depth = THREAD.depth
    depth.level += 1
    try:
        yield depth.level
    finally:
        depth.level -= 1


@contextmanager
def unseen() -> Iterator[None]:
    """The block's torch calls and ATen ops are recorded by no tracker open now; a tracker
    opened inside the block records as usual.

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
    depth = THREAD.depth
    saved = depth.unseen
    depth.unseen = depth.level
    try:
        yield
    finally:
        depth.unseen = saved
