"""Every private torch / NumPy API the package uses: one small function per use.

Each names the torch version it was checked against and falls back to something public (or a clear
``None``) when the private name is gone, so a torch upgrade breaks one function here, not a picture.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "dispatch_mode_base",
    "op_arguments",
    "overload_name",
    "storage_id",
    "tree_flatten",
    "tree_map",
]


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
