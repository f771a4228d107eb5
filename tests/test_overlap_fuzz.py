"""NumPy's memory-overlap fuzz (``numpy/_core/tests/test_mem_overlap.py``), adapted.

The same random streams NumPy uses to test its own solver — bounded Diophantine problems of up to
9 variables with small and huge numbers, pairs of random slices/transposes of one 4-D array, random
``as_strided`` layouts with negative strides — run through stridewidget's exact answers.  Oracles:
``np.shares_memory(max_work=None)`` for view pairs, NumPy's exact ``solve_diophantine`` plus brute
force for the knapsack, brute-force enumeration for internal overlap.  Each test runs through both
of the solver's paths: with NumPy's capped C solver (step 4) and with the pure-Python search only.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from numpy.lib.stride_tricks import as_strided

import stridewidget as sw
from stridewidget.layout.overlap import bounded_knapsack, internal_overlap_witness
from stridewidget.layout.overlap import budget as _budget
from stridewidget.layout.overlap import lattice as _lattice
from stridewidget.layout.overlap import portfolio as _portfolio
from stridewidget.layout.overlap import search as _search

INT64_MAX = np.iinfo(np.int64).max
# NumPy's own solver, wherever this NumPy keeps it (numpy._core in 2.x, numpy.core in 1.x)
solve_diophantine = _portfolio._numpy_solver


def diophantine_problems(count_per_ndim):
    """NumPy's recipe: coefficient and bound maxima drawn as k**6, so that both tiny and huge
    problems come up; targets anywhere from -1 to just past the reach."""
    rng = np.random.RandomState(1234)
    for ndim in range(10):
        for _ in range(count_per_ndim):
            a_max = 1 + int(rng.randint(0, 11)) ** 6
            u_max = int(rng.randint(0, 11)) ** 6
            coefficients = tuple(int(rng.randint(1, a_max + 1)) for _ in range(ndim))
            bounds = tuple(int(rng.randint(0, u_max + 2)) for _ in range(ndim))
            reach = min(INT64_MAX - 2, sum(a * u for a, u in zip(coefficients, bounds)))
            yield coefficients, bounds, int(rng.randint(-1, reach + 2))


def test_diophantine_fuzz_matches_numpy_and_brute_force(solver_paths):
    feasible = infeasible = brute_forced = 0
    for coefficients, bounds, target in diophantine_problems(count_per_ndim=60):
        expected = solve_diophantine(coefficients, bounds, target)
        got = bounded_knapsack(coefficients, bounds, target)
        assert (got is None) == (expected is None), (coefficients, bounds, target)
        if got is None:
            infeasible += 1
            choices = [range(0, a * u + 1, a) for a, u in zip(coefficients, bounds)]
            if np.prod([len(c) for c in choices], dtype=float) < 20_000:
                assert not any(sum(w) == target for w in itertools.product(*choices))
                brute_forced += 1
        else:
            feasible += 1
            assert sum(a * x for a, x in zip(coefficients, got)) == target
            assert all(0 <= x <= u for x, u in zip(got, bounds))
    assert min(feasible, infeasible) >= 100 and brute_forced >= 100  # the stream is not one-sided


def random_view_pairs(x, same_steps, rng):
    """Random slices (random steps, reversed half of the time) and transposes of ``x``, in pairs."""

    def random_slice(n, step):
        start = int(rng.randint(0, n + 1))
        stop = int(rng.randint(start, n + 1))
        if rng.randint(0, 2) == 0:
            return slice(stop, start, -step)
        return slice(start, stop, step)

    def random_steps():
        return [int(rng.randint(1, 11)) if rng.randint(0, 5) == 0 else 1 for _ in range(x.ndim)]

    while True:
        steps = random_steps()
        steps_b = steps if same_steps else random_steps()
        a = x[tuple(random_slice(n, s) for n, s in zip(x.shape, steps))]
        b = x[tuple(random_slice(n, s) for n, s in zip(x.shape, steps_b))]
        yield a.transpose(rng.permutation(x.ndim)), b.transpose(rng.permutation(x.ndim))


@pytest.mark.parametrize("same_steps", [True, False])
def test_view_pair_fuzz_matches_shares_memory(solver_paths, same_steps):
    x = np.zeros([17, 34, 71, 97], dtype=np.int16)
    fixed = [(x, x), (x[1:], x[:-1]), (x[..., 4:], x[..., :-4])]
    broadcast = as_strided(x, shape=x.shape, strides=(0, *x.strides[1:]))
    windows = as_strided(x, shape=x.shape, strides=(1, *x.strides[1:]))
    fixed += [(x, broadcast), (broadcast, broadcast), (x, windows), (windows, windows)]
    pairs = itertools.chain(fixed, random_view_pairs(x, same_steps, np.random.RandomState(1234)))
    shared = disjoint = 0
    for a, b in itertools.islice(pairs, 20_000):
        expected = bool(np.shares_memory(a, b, max_work=None))
        assert sw.overlap(a, b) == expected, (a.shape, a.strides, b.shape, b.strides)
        if np.may_share_memory(a, b):  # bounds overlap: the question is not trivial
            shared += expected
            disjoint += not expected
        if min(shared, disjoint) >= 200:
            break
    assert min(shared, disjoint) >= 200


def test_internal_overlap_fuzz_matches_enumeration(solver_paths):
    rng = np.random.RandomState(1234)
    counts = {True: 0, False: 0}
    while min(counts.values()) < 150:
        ndim = int(rng.randint(1, 4))
        strides = tuple(int(rng.randint(-1000, 1000)) for _ in range(ndim))
        shape = tuple(int(rng.randint(1, 30)) for _ in range(ndim))
        addresses = [
            sum(i * s for i, s in zip(index, strides))
            for index in itertools.product(*(range(n) for n in shape))
        ]
        expected = len(set(addresses)) < len(addresses)
        witness = internal_overlap_witness(shape, strides)
        assert (witness is not None) == expected, (shape, strides)
        if witness is not None:
            first, second = witness
            assert first != second
            assert sum(i * s for i, s in zip(first, strides)) == sum(
                i * s for i, s in zip(second, strides)
            )
        counts[expected] += 1


def test_slices_and_transposes_never_overlap_internally():
    x = np.zeros([17, 34, 71, 97], dtype=np.int16)
    for a, _ in itertools.islice(random_view_pairs(x, False, np.random.RandomState(99)), 2000):
        assert not sw.inspect(a).has_overlap, (a.shape, a.strides)


@given(
    problem=st.lists(
        st.tuples(st.integers(1, 40), st.integers(1, 4)), min_size=3, max_size=6
    ).flatmap(
        lambda terms: st.tuples(st.just(terms), st.integers(-1, sum(c * u for c, u in terms) + 1))
    )
)
@settings(max_examples=300, deadline=None)
def test_search_never_outruns_its_enumeration_ceiling(problem):
    """The portfolio runs one order alone with ``_enumeration_steps`` as its share; the search
    must end within it, with brute force's answer."""
    terms, target = problem
    coefficients, bounds = [c for c, _ in terms], [u for _, u in terms]
    found = _search._search(
        coefficients,
        bounds,
        target,
        _budget._Budget(None),
        _search._enumeration_steps(bounds),
    )  # raises _StepLimit if the ceiling were too low
    reachable = any(
        sum(c * x for c, x in zip(coefficients, xs)) == target
        for xs in itertools.product(*(range(u + 1) for u in bounds))
    )
    assert (found is not None) == reachable
    if found is not None:
        assert sum(c * x for c, x in zip(coefficients, found)) == target
        assert all(0 <= x <= u for x, u in zip(found, bounds))


def reduced(coefficients, bounds, target):
    """The problem as the portfolio receives it: equal coefficients merged, gcd divided out."""
    merged = {}
    for c, u in zip(coefficients, bounds):
        if u > 0:
            merged[c] = merged.get(c, 0) + u
    coeffs = sorted(merged, reverse=True)
    if len(coeffs) < 2 or target < 0:
        return None
    g = np.gcd.reduce(coeffs)
    if target % g:
        return None
    return [c // int(g) for c in coeffs], [merged[c] for c in coeffs], target // int(g)


def lattice_answer(coeffs, ubs, target):
    search = _lattice._LatticeSearch(coeffs, ubs, target)
    return search.search(_budget._Budget(None), 10**9)


def test_lattice_search_alone_matches_numpy_on_the_diophantine_fuzz():
    """Step 6 by itself, without the portfolio's other members, on NumPy's stream."""
    checked = {True: 0, False: 0}
    for coefficients, bounds, target in diophantine_problems(count_per_ndim=60):
        problem = reduced(coefficients, bounds, target)
        if problem is None or sum(c * u for c, u in zip(*problem[:2])) >= 2**62:
            continue
        expected = solve_diophantine(tuple(problem[0]), tuple(problem[1]), problem[2])
        got = lattice_answer(*problem)
        assert (got is None) == (expected is None), problem
        if got is not None:
            assert sum(c * x for c, x in zip(problem[0], got)) == problem[2]
            assert all(0 <= x <= u for x, u in zip(got, problem[1]))
        checked[got is not None] += 1
    assert min(checked.values()) >= 50, checked


@given(
    terms=st.lists(
        st.tuples(
            st.one_of(st.integers(1, 60), st.integers(1, 10**12)),  # small and huge strides
            st.integers(1, 6),
        ),
        min_size=2,
        max_size=5,
        unique_by=lambda term: term[0],
    ),
    where=st.floats(0, 1),
    near=st.integers(-3, 3),
)
@example(terms=[(16, 3), (26, 2)], where=0.625, near=-2)  # Babai once rocked between two points
@settings(max_examples=300, deadline=None)
def test_lattice_search_alone_matches_enumeration(terms, where, near):
    """Brute force over every point of the box, targets anywhere in the reach and next to a
    reachable sum (where the answer flips)."""
    coefficients, bounds = [c for c, _ in terms], [u for _, u in terms]
    sums = {0}
    for c, u in terms:
        sums = {s + c * x for s in sums for x in range(u + 1)}
    ordered = sorted(sums)
    target = ordered[int(where * (len(ordered) - 1))] + near
    problem = reduced(coefficients, bounds, target)
    if problem is None:  # the gcd or the sign decides it before any search
        assert target not in sums
        return
    got = lattice_answer(*problem)
    assert (got is not None) == (target in sums)
    if got is not None:
        assert sum(c * x for c, x in zip(problem[0], got)) == problem[2]
        assert all(0 <= x <= u for x, u in zip(got, problem[1]))


@given(st.lists(st.integers(1, 10**15), min_size=2, max_size=8))
def test_kernel_basis_spans_the_whole_kernel(coeffs):
    """Each vector is in the kernel, and the basis's Gram determinant equals |c|^2 / gcd(c)^2,
    the kernel lattice's: a proper sublattice would have a larger one."""
    import flint

    basis, unit = _lattice._kernel_basis(coeffs)
    g = int(np.gcd.reduce(np.array(coeffs, dtype=object)))
    assert sum(c * w for c, w in zip(coeffs, unit)) == g
    assert all(sum(c * v for c, v in zip(coeffs, row)) == 0 for row in basis)
    matrix = flint.fmpz_mat(basis)
    gram = int((matrix * matrix.transpose()).det())
    assert gram * g * g == sum(c * c for c in coeffs)
