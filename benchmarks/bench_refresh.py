"""The post-cell check: what ``refresh_if_changed()`` costs per widget when nothing changed.

Run:  .venv/bin/python benchmarks/bench_refresh.py [--repeats 200]

After every notebook cell each live widget is asked whether its tensors changed.  Besides the
version counters and layouts, the check now re-reads the shown storage cells of every CPU storage
(writes through ``t.numpy()`` / ``t.data`` / NumPy move no version counter).  Per case, interleaved
so that machine noise hits all alike, the median time of

* ``counters``: the version-counter and layout checks alone (what the check did before), and
* ``full``: the whole check (counters + the shown cells compared),

side by side with their ratio; the target is ``full`` <= 1 ms per widget at every size.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import torch

import stridewidget as sw


def cases() -> dict[str, dict[str, object]]:
    big = torch.randn(10**7)
    grid = torch.randn(100, 100)
    return {
        "3x4": {"x": torch.arange(12.0).reshape(3, 4)},
        "100x100 + .t()": {"x": grid, "xt": grid.t()},
        "1e7 elided, 3 views": {
            "a": big.view(1000, 10**4),
            "b": big.view(10**4, 1000).t(),
            "c": big[::3],
        },
        "complex conj": {"z": torch.randn(64, 64, dtype=torch.complex64).conj()},
        "numpy 1e6": {"a": np.zeros((1000, 1000), np.float32)},
        "4 storages": {f"s{i}": torch.randn(32, 32) for i in range(4)},
        "16 storages 1e6 each": {f"s{i}": torch.randn(1000, 1000) for i in range(16)},
    }


def counters_only(widget: sw.StrideWidget) -> bool:
    """The check without the cell comparison (versions, layouts, memory addresses)."""
    for held in widget._held:
        obj = held.get()
        if obj is not None and (
            sw.inspect(obj) != held.layout or held.current_version() != held.version
        ):
            return True
    return False


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=200)
    args = parser.parse_args()
    alive = cases()  # the widgets hold their tensors weakly
    widgets = {name: sw.show(**tensors) for name, tensors in alive.items()}
    timers = {"counters": counters_only, "full": lambda w: w.refresh_if_changed()}
    times = {(name, kind): [] for name in widgets for kind in timers}
    for _ in range(args.repeats):
        for name, widget in widgets.items():
            for kind, check in timers.items():
                start = time.perf_counter()
                changed = check(widget)
                times[(name, kind)].append(time.perf_counter() - start)
                assert changed is False, (name, kind)
    print(f"{'case':<22} {'cells read':>10} {'counters':>10} {'full':>10} {'full/counters':>14}")
    for name, widget in widgets.items():
        cells = sum(len(s["cells"]["index"]) for s in widget.scene["storages"])
        counters = statistics.median(times[(name, "counters")]) * 1e3
        full = statistics.median(times[(name, "full")]) * 1e3
        flag = "" if full <= 1.0 else "  OVER 1 ms"
        print(
            f"{name:<22} {cells:>10} {counters:>8.3f}ms {full:>8.3f}ms {full / counters:>13.1f}x{flag}"
        )


if __name__ == "__main__":
    main()
