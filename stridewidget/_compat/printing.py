"""torch's print options (``torch.set_printoptions``), read back."""

from __future__ import annotations

__all__ = ["torch_print_options", "torch_summary_options"]


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
