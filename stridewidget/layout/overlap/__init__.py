"""Exact overlap questions about strided layouts, as pure integer problems.

Problem.  Two questions come up again and again:

* **internal overlap** — do two different logical indices of one view map to the same storage cell?
* **pairwise overlap** — do two views share at least one storage cell?

Both reduce to *bounded knapsack feasibility*: given positive coefficients ``c_i`` (strides), bounds
``u_i`` and a target ``t``, is there an integer vector ``0 <= x_i <= u_i`` with ``sum(c_i * x_i) == t``?
(NumPy's ``mem_overlap.c`` [1] makes the same reduction.)  The problem is NP-hard in general; this
package answers it *exactly* — never "too hard" — unless the caller passes a work budget
(``max_work`` / ``max_seconds``), which only the displays do: they say "not decided" when it runs
out (:class:`Undecided`).

Method, in the order it is tried (each step is exact), and where each lives:

1. Reductions (:mod:`.reduce`): views become problems; equal coefficients merge, the gcd divides
   out, a target beyond the reach fails.
2. Closed forms (:mod:`.closed`): one or two variables (extended Euclid), divisor chains (greedy).
   Pairwise overlap (a yes or no) of small problems next: every reachable sum at once, as the bits
   of one integer (:mod:`.bitset`; a few µs where the portfolio's set-up alone costs more).
3. The count split (:mod:`.search`): near-equal huge coefficients leave few possible totals
   ``sum(x)``, each a problem with small weights.
4. The portfolio (:mod:`.portfolio`): NumPy's C solver [1, 2], the lattice search and the
   depth-first search take turns under growing step limits.
5. The depth-first search (:mod:`.search`), memoised and pruned by range, gcd and count.
6. The lattice search (:mod:`.lattice`): LLL through python-flint, then enumeration in a ball.
:mod:`.budget` keeps the work accounting all of them share.

Why this method: measured side by side (``benchmarks/bench_inspect.py``: NumPy's diophantine and
view-pair fuzz streams [3], issue 11's families, random 1-6-D meta layouts with sizes up to 10**6
and strides up to 10**12).  Without step 6, every slow instance had the same shape: three or more
coefficients of 10**11 or more with long bounds, no divisor relation, beside a few small
coefficients; every search order, NumPy's included, enumerates a product of bounds there (the
internal overlap of ``(2, 100, 10**6, 10**6, 1000):(84, 1, 951793374218, 714707845745,
672294410367)`` is one, now decided within a display's budget).  The solutions of such a problem
are a few points of a sparse lattice: exactly what lattice reduction finds.

Cost.  Steps 1-3 are O(n log n) for n variables; steps 4-6 are exact and exponential in the worst
case, like every known method for a problem that is NP-hard; memory stays bounded (the search's memo
is capped, the lattice search's memory is O(n**2)).

Failure modes.  Slow, never wrong: a target near a corner of the box with many huge coefficients
over long bounds (:mod:`.lattice` says why; ``CORNER_CASES`` in ``benchmarks/bench_inspect.py``
times the worst found).  Displays never wait for it.  Without NumPy's private solver or
python-flint, only speed is lost.  Ctrl-C stops every member written in Python like any loop.

All functions here take plain tuples of ints: no tensors, no NumPy arrays.

References.
1. NumPy, ``numpy/_core/src/common/mem_overlap.c`` (Pauli Virtanen, 2015): memory overlap as a
   bounded Diophantine equation, and ``solve_diophantine``, the solver behind ``np.shares_memory``.
2. P. Ramachandran, "Use of Extended Euclidean Algorithm in Solving a System of Linear
   Diophantine Equations with Bounded Variables", Algorithmic Number Theory, Lecture Notes in
   Computer Science 4076, 182-192 (2006).
3. NumPy, ``numpy/_core/tests/test_mem_overlap.py``: the fuzz streams ``tests/test_overlap_fuzz.py``
   adapts.
4. A. K. Lenstra, H. W. Lenstra Jr., L. Lovász, "Factoring polynomials with rational
   coefficients", Mathematische Annalen 261, 515-534 (1982); the lattice search's other
   references are in :mod:`.lattice`.
"""

from __future__ import annotations

from .budget import Undecided
from .reduce import (
    bounded_knapsack,
    count_touched,
    internal_overlap_witness,
    ranges_overlap,
    ranges_overlap_witness,
)

__all__ = [
    "Undecided",
    "bounded_knapsack",
    "count_touched",
    "internal_overlap_witness",
    "ranges_overlap",
    "ranges_overlap_witness",
]
