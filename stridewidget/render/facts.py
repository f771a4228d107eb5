"""The words of a tensor's facts line: its shape, strides, offset, dtype and the layout flags
that matter for its ndim (``contiguous``, ``F-contiguous``, ``channels-last``, ``dense``,
``overlapping``, ``strided``), and the notation that explains ``shape:strides +offset``.

The card (:mod:`.card`) draws this line and the HTML fallback (:mod:`.html`) writes it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["NOTATION", "layout_summary"]


def layout_summary(layout: Mapping[str, Any]) -> str:
    """One line of facts: ``shape (3, 4) · strides (4, 1) · offset 0 · float32 · contiguous``,
    with only the flags that matter for the tensor's ndim.

    >>> from stridewidget import Layout
    >>> layout_summary(Layout((3, 4), (1, 3)).to_dict())
    'shape (3, 4) · strides (1, 3) · offset 0 · float32 · F-contiguous'
    """
    if layout.get("symbolic"):  # a symbolic layout drawn at an example: its symbols, not ints
        return layout["symbolic"]
    ndim = len(layout["shape"])
    flags = []
    if layout.get("is_contiguous"):
        flags.append("contiguous")
    elif ndim >= 2 and layout.get("is_f_contiguous"):
        flags.append("F-contiguous")
    if ndim == 4 and layout.get("is_channels_last"):
        flags.append("channels-last")
    if not flags and layout.get("is_dense"):
        flags.append("dense")
    if layout.get("has_overlap") is None and "has_overlap" in layout:
        flags.append("overlap not decided")  # the display's time budget ran out
    elif layout.get("has_overlap"):
        flags.append("overlapping")
    if not flags:
        flags.append("strided")
    if layout.get("in_bounds") is False:  # reads past its storage: said where it is seen
        span = layout.get("span")
        past = f": reads up to storage[{span[1]}] of {layout['storage_size']} cells" if span else ""
        flags.append(f"OUT OF BOUNDS{past}")
    return " · ".join(
        [
            f"shape {tuple(layout['shape'])}",
            f"strides {tuple(layout['strides'])}",
            f"offset {layout['offset']}",
            layout["dtype"],
            *flags,
        ]
    )


NOTATION = "shape:strides +offset — element [i, j] lives at storage[offset + i·stride0 + j·stride1]"
