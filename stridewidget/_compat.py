"""Every private torch / NumPy API the package uses: one small function per use.

Each names the torch version it was checked against and falls back to something public (or a clear
``None``) when the private name is gone, so a torch upgrade breaks one function here, not a picture.
Every function takes what it needs from ``sys.modules`` or a lazy import, so importing this module
never imports torch.
"""

from __future__ import annotations

import sys
from typing import Any

__all__ = [
    "compiled_original",
    "dispatch_mode_base",
    "export_user_error",
    "fake_mode_of",
    "functional_mutation_count",
    "functorch_transforms",
    "functorch_unwrapped",
    "is_symbolic",
    "known_false",
    "known_true",
    "neg_view",
    "op_arguments",
    "op_overload_class",
    "op_schema",
    "overload_name",
    "recording_backend",
    "storage_id",
    "storage_identity",
    "symbol_example",
    "symbol_names",
    "symbol_values",
    "torch_print_options",
    "torch_summary_options",
    "tree_flatten",
    "tree_leaves",
    "tree_map",
    "version_counter",
    "view_base",
    "wrapped_tensors",
]


# --- wrapper subclasses, functorch transforms (issue 24) ------------------------------------------


def wrapped_tensors(t: Any) -> tuple[Any, ...] | None:
    """The tensors a traceable wrapper subclass (``TwoTensor``, ``DTensor``: its data lives in
    inner tensors, its own storage has no memory) wraps, from ``__tensor_flatten__``; ``None``
    for any other tensor.  Inner attributes that are not tensors (a DTensor's ``device_mesh``)
    are left out.

    >>> import torch
    >>> from torch.testing._internal.two_tensor import TwoTensor
    >>> a, b = torch.zeros(2), torch.ones(2)
    >>> [inner is a or inner is b for inner in wrapped_tensors(TwoTensor(a, b))]
    [True, True]
    >>> wrapped_tensors(a) is None
    True
    """
    torch = sys.modules["torch"]
    if type(t) is torch.Tensor or type(t) is torch.nn.Parameter:
        return None
    try:  # checked on torch 2.1–2.13
        from torch.utils._python_dispatch import is_traceable_wrapper_subclass
    except ImportError:  # gone: the public protocol it checks (__tensor_flatten__/_unflatten__)
        is_traceable_wrapper_subclass = _flattens
    if not is_traceable_wrapper_subclass(t):
        return None
    names, _context = t.__tensor_flatten__()
    inner = (getattr(t, name) for name in names)
    return tuple(value for value in inner if isinstance(value, torch.Tensor))


def _flattens(t: Any) -> bool:
    """A tensor subclass with the (public) traceable wrapper protocol."""
    kind = type(t)
    return (
        isinstance(t, sys.modules["torch"].Tensor)
        and hasattr(kind, "__tensor_flatten__")
        and hasattr(kind, "__tensor_unflatten__")
    )


def _functorch() -> Any:
    """``torch._C._functorch`` (checked on torch 2.0–2.13), else ``None`` (nothing is wrapped)."""
    return getattr(sys.modules["torch"]._C, "_functorch", None)


def functorch_unwrapped(t: Any) -> Any:
    """The tensor one functorch wrapper of ``t`` holds (``vmap``'s BatchedTensor: the batched
    physical tensor, batch dims included; ``grad``'s TensorWrapper; ``functionalize``'s wrapper:
    its current value); ``None`` when ``t`` is not wrapped.  A BatchedTensor or TensorWrapper has
    no storage of its own: this is where its data is.

    >>> import torch
    >>> seen = []
    >>> _ = torch.func.vmap(lambda row: seen.append(functorch_unwrapped(row).shape) or row)(
    ...     torch.zeros(4, 3)
    ... )
    >>> seen, functorch_unwrapped(torch.zeros(2))
    ([torch.Size([4, 3])], None)
    """
    functorch = _functorch()
    if functorch is None or not functorch.is_functorch_wrapped_tensor(t):
        return None
    return functorch.get_unwrapped(t)


def functorch_transforms() -> tuple[str, ...]:
    """The functorch transforms running now, outermost first (``("grad", "vmap")``); ``()``
    outside any.

    >>> import torch
    >>> seen = []
    >>> _ = torch.func.vmap(lambda x: seen.append(functorch_transforms()) or x)(torch.zeros(2))
    >>> functorch_transforms(), seen
    ((), [('vmap',)])
    """
    functorch = _functorch()
    stack = functorch.get_interpreter_stack() if functorch is not None else None
    if not stack:
        return ()
    return tuple(interpreter.key().name.lower() for interpreter in stack)


def functional_mutation_count(t: Any) -> int | None:
    """How many data mutations the storage of ``functionalize``'s wrapper ``t`` (or the one under
    ``t``'s ``vmap``/``grad`` wrappers) has seen: an in-place op under functionalization becomes
    an out-of-place op whose result replaces the wrapper's value, so this counter is how a write
    shows.  ``None`` for other tensors.

    >>> import torch
    >>> def step(x):
    ...     y = x.clone()
    ...     before = functional_mutation_count(y)
    ...     y.add_(1)
    ...     return torch.tensor(functional_mutation_count(y) - before)
    >>> int(torch.func.functionalize(step)(torch.zeros(2)))
    1
    """
    torch = sys.modules["torch"]
    counter = getattr(torch, "_functionalize_mutation_counter", None)  # torch >= 2.5
    if counter is None:
        return None
    # under vmap or grad inside functionalize, the wrapper is under their wrappers
    while t is not None and not torch._is_functional_tensor(t):
        t = functorch_unwrapped(t)
    return None if t is None else counter(t)


# --- dispatch modes, schemas, storages, pytrees (issue 25) --------------------------------------


def dispatch_mode_base() -> type:
    """``TorchDispatchMode``, the base of a mode that sees every ATen op.

    It lives in the private ``torch.utils._python_dispatch`` (checked on torch 2.0–2.13), and it is
    PyTorch's documented way to intercept ops; there is no public alias, so the fallback is an
    ``ImportError`` that says which torch feature is missing (not a bare module path).

    >>> dispatch_mode_base().__name__
    'TorchDispatchMode'
    """
    try:
        from torch.utils._python_dispatch import TorchDispatchMode
    except ImportError:
        version = sys.modules["torch"].__version__
        raise ImportError(
            f"stridewidget needs torch's TorchDispatchMode (torch.utils._python_dispatch), "
            f"which torch {version} does not have"
        ) from None
    return TorchDispatchMode


def op_schema(func: Any) -> Any | None:
    """An ATen / custom op's ``FunctionSchema`` (``OpOverload._schema``, checked on torch
    2.0–2.13: ``name``, ``arguments``, ``returns``); ``None`` without one.

    >>> import torch
    >>> op_schema(torch.ops.aten.clone.default).name
    'aten::clone'
    """
    return getattr(func, "_schema", None)


def op_arguments(func: Any) -> list[Any]:
    """The schema arguments of an ATen / custom op (``OpOverload._schema``, checked on torch
    2.0–2.13): each has ``name``, ``type`` and ``alias_info`` (``is_write`` for a written one).
    Without a schema, ``[]``: no argument is known to be written.

    >>> import torch
    >>> [(a.name, a.alias_info is not None and a.alias_info.is_write)
    ...  for a in op_arguments(torch.ops.aten.add_.Tensor)]
    [('self', True), ('other', False), ('alpha', False)]
    """
    schema = op_schema(func)
    return [] if schema is None else list(schema.arguments)


def overload_name(func: Any) -> str:
    """An op's overload name (``"Tensor"`` of ``aten.add_.Tensor``): ``OpOverload._overloadname``,
    checked on torch 2.0–2.13, else the last part of its public ``name()``.

    >>> import torch
    >>> overload_name(torch.ops.aten.bernoulli_.float)
    'float'
    """
    name = getattr(func, "_overloadname", None)
    if name is None:
        name = func.name().partition(".")[2] or "default"
    return name


def storage_id(storage: Any) -> int:
    """The identity of a storage's ``StorageImpl``, shared by every tensor viewing it (views,
    ``detach()``, ``view(dtype)``): ``UntypedStorage._cdata``, checked on torch 2.0–2.13, else its
    data pointer (equal for storages at one address; 0 for empty ones).

    >>> import torch
    >>> x = torch.zeros(4)
    >>> storage_id(x.untyped_storage()) == storage_id(x[1:].untyped_storage())
    True
    """
    identity = getattr(storage, "_cdata", None)
    return storage.data_ptr() if identity is None else identity


def tree_flatten(value: Any) -> tuple[list[Any], Any]:
    """The leaves of nested containers and a structure to compare: ``torch.utils._pytree``'s
    (checked on torch 2.0–2.13: it knows named tuples and model outputs), else tuples, lists and
    dicts walked here.

    >>> tree_flatten({"a": 1, "b": [2, (3,)]})[0]
    [1, 2, 3]
    """
    try:
        from torch.utils._pytree import tree_flatten as flatten
    except ImportError:  # a torch without it
        leaves: list[Any] = []
        return leaves, _walk(value, leaves)
    return flatten(value)


def _walk(value: Any, leaves: list[Any]) -> Any:
    if type(value) in (tuple, list):
        return (type(value), [_walk(item, leaves) for item in value])
    if type(value) is dict:
        return (dict, [(key, _walk(item, leaves)) for key, item in value.items()])
    leaves.append(value)
    return None


def tree_map(fn: Any, value: Any) -> Any:
    """``value`` with ``fn`` applied to each leaf: ``torch.utils._pytree.tree_map`` (checked on
    torch 2.0–2.13), else tuples, lists and dicts rebuilt here.

    >>> tree_map(lambda n: n * 10, ((1, [2]), {"k": 3}))
    ((10, [20]), {'k': 30})
    """
    try:
        from torch.utils._pytree import tree_map as mapped
    except ImportError:  # a torch without it
        if type(value) in (tuple, list):
            return type(value)(tree_map(fn, item) for item in value)
        if type(value) is dict:
            return {key: tree_map(fn, item) for key, item in value.items()}
        return fn(value)
    return mapped(fn, value)


# --- symbolic shapes and AOTAutograd (sw.graph; written against torch 2.13) ----------------------


def _torch_version() -> tuple[int, int]:
    torch = sys.modules["torch"]
    major, minor = torch.__version__.split(".")[:2]
    return int(major), int(minor)


def is_symbolic(value: Any) -> bool:
    """A torch ``SymInt`` that is not a constant (a constant one is just an int): public
    ``SymInt.node`` (checked on torch 2.13); ``False`` without torch.
    """
    torch = sys.modules.get("torch")
    if torch is None or not isinstance(value, torch.SymInt):
        return False
    return value.node.maybe_as_int() is None


def known_true(condition: Any) -> bool:
    """``condition`` (a bool or SymBool) is proven true, without adding a guard.

    ``torch.fx.experimental.symbolic_shapes.statically_known_true`` (public-ish since 2.4, checked
    on torch 2.13); before that nothing symbolic is proven.
    """
    if isinstance(condition, bool):
        return condition
    try:
        from torch.fx.experimental.symbolic_shapes import statically_known_true
    except ImportError:  # torch < 2.4
        return False
    return statically_known_true(condition)


def known_false(condition: Any) -> bool:
    """``condition`` is proven false, without adding a guard (``statically_known_false``, checked
    on torch 2.13); before torch 2.6 nothing symbolic is proven.
    """
    if isinstance(condition, bool):
        return not condition
    try:
        from torch.fx.experimental.symbolic_shapes import statically_known_false
    except ImportError:  # torch < 2.6
        return False
    return statically_known_false(condition)


def symbol_values(value: Any, fallback: int) -> dict[str, int]:
    """Each symbol of a SymInt expression with its example value (the size it was traced at),
    read without a guard; ``{}`` for an int.

    Backed symbols read ``ShapeEnv.backed_var_to_val`` (checked on torch 2.13; ``var_to_val``
    before); unbacked ones (a ``nonzero()`` size), or all where neither is there, get
    ``fallback``, raised to their known lower bound.
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
    in ``bindings`` take those values (sizes read off real tensors) instead of their hints
    (``SymInt.node.expr``, checked on torch 2.13).
    """
    if not is_symbolic(value):
        return int(value)
    expr = value.node.expr
    values = {**symbol_values(value, fallback), **(bindings or {})}
    return int(expr.xreplace({s: values[str(s)] for s in expr.free_symbols}))


def symbol_names(value: Any) -> frozenset[str]:
    """Names of the symbols in a SymInt expression (``{"s0"}``; ``SymInt.node.expr``, checked on
    torch 2.13); empty for an int.
    """
    if not is_symbolic(value):
        return frozenset()
    return frozenset(str(s) for s in value.node.expr.free_symbols)


def fake_mode_of(tensor: Any) -> Any:
    """The ``FakeTensorMode`` of a FakeTensor (``torch._subclasses.fake_tensor``, checked on torch
    2.13), else ``None`` (also where that module is gone: no tensor is taken for a fake one).

    >>> import torch
    >>> fake_mode_of(torch.zeros(2)) is None
    True
    """
    fake_tensor = sys.modules.get("torch._subclasses.fake_tensor")
    if fake_tensor is None or not isinstance(tensor, fake_tensor.FakeTensor):
        return None
    return tensor.fake_mode


def op_overload_class() -> type:
    """``torch._ops.OpOverload`` (torch 1.13 to 2.13: the class of ``torch.ops.aten.add.Tensor``);
    without it ``NoneType``, so that no node target is taken for an op overload.

    >>> import torch
    >>> isinstance(torch.ops.aten.add.Tensor, op_overload_class())
    True
    """
    ops = getattr(sys.modules["torch"], "_ops", None)
    return getattr(ops, "OpOverload", type(None))


def compiled_original(obj: Any) -> Any:
    """The model or function a ``torch.compile`` wrapper compiles, else ``None``.

    ``OptimizedModule._orig_mod`` and ``_torchdynamo_orig_callable`` (torch 2.0 to 2.13); where
    they are gone, ``None``: the wrapper is audited as it is.

    >>> import torch
    >>> compiled_original(torch.nn.Linear(2, 2)) is None
    True
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
    ``ViewAndMutationMeta``; torch 2.1 to 2.13).  Without ``aot_autograd`` (or on torch < 2.1) a
    ``RuntimeError`` that says so; without ``fw_metadata`` the window is ``None`` and the outputs
    are matched by their shapes.
    """
    if _torch_version() < (2, 1):  # pragma: no cover
        raise RuntimeError("sw.graph(stage='forward'/'backward') needs torch >= 2.1")
    try:
        from torch._dynamo.backends.common import aot_autograd
    except ImportError:
        raise RuntimeError(
            "sw.graph(stage='forward'/'backward') needs torch._dynamo's aot_autograd, which this "
            "torch does not have"
        ) from None

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
    try:
        from torch._guards import TracingContext
    except ImportError:  # moved: compare_eager falls back to the outputs' shapes
        return None
    context = TracingContext.try_get()
    meta = getattr(context, "fw_metadata", None)
    try:
        return int(meta.num_mutated_inp_runtime_indices), len(meta.output_info)
    except AttributeError:  # moved: compare_eager falls back to the outputs' shapes
        return None


def tree_leaves(tree: Any) -> list[Any]:
    """The leaves of nested tuples/lists/dicts, in torch's order (``torch.utils._pytree``,
    torch 1.11 to 2.13; the flattening ``torch.export`` uses for a program's inputs), else
    tuples, lists and dicts walked here.

    >>> tree_leaves(((1, [2]), {"k": 3}))
    [1, 2, 3]
    """
    try:
        from torch.utils._pytree import tree_leaves as leaves_of
    except ImportError:
        leaves: list[Any] = []
        _walk(tree, leaves)
        return leaves
    return leaves_of(tree)


def storage_identity(tensor: Any) -> int | None:
    """An id of the StorageImpl behind ``tensor`` (shared by its views, see :func:`storage_id`,
    whose fallback it shares), ``None`` when it has no storage to tell (sparse, some subclasses).

    >>> import torch
    >>> x = torch.zeros(4)
    >>> storage_identity(x) == storage_identity(x[1:]), storage_identity(x.to_sparse())
    (True, None)
    """
    try:
        return storage_id(tensor.untyped_storage())
    except (RuntimeError, NotImplementedError, TypeError, AttributeError):
        return None


# --- conj / neg views and torch's print options (the storage strip, issue 22) ---------------


def neg_view(t: Any) -> Any | None:
    """A lazily negated view of ``t`` (its neg bit set, no copy), or ``None`` where torch has none.

    ``torch._neg_view`` is private (checked on torch 2.0–2.13); it is the only way to rebuild a
    negative view, e.g. a freed ``torch._neg_view(x)`` the widget redraws from its base.

    >>> import torch
    >>> view = neg_view(torch.tensor([1.0, 2.0]))
    >>> view.is_neg(), view.tolist()
    (True, [-1.0, -2.0])
    """
    import torch

    make = getattr(torch, "_neg_view", None)
    if make is None:  # a torch without it: the caller treats the view as not rebuildable
        return None
    return make(t)


def torch_print_options() -> tuple[int, bool | None]:
    """``(precision, sci_mode)`` as ``torch.set_printoptions`` last set them.

    torch has no public getter: ``torch._tensor_str.PRINT_OPTS`` is private (checked on torch
    2.0–2.13); without it, torch's defaults (4 digits, scientific mode decided by the values).

    >>> import torch
    >>> torch_print_options()
    (4, None)
    """
    import torch

    options = getattr(getattr(torch, "_tensor_str", None), "PRINT_OPTS", None)
    if options is None:
        return 4, None
    return int(getattr(options, "precision", 4)), getattr(options, "sci_mode", None)


def export_user_error() -> type:
    """The error ``torch.export`` raises for the user's own mistakes, such as ``dynamic_shapes``
    that its constraints refuse (``torch._dynamo.exc.UserError``, torch 2.1 to 2.13); where it
    moved, an exception class nothing raises, so every export error falls back to strict."""
    try:
        from torch._dynamo.exc import UserError
    except ImportError:  # moved: every export error falls back to strict
        return type("NeverRaised", (Exception,), {})
    return UserError


def torch_summary_options() -> tuple[int, int]:
    """``(threshold, edgeitems)``: past ``threshold`` elements ``print(t)`` shows ``edgeitems``
    per end of each dim, and picks its number format over just those.

    Read from the private ``torch._tensor_str.PRINT_OPTS`` (checked on torch 2.0–2.13); without
    it, torch's defaults.

    >>> torch_summary_options()
    (1000, 3)
    """
    import torch

    options = getattr(getattr(torch, "_tensor_str", None), "PRINT_OPTS", None)
    if options is None:
        return 1000, 3
    return int(getattr(options, "threshold", 1000)), int(getattr(options, "edgeitems", 3))


# --- view bases and version counters (the widget's refresh) -------------------------------------


def view_base(t: Any) -> Any | None:
    """The tensor ``t`` is a view of (``Tensor._base``, checked on torch 2.0–2.13), ``None`` for
    a tensor that is not a view.  Without ``_base``, ``None``: the widget then follows the view's
    own version counter, which torch shares with its base, so refreshes still come.

    >>> import torch
    >>> x = torch.zeros(4)
    >>> view_base(x[1:]) is x, view_base(x) is None
    (True, True)
    """
    try:
        return t._base
    except AttributeError:
        return None


def version_counter(t: Any) -> int | None:
    """torch's in-place version counter of ``t`` (``Tensor._version``, checked on torch
    2.0–2.13; views share their base's), ``None`` where there is none (inference tensors) or
    where torch no longer has it (then the widget sees a write only in the shown cells' bytes,
    and on CUDA not at all).

    >>> import torch
    >>> x = torch.zeros(2)
    >>> before = version_counter(x)
    >>> _ = x.add_(1)
    >>> version_counter(x) - before
    1
    """
    try:
        return t._version
    except (AttributeError, RuntimeError):  # gone / inference tensors track no version
        return None
