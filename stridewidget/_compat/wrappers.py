"""Tensors that hold other tensors: traceable wrapper subclasses (``TwoTensor``, ``DTensor``),
functorch's wrappers (``vmap``, ``grad``, ``functionalize``) and functionalization's tensors."""

from __future__ import annotations

import sys
from typing import Any

__all__ = [
    "functional_mutation_count",
    "functorch_stack_reader",
    "functorch_transforms",
    "functorch_unwrapped",
    "is_functional_tensor",
    "wrapped_tensors",
]


def wrapped_tensors(t: Any) -> tuple[Any, ...] | None:
    """The tensors a traceable wrapper subclass (``TwoTensor``, ``DTensor``: its data lives in
    inner tensors, its own storage has no memory) wraps, from ``__tensor_flatten__``; ``None``
    for any other tensor.  Inner attributes that are not tensors (a DTensor's ``device_mesh``)
    are left out.  Private route checked on torch 2.13; its fallback is the public
    ``__tensor_flatten__`` protocol.

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
    no storage of its own: this is where its data is.  Checked on torch 2.13.

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
    outside any.  Checked on torch 2.13.

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


def functorch_stack_reader() -> Any:
    """A function of no arguments that is falsy when no functorch transform runs: torch's own
    ``torch._C._functorch.get_interpreter_stack`` (checked on torch 2.13), one C call where
    :func:`functorch_transforms` makes two Python frames (the copy tracker asks per call and
    calls that only when a transform runs); without it, :func:`functorch_transforms` itself.

    >>> functorch_stack_reader()() or ()
    ()
    """
    functorch = _functorch()
    return getattr(functorch, "get_interpreter_stack", None) or functorch_transforms


def functional_mutation_count(t: Any) -> int | None:
    """How many data mutations the storage of ``functionalize``'s wrapper ``t`` (or the one under
    ``t``'s ``vmap``/``grad`` wrappers) has seen: an in-place op under functionalization becomes
    an out-of-place op whose result replaces the wrapper's value, so this counter is how a write
    shows.  ``None`` for other tensors.  Checked on torch 2.13.

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
    while t is not None and not is_functional_tensor(t):
        t = functorch_unwrapped(t)
    return None if t is None else counter(t)


def is_functional_tensor(t: Any) -> bool:
    """Is ``t`` one of functionalization's tensors (``torch.func.functionalize``'s wrappers, whose
    storage has no memory)?  ``torch._is_functional_tensor``, checked on torch 2.13 (the floor
    pyproject.toml declares).  Without it: a plain ``torch.Tensor`` whose storage is there but
    has no data pointer to read, which among plain tensors only functionalization's are (wrapper
    subclasses are subclasses; functorch's BatchedTensor and TensorWrapper have no storage).

    >>> import torch
    >>> seen = []
    >>> _ = torch.func.functionalize(lambda x: seen.append(is_functional_tensor(x)) or x)(
    ...     torch.zeros(2)
    ... )
    >>> seen, is_functional_tensor(torch.zeros(2))
    ([True], False)
    """
    torch = sys.modules["torch"]
    check = getattr(torch, "_is_functional_tensor", None)
    if check is not None:
        return check(t)
    if type(t) is not torch.Tensor:
        return False
    try:
        storage = t.untyped_storage()
    except (RuntimeError, NotImplementedError, TypeError):  # functorch's wrappers: no storage
        return False
    if storage.device.type == "meta":
        return False
    try:
        storage.data_ptr()
    except RuntimeError:  # "Attempted to access the data pointer on an invalid python storage"
        return True
    return False
