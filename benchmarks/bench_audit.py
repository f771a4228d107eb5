"""sw.audit overhead: one audited training step against the same step run plainly (CPU), side by side.

For each model, rounds interleave

* ``plain``    ``model(*inputs)`` and the gradients of its outputs w.r.t. the parameters
               (``torch.autograd.grad`` with ones as the output gradient: what the audit runs);
* ``tracked``  the plain step inside ``sw.track_copies()``: the copy tracker alone, the floor
               the audit is built on;
* ``audited``  ``sw.audit(model, *inputs)``: the same step with the copy tracker, module tracking,
               each backward op's autograd node, the profiler for copies hidden inside ops, and
               the report built (suggestions are not computed);

and prints the medians and the ratios tracked/plain and audited/plain (target <= 3x).  With
``--baseline DIR`` (a source tree of another build: ``DIR/stridewidget``, e.g. from ``git archive``)
the rounds also interleave that build's ``sw.audit``, and it prints audited/plain for both builds
and this build / baseline, measured side by side in one run.  Models, each at the size
``tests/test_audit.py`` audits it (labelled ``tests``), a toy size and a working size: an
``nn.TransformerEncoderLayer`` fed a transposed batch, a Hugging Face BERT from a config,
torchvision's ResNet18 (weights=None); and torchvision's VisionTransformer at the tests' size.
The audit's cost is per op (the tracker's record of each call and each backward op), so the ratio
is set by the work per op: each line also prints the ATen ops of one step, the plain step's time
per op and what the audit adds per op.

``--modules`` times what following the modules adds to a forward (no tracker): a pre and a post
hook on every submodule, as the audit once did, against each ``forward`` wrapped, as it does now
(a module with hooks leaves ``Module.__call__``'s fast path).

``--breakdown`` says where an audited step's time goes instead, each layer timed in the same
rounds: ``bare modes`` (a pass-through function mode and dispatch mode, as the audit stacks them:
the cost of Python interception itself), ``tracker`` (``sw.track_copies``, every layout read,
recording the step as the audit runs it: backward op by op), ``no profiler`` (the whole audit with its profiler session
replaced by nothing: what the hidden-copy search costs is the difference to ``audited``),
``idle session`` (the audit's profiler session on for the whole step, no op marked, so nothing
collected: its start and stop, and the allocations it records whatever is collected).  Under
each model it prints what each layer adds: interception, tracker, audit (module tracking, autograd
nodes, source lines, the report; net of what the audit does not read: it decides no aliasing for
an event that moved no data and wrote nothing, so this layer can come out negative), profiler
session, collection (marking each op that can hide a copy, keeping its event and its inputs'
layouts for the report, the profiler's events while it runs, reading them back).

``--state`` times what keeping the model's state costs alone (``state_kept``: the parameters,
buffers and inputs saved before the step, compared bit for bit and given back after it, around a
block that writes one buffer as a training step does) beside the plain step; with
``--baseline DIR`` that build's ``state_kept`` in the same rounds; with ``--json PATH``
(``benchmarks/results/bench_audit_state.json``) it stores them.

``--clock cpu`` times each step by this thread's CPU time (``time.thread_time``: user and system
time of the one thread a step runs on with ``--threads 1``) instead of wall-clock time: on a
machine shared with other jobs, a step that waits for a core is not charged for the wait.  Two
copies of one build side by side (``--baseline`` of the same commit, 7 rounds, load ~3 on 2
cores): this/baseline 0.46-1.22 by the wall clock, 0.94-1.08 by the CPU clock.  CPU times under
contention still run longer than wall times on an idle machine (shared caches), so the heavy
models (plain ops >= 200 us) may differ: compare a build with its baseline in one run, and keep
the stored targets' numbers wall-clock.  With more threads, or a step that runs work on other
threads, keep the default ``wall``.

``--json PATH`` also stores the run (``benchmarks/results/bench_audit.json``): per model its
``label``, ``ops``, ``plain_s``, ``audited_s``, ``ratio``, ``plain_us_per_op`` and
``added_us_per_op``; and the two numbers the targets are about: ``added_us_per_op_median`` (the
median over the models of what the audit adds per ATen op; target <= 40) and
``ratio_max_heavy`` (the largest audited/plain ratio among the models whose plain ops average
>= ``heavy_us_per_op`` = 200 us; target <= 1.2), with ``heavy_models`` naming those models.

Run:  python benchmarks/bench_audit.py [--rounds 7] [--threads 1] [--clock wall|cpu] [--baseline DIR]
                                      [--only TEXT] [--json PATH]
      python benchmarks/bench_audit.py --breakdown [--only TEXT]
      python benchmarks/bench_audit.py --modules [--only TEXT]
      python benchmarks/bench_audit.py --state [--baseline DIR] [--only TEXT] [--json PATH]
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import importlib.util
import itertools
import json
import os
import pathlib
import statistics
import sys
import time
import types
from unittest import mock

import torch

# the same pass-through modes the tracker's own benchmark times (run as a script from benchmarks/)
from bench_copies import _PassThroughCalls, _PassThroughOps

import stridewidget as sw
from stridewidget.copies.audit import origins as _origins
from stridewidget.copies.audit import profiler as _profiler
from stridewidget.copies.audit.guard import differentiable as _differentiable
from stridewidget.copies.audit.step import run_step as _run_step


def _models() -> dict:
    # PyPI's torchvision is built against CUDA torch; its models are pure Python, so skip the
    # op registrations that fail with the CPU torch (see tests/test_audit.py).
    for name in ("torchvision._meta_registrations", "torchvision._autograd_registrations"):
        sys.modules.setdefault(name, types.ModuleType(name))
    import torchvision
    import transformers

    def bert(
        hidden: int, layers: int, intermediate: int = 0, positions: int = 128, vocab: int = 1000
    ) -> torch.nn.Module:
        config = transformers.BertConfig(
            vocab_size=vocab,
            hidden_size=hidden,
            num_hidden_layers=layers,
            num_attention_heads=4,
            intermediate_size=intermediate or 4 * hidden,
            max_position_embeddings=positions,
        )
        return transformers.BertModel(config)

    def layer(width: int, heads: int = 4, feedforward: int = 0) -> torch.nn.Module:
        return torch.nn.TransformerEncoderLayer(width, heads, feedforward or 4 * width, dropout=0.0)

    # Each model at the size tests/test_audit.py audits it, a toy size (per-op interception
    # dominates) and a working size.
    return {
        "TransformerEncoderLayer 16, transposed batch (2, 6) - tests": (
            layer(16, heads=2, feedforward=32),
            (torch.randn(2, 6, 16).transpose(0, 1),),
        ),
        "TransformerEncoderLayer 64, transposed batch (8, 32)": (
            layer(64),
            (torch.randn(8, 32, 64).transpose(0, 1),),
        ),
        "TransformerEncoderLayer 256, transposed batch (16, 128)": (
            layer(256),
            (torch.randn(16, 128, 256).transpose(0, 1),),
        ),
        "BERT 2 layers, hidden 32, batch (2, 12) - tests": (
            bert(32, 2, intermediate=64, positions=16, vocab=50),
            (torch.randint(0, 50, (2, 12)),),
        ),
        "BERT 2 layers, hidden 64, batch (4, 32)": (
            bert(64, 2),
            (torch.randint(0, 1000, (4, 32)),),
        ),
        "BERT 4 layers, hidden 256, batch (8, 128)": (
            bert(256, 4),
            (torch.randint(0, 1000, (8, 128)),),
        ),
        "VisionTransformer 2 layers, hidden 32, batch (2, 3, 32, 32) - tests": (
            torchvision.models.VisionTransformer(
                image_size=32, patch_size=16, num_layers=2, num_heads=2, hidden_dim=32, mlp_dim=64
            ),
            (torch.randn(2, 3, 32, 32),),
        ),
        "ResNet18, batch (2, 3, 32, 32) - tests": (
            torchvision.models.resnet18(weights=None),
            (torch.randn(2, 3, 32, 32),),
        ),
        "ResNet18, batch (2, 3, 64, 64)": (
            torchvision.models.resnet18(weights=None),
            (torch.randn(2, 3, 64, 64),),
        ),
        "ResNet18, batch (8, 3, 128, 128)": (
            torchvision.models.resnet18(weights=None),
            (torch.randn(8, 3, 128, 128),),
        ),
    }


def _aten_ops(model: torch.nn.Module, inputs: tuple) -> int:
    """ATen ops one plain step runs (forward and backward), as the copy tracker sees them."""
    with sw.track_copies() as log:
        _run_step(model, inputs, True, None)
    return sum(len(event.ops) for event in log.events)


def _tracked_step(model: torch.nn.Module, inputs: tuple) -> None:
    with sw.track_copies():
        _run_step(model, inputs, True, None)


def _backward(model: torch.nn.Module, output) -> None:
    """The audit's backward: gradients w.r.t. the parameters, no function mode (op by op)."""
    roots = _differentiable(output, None)
    params = [p for p in model.parameters() if p.requires_grad]
    with torch._C.DisableTorchFunction():
        torch.autograd.grad(roots, params, [torch.ones_like(r) for r in roots], allow_unused=True)


def _bare_modes_step(model: torch.nn.Module, inputs: tuple) -> None:
    with _PassThroughCalls(), _PassThroughOps():
        output = model(*inputs)
    with _PassThroughOps():
        _backward(model, output)


def _tracker_step(model: torch.nn.Module, inputs: tuple) -> None:
    with sw.track_copies():
        output = model(*inputs)
    with sw.track_copies():
        _backward(model, output)


class _NoSession:
    """In place of the audit's profiler session: nothing collected, no hidden copies."""

    def hidden_copies(self, marked) -> dict:
        return {}


@contextlib.contextmanager
def _no_profiler(devices: set, marked):
    marked.searching = False  # as under a user's profiler: no op marked, no collection switched
    yield _NoSession()


def _audit_without_profiler(model: torch.nn.Module, inputs: tuple) -> None:
    with mock.patch.object(_profiler, "profiled", _no_profiler):
        sw.audit(model, *inputs)


_PROFILED = _profiler.profiled


@contextlib.contextmanager
def _idle_profiler(devices: set, marked):
    """The audit's own session, on for the whole step, with no op marked: collection stays off."""
    with _PROFILED(devices, marked) as session:
        marked.searching = False
        yield session


def _audit_profiler_idle(model: torch.nn.Module, inputs: tuple) -> None:
    with mock.patch.object(_profiler, "profiled", _idle_profiler):
        sw.audit(model, *inputs)


def _breakdown(models: dict, rounds: int) -> None:
    layers = ("bare modes", "tracker", "no profiler", "idle session", "audited")
    # what each layer adds to the one before it
    added = {"bare modes": "interception", "tracker": "tracker", "no profiler": "audit"}
    added |= {"idle session": "profiler session", "audited": "collection"}
    print(f"{'model':68} {'plain':>8} " + " ".join(f"{name:>12}" for name in layers))
    for label, (model, inputs) in models.items():
        variants = {
            "plain": lambda m=model, x=inputs: _run_step(m, x, True, None),
            "bare modes": lambda m=model, x=inputs: _bare_modes_step(m, x),
            "tracker": lambda m=model, x=inputs: _tracker_step(m, x),
            "no profiler": lambda m=model, x=inputs: _audit_without_profiler(m, x),
            "idle session": lambda m=model, x=inputs: _audit_profiler_idle(m, x),
            "audited": lambda m=model, x=inputs: sw.audit(m, *x),
        }
        medians = _medians(variants, rounds)
        plain = medians["plain"]
        print(
            f"{label:68} {plain * 1e3:6.1f}ms "
            + " ".join(
                f"{medians[name] * 1e3:7.1f}ms{medians[name] / plain:4.1f}x" for name in layers
            )
        )
        steps = ("plain", *layers)
        overhead = medians["audited"] - plain
        shares = [
            f"{added[name]} +{(medians[name] - medians[below]) * 1e3:.1f} ms "
            f"({(medians[name] - medians[below]) / overhead:.0%})"
            for below, name in itertools.pairwise(steps)
        ]
        print(f"{'':68} audited - plain = {overhead * 1e3:.1f} ms: " + ", ".join(shares))


def _hooked_forward(model: torch.nn.Module, inputs: tuple) -> None:
    """The forward with a pre and a post hook on every submodule keeping the same timeline."""
    timeline = _origins.Timeline(types.SimpleNamespace(events=[]), "")
    stack: list[str] = []

    def enter(name: str):
        def hook(*_) -> None:
            stack.append(name)
            timeline.mark(name)

        return hook

    def leave(*_) -> None:
        stack.pop()
        timeline.mark(stack[-1] if stack else "")

    handles = []
    for name, module in model.named_modules():
        handles.append(module.register_forward_pre_hook(enter(name)))
        handles.append(module.register_forward_hook(leave, always_call=True))
    try:
        model(*inputs)
    finally:
        for handle in handles:
            handle.remove()


def _followed_forward(model: torch.nn.Module, inputs: tuple) -> None:
    """The forward as the audit follows its modules (each ``forward`` wrapped for the step)."""
    timeline = _origins.Timeline(types.SimpleNamespace(events=[]), "")
    with _origins.modules_followed(model, timeline):
        model(*inputs)


def _module_tracking(models: dict, rounds: int) -> None:
    print(f"{'model':68} {'forward':>8} {'hooks':>14} {'wrapped':>14} {'hooks/wrapped':>14}")
    for label, (model, inputs) in models.items():
        medians = _medians(
            {
                "forward": lambda m=model, x=inputs: m(*x),
                "hooks": lambda m=model, x=inputs: _hooked_forward(m, x),
                "wrapped": lambda m=model, x=inputs: _followed_forward(m, x),
            },
            rounds,
        )
        plain = medians["forward"]
        added = {name: medians[name] - plain for name in ("hooks", "wrapped")}
        print(
            f"{label:68} {plain * 1e3:6.2f}ms "
            + " ".join(f"{added[name] * 1e3:+10.2f} ms" for name in ("hooks", "wrapped"))
            + f" {added['hooks'] / added['wrapped']:13.1f}x"
        )


def _kept(state_kept, model: torch.nn.Module, inputs: tuple) -> None:
    """The state kept around a block that writes the first buffer, as a training step does."""
    with state_kept(model, (inputs, None)), torch.no_grad():
        next(model.buffers()).add_(1)


def _state(models: dict, rounds: int, baseline: types.ModuleType | None) -> list[dict]:
    ours = importlib.import_module("stridewidget.copies.audit.guard").state_kept
    theirs = None
    if baseline is not None:
        theirs = importlib.import_module(f"{baseline.__name__}.copies.audit.guard").state_kept
    header = f"{'model':68} {'MB kept':>8} {'plain':>9} {'state kept':>11} {'kept/plain':>11}"
    print(header + (f" {'baseline':>9} {'this/baseline':>14}" if theirs else ""))
    results = []
    for label, (model, inputs) in models.items():
        if next(model.buffers(), None) is None:
            continue
        variants = {
            "plain": lambda m=model, x=inputs: _run_step(m, x, True, None),
            "kept": lambda m=model, x=inputs: _kept(ours, m, x),
        }
        if theirs is not None:
            variants["baseline"] = lambda m=model, x=inputs: _kept(theirs, m, x)
        medians = _medians(variants, rounds)
        plain, kept = medians["plain"], medians["kept"]
        size = sum(t.nbytes for t in [*model.parameters(), *model.buffers()]) / 1e6
        line = (
            f"{label:68} {size:8.1f} {plain * 1e3:7.1f}ms {kept * 1e3:9.1f}ms {kept / plain:10.2f}x"
        )
        if theirs is not None:
            line += f" {medians['baseline'] * 1e3:7.1f}ms {kept / medians['baseline']:13.2f}x"
        print(line)
        results.append(
            {"label": label, "mb_kept": size, "plain_s": plain, "kept_s": kept}
            | ({"baseline_s": medians["baseline"]} if theirs is not None else {})
        )
    print(f"load average {os.getloadavg()}")
    return results


def _store_state(path: pathlib.Path, results: list[dict], args: argparse.Namespace) -> None:
    """``--state --json PATH``: the run, and for README.md the largest model's state kept by this
    build and by the baseline (its directory's name), measured in the same rounds."""
    largest = max(results, key=lambda r: (r["mb_kept"], r["plain_s"]))
    summary = {
        "torch": torch.__version__,
        "threads": args.threads,
        "rounds": args.rounds,
        "baseline": args.baseline.name if args.baseline else None,
        "load_average": os.getloadavg(),
        "models": results,
        "readme": {
            "label": largest["label"],
            "mb_kept": {"value": largest["mb_kept"], "unit": "MB"},
            "kept_ms": {"value": largest["kept_s"] * 1e3, "unit": "ms"},
        },
    }
    if "baseline_s" in largest:
        summary["readme"]["baseline_kept_ms"] = {"value": largest["baseline_s"] * 1e3, "unit": "ms"}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(summary, indent=1) + "\n")


def _medians(variants: dict, rounds: int) -> dict[str, float]:
    """Median seconds of each variant, the variants interleaved round by round, each round
    starting one variant later (a step runs faster or slower after some steps than after others:
    a fixed order would favour one variant)."""
    for step in variants.values():  # warm up (first-call allocations, lazy imports)
        step()
    times: dict[str, list[float]] = {name: [] for name in variants}
    names = list(variants)
    for round_ in range(rounds):
        for position in range(len(names)):
            name = names[(round_ + position) % len(names)]
            times[name].append(_seconds(variants[name]))
    return {name: statistics.median(times[name]) for name in variants}


def _load_baseline(root: pathlib.Path) -> types.ModuleType:
    """Another build's package, imported beside this one as ``stridewidget_baseline``."""
    package = root / "stridewidget"
    spec = importlib.util.spec_from_file_location(
        "stridewidget_baseline", package / "__init__.py", submodule_search_locations=[str(package)]
    )
    if spec is None or spec.loader is None:
        raise SystemExit(f"--baseline: no stridewidget package in {root}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


#: The clock a step is timed by: wall-clock time, or this thread's CPU time (``--clock cpu``).
_CLOCKS = {"wall": time.perf_counter, "cpu": time.thread_time}
_CLOCK = {"now": time.perf_counter}


def _seconds(step) -> float:
    # Every variant starts from a collected heap: the audit pauses the cyclic collector during
    # its step, and the collections it defers would otherwise land in the next variant's time.
    gc.collect()
    now = _CLOCK["now"]
    start = now()
    step()
    return now() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument(
        "--clock", choices=sorted(_CLOCKS), default="wall", help="wall-clock or thread CPU time"
    )
    parser.add_argument(
        "--baseline", type=pathlib.Path, help="source tree of another build to time beside this one"
    )
    parser.add_argument("--only", default="", help="run only the models whose label contains this")
    parser.add_argument("--json", type=pathlib.Path, help="also store the results here")
    parser.add_argument(
        "--breakdown",
        action="store_true",
        help="time each layer of the audit beside the plain step",
    )
    parser.add_argument(
        "--modules",
        action="store_true",
        help="what following the modules adds to a forward: hooks against wrapped forwards",
    )
    parser.add_argument(
        "--state",
        action="store_true",
        help="what keeping the model's state (saved, compared, given back) costs alone",
    )
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    _CLOCK["now"] = _CLOCKS[args.clock]
    heading = f"torch {torch.__version__}, {args.threads} thread(s), {args.rounds} rounds, "
    heading += f"{args.clock} clock, medians"
    torch.manual_seed(0)
    models = {label: value for label, value in _models().items() if args.only in label}
    if args.modules:
        print(heading)
        _module_tracking(models, args.rounds)
        return
    if args.breakdown:
        print(heading)
        _breakdown(models, args.rounds)
        return
    baseline = _load_baseline(args.baseline) if args.baseline else None
    print(heading)
    if args.state:
        results = _state(models, args.rounds, baseline)
        if args.json:
            _store_state(args.json, results, args)
        return
    header = (
        f"{'model':68} {'plain':>10} {'tracked':>10} {'audited':>10} "
        f"{'tracked/plain':>14} {'audited/plain':>14} {'ops':>5} {'plain/op':>9} {'audit+/op':>10}"
    )
    if baseline is not None:
        header += f" {'baseline':>10} {'baseline/plain':>15} {'this/baseline':>14}"
    print(header)
    results = []
    for label, (model, inputs) in models.items():
        variants = {
            "plain": lambda m=model, x=inputs: _run_step(m, x, True, None),
            "tracked": lambda m=model, x=inputs: _tracked_step(m, x),
            "audited": lambda m=model, x=inputs: sw.audit(m, *x),
        }
        if baseline is not None:
            variants["baseline"] = lambda m=model, x=inputs: baseline.audit(m, *x)
        medians = _medians(variants, args.rounds)
        plain, tracked, audited = medians["plain"], medians["tracked"], medians["audited"]
        ops = _aten_ops(model, inputs)
        line = (
            f"{label:68} {plain * 1e3:8.1f}ms {tracked * 1e3:8.1f}ms {audited * 1e3:8.1f}ms "
            f"{tracked / plain:13.2f}x {audited / plain:13.2f}x {ops:5} "
            f"{plain / ops * 1e6:7.1f}us {(audited - plain) / ops * 1e6:8.1f}us"
        )
        if baseline is not None:
            before = medians["baseline"]
            line += f" {before * 1e3:8.1f}ms {before / plain:14.2f}x {audited / before:13.2f}x"
        print(line)
        results.append(
            {
                "label": label,
                "ops": ops,
                "plain_s": plain,
                "audited_s": audited,
                "ratio": audited / plain,
                "plain_us_per_op": plain / ops * 1e6,
                "added_us_per_op": (audited - plain) / ops * 1e6,
            }
        )
    if args.json:
        _store(args.json, results, args)


HEAVY_US_PER_OP = 200.0
TARGET_US_PER_OP = 40.0  # issue 23: what the user feels, per ATen op (median)
TARGET_RATIO_HEAVY = 1.2  # and on steps whose ops average >= HEAVY_US_PER_OP


def _store(path: pathlib.Path, results: list[dict], args: argparse.Namespace) -> None:
    heavy = [r for r in results if r["plain_us_per_op"] >= HEAVY_US_PER_OP]
    summary = {
        "torch": torch.__version__,
        "threads": args.threads,
        "rounds": args.rounds,
        "clock": args.clock,
        "added_us_per_op_median": statistics.median(r["added_us_per_op"] for r in results),
        "heavy_us_per_op": HEAVY_US_PER_OP,
        "heavy_models": [r["label"] for r in heavy],
        "ratio_max_heavy": max((r["ratio"] for r in heavy), default=None),
        "load_average": os.getloadavg(),
        "models": results,
    }
    # the entries README.md cites (tests/test_prose_numbers.py checks the README against them)
    summary["readme"] = {
        "added_us_per_op": {"value": summary["added_us_per_op_median"], "unit": "µs"},
        "target_us_per_op": {"value": TARGET_US_PER_OP, "unit": "µs"},
        "heavy_us_per_op": {"value": HEAVY_US_PER_OP, "unit": "µs"},
        "ratio_max_heavy": {"value": summary["ratio_max_heavy"], "unit": "×"},
        "target_ratio_heavy": {"value": TARGET_RATIO_HEAVY, "unit": "×"},
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(summary, indent=1) + "\n")
    print(
        f"added per op (median) {summary['added_us_per_op_median']:.1f} us; "
        f"audited/plain on ops >= {HEAVY_US_PER_OP:.0f} us: {summary['ratio_max_heavy']}"
    )


if __name__ == "__main__":
    main()
