"""Issue 41's hot path, before and after, side by side in one run: ``sw.inspect`` of a plain CPU
tensor, ``sw.overlap`` of typical pairs, each beside NumPy's ``np.shares_memory(max_work=None)``
on the same pairs.

* ``inspect``: ``sw.inspect(torch.arange(10.0))`` alone, then with the facts a user asks first
  (``is_contiguous``, ``has_overlap``, ``touched``, ``span``).
* ``y[:, :2] vs y[:, 2:]``: the issue's plain pair, slices of a ``(4, 5, 6)`` tensor.
* ``torch pairs``: the pairs of ``bench_inspect.py``'s ``overlap_cases`` (transposes, slices,
  expands, sliding windows, blocks, random ``as_strided`` up to 6-D), median over the pairs.
* ``numpy pairs``: NumPy's own view-pair fuzz stream (400 pairs of random slices and transposes
  of one 4-D int16 array): the issue's "typical pair", median over the pairs.
* ``unfold(0, 4, 3) vs x[1::2]``: issue 41's F4, three strides none of which divides another
  (``x = torch.arange(40.)``): what the portfolio's set-up made slow, now the bitset's.
* ``random <=6-D pairs``: 200 pairs of random ``as_strided`` views (1-6 dims, sizes 1-6,
  strides 1-60) of one 5000-element storage, the median and the 90th percentile over the pairs;
  below the table, the median and 90th percentile of each pair's own after/NumPy ratio; and the
  median over the pairs that reach a solver (extents meet, strides not a divisor chain).
* ``..., bytes meet``: the pairs of the two rows above whose byte extents meet (first to last
  byte), so that no extent test decides them and an exact solver runs (most of the other pairs
  are settled by comparing extents): what the rows above measure, and what they do not.  For
  tensors that solver is the package's ``ranges_overlap``; for two ndarrays it is NumPy's own
  ``np.shares_memory`` within ``NUMPY_OVERLAP_WORK`` first (NumPy's pairs have negative strides,
  which torch cannot view).

The *before* column runs the same timings in a second interpreter whose ``stridewidget`` is the
one to compare with (``--before PYTHON``; by default the main checkout's
``/work/main/.venv/bin/python``, run from ``/`` so that it imports its own tree; ``--before-tree``
puts another source tree first, say an export of the commit to compare with).  Ratios:
after/NumPy (target <= 10) and before/after.

Run:  python benchmarks/bench_hot_path.py [--before PYTHON] [--before-tree DIR] [--json FILE]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import statistics
import subprocess
import sys

import numpy as np
import torch
from bench_inspect import best_of, numpy_fuzz_pairs, overlap_cases

import stridewidget as sw

MAIN_PYTHON = "/work/main/.venv/bin/python"


def _bytes_meet(a: np.ndarray, b: np.ndarray) -> bool:
    """Do the byte extents (first to last byte) of two non-empty arrays meet?"""
    if not (a.size and b.size):
        return False
    (low_a, high_a), (low_b, high_b) = _byte_bounds(a), _byte_bounds(b)
    return low_a < high_b and low_b < high_a


def _byte_bounds(a: np.ndarray) -> tuple[int, int]:
    try:
        from numpy.lib.array_utils import byte_bounds
    except ImportError:  # NumPy < 2.0
        from numpy import byte_bounds
    return byte_bounds(a)


def _meeting_torch_pairs() -> list:
    return [(a, b) for _, a, b in overlap_cases() if _bytes_meet(a.numpy(), b.numpy())]


def _meeting_numpy_pairs() -> list:
    return [(a, b) for a, b in numpy_fuzz_pairs(400) if _bytes_meet(a, b)]


def _pairs_median(pairs, fn, number: int) -> float:
    return statistics.median(_pair_times(pairs, fn, number))


def _pair_times(pairs, fn, number: int) -> list[float]:
    return [best_of(lambda a=a, b=b: fn(a, b), number=number, repeat=5) for a, b in pairs]


def _p90(times: list[float]) -> float:
    return statistics.quantiles(times, n=10)[8]


def random_view_pairs(count: int = 200, seed: int = 0) -> list:
    """Pairs of random ``as_strided`` views (1-6 dims) of one storage, as ``overlap_cases``."""
    rng = random.Random(seed)
    storage = torch.zeros(5000)
    pairs = []
    for _ in range(count):
        views = []
        for _ in range(2):
            size = [rng.randint(1, 6) for _ in range(rng.randint(1, 6))]
            stride = [rng.randint(1, 60) for _ in size]
            reach = sum(s * (n - 1) for n, s in zip(size, stride))
            views.append(torch.as_strided(storage, size, stride, rng.randint(0, 4999 - reach)))
        pairs.append(tuple(views))
    return pairs


def _unfold_pair() -> tuple:
    x = torch.arange(40.0)
    return x.unfold(0, 4, 3), x[1::2]


def _random_rows(fn, pairs) -> dict[str, float]:
    times = _pair_times(pairs, fn, 100)
    solved = [t for t, hard in zip(times, _not_nested(random_view_pairs())) if hard]
    return {
        "overlap, 200 random pairs (median)": statistics.median(times),
        "overlap, 200 random pairs (p90)": _p90(times),
        f"  random pairs, a solver's ({len(solved)}, median)": statistics.median(solved),
    }


def _not_nested(pairs) -> list[bool]:
    """Which pairs reach a solver: extents that meet, strides that are not a divisor chain."""
    found = []
    for a, b in pairs:
        steps = sorted({abs(s) for t in (a, b) for n, s in zip(t.shape, t.stride()) if n > 1})
        chain = all(larger % smaller == 0 for smaller, larger in itertools.pairwise(steps))
        found.append(_bytes_meet(a.numpy(), b.numpy()) and not chain)
    return found


def time_hot() -> dict[str, float]:
    """Seconds per call of each row (the stridewidget side only; NumPy is timed by the caller)."""
    small = torch.arange(10.0)

    def facts(x):
        lay = sw.inspect(x)
        return lay.is_contiguous, lay.has_overlap, lay.touched, lay.span

    y = torch.zeros(4, 5, 6)
    a, b = y[:, :2], y[:, 2:]
    torch_pairs = [(a, b) for _, a, b in overlap_cases()]
    numpy_pairs = list(numpy_fuzz_pairs(400))
    unfold = _unfold_pair()
    torch_meet, numpy_meet = _meeting_torch_pairs(), _meeting_numpy_pairs()
    return {
        "inspect (10-element CPU tensor)": best_of(lambda: sw.inspect(small), number=2000),
        "inspect + 4 facts": best_of(lambda: facts(small), number=2000),
        "overlap y[:, :2] vs y[:, 2:]": best_of(lambda: sw.overlap(a, b), number=2000),
        "overlap unfold(0, 4, 3) vs x[1::2]": best_of(lambda: sw.overlap(*unfold), number=2000),
        **_random_rows(sw.overlap, random_view_pairs()),
        "overlap, torch pairs (median of 21)": _pairs_median(torch_pairs, sw.overlap, 200),
        "overlap, numpy pairs (median of 400)": _pairs_median(numpy_pairs, sw.overlap, 50),
        f"  torch pairs, bytes meet ({len(torch_meet)})": _pairs_median(
            torch_meet, sw.overlap, 200
        ),
        f"  numpy pairs, bytes meet ({len(numpy_meet)})": _pairs_median(numpy_meet, sw.overlap, 50),
    }


def time_numpy() -> dict[str, float]:
    def shares(a, b):
        return np.shares_memory(a, b, max_work=None)

    y = np.zeros((4, 5, 6), dtype=np.float32)
    a, b = y[:, :2], y[:, 2:]
    unfold = tuple(t.numpy() for t in _unfold_pair())
    torch_pairs = [(a.numpy(), b.numpy()) for _, a, b in overlap_cases()]
    torch_meet = [(a.numpy(), b.numpy()) for a, b in _meeting_torch_pairs()]
    numpy_meet = _meeting_numpy_pairs()
    return {
        "overlap y[:, :2] vs y[:, 2:]": best_of(lambda: shares(a, b), number=2000),
        "overlap unfold(0, 4, 3) vs x[1::2]": best_of(lambda: shares(*unfold), number=2000),
        **_random_rows(shares, [(a.numpy(), b.numpy()) for a, b in random_view_pairs()]),
        "overlap, torch pairs (median of 21)": _pairs_median(torch_pairs, shares, 200),
        "overlap, numpy pairs (median of 400)": _pairs_median(numpy_fuzz_pairs(400), shares, 50),
        f"  torch pairs, bytes meet ({len(torch_meet)})": _pairs_median(torch_meet, shares, 200),
        f"  numpy pairs, bytes meet ({len(numpy_meet)})": _pairs_median(numpy_meet, shares, 50),
    }


def pair_ratios() -> list[float]:
    """Each random pair's ``sw.overlap`` time over NumPy's on the same pair, timed side by side."""
    pairs = random_view_pairs()
    mine = _pair_times(pairs, sw.overlap, 100)
    theirs = _pair_times(
        [(a.numpy(), b.numpy()) for a, b in pairs],
        lambda a, b: np.shares_memory(a, b, max_work=None),
        100,
    )
    return [m / t for m, t in zip(mine, theirs)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default=MAIN_PYTHON if os.path.exists(MAIN_PYTHON) else None)
    parser.add_argument(
        "--before-tree", help="source tree the --before side imports (else its own)"
    )
    parser.add_argument("--json", help="store the run")
    parser.add_argument("--time-hot", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    torch.set_num_threads(1)
    if args.time_hot:  # the "before" side, run by the interpreter named by --before
        print(json.dumps(time_hot()))
        return
    before: dict[str, float] = {}
    if args.before:
        out = subprocess.run(
            [args.before, os.path.abspath(__file__), "--time-hot"],
            capture_output=True,
            text=True,
            check=True,
            cwd="/",  # import the stridewidget installed for that interpreter
            env={
                **os.environ,
                "PYTHONPATH": os.pathsep.join(
                    [
                        *([args.before_tree] if args.before_tree else []),
                        os.path.dirname(os.path.abspath(__file__)),
                    ]
                ),
                "PYTHONDONTWRITEBYTECODE": "1",  # leave the other tree as it is
            },
        )
        before = json.loads(out.stdout.strip().splitlines()[-1])
    after, numpy_times = time_hot(), time_numpy()
    print(f"torch {torch.__version__}, numpy {np.__version__}, 1 thread; µs per call (medians)")
    head = f"  {'':40s} {'before':>8s} {'after':>8s} {'numpy':>8s} {'after/np':>9s} {'before/after':>12s}"
    print(head)
    rows = {}
    for name, seconds in after.items():
        old, theirs = before.get(name), numpy_times.get(name)
        cells = [
            f"{old * 1e6:8.2f}" if old else f"{'—':>8s}",
            f"{seconds * 1e6:8.2f}",
            f"{theirs * 1e6:8.2f}" if theirs else f"{'—':>8s}",
            f"{seconds / theirs:9.1f}" if theirs else f"{'—':>9s}",
            f"{old / seconds:12.1f}" if old else f"{'—':>12s}",
        ]
        print(f"  {name:40s} " + " ".join(cells))
        rows[name] = {"before_us": old and old * 1e6, "after_us": seconds * 1e6}
        rows[name]["numpy_us"] = theirs and theirs * 1e6
    ratios = pair_ratios()
    print(
        f"  random <=6-D pairs, each pair's after/numpy: median {statistics.median(ratios):.1f}, "
        f"p90 {_p90(ratios):.1f}"
    )
    if args.json:
        result = {"torch": torch.__version__, "loadavg": os.getloadavg(), "rows": rows}
        with open(args.json, "w") as f:
            f.write(json.dumps(result, indent=2, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    sys.exit(main())
