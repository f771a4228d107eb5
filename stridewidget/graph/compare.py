"""``Graph.compare_eager``: the strides a captured graph gives its outputs (and its custom ops'
inputs) against the strides the eager model really produces.

Compiled strides are the graph's own FakeTensors; symbolic ones are compared at the example
sizes the eager run uses (their symbols' hints), never by guarding.  Dims of size 1 are skipped:
their stride never matters (PyTorch's rule).
"""

from __future__ import annotations

import contextlib
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import torch

from .._compat import dispatch_mode_base, symbol_example, tree_leaves
from .capture import Capture, buffers_kept
from .nodes import _TORCH_NAMESPACES, op_name, tensor_values

__all__ = ["Mismatch", "compare_eager"]


@dataclass(frozen=True)
class Mismatch:
    """One tensor whose compiled strides differ from eager's: ``node`` is the graph node's name,
    ``what`` says which tensor (``output 0``, ``input 1 of mylib::op``)."""

    node: str
    what: str
    shape: tuple[Any, ...]
    eager_strides: tuple[int, ...]
    compiled_strides: tuple[Any, ...]


class _CustomOpInputs(dispatch_mode_base()):  # type: ignore[misc]
    """Records the strides of every tensor input of each custom (non-torch) op call, in order."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: dict[str, list[list[tuple[int, ...]]]] = defaultdict(list)

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        if func.namespace not in _TORCH_NAMESPACES:
            tensors = [t for t in tree_leaves((args, kwargs or {})) if isinstance(t, torch.Tensor)]
            self.calls[f"{func.namespace}::{op_name(func)}"].append([t.stride() for t in tensors])
        return func(*args, **(kwargs or {}))


def _differ(shape: Any, eager: tuple[int, ...], compiled: tuple[Any, ...]) -> bool:
    sizes = [symbol_example(n, 2) for n in shape]
    if 0 in sizes or len(eager) != len(compiled):
        return len(eager) != len(compiled)
    return any(n != 1 and e != symbol_example(c, 2) for n, e, c in zip(sizes, eager, compiled))


def _text(strides: Any) -> tuple[Any, ...]:
    return tuple(s if isinstance(s, int) else str(s) for s in strides)


def _output_nodes(captured: Capture, eager: list[Any]) -> list[Any]:
    """The graph's nodes for the user's outputs, in order.

    An exported program's signature says which outputs are the user's (the others are mutated
    buffers); an AOTAutograd forward graph returns mutated inputs first and saved activations
    last, so its user outputs are the first run of outputs whose shapes are the eager ones.
    """
    output = next(n for n in captured.modules[0].graph.nodes if n.op == "output")
    flat = [a for a in tree_leaves(output.args) if hasattr(a, "meta")]
    if captured.program is not None:
        specs = captured.program.graph_signature.output_specs
        return [a for a, spec in zip(flat, specs) if spec.kind.name == "USER_OUTPUT"]
    wanted = [tuple(t.shape) for t in eager]
    for start in range(len(flat) - len(wanted) + 1):
        window = flat[start : start + len(wanted)]
        if [_example_shape(node) for node in window] == wanted:
            return window
    return []


def _example_shape(node: Any) -> tuple[int, ...] | None:
    values = tensor_values(node.meta.get("val"))
    return tuple(symbol_example(n, 2) for n in values[0].shape) if values else None


def _eager_run(captured: Capture) -> tuple[list[Any], dict[str, list[list[tuple[int, ...]]]]]:
    recorder = _CustomOpInputs()
    with buffers_kept(captured.eager), recorder:
        outputs = captured.eager(*captured.args, **captured.kwargs)
        leaves = [t for t in tree_leaves(outputs) if isinstance(t, torch.Tensor)]
        if captured.stage == "backward":
            wanted = [t for t in leaves if t.requires_grad]
            inputs = [
                t
                for t in [
                    *(captured.eager.parameters() if hasattr(captured.eager, "parameters") else ()),
                    *tree_leaves((captured.args, captured.kwargs)),
                ]
                if isinstance(t, torch.Tensor) and t.requires_grad
            ]
            torch.autograd.grad(
                wanted, inputs, [torch.ones_like(t) for t in wanted], allow_unused=True
            )
    return leaves, recorder.calls


def compare_eager(captured: Capture) -> list[Mismatch]:
    """Run the eager model on the capture's example inputs; list the strides that differ."""
    if captured.eager is None:
        raise ValueError("compare_eager needs the eager model: pass it to sw.graph")
    with torch.no_grad() if captured.stage != "backward" else contextlib.nullcontext():
        eager_outputs, eager_calls = _eager_run(captured)
    mismatches = []
    if captured.stage != "backward":
        for i, (node, eager) in enumerate(
            zip(_output_nodes(captured, eager_outputs), eager_outputs)
        ):
            values = tensor_values(node.meta.get("val"))
            if values and _differ(values[0].shape, eager.stride(), values[0].stride()):
                mismatches.append(
                    Mismatch(
                        node.name,
                        f"output {i}",
                        _text(values[0].shape),
                        eager.stride(),
                        _text(values[0].stride()),
                    )
                )
    mismatches.extend(_custom_op_mismatches(captured, eager_calls))
    return mismatches


def _custom_op_mismatches(captured: Capture, eager_calls: dict[str, list]) -> list[Mismatch]:
    seen: dict[str, int] = defaultdict(int)
    found = []
    for module in captured.modules:
        for node in module.graph.nodes:
            namespace = getattr(node.target, "namespace", None)
            if node.op != "call_function" or namespace is None or namespace in _TORCH_NAMESPACES:
                continue
            name = f"{namespace}::{op_name(node.target)}"
            calls = eager_calls.get(name, [])
            if seen[name] >= len(calls):
                continue
            eager_strides = calls[seen[name]]
            seen[name] += 1
            inputs = [
                t
                for a in tree_leaves((node.args, node.kwargs))
                if hasattr(a, "meta")
                for t in tensor_values(a.meta.get("val"))
            ]
            for i, (fake, eager) in enumerate(zip(inputs, eager_strides)):
                if _differ(fake.shape, eager, fake.stride()):
                    found.append(
                        Mismatch(
                            node.name,
                            f"input {i} of {name}",
                            _text(fake.shape),
                            eager,
                            _text(fake.stride()),
                        )
                    )
    return found
