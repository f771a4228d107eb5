"""Exact overlap questions about strided layouts, as pure integer problems.

Two questions come up again and again:

* **internal overlap** — do two different logical indices of one view map to the same storage cell?
* **pairwise overlap** — do two views share at least one storage cell?

Both reduce to *bounded knapsack feasibility*: given positive coefficients ``c_i`` (strides), bounds
``u_i`` and a target ``t``, is there an integer vector ``0 <= x_i <= u_i`` with ``sum(c_i * x_i) == t``?
(NumPy's ``mem_overlap.c`` makes the same reduction.)  The problem is NP-hard in general; this module
answers it *exactly* — never "too hard" — unless the caller passes a work budget (``max_work``),
which only the displays do.

Method, in the order it is tried (each step is exact):

1. Reductions: variables with bound 0 are dropped; variables with **equal coefficients merge** into one
   whose bound is the sum (``x[::2]`` vs ``x[1::2]`` gives two equal strides); the gcd of the
   coefficients divides the target and then every coefficient; a target beyond the reach fails.
2. Closed forms: one or two variables (extended Euclid, O(log)); a **divisor chain** (each coefficient
   divides the next larger one: every slice of a contiguous tensor plus an element width, the
   README's example) is solved greedily from the largest coefficient, which is exact because smaller
   coins that add up to at least one large coin always contain a subset worth exactly that coin.
3. A **count bound and split**: ``sum(x_i)`` must lie between ``t / max(c)`` and ``t / min(c)``.
   For near-equal large coefficients (``10**12 + k``) this interval is empty or holds a few values
   ``S``; for each, ``sum(x) == S`` and ``sum((c - min(c)) * x) == t - min(c) * S`` is a problem with
   small weights that a two-row search settles at once (:func:`_count_split`).
4. A **portfolio search**: our depth-first search in two variable orders — largest coefficient
   first (prunes best when strides nest) and smallest bound first (leaves the two variables with
   the most values to the closed form: a huge dim beside a few small ones) — take turns with a step
   limit that starts at ``_FIRST_LIMIT`` and grows fourfold per round, so each problem costs a small
   factor times the better order.  Before each round **NumPy's C solver** (``solve_diophantine``
   from ``mem_overlap.c``, the Euclid-based search behind ``np.shares_memory``) gets a turn too,
   coefficients ascending (its outermost loop then runs over the largest one's few values) and,
   while the reach stays under ``_NUMPY_SMALL_REACH``, descending as well (NumPy's fuzz has
   problems each order solves at once and the other does not; with huge coefficients the
   descending order was measured taking 0.3 s on 50,000 work, so its work count bounds its time
   only for small numbers), with ``max_work`` starting at ``_NUMPY_FIRST_WORK`` and growing ``_NUMPY_GROWTH``-fold per round:
   one of its steps is a node of its search, O(1) C code, about 20 ns (measured), so each of its
   turns costs about what our round costs and the total stays within a small factor of the best
   of the three.  It is reached through NumPy's test module, so its absence (another NumPy build,
   numbers beyond int64) costs speed, never exactness.  Displays give it only its first turn.
   Each order's most steps are known in advance (:func:`_enumeration_steps`); once the smaller of
   them fits in a round's two turns, that order alone runs to its end (a huge dim beside a few
   small ones: 16,016 steps, 0.07 s, where the alternation took 1.6 s).
5. Inside the search, each ``x_i`` is chosen only from the values that keep the rest reachable
   (range, gcd and the count bound of step 3), the last two variables are solved in closed form,
   and failed ``(level, remainder)`` states are memoised (at most ``_MEMO_LIMIT`` of them, so memory
   stays bounded; the memo only saves time).  Ctrl-C stops it like any Python loop.

Why this method: measured side by side (scratch runs of the families in
``benchmarks/bench_inspect.py``; 600 problems of NumPy's diophantine fuzz, 300 random pairwise
questions about 1–6-D meta layouts with sizes up to 10**6 and strides up to 10**12).  NumPy's
solver once before and once after round one, with caps of 1,000 and 40,000 work: fuzz 7.0x
NumPy's own time, 279/300 pairs within 10 ms, 5 over a second.  Growing turns for it from 1,000:
3.3x, 292/300, none over a second.  Growing turns from 16,000 (this module), fourfold per
round: 0.5–0.8x (faster than NumPy's solver alone: the closed forms settle the small problems),
294–296/300, one or two over a second.
The closed forms and the count split turn the issue's length-dependent and near-equal families
into O(ndim) work.

Cost.  Steps 1–3 are O(n log n) for n variables (the count split's search is tried from the middle
of each range and usually succeeds or is pruned at once).  Step 4 is exact and exponential in the
worst case, like every known method; the memo caps its memory at ``_MEMO_LIMIT`` states.

Still slow, and why (measured: 6–9 of the 600 random 1–6-D questions of ``bench_inspect.py`` take over
10 ms, 2–3 over a second).  Every slow instance found has the same shape:

* three or more coefficients of 10**11 or more (strides of a huge meta storage) with no divisor
  relation, each with a long bound (10**3 to 10**6 values), and
* beside them a few small coefficients (element widths, strides under 10**6) whose total reach
  ``R`` is tiny next to the huge ones.

Why each step fails on it: no divisor chain; the count bound of step 3 is useless because the small
coefficients make ``min(c)`` tiny; the gcd filter prunes nothing because the width's coefficient 1
makes every gcd 1; and each search order must enumerate the product of all bounds but the two it
leaves to the closed form: smallest bound first, the small variables times the shorter huge
bounds (14 million steps for ``(418879024259, 339515310248, 293343465123, 230738, 92, 1)`` with
bounds ``(999, 9999, 999999, 1, 999, 6)``, 0.6–2 s on a loaded machine); largest first, a huge
bound times what the rest leaves.  NumPy's solver enumerates the same products.  The worst found, internal overlap of
``(2, 100, 10**6, 10**6, 1000):(84, 1, 951793374218, 714707845745, 672294410367)``, takes 19–40 s
and ~75 MiB.  What would remove it (not done): the huge variables' values that land in a window of
width ``R`` form a translated lattice of rank ``k - 1``; finding a point of it in the bounds' box is
polynomial for fixed ``k`` (lattice reduction), leaving ``R`` small residues for the small part.
Displays never wait for these: they pass ``max_work`` / ``max_seconds`` and say "not decided" when
either runs out (:class:`Undecided`).

All functions here take plain tuples of ints: no tensors, no NumPy arrays.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence

__all__ = [
    "Undecided",
    "bounded_knapsack",
    "count_touched",
    "internal_overlap_witness",
    "ranges_overlap",
]

#: Steps each search order of step 5 gets in its first round (the limit then grows fourfold).
_FIRST_LIMIT = 500
#: NumPy's solver's work grows this much per round, like our search's limit, so that neither
#: side's turns come to dominate the time (sixteenfold made the hardest instance 109 s, not 19 s).
_NUMPY_GROWTH = 4
#: NumPy steps charged to a budget as one of ours: one of its steps (a node of its depth-first
#: search, O(1) C) costs about a hundredth of one of ours.
_NUMPY_STEPS_PER_STEP = 100
#: Work NumPy's solver gets before any Python search, per variable order: about 0.35 ms (~20 ns
#: per step, measured on the near-equal 6-10-D families; 50,000 made the 6-D one 16 ms);
#: displays get only this first try.
_NUMPY_FIRST_WORK = 16_000
#: Problems whose reach stays below this give NumPy's solver a second variable order too.
_NUMPY_SMALL_REACH = 2**40
#: The count split (step 3) is used when at most this many totals ``sum(x)`` are possible.
_COUNT_SPLIT_MAX = 8
#: Failed search states remembered at most (≈ 30 MiB); beyond it the search goes on unmemoised.
_MEMO_LIMIT = 200_000
#: NumPy's solver works in int64: only problems whose reach stays below this are handed to it.
_INT64_SAFE = 2**62

try:  # NumPy's own bounded-Diophantine solver; private, so optional (see step 4 above)
    from numpy._core._multiarray_tests import solve_diophantine as _numpy_solver
except ImportError:  # pragma: no cover - NumPy 1.x keeps it in numpy.core
    try:
        from numpy.core._multiarray_tests import solve_diophantine as _numpy_solver
    except ImportError:  # depends on the NumPy build
        _numpy_solver = None


class Undecided(Exception):
    """A budgeted question ran out of work before its answer was known (``max_work`` calls only)."""


class _Budget:
    """Search steps left and a deadline; ``None`` means unlimited (the exact API)."""

    def __init__(self, max_work: int | None, max_seconds: float | None = None) -> None:
        self.left = max_work
        self.deadline = None if max_seconds is None else time.perf_counter() + max_seconds

    def spend(self, steps: int) -> None:
        if self.left is not None:
            self.left -= steps
            if self.left < 0:
                raise Undecided
        # the clock is a safety net for slow machines; tests rely on the step count alone
        if self.deadline is not None and time.perf_counter() > self.deadline:
            raise Undecided


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


def bounded_knapsack(
    coefficients: Sequence[int],
    bounds: Sequence[int],
    target: int,
    *,
    max_work: int | None = None,
    max_seconds: float | None = None,
) -> list[int] | None:
    """Find ``x`` with ``0 <= x[i] <= bounds[i]`` and ``sum(c*x) == target``, exactly, or ``None``.

    Coefficients must be positive.  See the module docstring for the method and its cost.  With
    ``max_work`` (search steps) or ``max_seconds`` the search stops when either runs out and raises
    :class:`Undecided`; without them it is exact, however long it takes (Ctrl-C stops it).

    >>> bounded_knapsack([4, 1], [2, 3], 9)   # 4*2 + 1*1
    [2, 1]
    >>> bounded_knapsack([2, 2], [5, 5], 7) is None   # parity
    True
    """
    if any(c <= 0 for c in coefficients):
        raise ValueError("coefficients must be positive")
    if len(coefficients) != len(bounds):
        raise ValueError("coefficients and bounds differ in length")
    return _knapsack(coefficients, bounds, target, _Budget(max_work, max_seconds))


def _knapsack(
    coefficients: Sequence[int], bounds: Sequence[int], target: int, budget: _Budget
) -> list[int] | None:
    if target < 0 or any(u < 0 for u in bounds):
        return None
    merged: dict[int, int] = {}
    for c, u in zip(coefficients, bounds):
        if u > 0:
            merged[c] = merged.get(c, 0) + u
    coeffs = sorted(merged, reverse=True)
    values = _solve(coeffs, [merged[c] for c in coeffs], target, budget)
    if values is None:
        return None
    # Hand each merged value back to the original variables, filling them in order.
    left = dict(zip(coeffs, values))
    solution = []
    for c, u in zip(coefficients, bounds):
        take = min(max(u, 0), left.get(c, 0))
        if take:
            left[c] -= take
        solution.append(take)
    return solution


def _solve(coeffs: list[int], ubs: list[int], target: int, budget: _Budget) -> list[int] | None:
    """Steps 1-5 of the module docstring on distinct coefficients sorted from the largest down."""
    n = len(coeffs)
    if n == 0:
        return [] if target == 0 else None
    g = math.gcd(*coeffs)
    if target % g:
        return None
    coeffs = [c // g for c in coeffs]
    target //= g
    reach = sum(c * u for c, u in zip(coeffs, ubs))
    if target > reach:
        return None
    if n == 1:
        return [target // coeffs[0]]
    if n == 2:
        pair = _two_variable(coeffs[0], ubs[0], coeffs[1], ubs[1], target)
        return None if pair is None else list(pair)
    if all(coeffs[k] % coeffs[k + 1] == 0 for k in range(n - 1)):
        return _divisor_chain(coeffs, ubs, target)
    fewest, most = -(-target // coeffs[0]), min(sum(ubs), target // coeffs[-1])
    if fewest > most:
        return None
    if most - fewest < _COUNT_SPLIT_MAX:
        return _count_split(coeffs, ubs, target, range(fewest, most + 1), budget)
    return _portfolio(coeffs, ubs, target, budget, use_numpy=reach < _INT64_SAFE)


def _divisor_chain(coeffs: list[int], ubs: list[int], target: int) -> list[int] | None:
    """Greedy, largest coefficient first; exact when each coefficient divides the one before."""
    values = []
    for c, u in zip(coeffs, ubs):
        x = min(u, target // c)
        values.append(x)
        target -= c * x
    return values if target == 0 else None


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
    n = len(coeffs)
    weights = [c - coeffs[-1] for c in coeffs]  # descending; the last is 0
    suffix_gcd = [0] * (n + 1)
    suffix_count = [0] * (n + 1)
    for k in range(n - 1, -1, -1):
        suffix_gcd[k] = math.gcd(suffix_gcd[k + 1], weights[k])
        suffix_count[k] = suffix_count[k + 1] + ubs[k]

    def heaviest(k: int, count: int) -> int:
        """Largest weight sum of ``count`` picks from variables ``k..``: heaviest first."""
        total = 0
        for j in range(k, n):
            take = min(ubs[j], count)
            total += take * weights[j]
            count -= take
        return total

    def lightest(k: int, count: int) -> int:
        total = 0
        for j in range(n - 1, k - 1, -1):
            take = min(ubs[j], count)
            total += take * weights[j]
            count -= take
        return total

    failed: set[tuple[int, int, int]] = set()
    chosen = [0] * n

    def search(k: int, count: int, weight: int) -> bool:
        if k == n - 1:
            chosen[k] = count
            return weight == 0 and count <= ubs[k]
        if k == n - 2:  # the last weight is 0: x_k = weight / w_k, the rest fills the count
            x, left = divmod(weight, weights[k])
            if left or x > ubs[k] or not 0 <= count - x <= ubs[k + 1]:
                return False
            chosen[k], chosen[k + 1] = x, count - x
            return True
        if (k, count, weight) in failed:
            return False
        w, rest = weights[k], k + 1
        low, high = max(0, count - suffix_count[rest]), min(ubs[k], count, weight // w)
        # smallest x whose heaviest completion still reaches `weight` (monotone in x)
        a, b = low, high + 1
        while a < b:
            mid = (a + b) // 2
            if w * mid + heaviest(rest, count - mid) >= weight:
                b = mid
            else:
                a = mid + 1
        low = a
        # largest x whose lightest completion stays at or below `weight` (monotone in x)
        a, b = low - 1, high
        while a < b:
            mid = (a + b + 1) // 2
            if w * mid + lightest(rest, count - mid) <= weight:
                a = mid
            else:
                b = mid - 1
        high = a
        # x must leave a weight the rest can form: w*x == weight (mod gcd of the rest)
        g = suffix_gcd[rest]
        d = math.gcd(w, g)
        period = g // d
        residue = (weight // d) * pow(w // d, -1, period) % period if period > 1 else 0
        start = low + (residue - low) % period
        candidates = range(start, high + 1, period)
        centre = len(candidates) // 2
        for i in range(2 * len(candidates)):  # from the middle out: centre, +1, -1, +2, ...
            index = centre + (i + 1) // 2 if i % 2 else centre - i // 2
            if not 0 <= index < len(candidates):
                continue
            x = candidates[index]
            budget.spend(1)
            if search(rest, count - x, weight - w * x):
                chosen[k] = x
                return True
        if len(failed) < _MEMO_LIMIT:
            failed.add((k, count, weight))
        return False

    for total in totals:
        if search(0, total, target - coeffs[-1] * total):
            return list(chosen)
    return None


class _StepLimit(Exception):
    """One search order of the portfolio used up its share; another order gets a turn."""


def _portfolio(
    coeffs: list[int], ubs: list[int], target: int, budget: _Budget, use_numpy: bool
) -> list[int] | None:
    """Steps 4 and 5: three searches take turns, each with a step limit that grows fourfold per
    round, so the total cost stays within a small factor of the best of them on each problem.

    * Our depth-first search, largest coefficient first: prunes best when strides nest (a
      candidate or two per level).
    * The same search, smallest bound first: leaves the two variables with the most values to the
      closed form (a huge dim beside a few small ones).
    * NumPy's C solver (Euclid-reduced, smallest coefficients first), ``max_work`` = 16 x our
      limit: far faster per step, so it wins on problems all three find hard (NumPy's fuzz).
      Its work count is not a time bound on every problem, hence the small, growing caps.
    """
    n = len(coeffs)
    by_bound = sorted(range(n), key=lambda i: (ubs[i], -coeffs[i]))
    orders = [list(range(n))] if by_bound == list(range(n)) else [list(range(n)), by_bound]
    # Steps an order can take at most, whatever the target (a huge dim beside a few small ones
    # gives the smallest-bound-first order a small sure ceiling while the other order wanders).
    ceilings = {tuple(order): _enumeration_steps([ubs[i] for i in order]) for order in orders}
    surest = min(orders, key=lambda order: ceilings[tuple(order)])
    numpy_work = _NUMPY_FIRST_WORK if use_numpy and _numpy_solver is not None else 0
    small = sum(c * u for c, u in zip(coeffs, ubs)) < _NUMPY_SMALL_REACH
    numpy_directions = (-1, 1) if small else (-1,)
    limit = _FIRST_LIMIT
    while True:
        # Its outermost loop runs over the last coefficient's values: the largest last is safe;
        # the smallest last wins on some of NumPy's fuzz but, with huge coefficients, was measured
        # spending 0.3 s on 50,000 work, so it gets turns only while the numbers stay small.
        for direction in numpy_directions if numpy_work else ():
            try:
                found = _numpy_solver(
                    tuple(coeffs[::direction]), tuple(ubs[::direction]), target, max_work=numpy_work
                )
            except (RuntimeError, OverflowError, ValueError):
                budget.spend(numpy_work // _NUMPY_STEPS_PER_STEP)  # too much work: go on
            else:
                return None if found is None else list(found)[::direction]
        if numpy_work:
            numpy_work *= _NUMPY_GROWTH
            if budget.deadline is not None:
                numpy_work = 0  # displays: keep the search's step count the only clock
        turns, turn_limit = orders, limit
        if ceilings[tuple(surest)] <= 2 * limit:  # sure to end within this round's two turns
            turns, turn_limit = [surest], 2 * limit
        for order in turns:
            try:
                found = _search(
                    [coeffs[i] for i in order], [ubs[i] for i in order], target, budget, turn_limit
                )
            except _StepLimit:
                continue
            if found is None:
                return None
            values = [0] * n
            for position, i in enumerate(order):
                values[i] = found[position]
            return values
        limit *= 4


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


def internal_overlap_witness(
    shape: Sequence[int],
    strides: Sequence[int],
    width: int = 1,
    *,
    max_work: int | None = None,
    max_seconds: float | None = None,
) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """Two different logical indices whose elements share a storage cell, or ``None``.

    ``width`` is how many storage cells one element covers (1 for every torch tensor).  With
    ``max_work`` or ``max_seconds``, raises :class:`Undecided` when the answer needs more.

    >>> internal_overlap_witness((3, 4), (4, 1)) is None       # contiguous
    True
    >>> internal_overlap_witness((3, 2), (1, 1))               # sliding window
    ((0, 1), (1, 0))
    >>> internal_overlap_witness((2, 3), (0, 1))               # expand: stride 0
    ((0, 0), (1, 0))
    """
    ndim = len(shape)
    if any(n == 0 for n in shape):
        return None
    dims = [d for d in range(ndim) if shape[d] > 1]

    def pair(delta: dict[int, int]) -> tuple[tuple[int, ...], tuple[int, ...]]:
        first = [0] * ndim
        second = [0] * ndim
        for d, step in delta.items():
            first[d] = max(0, -step)
            second[d] = first[d] + step
        return tuple(first), tuple(second)

    for d in dims:
        if strides[d] == 0:
            return pair({d: 1})
    seen: dict[int, int] = {}
    for d in dims:
        other = seen.get(abs(strides[d]))
        if other is not None:  # equal |strides|: one step along each lands on the same cell
            sign = 1 if strides[d] * strides[other] > 0 else -1
            return pair({other: 1, d: -sign})
        seen[abs(strides[d])] = d
    # Items: (coefficient, bound, dim or None for the element's own cells)
    items = [(abs(strides[d]), shape[d] - 1, d) for d in dims]
    if width > 1:
        items.append((1, width - 1, None))
    items.sort(key=lambda item: -item[0])
    budget = _Budget(max_work, max_seconds)
    for k, (c_k, u_k, _) in enumerate(items):
        rest = items[k + 1 :]
        reach = sum(c * u for c, u, _ in rest)
        if c_k > reach:
            continue  # the smaller dims cannot cancel one step of this one
        solution = _knapsack(
            [c_k] + [c for c, _, _ in rest],
            [u_k - 1] + [2 * u for _, u, _ in rest],
            reach - c_k,
            budget,
        )
        if solution is None:
            continue
        delta_sorted = [solution[0] + 1] + [y - u for y, (_, u, _) in zip(solution[1:], rest)]
        delta: dict[int, int] = {}
        for step, (_, _, dim) in zip(delta_sorted, items[k:]):
            if dim is not None and step:
                delta[dim] = step if strides[dim] > 0 else -step
        if not delta:  # only the element's own cells differ: not two elements
            continue
        return pair(delta)
    return None


def _span(shape: Sequence[int], strides: Sequence[int], start: int) -> tuple[int, int]:
    lo = start + sum(s * (n - 1) for n, s in zip(shape, strides) if s < 0)
    hi = start + sum(s * (n - 1) for n, s in zip(shape, strides) if s > 0)
    return lo, hi


def ranges_overlap(
    shape_a: Sequence[int],
    strides_a: Sequence[int],
    start_a: int,
    width_a: int,
    shape_b: Sequence[int],
    strides_b: Sequence[int],
    start_b: int,
    width_b: int,
    *,
    max_work: int | None = None,
    max_seconds: float | None = None,
) -> bool:
    """Exact: do two strided sets of cells share at least one cell?

    Each set is ``{start + sum(i_k * stride_k) + w : 0 <= i_k < shape_k, 0 <= w < width}`` —
    a view whose elements each cover ``width`` consecutive cells (bytes, say).  With ``max_work`` or
    ``max_seconds``, raises :class:`Undecided` when the answer needs more.

    >>> ranges_overlap((4,), (2,), 0, 1, (4,), (2,), 1, 1)     # x[::2] vs x[1::2]
    False
    >>> ranges_overlap((4,), (2,), 0, 2, (4,), (2,), 1, 1)     # elements two cells wide
    True
    """
    if 0 in shape_a or 0 in shape_b or width_a <= 0 or width_b <= 0:
        return False
    lo_a, hi_a = _span(shape_a, strides_a, start_a)
    lo_b, hi_b = _span(shape_b, strides_b, start_b)
    if hi_a + width_a - 1 < lo_b or hi_b + width_b - 1 < lo_a:
        return False
    # Shift each set to start at its lowest cell with non-negative steps:
    #   lo_a + sum(|a| x) + p == lo_b + sum(|b| y) + q
    # Flip b's variables (y -> u - y) so that everything sits on one side:
    #   sum(|a| x) + p + sum(|b| y') + q' == (hi_b + width_b - 1) - lo_a
    coefficients: list[int] = []
    bounds: list[int] = []
    for shape, strides in ((shape_a, strides_a), (shape_b, strides_b)):
        for n, s in zip(shape, strides):
            if n > 1 and s != 0:
                coefficients.append(abs(s))
                bounds.append(n - 1)
    coefficients.append(1)
    bounds.append(width_a - 1 + width_b - 1)
    target = hi_b + width_b - 1 - lo_a
    return _knapsack(coefficients, bounds, target, _Budget(max_work, max_seconds)) is not None


def count_touched(
    shape: Sequence[int],
    strides: Sequence[int],
    width: int = 1,
    limit: int = 10**6,
    *,
    max_work: int | None = None,
    max_seconds: float | None = None,
) -> tuple[int, bool]:
    """How many distinct storage cells a view touches, and whether that count is exact.

    Exact when the view does not overlap itself (any size).  Otherwise the smallest-stride dim is
    not enumerated: its cells form arithmetic runs ``b, b+s, ..., b+(n-1)s`` from each *base* ``b``
    of the other dims, and runs with the same residue mod ``s`` are merged as intervals.  So the
    count is exact whenever at most ``limit`` bases remain (sliding windows of any length over up to
    ``limit`` positions, for instance).  Beyond that, or when the addresses do not fit in int64: an
    upper bound ``min(positions, span)`` flagged ``False``.  Memory: about 50 bytes per base, so
    50 MiB at the default ``limit``.  ``max_work`` / ``max_seconds`` bound the overlap test
    (:class:`Undecided`).

    >>> count_touched((3, 4), (4, 1))
    (12, True)
    >>> count_touched((4, 3), (1, 1))        # sliding windows of 3 over 6 cells
    (6, True)
    >>> count_touched((5, 1000), (0, 1))     # expand: 1000 cells read 5 times each
    (1000, True)
    >>> count_touched((10**8 - 63, 64), (1, 1))   # 6.4e9 positions, 1e8 cells
    (100000000, True)
    """
    if any(n == 0 for n in shape):
        return 0, True
    # Dims with equal strides reach the same cells as one dim: {i*s + j*s} = {k*s : k < n1 + n2 - 1}.
    sizes: dict[int, int] = {}
    for n, s in zip(shape, strides):
        if n > 1 and s != 0:
            sizes[abs(s)] = sizes.get(abs(s), 1) + n - 1
    if width > 1:
        sizes[1] = sizes.get(1, 1) + width - 1
    dims = sorted((n, s) for s, n in sizes.items())
    positions = math.prod(n for n, _ in dims)
    witness = internal_overlap_witness(
        [n for n, _ in dims], [s for _, s in dims], max_work=max_work, max_seconds=max_seconds
    )
    if witness is None:
        return positions, True
    dims.sort(key=lambda dim: dim[1])
    (run_length, step), outer = dims[0], dims[1:]
    bases = positions // run_length
    span = sum(s * (n - 1) for n, s in dims) + 1
    if bases > limit or span >= _INT64_SAFE:
        return min(positions, span), False
    import numpy as np  # enumeration only; the rest of the module needs no NumPy

    starts = np.zeros(1, dtype=np.int64)
    for n, s in outer:
        starts = (starts[:, None] + np.arange(n, dtype=np.int64) * s).reshape(-1)
    # Within one residue class mod `step`, a run is the interval [q, q + run_length) of quotients.
    residue, quotient = np.divmod(starts, step)[::-1]
    order = np.lexsort((quotient, residue))
    residue, quotient = residue[order], quotient[order]
    same_class = residue[1:] == residue[:-1]
    gap_to_next = np.where(same_class, quotient[1:] - quotient[:-1], run_length)
    covered = np.minimum(gap_to_next, run_length).sum() + run_length  # the last run is whole
    return int(covered), True
