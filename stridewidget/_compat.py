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
    "dispatch_mode_base",
    "functional_mutation_count",
    "functorch_transforms",
    "functorch_unwrapped",
    "op_arguments",
    "overload_name",
    "storage_id",
    "tree_flatten",
    "tree_map",
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
    try:  # torch >= 2.1
        from torch.utils._python_dispatch import is_traceable_wrapper_subclass
    except ImportError:  # older torch: no wrapper subclasses to see through
        return None
    if not is_traceable_wrapper_subclass(t):
        return None
    names, _context = t.__tensor_flatten__()
    inner = (getattr(t, name) for name in names)
    return tuple(value for value in inner if isinstance(value, torch.Tensor))


def _functorch() -> Any:
    """``torch._C._functorch`` (torch >= 2.0), else ``None``."""
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
    PyTorch's documented way to intercept ops; there is no public alias, so no fallback.

    >>> dispatch_mode_base().__name__
    'TorchDispatchMode'
    """
    from torch.utils._python_dispatch import TorchDispatchMode

    return TorchDispatchMode


def op_arguments(func: Any) -> list[Any]:
    """The schema arguments of an ATen / custom op (``OpOverload._schema``, checked on torch
    2.0–2.13): each has ``name``, ``type`` and ``alias_info`` (``is_write`` for a written one).

    >>> import torch
    >>> [(a.name, a.alias_info is not None and a.alias_info.is_write)
    ...  for a in op_arguments(torch.ops.aten.add_.Tensor)]
    [('self', True), ('other', False), ('alpha', False)]
    """
    return list(func._schema.arguments)


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
    except ImportError:  # pragma: no cover - a torch without it
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
    except ImportError:  # pragma: no cover - a torch without it
        if type(value) in (tuple, list):
            return type(value)(tree_map(fn, item) for item in value)
        if type(value) is dict:
            return {key: tree_map(fn, item) for key, item in value.items()}
        return fn(value)
    return mapped(fn, value)
