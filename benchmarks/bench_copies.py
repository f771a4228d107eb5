"""Copy-tracker overhead on a small transformer block forward (CPU), measured side by side.

Each round times, interleaved so machine noise hits all of them alike:

* ``baseline``        ``layer(src)`` with nothing active;
* ``bare modes``      the same inside an empty pass-through ``TorchFunctionMode`` +
                      ``TorchDispatchMode`` pair: the floor PyTorch's interception itself costs;
* ``tracked``         the same inside ``sw.track_copies()`` (one block per forward, so the log
                      stays one forward long and entering/leaving the block is included);
* ``after``           ``layer(src)`` again after the blocks: zero cost outside the block means
                      this matches ``baseline``.

It prints medians and the ratios tracked/baseline (target < 3x) and after/baseline (target ~1),
for a training-mode forward (autograd on) and eval forwards under ``torch.no_grad()`` and
``torch.inference_mode()`` (where the tracker decomposes composite ops itself).  In eval
mode ``nn.TransformerEncoderLayer`` normally takes a fused fast path, which any active
``TorchFunctionMode`` disables (PyTorch checks ``has_torch_function``); that row shows the cost of
tracking *including* losing the fast path, and the bare-modes row shows the same loss.

Run:  python benchmarks/bench_copies.py [--rounds 15] [--number 20]
"""

from __future__ import annotations

import argparse
import statistics
import timeit
from contextlib import nullcontext

import torch
from torch.overrides import TorchFunctionMode, _get_current_function_mode_stack
from torch.utils._python_dispatch import TorchDispatchMode, _get_current_dispatch_mode_stack

import stridewidget as sw


class _PassThroughCalls(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


class _PassThroughOps(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


def _variants(layer: torch.nn.Module, src: torch.Tensor) -> dict:
    def baseline() -> None:
        layer(src)

    def bare_modes() -> None:
        with _PassThroughCalls(), _PassThroughOps():
            layer(src)

    def tracked() -> None:
        with sw.track_copies():
            layer(src)

    return {"baseline": baseline, "bare modes": bare_modes, "tracked": tracked, "after": baseline}


def measure(label: str, layer: torch.nn.Module, src: torch.Tensor, rounds: int, number: int, grad):
    variants = _variants(layer, src)
    samples: dict[str, list[float]] = {name: [] for name in variants}
    with grad():
        for fn in variants.values():  # warm-up: first calls build caches and allocate
            fn()
        for _ in range(rounds):
            for name, fn in variants.items():
                samples[name].append(timeit.timeit(fn, number=number) / number)
        with sw.track_copies() as log:
            layer(src)
    assert not _get_current_function_mode_stack() and not _get_current_dispatch_mode_stack()
    median = {name: statistics.median(values) * 1e6 for name, values in samples.items()}
    print(f"\n{label}: {log.summary()}")
    for name, value in median.items():
        print(f"  {name:12s} {value:9.1f} µs   x{value / median['baseline']:.2f} of baseline")
    ops = sum(len(event.ops) for event in log.events)
    extra = median["tracked"] - median["baseline"]
    print(
        f"  {len(log.events)} events, {ops} ATen ops per forward: tracking adds {extra:.0f} µs "
        f"= {extra / ops:.1f} µs per ATen op (bare modes alone: "
        f"{(median['bare modes'] - median['baseline']) / ops:.1f} µs)"
    )
    ratio = median["tracked"] / median["baseline"]
    print(
        f"  => tracked/baseline = {ratio:.2f}x (target < 3), "
        f"tracking cost over bare modes = {median['tracked'] / median['bare modes']:.2f}x, "
        f"after/baseline = {median['after'] / median['baseline']:.2f}x (target ~1)"
    )
    return median


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--number", type=int, default=20)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(args.threads)  # the team machine has 2 shared cores: keep it steady
    d_model, heads, batch, seq = 64, 4, 8, 32
    layer = torch.nn.TransformerEncoderLayer(
        d_model, heads, dim_feedforward=4 * d_model, dropout=0.0, batch_first=True
    )
    src = torch.randn(batch, seq, d_model)
    print(
        f"TransformerEncoderLayer(d_model={d_model}, nhead={heads}, ff={4 * d_model}), "
        f"src {tuple(src.shape)}, torch {torch.__version__}, {args.threads} thread(s), "
        f"{args.rounds} rounds x {args.number} forwards, medians"
    )
    measure("train mode, autograd on", layer.train(), src, args.rounds, args.number, nullcontext)
    measure(
        "eval mode, torch.no_grad()", layer.eval(), src, args.rounds, args.number, torch.no_grad
    )
    # autograd off: the tracker runs CompositeImplicitAutograd ops' decompositions itself
    measure(
        "eval mode, torch.inference_mode()",
        layer.eval(),
        src,
        args.rounds,
        args.number,
        torch.inference_mode,
    )


if __name__ == "__main__":
    main()
