"""Every private torch API the package uses, one small function each: the torch version it was
written against is noted, a fallback keeps the rest of the package working where it moved.

Nothing here is imported at ``import stridewidget``: torch is imported by the callers.
"""

from __future__ import annotations

import sys
from typing import Any

# --- symbolic shapes and AOTAutograd (sw.graph; written against torch 2.13) ----------------------


def _torch_version() -> tuple[int, int]:
    torch = sys.modules["torch"]
    major, minor = torch.__version__.split(".")[:2]
    return int(major), int(minor)


def is_symbolic(value: Any) -> bool:
    """A torch ``SymInt`` that is not a constant (a constant one is just an int)."""
    torch = sys.modules.get("torch")
    if torch is None or not isinstance(value, torch.SymInt):
        return False
    return value.node.maybe_as_int() is None


def known_true(condition: Any) -> bool:
    """``condition`` (a bool or SymBool) is proven true, without adding a guard.

    ``torch.fx.experimental.symbolic_shapes.statically_known_true`` (public-ish since 2.4); before
    that nothing symbolic is proven.
    """
    if isinstance(condition, bool):
        return condition
    try:
        from torch.fx.experimental.symbolic_shapes import statically_known_true
    except ImportError:  # pragma: no cover - torch < 2.4
        return False
    return statically_known_true(condition)


def known_false(condition: Any) -> bool:
    """``condition`` is proven false, without adding a guard (``statically_known_false``)."""
    if isinstance(condition, bool):
        return not condition
    try:
        from torch.fx.experimental.symbolic_shapes import statically_known_false
    except ImportError:  # pragma: no cover - torch < 2.6
        return False
    return statically_known_false(condition)


def symbol_values(value: Any, fallback: int) -> dict[str, int]:
    """Each symbol of a SymInt expression with its example value (the size it was traced at),
    read without a guard; ``{}`` for an int.

    Backed symbols read ``ShapeEnv.backed_var_to_val`` (private; ``var_to_val`` before 2.13); unbacked ones (a
    ``nonzero()`` size) have none and get ``fallback``, raised to their known lower bound.
    """
    if not is_symbolic(value):
        return {}
    shape_env = value.node.shape_env
    # renamed backed_var_to_val in torch 2.13 (var_to_val still works there, with a warning)
    known = getattr(shape_env, "backed_var_to_val", None)
    if known is None:
        known = getattr(shape_env, "var_to_val", {})
    ranges = getattr(shape_env, "var_to_range", {})
    values = {}
    for symbol in value.node.expr.free_symbols:
        if symbol in known:
            values[str(symbol)] = int(known[symbol])
        else:
            low = getattr(ranges.get(symbol), "lower", 0)
            values[str(symbol)] = max(fallback, int(low) if low.is_finite else fallback)
    return values


def symbol_example(value: Any, fallback: int, bindings: dict[str, int] | None = None) -> int:
    """The example value of a SymInt expression (an int as it is), without a guard; symbols named
    in ``bindings`` take those values (sizes read off real tensors) instead of their hints."""
    if not is_symbolic(value):
        return int(value)
    expr = value.node.expr
    values = {**symbol_values(value, fallback), **(bindings or {})}
    return int(expr.xreplace({s: values[str(s)] for s in expr.free_symbols}))


def symbol_names(value: Any) -> frozenset[str]:
    """Names of the symbols in a SymInt expression (``{"s0"}``); empty for an int."""
    if not is_symbolic(value):
        return frozenset()
    return frozenset(str(s) for s in value.node.expr.free_symbols)


def fake_mode_of(tensor: Any) -> Any:
    """The ``FakeTensorMode`` of a FakeTensor (``torch._subclasses.fake_tensor``), else ``None``."""
    fake_tensor = sys.modules.get("torch._subclasses.fake_tensor")
    if fake_tensor is None or not isinstance(tensor, fake_tensor.FakeTensor):
        return None
    return tensor.fake_mode


def op_overload_class() -> type:
    """``torch._ops.OpOverload`` (torch 1.13 to 2.13: the class of ``torch.ops.aten.add.Tensor``)."""
    ops = getattr(sys.modules["torch"], "_ops", None)
    return getattr(ops, "OpOverload", type(None))


def compiled_original(obj: Any) -> Any:
    """The model or function a ``torch.compile`` wrapper compiles, else ``None``.

    ``OptimizedModule._orig_mod`` and ``_torchdynamo_orig_callable`` (torch 2.0 to 2.13).
    """
    dynamo = sys.modules.get("torch._dynamo.eval_frame")
    optimized = getattr(dynamo, "OptimizedModule", None)
    if optimized is not None and isinstance(obj, optimized):
        return obj._orig_mod
    return getattr(obj, "_torchdynamo_orig_callable", None)


def recording_backend(record: Any) -> Any:
    """A ``torch.compile`` backend built on AOTAutograd that hands ``record(stage, gm, args)``
    every forward and backward graph with the real arguments of each call, and runs the graphs
    as they are (eagerly: no Inductor).  A forward graph's ``gm.meta["user_outputs"]`` is the
    ``(start, count)`` of the user's outputs among the graph's outputs (AOTAutograd returns the
    mutated inputs first and the saved activations last), or ``None`` where unknown.

    ``torch._dynamo.backends.common.aot_autograd`` and ``TracingContext.fw_metadata`` (a
    ``ViewAndMutationMeta``; torch 2.1 to 2.13).
    """
    if _torch_version() < (2, 1):  # pragma: no cover
        raise RuntimeError("sw.graph(stage='forward'/'backward') needs torch >= 2.1")
    from torch._dynamo.backends.common import aot_autograd

    def compiler(stage: str) -> Any:
        def compile_graph(gm: Any, example_inputs: Any) -> Any:
            if stage == "forward":
                gm.meta["user_outputs"] = _user_output_window()

            def run(args: list[Any]) -> Any:
                record(stage, gm, list(args))
                return gm(*args)

            run._boxed_call = True  # AOTAutograd's calling convention: one list of arguments
            return run

        return compile_graph

    return aot_autograd(fw_compiler=compiler("forward"), bw_compiler=compiler("backward"))


def _user_output_window() -> tuple[int, int] | None:
    from torch._guards import TracingContext

    context = TracingContext.try_get()
    meta = getattr(context, "fw_metadata", None)
    try:
        return int(meta.num_mutated_inp_runtime_indices), len(meta.output_info)
    except AttributeError:  # moved: compare_eager falls back to the outputs' shapes
        return None


def tree_leaves(tree: Any) -> list[Any]:
    """The leaves of nested tuples/lists/dicts, in torch's order (``torch.utils._pytree``,
    torch 1.11 to 2.13; the flattening ``torch.export`` uses for a program's inputs)."""
    from torch.utils import _pytree

    return _pytree.tree_leaves(tree)


def export_user_error() -> type:
    """The error ``torch.export`` raises for the user's own mistakes, such as ``dynamic_shapes``
    that its constraints refuse (``torch._dynamo.exc.UserError``, torch 2.1 to 2.13)."""
    try:
        from torch._dynamo.exc import UserError
    except ImportError:  # pragma: no cover - moved: every export error falls back to strict
        return type("NeverRaised", (Exception,), {})
    return UserError


def tree_map(fn: Any, tree: Any) -> Any:
    """``fn`` applied to each leaf of nested tuples/lists/dicts (``torch.utils._pytree``, torch
    1.11 to 2.13)."""
    from torch.utils import _pytree

    return _pytree.tree_map(fn, tree)


def dispatch_mode_class() -> type:
    """``TorchDispatchMode`` (``torch.utils._python_dispatch``, torch 1.13 to 2.13)."""
    from torch.utils._python_dispatch import TorchDispatchMode

    return TorchDispatchMode
