"""sw.sanitize overhead: one training step (forward, backward, SGD with momentum) of the audit's
zoo, plain and sanitized, side by side in one run (CPU).

For each model (the sizes of ``benchmarks/bench_audit.py``: the tests' size, a toy size and a
working size), rounds interleave

* ``plain``      the step with nothing active;
* ``bare mode``  the step inside an empty pass-through ``TorchDispatchMode``: what PyTorch's
                 interception itself costs, the floor any dispatch-mode sanitizer pays;
* ``sanitized``  the step inside ``sw.sanitize()`` (one block per step);

and prints the medians, the ratios bare/plain and sanitized/plain (target <= 2x), the ATen ops of
one step and what the sanitizer adds per op beyond the bare mode (its own rules and checks).  The cost is per op (each op's rule is looked up and,
for an op that writes, its tensors compared), so the ratio is set by the work per op.

With ``--json FILE`` the run is stored (each model's medians, ratios, ops per step and µs added
per op, ``os.getloadavg()``) with a ``readme`` section holding exactly the numbers README.md cites,
each ``{"value": x, "unit": u}`` or ``{"low": a, "high": b, "unit": u}``.

Run:  python benchmarks/bench_sanitize.py [--rounds 7] [--threads 1] [--only TEXT] [--json FILE]
      python benchmarks/bench_sanitize.py --mlp [--baseline OTHER_TREE]   # tiny AdamW steps
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib

import torch

# the zoo and the interleaved timing of the audit's benchmark, the pass-through mode of the
# tracker's (run as a script from benchmarks/)
from bench_audit import _load_baseline, _medians, _models
from bench_copies import _PassThroughOps

import stridewidget as sw


def _first_tensor(out) -> torch.Tensor:
    if isinstance(out, torch.Tensor):
        return out
    if hasattr(out, "last_hidden_state"):
        return out.last_hidden_state
    return _first_tensor(out[0])


def _step(model: torch.nn.Module, inputs: tuple, optimizer: torch.optim.Optimizer) -> None:
    optimizer.zero_grad()
    _first_tensor(model(*inputs)).float().pow(2).mean().backward()
    optimizer.step()


def _ops_per_step(model: torch.nn.Module, inputs: tuple, optimizer) -> int:
    class Counter(_PassThroughOps):
        count = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            Counter.count += 1
            return func(*args, **(kwargs or {}))

    with Counter():
        _step(model, inputs, optimizer)
    return Counter.count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--only", default="", help="models whose label contains this text")
    parser.add_argument(
        "--baseline", type=pathlib.Path, help="source tree of another build: its sanitizer beside"
    )
    parser.add_argument(
        "--mlp", action="store_true", help="only the Linear-ReLU-Linear AdamW steps (d=64, 512)"
    )
    parser.add_argument(
        "--json", type=pathlib.Path, help="store the run (and the README's numbers)"
    )
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    print(f"torch {torch.__version__}, {args.threads} thread(s), {args.rounds} rounds, medians")
    if args.mlp:
        _mlp(args)
        return
    print(f"{'model':68} {'plain':>8} {'bare mode':>13} {'sanitized':>13} {'ops':>6} {'+/op':>8}")
    print(f"{'':68} {'':>8} {'':>13} {'':>13} {'':>6} {'(vs bare)':>8}")
    rows = []
    for label, (model, inputs) in _models().items():
        if args.only not in label:
            continue
        optimizer = torch.optim.SGD(model.parameters(), lr=1e-4, momentum=0.9)

        def plain(m=model, x=inputs, o=optimizer) -> None:
            _step(m, x, o)

        def bare(m=model, x=inputs, o=optimizer) -> None:
            with _PassThroughOps():
                _step(m, x, o)

        def sanitized(m=model, x=inputs, o=optimizer) -> None:
            with sw.sanitize():
                _step(m, x, o)

        medians = _medians({"plain": plain, "bare mode": bare, "sanitized": sanitized}, args.rounds)
        ops = _ops_per_step(model, inputs, optimizer)
        base = medians["plain"]
        added = (medians["sanitized"] - medians["bare mode"]) / ops
        print(
            f"{label:68} {base * 1e3:6.1f}ms "
            + " ".join(
                f"{medians[name] * 1e3:7.1f}ms{medians[name] / base:5.2f}x"
                for name in ("bare mode", "sanitized")
            )
            + f" {ops:6d} {added * 1e6:6.1f}µs"
        )
        rows.append(
            {
                "model": label,
                "seconds": medians,
                "bare_ratio": medians["bare mode"] / base,
                "sanitized_ratio": medians["sanitized"] / base,
                "ops": ops,
                "added_us_per_op": added * 1e6,
            }
        )
    if args.json:
        _store(args, rows)


def _mlp(args: argparse.Namespace) -> None:
    """Linear(d, d)-ReLU-Linear(d, d), batch 64, one AdamW step: plain, sanitized, and (with
    ``--baseline``) the other build's sanitizer, interleaved in one run."""
    baseline = _load_baseline(args.baseline) if args.baseline else None
    print(f"{'d':>5} {'plain':>9} {'sanitized':>15} {'baseline sanitized':>20}")
    for d in (64, 512):
        model = torch.nn.Sequential(torch.nn.Linear(d, d), torch.nn.ReLU(), torch.nn.Linear(d, d))
        optimizer = torch.optim.AdamW(model.parameters())
        x = torch.randn(64, d)

        def step(m=model, x=x, o=optimizer) -> None:
            o.zero_grad()
            m(x).pow(2).mean().backward()
            o.step()

        def under(package):
            def run() -> None:
                with package.sanitize():
                    step()

            return run

        variants = {"plain": step, "sanitized": under(sw)}
        if baseline is not None:
            variants["baseline"] = under(baseline)
        medians = _medians(variants, args.rounds)
        cells = [
            f"{medians[n] * 1e3:7.2f}ms {medians[n] / medians['plain']:5.2f}x" for n in variants
        ]
        print(f"{d:5d} " + " ".join(cells))


def _span(rows: list[dict], key: str, unit: str) -> dict:
    values = [row[key] for row in rows]
    return {"low": min(values), "high": max(values), "unit": unit}


def _readme(rows: list[dict]) -> dict:
    """The numbers README.md cites: the ratio at working sizes, on the tests' models, and the
    worst model with its bare-interception ratio and per-op costs."""
    tests = [row for row in rows if row["model"].endswith("- tests")]
    working = [row for row in rows if "(8, 3, 128" in row["model"] or "(16, 128" in row["model"]
               or "(8, 128)" in row["model"]]  # fmt: skip
    worst = max(rows, key=lambda row: row["sanitized_ratio"])
    plain_us = worst["seconds"]["plain"] / worst["ops"] * 1e6
    readme = {
        "worst_model": worst["model"],
        "worst_ratio": {"value": worst["sanitized_ratio"], "unit": "×"},
        "worst_bare_ratio": {"value": worst["bare_ratio"], "unit": "×"},
        "worst_plain_us_per_op": {"value": plain_us, "unit": "µs"},
        "worst_added_us_per_op": {"value": worst["added_us_per_op"], "unit": "µs"},
    }
    if working:
        readme["working_ratio"] = _span(working, "sanitized_ratio", "×")
    if tests:
        readme["tests_ratio"] = _span(tests, "sanitized_ratio", "×")
    return readme


def _store(args: argparse.Namespace, rows: list[dict]) -> None:
    result = {
        "torch": torch.__version__,
        "threads": args.threads,
        "rounds": args.rounds,
        "loadavg": os.getloadavg(),
        "models": rows,
        "readme": _readme(rows),
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
