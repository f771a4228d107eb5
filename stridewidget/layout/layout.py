"""A tensor's memory layout as pure data, and the facts that follow from it.

Everything here works on tuples of ints — no tensors — in the spirit of PyTorch's
``torch/_prims_common``; the stride functions it reads are in :mod:`.strides`.  The adapters
(:mod:`stridewidget.adapters`) turn live tensors and arrays into a
:class:`Layout`; the scene and the renderers read it.

Units.  Strides, the storage offset and the storage size are counted in *storage cells*.  A cell is
one element of the dtype (``unit == itemsize``) for every torch tensor and almost every NumPy array.
Only a NumPy view whose byte strides or byte offset are not multiples of its item size (say, an
``int32`` view starting one byte into a buffer) is measured in smaller cells: ``unit`` is then the gcd
of the item size, the byte strides and the byte offset, and one element covers
``itemsize // unit`` cells.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import LayoutError, safe_repr
from ..limits import (
    DISPLAY_ENUMERATION_LIMIT,
    DISPLAY_MAX_SECONDS,
    DISPLAY_MAX_WORK,
    TOUCHED_ENUMERATION_LIMIT,
)
from .ints import as_index, as_indices, is_symint
from .overlap import Undecided, count_touched, internal_overlap_witness
from .strides import (
    address,
    flat_stride,
    is_channels_last,
    is_contiguous,
    is_f_contiguous,
    is_non_overlapping_and_dense,
    span,
)

__all__ = ["Layout"]

#: What a display says when its budget did not decide internal overlap.
UNDECIDED_TEXT = (
    "overlap: not decided within the display budget (~50 ms); "
    "`sw.inspect(t).has_overlap` decides it exactly"
)


# --- the Layout -----------------------------------------------------------------------------------


def _notes(notes: Any) -> tuple[str, ...]:
    # notes="conj" is one note, not ('c', 'o', 'n', 'j')
    if isinstance(notes, str):
        return (notes,)
    if not isinstance(notes, (tuple, list)) or not all(isinstance(n, str) for n in notes):
        raise TypeError(f"Layout: notes must be a tuple of strings, got {safe_repr(notes)}")
    return tuple(notes)


class _cached:
    """``functools.cached_property`` without its per-instance lock (Python < 3.12 takes one on
    every first read, a large part of a fresh layout's first facts): the value is computed once
    and kept in the instance's ``__dict__``, where later reads find it directly."""

    def __init__(self, fn: Any) -> None:
        self.fn = fn
        self.name = fn.__name__
        self.__doc__ = fn.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        if instance is None:
            return self
        value = instance.__dict__[self.name] = self.fn(instance)
        return value


def _plain_fields(values: dict[str, Any]) -> bool:
    """The fields (a layout's ``__dict__``) are already what the checks of ``__post_init__``
    would make of them: tuples of Python ints (sizes >= 0), a positive int item size, an int
    storage size >= 0, a tuple of strings as notes.  One look per entry (plain loops: cheaper
    than generators here); no SymInt test (plain ints are no symbols)."""
    shape, strides, itemsize = values["shape"], values["strides"], values["itemsize"]
    storage_size, notes = values["storage_size"], values["notes"]
    if not (
        type(shape) is tuple
        and type(strides) is tuple
        and type(values["offset"]) is int
        and type(itemsize) is int
        and type(storage_size) is int
        and type(notes) is tuple
        and len(shape) == len(strides)
        and itemsize > 0
        and storage_size >= 0
    ):
        return False
    for n in shape:
        if type(n) is not int or n < 0:
            return False
    for stride in strides:
        if type(stride) is not int:
            return False
    return not notes or all(type(note) is str for note in notes)


@dataclass(frozen=True)
class Layout:
    """The memory layout of one strided tensor or array: pure, immutable data.

    Build one with :func:`stridewidget.inspect`, or directly when no tensor is at hand:

    >>> lay = Layout(shape=(4, 3), strides=(1, 4), storage_size=12, dtype="float32", itemsize=4)
    >>> print(lay)
    float32 (4,3):(1,4) +0 · storage 12 · F-contiguous
    >>> lay.address((1, 2)), lay.span, lay.is_contiguous, lay.byte_strides
    (9, (0, 11), False, (4, 16))
    """

    shape: tuple[int, ...]
    strides: tuple[int, ...]
    offset: int = 0
    itemsize: int = 4
    storage_size: int | None = None
    dtype: str = "float32"
    device: str = "cpu"
    unit: int | None = None
    #: Extra facts an adapter knows (``"conj"``, ``"neg"``, ``"read-only"``, ``"meta"``, ...).
    notes: tuple[str, ...] = ()
    #: Absolute byte address of the storage's first byte; ``None`` when unknown (meta tensors).
    storage_address: int | None = field(default=None, compare=False)
    #: Whose vocabulary :meth:`explain` advises in: ``"torch"`` (``.view``, ``.contiguous()``) or
    #: ``"numpy"`` (``.reshape``, ``np.ascontiguousarray``); not part of the layout itself.
    library: str = field(default="torch", compare=False)

    def __post_init__(self) -> None:
        if self.unit is None and _plain_fields(self.__dict__):
            self.__dict__["unit"] = (
                self.itemsize
            )  # the adapters' case: checked, no symbol looked for
            return
        # Checked as torch checks sizes (see _ints): 2.7 is no size, "34" no shape.  SymInts
        # (symbolic layouts) are kept as they are, and no sign check reads them (a guard).
        shape = as_indices(self.shape, "Layout: shape", symbolic=True, int64=False)
        strides = as_indices(self.strides, "Layout: strides", symbolic=True, int64=False)
        offset = as_index(self.offset, "Layout: offset", symbolic=True, int64=False)
        itemsize = as_index(self.itemsize, "Layout: itemsize", int64=False)
        if len(shape) != len(strides):
            raise LayoutError(
                f"shape {shape} has {len(shape)} dims but strides {strides} have {len(strides)}"
            )
        if any(not is_symint(n) and n < 0 for n in shape):
            raise LayoutError(f"shape {shape} has a negative size")
        unit = itemsize if self.unit is None else as_index(self.unit, "Layout: unit", int64=False)
        if itemsize <= 0 or unit <= 0 or itemsize % unit:
            raise LayoutError(f"itemsize {itemsize} must be a positive multiple of unit {unit}")
        object.__setattr__(self, "shape", shape)
        object.__setattr__(self, "strides", strides)
        object.__setattr__(self, "offset", offset)
        object.__setattr__(self, "itemsize", itemsize)
        object.__setattr__(self, "unit", unit)
        object.__setattr__(self, "notes", _notes(self.notes))
        if self.storage_size is None:
            reach = span(shape, strides, offset, self.element_cells)
            object.__setattr__(self, "storage_size", 0 if reach is None else max(reach[1] + 1, 0))
        storage_size = as_index(
            self.storage_size, "Layout: storage_size", symbolic=True, int64=False
        )
        object.__setattr__(self, "storage_size", storage_size)
        if not is_symint(storage_size) and storage_size < 0:
            raise LayoutError(f"storage_size {storage_size} is negative")

    @classmethod
    def from_fields(cls, fields: dict[str, Any]) -> Layout:
        """``Layout(**fields)``, faster for what adapters read (plain ints, no ``unit``): built
        without the dataclass's field-by-field ``__init__`` when the checks have nothing to say.

        >>> lay = Layout.from_fields({"shape": (2, 3), "strides": (3, 1), "storage_size": 6})
        >>> lay == Layout((2, 3), (3, 1), storage_size=6), lay.unit
        (True, 4)
        """
        lay = object.__new__(cls)
        values = lay.__dict__
        values.update(_DEFAULTS)
        values.update(fields)
        if (
            len(values) != _FIELD_COUNT  # a key missing or unknown: __init__'s own TypeError
            or "strides" not in fields
            or "shape" not in fields
            or cls is not Layout
            or values["unit"] is not None
            or not _plain_fields(values)
        ):
            return cls(**fields)
        values["unit"] = values["itemsize"]
        return lay

    # sizes ----------------------------------------------------------------------------------------
    @property
    def ndim(self) -> int:
        """Number of dims."""
        return len(self.shape)

    @property
    def numel(self) -> int:
        """Number of logical elements."""
        return math.prod(self.shape)

    @property
    def element_cells(self) -> int:
        """Storage cells one element covers (1 unless NumPy byte strides are misaligned)."""
        return self.itemsize // self.unit

    @property
    def byte_strides(self) -> tuple[int, ...]:
        """Strides in bytes."""
        return tuple(s * self.unit for s in self.strides)

    @property
    def byte_offset(self) -> int:
        """Storage offset in bytes."""
        return self.offset * self.unit

    @property
    def storage_nbytes(self) -> int:
        """Bytes in the whole underlying storage."""
        return self.storage_size * self.unit

    # geometry -------------------------------------------------------------------------------------
    def address(self, index: Sequence[int] | int) -> int:
        """Storage cell of a logical index (negative indices allowed, bounds checked).

        >>> Layout((3, 4), (4, 1), offset=2).address((1, -1))
        9
        """
        try:
            items = iter(index)
        except TypeError:  # one int for a 1-d view: int, np.int64, 0-d tensor
            items = iter((index,))
        try:
            index = tuple(operator.index(i) for i in items)
        except TypeError:
            raise TypeError(
                f"index must be ints, one per dim (e.g. (1, 2)), got {safe_repr(index)}"
            ) from None
        return address(self.shape, self.strides, self.offset, index)

    @_cached
    def span(self) -> tuple[int, int] | None:
        """Inclusive ``(lo, hi)`` storage cells touched; ``None`` if ``numel == 0``."""
        return span(self.shape, self.strides, self.offset, self.element_cells)

    @property
    def in_bounds(self) -> bool:
        """Whether every element lies inside ``[0, storage_size)``."""
        reach = self.span
        return reach is None or (reach[0] >= 0 and reach[1] < self.storage_size)

    @_cached
    def _touched(self) -> tuple[int, bool]:
        return count_touched(
            self.shape, self.strides, self.element_cells, limit=TOUCHED_ENUMERATION_LIMIT
        )

    @_cached
    def _display_touched(self) -> tuple[int, bool]:
        if "_touched" in self.__dict__:
            return self._touched
        if self.quick_has_overlap is None:
            reach = self.span
            cells = 0 if reach is None else reach[1] - reach[0] + 1
            return min(self.numel * self.element_cells, cells), False
        try:
            return count_touched(
                self.shape,
                self.strides,
                self.element_cells,
                limit=DISPLAY_ENUMERATION_LIMIT,
                max_work=DISPLAY_MAX_WORK,
                max_seconds=DISPLAY_MAX_SECONDS,
            )
        except Undecided:  # the count merges equal strides: a new overlap question
            return self.numel * self.element_cells, False

    @property
    def touched(self) -> int:
        """Distinct storage cells the view reads (exact unless :attr:`touched_exact` is False)."""
        return self._touched[0]

    @property
    def touched_exact(self) -> bool:
        """False only for huge self-overlapping views, where :attr:`touched` is an upper bound."""
        return self._touched[1]

    # flags ----------------------------------------------------------------------------------------
    @property
    def is_contiguous(self) -> bool:
        """Row-major contiguous (``torch.Tensor.is_contiguous()``)."""
        return is_contiguous(self.shape, self.strides, self.element_cells)

    @property
    def is_f_contiguous(self) -> bool:
        """Column-major contiguous."""
        return is_f_contiguous(self.shape, self.strides, self.element_cells)

    @property
    def is_channels_last(self) -> bool:
        """Channels-last (4-D) or channels-last-3d (5-D) contiguous."""
        return is_channels_last(self.shape, self.strides, self.element_cells)

    @property
    def is_dense(self) -> bool:
        """Non-overlapping and dense in some dim order (no gaps, no cell twice)."""
        return is_non_overlapping_and_dense(self.shape, self.strides, self.element_cells)

    @_cached
    def overlap_witness(self) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
        """Two logical indices that share a storage cell, or ``None`` (exact)."""
        return internal_overlap_witness(self.shape, self.strides, self.element_cells)

    @property
    def has_overlap(self) -> bool:
        """Exact internal overlap: do two logical indices share a storage cell?

        >>> Layout((2, 3), (0, 1)).has_overlap, Layout((2, 3), (3, 1)).has_overlap
        (True, False)
        """
        return self.overlap_witness is not None

    @property
    def quick_has_overlap(self) -> bool | None:
        """:attr:`has_overlap` when ``DISPLAY_MAX_WORK`` search steps decide it, else ``None``.

        Every display uses this, so none can hang; a decided answer is exact and is kept, and once
        :attr:`has_overlap` has been computed the displays show it.

        >>> Layout((4, 3), (1, 1)).quick_has_overlap
        True
        >>> strides = (84, 1, 951793374218, 714707845745, 672294410367)  # a lattice search's job
        >>> Layout((2, 100, 10**6, 10**6, 1000), strides).quick_has_overlap
        True
        """
        if "overlap_witness" not in self.__dict__:
            if self.__dict__.get("_overlap_undecided"):
                return None
            try:
                witness = internal_overlap_witness(
                    self.shape,
                    self.strides,
                    self.element_cells,
                    max_work=DISPLAY_MAX_WORK,
                    max_seconds=DISPLAY_MAX_SECONDS,
                )
            except Undecided:
                self.__dict__["_overlap_undecided"] = True  # one budget per layout, not per call
                return None
            self.__dict__["overlap_witness"] = witness  # exact: spare has_overlap the search
        return self.overlap_witness is not None

    @property
    def flags(self) -> tuple[str, ...]:
        """Short names of the layout flags that hold, for one-line summaries (display-budgeted)."""
        names = []
        if self.is_contiguous:
            names.append("contiguous")
        elif self.is_f_contiguous:
            names.append("F-contiguous")
        if self.is_channels_last and not self.is_contiguous:
            names.append("channels-last" if self.ndim == 4 else "channels-last-3d")
        if self.is_dense and not names:
            names.append("dense")
        overlap = self.quick_has_overlap
        if overlap:
            names.append("overlapping")
        elif overlap is None:
            names.append("overlap not decided")
        if not self.in_bounds:
            names.append("OUT OF BOUNDS")
        return tuple(names)

    # text -----------------------------------------------------------------------------------------
    def __str__(self) -> str:
        def tup(values: tuple[int, ...]) -> str:
            return "(" + ",".join(str(v) for v in values) + ")"

        text = f"{self.dtype} {tup(self.shape)}:{tup(self.strides)} +{self.offset}"
        text += f" · storage {self.storage_size}"
        if self.unit != self.itemsize:
            text += f" cells of {self.unit} B"
        if self.device != "cpu":
            text += f" · {self.device}"
        flags = self.flags or ("strided",)
        return text + " · " + ", ".join(flags)

    def explain(self) -> str:
        """Plain-English facts: contiguity and why not, whether ``.view(-1)`` works, what
        ``.contiguous()`` would copy, shared elements.  Display-budgeted, like ``str``: it never
        hangs, and says so where the overlap search did not finish.

        >>> print(Layout((4, 3), (1, 4)).explain())  # doctest: +NORMALIZE_WHITESPACE
        Not contiguous: dim 1 (size 3) has stride 4 where a contiguous layout has 1.
        .view(-1) fails (the elements are not one evenly strided run); .reshape(-1) copies.
        .contiguous() copies 12 elements (48 bytes) into new storage.
        Dense: the view covers storage [0, 11] with no gaps and no cell twice.
        """
        lines: list[str] = []
        if self.numel == 0:
            return (
                "Empty view (a dim has size 0): it touches no storage; every flag holds trivially."
            )
        if self.is_contiguous:
            lines.append("Contiguous: row-major, the last dim moves fastest with stride 1.")
        else:
            lines.append(self._why_not_contiguous())
        advice = _ADVICE.get(self.library, _ADVICE["torch"])
        if self.is_contiguous:
            lines.append(advice["contiguous"])
        else:
            flat = flat_stride(self.shape, self.strides)
            if flat is not None:
                lines.append(advice["flat"].format(flat=flat))
            else:
                lines.append(advice["not_flat"])
            nbytes = self.numel * self.itemsize
            lines.append(advice["copy"].format(numel=self.numel, nbytes=nbytes))
        lo_hi = self.span
        touched, touched_exact = self._display_touched
        overlap = self.quick_has_overlap
        if overlap is None:
            bound = "" if touched_exact else "at most "
            lines.append(
                f"{UNDECIDED_TEXT[0].upper()}{UNDECIDED_TEXT[1:]}. The view reads {bound}{touched} "
                "distinct cells."
            )
        elif overlap:
            first, second = self.overlap_witness  # type: ignore[misc]
            exact = "" if touched_exact else "at most "
            lines.append(
                f"Overlapping: {self.numel} logical elements read {exact}{touched} distinct "
                f"cells; e.g. {first} and {second} are the same cell "
                f"(storage[{self.address(first)}]). In-place writes through this view are unsafe."
            )
        elif self.is_dense and not self.is_contiguous:
            lines.append(
                f"Dense: the view covers storage [{lo_hi[0]}, {lo_hi[1]}] with no gaps and no cell twice."
            )
        elif not self.is_dense:
            bound = "" if touched_exact else "at most "
            gaps = lo_hi[1] - lo_hi[0] + 1 - touched
            lines.append(
                f"Gapped: the view reads {bound}{touched} of the {lo_hi[1] - lo_hi[0] + 1} cells in "
                f"its span [{lo_hi[0]}, {lo_hi[1]}]; "
                + (
                    "1 cell in between is skipped."
                    if gaps == 1
                    else f"{gaps} cells in between are skipped."
                )
            )
        if not self.in_bounds:
            lines.append(
                f"OUT OF BOUNDS: the view reaches storage [{lo_hi[0]}, {lo_hi[1]}] "
                f"but the storage has {self.storage_size} cell{'' if self.storage_size == 1 else 's'}."
            )
        for note in self.notes:
            text = _NOTE_TEXT.get(note)
            if text:
                lines.append(text)
        return "\n".join(lines)

    def _why_not_contiguous(self) -> str:
        expected = self.element_cells
        for d in range(self.ndim - 1, -1, -1):
            n, s = self.shape[d], self.strides[d]
            if n == 1:
                continue
            if s != expected:
                return (
                    f"Not contiguous: dim {d} (size {n}) has stride {s} "
                    f"where a contiguous layout has {expected}."
                )
            expected *= n
        raise AssertionError("unreachable: the layout is contiguous")

    def to_dict(self) -> dict[str, Any]:
        """JSON-able summary: the data, the flags and the derived facts (display-budgeted:
        ``has_overlap`` is ``None`` where the budget did not decide it, ``touched`` then a bound).

        >>> Layout((2,), (1,)).to_dict()["is_contiguous"]
        True
        """
        return {
            "shape": list(self.shape),
            "strides": list(self.strides),
            "byte_strides": list(self.byte_strides),
            "offset": self.offset,
            "itemsize": self.itemsize,
            "unit": self.unit,
            "dtype": self.dtype,
            "device": self.device,
            "numel": self.numel,
            "storage_size": self.storage_size,
            "storage_nbytes": self.storage_nbytes,
            "span": None if self.span is None else list(self.span),
            "touched": self._display_touched[0],
            "touched_exact": self._display_touched[1],
            "in_bounds": self.in_bounds,
            "is_contiguous": self.is_contiguous,
            "is_f_contiguous": self.is_f_contiguous,
            "is_channels_last": self.is_channels_last,
            "is_dense": self.is_dense,
            "has_overlap": self.quick_has_overlap,
            "notes": list(self.notes),
            "text": str(self),
            "explain": self.explain(),
        }


#: Each field's default, for :meth:`Layout.from_fields`.
_DEFAULTS = {
    "offset": 0,
    "itemsize": 4,
    "storage_size": None,
    "dtype": "float32",
    "device": "cpu",
    "unit": None,
    "notes": (),
    "storage_address": None,
    "library": "torch",
}
assert set(_DEFAULTS) | {"shape", "strides"} == set(Layout.__dataclass_fields__)
_FIELD_COUNT = len(Layout.__dataclass_fields__)

#: How to flatten and how to make contiguous, in the words of the tensor's own library.
_ADVICE = {
    "torch": {
        "contiguous": ".view(-1) works and .contiguous() returns the tensor itself (no copy).",
        "flat": ".view(-1) works: every element is one step of {flat} cells from the previous.",
        "not_flat": ".view(-1) fails (the elements are not one evenly strided run); "
        ".reshape(-1) copies.",
        "copy": ".contiguous() copies {numel} elements ({nbytes} bytes) into new storage.",
    },
    "numpy": {
        "contiguous": ".reshape(-1) returns a view and np.ascontiguousarray(a) returns the array "
        "itself (no copy).",
        "flat": ".reshape(-1) returns a view (no copy): every element is one step of {flat} "
        "cells from the previous.",
        "not_flat": ".reshape(-1) copies (the elements are not one evenly strided run).",
        "copy": "np.ascontiguousarray(a) copies {numel} elements ({nbytes} bytes) into a new "
        "array.",
    },
}

_NOTE_TEXT = {
    "conj": "Conjugate view (is_conj): storage holds the unconjugated values; reads conjugate lazily.",
    "neg": "Negative view (is_neg): storage holds the un-negated values; reads negate lazily.",
    "meta": "Meta tensor: a layout without data, so no values can be shown.",
    "fake": "Fake tensor (FakeTensorMode): a layout without data, so no values can be shown.",
    "functional": "Functional tensor (inside torch.func.functionalize): its data lives in an "
    "inner tensor, so no values are shown; inspect the tensor outside the transform for them.",
    "wrapper-subclass": "Wrapper tensor subclass (_make_wrapper_subclass): this is its own "
    "metadata; its data lives in its inner tensors, so no values are shown.",
    "unreadable-dtype": "No values shown: torch cannot read single elements of this dtype "
    "(no indexing kernel); the layout itself is exact.",
    "read-only": "Read-only array: writes through it raise.",
    "quantized": "Quantized tensor: storage holds the integer codes; values = (code - zero_point) * scale.",
}
