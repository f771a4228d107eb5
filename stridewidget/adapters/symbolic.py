"""Layouts with symbolic sizes and strides (``torch.export`` / ``torch.compile`` FakeTensors).

A :class:`SymbolicLayout` is the :class:`~stridewidget.Layout` of a tensor whose sizes, strides or
offset are torch ``SymInt`` expressions (``s0``, ``3*s0``, an unbacked ``u0``).  Looking at it
must never change the program it came from: nothing here calls ``bool()``/``int()`` on a symbol
(which would add a guard to the ShapeEnv, or raise ``GuardOnDataDependentSymNode`` for an unbacked
size).  Every fact is three-valued — proven true, proven false, or "depends on s0" — decided only
by :func:`stridewidget._compat.known_true`, which never guards.

Pictures draw the example the program was traced at (the symbols' hints) and label it with the
symbols: :meth:`SymbolicLayout.example`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import cached_property
from typing import Any

from .._compat import (
    is_symbolic,
    known_false,
    known_true,
    simplified_text,
    symbol_example,
    symbol_names,
    symbol_values,
)
from ..errors import LayoutError
from ..layout.layout import Layout

__all__ = ["SymbolicLayout", "has_symbols"]

#: Size given to an unbacked symbol (no example value) when a picture is drawn.
UNBACKED_EXAMPLE = 2


def has_symbols(*values: Any) -> bool:
    """Whether any value (or entry of a sequence value) is a non-constant SymInt."""
    for value in values:
        if isinstance(value, (list, tuple)):
            if any(is_symbolic(v) for v in value):
                return True
        elif is_symbolic(value):
            return True
    return False


def _entry(value: Any, what: str) -> Any:
    if is_symbolic(value):
        return value
    if hasattr(value, "node") and hasattr(value.node, "maybe_as_int"):  # a constant SymInt
        return int(value.node.maybe_as_int())
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what} must be ints or torch SymInts, got {value!r}")
    return value


def _tri(condition: Any) -> bool | None:
    """True / False when proven (no guard), ``None`` when it depends on a symbol."""
    if known_true(condition):
        return True
    if known_false(condition):
        return False
    return None


def _text(value: Any) -> str:
    return str(value.node.expr) if is_symbolic(value) else str(value)


def _key(value: Any) -> Any:
    return value.node.expr if is_symbolic(value) else value


class SymbolicLayout(Layout):
    """A :class:`Layout` whose entries may be SymInts; its facts never guard.

    ``sw.inspect`` returns one for a FakeTensor (or functional tensor) with symbolic sizes,
    strides, offset or storage size; build one directly as ``SymbolicLayout(shape, strides, ...)``.

    >>> import torch
    >>> from torch.export import export, Dim
    >>> class Flat(torch.nn.Module):
    ...     def forward(self, x):
    ...         return x.t()
    >>> ep = export(Flat(), (torch.zeros(4, 3),), dynamic_shapes={"x": {0: Dim("b")}})
    >>> val = next(iter(ep.graph.nodes)).meta["val"]
    >>> import stridewidget as sw
    >>> lay = sw.inspect(val)
    >>> print(lay)
    float32 (s77,3):(3,1) +0 · storage 3*s77 · contiguous
    >>> lay.facts["contiguous"], lay.is_symbolic
    (True, True)
    """

    is_symbolic = True

    def __post_init__(self) -> None:
        shape = tuple(_entry(v, "shape") for v in self.shape)
        strides = tuple(_entry(v, "strides") for v in self.strides)
        if len(shape) != len(strides):
            raise LayoutError(
                f"shape has {len(shape)} dims but strides have {len(strides)}: "
                f"{tuple(map(_text, shape))} vs {tuple(map(_text, strides))}"
            )
        unit = self.itemsize if self.unit is None else int(self.unit)
        object.__setattr__(self, "shape", shape)
        object.__setattr__(self, "strides", strides)
        object.__setattr__(self, "offset", _entry(self.offset, "offset"))
        object.__setattr__(self, "unit", unit)
        object.__setattr__(self, "notes", tuple(self.notes))
        if self.storage_size is None:
            reach = self._reach()
            object.__setattr__(self, "storage_size", reach[1] + 1)
        else:
            object.__setattr__(self, "storage_size", _entry(self.storage_size, "storage_size"))

    # identity: compare expressions, never SymInts (``==`` on them would guard) ---------------------
    def _identity(self) -> tuple[Any, ...]:
        return (
            tuple(map(_key, self.shape)),
            tuple(map(_key, self.strides)),
            _key(self.offset),
            self.itemsize,
            _key(self.storage_size),
            self.dtype,
            self.device,
            self.unit,
            self.notes,
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Layout):
            return NotImplemented
        return self._identity() == SymbolicLayout._identity(other)  # type: ignore[arg-type]

    def __hash__(self) -> int:
        return hash(self._identity())

    # symbols ----------------------------------------------------------------------------------------
    @cached_property
    def symbols(self) -> tuple[str, ...]:
        """The symbols the layout depends on, sorted (``("s0",)``)."""
        found = set().union(
            *(symbol_names(v) for v in (*self.shape, *self.strides, self.offset, self.storage_size))
        )
        return tuple(sorted(found))

    def _reach(self) -> tuple[Any, Any]:
        # torch strides are never negative, so the span runs from the offset upwards
        last = sum((s * (n - 1) for n, s in zip(self.shape, self.strides)), self.offset)
        return self.offset, last + self.element_cells - 1

    @property
    def numel(self) -> Any:
        """Number of logical elements (a SymInt expression)."""
        return math.prod(self.shape)

    @cached_property
    def span(self) -> tuple[Any, Any] | None:  # type: ignore[override]
        """Inclusive ``(lo, hi)`` storage cells; ``None`` only when proven empty."""
        return None if _tri(self.numel == 0) is True else self._reach()

    @property
    def in_bounds(self) -> bool:
        """False only when the span is proven to leave the storage."""
        reach = self.span
        return reach is None or _tri(reach[1] < self.storage_size) is not False

    # three-valued facts ---------------------------------------------------------------------------
    def _dense_in_order(self, order: Sequence[int]) -> tuple[bool | None, frozenset[str]]:
        expected: Any = self.element_cells
        unknown: set[str] = set()
        for d in order:
            n, s = self.shape[d], self.strides[d]
            size_one = _tri(n == 1)
            if size_one is True:
                continue
            matches = _tri(s == expected)
            if matches is False and size_one is False:
                return False, frozenset()
            if matches is not True:
                unknown |= symbol_names(n) | symbol_names(s) | symbol_names(expected)
            expected = expected * n
        return (None if unknown else True), frozenset(unknown)

    def _empty_or(self, fact: tuple[bool | None, frozenset[str]]) -> tuple[Any, frozenset[str]]:
        empty = _tri(self.numel == 0)
        if empty is True or fact[0] is True:
            return True, frozenset()
        if empty is None:
            return None, fact[1] | symbol_names(self.numel)
        return fact

    @cached_property
    def _facts(self) -> dict[str, tuple[bool | None, frozenset[str]]]:
        c_order = range(self.ndim - 1, -1, -1)
        facts = {
            "contiguous": self._empty_or(self._dense_in_order(c_order)),
            "F-contiguous": self._empty_or(self._dense_in_order(range(self.ndim))),
        }
        last = {4: (1, 3, 2, 0), 5: (1, 4, 3, 2, 0)}.get(self.ndim)
        facts["channels-last"] = (
            self._empty_or(self._dense_in_order(last)) if last else (False, frozenset())
        )
        facts["dense"] = self._dense_fact(facts)
        facts["overlapping"] = self._overlap_fact(facts["dense"])
        return facts

    def _dense_fact(self, facts: dict[str, Any]) -> tuple[bool | None, frozenset[str]]:
        for name in ("contiguous", "F-contiguous", "channels-last"):
            if facts[name][0] is True:
                return True, frozenset()
        # strides sorted by their proven order; any order left open depends on the symbols
        dims = [d for d in range(self.ndim) if _tri(self.shape[d] == 1) is not True]
        try:
            dims.sort(key=lambda d: _Ordered(self.strides[d]))
        except _Unordered:
            return None, frozenset(self.symbols)
        return self._empty_or(self._dense_in_order(dims))

    def _overlap_fact(self, dense: tuple[Any, frozenset[str]]) -> tuple[bool | None, frozenset]:
        if dense[0] is True:
            return False, frozenset()
        for n, s in zip(self.shape, self.strides):
            if _tri(s == 0) is True and _tri(n > 1) is True:
                return True, frozenset()  # a broadcast dim reads its cells more than once
        # no overlap if, by increasing stride, each stride steps past all the smaller dims reach
        dims = [d for d in range(self.ndim) if _tri(self.shape[d] == 1) is not True]
        try:
            dims.sort(key=lambda d: _Ordered(self.strides[d]))
        except _Unordered:
            return None, frozenset(self.symbols)
        reach: Any = self.element_cells
        for d in dims:
            if _tri(self.strides[d] >= reach) is not True:
                return None, frozenset(self.symbols)
            reach = reach + self.strides[d] * (self.shape[d] - 1)
        return False, frozenset()

    @property
    def facts(self) -> dict[str, bool | str]:
        """Each flag: ``True``/``False`` when proven, else ``"depends on s0"`` (the symbols)."""
        return {
            name: value if value is not None else "depends on " + ", ".join(sorted(symbols))
            for name, (value, symbols) in self._facts.items()
        }

    @property
    def is_contiguous(self) -> bool:
        """Proven row-major contiguous (``facts["contiguous"]`` says when it depends)."""
        return self._facts["contiguous"][0] is True

    @property
    def is_f_contiguous(self) -> bool:
        """Proven column-major contiguous."""
        return self._facts["F-contiguous"][0] is True

    @property
    def is_channels_last(self) -> bool:
        """Proven channels-last contiguous."""
        return self._facts["channels-last"][0] is True

    @property
    def is_dense(self) -> bool:
        """Proven non-overlapping and dense."""
        return self._facts["dense"][0] is True

    @property
    def overlap_witness(self) -> None:  # type: ignore[override]
        """No witness indices are given for symbolic layouts (they would be symbolic too)."""
        return None

    @property
    def has_overlap(self) -> bool:
        """Proven internal overlap (a broadcast dim); ``facts["overlapping"]`` when it depends."""
        return self._facts["overlapping"][0] is True

    @property
    def quick_has_overlap(self) -> bool | None:
        """:attr:`has_overlap` when proven either way, else ``None``."""
        return self._facts["overlapping"][0]

    @property
    def touched(self) -> Any:
        """Distinct cells read: exact for dense layouts, else the element count (a bound)."""
        return self.numel * self.element_cells

    @property
    def touched_exact(self) -> bool:
        """Whether :attr:`touched` is exact (proven dense)."""
        return self.is_dense

    @property
    def _display_touched(self) -> tuple[Any, bool]:  # type: ignore[override]
        return self.touched, self.touched_exact

    @property
    def flags(self) -> tuple[str, ...]:
        """The proven flags, and ``"contiguous depends on s0"`` for the open ones."""
        names = []
        for name in ("contiguous", "F-contiguous", "channels-last", "dense", "overlapping"):
            value, symbols = self._facts[name]
            if value is True and not (name == "dense" and names):
                names.append(name)
            elif value is None and name in ("contiguous", "overlapping"):
                names.append(f"{name} depends on {', '.join(sorted(symbols))}")
        return tuple(names)

    # text -------------------------------------------------------------------------------------------
    def __str__(self) -> str:
        def tup(values: tuple[Any, ...]) -> str:
            return "(" + ",".join(_text(v) for v in values) + ")"

        text = f"{self.dtype} {tup(self.shape)}:{tup(self.strides)} +{_text(self.offset)}"
        text += f" · storage {simplified_text(self.storage_size)}"
        if self.device != "cpu":
            text += f" · {self.device}"
        return text + " · " + ", ".join(self.flags or ("strided",))

    def explain(self) -> str:
        """The facts in words, each proven one stated, each open one with its symbols."""
        lines = [f"Symbolic layout over {', '.join(self.symbols)}: {self}."]
        for name, value in self.facts.items():
            verdict = {True: "yes", False: "no"}.get(value, value)  # type: ignore[call-overload]
            lines.append(f"{name}: {verdict}")
        return "\n".join(lines)

    def address(self, index: Sequence[int] | int) -> Any:
        """Storage cell of a logical index, as an expression (bounds checked where proven)."""
        index = (index,) if isinstance(index, int) else tuple(index)
        if len(index) != self.ndim:
            raise IndexError(f"index {index} has {len(index)} entries, the view has {self.ndim}")
        for dim, (i, n) in enumerate(zip(index, self.shape)):
            if i < 0 or _tri(i < n) is False:
                raise IndexError(f"index {i} is out of bounds for dim {dim} of size {_text(n)}")
        return sum((i * s for i, s in zip(index, self.strides)), self.offset)

    def example(self, unbacked: int = UNBACKED_EXAMPLE) -> Layout:
        """The concrete layout the program was traced at (unbacked symbols get ``unbacked``),
        for pictures; its ``to_dict()`` keeps this layout's symbolic text."""
        concrete = {
            "shape": tuple(symbol_example(v, unbacked) for v in self.shape),
            "strides": tuple(symbol_example(v, unbacked) for v in self.strides),
            "offset": symbol_example(self.offset, unbacked),
            "storage_size": symbol_example(self.storage_size, unbacked),
        }
        drawn_at = ", ".join(
            f"{name}={value}" for name, value in self._symbol_examples(unbacked).items()
        )
        return _ExampleLayout(
            **concrete,
            itemsize=self.itemsize,
            dtype=self.dtype,
            device=self.device,
            unit=self.unit,
            notes=self.notes,
            symbolic_text=f"{self} · drawn at {drawn_at}",
        )

    def _symbol_examples(self, unbacked: int) -> dict[str, int]:
        found: dict[str, int] = {}
        for value in (*self.shape, *self.strides, self.offset, self.storage_size):
            found.update(symbol_values(value, unbacked))
        return dict(sorted(found.items()))

    def to_dict(self) -> dict[str, Any]:
        """The example's JSON summary (ints, for the scene), with this layout's symbolic text."""
        return self.example().to_dict()


class _Unordered(Exception):
    """Two strides whose order depends on a symbol."""


class _Ordered:
    """Sort key for strides: compares by proven ``<`` only, raising :class:`_Unordered` if open."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def __lt__(self, other: _Ordered) -> bool:
        less = _tri(self.value < other.value)
        if less is None:
            raise _Unordered
        return less


class _ExampleLayout(Layout):
    """The concrete layout a symbolic one is drawn at; it says so in every text."""

    def __init__(self, *, symbolic_text: str, **fields: Any) -> None:
        super().__init__(**fields)
        object.__setattr__(self, "symbolic_text", symbolic_text)

    def __str__(self) -> str:
        return self.symbolic_text

    def to_dict(self) -> dict[str, Any]:
        data = super().to_dict()
        data["text"] = data["symbolic"] = self.symbolic_text
        data["explain"] = f"{self.symbolic_text}.\n" + data["explain"]
        return data
