"""Cell values as their library prints them: one format for all the values a grid shows.

``print(tensor)`` picks one format from all its values (torch: whole numbers as ``3.``, else
fixed ``0.5000`` at the print precision, or scientific when they span many orders of magnitude;
NumPy likewise by its own rules), so ``-0.99996`` and ``-1.0`` both read ``-1.0000``.  The
storage strip and each logical grid follow the same rule over the values they show, with the
user's current ``torch.set_printoptions`` / ``np.set_printoptions``.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from typing import Any

from ._compat import torch_formatter

__all__ = ["value_texts"]

#: NumPy dtype kinds its array printer formats as numbers (others: records, dates, bytes).
_NUMERIC_KINDS = "biufc"


def value_texts(items: Sequence[Any], like: Any) -> tuple[list[str], list[float | None]]:
    """Display texts of ``items`` in one format, as ``like``'s library prints them, and the
    number of each for a colour scale (``None`` for nan/inf and values without one).

    ``like`` is a torch dtype or a NumPy dtype: the values are printed as an array of that dtype.

    >>> import torch, numpy as np
    >>> value_texts([-0.99996, -1.0, 0.5], torch.float32)[0]
    ['-1.0000', '-1.0000', '0.5000']
    >>> value_texts([0.0, 1.0, 2.0], torch.float32)[0], value_texts([True, False], torch.bool)[0]
    (['0.', '1.', '2.'], ['True', 'False'])
    >>> value_texts([-0.99996, -1.0], np.dtype("float64"))[0]
    ['-0.99996', '-1.']
    >>> value_texts([1 + 2j, complex(3, -0.0)], torch.complex64)[0]
    ['1.+2.j', '3.-0.j']
    """
    numbers = [_number(item) for item in items]
    if not items:
        return [], numbers
    texts = _numpy_texts(items, like) if _is_numpy_dtype(like) else _torch_texts(items, like)
    if texts is None:  # no printer for this dtype: each value on its own
        texts = [_plain_text(item) for item in items]
    return texts, numbers


def _is_numpy_dtype(like: Any) -> bool:
    return type(like).__module__.startswith("numpy")


def _numpy_texts(items: Sequence[Any], dtype: Any) -> list[str] | None:
    np = sys.modules["numpy"]
    if dtype.kind not in _NUMERIC_KINDS:
        return None
    printed = np.array2string(
        np.array(items, dtype=dtype),
        separator="\x00",  # no number contains it: the printer's own padding stays per value
        threshold=sys.maxsize,
        max_line_width=sys.maxsize,
    )
    texts = [text.strip() for text in printed[1:-1].split("\x00")]
    return texts if len(texts) == len(items) else None


def _torch_texts(items: Sequence[Any], dtype: Any) -> list[str] | None:
    import torch

    if dtype == torch.bool:
        return [str(bool(item)) for item in items]
    if not (dtype.is_floating_point or dtype.is_complex):
        return [str(item) for item in items]
    if dtype.is_complex:
        values = torch.tensor(items, dtype=torch.complex128)
        real, imag = _torch_format(values.real), _torch_format(values.imag)
        if real is None or imag is None:
            return None
        texts = []
        for r, i in zip(real, imag):
            i += "j"  # torch: the imaginary part carries its own sign, else a "+"
            texts.append(r + i if i[0] in "+-" else f"{r}+{i}")
        return texts
    return _torch_format(torch.tensor(items, dtype=torch.float64).to(dtype))


def _torch_format(values: Any) -> list[str] | None:
    formatter = torch_formatter(values)
    if formatter is None and values.dtype.itemsize < 2:  # float8: torch prints them as float32
        formatter = torch_formatter(values.float())
    if formatter is None:
        return None
    return [formatter.format(value).strip() for value in values.tolist()]


def _number(item: Any) -> float | None:
    if isinstance(item, bool):
        return float(item)
    if isinstance(item, int):
        return float(item)
    if isinstance(item, complex):
        magnitude = abs(item)
        return magnitude if math.isfinite(magnitude) else None
    if isinstance(item, float):
        return item if math.isfinite(item) else None
    return None  # records, datetimes, raw bytes: text only, no colour scale


def _plain_text(item: Any) -> str:
    text = str(item)
    return text if len(text) <= 24 else text[:23] + "…"
