"""The overlap solver's tuning constants, measured: the machine timings its comments used to quote.

``stridewidget/layout/overlap/portfolio.py`` and ``lattice.py`` choose their budgets by measurement;
this script measures each choice again, side by side in one run (the machine is shared and noisy:
compare the ratios within a table, not the absolute times across runs).

1. NumPy's solver: nanoseconds per unit of ``max_work`` on near-equal coefficients, small and huge
   (why ``_NUMPY_STEPS_PER_STEP`` is 100, and why its work count is no time bound for huge numbers).
2. python-flint's import, in a fresh interpreter (why the lattice search imports it on first use).
3. ``_GLANCE_LIMIT`` at 0, 16, 64 and 200 steps: median and slowest random meta pairwise question.
4. ``_NUMPY_GROWTH`` at 4 and 16, and ``_NUMPY_FIRST_WORK`` at 16,000 and 50,000: NumPy's
   diophantine fuzz, the near-equal families and the random meta questions.

Run:  python benchmarks/bench_overlap_tuning.py [--count N] [--timeout SECONDS]
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import subprocess
import sys
import time

from bench_inspect import (
    diophantine_fuzz,
    near_equal_case,
    once,
    random_meta_questions,
    solve_diophantine,
)

from stridewidget.layout.overlap import bounded_knapsack, portfolio


@contextlib.contextmanager
def patched(**values):
    """Set portfolio constants for the duration of a measurement."""
    saved = {name: getattr(portfolio, name) for name in values}
    for name, value in values.items():
        setattr(portfolio, name, value)
    try:
        yield
    finally:
        for name, value in saved.items():
            setattr(portfolio, name, value)


def numpy_ns_per_work() -> None:
    print("NumPy's solve_diophantine: ns per unit of max_work (a call that uses it all up)")
    for label, base in (("coefficients ~1e3", 10**3), ("coefficients ~1e12", 10**12)):
        for ndim in (6, 8, 10):
            coefficients = tuple(base + k for k in range(ndim, 0, -1))
            bounds = (999,) * ndim
            target = sum(c * u for c, u in zip(coefficients, bounds)) // 2 + 1
            for work in (16_000, 50_000):
                start = time.perf_counter()
                with contextlib.suppress(Exception):  # too much work: what is timed
                    solve_diophantine(coefficients, bounds, target, max_work=work)
                elapsed = time.perf_counter() - start
                print(
                    f"  {label:20s} {ndim:2d}-D  max_work {work:6d}: {elapsed * 1e3:8.3f} ms"
                    f"  = {elapsed / work * 1e9:7.1f} ns per unit"
                )


def flint_import() -> None:
    code = "import time; t = time.perf_counter(); import flint; print(time.perf_counter() - t)"
    seconds = [
        float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout)
        for _ in range(3)
    ]
    print(f"\npython-flint import, fresh interpreter: best of 3 {min(seconds) * 1e3:.1f} ms")


def question_times(kind: str, count: int, timeout: float) -> list[float]:
    """Seconds per random meta question of ``kind`` (best of two; ``timeout`` when cut off)."""
    times = []
    for which, call in random_meta_questions(count):
        if which == kind:
            first = once(call, timeout)
            times.append(timeout if first is None else min(first, once(call, 60) or timeout))
    return sorted(times)


def summary(times: list[float]) -> str:
    return (
        f"median {statistics.median(times) * 1e6:8.1f} µs · p99 "
        f"{times[int(0.99 * (len(times) - 1))] * 1e3:7.3f} ms · max {times[-1] * 1e3:8.3f} ms"
    )


def glance_limit(count: int, timeout: float) -> None:
    print(f"\n_GLANCE_LIMIT: {count} random meta pairwise questions (huge numbers glance first)")
    for limit in (0, 16, 64, 200):
        with patched(_GLANCE_LIMIT=limit):
            print(f"  {limit:4d} steps: {summary(question_times('pairwise', count, timeout))}")


def numpy_budgets(count: int, timeout: float) -> None:
    print("\nNumPy's budgets: growth per round and first work")
    problems = diophantine_fuzz()
    families = [near_equal_case(ndim, size) for ndim, size in ((6, 100), (6, 1000), (8, 100))]
    for _, call, _ in families:  # warm up: python-flint's import is not a budget's cost
        call()
    for growth, first in ((4, 16_000), (16, 16_000), (4, 50_000)):
        with patched(_NUMPY_GROWTH=growth, _NUMPY_FIRST_WORK=first):
            fuzz = once(lambda: [bounded_knapsack(*problem) for problem in problems], 600)
            near = [once(call, timeout) for _, call, _ in families]
            internal = question_times("internal", count, timeout)
        near_text = " ".join("cut" if t is None else f"{t * 1e3:7.2f}" for t in near)
        print(f"  growth {growth:2d}, first work {first:6d}:")
        print(f"    diophantine fuzz (600 problems) {fuzz * 1e3:8.1f} ms")
        print(f"    near-equal 6-D 100, 6-D 1000, 8-D 100 (ms): {near_text}")
        print(f"    random meta internal: {summary(internal)}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1000, help="random meta layouts per table")
    parser.add_argument("--timeout", type=float, default=5.0, help="seconds before a case is cut")
    args = parser.parse_args()
    numpy_ns_per_work()
    flint_import()
    glance_limit(args.count, args.timeout)
    numpy_budgets(args.count, args.timeout)
