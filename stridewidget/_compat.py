"""Private torch APIs the package relies on, one small function each, with a fallback."""

from __future__ import annotations

from typing import Any

import torch


def compiled_original(model: torch.nn.Module) -> torch.nn.Module | None:
    """The eager module a ``torch.compile``d one wraps (``OptimizedModule._orig_mod``), else
    ``None``.  Told by the attribute, not by importing ``torch._dynamo`` (a large import)."""
    if type(model).__name__ != "OptimizedModule":
        return None
    original: Any = getattr(model, "_orig_mod", None)
    return original if isinstance(original, torch.nn.Module) else None


def storage_identity(tensor: torch.Tensor) -> int | None:
    """An id of the StorageImpl behind ``tensor`` (shared by its views), ``None`` when it has no
    storage to tell (sparse, some subclasses)."""
    try:
        return tensor.untyped_storage()._cdata
    except (RuntimeError, NotImplementedError, TypeError, AttributeError):
        return None
