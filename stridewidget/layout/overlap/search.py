"""The exact searches of the overlap solver: the count split, and the depth-first search.

Problem.  ``sum(c_i * x_i) == t`` with ``0 <= x_i <= u_i`` (positive, distinct ``c_i``, their gcd
divided out) where no closed form applies (:mod:`.closed`).

Method.
* The **count split** (:func:`_count_split`): ``sum(x_i)`` must lie between ``t / max(c)`` and
  ``t / min(c)``.  For near-equal large coefficients (``10**12 + k``) this interval is empty or
  holds a few values ``S``; for each, ``sum(x) == S`` and ``sum((c - min(c)) * x) == t - min(c)*S``
  is a problem with small weights that a two-row search settles at once.
* The **depth-first search** (:func:`_search`), over the variables in a given order: each ``x_i``
  is chosen only from the values that keep the rest reachable (range, gcd and the count bound
  above), the last two variables are solved in closed form, and failed ``(level, remainder)``
  states are memoised (at most ``_MEMO_LIMIT`` of them, so memory stays bounded; the memo only
  saves time).  Its most steps in an order are known in advance (:func:`_enumeration_steps`), which
  the portfolio uses to let a sure order run to its end.

Cost.  The count split is tried from the middle of each range and usually succeeds or is pruned at
once.  The depth-first search is exact and exponential in the worst case, like every known method
for a problem that is NP-hard: at most :func:`_enumeration_steps` steps, memory capped by the memo.

Failure modes.  Slow, never wrong: three or more huge coefficients (10**11 and more) with long
bounds and no divisor relation, beside a few small ones (an element width), make every order
enumerate a product of bounds; the lattice search (:mod:`.lattice`) is the member for those.
Each call takes a step limit and raises :class:`_StepLimit` past it, so the portfolio can hand the
turn to another member.

References.
1. NumPy, ``numpy/_core/src/common/mem_overlap.c`` (Pauli Virtanen, 2015): a depth-first search
   with gcd-based pruning, and the memory-overlap problems it is measured on.
2. P. Ramachandran, "Use of Extended Euclidean Algorithm in Solving a System of Linear
   Diophantine Equations with Bounded Variables", Algorithmic Number Theory, Lecture Notes in
   Computer Science 4076, 182-192 (2006): the search ``mem_overlap.c`` implements.
"""

from __future__ import annotations

import math

from .budget import _Budget, _StepLimit
from .closed import _two_variable

#: Failed search states remembered at most (≈ 30 MiB); beyond it the search goes on unmemoised.
_MEMO_LIMIT = 200_000


def _count_fits(target: int, largest: int, smallest: int, count_max: int) -> bool:
    """Can ``target`` be a sum of at most ``count_max`` terms, each in ``[smallest, largest]``?"""
    fewest = -(-target // largest)
    return fewest <= min(count_max, target // smallest)


def _count_split(
    coeffs: list[int], ubs: list[int], target: int, totals: range, budget: _Budget
) -> list[int] | None:
    """Step 3: with ``c_i = m + w_i`` (``m`` the smallest coefficient), ``sum(c*x) == t`` means
    ``sum(x) == S`` and ``sum(w*x) == t - m*S`` for one of the few possible totals ``S``.

    The weights ``w`` are small when the coefficients are near-equal, and for a fixed count the
    reachable weight sums fill an interval except near its ends: a depth-first search over the
    variables, largest weight first, whose every choice keeps the rest inside that interval (found
    by binary search: the bounds are monotone in ``x``) and on the right residue (stepping ``x`` by
    the period), tried from the middle of the range out, finds a solution at once when one exists.
    """
    split = _CountSplit(coeffs, ubs, budget)
    for total in totals:
        if split.search(0, total, target - coeffs[-1] * total):
            return list(split.chosen)
    return None


class _CountSplit:
    """The two-row search of :func:`_count_split`: ``sum(x) == count``, ``sum(w*x) == weight``."""

    def __init__(self, coeffs: list[int], ubs: list[int], budget: _Budget) -> None:
        n = self.n = len(coeffs)
        self.ubs, self.budget = ubs, budget
        self.weights = [c - coeffs[-1] for c in coeffs]  # descending; the last is 0
        self.suffix_gcd = [0] * (n + 1)
        self.suffix_count = [0] * (n + 1)
        for k in range(n - 1, -1, -1):
            self.suffix_gcd[k] = math.gcd(self.suffix_gcd[k + 1], self.weights[k])
            self.suffix_count[k] = self.suffix_count[k + 1] + ubs[k]
        self.failed: set[tuple[int, int, int]] = set()
        self.chosen = [0] * n

    def heaviest(self, k: int, count: int) -> int:
        """Largest weight sum of ``count`` picks from variables ``k..``: heaviest first."""
        total = 0
        for j in range(k, self.n):
            take = min(self.ubs[j], count)
            total += take * self.weights[j]
            count -= take
        return total

    def lightest(self, k: int, count: int) -> int:
        total = 0
        for j in range(self.n - 1, k - 1, -1):
            take = min(self.ubs[j], count)
            total += take * self.weights[j]
            count -= take
        return total

    def candidates(self, k: int, count: int, weight: int) -> range:
        """The values of ``x_k`` that keep the rest reachable, on the right residue."""
        w, rest = self.weights[k], k + 1
        low = max(0, count - self.suffix_count[rest])
        high = min(self.ubs[k], count, weight // w)
        # smallest x whose heaviest completion still reaches `weight` (monotone in x)
        a, b = low, high + 1
        while a < b:
            mid = (a + b) // 2
            if w * mid + self.heaviest(rest, count - mid) >= weight:
                b = mid
            else:
                a = mid + 1
        low = a
        # largest x whose lightest completion stays at or below `weight` (monotone in x)
        a, b = low - 1, high
        while a < b:
            mid = (a + b + 1) // 2
            if w * mid + self.lightest(rest, count - mid) <= weight:
                a = mid
            else:
                b = mid - 1
        high = a
        # x must leave a weight the rest can form: w*x == weight (mod gcd of the rest)
        g = self.suffix_gcd[rest]
        d = math.gcd(w, g)
        period = g // d
        residue = (weight // d) * pow(w // d, -1, period) % period if period > 1 else 0
        start = low + (residue - low) % period
        return range(start, high + 1, period)

    def search(self, k: int, count: int, weight: int) -> bool:
        n, ubs, weights, chosen = self.n, self.ubs, self.weights, self.chosen
        if k == n - 1:
            chosen[k] = count
            return weight == 0 and count <= ubs[k]
        if k == n - 2:  # the last weight is 0: x_k = weight / w_k, the rest fills the count
            x, left = divmod(weight, weights[k])
            if left or x > ubs[k] or not 0 <= count - x <= ubs[k + 1]:
                return False
            chosen[k], chosen[k + 1] = x, count - x
            return True
        if (k, count, weight) in self.failed:
            return False
        w = weights[k]
        candidates = self.candidates(k, count, weight)
        centre = len(candidates) // 2
        for i in range(2 * len(candidates)):  # from the middle out: centre, +1, -1, +2, ...
            index = centre + (i + 1) // 2 if i % 2 else centre - i // 2
            if not 0 <= index < len(candidates):
                continue
            x = candidates[index]
            self.budget.spend(1)
            if self.search(k + 1, count - x, weight - w * x):
                chosen[k] = x
                return True
        if len(self.failed) < _MEMO_LIMIT:
            self.failed.add((k, count, weight))
        return False


def _enumeration_steps(ubs: list[int]) -> int:
    """Most steps :func:`_search` takes on bounds in this order: the last two variables are
    solved in closed form, each earlier level tries at most ``u + 1`` values per state.

    >>> _enumeration_steps([15, 999, 99999, 999999])   # 16 + 16 * 1000
    16016
    """
    steps, states = 0, 1
    for u in ubs[:-2]:
        states *= u + 1
        steps += states
    return steps


def _search(
    coeffs: list[int], ubs: list[int], target: int, budget: _Budget, limit: int
) -> list[int] | None:
    """Depth-first over the variables in the given order; raises :class:`_StepLimit` after
    ``limit`` steps."""
    n = len(coeffs)
    suffix_max = [0] * (n + 1)
    suffix_gcd = [0] * (n + 1)
    suffix_count = [0] * (n + 1)
    largest = [0] * (n + 1)
    smallest = [0] * (n + 1)
    for k in range(n - 1, -1, -1):
        suffix_max[k] = suffix_max[k + 1] + coeffs[k] * ubs[k]
        suffix_gcd[k] = math.gcd(suffix_gcd[k + 1], coeffs[k])
        suffix_count[k] = suffix_count[k + 1] + ubs[k]
        largest[k] = max(largest[k + 1], coeffs[k])
        smallest[k] = min(smallest[k + 1], coeffs[k]) if k < n - 1 else coeffs[k]
    failed: set[tuple[int, int]] = set()
    chosen = [0] * n
    steps_left = [limit]

    def search(k: int, remainder: int) -> bool:
        if remainder == 0:
            for j in range(k, n):
                chosen[j] = 0
            return True
        if k == n or remainder > suffix_max[k] or remainder % suffix_gcd[k]:
            return False
        if not _count_fits(remainder, largest[k], smallest[k], suffix_count[k]):
            return False
        if k == n - 1:
            chosen[k] = remainder // coeffs[k]
            return True  # divisibility and range were checked above
        if k == n - 2:
            pair = _two_variable(coeffs[k], ubs[k], coeffs[k + 1], ubs[k + 1], remainder)
            if pair is None:
                return False
            chosen[k], chosen[k + 1] = pair
            return True
        if (k, remainder) in failed:
            return False
        c, rest = coeffs[k], suffix_max[k + 1]
        x_hi = min(ubs[k], remainder // c)
        x_lo = max(0, -((rest - remainder) // c))  # remainder - c*x <= rest
        for x in range(x_hi, x_lo - 1, -1):
            budget.spend(1)
            steps_left[0] -= 1
            if steps_left[0] < 0:
                raise _StepLimit
            if search(k + 1, remainder - c * x):
                chosen[k] = x
                return True
        if len(failed) < _MEMO_LIMIT:
            failed.add((k, remainder))
        return False

    return list(chosen) if search(0, target) else None
