"""The NumPy adapter: an ndarray's layout (in cells of its byte geometry), and its memory block.

The only code that reads a NumPy array: it finds the memory block an array lives in (following
``.base`` to the owner), measures strides in the largest cell that divides the item size, the byte
strides and the byte offset, and refuses object and zero-size dtypes.
"""

from __future__ import annotations

import functools
import math
import sys
import warnings
from typing import Any

from ..errors import LayoutError
from ..layout.layout import Layout
from .torch import is_tensor

__all__ = [
    "NUMPY_OVERLAP_WORK",
    "arrays_overlap",
    "is_ndarray",
    "numpy_storage_view",
    "within_buffer",
]


def _numpy() -> Any:
    return sys.modules.get("numpy")


def is_ndarray(x: Any) -> bool:
    """Is ``x`` a ``numpy.ndarray`` (checked without importing NumPy)?

    >>> import numpy as np
    >>> is_ndarray(np.zeros(2)), is_ndarray([0.0, 0.0])
    (True, False)
    """
    np = _numpy()
    return np is not None and isinstance(x, np.ndarray)


def _numpy_buffer(a: Any) -> tuple[int, int]:
    """``(first byte address, nbytes)`` of the memory block ``a`` lives in.

    Follows ``.base`` through views (and NumPy's ``as_strided`` helper objects) to the object that
    owns the memory.  When the owner is not an array, its buffer protocol gives the extent; failing
    that, the array's own byte bounds are the best known (and still exact for the view itself).
    """
    np = _numpy()
    owner = a
    while getattr(owner, "base", None) is not None:
        owner = owner.base
    if is_tensor(owner):  # `t.numpy()`: the tensor's storage is the memory block
        storage = owner.untyped_storage()
        return storage.data_ptr(), storage.nbytes()
    if isinstance(owner, np.ndarray):
        if owner.flags.owndata:
            if owner.flags.c_contiguous:  # the usual owner: no need to walk its strides
                return owner.__array_interface__["data"][0], owner.nbytes
            low, high = _byte_bounds()(owner)
            return low, high - low
    else:
        try:
            block = np.frombuffer(owner, dtype=np.uint8)
        except (TypeError, ValueError, BufferError):
            block = None
        if block is not None:
            return block.__array_interface__["data"][0], block.nbytes
    low, high = _byte_bounds()(a)
    return low, high - low


def within_buffer(a: Any) -> bool:
    """Does every byte ``a`` reads lie in the memory block it lives in?  An ``as_strided`` view
    may reach past it: reading such a view reads memory that is not the array's (or crashes).

    >>> import numpy as np
    >>> a = np.arange(3.0)
    >>> within_buffer(a[::-1]), within_buffer(np.lib.stride_tricks.as_strided(a, (5,), (16,)))
    (True, False)
    """
    if a.size == 0:
        return True
    low, high = _byte_bounds()(a)
    start, nbytes = _numpy_buffer(a)
    return start <= low and high <= start + nbytes


@functools.cache
def _byte_bounds() -> Any:
    """NumPy's ``byte_bounds``, looked up once (its home moved in NumPy 2.0)."""
    try:
        from numpy.lib.array_utils import byte_bounds
    except ImportError:  # NumPy < 2.0 has it at the top level
        from numpy import byte_bounds
    return byte_bounds


@functools.lru_cache(maxsize=1024)
def _numpy_dtype_name(dtype: Any) -> str:
    """The Layout's dtype name; cached because NumPy builds ``str(dtype)`` in Python, per call."""
    return str(dtype) if dtype.names is None else "structured"


def _no_values(a: Any) -> str:
    """Why ``a``, whose dtype holds references (``dtype.hasobject``), has no layout of values,
    naming what it is."""
    dtype = a.dtype
    if dtype.kind == "T":  # NumPy 2's StringDType (variable-width strings)
        width = int(_numpy().strings.str_len(a).max()) if a.size else 1
        return (
            f"cannot inspect an array of {type(dtype).__name__} (NumPy's variable-width "
            f"strings): each {dtype.itemsize}-byte cell holds a short string packed in place or "
            f"a pointer to its bytes elsewhere, not a value; convert it with "
            f"`a.astype('U{max(width, 1)}')` (fixed-width strings) first."
        )
    if dtype.names is not None:
        return (
            "cannot inspect a structured array with an object field: those cells hold pointers "
            "to Python objects, not values; drop or convert that field first."
        )
    return (
        "cannot inspect an object array: its cells hold pointers to Python objects, "
        "not values; convert it with `a.astype(...)` to a numeric dtype first."
    )


def _check_numpy(a: Any) -> None:
    """Refuse the arrays that have no layout of values: object and zero-size dtypes."""
    if a.dtype.hasobject:
        raise LayoutError(_no_values(a))
    if a.itemsize == 0:
        raise LayoutError(f"cannot inspect an array of zero-size dtype {a.dtype}.")


def _numpy_layout(a: Any) -> Layout:
    np = _numpy()
    _check_numpy(a)
    itemsize = a.itemsize
    data_address, interface_read_only = a.__array_interface__["data"]
    start, nbytes = _numpy_buffer(a)
    byte_offset = data_address - start
    unit = math.gcd(itemsize, byte_offset, *a.strides)
    notes = []
    if interface_read_only:  # also true of arrays that only warn on writing: ask the flag
        with warnings.catch_warnings():
            # np.broadcast_arrays outputs warn on reading `writeable` (they are writeable for now)
            warnings.simplefilter("ignore", FutureWarning)
            if not a.flags.writeable:
                notes.append("read-only")
    return (
        Layout(
            shape=a.shape,
            strides=tuple(s // unit for s in a.strides),
            offset=byte_offset // unit,
            itemsize=itemsize,
            storage_size=nbytes // unit,
            dtype=_numpy_dtype_name(a.dtype),
            device="cpu",
            unit=unit,
            notes=tuple(notes),
            storage_address=start or None,
            library="numpy",
        )
        if np is not None
        else None
    )  # pragma: no cover - np is imported when `a` is an ndarray


#: Work NumPy's own exact solver (``np.shares_memory``) gets on a pair of arrays before the
#: package's portfolio takes over: enough for NumPy's fuzz streams, a few µs at most where it
#: runs out (issue 11's families, whose NumPy time grows with the array).
NUMPY_OVERLAP_WORK = 2_000


def arrays_overlap(a: Any, b: Any) -> bool | None:
    """Exact overlap of two ndarrays by ``np.shares_memory`` within :data:`NUMPY_OVERLAP_WORK`;
    ``None`` when that work did not decide it (the caller's exact solver then does).  Object and
    zero-size dtypes are refused, as everywhere.

    >>> import numpy as np
    >>> x = np.arange(10)
    >>> arrays_overlap(x[::2], x[1::2]), arrays_overlap(x[::2], x[4:5])
    (False, True)
    """
    np = _numpy()
    _check_numpy(a)
    _check_numpy(b)
    try:
        return bool(np.shares_memory(a, b, max_work=NUMPY_OVERLAP_WORK))
    except (OverflowError, _too_hard()):
        return None


@functools.cache
def _too_hard() -> type[Exception]:
    """NumPy's ``TooHardError`` (in ``numpy.exceptions`` since 1.25, at the top before)."""
    np = _numpy()
    return getattr(np, "exceptions", np).TooHardError


def numpy_storage_view(x: Any, layout: Layout) -> Any:
    """A 1-D array over the whole storage of ``x``, from its first element (no copy).

    Built the way NumPy's own ``as_strided`` builds views: from an ``__array_interface__``
    whose base keeps ``x``'s memory alive.

    >>> import numpy as np
    >>> from stridewidget.adapters.inspect import inspect
    >>> a = np.arange(6)[::-2]
    >>> numpy_storage_view(a, inspect(a)).tolist()
    [0, 1, 2, 3, 4, 5]
    """
    np = _numpy()

    class _Block:
        def __init__(self) -> None:
            self.base = x
            self.__array_interface__ = {
                "shape": (layout.storage_size,),
                "typestr": x.dtype.str,
                "data": (layout.storage_address or 0, True),
                "strides": None,
                "version": 3,
            }

    return np.asarray(_Block())
