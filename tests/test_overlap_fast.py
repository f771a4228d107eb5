"""Issue 41 (F4): ``sw.overlap``'s fast exact path for small problems (:mod:`.overlap.bitset`)
against brute force over byte sets.

Every answer is compared with the set of bytes each view touches, computed from the view's own
``storage_offset`` / ``stride`` / ``size`` / ``element_size`` (NumPy: its data pointer and byte
strides), so a fast path that ever answers wrong fails here: non-dividing strides, negative NumPy
strides, ``unfold``, ``as_strided`` windows that overlap themselves, and dtype views of one storage.
"""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest
import torch
from numpy.lib.stride_tricks import as_strided as np_as_strided

import stridewidget as sw
from stridewidget.layout.overlap import bitset
from stridewidget.layout.overlap import reduce as _reduce


def torch_bytes(t: torch.Tensor) -> set[int]:
    """The bytes of its storage that a tensor's elements cover."""
    width, start, strides = t.element_size(), t.storage_offset(), t.stride()
    cells = set()
    for index in itertools.product(*map(range, t.shape)):
        element = start + sum(i * s for i, s in zip(index, strides))
        cells.update(range(element * width, (element + 1) * width))
    return cells


def numpy_bytes(a: np.ndarray) -> set[int]:
    """The bytes of memory (absolute addresses) an array's elements cover."""
    start, width = a.__array_interface__["data"][0], a.itemsize
    cells = set()
    for index in itertools.product(*map(range, a.shape)):
        first = start + sum(i * s for i, s in zip(index, a.strides))
        cells.update(range(first, first + width))
    return cells


@pytest.fixture(params=["fast path", "solver only"])
def fast_path(request, monkeypatch):
    """Each test with the bitset path, and with it declined (the portfolio answers instead)."""
    calls = {"decided": 0}
    original = _reduce._sums_reach

    def counted(*args):
        answer = original(*args) if request.param == "fast path" else None
        calls["decided"] += answer is not None
        return answer

    monkeypatch.setattr(_reduce, "_sums_reach", counted)
    calls["mode"] = request.param
    return calls


def random_torch_view(rng: random.Random, storage: torch.Tensor) -> torch.Tensor:
    """A random ``as_strided`` view (strides that need not divide each other, stride 0, windows
    overlapping themselves) of ``storage`` seen as a random dtype."""
    dtype = rng.choice([torch.float32, torch.int16, torch.int8, torch.float64])
    flat = storage.view(dtype)
    ndim = rng.randint(1, 4)
    size = [rng.randint(1, 5) for _ in range(ndim)]
    stride = [rng.randint(0, 13) for _ in range(ndim)]
    reach = sum(s * (n - 1) for n, s in zip(size, stride))
    if reach >= flat.numel():
        return flat[: rng.randint(1, 9)]
    return torch.as_strided(flat, size, stride, rng.randint(0, flat.numel() - reach - 1))


def check_pairs(pairs, bytes_of, fast_path, least: int = 50, fast: int = 50) -> None:
    """Each pair's answer is brute force's; at least ``least`` pairs whose extents meet, each
    way, and ``fast`` of them decided by the bitset path."""
    answers = {True: 0, False: 0}
    for a, b in pairs:
        cells_a, cells_b = bytes_of(a), bytes_of(b)
        expected = not cells_a.isdisjoint(cells_b)
        assert sw.overlap(a, b) == expected, (a.shape, a.stride(), b.shape, b.stride())
        assert sw.overlap(b, a) == expected
        if cells_a and cells_b and min(cells_a) <= max(cells_b) and min(cells_b) <= max(cells_a):
            answers[expected] += 1
    assert min(answers.values()) >= least, answers
    if fast_path["mode"] == "fast path":
        assert fast_path["decided"] >= fast  # the pairs above reached the bitset path


def test_random_strided_and_dtype_views_match_brute_force(fast_path):
    rng = random.Random(41)
    storage = torch.zeros(96)  # 384 bytes, seen as float32, int16, int8 or float64

    def pairs():
        for _ in range(1500):
            yield random_torch_view(rng, storage), random_torch_view(rng, storage)

    check_pairs(pairs(), torch_bytes, fast_path)


def test_unfold_and_strided_slices_match_brute_force(fast_path):
    x = torch.arange(60.0)
    views = [x.unfold(0, size, step) for size in (2, 3, 4, 5) for step in (1, 2, 3, 5, 7)]
    views += [x[start::step] for start in (0, 1, 2, 5) for step in (2, 3, 4, 7)]
    views += [x.view(torch.int16)[1::3], x.view(torch.int8)[3::5], x[6:46].view(5, 4, 2)[:, 1::3]]
    check_pairs(itertools.combinations(views, 2), torch_bytes, fast_path, least=30)


def test_negative_numpy_strides_match_brute_force(fast_path):
    rng = np.random.RandomState(41)
    base = np.zeros(360, dtype=np.int16)

    def view():
        a = base.view(rng.choice([np.int16, np.int8, np.int32]))
        grid = a.reshape(6, -1)
        steps = [int(rng.choice([-3, -2, -1, 1, 2, 3, 5])) for _ in range(2)]
        v = grid[:: steps[0], :: steps[1]][: rng.randint(1, 4), : rng.randint(1, 7)]
        if rng.randint(0, 3) == 0:  # self-overlapping windows, read backwards
            size = (rng.randint(1, 5), rng.randint(1, 4))
            v = np_as_strided(a[-1:], size, (-a.itemsize * rng.randint(1, 9), -a.itemsize))
        return v.T if rng.randint(0, 2) else v

    # two ndarrays ask NumPy first (``arrays_overlap``); mixed with a tensor's bytes below
    check_pairs(((view(), view()) for _ in range(1500)), numpy_bytes, fast_path, fast=0)


def test_negative_strides_and_widths_in_ranges_overlap_match_brute_force(fast_path):
    """``ranges_overlap`` itself (what ``sw.overlap`` asks for tensors and mixed pairs): negative
    strides, elements several cells wide, self-overlapping windows."""
    rng = random.Random(4101)

    def strided():
        ndim = rng.randint(1, 4)
        shape = tuple(rng.randint(1, 5) for _ in range(ndim))
        strides = tuple(rng.choice([-1, 1]) * rng.randint(0, 13) for _ in range(ndim))
        return shape, strides, rng.randint(0, 120), rng.choice([1, 1, 2, 3, 4, 8])

    def cells(shape, strides, start, width):
        found = set()
        for index in itertools.product(*map(range, shape)):
            first = start + sum(i * s for i, s in zip(index, strides))
            found.update(range(first, first + width))
        return found

    answers = {True: 0, False: 0}
    for _ in range(3000):
        a, b = strided(), strided()
        expected = not cells(*a).isdisjoint(cells(*b))
        assert _reduce.ranges_overlap(*a, *b) == expected, (a, b)
        answers[expected] += 1
    assert min(answers.values()) >= 300, answers
    if fast_path["mode"] == "fast path":
        assert fast_path["decided"] >= 300


def test_the_issues_pair_takes_the_fast_path(monkeypatch):
    """``x.unfold(0, 4, 3)`` against ``x[1::2]`` (three strides, none dividing another) is decided
    without the portfolio."""

    def no_solver(*args):
        raise AssertionError("the portfolio was asked")

    monkeypatch.setattr(_reduce, "_reduced", no_solver)
    x = torch.arange(40.0)
    assert sw.overlap(x.unfold(0, 4, 3), x[1::2])
    assert not sw.overlap(x.unfold(0, 2, 4), x[2::4])  # {4k, 4k+1} and {4k+2}


def brute_reach(coeffs, bounds, target) -> bool:
    sums = {0}
    for c, u in zip(coeffs, bounds):
        sums = {s + c * x for s in sums for x in range(u + 1)}
    return target in sums


def test_sums_reach_matches_enumeration():
    rng = random.Random(4141)
    decided = 0
    for _ in range(3000):
        n = rng.randint(1, 5)
        coeffs = [rng.randint(1, rng.choice([3, 12, 40, 200])) for _ in range(n)]
        bounds = [rng.randint(0, 7) for _ in range(n)]
        reach = sum(c * u for c, u in zip(coeffs, bounds))
        target = rng.randint(-2, reach + 2)
        answer = bitset._sums_reach(coeffs, bounds, target, reach)
        if answer is not None:
            decided += 1
            assert answer == brute_reach(coeffs, bounds, target), (coeffs, bounds, target)
    assert decided > 2900


def test_sums_reach_declines_what_would_be_slow():
    assert bitset._sums_reach([10**12, 7, 3], [10**6, 9, 9], 10**14, 10**18 + 90) is None
    assert bitset._sums_reach([1, 3], [10**7, 10**7], 2 * 10**7, 4 * 10**7) is None
    # what needs no bits is still answered: the gcd, the reach
    assert bitset._sums_reach([10**12, 10**6], [10**6, 9], 10**12 + 1, 10**18 + 9 * 10**6) is False
    assert bitset._sums_reach([10**12, 3], [10**6, 9], 10**18 + 28, 10**18 + 27) is False


def test_every_sets_the_bits_of_an_arithmetic_run():
    for step in (1, 2, 3, 29, 30, 31, 64, 100):  # one-digit division, then doubling
        for count in range(1, 20):
            assert bitset._every(step, count) == sum(1 << (step * j) for j in range(count))


def test_large_last_coefficients_match_enumeration():
    """The last variable's test with a coefficient of 30 or more (``_every`` by doubling)."""
    rng = random.Random(3030)
    for _ in range(1000):
        coeffs = [rng.randint(30, 90), rng.randint(30, 90), rng.randint(1, 29)]
        bounds = [rng.randint(1, 40), rng.randint(0, 3), rng.randint(0, 3)]
        reach = sum(c * u for c, u in zip(coeffs, bounds))
        target = rng.randint(0, reach)
        answer = bitset._sums_reach(coeffs, bounds, target, reach)
        assert answer is not None
        assert answer == brute_reach(coeffs, bounds, target), (coeffs, bounds, target)
