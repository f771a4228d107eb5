"""Work budgets of the overlap solver, and the answer a budgeted question gets when it runs out.

Problem.  The exact API (``max_work=None``) answers however long it takes; a display must not
hang, so it passes a step count (``max_work``) and a deadline (``max_seconds``) and shows "not
decided" when either runs out.  Inside the portfolio each member also has a share of steps per
turn, after which another member gets a turn.

Method.  One :class:`_Budget` object travels through every member of the portfolio: each search
step spends one unit (NumPy's solver is charged a hundredth of a unit per step of its own,
:mod:`.portfolio`).  Running out raises :class:`Undecided`; a member's turn running out raises
:class:`_StepLimit`, which never leaves the portfolio.

Cost.  O(1) per step; the clock is read once per step only when a deadline was given.

Failure modes.  None: the deadline is a safety net for slow machines, and the tests rely on the
step count alone, which is the same on every machine.

References.
1. NumPy, ``numpy/_core/src/common/mem_overlap.c`` (Pauli Virtanen, 2015): the same idea of a
   ``max_work`` cap, and of a third answer ("too hard") besides yes and no.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator

__all__ = ["Undecided"]


class Undecided(Exception):
    """A budgeted question ran out of work before its answer was known (``max_work`` calls only)."""


class _Budget:
    """Search steps left and a deadline; ``None`` means unlimited (the exact API)."""

    def __init__(self, max_work: int | None, max_seconds: float | None = None) -> None:
        self.left = max_work
        self.deadline = None if max_seconds is None else time.perf_counter() + max_seconds

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """The deadline does not run inside this block (a one-time setup such as an import)."""
        start = time.perf_counter()
        try:
            yield
        finally:
            if self.deadline is not None:
                self.deadline += time.perf_counter() - start

    def spend(self, steps: int) -> None:
        if self.left is not None:
            self.left -= steps
            if self.left < 0:
                raise Undecided
        # the clock is a safety net for slow machines; tests rely on the step count alone
        if self.deadline is not None and time.perf_counter() > self.deadline:
            raise Undecided


class _StepLimit(Exception):
    """One search order of the portfolio used up its share; another order gets a turn."""
