"""Python's cyclic garbage collector paused around a function: the package's bursts of small
objects (a display's scene, primitives, SVG and display list; an audited step's records) are
nearly all freed by reference counting, yet their allocations trigger collections that walk every
object of the process (with a ``transformers`` model loaded, the largest single cost of a toy
step).  ``timeit`` pauses it too."""

from __future__ import annotations

import gc
from collections.abc import Callable
from functools import wraps
from typing import Any

__all__ = ["cyclic_gc_paused"]


def cyclic_gc_paused(function: Callable[..., Any]) -> Callable[..., Any]:
    """``function`` with the cyclic garbage collector off while it runs (back on after, if it was
    on).  A plain wrapper, not ``contextlib``'s: its frame is this package's, which the copy
    tracker's search for the user's line passes over.

    >>> cyclic_gc_paused(gc.isenabled)(), gc.isenabled()
    (False, True)
    """

    @wraps(function)
    def paused(*args: Any, **kwargs: Any) -> Any:
        was_enabled = gc.isenabled()
        gc.disable()
        try:
            return function(*args, **kwargs)
        finally:
            if was_enabled:
                gc.enable()

    return paused
