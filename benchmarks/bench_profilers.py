"""What a profiler session adds per collected ATen op: the two sessions ``sw.audit`` can run.

A loop of small ``torch.mm`` calls (each with its two nested ``resolve_conj`` events and one
allocation) runs plainly and under each collector, side by side in one run; printed is the
extra time per op over the plain loop.  ``sw.audit`` uses the legacy collector with allocations
recorded for CPU steps and ``torch.profiler`` with shapes for other devices.

Run:  python benchmarks/bench_profilers.py [--ops 2000] [--rounds 7]
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
from torch.profiler import ProfilerActivity, profile


def _legacy(memory: bool, shapes: bool):
    def start() -> None:
        config = torch.autograd.ProfilerConfig(
            torch.autograd.ProfilerState.CPU,
            shapes,
            memory,
            False,
            False,
            False,
            torch._C._profiler._ExperimentalConfig(),
        )
        torch.autograd._enable_profiler_legacy(config)

    def stop() -> None:
        torch.autograd._disable_profiler_legacy()

    return start, stop


def _kineto(memory: bool, shapes: bool):
    session = {}

    def start() -> None:
        session["p"] = profile(
            activities=[ProfilerActivity.CPU], record_shapes=shapes, profile_memory=memory
        )
        session["p"].start()

    def stop() -> None:
        session["p"].stop()
        session["p"].profiler.kineto_results.events()  # read, as the audit does

    return start, stop


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    torch.set_num_threads(1)
    a, b = torch.randn(4, 4), torch.randn(4, 4)

    def work() -> None:
        for _ in range(args.ops):
            torch.mm(a, b)

    sessions = {
        "plain": None,
        "torch.profiler, shapes (the audit off the CPU)": _kineto(False, True),
        "torch.profiler, allocations": _kineto(True, False),
        "torch.profiler, neither": _kineto(False, False),
        "legacy, allocations (the audit on the CPU)": _legacy(True, False),
        "legacy, shapes": _legacy(False, True),
        "legacy, neither": _legacy(False, False),
    }
    times: dict[str, list[float]] = {name: [] for name in sessions}
    for _ in range(args.rounds + 1):  # the first round warms up
        for name, session in sessions.items():
            begin = time.perf_counter()
            if session is not None:
                session[0]()
            work()
            if session is not None:
                session[1]()
            times[name].append(time.perf_counter() - begin)
    plain = statistics.median(times["plain"][1:])
    print(f"torch {torch.__version__}, {args.ops} ops of mm(4x4, 4x4), medians of {args.rounds}")
    print(f"{'plain':50} {plain / args.ops * 1e6:6.2f} µs per op")
    for name in list(sessions)[1:]:
        extra = (statistics.median(times[name][1:]) - plain) / args.ops * 1e6
        print(f"{name:50} +{extra:5.2f} µs per op")


if __name__ == "__main__":
    main()
