"""NumPy's private bounded linear Diophantine solver (the exact memory-overlap test of
``np.shares_memory``), where this NumPy build has it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["diophantine_solver"]


def diophantine_solver() -> Callable[..., Any] | None:
    """NumPy's ``solve_diophantine(A, U, b, max_work=..., simplify=..., require_ub_nontrivial=...)``:
    ``numpy._core._multiarray_tests`` on NumPy 2 (checked on NumPy 2.4), ``numpy.core``'s on
    NumPy 1.x (1.24, the floor); ``None`` where the build lacks the test module, and the overlap
    search then runs on its own solvers only (the same answers, slower on hard problems).

    >>> solve = diophantine_solver()
    >>> solve((2, 3), (4, 4), 7)  # 2*x0 + 3*x1 == 7 with 0 <= x <= 4
    (2, 1)
    """
    try:
        from numpy._core._multiarray_tests import solve_diophantine
    except ImportError:  # pragma: no cover - NumPy 1.x keeps it in numpy.core
        try:
            from numpy.core._multiarray_tests import solve_diophantine
        except ImportError:  # depends on the NumPy build
            return None
    return solve_diophantine
