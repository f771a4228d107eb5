"""Overlap questions about views, reduced to bounded knapsack problems: the entry points.

Problem.  Do two different logical indices of one view map to the same storage cell (internal
overlap)?  Do two views share a cell (pairwise overlap)?  How many distinct cells does a view
touch?  Each set of cells is ``{start + sum(i_k * stride_k) + w : 0 <= i_k < shape_k,
0 <= w < width}``.

Method.  Each question becomes *bounded knapsack feasibility*: positive coefficients ``c_i``
(strides), bounds ``u_i`` and a target ``t``; is there ``0 <= x_i <= u_i`` with
``sum(c_i * x_i) == t``?  (``mem_overlap.c`` [1] makes the same reduction.)  Dims become variables:
negative strides flip (``x -> u - x``), size-1 and stride-0 dims drop out (a stride 0 is overlap at
once), an element width is one more variable of coefficient 1.  Then the problem shrinks before
any search: variables with bound 0 are dropped; variables with **equal coefficients merge** into one
whose bound is the sum (``x[::2]`` vs ``x[1::2]`` gives two equal strides); the gcd of the
coefficients divides the target and then every coefficient; a target beyond the reach fails.
What is left goes to :func:`.portfolio._solve`; :func:`ranges_overlap`, which needs no
witness, answers two coefficients by extended Euclid (:func:`.closed._two_variable`) and first
asks :func:`.bitset._sums_reach` for more, which answers when the target has few bits.
:func:`count_touched` asks the internal overlap question, and, for a self-overlapping view,
merges the arithmetic runs of its smallest-stride dim (NumPy enumeration).

Cost.  The reductions are O(n log n) for n variables; the search after them is exact and
exponential in the worst case (:mod:`.portfolio`).  ``count_touched`` enumerates at most ``limit``
run starts, about 50 bytes each.

Failure modes.  With ``max_work`` / ``max_seconds``, :class:`Undecided` when the budget runs out;
without them, none (slow where every member of the portfolio is slow).  ``count_touched`` gives an
upper bound flagged ``False`` beyond ``limit`` run starts or int64 addresses.

References.
1. NumPy, ``numpy/_core/src/common/mem_overlap.c`` (Pauli Virtanen, 2015): memory overlap as a
   bounded Diophantine equation with positive coefficients, negative strides flipped and the
   item size one more variable.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ..ints import INT64_SAFE as _INT64_SAFE
from ..strides import span
from .bitset import _sums_reach
from .budget import _Budget
from .closed import _two_variable
from .portfolio import _solve

__all__ = [
    "bounded_knapsack",
    "count_touched",
    "internal_overlap_witness",
    "ranges_overlap",
    "ranges_overlap_witness",
]


def bounded_knapsack(
    coefficients: Sequence[int],
    bounds: Sequence[int],
    target: int,
    *,
    max_work: int | None = None,
    max_seconds: float | None = None,
) -> list[int] | None:
    """Find ``x`` with ``0 <= x[i] <= bounds[i]`` and ``sum(c*x) == target``, exactly, or ``None``.

    Coefficients must be positive.  See the package docstring for the method and its cost.  With
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
    values = _reduced(coeffs, [merged[c] for c in coeffs], target, budget)
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


def _reduced(coeffs: list[int], ubs: list[int], target: int, budget: _Budget) -> list[int] | None:
    """Step 1 of the package docstring (gcd, reach) on distinct coefficients sorted from the
    largest down, then the solvers (:func:`.portfolio._solve`)."""
    if not coeffs:
        return [] if target == 0 else None
    g = math.gcd(*coeffs)
    if target % g:
        return None
    coeffs = [c // g for c in coeffs]
    target //= g
    reach = sum(c * u for c, u in zip(coeffs, ubs))
    if target > reach:
        return None
    return _solve(coeffs, ubs, target, budget, use_numpy=reach < _INT64_SAFE)


def _stepped_past(shape: Sequence[int], strides: Sequence[int], width: int) -> bool:
    """No overlap, by the cheap sufficient test (torch's own): by increasing ``|stride|``, each
    stride steps past every cell the smaller dims reach.  Every dense or sliced view passes it."""
    if len(shape) == 1:  # the commonest case, without the sort
        return shape[0] <= 1 or abs(strides[0]) >= width
    reach = width
    for stride, n in sorted([(abs(s), n) for n, s in zip(shape, strides) if n > 1]):
        if stride < reach:
            return False
        reach += stride * (n - 1)
    return True


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
    if 0 in shape or _stepped_past(shape, strides, width):
        return None
    ndim = len(shape)
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
    # The witness's problem, built in one pass without the witness: the hot path of ``sw.overlap``.
    if width_a <= 0 or width_b <= 0:
        return False
    merged: dict[int, int] = {}
    lo_a = hi_a = start_a
    for n, s in zip(shape_a, strides_a):
        if n <= 1:
            if n == 0:
                return False
        elif s > 0:
            hi_a += s * (n - 1)
            merged[s] = merged.get(s, 0) + n - 1
        elif s < 0:
            lo_a += s * (n - 1)
            merged[-s] = merged.get(-s, 0) + n - 1
    lo_b = hi_b = start_b
    for n, s in zip(shape_b, strides_b):
        if n <= 1:
            if n == 0:
                return False
        elif s > 0:
            hi_b += s * (n - 1)
            merged[s] = merged.get(s, 0) + n - 1
        elif s < 0:
            lo_b += s * (n - 1)
            merged[-s] = merged.get(-s, 0) + n - 1
    if hi_a + width_a <= lo_b or hi_b + width_b <= lo_a:
        return False  # the byte extents do not meet
    if width_a + width_b > 2:
        merged[1] = merged.get(1, 0) + width_a + width_b - 2
    coeffs = sorted(merged, reverse=True)
    target = hi_b + width_b - 1 - lo_a
    larger = 0
    for c in coeffs:
        if larger % c:
            break
        larger = c
    else:  # a divisor chain (slices of one contiguous tensor): greedy is exact
        for c in coeffs:
            target -= c * min(merged[c], target // c)
        return target == 0
    if len(coeffs) == 2:  # extended Euclid (x[::3] against x[1::5], say)
        c1, c2 = coeffs
        return _two_variable(c1, merged[c1], c2, merged[c2], target) is not None
    bounds = [merged[c] for c in coeffs]
    reach = hi_a - lo_a + hi_b - lo_b + width_a + width_b - 2  # sum(c * bound)
    small = _sums_reach(coeffs, bounds, target, reach)  # few bits: every sum at once, exact
    if small is not None:
        return small
    return _reduced(coeffs, bounds, target, _Budget(max_work, max_seconds)) is not None


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
    lo_a, hi_a = span(shape_a, strides_a, start_a)  # type: ignore[misc]
    lo_b, hi_b = span(shape_b, strides_b, start_b)  # type: ignore[misc]
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
    if 0 in shape:
        return 0, True
    if _stepped_past(shape, strides, width):
        return math.prod(shape) * width, True
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
