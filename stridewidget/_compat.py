"""Every private torch / NumPy API the package uses: one small function per use.

Each names the torch version it was checked against and falls back to something public (or a clear
``None``) when the private name is gone, so a torch upgrade breaks one function here, not a picture.
"""

from __future__ import annotations

from typing import Any

__all__ = ["neg_view", "torch_print_options", "torch_summary_options"]


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
