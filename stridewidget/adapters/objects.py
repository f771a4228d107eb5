"""Naming what an object is, and what to pass instead when it is no tensor or array.

Shared by every adapter's error messages: ``describe`` gives an object's type as
``module.QualName`` without asking the object anything, and :func:`conversion_hint` suggests the
conversion (DLPack, ``__cuda_array_interface__``, buffers, storages) that would make it inspectable.
"""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["conversion_hint"]


def _describe(x: Any) -> str:
    kind = type(x)
    module = getattr(kind, "__module__", None)
    name = getattr(kind, "__qualname__", None) or getattr(kind, "__name__", "object")
    return f"{module}.{name}" if isinstance(module, str) else str(name)


def _has(x: Any, name: str) -> bool:
    """``hasattr`` that a hostile ``__getattr__`` (raising anything) cannot turn into a crash."""
    try:
        return hasattr(x, name)
    except Exception:
        return False


def conversion_hint(x: Any) -> str:
    """What to pass instead of ``x``, an object that is no tensor or array (``""`` if unknown).

    >>> conversion_hint([1, 2])
    ' Wrap it first: `torch.as_tensor(x)` or `numpy.asarray(x)`.'
    """
    if isinstance(x, (list, tuple, int, float, complex, bool)):
        return " Wrap it first: `torch.as_tensor(x)` or `numpy.asarray(x)`."
    if type(x).__name__ == "PyCapsule" and type(x).__module__ == "builtins":
        return (
            " A PyCapsule is how DLPack hands over a tensor: inspect `torch.from_dlpack(capsule)` "
            "(a view of its memory, no copy; a capsule can be consumed only once), or pass the "
            "producing array itself."
        )
    if _has(x, "__dlpack__"):
        return " It supports DLPack: inspect `torch.from_dlpack(x)` (a view, no copy)."
    if _has(x, "__cuda_array_interface__"):
        return (
            " It exposes GPU memory through `__cuda_array_interface__`: inspect "
            "`torch.as_tensor(x, device='cuda')` (a view, no copy)."
        )
    if _has(x, "__array_interface__") or _has(x, "__array__"):
        return " It looks array-like: inspect `numpy.asarray(x)` (no copy when possible)."
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(x, (torch.UntypedStorage, torch.TypedStorage)):
        untyped = "s" if isinstance(x, torch.UntypedStorage) else "s.untyped_storage()"
        return (
            " A storage has no shape or strides: inspect a tensor over it, such as "
            f"`torch.empty(0, dtype=torch.uint8, device=s.device).set_({untyped})` "
            "(its bytes, no copy)."
        )
    try:
        memoryview(x)
    except Exception:  # no buffer protocol (or a broken one): nothing more to suggest
        return ""
    return " It is a buffer: inspect `numpy.frombuffer(x, dtype=numpy.uint8)` (its bytes, no copy)."
