"""Timing with existing tools: ``torch.utils.benchmark.Timer`` everywhere, ``triton.testing.do_bench``
on CUDA when Triton is importable.

Why these: ``Timer`` warms up while it estimates the block size, synchronises the accelerator before
reading the clock (``torch.utils.benchmark.utils.timer.timer`` calls ``torch.accelerator.synchronize``),
sets the thread count it is told, and reports medians and interquartile ranges. ``do_bench`` times with
CUDA events and flushes the L2 cache between repetitions, which is what bandwidth cases need on a GPU.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch.utils.benchmark import Timer


@dataclass(frozen=True)
class TimeStats:
    """Median and spread of one timed callable, in seconds.

    >>> TimeStats(median_s=2e-3, iqr_s=1e-4, runs=10, method="timer").median_us
    2000.0
    """

    median_s: float
    iqr_s: float
    runs: int | None
    method: str

    @property
    def median_us(self) -> float:
        return self.median_s * 1e6


def synchronize(device: torch.device) -> None:
    """Wait for queued work on ``device`` (a no-op on CPU, where kernels run synchronously).

    >>> synchronize(torch.device("cpu"))
    """
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def triton_available() -> bool:
    """Whether ``triton.testing.do_bench`` can be imported (it is only used on CUDA).

    >>> isinstance(triton_available(), bool)
    True
    """
    return importlib.util.find_spec("triton") is not None


def time_callable(
    fn: Callable[[], Any],
    device: torch.device,
    *,
    quick: bool,
    num_threads: int,
    label: str = "",
    use_triton: bool | None = None,
) -> TimeStats:
    """Time ``fn()`` and return its median and interquartile range.

    ``quick`` uses one short ``blocked_autorange`` (about 0.05 s per variant); otherwise
    ``adaptive_autorange`` repeats until the IQR is under 10 % of the median or 3 s have passed.

    >>> stats = time_callable(lambda: torch.ones(1000).sum(), torch.device("cpu"),
    ...                       quick=True, num_threads=1)
    >>> stats.median_s > 0 and stats.runs >= 1 and stats.method.startswith("torch.utils")
    True
    """
    if use_triton is None:
        use_triton = device.type == "cuda" and triton_available()
    if use_triton:
        return _time_with_do_bench(fn, quick=quick)
    timer = Timer(
        stmt="fn()",
        globals={"fn": fn},
        num_threads=num_threads,
        label=label,
        description=str(device),
    )
    if quick:
        measurement = timer.blocked_autorange(min_run_time=0.05)
        method = "torch.utils.benchmark.Timer.blocked_autorange"
    else:
        measurement = timer.adaptive_autorange(threshold=0.1, min_run_time=0.2, max_run_time=3.0)
        method = "torch.utils.benchmark.Timer.adaptive_autorange"
    return TimeStats(
        median_s=float(measurement.median),
        iqr_s=float(measurement.iqr),
        runs=len(measurement.times) * measurement.number_per_run,
        method=method,
    )


def _time_with_do_bench(fn: Callable[[], Any], *, quick: bool) -> TimeStats:
    # Imported here: Triton exists only on CUDA machines, and importing it is slow.
    from triton.testing import do_bench

    warmup_ms, rep_ms = (5, 20) if quick else (25, 200)
    q25, q50, q75 = do_bench(fn, warmup=warmup_ms, rep=rep_ms, quantiles=[0.25, 0.5, 0.75])
    return TimeStats(
        median_s=q50 * 1e-3,
        iqr_s=(q75 - q25) * 1e-3,
        runs=None,  # do_bench does not report how many repetitions it ran
        method="triton.testing.do_bench",
    )
