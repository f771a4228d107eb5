"""Timing a fix beside the unchanged step: interleaved rounds, medians and IQRs, and a verdict
that says "faster" or "slower" only when the difference is bigger than the spread.

One sequential before -> after pair lets a burst of load on the machine decide the answer;
alternating the two (A B A B ...) spreads such a burst over both."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ...limits import TIMING_MAX_SPREAD as MAX_SPREAD
from ...limits import TIMING_MIN_CHANGE as MIN_CHANGE
from ...limits import TIMING_ROUNDS as ROUNDS


@dataclass(frozen=True)
class Timing:
    """Seconds per step: the median and the quartiles of the interleaved rounds."""

    median: float
    q1: float
    q3: float


def interleaved(
    steps: dict[str, Callable[[], Any]], rounds: int = ROUNDS, round_seconds: float = 0.02
) -> dict[str, Timing]:
    """Time each step in ``rounds`` rounds, the steps alternating within each round and the
    order reversed every other round; each round's sample is the median of enough calls to last
    about ``round_seconds`` (a median: a burst of load on the machine that slows a few calls of
    a round moves it little, where it moved the mean by as much as it cost; a step timed
    against itself then reads "no measurable change", ``tests/test_audit_gaps.py``).

    >>> timings = interleaved({"a": lambda: sum(range(100)), "b": lambda: sum(range(100))})
    >>> sorted(timings), all(t.q1 <= t.median <= t.q3 for t in timings.values())
    (['a', 'b'], True)
    """
    if rounds < ROUNDS:
        raise ValueError(f"interleaved timing needs at least {ROUNDS} rounds, got {rounds}")
    calls = {label: _calls_per_round(step, round_seconds) for label, step in steps.items()}
    samples: dict[str, list[float]] = {label: [] for label in steps}
    labels = list(steps)
    for round_number in range(rounds):
        for label in labels if round_number % 2 == 0 else reversed(labels):
            step, count = steps[label], calls[label]
            clock = time.perf_counter
            times = []
            for _ in range(count):
                start = clock()
                step()
                times.append(clock() - start)
            samples[label].append(statistics.median(times))
    return {label: _summary(values) for label, values in samples.items()}


def _calls_per_round(step: Callable[[], Any], round_seconds: float) -> int:
    start = time.perf_counter()
    step()  # also the warm-up
    once = max(time.perf_counter() - start, 1e-9)
    return max(1, int(round_seconds / once))


def _summary(values: list[float]) -> Timing:
    q1, median, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return Timing(median, q1, q3)


def verdict(before: Timing, after: Timing) -> str:
    """``"faster"`` / ``"slower"`` when the IQRs do not overlap and the medians differ by at least
    :data:`MIN_CHANGE`, else ``"no measurable change"``.

    >>> verdict(Timing(1.0, 0.98, 1.02), Timing(0.8, 0.79, 0.81))
    'faster'
    >>> verdict(Timing(1.0, 0.9, 1.1), Timing(0.8, 0.7, 0.95))   # the IQRs overlap
    'no measurable change'
    >>> verdict(Timing(1.0, 0.999, 1.001), Timing(1.02, 1.019, 1.021))   # 2 %: too small
    'no measurable change'
    """
    if after.q3 < before.q1 and after.median <= before.median * (1 - MIN_CHANGE):
        return "faster"
    if after.q1 > before.q3 and after.median >= before.median * (1 + MIN_CHANGE):
        return "slower"
    return "no measurable change"


def noisy(timing: Timing) -> bool:
    """The IQR is wider than :data:`MAX_SPREAD` of the median: too wide to tell "no measurable
    change" from a change the spread hides.

    >>> noisy(Timing(1.1e-3, 0.97e-3, 1.27e-3)), noisy(Timing(5.0e-3, 0.85e-3, 5.21e-3))
    (False, True)
    """
    return timing.q3 - timing.q1 > MAX_SPREAD * timing.median
