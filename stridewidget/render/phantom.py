"""Phantom cells: the elements an out-of-bounds ``as_strided`` setting would read past the end of
its storage, drawn after the storage's last element, under the playground's picture (the live
widget and its static fallback paint the same picture).

Cost: O(numel) to find the escapes (``escaping_cells``, refused above ``ENUMERATION_LIMIT``
elements, like the live playground), O(limit) to draw.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ..limits import PHANTOM_ENUMERATION_LIMIT as ENUMERATION_LIMIT
from ..style import STYLE
from .labels import group_digits
from .primitives import MAX_WIDTH, PAD, Group, Picture, Rect, Text, text_width, translated

__all__ = ["below", "escaping_cells", "phantom_picture"]

G = STYLE["geometry"]


def escaping_cells(
    size: Sequence[int], stride: Sequence[int], offset: int, storage_size: int, limit: int = 16
) -> tuple[list[tuple[int, tuple[int, ...]]], int] | None:
    """The first ``limit`` storage positions at or past ``storage_size`` that the setting reads,
    each with the first index (in C order) that reads it, and how many there are in all;
    ``None`` when the view has more than ``ENUMERATION_LIMIT`` elements, or when the setting is
    no view at all (``size`` and ``stride`` differ in length, a size is negative): nothing to
    enumerate.

    >>> escaping_cells((2, 3), (3, 2), 0, 6)  # reads 0, 2, 4, 3, 5, 7: only 7 is past the end
    ([(7, (1, 2))], 1)
    """
    if len(size) != len(stride) or any(n < 0 for n in size):  # refused, still displayed
        return None
    numel = math.prod(size)
    if numel > ENUMERATION_LIMIT:
        return None
    positions = offset + sum(
        (np.arange(n, dtype=np.int64) * s).reshape([-1 if d == k else 1 for k in range(len(size))])
        for d, (n, s) in enumerate(zip(size, stride, strict=True))
    )
    flat = np.broadcast_to(np.asarray(positions, dtype=np.int64), tuple(size)).ravel()
    escaping, first = np.unique(flat[flat >= storage_size], return_index=True)
    order = np.flatnonzero(flat >= storage_size)
    cells = [
        (int(cell), tuple(int(i) for i in np.unravel_index(order[k], tuple(size))))
        for cell, k in zip(escaping[:limit], first[:limit], strict=True)
    ]
    return cells, len(escaping)


def phantom_picture(
    storage_size: int,
    cells: Sequence[tuple[int, tuple[int, ...]]],
    total: int,
    theme: str = "light",
    *,
    width: float = MAX_WIDTH,
    roles: bool = False,
) -> Picture:
    """A strip: the storage's last element, ``⋯ n ⋯`` where escapes skip ahead, then one marked
    cell per escaping element with its storage index under it and the view index it reads in its
    title, in lines of ``width`` px (``roles``: its colours theme role tokens, as
    :func:`~stridewidget.render.picture.draw` gives them).  Draw it with
    :func:`stridewidget.render.svg.svg_of`.

    >>> picture = phantom_picture(6, [(7, (1, 2))], 1)
    >>> [item.cls for item in picture.items if isinstance(item, Group)]
    ['sws-last', 'sws-phantom']
    """
    colours = STYLE["themes"][theme]
    if roles:
        colours = {key: "@" + key for key in colours}
    size, small = G["font_size"], G["font_size_small"]
    more = f" (the first {len(cells)} of {group_digits(total)})" if total > len(cells) else ""
    caption = (
        f"past the end of the storage: the elements this setting would read{more}, "
        f"after element {group_digits(storage_size - 1)}"
    )
    items: list = [Text(PAD, PAD + size, caption, size, colours["text"])]
    cell_w = max(G["cell_w"], text_width(str(cells[-1][0] if cells else storage_size), small) + 8)
    top = PAD + G["line_h"]
    row_h = G["cell_h"] + G["index_h"] + G["row_gap"]
    x = right = PAD
    previous = storage_size - 1
    strip = [("last", storage_size - 1, ())]
    for cell, index in cells:
        if cell > previous + 1:
            strip.append(("skip", cell - previous - 1, ()))
        strip.append(("phantom", cell, index))
        previous = cell
    for kind, number, index in strip:
        label = f"⋯ {group_digits(number)} ⋯"
        span = max(cell_w, text_width(label, size) + 8) if kind == "skip" else cell_w
        if x + span > width - PAD:  # wrap like the storage strip: one continuing line
            x, top = PAD, top + row_h
        right = max(right, x + span)
        if kind == "skip":
            baseline = top + G["cell_h"] / 2 + 4
            items.append(Text(x + span / 2, baseline, label, size, colours["text_muted"], "middle"))
        else:
            items.append(
                _cell(colours, x, top, cell_w, number, index if kind == "phantom" else None)
            )
        x += span
    height = top + G["cell_h"] + G["index_h"] + PAD
    return Picture(
        max(right, PAD + text_width(caption, size)) + PAD,
        height,
        theme,
        items,
        "storage elements past the end that the view would read",
        [],
    )


def _cell(
    colours: dict, x: float, top: float, cell_w: float, number: int, index: tuple | None
) -> Group:
    """One cell of the strip at (x, top): storage[number], a phantom that view[index] would
    read, or (``index`` None) the storage's last element."""
    phantom = index is not None
    middle, baseline = x + cell_w / 2, top + G["cell_h"] / 2 + 4
    box = Rect(
        x, top, cell_w - 2, G["cell_h"] - 2,
        colours["phantom_bg" if phantom else "cell_bg"],
        colours["phantom_stroke" if phantom else "cell_stroke"],
        dash="4 2" if phantom else None, rx=3,
    )  # fmt: skip
    mark = Text(middle, baseline, "✗" if phantom else "last", G["font_size"],
                colours["phantom_text" if phantom else "text_muted"], "middle", bold=phantom)  # fmt: skip
    under = Text(middle, top + G["cell_h"] + G["index_h"] - 2, str(number), G["font_size_small"],
                 colours["text_muted"], "middle")  # fmt: skip
    title = (
        f"storage[{number}] does not exist: view[{','.join(map(str, index))}] would read it"
        if phantom
        else f"storage[{number}]: the storage's last element"
    )
    cls = "sws-phantom" if phantom else "sws-last"
    return Group(cls, [box, mark, under], {"cell": number}, title)


def below(picture: Picture, more: Picture) -> Picture:
    """``picture`` with ``more`` drawn under it (the playground's cells past the end under its
    strip): one picture, as wide as the wider of the two.

    >>> top, extra = phantom_picture(6, [(7, (1, 2))], 1), phantom_picture(6, [(9, (2, 2))], 1)
    >>> both = below(top, extra)
    >>> both.height == top.height + extra.height, len(both.items) == len(top.items) + len(extra.items)
    (True, True)
    """
    moved = translated(more.items, 0, picture.height)
    return Picture(
        max(picture.width, more.width),
        picture.height + more.height,
        picture.theme,
        [*picture.items, *moved],
        picture.title,
        picture.tensors,
    )
