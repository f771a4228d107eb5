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

from .._compat import torch_print_options

__all__ = ["value_texts"]

#: NumPy dtype kinds its array printer formats as numbers (others: records, dates, bytes).
_NUMERIC_KINDS = "biufc"
#: Dates and durations: NumPy's printer writes them (``NaT`` too: ``tolist()`` gives ``None``).
_TIME_KINDS = "mM"


def value_texts(
    items: Sequence[Any], like: Any, skip: int = 0
) -> tuple[list[str], list[float | None]]:
    """Display texts of ``items`` in one format, as ``like``'s library prints them, and the
    number of each for a colour scale (``None`` for nan/inf and values without one).  The first
    ``skip`` items take part in choosing the format only: texts and numbers are of the rest.

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
    >>> value_texts(np.array(["2020-01-01", "NaT"], dtype="datetime64[D]").tolist(),
    ...             np.dtype("datetime64[D]"))[0]
    ['2020-01-01', 'NaT']
    >>> value_texts([1e-5, 1.0, 2.0], torch.float32, skip=1)  # 1e-5 makes them scientific
    (['1.0000e+00', '2.0000e+00'], [1.0, 2.0])
    """
    numbers = [_number(item) for item in items[skip:]]
    if not items:
        return [], numbers
    if _is_numpy_dtype(like):  # its printer pads each value to the widest: all are printed
        texts = _numpy_texts(items, like)
        texts = texts[skip:] if texts is not None else None
    else:
        texts = _torch_texts(items, like, skip)
    if texts is None:  # NumPy has no printer for this dtype: each value on its own
        texts = [_plain_text(item) for item in items[skip:]]
    return texts, numbers


def _is_numpy_dtype(like: Any) -> bool:
    return type(like).__module__.startswith("numpy")


def _numpy_texts(items: Sequence[Any], dtype: Any) -> list[str] | None:
    np = sys.modules["numpy"]
    if dtype.kind not in _NUMERIC_KINDS + _TIME_KINDS and dtype.names is None:
        return None  # records print per field
    printed = np.array2string(
        np.array(items, dtype=dtype),
        separator="\x00",  # no number contains it: the printer's own padding stays per value
        threshold=sys.maxsize,
        max_line_width=sys.maxsize,
    )
    quote = "'" if dtype.kind in _TIME_KINDS else ""  # NumPy quotes each date: '2020-01-01'
    texts = [text.strip().strip(quote) for text in printed[1:-1].split("\x00")]
    return texts if len(texts) == len(items) else None


def _torch_texts(items: Sequence[Any], dtype: Any, skip: int = 0) -> list[str]:
    import torch

    if dtype == torch.bool:
        return [str(bool(item)) for item in items[skip:]]
    if not (dtype.is_floating_point or dtype.is_complex):
        return [str(item) for item in items[skip:]]
    if dtype.is_complex:
        real = _torch_floats([complex(item).real for item in items], skip)
        imag = _torch_floats([complex(item).imag for item in items], skip)
        texts = []
        for r, i in zip(real, imag):
            i += "j"  # torch: the imaginary part carries its own sign, else a "+"
            texts.append(r + i if i[0] in "+-" else f"{r}+{i}")
        return texts
    return _torch_floats([float(item) for item in items], skip)


def _torch_floats(values: list[float], skip: int = 0) -> list[str]:
    """torch's print rule for floating values (``torch._tensor_str._Formatter``), without its
    per-element tensor loop: whole numbers as ``3.``, else fixed at the print precision, and
    scientific when the nonzero finite magnitudes span more than 1000x, exceed 1e8 or go below
    1e-4 (or as ``sci_mode`` says).  The texts of ``values[skip:]``, in the format of all."""
    precision, sci_mode = torch_print_options()
    finite = [abs(v) for v in values if math.isfinite(v) and v != 0]
    whole = all(v == math.ceil(v) for v in values if math.isfinite(v) and v != 0)
    if sci_mode is None:
        sci_mode = bool(finite) and (
            max(finite) / min(finite) > 1000.0 or max(finite) > 1.0e8 or min(finite) < 1.0e-4
        )
    values = values[skip:]
    if sci_mode:
        return [f"{v:.{precision}e}" for v in values]
    if whole:
        return [f"{v:.0f}" + ("" if math.isinf(v) or math.isnan(v) else ".") for v in values]
    return [f"{v:.{precision}f}" for v in values]


def _number(item: Any) -> float | None:
    if type(item) is float:  # the commonest: first
        return item if math.isfinite(item) else None
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
