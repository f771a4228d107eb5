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
4. A **portfolio search**: four members take turns, each with a step limit that starts at
   ``_FIRST_LIMIT`` and grows fourfold per round, so each problem costs a small factor times the
   best member's cost on it.  **NumPy's C solver** (``solve_diophantine`` from ``mem_overlap.c``, the
   Euclid-based search behind ``np.shares_memory``; one of its steps is O(1) C, about 20 ns) with
   ``max_work`` from ``_NUMPY_FIRST_WORK`` growing ``_NUMPY_GROWTH``-fold per round, coefficients
   ascending and, while the reach stays under ``_NUMPY_SMALL_REACH``, descending as well (NumPy's
   fuzz has problems each order solves at once and the other does not).  Its work count bounds
   its time only for small numbers (with huge coefficients 16,000 work was measured taking 15 ms),
   so for huge ones its turn comes last in each round.  It is reached through NumPy's test module,
   so its absence (another NumPy build, numbers beyond int64) costs speed, never exactness.  The
   **lattice search** (step 6) comes next, then our **depth-first search** in two variable orders
   (step 5); when the numbers are huge, that search first gets a glance of ``_GLANCE_LIMIT``
   steps, which settles many problems before the lattice search's setup.
   Each order's most steps are known in advance (:func:`_enumeration_steps`); once the smaller of
   them fits in a round's two turns, that order alone runs to its end.  Displays give NumPy's
   solver only its first turn.
5. Inside the depth-first search, each ``x_i`` is chosen only from the values that keep the rest
   reachable (range, gcd and the count bound of step 3), the last two variables are solved in
   closed form, and failed ``(level, remainder)`` states are memoised (at most ``_MEMO_LIMIT`` of
   them, so memory stays bounded; the memo only saves time).
6. The **lattice search** (:class:`_LatticeSearch`, after Aardal, Hurkens and Lenstra, "Solving a
   system of linear Diophantine equations with lower and upper bounds on the variables", 2000):
   the solutions of ``sum(c*x) == t`` are ``x0 + K``, with ``K`` the rank ``n-1`` lattice of
   integer vectors orthogonal to ``c``.  Tighten the box (``x_i <= t / c_i`` and the same from the
   far corner), scale each coordinate so that the box becomes a cube, reduce a basis of ``K`` with
   LLL (FLINT's exact ``fmpz_lll``, through python-flint), move ``x0`` next to the box's centre
   (Babai's nearest plane), and enumerate the lattice points in the ball around the centre that
   holds the box (Schnorr-Euchner: nearest first, pruned level by level with Gram-Schmidt norms),
   each checked against the box in exact integers.  The last two levels use the box itself: the
   second-to-last multiple only takes the values whose line meets the box (Fourier-Motzkin
   elimination in integers, :func:`_lines_in_box`), and along the shortest basis vector the
   stretch of the line inside the box is computed instead of enumerated.  A reduced basis makes
   the ball hold about as many lattice points as its volume over the lattice's determinant — for
   the huge-stride problems of the next paragraph, a handful — so the product of the bounds no
   longer matters.  Floats only choose candidates (intervals widened by ``_LATTICE_MARGIN``, far
   above double rounding on a reduced basis); every answer is checked exactly.

Ctrl-C stops every member written here like any Python loop; NumPy's solver runs a few
milliseconds per turn.

Why this method: measured side by side (``benchmarks/bench_inspect.py``: NumPy's diophantine and
view-pair fuzz streams, issue 11's families, 2,000 questions about random 1-6-D meta layouts with
sizes up to 10**6 and strides up to 10**12).  Without step 6, every slow instance had the same
shape: three or more coefficients of 10**11 or more with long bounds (10**3 to 10**6 values), no
divisor relation, beside a few small coefficients (element widths, strides under 10**6).  No
reduction applies (the width's coefficient 1 makes every gcd 1; the small coefficients make the
count bound useless), and every search order, NumPy's included, enumerates a product of bounds:
internal overlap of ``(2, 100, 10**6, 10**6, 1000):(84, 1, 951793374218, 714707845745,
672294410367)`` took 19-40 s and ~75 MiB, and 2-7 of 600 random questions took over 10 ms.  The
solutions of such a problem are a few points of a sparse lattice: exactly what lattice reduction
finds in polynomial time for a fixed number of variables (Lenstra 1983).  With step 6 that
instance takes 0.6-1.7 ms, and no random question of ``bench_inspect.py`` takes over 10 ms.  Step 6
takes its turn before the depth-first search: on 4,000 random meta questions the 99th percentile
fell from 1.9 ms to 0.55 ms and the slowest from 13.8 ms to 7.8 ms, and NumPy's fuzz got slightly
faster too (23.4 -> 22.3 ms for 1,000 problems).  Its setup (the reduction) costs 0.1-0.5 ms, but
the closed forms and NumPy's first turn settle most problems before it.  A hand-written LLL in
Python was not tried: FLINT's is exact, C, and maintained.

Cost.  Steps 1-3 are O(n log n) for n variables (the count split's search is tried from the middle
of each range and usually succeeds or is pruned at once).  Step 4 is exact and exponential in the
worst case, like every known method for a problem that is NP-hard; the memo caps its memory at
``_MEMO_LIMIT`` states, the lattice search's memory is O(n**2).

Still slow, and why.  The lattice search visits the lattice points of its ball whose projections
fit, level by level; it is slow where the ball holds far more of them than the box's slice of the
solutions' plane, and the other members enumerate products of bounds there too: a target near a
corner of the box with many huge coefficients over long bounds.  After tightening, the solutions
lie in a simplex, and the ball around a simplex of dimension ``d`` is about ``d**(d/2)`` times
larger; cutting the last two levels to the box (above) removes most of that, not all.  This is two
views of 4 to 5 dims each, strides of 10**9 to 10**12, sizes of 10**5 to 10**6 (an exabyte-scale
meta storage), whose first elements lie close together next to their spans.  The worst found (9
coefficients near 10**9, bounds near 7*10**5, a target of 4*10**12: ``CORNER_CASES`` in
``benchmarks/bench_inspect.py``) takes 3.7 s and a few MiB; 1 of 3,000 random problems of that
family took over a second (2 before the box cut, the worst 19.7 s).  Removing it would take
branching on the polytope's width with a linear program per node (Lenstra's algorithm proper)
instead of a ball.

Displays never wait for it: they pass ``max_work`` / ``max_seconds`` and say "not decided"
when either runs out (:class:`Undecided`).

All functions here take plain tuples of ints: no tensors, no NumPy arrays.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator, Sequence
from typing import Any

__all__ = [
    "Undecided",
    "bounded_knapsack",
    "count_touched",
    "internal_overlap_witness",
    "ranges_overlap",
    "ranges_overlap_witness",
]

#: Steps each search order of step 5 gets in its first round (the limit then grows fourfold).
_FIRST_LIMIT = 500
#: Steps each search order gets before anything else when the numbers are huge: on random meta
#: layouts half the pairwise questions end within them, and the lattice search's setup (0.1-0.3 ms)
#: would dominate those (median 102 -> 29 µs; 64 or 200 steps measured no better).
_GLANCE_LIMIT = 16
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
#: Relative margin on the lattice search's float bounds (double rounding is ~1e-16).
_LATTICE_MARGIN = 1e-9
#: Babai passes before the lattice search gives up on a problem (each gains ~50 bits).
_BABAI_PASSES = 40
#: NumPy's solver works in int64: only problems whose reach stays below this are handed to it.
_INT64_SAFE = 2**62

try:  # NumPy's own bounded-Diophantine solver; private, so optional (see step 4 above)
    from numpy._core._multiarray_tests import solve_diophantine as _numpy_solver
except ImportError:  # pragma: no cover - NumPy 1.x keeps it in numpy.core
    try:
        from numpy.core._multiarray_tests import solve_diophantine as _numpy_solver
    except ImportError:  # depends on the NumPy build
        _numpy_solver = None

#: python-flint (FLINT's exact LLL, step 6): imported on first use (~70 ms), ``None`` if absent.
_flint: Any = ...


def _load_flint() -> Any:
    """python-flint, a declared dependency; without it step 6 is skipped: only speed is lost."""
    global _flint
    if _flint is ...:
        try:
            import flint
        except ImportError:  # pragma: no cover - depends on the installation
            flint = None
        _flint = flint
    return _flint


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
    """Steps 4 to 6: four searches take turns, each with a step limit that grows fourfold per
    round, so the total cost stays within a small factor of the best of them on each problem.

    * NumPy's C solver (Euclid-reduced), ``max_work`` growing from ``_NUMPY_FIRST_WORK``: far
      faster per step, so it wins on small numbers (NumPy's fuzz).  Its work count is not a time
      bound when the numbers are huge, so there it moves to the end of each round.
    * The lattice search (:class:`_LatticeSearch`): few solutions among huge products of bounds.
    * Our depth-first search, largest coefficient first: prunes best when strides nest (a
      candidate or two per level).
    * The same search, smallest bound first: leaves the two variables with the most values to the
      closed form (a huge dim beside a few small ones).
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
    # Its outermost loop runs over the last coefficient's values: the largest last is safe; the
    # smallest last wins on some of NumPy's fuzz but, with huge coefficients, was measured
    # spending 0.3 s on 50,000 work, so it gets turns only while the numbers stay small.
    numpy_directions = (-1, 1) if small else (-1,)
    lattice: _LatticeSearch | bool | None = None  # False: unusable on this problem
    limit = _FIRST_LIMIT

    def numpy_turn() -> list[int] | _NoAnswer | None:
        for direction in numpy_directions if numpy_work else ():
            try:
                found = _numpy_solver(
                    tuple(coeffs[::direction]), tuple(ubs[::direction]), target, max_work=numpy_work
                )
            except (RuntimeError, OverflowError, ValueError):
                budget.spend(numpy_work // _NUMPY_STEPS_PER_STEP)  # too much work: go on
            else:
                return None if found is None else list(found)[::direction]
        return _NO_ANSWER

    def search_turn() -> list[int] | _NoAnswer | None:
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
        return _NO_ANSWER

    def lattice_turn() -> list[int] | _NoAnswer | None:
        nonlocal lattice
        if lattice is False:
            return _NO_ANSWER
        try:
            if lattice is None:
                lattice = _LatticeSearch(coeffs, ubs, target)
            return lattice.search(budget, limit)
        except _Unusable:
            lattice = False
        except _StepLimit:
            pass
        return _NO_ANSWER

    # NumPy's solver first while its work count bounds its time; the lattice search before the
    # depth-first search (measured: fewer slow problems on the random meta layouts and the fuzz).
    if small:
        members = (numpy_turn, lattice_turn, search_turn)
    else:
        members = (lattice_turn, search_turn, numpy_turn)
    if not small:  # a glance first: many of these fall to a few search steps, before any setup
        limit = _GLANCE_LIMIT
        found = search_turn()
        if found is not _NO_ANSWER:
            return found
        limit = _FIRST_LIMIT
    while True:
        for member in members:
            found = member()
            if found is not _NO_ANSWER:
                return found
        if numpy_work:
            numpy_work *= _NUMPY_GROWTH
            if budget.deadline is not None:
                numpy_work = 0  # displays: keep the search's step count the only clock
        limit *= 4


class _NoAnswer:
    """A member of the portfolio ran out of its turn's work."""


_NO_ANSWER = _NoAnswer()


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


def _kernel_basis(coeffs: Sequence[int]) -> tuple[list[list[int]], list[int]]:
    """A basis of ``{y : sum(c*y) == 0}`` over the integers, and ``w`` with ``sum(c*w) == gcd(c)``.

    Built one coefficient at a time: with ``g`` the gcd so far, ``w`` its combination and
    ``g' = p*g + q*c_k``, the vector ``(c_k/g')*w - (g/g')*e_k`` joins the basis (every kernel
    vector's ``k``-th entry is a multiple of ``g/g'``, so these vectors span the whole kernel).

    >>> _kernel_basis([6, 10, 15])
    ([[5, -3, 0], [30, -15, -2]], [-14, 7, 1])
    """
    n = len(coeffs)
    g, unit, basis = coeffs[0], [1] + [0] * (n - 1), []
    for k in range(1, n):
        g_next, p, q = _extended_gcd(g, coeffs[k])
        step = [coeffs[k] // g_next * w for w in unit]
        step[k] = -(g // g_next)
        basis.append(step)
        unit = [p * w for w in unit]
        unit[k] = q
        g = g_next
    return basis, unit


def _extended_gcd(a: int, b: int) -> tuple[int, int, int]:
    """``(g, p, q)`` with ``g == gcd(a, b) == p*a + q*b`` for ``a, b > 0``."""
    p0, p1, q0, q1 = 1, 0, 0, 1
    while b:
        quotient, a, b = a // b, b, a % b
        p0, p1 = p1, p0 - quotient * p1
        q0, q1 = q1, q0 - quotient * q1
    return a, p0, q0


class _Unusable(Exception):
    """The lattice search cannot run on this problem (no FLINT, or numbers beyond a float)."""


class _LatticeSearch:
    """Step 6: every solution of ``sum(c*x) == t`` is ``x0 + sum(l_j * k_j)`` for the kernel
    basis ``k_j`` and integers ``l_j``.  Tighten the box to what the target allows, scale each
    coordinate so that the box becomes a cube, reduce the kernel basis (LLL, FLINT's exact
    ``fmpz_lll``) and move ``x0`` next to the box's centre (Babai's nearest plane, repeated until
    it stops moving); the box then lies inside a ball of radius ``sqrt(sum((s_i*u_i)**2)) / 2``
    around that centre, and Schnorr-Euchner enumeration lists the lattice points in the ball,
    nearest first, each checked against the box in integers.

    Cost: the enumeration visits about as many points as the ball holds, a small multiple of the
    box's (the ratio of their volumes), plus the tree above them; a reduced basis keeps that tree
    small.  So it is fast exactly where the depth-first search is slow: few solutions among huge
    products of bounds.  It is slow where the ball holds far more points than the box, as for a
    target near a corner of the box (the module docstring's "Still slow").  Floats only choose the candidates:
    every interval is widened by a margin far above double rounding on a reduced basis, and every
    point is checked exactly.
    """

    def __init__(self, coeffs: list[int], ubs: list[int], target: int) -> None:
        flint = _load_flint()
        if flint is None:
            raise _Unusable
        n = len(coeffs)
        # Tighten the box first: x_i <= t / c_i, and likewise from the far corner.
        spare = sum(c * u for c, u in zip(coeffs, ubs)) - target
        self.lows = [max(0, u - spare // c) for c, u in zip(coeffs, ubs)]
        highs = [min(u, target // c) for c, u in zip(coeffs, ubs)]
        target -= sum(c * low for c, low in zip(coeffs, self.lows))
        ubs = [high - low for high, low in zip(highs, self.lows)]
        self.room = -1.0  # no solution, unless the ball below meets the solutions' plane
        if min(ubs) < 0:
            return
        kernel, unit = _kernel_basis(coeffs)  # the gcd is 1: _solve divided it out
        widest = max(max(ubs), 1)
        scale = [-(-widest // max(u, 1)) for u in ubs]
        scaled = [[s * v for s, v in zip(scale, row)] for row in kernel]
        reduced = [[int(v) for v in row] for row in flint.fmpz_mat(scaled).lll().tolist()]
        self.ubs, self.rank = ubs, n - 1
        self.steps = [[v // s for v, s in zip(row, scale)] for row in reduced]
        # The box's ball, less the squared distance from its centre to the solutions' plane:
        # room = (ball - (2t - c.u)**2 / sum((c/s)**2)) / 4, kept exact until its sign is known.
        ball = sum((s * u) ** 2 for s, u in zip(scale, ubs))
        common = math.lcm(*(s * s for s in scale))
        weight = sum(c * c * (common // (s * s)) for c, s in zip(coeffs, scale))
        excess = (
            ball * weight - (2 * target - sum(c * u for c, u in zip(coeffs, ubs))) ** 2 * common
        )
        if excess < 0:
            return
        try:
            self.room = excess / (4 * weight) * (1 + _LATTICE_MARGIN) + _LATTICE_MARGIN
            self._gram_schmidt(reduced)
            self.origin = self._near_centre([w * target for w in unit], scale)
        except OverflowError:  # numbers beyond a float
            raise _Unusable from None

    def _gram_schmidt(self, rows: list[list[int]]) -> None:
        """Gram-Schmidt data from a QR factorisation (Householder, NumPy): ``rows = (Q R)^T``
        gives ``|b*_j|^2 = R_jj^2`` and ``mu_jk = R_kj / R_kk``."""
        import numpy as np

        self.rows = np.array([[float(v) for v in row] for row in rows])
        orthonormal, triangle = np.linalg.qr(self.rows.T)
        diagonal = np.diag(triangle)
        self.norms = (diagonal**2).tolist()
        self.mu = (triangle / diagonal[:, None]).T.tolist()  # mu[j][k] for k < j
        self.project = orthonormal / diagonal  # column j: b*_j / |b*_j|^2

    def _coordinates(self, offset: list[int], scale: list[int]) -> list[float]:
        """Each Gram-Schmidt coordinate of the box's centre minus the scaled ``offset`` point."""
        centre = [s * u / 2 - s * x for s, u, x in zip(scale, self.ubs, offset)]
        return (self.project.T @ centre).tolist()

    def _near_centre(self, origin: list[int], scale: list[int]) -> list[int]:
        """Babai's nearest plane, in floats, repeated: each pass moves the particular solution
        by a lattice vector (exact integers) and shrinks its distance to the box's centre by a
        factor of about 2**-50 until it stays put."""
        rank, mu = self.rank, self.mu
        for _ in range(_BABAI_PASSES):
            coordinates = self._coordinates(origin, scale)
            move = [0] * rank
            for j in range(rank - 1, -1, -1):
                left = coordinates[j] - sum(move[k] * mu[k][j] for k in range(j + 1, rank))
                # a coordinate within half a step (and float noise) stays: no back and forth
                move[j] = round(left) if abs(left) > 0.5 + 1e-6 else 0
            if not any(move):
                self.centre = coordinates
                return origin
            for j, m in enumerate(move):
                if m:
                    origin = [x + m * v for x, v in zip(origin, self.steps[j])]
        raise _Unusable

    def search(self, budget: _Budget, limit: int) -> list[int] | None:
        """Enumerate with at most ``limit`` steps (:class:`_StepLimit` beyond them).  The last
        level, along the shortest basis vector, is not enumerated: with the other multiples
        fixed, the points left form a line, and its stretch inside the box is found exactly; the
        level before it only tries the lines that meet the box."""
        if self.room < 0:  # the solutions' plane misses the ball
            return None
        rank, mu, norms, centre, steps = self.rank, self.mu, self.norms, self.centre, self.steps
        chosen = [0] * rank
        steps_left = [limit]

        def level(j: int, used: float, point: list[int]) -> list[int] | None:
            budget.spend(1)
            steps_left[0] -= 1
            if steps_left[0] < 0:
                raise _StepLimit
            if j == 0:
                found = _line_in_box(point, steps[0], self.ubs)
                return None if found is None else [x + low for x, low in zip(found, self.lows)]
            middle = centre[j] - sum(chosen[k] * mu[k][j] for k in range(j + 1, rank))
            reach = math.sqrt(max(self.room - used, 0.0) / norms[j])
            margin = _LATTICE_MARGIN * (1 + abs(middle) + reach)
            low, high = math.floor(middle - reach - margin), math.ceil(middle + reach + margin)
            if j == 1:  # only the values whose line meets the box (exact, often far fewer)
                meets = _lines_in_box(point, steps[0], steps[1], self.ubs)
                if meets is None:
                    return None
                low, high = max(low, meets[0]), min(high, meets[1])
            for value in _nearest_first(middle, low, high):
                distance = used + (value - middle) ** 2 * norms[j]
                if distance > self.room:
                    continue
                chosen[j] = value
                found = level(j - 1, distance, [x + value * v for x, v in zip(point, steps[j])])
                if found is not None:
                    return found
            chosen[j] = 0
            return None

        return level(rank - 1, 0.0, self.origin)


def _line_in_box(point: list[int], step: list[int], ubs: list[int]) -> list[int] | None:
    """A point ``point + l*step`` (``l`` an integer) with ``0 <= x <= ubs``, or ``None``.

    >>> _line_in_box([5, -3], [-1, 1], [4, 4])   # l = 3 or 4
    [2, 0]
    """
    low, high = -math.inf, math.inf
    for x, d, u in zip(point, step, ubs):
        if d > 0:
            low, high = max(low, -(x // d)), min(high, (u - x) // d)
        elif d < 0:
            low, high = max(low, -((u - x) // -d)), min(high, x // -d)
        elif not 0 <= x <= u:
            return None
    if low > high:
        return None
    return [x + low * d for x, d in zip(point, step)]


def _lines_in_box(
    point: list[int], along: list[int], across: list[int], ubs: list[int]
) -> tuple[int, int] | None:
    """The integers ``b`` for which the line ``point + b*across + a*along`` (``a`` real) meets the
    box ``0 <= x <= ubs``, as an interval ``(low, high)``, or ``None`` when there are none.

    Fourier-Motzkin elimination of ``a`` in integers: each coordinate with ``along[i] != 0`` bounds
    ``a`` below and above by a linear function of ``b``; every lower bound must stay under every
    upper bound, each pair a bound on ``b``.

    >>> _lines_in_box([0, 0], [1, -1], [0, 1], [3, 3])   # x = (a, b - a) in [0, 3]^2: b in 0..6
    (0, 6)
    """
    low, high = -math.inf, math.inf
    lowers, uppers = [], []  # (alpha, beta, num): a >= or <= (num - beta*b) / alpha
    for x, alpha, beta, u in zip(point, along, across, ubs):
        if alpha:
            under, over = (-x, u - x) if alpha > 0 else (u - x, -x)
            lowers.append((alpha, beta, under))
            uppers.append((alpha, beta, over))
        elif beta:  # 0 <= x + beta*b <= u
            first, last = (-x, u - x) if beta > 0 else (u - x, -x)
            low, high = max(low, -(-first // beta)), min(high, last // beta)
        elif not 0 <= x <= u:
            return None
    for i, (alpha_i, beta_i, under) in enumerate(lowers):
        for k, (alpha_k, beta_k, over) in enumerate(uppers):
            if i == k:  # one coordinate's own two bounds never cross (u >= 0)
                continue
            # (under - beta_i*b) / alpha_i <= (over - beta_k*b) / alpha_k, times alpha_i*alpha_k
            sign = 1 if alpha_i * alpha_k > 0 else -1
            slope = sign * (alpha_i * beta_k - alpha_k * beta_i)
            rest = sign * (alpha_i * over - alpha_k * under)
            if slope > 0:
                high = min(high, rest // slope)
            elif slope < 0:
                low = max(low, -(-rest // slope))
            elif rest < 0:
                return None
    if low > high:
        return None
    return low, high


def _nearest_first(middle: float, low: int, high: int) -> Iterator[int]:
    """The integers of ``[low, high]`` by distance from ``middle`` (Schnorr-Euchner order)."""
    first = min(max(round(middle), low), high)
    below, above = first - 1, first + 1
    if low <= first <= high:
        yield first
    while below >= low or above <= high:
        if above <= high and (below < low or above - middle <= middle - below):
            yield above
            above += 1
        else:
            yield below
            below -= 1


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
    shape_a: Sequence[int], strides_a: Sequence[int], start_a: int, width_a: int,
    shape_b: Sequence[int], strides_b: Sequence[int], start_b: int, width_b: int,
    *, max_work: int | None = None, max_seconds: float | None = None,
) -> bool:  # fmt: skip
    """Exact: do two strided sets of cells share at least one cell?

    Each set is ``{start + sum(i_k * stride_k) + w : 0 <= i_k < shape_k, 0 <= w < width}`` —
    a view whose elements each cover ``width`` consecutive cells (bytes, say).  With ``max_work`` or
    ``max_seconds``, raises :class:`Undecided` when the answer needs more.

    >>> ranges_overlap((4,), (2,), 0, 1, (4,), (2,), 1, 1)     # x[::2] vs x[1::2]
    False
    >>> ranges_overlap((4,), (2,), 0, 2, (4,), (2,), 1, 1)     # elements two cells wide
    True
    """
    witness = ranges_overlap_witness(
        shape_a, strides_a, start_a, width_a, shape_b, strides_b, start_b, width_b,
        max_work=max_work, max_seconds=max_seconds,
    )  # fmt: skip
    return witness is not None


def ranges_overlap_witness(
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
) -> tuple[tuple[int, ...], tuple[int, ...], int] | None:
    """Exact, like :func:`ranges_overlap`, with the proof: an index of each set whose elements
    share a cell, and that cell; ``None`` when they share none.

    >>> ranges_overlap_witness((4,), (2,), 0, 1, (3,), (3,), 1, 1)   # {0,2,4,6} and {1,4,7}
    ((2,), (1,), 4)
    >>> ranges_overlap_witness((4,), (2,), 0, 1, (4,), (2,), 1, 1) is None
    True
    """
    if 0 in shape_a or 0 in shape_b or width_a <= 0 or width_b <= 0:
        return None
    lo_a, hi_a = _span(shape_a, strides_a, start_a)
    lo_b, hi_b = _span(shape_b, strides_b, start_b)
    if hi_a + width_a - 1 < lo_b or hi_b + width_b - 1 < lo_a:
        return None
    # Shift each set to start at its lowest cell with non-negative steps:
    #   lo_a + sum(|a| x) + p == lo_b + sum(|b| y) + q
    # Flip b's variables (y -> u - y) so that everything sits on one side:
    #   sum(|a| x) + p + sum(|b| y') + q' == (hi_b + width_b - 1) - lo_a
    coefficients: list[int] = []
    bounds: list[int] = []
    moving: list[tuple[int, int, int]] = []  # (set, dim, stride) of each variable but the last
    for which, (shape, strides) in enumerate(((shape_a, strides_a), (shape_b, strides_b))):
        for dim, (n, s) in enumerate(zip(shape, strides)):
            if n > 1 and s != 0:
                coefficients.append(abs(s))
                bounds.append(n - 1)
                moving.append((which, dim, s))
    coefficients.append(1)
    bounds.append(width_a - 1 + width_b - 1)
    target = hi_b + width_b - 1 - lo_a
    solution = _knapsack(coefficients, bounds, target, _Budget(max_work, max_seconds))
    if solution is None:
        return None
    index = ([0] * len(shape_a), [0] * len(shape_b))
    first_a, first_b = lo_a, hi_b  # the two elements' first cells
    for (which, dim, s), x in zip(moving, solution):
        n = (shape_a, shape_b)[which][dim]
        if which == 0:  # x counts steps up from a's lowest element
            index[0][dim] = x if s > 0 else n - 1 - x
            first_a += abs(s) * x
        else:  # x counts steps down from b's highest element
            index[1][dim] = n - 1 - x if s > 0 else x
            first_b -= abs(s) * x
    return tuple(index[0]), tuple(index[1]), max(first_a, first_b)


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
