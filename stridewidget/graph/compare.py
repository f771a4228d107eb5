"""``Graph.compare_eager``: the strides a captured graph gives its outputs (its custom ops'
inputs and outputs, and at the backward stage the gradients) against the strides the eager model really
produces.

The eager model runs on copies of the captured inputs, under the grad mode the graph was traced
with (``torch.no_grad()`` can take other kernels: ``nn.MultiheadAttention``'s fast path).
Symbolic strides are evaluated at the eager run's real sizes (each symbol bound from the real
inputs, and an unbacked one from the real output), never by guarding.  Dims of size 1 are
skipped: their stride never matters (PyTorch's rule).
"""

from __future__ import annotations

import contextlib
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import torch

from .._compat import (
    dispatch_mode_base,
    is_higher_order,
    is_symbolic,
    run_higher_order,
    symbol_example,
    tree_leaves,
)
from .capture import Capture, buffers_kept, cloned
from .nodes import _OP_OVERLOAD, _TORCH_NAMESPACES, op_name, tensor_values

__all__ = ["Mismatch", "compare_eager"]


@dataclass(frozen=True)
class Mismatch:
    """One tensor whose compiled strides (or shape) differ from eager's: ``node`` is the graph
    node's name, ``what`` says which tensor (``output 0``, ``input 1 of mylib::op``, ``gradient
    of x``), followed by ``(shape differs)`` when the sizes differ: ``shape`` is the graph's,
    ``eager_shape`` eager's (the strides of two shapes are not compared).  ``output i`` is the
    i-th of the user's outputs, flattened, non-tensors counted: in ``return x.shape[0], y`` the
    tensor ``y`` is ``output 1``.

    >>> import torch, stridewidget as sw
    >>> m = sw.graph.Mismatch("op", "output 0 (shape differs)", (4, 3), (4, 1), (3, 1), (3, 4))
    >>> m.shape_differs, m.eager_shape
    (True, (3, 4))
    """

    node: str
    what: str
    shape: tuple[Any, ...]
    eager_strides: tuple[int, ...]
    compiled_strides: tuple[Any, ...]
    eager_shape: tuple[int, ...] | None = None  # None: not recorded (taken as ``shape``)

    @property
    def shape_differs(self) -> bool:
        """True when eager's tensor has other sizes than the graph's."""
        return self.what.endswith("(shape differs)")


class _CustomOpInputs(dispatch_mode_base()):  # type: ignore[misc]
    """Records the strides of every tensor input of each custom (non-torch) op call, in order
    (inside a higher-order op's subgraphs too)."""

    supports_higher_order_operators = True

    def __init__(self) -> None:
        super().__init__()
        self.calls: dict[str, list[Any]] = defaultdict(list)  # (shape, strides) per tensor

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        if is_higher_order(func):
            return run_higher_order(self, func, args, kwargs or {}, "compare_eager")
        result = func(*args, **(kwargs or {}))
        if func.namespace not in _TORCH_NAMESPACES:
            tensors = [t for t in tree_leaves((args, kwargs or {})) if isinstance(t, torch.Tensor)]
            outputs = [t for t in tree_leaves(result) if isinstance(t, torch.Tensor)]
            self.calls[f"{func.namespace}::{op_name(func)}"].append(
                ([(t.shape, t.stride()) for t in tensors], [(t.shape, t.stride()) for t in outputs])
            )
        return result


def _bind(bindings: dict[str, int], fake: Any, real: Any) -> None:
    """Bind each bare symbol among ``fake``'s sizes and strides to ``real``'s value there."""
    if not isinstance(fake, torch.Tensor) or not isinstance(real, torch.Tensor):
        return
    if fake.dim() != real.dim():
        return
    for symbolic, value in [*zip(fake.shape, real.shape), *zip(fake.stride(), real.stride())]:
        if is_symbolic(symbolic) and symbolic.node.expr.is_Symbol:
            bindings.setdefault(str(symbolic.node.expr), int(value))


def _input_bindings(captured: Capture) -> dict[str, int]:
    bindings: dict[str, int] = {}
    for module, real in zip(captured.modules, captured.real_inputs):
        placeholders = [n for n in module.graph.nodes if n.op == "placeholder"]
        for node, value in zip(placeholders, real):
            _bind(bindings, node.meta.get("val"), value)
    return bindings


def _differ(shape: Any, eager: tuple[int, ...], compiled: tuple[Any, ...], bound: dict) -> bool:
    sizes = [symbol_example(n, 2, bound) for n in shape]
    if 0 in sizes or len(eager) != len(compiled):
        return len(eager) != len(compiled)
    return any(
        n != 1 and e != symbol_example(c, 2, bound) for n, e, c in zip(sizes, eager, compiled)
    )


def _compared(
    name: str, what: str, fake: Any, eager_shape: Any, eager_strides: Any, bound: dict
) -> list[Mismatch]:
    """``fake`` (the graph's tensor) against eager's: a shape difference is said as one, and
    only tensors of one shape have their strides compared."""
    sizes = tuple(symbol_example(n, 2, bound) for n in fake.shape)
    eager_shape, eager_strides = tuple(eager_shape), tuple(eager_strides)
    if sizes != eager_shape:
        what = f"{what} (shape differs)"
    elif not _differ(fake.shape, eager_strides, fake.stride(), bound):
        return []
    shape, strides = _text(fake.shape), _text(fake.stride())
    return [Mismatch(name, what, shape, eager_strides, strides, eager_shape)]


def _text(strides: Any) -> tuple[Any, ...]:
    return tuple(s if isinstance(s, int) else str(s) for s in strides)


def _graph_outputs(module: Any) -> list[Any]:
    output = next(n for n in module.graph.nodes if n.op == "output")
    return list(tree_leaves(output.args))


def _output_nodes(captured: Capture, eager: list[Any], bound: dict) -> list[tuple[int, Any]]:
    """``(position, node)`` for each of the user's tensor outputs: its position among the
    user's outputs (non-tensors, such as ``x.shape[0]`` or ``3``, counted) and its graph node.

    An exported program's signature says which outputs are the user's (the others are mutated
    buffers); they are the user's outputs one for one, non-tensors included.  The user's outputs
    come from the last compiled graph (after a graph break the earlier graphs hand values to
    Python, not to the user); AOTAutograd's output metadata says where among its outputs they
    are (its effect tokens and the mutated inputs come first, saved activations last), and dynamo
    may return fewer (a constant) or other values: those are matched by their shapes.
    """
    flat = _graph_outputs(captured.modules[-1])
    positions = [i for i, value in enumerate(eager) if isinstance(value, torch.Tensor)]
    tensors = [eager[i] for i in positions]
    if captured.program is not None:
        specs = captured.program.graph_signature.output_specs
        user = [a for a, spec in zip(flat, specs) if spec.kind.name == "USER_OUTPUT"]
        if len(user) == len(eager):
            return [(i, user[i]) for i in positions if hasattr(user[i], "meta")]
        flat = [a for a in user if hasattr(a, "meta")]
    window = captured.modules[-1].meta.get("user_outputs")
    if window is not None:
        start, count = window
        if count == len(tensors):
            return list(zip(positions, flat[start : start + count]))
        flat = flat[start : start + count]
    wanted = [tuple(t.shape) for t in tensors]  # dynamo returned other values than the user's
    for start in range(len(flat) - len(wanted) + 1):
        chosen = flat[start : start + len(wanted)]
        if [_example_shape(node, bound) for node in chosen] == wanted:
            return list(zip(positions, chosen))
    return []


def _example_shape(node: Any, bound: dict) -> tuple[int, ...] | None:
    values = tensor_values(getattr(node, "meta", {}).get("val"))
    return tuple(symbol_example(n, 2, bound) for n in values[0].shape) if values else None


def _has_custom_ops(captured: Capture) -> bool:
    """Does a captured graph (or a subgraph it runs: a cond branch) call a custom op?"""
    return any(
        isinstance(node.target, _OP_OVERLOAD) and node.target.namespace not in _TORCH_NAMESPACES
        for module in captured.modules
        for inner in module.modules()
        if isinstance(inner, torch.fx.GraphModule)
        for node in inner.graph.nodes
    )


def _eager_run(captured: Capture) -> tuple[list[Any], dict[str, list], dict[Any, Any]]:
    """The eager outputs, the custom ops' input strides and (backward stage) the gradients."""
    recorder = _CustomOpInputs()
    # the recording mode only where there is a custom op to record: under any dispatch mode,
    # torch cannot differentiate a torch.cond (its backward traces the branches)
    recording = recorder if _has_custom_ops(captured) else contextlib.nullcontext()
    args, kwargs = cloned((captured.args, captured.kwargs))
    grads: dict[Any, Any] = {}
    with buffers_kept(captured.eager), torch.set_grad_enabled(captured.grad_enabled), recording:
        outputs = captured.eager(*args, **kwargs)
        leaves = tree_leaves(outputs)  # every output: a non-tensor one keeps its place
        if captured.stage == "backward":
            named = {("input", i): t for i, t in enumerate(tree_leaves((args, kwargs)))}
            if isinstance(captured.eager, torch.nn.Module):
                named.update({("param", n): p for n, p in captured.eager.named_parameters()})
            named = {k: t for k, t in named.items() if isinstance(t, torch.Tensor)}
            named = {k: t for k, t in named.items() if t.requires_grad}
            wanted = [t for t in leaves if isinstance(t, torch.Tensor) and t.requires_grad]
            # the backward graphs' custom-op calls are the ones the backward makes
            before = {name: len(calls) for name, calls in recorder.calls.items()}
            found = torch.autograd.grad(
                wanted,
                list(named.values()),
                [torch.ones_like(t) for t in wanted],
                allow_unused=True,
            )
            grads = dict(zip(named, found))
            return leaves, {k: v[before.get(k, 0) :] for k, v in recorder.calls.items()}, grads
    return leaves, recorder.calls, grads


def compare_eager(captured: Capture) -> list[Mismatch]:
    """Run the eager model on copies of the capture's example inputs; list the strides that
    differ."""
    if captured.eager is None:
        raise ValueError("compare_eager needs the eager model: pass it to sw.graph")
    try:
        eager_outputs, eager_calls, grads = _eager_run(captured)
    except Exception as error:  # the model itself fails in eager on these inputs
        raise RuntimeError(
            f"compare_eager: the eager model raised {type(error).__name__}: "
            f"{str(error).splitlines()[0] if str(error) else ''} — on copies of the example "
            "inputs, so there is no eager run to compare the compiled strides with"
        ) from error
    bound = _input_bindings(captured)
    mismatches = []
    if captured.stage != "backward":
        pairs = _output_nodes(captured, eager_outputs, bound)
        for i, node in pairs:
            _bind(bound, (tensor_values(node.meta.get("val")) or [None])[0], eager_outputs[i])
        for i, node in pairs:
            mismatches.extend(_mismatch(node, f"output {i}", eager_outputs[i], bound))
    else:
        mismatches.extend(_gradient_mismatches(captured, grads, bound))
    mismatches.extend(_custom_op_mismatches(captured, eager_calls, bound))
    return mismatches


def _mismatch(node: Any, what: str, eager: Any, bound: dict) -> list[Mismatch]:
    values = tensor_values(getattr(node, "meta", {}).get("val"))
    if not values:
        return []
    return _compared(node.name, what, values[0], eager.shape, eager.stride(), bound)


def _gradient_mismatches(captured: Capture, grads: dict, bound: dict) -> list[Mismatch]:
    """Each gradient against eager's: the backward graph's output, except where an output is an
    input or a view of one: its gradient is added outside the graph, so the graph's output is a
    partial sum, and the gradient the compiled run really produced is compared instead."""
    found = []
    for module, sources in zip(captured.modules, captured.grad_of):
        for node, source in zip(_graph_outputs(module), sources):
            eager = grads.get(source)
            if node is not None and eager is not None and source not in captured.compiled_grads:
                what = f"gradient of {source[0]} {source[1]}"
                found.extend(_mismatch(node, what, eager, bound))
    for source, compiled in captured.compiled_grads.items():
        eager = grads.get(source)
        if eager is not None:
            name, what = f"{source[0]} {source[1]}", f"gradient of {source[0]} {source[1]}"
            found.extend(_compared(name, what, compiled, eager.shape, eager.stride(), bound))
    return found


def _custom_op_mismatches(captured: Capture, eager_calls: dict, bound: dict) -> list[Mismatch]:
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
            eager_inputs, eager_outputs = calls[seen[name]]
            seen[name] += 1
            inputs = [
                t
                for a in tree_leaves((node.args, node.kwargs))
                if hasattr(a, "meta")
                for t in tensor_values(a.meta.get("val"))
            ]
            # its outputs too: a fake kernel that lies about them misleads every op after it,
            # whether or not the lie reaches the graph's outputs
            outputs = tensor_values(node.meta.get("val"))
            for what, fakes, eagers in (
                ("input", inputs, eager_inputs),
                ("output", outputs, eager_outputs),
            ):
                for i, (fake, (shape, strides)) in enumerate(zip(fakes, eagers)):
                    found.extend(
                        _compared(node.name, f"{what} {i} of {name}", fake, shape, strides, bound)
                    )
    return found
