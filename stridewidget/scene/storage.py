"""The storage window of a scene: which storage cells are drawn (every cell a shown element, an
arrow end or a storage end needs, with a little context), the long runs between them collapsed
into gap segments, and the suggested row width of the strip.
"""

from __future__ import annotations

from typing import Any

from ..layout.layout import Layout
from ..layout.touch import touch_counts
from ..limits import COLLAPSE_RUN, GAP_COUNT_LIMIT
from ..limits import CONTEXT_CELLS as _CONTEXT_CELLS
from ..limits import MIN_GAP as _MIN_GAP
from ..limits import MIN_WRAP as _MIN_WRAP
from ..style import STYLE
from .logical import slice_addresses
from .runs import read_count
from .values import cell_values

__all__ = ["COLLAPSE_RUN", "MAX_STRIP_CELLS", "collapse_unread", "storage_scene"]

#: A storage of up to this many cells is drawn as one strip; no suggested row is wider (one value
#: in the shared style, so the widget, the playground and the static pictures cannot drift).
MAX_STRIP_CELLS: int = STYLE["limits"]["max_strip_cells"]


def storage_scene(
    storage_id: str,
    entries: list[dict[str, Any]],
    members: list[int],
    max_storage_cells: int,
    wrap: int | None,
) -> tuple[dict[str, Any], Any, list[list[int | None]]]:
    """The storage's scene dict, the raw values of its shown cells (``None`` without values), and
    each entry's touch counts over them."""
    first = entries[0]["layout"]
    size = max(e["layout"].storage_size for e in entries)
    must_show: list[int] = []
    spans = []
    for entry in entries:
        layout = entry["layout"]
        must_show.extend(slice_addresses(entry["logical"]))
        for arrow in entry["arrows"]:
            must_show.extend((arrow["from"], arrow["to"]))
        if layout.span is not None:
            spans.append(layout.span)
            must_show.append(layout.offset)
    if size:
        must_show.extend((0, size - 1))
    suggested = wrap if wrap is not None else _suggest_wrap([e["layout"] for e in entries], size)
    window = _window(must_show, size, max_storage_cells, min_gap=max(_MIN_GAP, suggested))
    counts = [touch_counts(entry["layout"], window) for entry in entries]
    unread = [all(c[k] == 0 for c in counts) for k in range(len(window))]  # None: maybe read
    cells = collapse_unread(window, unread) if size > MAX_STRIP_CELLS else window
    if len(cells) < len(window):
        keep = set(cells)
        counts = [[n for cell, n in zip(window, c) if cell in keep] for c in counts]
    segments = _segments(cells, size, spans)
    for segment in segments:
        if segment["kind"] == "gap":
            segment["read"] = _read_in_gap(segment, [e["layout"] for e in entries])
    text, value, raw = cell_values(entries, cells)
    finite = [v for v in value or () if v is not None]
    return (
        {
            "id": storage_id,
            "dtype": first.dtype,
            "itemsize": first.itemsize,
            "unit": first.unit,
            "device": first.device,
            "size": size,
            "nbytes": size * first.unit,
            "has_values": text is not None,
            "wrap": suggested,
            "segments": segments,
            "cells": {"index": cells, "text": text, "value": value},
            "value_range": [min(finite), max(finite)] if finite else None,
            "text_width": max((len(t) for t in text), default=0) if text else 0,
            "tensors": [f"t{i}" for i in members],
        },
        raw,
        counts,
    )


def _read_in_gap(segment: dict[str, Any], layouts: list[Any]) -> int | None:
    """How many of a gap's cells some shown tensor reads: 0 outside every span, counted exactly
    for a gap of at most ``GAP_COUNT_LIMIT`` cells, else ``None`` (not counted: the picture then
    says "not shown", never "untouched")."""
    if not segment["in_span"]:
        return 0
    start, stop = segment["start"], segment["stop"]
    # dense layouts read every cell of their span once: the count is interval arithmetic
    spans = [layout.span for layout in layouts if layout.span is not None]
    dense = all(layout.span is None or (layout.is_dense and layout.element_cells == 1)
                for layout in layouts)  # fmt: skip
    if dense:
        pieces = sorted((max(lo, start), min(hi + 1, stop)) for lo, hi in spans)
        read, reach = 0, start
        for lo, hi in pieces:
            lo = max(lo, reach)
            if hi > lo:
                read, reach = read + hi - lo, hi
        return read
    if stop - start > GAP_COUNT_LIMIT:  # too long to touch: the tensors' arithmetic runs
        return read_count(
            [layout for layout in layouts if _meets(layout, start, stop)], start, stop
        )
    cells = list(range(start, stop))
    counts = [touch_counts(layout, cells) for layout in layouts]
    if any(n is None for c in counts for n in c):
        return None
    return sum(1 for k in range(len(cells)) if any(c[k] for c in counts))


def _meets(layout: Any, start: int, stop: int) -> bool:
    """Does ``layout``'s span meet storage cells ``[start, stop)``?"""
    return layout.span is not None and layout.span[0] < stop and start <= layout.span[1]


def collapse_unread(window: list[int], unread: list[bool], run: int = COLLAPSE_RUN) -> list[int]:
    """The window's cells less those in a stretch of at least ``run`` storage cells that no shown
    tensor reads: a maximal streak of consecutive unread window cells, together with the holes of
    the window beside it, is drawn as one gap segment (its count is its length).  Read cells are
    never dropped.

    >>> collapse_unread([0, 1, 2, 3, 4, 5, 6, 7], [False, True, True, True, True, False, True, False])
    [0, 5, 6, 7]
    >>> collapse_unread([0, 1, 2, 10, 11], [False, True, False, True, False])   # 1: a short streak
    [0, 1, 2, 11]
    """
    kept: list[int] = []
    k = 0
    while k < len(window):
        if not unread[k]:
            kept.append(window[k])
            k += 1
            continue
        end = k
        while end + 1 < len(window) and unread[end + 1] and window[end + 1] == window[end] + 1:
            end += 1
        # the stretch this streak would join: from the cell after the previous shown cell to the
        # one before the next (holes beside it are gaps already)
        start = window[k - 1] + 1 if k > 0 else 0
        stop = window[end + 1] if end + 1 < len(window) else window[end] + 1
        touches_hole_left = k == 0 or window[k - 1] + 1 < window[k]
        touches_hole_right = end + 1 < len(window) and window[end] + 1 < window[end + 1]
        length = window[end] - window[k] + 1
        if touches_hole_left:
            length = window[end] + 1 - start
        if touches_hole_right:
            length += stop - window[end] - 1
        if length < run:
            kept.extend(window[k : end + 1])
        k = end + 1
    return kept


def _window(must_show: list[int], size: int, max_cells: int, min_gap: int) -> list[int]:
    """Sorted storage cells to draw: the must-show cells with a little context, holes shorter than
    ``min_gap`` (a gap marker's width, or a storage row) filled.

    Never more than ``max_cells``: context shrinks first, then the must-show cells are thinned
    evenly (their logical cells then have no storage cell on screen).
    """
    wanted = sorted({c for c in must_show if 0 <= c < size})
    for context in (_CONTEXT_CELLS, 1, 0):
        runs = _runs(wanted, context, size, min_gap)
        total = sum(stop - start for start, stop in runs)
        if total <= max_cells:
            return [c for start, stop in runs for c in range(start, stop)]
    step = len(wanted) / max_cells
    thinned = sorted({wanted[int(k * step)] for k in range(max_cells)})
    return thinned


def _runs(wanted: list[int], context: int, size: int, min_gap: int) -> list[tuple[int, int]]:
    """Merged ``[start, stop)`` runs around ``wanted``; holes shorter than ``min_gap`` are filled."""
    runs: list[tuple[int, int]] = []
    for cell in wanted:
        start, stop = max(cell - context, 0), min(cell + context + 1, size)
        if runs and start - runs[-1][1] < min_gap:
            runs[-1] = (runs[-1][0], max(runs[-1][1], stop))
        else:
            runs.append((start, stop))
    return runs


def _segments(cells: list[int], size: int, spans: list[tuple[int, int]]) -> list[dict[str, Any]]:
    segments: list[dict[str, Any]] = []

    def gap(start: int, stop: int) -> None:
        in_span = any(lo <= stop - 1 and start <= hi for lo, hi in spans)
        segments.append({"kind": "gap", "start": start, "stop": stop, "in_span": in_span})

    position = 0
    for cell in cells:
        if cell > position:
            gap(position, cell)
        if segments and segments[-1]["kind"] == "cells" and segments[-1]["stop"] == cell:
            segments[-1]["stop"] = cell + 1
        else:
            segments.append({"kind": "cells", "start": cell, "stop": cell + 1})
        position = cell + 1
    if position < size:
        gap(position, size)
    return segments


def _suggest_wrap(layouts: list[Layout], size: int) -> int:
    """Cells per storage row: the whole storage as one strip when it is short, else the row of the
    storage's natural layout.

    The natural layout is that of the widest dense member (the base tensor, when it is shown), else
    of any non-overlapping member: its row is the largest stride (for a dense member, a product of
    its trailing sizes, or its whole size) that fits in ``MAX_STRIP_CELLS``, widened to the largest
    multiple that still fits, so rows start on its multiples and read as one continuing line:

    >>> from stridewidget import Layout
    >>> _suggest_wrap([Layout((2, 3, 4, 5), (60, 20, 5, 1))], 120)   # NCHW: rows of W·H
    20
    >>> _suggest_wrap([Layout((5, 7), (7, 1))], 35)   # rows of 7, four per strip row
    28
    >>> _suggest_wrap([Layout((3, 4), (1, 3))], 12)   # short: one strip
    12
    """
    if size <= MAX_STRIP_CELLS:
        return max(size, 1)
    candidates = [lay for lay in layouts if lay.numel and lay.quick_has_overlap is False]
    for layout in sorted(candidates, key=lambda lay: (not lay.is_dense, -lay.numel)):
        strides = {abs(s) for n, s in zip(layout.shape, layout.strides) if n > 1 and s != 0}
        if layout.is_dense:
            strides.add(layout.numel)
        fitting = [s for s in strides if 2 <= s <= MAX_STRIP_CELLS]
        if fitting:
            row = max(fitting)
            return row * (MAX_STRIP_CELLS // row)
        wider = [s for s in strides if s > MAX_STRIP_CELLS]
        if wider:
            natural = min(wider)
            divisors = [d for d in range(_MIN_WRAP, MAX_STRIP_CELLS + 1) if natural % d == 0]
            if divisors:
                return divisors[-1]
        break
    return MAX_STRIP_CELLS
