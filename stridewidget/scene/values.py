"""The values of a scene's shown storage cells: read once, only those cells, as what memory holds
(a quantized tensor's integer codes, not what it dequantizes to), and formatted as the library
prints them.
"""

from __future__ import annotations

import sys
from typing import Any

from ..adapters.inspect import read_cells
from ..adapters.numbers import value_texts
from ..adapters.torch import QUANTIZED_CODES
from ..errors import LayoutError
from ..layout.layout import Layout

__all__ = ["cell_values", "stored_dtype"]


def cell_values(
    entries: list[dict[str, Any]], cells: list[int]
) -> tuple[list[str] | None, list[float | None] | None, Any]:
    """Display texts and colour numbers of what memory holds at ``cells``, and the raw array."""
    obj = entries[0]["obj"]
    if isinstance(obj, Layout):
        return None, None, None
    try:
        raw = read_cells(obj, cells, as_stored=True)
    except LayoutError:
        return None, None, None  # byte-misaligned NumPy views have no element cells to read
    if raw is None:
        return None, None, None
    dtype_of_obj = getattr(obj, "dtype", None)
    if raw.dtype.kind == "V" and getattr(dtype_of_obj, "itemsize", None) == raw.dtype.itemsize:
        raw = raw.view(dtype_of_obj)  # structured records arrive as raw bytes: give them fields
    texts, values = value_texts(raw.tolist(), stored_dtype(obj, raw))
    return texts, values, raw


def stored_dtype(obj: Any, raw: Any) -> Any:
    """The dtype whose printer formats the values memory holds: a quantized tensor holds integer
    codes, NumPy arrays print as the raw array's dtype."""
    if not hasattr(obj, "is_quantized"):
        return raw.dtype
    return (
        getattr(sys.modules["torch"], QUANTIZED_CODES[str(obj.dtype)[6:]])
        if obj.is_quantized
        else obj.dtype
    )
