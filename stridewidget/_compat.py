"""Every private torch / NumPy API the package uses: one small function per use.

Each names the torch version it was checked against and falls back to something public (or a clear
``None``) when the private name is gone, so a torch upgrade breaks one function here, not a picture.
"""

from __future__ import annotations

from typing import Any

__all__ = ["neg_view", "torch_formatter"]


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


def torch_formatter(values: Any) -> Any | None:
    """torch's own print formatter for a 1-D tensor of values, or ``None`` where it is gone.

    ``torch._tensor_str._Formatter`` is private (checked on torch 2.0–2.13): it decides, from the
    values and ``torch.set_printoptions``, the one format ``print(tensor)`` uses for all of them
    (whole numbers as ``3.``, fixed ``0.5000`` at the print precision, or scientific).  Its
    ``format(value)`` may pad to a common width.

    >>> import torch
    >>> formatter = torch_formatter(torch.tensor([-0.99996, -1.0]))
    >>> [formatter.format(v).strip() for v in (-0.99996, -1.0)]
    ['-1.0000', '-1.0000']
    """
    import torch

    tensor_str = getattr(torch, "_tensor_str", None)
    make = getattr(tensor_str, "_Formatter", None)
    if make is None:
        return None
    try:
        return make(values)
    except (RuntimeError, TypeError):  # a dtype its arithmetic does not support
        return None
