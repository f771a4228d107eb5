"""Integer arguments (sizes, strides, offsets, item sizes): exactly what torch accepts for them.

``operator.index`` decides, as it does for torch's own size arguments: Python and NumPy ints and
0-d integer tensors pass; floats, bools and strings are refused with a :class:`TypeError` naming
the argument (``2.7`` is not truncated to ``2``, ``"34"`` is not the shape ``(3, 4)``).  Where a
caller allows it, a torch ``SymInt`` (a symbolic size from ``torch.compile`` or fake tensors) is
kept as it is: converting it to an int would guard on it.
"""

from __future__ import annotations

import operator
import sys
from typing import Any

from ._errors import LayoutError, safe_repr

__all__ = ["INT64_MAX", "as_index", "as_indices", "is_symint"]

#: Largest stride, size or offset torch accepts (``int64_t``).
INT64_MAX = 2**63 - 1


def is_symint(value: Any) -> bool:
    """Is ``value`` a torch ``SymInt`` (checked without importing torch)?

    >>> is_symint(3)
    False
    """
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(value, torch.SymInt)


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
    elif isinstance(value, bool):
        raise TypeError(f"{what} must be an int, got {value!r} (bool)")
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
        # iter() asks the type, never a user __getattr__; a string is no sequence of ints
        items = iter(values) if not isinstance(values, (str, bytes)) else None
    except TypeError:
        items = None
    if items is None:
        raise TypeError(
            f"{what} must be a sequence of ints such as (3, 4), got {safe_repr(values)} "
            f"({type(values).__name__})"
        )
    return tuple(as_index(v, f"{what} entry", symbolic=symbolic, int64=int64) for v in items)
