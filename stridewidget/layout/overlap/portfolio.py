"""Which member of the overlap solver runs, in which order, with what budgets.

Problem.  A reduced problem (``sum(c_i * x_i) == t``, ``0 <= x_i <= u_i``, distinct positive
coefficients from the largest down, gcd 1, ``t`` within reach) is NP-hard in general, and each
known method is fast on some problems and exponential on others.  The answer must be exact
whichever is fast, at a cost close to that of the best member on each problem.

Method.  :func:`_solve` first tries what needs no search: one or two variables and divisor chains
(:mod:`.closed`), then the count split (:mod:`.search`) when few totals ``sum(x)`` are possible.
The rest goes to :func:`_portfolio`: four members take turns, each with a step limit that starts
at ``_FIRST_LIMIT`` and grows fourfold per round, so each problem costs a small factor times the
best member's cost on it.
* **NumPy's C solver** (``solve_diophantine`` from ``mem_overlap.c`` [1], the Euclid-based search
  [2] behind ``np.shares_memory``; one of its steps is O(1) C) with ``max_work`` from
  ``_NUMPY_FIRST_WORK`` growing ``_NUMPY_GROWTH``-fold per round, coefficients ascending and,
  while the reach stays under ``_NUMPY_SMALL_REACH``, descending as well (NumPy's fuzz [3] has
  problems each order solves at once and the other does not).  Its work count bounds its time
  only for small numbers, so for huge ones its turn comes last in each round.  It is reached
  through NumPy's test module, so its absence (another NumPy build, numbers beyond int64) costs
  speed, never exactness.
* The **lattice search** (:mod:`.lattice`) comes next: it takes its turn before the depth-first
  search (fewer slow problems on random meta layouts and NumPy's fuzz, measured by
  ``benchmarks/bench_inspect.py``).
* Our **depth-first search** (:mod:`.search`) in two variable orders: largest coefficient first
  (prunes best when strides nest), and smallest bound first (leaves the two variables with the
  most values to the closed form: a huge dim beside a few small ones).  When the numbers are huge,
  that search first gets a glance of ``_GLANCE_LIMIT`` steps, which settles many problems before
  the lattice search's setup.  Each order's most steps are known in advance; once the smaller of
  them fits in a round's two turns, that order alone runs to its end.

Displays give NumPy's solver only its first turn: with a deadline, the search's step count stays
the only clock.  Ctrl-C stops every member written here like any Python loop; NumPy's solver stops
at the end of its turn.  The constants below are measured by
``benchmarks/bench_overlap_tuning.py``.

Cost.  Within a small factor (the number of members times the growth of the limits) of the best
member on each problem; exponential in the worst case, like every known method.

Failure modes.  Slow, never wrong, where every member is slow (``CORNER_CASES`` in
``benchmarks/bench_inspect.py``; :mod:`.lattice` says why).  With a budget, :class:`Undecided`.

References.
1. NumPy, ``numpy/_core/src/common/mem_overlap.c`` (Pauli Virtanen, 2015): ``solve_diophantine``.
2. P. Ramachandran, "Use of Extended Euclidean Algorithm in Solving a System of Linear
   Diophantine Equations with Bounded Variables", Algorithmic Number Theory, Lecture Notes in
   Computer Science 4076, 182-192 (2006).
3. NumPy, ``numpy/_core/tests/test_mem_overlap.py``: the fuzz streams the orders are tuned on.
"""

from __future__ import annotations

from ..._compat import diophantine_solver
from .budget import _Budget, _StepLimit
from .closed import _divisor_chain, _two_variable
from .lattice import _LatticeSearch, _load_flint, _Unusable
from .search import _count_split, _enumeration_steps, _search

#: Steps each search order gets in its first round (the limit then grows fourfold).
_FIRST_LIMIT = 500
#: Steps each search order gets before anything else when the numbers are huge: on random meta
#: layouts about half the pairwise questions end within them, before the lattice search's setup.
_GLANCE_LIMIT = 16
#: NumPy's solver's work grows this much per round, like our search's limit, so that neither
#: side's turns come to dominate the time.
_NUMPY_GROWTH = 4
#: NumPy steps charged to a budget as one of ours: one of its steps (a node of its depth-first
#: search, O(1) C) costs about a hundredth of one of ours.
_NUMPY_STEPS_PER_STEP = 100
#: Work NumPy's solver gets before any Python search, per variable order; displays get only this
#: first try (``benchmarks/bench_overlap_tuning.py`` times it, and the alternatives).
_NUMPY_FIRST_WORK = 16_000
#: Problems whose reach stays below this give NumPy's solver a second variable order too.
_NUMPY_SMALL_REACH = 2**40
#: The count split is used when at most this many totals ``sum(x)`` are possible.
_COUNT_SPLIT_MAX = 8

#: NumPy's own bounded-Diophantine solver; private, so optional (see above): ``None`` where this
#: NumPy build lacks it.  Tests set it to ``None`` to run without it.
_numpy_solver = diophantine_solver()


def _solve(
    coeffs: list[int], ubs: list[int], target: int, budget: _Budget, use_numpy: bool
) -> list[int] | None:
    """Steps 2-6 of the package docstring on a reduced problem (:func:`.reduce._reduced`)."""
    n = len(coeffs)
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
    return _portfolio(coeffs, ubs, target, budget, use_numpy=use_numpy)


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
    return _Portfolio(coeffs, ubs, target, budget, use_numpy).run()


class _NoAnswer:
    """A member of the portfolio ran out of its turn's work."""


_NO_ANSWER = _NoAnswer()


class _Portfolio:
    """The state of one :func:`_portfolio` call: its members' turns and the growing limits."""

    def __init__(
        self, coeffs: list[int], ubs: list[int], target: int, budget: _Budget, use_numpy: bool
    ) -> None:
        self.coeffs, self.ubs, self.target, self.budget = coeffs, ubs, target, budget
        n = len(coeffs)
        by_bound = sorted(range(n), key=lambda i: (ubs[i], -coeffs[i]))
        self.orders = [list(range(n))] if by_bound == list(range(n)) else [list(range(n)), by_bound]
        # Steps an order can take at most, whatever the target (a huge dim beside a few small ones
        # gives the smallest-bound-first order a small sure ceiling while the other order wanders).
        self.ceilings = {
            tuple(order): _enumeration_steps([ubs[i] for i in order]) for order in self.orders
        }
        self.surest = min(self.orders, key=lambda order: self.ceilings[tuple(order)])
        self.numpy_work = _NUMPY_FIRST_WORK if use_numpy and _numpy_solver is not None else 0
        self.small = sum(c * u for c, u in zip(coeffs, ubs)) < _NUMPY_SMALL_REACH
        # Its outermost loop runs over the last coefficient's values: the largest last is safe;
        # the smallest last wins on some of NumPy's fuzz but, with huge coefficients, can spend
        # far longer than its work count suggests, so it gets turns only while numbers are small.
        self.numpy_directions = (-1, 1) if self.small else (-1,)
        self.lattice: _LatticeSearch | bool | None = None  # False: unusable on this problem
        self.limit = _FIRST_LIMIT

    def numpy_turn(self) -> list[int] | _NoAnswer | None:
        for direction in self.numpy_directions if self.numpy_work else ():
            try:
                found = _numpy_solver(
                    tuple(self.coeffs[::direction]),
                    tuple(self.ubs[::direction]),
                    self.target,
                    max_work=self.numpy_work,
                )
            except (RuntimeError, OverflowError, ValueError):
                self.budget.spend(self.numpy_work // _NUMPY_STEPS_PER_STEP)  # too much work: go on
            else:
                return None if found is None else list(found)[::direction]
        return _NO_ANSWER

    def search_turn(self) -> list[int] | _NoAnswer | None:
        coeffs, ubs = self.coeffs, self.ubs
        turns, turn_limit = self.orders, self.limit
        if self.ceilings[tuple(self.surest)] <= 2 * self.limit:  # sure to end within two turns
            turns, turn_limit = [self.surest], 2 * self.limit
        for order in turns:
            try:
                found = _search(
                    [coeffs[i] for i in order],
                    [ubs[i] for i in order],
                    self.target,
                    self.budget,
                    turn_limit,
                )
            except _StepLimit:
                continue
            if found is None:
                return None
            values = [0] * len(coeffs)
            for position, i in enumerate(order):
                values[i] = found[position]
            return values
        return _NO_ANSWER

    def lattice_turn(self) -> list[int] | _NoAnswer | None:
        if self.lattice is False:
            return _NO_ANSWER
        try:
            if self.lattice is None:
                with self.budget.paused():  # importing python-flint once is not search time
                    _load_flint()
                self.lattice = _LatticeSearch(self.coeffs, self.ubs, self.target)
            return self.lattice.search(self.budget, self.limit)
        except _Unusable:
            self.lattice = False
        except _StepLimit:
            pass
        return _NO_ANSWER

    def run(self) -> list[int] | None:
        # NumPy's solver first while its work count bounds its time; the lattice search before the
        # depth-first search (measured: fewer slow problems on the random meta layouts and the fuzz).
        if self.small:
            members = (self.numpy_turn, self.lattice_turn, self.search_turn)
        else:
            members = (self.lattice_turn, self.search_turn, self.numpy_turn)
        if (
            not self.small
        ):  # a glance first: many of these fall to a few search steps, before any setup
            self.limit = _GLANCE_LIMIT
            found = self.search_turn()
            if found is not _NO_ANSWER:
                return found  # type: ignore[return-value]
            self.limit = _FIRST_LIMIT
        while True:
            for member in members:
                found = member()
                if found is not _NO_ANSWER:
                    return found  # type: ignore[return-value]
            if self.numpy_work:
                self.numpy_work *= _NUMPY_GROWTH
                if self.budget.deadline is not None:
                    self.numpy_work = 0  # displays: keep the search's step count the only clock
            self.limit *= 4
