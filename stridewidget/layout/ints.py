"""Integer arguments (sizes, strides, offsets, item sizes): exactly what torch accepts for them.

``operator.index`` decides, as it does for torch's own size arguments: Python and NumPy ints and
0-d integer tensors pass; floats, bools and strings are refused with a :class:`TypeError` naming
the argument (``2.7`` is not truncated to ``2``, ``"34"`` is not the shape ``(3, 4)``).  Where a
caller allows it, a torch ``SymInt`` (a symbolic size from ``torch.compile`` or fake tensors) is
kept as it is: converting it to an int would guard on it.
"""

from __future__ import annotations

import itertools
import operator
import sys
from collections.abc import Mapping, Set
from typing import Any

from ..errors import LayoutError, safe_repr
from ..limits import MAX_DIMS, MAX_WRAP

__all__ = [
    "INT64_MAX",
    "MAX_DIMS",
    "MAX_WRAP",
    "as_index",
    "as_indices",
    "as_option",
    "as_wrap",
    "is_symint",
]

#: Largest stride, size or offset torch accepts (``int64_t``).
INT64_MAX = 2**63 - 1
#: Integers below this stay safe in int64 arithmetic with headroom (NumPy's solver, NumPy address
#: arrays); beyond it the package computes with Python ints.
INT64_SAFE = 2**62


def is_symint(value: Any) -> bool:
    """Is ``value`` a torch ``SymInt`` (checked without importing torch)?

    >>> is_symint(3)
    False
    """
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(value, torch.SymInt)


def _is_bool_tensor(value: Any) -> bool:
    # torch.tensor(True) has an __index__ (1), but torch refuses it as a size, as it refuses True
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(value, torch.Tensor) and value.dtype == torch.bool


def as_index(value: Any, what: str, *, symbolic: bool = False, int64: bool = True) -> Any:
    """``value`` as a Python int, accepting exactly what ``operator.index`` accepts (ints, NumPy
    integers, 0-d integer tensors), like torch's own size/stride arguments; with
    ``symbolic=True`` a ``SymInt`` is returned unchanged.  With ``int64=True`` (for what goes to
    torch) a value outside torch's 64-bit range is refused; a pure :class:`Layout` has no such
    limit.

    >>> as_index(3, "size"), as_index(__import__("numpy").int64(3), "size")
    (3, 3)
    >>> as_index(2.5, "window size")
    Traceback (most recent call last):
      ...
    TypeError: window size must be an int, got 2.5 (float)
    """
    if type(value) is int:  # the usual case, first (a bool's type is bool, not int)
        number = value
    elif symbolic and is_symint(value):
        return value
    elif isinstance(value, bool) or _is_bool_tensor(value):
        raise TypeError(f"{what} must be an int, got {safe_repr(value)} (bool)")
    else:
        try:
            number = operator.index(value)
        except TypeError:
            raise TypeError(
                f"{what} must be an int, got {safe_repr(value)} ({type(value).__name__})"
            ) from None
    if int64 and not -INT64_MAX - 1 <= number <= INT64_MAX:
        raise LayoutError(f"{what} {number} does not fit in a 64-bit int (torch's limit)")
    return number


def as_indices(
    values: Any, what: str, *, symbolic: bool = False, int64: bool = True
) -> tuple[Any, ...]:
    """A sequence of ints (see :func:`as_index`); a string is refused (``"34"`` is not the size
    ``(3, 4)``).

    >>> as_indices([2, 3], "shape")
    (2, 3)
    >>> as_indices("34", "shape")
    Traceback (most recent call last):
      ...
    TypeError: shape must be a sequence of ints such as (3, 4), got '34' (str)
    """
    if type(values) is tuple and not int64 and all(type(v) is int for v in values):
        return values  # what adapters pass, at the cost of one look per entry
    try:
        # iter() asks the type, never a user __getattr__.  A string or bytes is no sequence of
        # ints, a set or mapping has no order of dims, a bool tensor holds no sizes: torch
        # refuses them all.
        unordered = isinstance(values, (str, bytes, bytearray, memoryview, Set, Mapping))
        items = iter(values) if not (unordered or _is_bool_tensor(values)) else None
    except TypeError:
        items = None
    if items is None:
        raise TypeError(
            f"{what} must be a sequence of ints such as (3, 4), got {safe_repr(values)} "
            f"({type(values).__name__})"
        )
    entries = tuple(itertools.islice(items, MAX_DIMS + 1))  # an endless iterator ends here
    if len(entries) > MAX_DIMS:
        raise LayoutError(f"{what} has more than {MAX_DIMS} entries: no layout has that many dims")
    return tuple(as_index(v, f"{what} entry", symbolic=symbolic, int64=int64) for v in entries)


def as_option(value: Any, what: str, *, minimum: int = 1, maximum: int | None = None) -> int:
    """A display option that counts something (``wrap``, ``edge_items``, ``threshold``): a plain
    int (a bool, float or string is refused, never truncated) in ``[minimum, maximum]``; the one
    rule the widget, the renderers and the CLI share.

    >>> as_option(5, "threshold", minimum=0)
    5
    >>> as_option("5", "threshold", minimum=0)
    Traceback (most recent call last):
      ...
    TypeError: threshold must be an int, got '5' (str)
    """
    number = as_index(value, what, int64=False)
    if number < minimum or (maximum is not None and number > maximum):
        kind = {0: "a non-negative int", 1: "a positive int"}.get(minimum, f"an int >= {minimum}")
        limit = "" if maximum is None else f" up to {maximum}"
        raise ValueError(f"{what} must be {kind}{limit}, got {number}")
    return number


def as_wrap(value: Any) -> int | None:
    """``wrap`` (storage cells per row): None (automatic) or an int from 1 to :data:`MAX_WRAP`.

    >>> as_wrap(None), as_wrap(6)
    (None, 6)
    >>> as_wrap(-3)
    Traceback (most recent call last):
      ...
    ValueError: wrap (storage cells per row) must be a positive int up to 1024, got -3
    """
    if value is None:
        return None
    return as_option(value, "wrap (storage cells per row)", maximum=MAX_WRAP)
