"""Seed 000's LRN speed claim ("3-5x faster on CPU") judged on the seed's own formula.

Seed 000's ``lrn_naive`` computes ``x / (1 + alpha * sum of squares over 5 channels)`` (alpha
1e-4, no power: ``beta = 1``), with a Python loop over channels; its ``lrn_strided`` meant to do
the same with one ``as_strided`` window over the channels (its strides are wrong, see notebook 04).
The harness's ``lrn`` case times PyTorch's LRN formula (``beta = 0.75``, an extra power step);
this script times the seed's formula instead: the seed's loop against two correct strided
versions (the seed's window with correct strides, and ``sw.tricks.lrn`` with the seed's
constants), every one first checked against the loop's answer, then timed side by side in one
run (``stridewidget.bench``'s interleaved timer, one thread). The seed names no input shape, so two
are timed: the harness's LRN input (8, 64, 56, 56) and AlexNet's second LRN input (4, 256, 27, 27).

Run:  python benchmarks/bench_lrn_seed.py [--quick] [--json notebooks/results/lrn-seed/cpu-1thread.json]
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
from pathlib import Path

import torch
import torch.nn.functional as F

from stridewidget import tricks
from stridewidget.bench import Variant
from stridewidget.bench._harness import cpus_available, device_name, measure_variants

SHAPES = ((8, 64, 56, 56), (4, 256, 27, 27))
RADIUS, ALPHA = 2, 1e-4  # the seed's defaults


def seed_lrn_naive(x: torch.Tensor, radius: int = RADIUS, alpha: float = ALPHA) -> torch.Tensor:
    """Seed 000's ``lrn_naive``, as printed (its ``b, h, w`` are unused)."""
    c = x.shape[1]
    out = torch.zeros_like(x)
    for i in range(c):
        start, end = max(0, i - radius), min(c, i + radius + 1)
        out[:, i] = x[:, i] / (1 + alpha * (x[:, start:end] ** 2).sum(1))
    return out


def seed_window_fixed(x: torch.Tensor, radius: int = RADIUS, alpha: float = ALPHA) -> torch.Tensor:
    """The seed's strided idea with correct strides: one window view over the padded channels."""
    padded = F.pad(x, (0, 0, 0, 0, radius, radius))
    windows = padded.unfold(1, 2 * radius + 1, 1)  # steps one channel: padded.stride(1)
    return x / (1 + alpha * (windows**2).sum(-1))


def variants(x: torch.Tensor) -> list[Variant]:
    expected = seed_lrn_naive(x)
    tol = {"rtol": 1e-4, "atol": 1e-5}
    size = 2 * RADIUS + 1
    return [
        Variant("seed lrn_naive (channel loop)", lambda: seed_lrn_naive(x), expected, [x], **tol),
        Variant("seed window, correct strides", lambda: seed_window_fixed(x), expected, [x], **tol),
        Variant(
            "sw.tricks.lrn (seed's constants)",
            lambda: tricks.lrn(x, size, alpha=size * ALPHA, beta=1.0, k=1.0),
            expected,
            [x],
            **tol,
        ),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="write the results here")
    parser.add_argument("--quick", action="store_true", help="fewer timing rounds")
    args = parser.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    device = torch.device("cpu")
    results = {
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "device_name": device_name(device),
        "torch_version": torch.__version__,
        "python_version": platform.python_version(),
        "threading": "single-threaded",
        "quick": args.quick,
        "load_average_start": os.getloadavg()[0],
        "cpu_count": os.cpu_count(),
        "cpus_available": cpus_available(),
        "formula": "x / (1 + 1e-4 * sum of x**2 over 5 channels), zero-padded (seed 000)",
        "shapes": {},
    }
    with torch.no_grad():
        for shape in SHAPES:
            x = torch.randn(*shape)
            records = measure_variants(
                variants(x), device, quick=args.quick, num_threads=1, label="lrn"
            )
            results["shapes"][str(shape)] = records
            for record in records:
                print(f"{shape!s:18} {record['name']:34} {record['median_s'] * 1e3:8.2f} ms")
    results["load_average_end"] = os.getloadavg()[0]
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=1, default=str) + "\n")


if __name__ == "__main__":
    main()
