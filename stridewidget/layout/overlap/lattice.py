"""The lattice search of the overlap solver: few solutions among huge products of bounds.

Problem.  ``sum(c_i * x_i) == t`` with ``0 <= x_i <= u_i`` (positive coefficients, gcd 1) where
the depth-first search (:mod:`.search`) and NumPy's solver enumerate a product of bounds: three
or more coefficients of 10**11 or more with long bounds (10**3 to 10**6 values), no divisor
relation, beside a few small coefficients (element widths, strides under 10**6).  No reduction
applies (the width's coefficient 1 makes every gcd 1; the small coefficients make the count bound
useless).  The solutions of such a problem are a few points of a sparse lattice: exactly what
lattice reduction finds in polynomial time for a fixed number of variables [4].

Method (:class:`_LatticeSearch`, after [2]).  The solutions of ``sum(c*x) == t`` are ``x0 + K``,
with ``K`` the rank ``n-1`` lattice of integer vectors orthogonal to ``c`` (:func:`_kernel_basis`).
Tighten the box (``x_i <= t / c_i`` and the same from the far corner), scale each coordinate so
that the box becomes a cube, reduce a basis of ``K`` with LLL [1] (FLINT's exact ``fmpz_lll``,
through python-flint's ``fmpz_mat.lll`` [5]), move ``x0`` next to the box's centre (Babai's nearest
plane [3]), and enumerate the lattice points in the ball around the centre that holds the box
(Schnorr-Euchner [6]: nearest first, pruned level by level with Gram-Schmidt norms), each checked
against the box in exact integers.  The last two levels use the box itself: the second-to-last
multiple only takes the values whose line meets the box (Fourier-Motzkin elimination in integers,
:func:`_lines_in_box`), and along the shortest basis vector the stretch of the line inside the box
is computed instead of enumerated (:func:`_line_in_box`).  Floats only choose candidates
(intervals widened by ``_LATTICE_MARGIN``, far above double rounding on a reduced basis); every
answer is checked exactly.  A hand-written LLL in Python was not tried: FLINT's is exact, C, and
maintained.

Cost.  Setup: one LLL reduction of an ``(n-1) x n`` integer matrix and a QR factorisation;
memory O(n**2).  A reduced basis makes the ball hold about as many lattice points as its volume
over the lattice's determinant (for the huge-stride problems above, a handful), so the product of
the bounds no longer matters; the enumeration visits those points plus the tree above them, which a
reduced basis keeps small.  ``benchmarks/bench_inspect.py`` measures the setup and the searches.

Failure modes.
* Slow where the ball holds far more lattice points than the box's slice of the solutions' plane:
  a target near a corner of the box with many huge coefficients over long bounds.  After
  tightening, the solutions lie in a simplex, and the ball around a simplex of dimension ``d`` is
  about ``d**(d/2)`` times larger; cutting the last two levels to the box removes most of that, not
  all.  This is two views of 4 to 5 dims each, strides of 10**9 to 10**12, sizes of 10**5 to 10**6
  (an exabyte-scale meta storage), whose first elements lie close together next to their spans
  (``CORNER_CASES`` in ``benchmarks/bench_inspect.py``, which times them).  Removing it would take
  branching on the polytope's width with a linear program per node (Lenstra's algorithm proper
  [4]) instead of a ball.
* Unusable (:class:`_Unusable`: the portfolio goes on without it, losing speed, never exactness)
  without python-flint, with numbers beyond a float, or when Babai's passes do not settle.

References.
1. A. K. Lenstra, H. W. Lenstra Jr., L. Lovász, "Factoring polynomials with rational
   coefficients", Mathematische Annalen 261, 515-534 (1982): the LLL reduction.
2. K. Aardal, C. A. J. Hurkens, A. K. Lenstra, "Solving a system of linear Diophantine equations
   with lower and upper bounds on the variables", Mathematics of Operations Research 25(3),
   427-442 (2000): the kernel lattice, the scaled box and the reduced basis.
3. L. Babai, "On Lovász' lattice reduction and the nearest lattice point problem", Combinatorica
   6, 1-13 (1986): the nearest-plane step.
4. H. W. Lenstra Jr., "Integer programming with a fixed number of variables", Mathematics of
   Operations Research 8(4), 538-548 (1983).
5. python-flint, ``flint.fmpz_mat.lll`` (``transform``, ``delta=0.99``, ``eta=0.51``, ``rep``,
   ``gram``), https://python-flint.readthedocs.io/: the binding of FLINT's ``fmpz_lll``.
6. C. P. Schnorr, M. Euchner, "Lattice basis reduction: improved practical algorithms and solving
   subset sum problems", Mathematical Programming 66, 181-199 (1994): the enumeration order.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import Any

from .budget import _Budget, _StepLimit

#: Relative margin on the lattice search's float bounds (double rounding is ~1e-16).
_LATTICE_MARGIN = 1e-9
#: Babai passes before the lattice search gives up on a problem (each gains ~50 bits).
_BABAI_PASSES = 40

#: python-flint (FLINT's exact LLL): imported on first use, ``None`` if absent.
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
    target near a corner of the box (the module docstring's failure modes).  Floats only choose
    the candidates: every interval is widened by a margin far above double rounding on a reduced
    basis, and every point is checked exactly.
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
