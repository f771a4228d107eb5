"""Which logical indices a scene shows: each dim elided like ``torch``'s print (``edge_items`` at
each end), the 2-D slices of the last two dims listed in index order with gap markers for the
leading-dim slices left out (at most ``max_slices`` listed; each marker names its slices as index
ranges, so the listed slices and the markers' ranges are every slice exactly once), and the panel
grid they are laid out in.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence
from typing import Any

from ..layout.layout import Layout

__all__ = ["gap_between", "logical_window", "slice_addresses"]


def _shown_indices(size: int, elide: bool, edge_items: int) -> list[int | None]:
    """Indices shown along one dim; ``None`` marks the elided middle."""
    if not elide or size <= 2 * edge_items + 1:
        return list(range(size))
    return [*range(edge_items), None, *range(size - edge_items, size)]


def logical_window(
    layout: Layout,
    edge_items: int,
    threshold: int,
    max_dim_items: int,
    max_slices: int,
    name: str = "x",
    picked: Sequence[Sequence[int]] = (),
) -> dict[str, Any]:
    """Which indices of ``layout`` a picture shows (see the module doc); ``name`` names the
    tensor in the gap markers' text (``x[1:5, :, :]``).  ``picked`` leading indices (a reader's
    slice picker) are shown besides the listed ones, marked ``"picked"`` (1 for the last of them, 2
    for the one before: a picture too tall for its budget draws fewer panels, keeping those, the
    most recent first); the gap markers count around them.

    >>> from stridewidget import Layout
    >>> window = logical_window(Layout((10, 2, 2), (4, 2, 1)), 3, 256, 32, 8, name="x")
    >>> [s["text"] for s in window["slices"] if s["kind"] == "gap"]
    ['x[7:9, :, :]']
    """
    shape = layout.shape
    ndim = layout.ndim
    summarize = layout.numel > threshold
    per_dim = [_shown_indices(n, summarize or n > max_dim_items, edge_items) for n in shape]
    elided = any(None in shown for shown in per_dim)
    lead_dims = max(ndim - 2, 0)
    row_dim = ndim - 2 if ndim >= 2 else None
    col_dim = ndim - 1 if ndim >= 1 else None
    rows = per_dim[row_dim] if row_dim is not None else None
    cols = per_dim[col_dim] if col_dim is not None else None

    slices: list[dict[str, Any]] = []
    if layout.numel > 0:
        picks = checked_picks(picked, shape[:lead_dims], name)
        recent = {pick: len(picks) - k for k, pick in enumerate(picks)}  # 1: the last picked
        leads = _lead_indices(
            per_dim[:lead_dims], shape[:lead_dims], max_slices, name, ndim - lead_dims, picks
        )
        for lead in leads:
            if isinstance(lead, dict):
                slices.append(lead)
                continue
            slices.append(_slice(layout, lead, rows, cols))
            if tuple(lead) in recent:  # a reader's pick: the height ladder keeps it
                slices[-1]["picked"] = recent[tuple(lead)]
    return {
        "shape": list(shape),
        "ndim": ndim,
        "elided": elided,
        "row_dim": row_dim,
        "col_dim": col_dim,
        "panels": _panels(ndim),
        "slices": slices,
    }


def _panels(ndim: int) -> dict[str, Any]:
    """Which leading dims lay the 2-D slices out as a grid of panels, and which get a selector.

    3-D: one row of panels along dim 0.  4-D: rows along dim 0, columns along dim 1 (N×C of H×W).
    Higher: the last two leading dims make the grid, the outer ones are picked with a selector.
    """
    lead = max(ndim - 2, 0)
    if lead == 0:
        return {"row_dim": None, "col_dim": None, "select_dims": []}
    if lead == 1:
        return {"row_dim": None, "col_dim": 0, "select_dims": []}
    return {"row_dim": lead - 2, "col_dim": lead - 1, "select_dims": list(range(lead - 2))}


def _lead_indices(
    lead_per_dim: Sequence[list[int | None]],
    shape: Sequence[int],
    max_slices: int,
    name: str,
    trailing: int,
    picked: Sequence[tuple[int, ...]] = (),
) -> list[list[int] | dict[str, Any]]:
    """Leading-dim index tuples in index order, with a gap marker wherever slices were left out.

    The listed tuples are the product of each dim's shown indices, thinned to the first
    ``max_slices - 1`` and the last when there are more.  Between two listed tuples (and before
    the first, after the last) the slices left out are a few boxes of the leading index space
    (:func:`_left_out`); one marker ``{"kind": "gap", "count": n, "ranges": [...], "text": ...}``
    names them, so the listed slices and the markers' ranges are every slice exactly once.
    """
    listed = sorted({*_listed(lead_per_dim, max_slices), *picked})
    items: list[list[int] | dict[str, Any]] = []
    boxes: list[list[list[int]]] = []
    for item in _left_out(listed, shape):
        if isinstance(item, tuple):
            if boxes:
                items.append(_gap(boxes, shape, name, trailing))
                boxes = []
            items.append(list(item))
        else:
            boxes.append(item)
    if boxes:
        items.append(_gap(boxes, shape, name, trailing))
    return items


def checked_picks(
    picked: Sequence[Sequence[int]], lead_shape: Sequence[int], name: str = "x"
) -> list[tuple[int, ...]]:
    """``picked`` as leading-index tuples, each checked against ``lead_shape``: a one-line
    ``TypeError`` for a value that is no list of index lists of ints, a ``ValueError`` for an
    index list that is no slice of the tensor.

    >>> checked_picks([[3, 1]], (10, 2))
    [(3, 1)]
    >>> checked_picks([[3, 2]], (10, 2), "x")
    Traceback (most recent call last):
    ...
    ValueError: x[3, 2, …] is no slice of x: its leading dims have sizes (10, 2)
    >>> checked_picks("7", (10,), "x")
    Traceback (most recent call last):
    ...
    TypeError: picked['x'] must be a list of index lists of ints, like [[0], [3]]; got '7'
    """
    picks = picked if isinstance(picked, (list, tuple)) else None
    checked = []
    for pick in picks if picks is not None else ():
        index = tuple(pick) if isinstance(pick, (list, tuple)) else (pick,)
        if not all(type(i) is int for i in index):
            picks = None
            break
        if len(index) != len(lead_shape) or not all(
            0 <= i < n for i, n in zip(index, lead_shape, strict=True)
        ):
            shown = ", ".join(map(str, index))
            raise ValueError(
                f"{name}[{shown}, …] is no slice of {name}: its leading dims have sizes "
                f"{tuple(lead_shape)}"
            )
        checked.append(index)
    if picks is None:
        example = [[0] * len(lead_shape), [min(3, n - 1) if n else 0 for n in lead_shape]]
        got = repr(picked)
        got = got if len(got) <= 40 else got[:39] + "…"
        raise TypeError(
            f"picked[{name!r}] must be a list of index lists of ints, like {example}; got {got}"
        )
    return checked


def _listed(lead_per_dim: Sequence[list[int | None]], max_slices: int) -> list[tuple[int, ...]]:
    """The leading tuples a scene draws: the product of the shown indices, thinned to the first
    ``max_slices - 1`` and the last (never more than ``max_slices``)."""
    shown = [[i for i in dim if i is not None] for dim in lead_per_dim]
    total = math.prod(len(dim) for dim in shown)
    first = list(itertools.islice(itertools.product(*shown), max_slices))
    if total <= max_slices:
        return first
    return [*first[: max_slices - 1], tuple(dim[-1] for dim in shown)]


def _left_out(listed: list[tuple[int, ...]], shape: Sequence[int]) -> Iterator[Any]:
    """The listed tuples (sorted, distinct) and, in index order between them, the boxes of the
    leading index space of ``shape`` that hold none: each box is ``[[start, stop], ...]`` per
    leading dim (stop exclusive).  Work is O(listed × dims), whatever the sizes."""

    def walk(prefix: list[list[int]], dim: int, group: list[tuple[int, ...]]) -> Iterator[Any]:
        if dim == len(shape):
            yield group[0]
            return
        full = [[0, n] for n in shape[dim + 1 :]]
        start = 0
        for value, members in itertools.groupby(group, key=lambda t: t[dim]):
            if value > start:
                yield [*prefix, [start, value], *full]
            yield from walk([*prefix, [value, value + 1]], dim + 1, list(members))
            start = value + 1
        if start < shape[dim]:
            yield [*prefix, [start, shape[dim]], *full]

    if not listed:
        return
    yield from walk([], 0, sorted(set(listed)))


def gap_between(
    first: Sequence[int], last: Sequence[int], shape: Sequence[int], name: str, trailing: int
) -> dict[str, Any]:
    """A gap marker for the leading-index slices strictly between ``first`` and ``last`` (index
    order), as few boxes of the leading index space ``shape`` as :func:`_left_out` cuts: runs of
    consecutive indices are ranges, never listed one by one.

    >>> gap_between([0, 2], [3, 4], (4, 5), "x", 2)["text"]
    'x[0, 3:, :, :], x[1:3, :, :, :], x[3, :4, :, :]'
    >>> gap_between([1], [9], (10,), "x", 2)["count"]
    7
    """
    boxes: list[list[list[int]]] = []
    inside = False
    for item in _left_out([tuple(first), tuple(last)], shape):
        if isinstance(item, tuple):
            if inside:
                break
            inside = True
        elif inside:
            boxes.append(item)
    return _gap(boxes, shape, name, trailing)


def _gap(
    boxes: list[list[list[int]]], shape: Sequence[int], name: str, trailing: int
) -> dict[str, Any]:
    """A marker for the slices of ``boxes``: how many, which (``ranges``, and as index text)."""
    count = sum(math.prod(stop - start for start, stop in box) for box in boxes)
    dim = lead = None
    if len(boxes) == 1:  # one run: along its first ranged dim (the last one for a single slice)
        ranged = [d for d, (start, stop) in enumerate(boxes[0]) if stop - start > 1]
        dim = ranged[0] if ranged else len(shape) - 1
        lead = [start for start, _ in boxes[0][:dim]]
    texts = [f"{name}{_box_text(box, shape, trailing)}" for box in boxes]
    return {
        "kind": "gap",
        "dim": dim,
        "count": count,
        "lead": lead,
        "ranges": boxes,
        "text": ", ".join(texts),
    }


def _box_text(box: list[list[int]], shape: Sequence[int], trailing: int) -> str:
    """``[1:5, :, :, :, :]``: a box of leading indices as Python indexing, then ``trailing``
    ``:`` for the slice's own dims."""
    parts = []
    for (start, stop), size in zip(box, shape):
        if stop - start == 1:
            parts.append(str(start))
        else:
            parts.append(f"{start if start else ''}:{stop if stop != size else ''}")
    return "[" + ", ".join([*parts, *[":"] * trailing]) + "]"


def _slice(
    layout: Layout, lead: list[int], rows: list[int | None] | None, cols: list[int | None] | None
) -> dict[str, Any]:
    row_list = rows if rows is not None else [0]
    col_list = cols if cols is not None else [0]
    addresses = []
    for r in row_list:
        row_addresses: list[int | None] = []
        for c in col_list:
            if r is None or c is None:
                row_addresses.append(None)
                continue
            index = list(lead)
            if rows is not None:
                index.append(r)
            if cols is not None:
                index.append(c)
            row_addresses.append(layout.address(tuple(index)))
        addresses.append(row_addresses)
    label_parts = [str(i) for i in lead] + [":"] * (layout.ndim - len(lead))
    return {
        "kind": "slice",
        "lead": list(lead),
        "label": "[" + ", ".join(label_parts) + "]",
        "rows": rows,
        "cols": cols,
        "addr": addresses,
    }


def slice_addresses(logical: dict[str, Any]) -> list[int]:
    return [
        a
        for item in logical["slices"]
        if item["kind"] == "slice"
        for row in item["addr"]
        for a in row
        if a is not None
    ]
