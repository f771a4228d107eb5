"""The static fallback's shapes in layers: runs of one style that can be written under one group.

The saved fallback (:func:`stridewidget.render.svg.svg_of_picture` with ``keys=False``) is a
picture, not an app: no per-cell groups.  Most of its bytes are then the style each shape repeats
(a storage cell's box, band, mark, value and index each say their colours, size and weight).
Written in layers — every cell's box, then every band, ... — shapes of one style are neighbours
and one ``<g>`` says their style once.

Reordering changes nothing on screen as long as every two shapes that may overlap keep their
order.  :func:`layered` keeps it, greedily: each shape goes into the first run of its style that
comes after every run holding a shape it may overlap; with none, a new run at the end.  "May
overlap" is decided per top-level item (a cell's group, an arrow, a text) on a conservative box (a
text's box from its length at a wide advance, a path's from all its points plus room for its
arrowhead); the shapes inside one item are taken to overlap each other, so they keep their order.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Hashable
from typing import Any

from .primitives import Group, Path, Rect, Text, text_width

__all__ = ["box_of", "layered"]

#: Spatial hash cell (px): items are found by the buckets their boxes cover (any size finds the
#: same overlaps; 128 px: fewest steps for cells of 30-80 px, measured).
_BUCKET = 128.0
#: Advance assumed for a text (em): the picture's monospace advance is 0.6 (a little more, for
#: fonts that round it up), and two em per character for a text with one that may be wide (CJK,
#: emoji).  Above the baseline one em, below it 0.35 em; the halo's stroke on every side.
_ASCII_EM, _WIDE_EM, _ASCENT, _DESCENT, _HALO = 0.64, 2.0, 1.0, 0.35, 2.0
#: Room for an arrowhead past a path's points (px); a rect's stroke and anti-aliasing.
_HEAD, _AA = 12.0, 1.0
#: Boxes that only touch (to rounding: two cells whose anti-aliasing rooms meet) do not overlap.
_TOUCH = 1e-6

Box = tuple[float, float, float, float]


def _width(text: str, size: float) -> float:
    """A text's width on its conservative box: a wide advance a character, or the room the
    layout gave it (:func:`~.primitives.text_width`: a ligature's several letters) if more."""
    if text.isascii():
        return len(text) * size * _ASCII_EM
    return max(len(text) * size * _WIDE_EM, text_width(text, size))


def box_of(item: Any) -> Box:
    """A box (x0, y0, x1, y1) that holds everything ``item`` paints (never smaller).

    >>> box_of(Rect(10, 20, 30, 40, "#fff"))
    (8.5, 18.5, 41.5, 61.5)
    """
    kind = type(item)
    if kind is Rect:
        pad = item.stroke_width / 2 + _AA
        return (item.x - pad, item.y - pad, item.x + item.w + pad, item.y + item.h + pad)
    if kind is Text:
        size, text = item.size, item.text
        width = _width(text, size)
        x0 = item.x - (
            width if item.anchor == "end" else width / 2 if item.anchor == "middle" else 0
        )
        top, bottom = item.y - _ASCENT * size - _HALO, item.y + _DESCENT * size + _HALO
        return (x0 - _HALO, top, x0 + width + _HALO, bottom)
    if kind is Path:
        xs = [v for _, *values in item.commands for v in values[0::2]]
        ys = [v for _, *values in item.commands for v in values[1::2]]
        pad = _HEAD + item.width
        return (min(xs) - pad, min(ys) - pad, max(xs) + pad, max(ys) + pad)
    if kind is Group:
        if not item.children:
            return (0.0, 0.0, 0.0, 0.0)
        x0 = y0 = float("inf")
        x1 = y1 = float("-inf")
        for child in item.children:
            kind = type(child)
            if kind is Rect:  # a cell's shapes: inline, no call (as box_of does them)
                pad = child.stroke_width / 2 + _AA
                a0, b0 = child.x - pad, child.y - pad
                a1, b1 = child.x + child.w + pad, child.y + child.h + pad
            elif kind is Text:
                size, text, anchor = child.size, child.text, child.anchor
                width = len(text) * size * _ASCII_EM if text.isascii() else _width(text, size)
                a0 = child.x - (
                    width if anchor == "end" else width / 2 if anchor == "middle" else 0
                )
                a0, a1 = a0 - _HALO, a0 + width + _HALO
                b0, b1 = child.y - _ASCENT * size - _HALO, child.y + _DESCENT * size + _HALO
            else:
                a0, b0, a1, b1 = box_of(child)
            x0, y0 = (a0 if a0 < x0 else x0), (b0 if b0 < y0 else y0)
            x1, y1 = (a1 if a1 > x1 else x1), (b1 if b1 > y1 else y1)
        return (x0, y0, x1, y1)
    raise TypeError(f"cannot place {kind.__name__}")


def _units(items: list, out: list) -> list:
    """The items that are placed whole: shapes, and groups of shapes only (one cell, one arrow);
    a group that holds groups (a panel of cells) is opened, its children placed one by one."""
    for item in items:
        if type(item) is Group and any(type(child) is Group for child in item.children):
            _units(item.children, out)
        else:
            out.append(item)
    return out


def layered(items: list, style: Callable[[Any], Hashable]) -> list[list]:
    """``items``' shapes (groups opened) as runs of one ``style(shape)`` each, in an order that
    paints what they paint: every two shapes that may overlap keep their order.

    >>> a, b = Rect(0, 0, 10, 10, "#fff"), Text(5, 8, "1", 11, "#000", "middle")
    >>> c, d = Rect(50, 0, 10, 10, "#fff"), Text(55, 8, "2", 11, "#000", "middle")
    >>> [[type(s).__name__ for s in run] for run in layered([a, b, c, d], lambda s: type(s))]
    [['Rect', 'Rect'], ['Text', 'Text']]
    """
    runs: list[list] = []
    #: per style, the indices of its runs (ascending)
    by_style: dict[Hashable, list[int]] = {}
    #: per bucket: the highest run of its entries, and the entries
    buckets: dict[tuple[int, int], list] = {}
    for unit in _units(items, []):
        x0, y0, x1, y1 = box_of(unit)
        # an entry keeps its far edges less _TOUCH: the numbers the overlap test compares
        x1t, y1t = x1 - _TOUCH, y1 - _TOUCH
        bx0, bx1 = int(x0 // _BUCKET), int(x1 // _BUCKET)
        by0, by1 = int(y0 // _BUCKET), int(y1 // _BUCKET)
        if bx0 == bx1 and by0 == by1:  # most units: one bucket
            keys = [(bx0, by0)]
        else:
            keys = [(bx, by) for bx in range(bx0, bx1 + 1) for by in range(by0, by1 + 1)]
        lower = 0
        for key in keys:
            bucket = buckets.get(key)
            if bucket is None or bucket[0] <= lower:  # nothing in it could raise ``lower``
                continue
            # latest first: the highest runs come early, the rest fail on ``top`` alone
            for a0, b0, a1t, b1t, top in reversed(bucket[1]):
                if top > lower and a0 < x1t and x0 < a1t and b0 < y1t and y0 < b1t:
                    lower = top
        for shape in unit.children if type(unit) is Group else (unit,):
            kind = style(shape)
            mine = by_style.get(kind)
            if mine is None:
                lower = len(runs)
                runs.append([shape])
                by_style[kind] = [lower]
                continue
            at = bisect_left(mine, lower)
            if at < len(mine):
                lower = mine[at]  # the next shape of this unit comes after this one
                runs[lower].append(shape)
            else:
                lower = len(runs)
                runs.append([shape])
                mine.append(lower)
        entry = (x0, y0, x1t, y1t, lower)
        for key in keys:
            bucket = buckets.get(key)
            if bucket is None:
                buckets[key] = [lower, [entry]]
            else:
                bucket[1].append(entry)
                if lower > bucket[0]:
                    bucket[0] = lower
    return runs
