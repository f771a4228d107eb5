"""ATen ops as torch's dispatcher sees them: dispatch modes, op schemas and overloads, dispatch
keys and kernels, reference decompositions, and switching torch-function handling off."""

from __future__ import annotations

import sys
from typing import Any

__all__ = [
    "composite_implicit_key",
    "decomposition_table",
    "disable_current_modes",
    "disable_torch_function",
    "dispatch_mode_base",
    "has_kernel",
    "op_arguments",
    "op_overload_class",
    "op_returns",
    "op_runner",
    "op_schema",
    "overload_name",
    "run_composite_implicit",
    "schema_name",
]


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


def op_overload_class() -> type:
    """``torch._ops.OpOverload`` (torch 1.13 to 2.13: the class of ``torch.ops.aten.add.Tensor``);
    without it ``NoneType``, so that no node target is taken for an op overload.

    >>> import torch
    >>> isinstance(torch.ops.aten.add.Tensor, op_overload_class())
    True
    """
    ops = getattr(sys.modules["torch"], "_ops", None)
    return getattr(ops, "OpOverload", type(None))


def op_runner(func: Any) -> Any:
    """What calling the ATen op ``func`` runs: an ``OpOverload``'s C++ op (``OpOverload._op``,
    checked on torch 2.0–2.13: its ``__call__`` is ``return self._op(*args, **kwargs)``), called
    without that Python frame; anything else (a subclass with its own ``__call__``) itself.

    >>> import torch
    >>> op_runner(torch.ops.aten.neg.default)(torch.ones(2)).tolist()
    [-1.0, -1.0]
    """
    overload = op_overload_class()
    runner = getattr(func, "_op", None)
    if type(func) is overload and type(func).__call__ is overload.__call__ and callable(runner):
        return runner
    return func


def op_returns(func: Any) -> list[Any]:
    """The schema returns of an ATen / custom op (``OpOverload._schema.returns``, checked on torch
    2.13 (the floor)): each has ``alias_info`` (not ``None`` for a return that aliases an input).
    Without a schema, ``[]``: no return is known to be a view, so the op is taken for one whose
    kernel may copy (searched for copies, which finds only real ones).

    >>> import torch
    >>> [r.alias_info is not None for r in op_returns(torch.ops.aten.transpose.int)]
    [True]
    """
    schema = op_schema(func)
    return [] if schema is None else list(schema.returns)


def schema_name(func: Any) -> str:
    """An op's name without its overload (``"aten::addmm"``), the name the profiler gives its
    events: ``OpOverload._schema.name`` (checked on torch 2.13 (the floor)), else the public
    ``name()`` with the overload cut off.

    >>> import torch
    >>> schema_name(torch.ops.aten.add.Tensor), schema_name(torch.ops.aten.clone.default)
    ('aten::add', 'aten::clone')
    """
    schema = op_schema(func)
    return func.name().partition(".")[0] if schema is None else schema.name


def composite_implicit_key() -> Any:
    """The dispatch key of an op's decomposition into other ATen ops:
    ``torch._C.DispatchKey.CompositeImplicitAutograd`` (checked on torch 2.13 (the floor)), else its
    name, which torch's dispatcher functions take too.

    >>> composite_implicit_key().name
    'CompositeImplicitAutograd'
    """
    keys = getattr(sys.modules["torch"]._C, "DispatchKey", None)
    return "CompositeImplicitAutograd" if keys is None else keys.CompositeImplicitAutograd


def has_kernel(func: Any, key: Any) -> bool:
    """Does ``func`` have a C++ kernel registered for dispatch key ``key`` (a ``DispatchKey`` or
    its name)?  ``torch._C._dispatch_has_kernel_for_dispatch_key`` (checked on torch 2.13 (the
    floor); raises ``RuntimeError`` for an op not in the dispatcher).  Without it, ``False``: no
    kernel is known, so a composite op is followed through ``torch._decomp``'s reference (where
    there is one) rather than its C++ decomposition, and under ``inference_mode`` recorded whole.

    >>> import torch
    >>> has_kernel(torch.ops.aten.reshape.default, composite_implicit_key())
    True
    >>> has_kernel(torch.ops.aten.reshape.default, "CPU")
    False
    """
    check = getattr(sys.modules["torch"]._C, "_dispatch_has_kernel_for_dispatch_key", None)
    return False if check is None else check(func.name(), key)


def run_composite_implicit(func: Any, *args: Any, **kwargs: Any) -> Any:
    """Run ``func``'s CompositeImplicitAutograd (C++) kernel: its decomposition, whose ops the
    dispatch modes active then see.  ``OpOverload._op_dk`` (checked on torch 2.13 (the floor)), else
    the public ``OpOverload.decompose`` (which prefers a Python decomposition registered for that
    key); a ``RuntimeError`` where neither has one.

    >>> import torch
    >>> run_composite_implicit(torch.ops.aten.reshape.default, torch.arange(4), [2, 2]).shape
    torch.Size([2, 2])
    """
    run = getattr(func, "_op_dk", None)
    if run is not None:
        return run(composite_implicit_key(), *args, **kwargs)
    result = func.decompose(*args, **kwargs)
    if result is NotImplemented:
        raise RuntimeError(f"{func.name()} has no CompositeImplicitAutograd kernel to run")
    return result


def disable_current_modes() -> Any:
    """A context manager that pops every active dispatch mode for its block (and pushes them
    back): ``torch.utils._python_dispatch._disable_current_modes`` (checked on torch 2.13 (the
    floor)).  torch has no public one, so without it an ``ImportError`` that says what is missing.

    >>> with disable_current_modes():
    ...     pass
    """
    try:
        from torch.utils._python_dispatch import _disable_current_modes
    except ImportError:
        version = sys.modules["torch"].__version__
        raise ImportError(
            f"stridewidget needs torch's _disable_current_modes (torch.utils._python_dispatch), "
            f"which torch {version} does not have"
        ) from None
    return _disable_current_modes()


def interception_modes_on() -> bool:
    """Is a Python torch-function mode or dispatch mode on this thread's stack
    (``sw.track_copies()``, ``sw.sanitize()``, a user's own)?  ``torch._C._len_torch_function_stack``
    and ``_len_torch_dispatch_stack`` (checked on torch 2.13 (the floor)); without them, False
    (torch.compile then says for itself that it made no graph).

    >>> interception_modes_on()
    False
    """
    torch_c = sys.modules["torch"]._C
    lengths = [getattr(torch_c, name, None) for name in _STACK_LENGTHS]
    return any(length is not None and length() > 0 for length in lengths)


_STACK_LENGTHS = ("_len_torch_function_stack", "_len_torch_dispatch_stack")


def decomposition_table() -> dict[Any, Any]:
    """``torch._decomp.decomposition_table``: op → its Python reference decomposition (checked on
    torch 2.13 (the floor); large, so imported at first use).  Without it, ``{}``: no reference is
    followed, and an op with no C++ decomposition counts as compute (its copies go unreported,
    none is invented).

    >>> import torch
    >>> torch.ops.aten.tril.default in decomposition_table()
    True
    """
    try:
        from torch._decomp import decomposition_table as table
    except ImportError:
        return {}
    return table


def disable_torch_function() -> Any:
    """A context manager that turns torch-function handling (``__torch_function__``, torch
    function modes) off for its block: ``torch._C.DisableTorchFunction`` (checked on torch 2.13
    (the floor)).  torch has no public one, so without it a ``RuntimeError`` that says what is missing
    (going on without it would fold every backward op into one call).

    >>> with disable_torch_function():
    ...     pass
    """
    torch = sys.modules["torch"]
    disable = getattr(torch._C, "DisableTorchFunction", None)
    if disable is None:
        raise RuntimeError(
            f"sw.audit needs torch._C.DisableTorchFunction, which torch {torch.__version__} "
            "does not have"
        )
    return disable()


def stored_tensor_attributes() -> frozenset[Any]:
    """The descriptors of the ``Tensor`` attributes whose read returns a tensor the tensor holds,
    running no ATen op: ``grad`` (public), ``_grad`` and ``_base`` (private; checked on torch 2.13
    (the floor)).  A torch without a private one leaves it out: its reads then stay events of the
    copy log, as they were.

    >>> import torch
    >>> torch.Tensor.grad in stored_tensor_attributes()
    True
    """
    tensor = sys.modules["torch"].Tensor
    names = ("grad", "_grad", "_base")
    return frozenset(getattr(tensor, name) for name in names if hasattr(tensor, name))
