"""Closed forms of the overlap solver: the problems that need no search.

Problem.  ``sum(c_i * x_i) == t`` with ``0 <= x_i <= u_i`` (positive ``c_i``), in the two shapes
that settle most of the questions real views ask: one or two variables (a slice against a slice),
and a *divisor chain*, where each coefficient divides the next larger one (every slice of a
contiguous tensor, plus an element width).

Method.  Two variables: extended Euclid gives every solution of ``c1*x + c2*y == t`` as one
residue class of ``x``; the bounds cut it to an interval, whose first member is the answer.  A
divisor chain: greedy from the largest coefficient, which is exact because smaller coins that add
up to at least one large coin always contain a subset worth exactly that coin.

Cost.  O(log max(c)) for two variables, O(n) for a chain of n.

Failure modes.  None: both are exact on every input they are given (the callers check that a
problem has the shape first).

References.
1. NumPy, ``numpy/_core/src/common/mem_overlap.c`` (Pauli Virtanen, 2015): the two-variable step
   by extended Euclid, the base case of its search.
"""

from __future__ import annotations

import math


def _two_variable(c1: int, u1: int, c2: int, u2: int, target: int) -> tuple[int, int] | None:
    """Solve ``c1*x + c2*y == target`` with ``0 <= x <= u1``, ``0 <= y <= u2`` in O(log) time."""
    g = math.gcd(c1, c2)
    if target % g:
        return None
    a, b, t = c1 // g, c2 // g, target // g
    # x must be congruent to t * a^-1 modulo b (b == 1 makes every x fit)
    x0 = (t * pow(a, -1, b)) % b if b > 1 else 0
    x_min = max(0, -((-(t - b * u2)) // a))  # y <= u2  <=>  x >= (t - b*u2) / a
    x_max = min(u1, t // a)  # y >= 0  <=>  x <= t / a
    if x_min > x_max:
        return None
    x = x_min + ((x0 - x_min) % b)
    if x > x_max:
        return None
    return x, (t - a * x) // b


def _divisor_chain(coeffs: list[int], ubs: list[int], target: int) -> list[int] | None:
    """Greedy, largest coefficient first; exact when each coefficient divides the one before."""
    values = []
    for c, u in zip(coeffs, ubs):
        x = min(u, target // c)
        values.append(x)
        target -= c * x
    return values if target == 0 else None
