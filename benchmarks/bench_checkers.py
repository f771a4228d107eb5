"""Issue 41's checkers per ATen op, side by side in one run: ``sw.sanitize()`` and
``sw.track_copies()`` beside a bare counting dispatch mode (the floor of any checker built on a
Python dispatch mode), on three small AdamW training steps (1 thread, CPU):

* ``mlp``: Linear(256, 256)-ReLU-Linear(256, 256), batch 32;
* ``conv+bn``: two Conv2d(3x3)-BatchNorm2d-ReLU blocks, a pooled Linear head, batch 8 of 3x16x16;
* ``transformer``: one ``TransformerEncoderLayer(64, 4, 128)``, batch 8 of 16 tokens;

and, with foreach / fused optimizers (ops that take a list of every parameter: the hostile
review's F2/F3), 1 thread, CPU:

* ``fused adamw (step only)``: ``AdamW(fused=True).step()`` over an 8-layer MLP's 16 parameters;
* ``mlp x8 (foreach|fused)``: 8 Linear(64, 64)-ReLU layers, batch 32, ``AdamW(foreach=True)``
  or ``AdamW(fused=True)``;
* ``embedding (fused)``: Embedding(1000, 64) -> Linear(64, 64), batch 32 of 16 ids,
  ``AdamW(fused=True)``.

Variants interleave round by round, each round starting one variant later; each variant's time is
its best round (the machine is shared: a median still moves with the neighbours' load, the best
round is what the code costs), in this process's CPU time by default (``--clock cpu``: the step
runs on one thread, and time the neighbours take the core from it is not counted; ``--clock
wall`` for the wall clock).  Printed per step: the ATen ops of one step, each variant's time,
and the µs it adds per op beyond the plain step; the ratios (also measured within each round, as
their median and interquartile range over the rounds)
``sanitize/bare`` (target <= 1.5) and ``track_copies/bare`` (target <= 2) compare what each adds
per op with what the bare mode adds.  ``bare (both modes)`` adds a pass-through function mode
over it: the two interceptions ``track_copies`` stacks, the floor of its design.  ``--baseline TREE`` adds another build's checkers (say the
main checkout, ``/work/main``) beside this one's in the same run.

Run:  python benchmarks/bench_checkers.py [--rounds 15] [--clock cpu|wall] [--baseline /work/main]
      [--only fused]     (the steps whose name holds that word)
"""

from __future__ import annotations

import argparse
import gc
import pathlib
import statistics
import time

import torch
from bench_audit import _load_baseline, _seconds
from bench_copies import _PassThroughCalls
from torch.utils._python_dispatch import TorchDispatchMode

import stridewidget as sw


class _Counting(TorchDispatchMode):
    """The bare mode: counts each ATen op and runs it."""

    count = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        _Counting.count += 1
        return func(*args, **(kwargs or {}))


class _BothBare:
    """The two bare modes track_copies stacks: a pass-through function mode (every user-level
    call) over the counting dispatch mode: the floor of the tracker's design."""

    def __enter__(self):
        self.modes = (_PassThroughCalls(), _Counting())
        for mode in self.modes:
            mode.__enter__()

    def __exit__(self, *exc):
        for mode in reversed(self.modes):
            mode.__exit__(*exc)


def _steps() -> dict:
    torch.manual_seed(0)
    mlp = torch.nn.Sequential(torch.nn.Linear(256, 256), torch.nn.ReLU(), torch.nn.Linear(256, 256))
    conv = torch.nn.Sequential(
        torch.nn.Conv2d(3, 16, 3, padding=1),
        torch.nn.BatchNorm2d(16),
        torch.nn.ReLU(),
        torch.nn.Conv2d(16, 16, 3, padding=1),
        torch.nn.BatchNorm2d(16),
        torch.nn.ReLU(),
        torch.nn.AdaptiveAvgPool2d(1),
        torch.nn.Flatten(),
        torch.nn.Linear(16, 10),
    )
    layer = torch.nn.TransformerEncoderLayer(64, 4, 128, dropout=0.0, batch_first=True)
    models = {
        "mlp (256)": (mlp, torch.randn(32, 256)),
        "conv+bn": (conv, torch.randn(8, 3, 16, 16)),
        "transformer (64)": (layer, torch.randn(8, 16, 64)),
    }
    steps = {
        name: _training_step(model, x, torch.optim.AdamW(model.parameters(), lr=1e-4))
        for name, (model, x) in models.items()
    }
    steps.update(_optimizer_steps())
    return steps


def _training_step(model, x, optimizer):
    def step() -> None:
        optimizer.zero_grad()
        model(x).pow(2).mean().backward()
        optimizer.step()

    return step


def _mlp8() -> torch.nn.Module:
    layers = []
    for _ in range(8):
        layers += [torch.nn.Linear(64, 64), torch.nn.ReLU()]
    return torch.nn.Sequential(*layers)


def _optimizer_steps() -> dict:
    """Steps whose optimizer runs foreach / fused ops: a list of every parameter per op."""
    torch.manual_seed(0)
    alone = _mlp8()
    for p in alone.parameters():
        p.grad = torch.randn_like(p)
    fused_alone = torch.optim.AdamW(alone.parameters(), lr=1e-4, fused=True)
    steps = {"fused adamw (step only)": fused_alone.step}
    x = torch.randn(32, 64)
    for how in ("foreach", "fused"):
        model = _mlp8()
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, **{how: True})
        steps[f"mlp x8 ({how})"] = _training_step(model, x, optimizer)
    embedding = torch.nn.Sequential(torch.nn.Embedding(1000, 64), torch.nn.Linear(64, 64))
    ids = torch.randint(0, 1000, (32, 16))
    optimizer = torch.optim.AdamW(embedding.parameters(), lr=1e-4, fused=True)
    steps["embedding (fused)"] = _training_step(embedding, ids, optimizer)
    return steps


def _cpu_seconds(step) -> float:
    """CPU seconds of this process over one ``step`` (from a collected heap, as ``_seconds``)."""
    gc.collect()
    start = time.process_time()
    step()
    return time.process_time() - start


def _best(variants: dict, rounds: int, seconds=_cpu_seconds) -> tuple[dict, list[dict]]:
    """Best ``seconds`` of each variant over ``rounds`` interleaved rounds (after one warm-up),
    and every round's times (for the ratios measured within one round)."""
    for step in variants.values():
        step()
    best = {name: float("inf") for name in variants}
    names, each_round = list(variants), []
    for round_ in range(rounds):
        times = {}
        for position in range(len(names)):
            name = names[(round_ + position) % len(names)]
            times[name] = seconds(variants[name])
            best[name] = min(best[name], times[name])
        each_round.append(times)
    return best, each_round


def _paired(each_round: list[dict], checker: str) -> tuple[float, float, float]:
    """Quartiles over the rounds of ``checker``'s added time / the bare mode's, each from one
    round's own times (a round's neighbours' load lands on both, mostly)."""
    ratios = sorted(
        (times[checker] - times["plain"]) / (times["bare"] - times["plain"])
        for times in each_round
        if times["bare"] > times["plain"]
    )
    low, middle, high = statistics.quantiles(ratios, n=4)
    return low, middle, high


def _under(context, step):
    def run() -> None:
        with context():
            step()

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--clock", choices=("cpu", "wall"), default="cpu")
    parser.add_argument("--baseline", type=pathlib.Path, help="another build's source tree")
    parser.add_argument("--only", default="", help="only the steps whose name holds this word")
    args = parser.parse_args()
    torch.set_num_threads(1)
    baseline = _load_baseline(args.baseline) if args.baseline else None
    clock = _cpu_seconds if args.clock == "cpu" else _seconds
    print(
        f"torch {torch.__version__}, 1 thread, best of {args.rounds} interleaved rounds "
        f"({args.clock} time)"
    )
    ratios: dict[str, dict[str, float]] = {}
    for name, step in _steps().items():
        if args.only not in name:
            continue
        _Counting.count = 0
        with _Counting():
            step()
        ops = _Counting.count
        variants = {
            "plain": step,
            "bare": _under(_Counting, step),
            "bare (both modes)": _under(_BothBare, step),
            "sanitize": _under(sw.sanitize, step),
            "track_copies": _under(sw.track_copies, step),
        }
        if baseline is not None:
            variants["sanitize (baseline)"] = _under(baseline.sanitize, step)
            variants["track_copies (baseline)"] = _under(baseline.track_copies, step)
        medians, each_round = _best(variants, args.rounds, clock)
        plain = medians["plain"]
        added = {v: (medians[v] - plain) / ops for v in variants if v != "plain"}
        print(f"\n{name}: {ops} ATen ops per step, plain {plain * 1e3:.2f} ms")
        print(f"  {'variant':26s} {'ms/step':>8s} {'x plain':>8s} {'+µs/op':>8s} {'/ bare':>7s}")
        for variant, seconds in medians.items():
            if variant == "plain":
                continue
            print(
                f"  {variant:26s} {seconds * 1e3:8.2f} {seconds / plain:8.2f} "
                f"{added[variant] * 1e6:8.1f} {added[variant] / added['bare']:7.2f}"
            )
        checkers = [v for v in variants if v.startswith(("sanitize", "track_copies"))]
        ratios[name] = {v: added[v] / added["bare"] for v in checkers}
        for checker in checkers:
            low, middle, high = _paired(each_round, checker)
            print(
                f"  {checker}/bare within each round: median {middle:.2f} (IQR {low:.2f}-{high:.2f})"
            )
    print("\nissue 41's targets (µs added per op / the bare mode's):")
    for checker, target in (("sanitize", 1.5), ("track_copies", 2.0)):
        for variant in (checker, f"{checker} (baseline)") if baseline else (checker,):
            worst = max(r[variant] for r in ratios.values())
            each = ", ".join(f"{name} {r[variant]:.2f}" for name, r in ratios.items())
            verdict = "met" if worst <= target else "NOT met"
            print(f"  {variant:24s} <= {target}: {verdict} ({each})")


if __name__ == "__main__":
    main()
