"""One tensor's card: its title (swatch, letter, name), its facts line (:mod:`.facts`), notes on
what it reads, and its logical grid (:mod:`.grid`): one grid for 0-D to 2-D, a grid of 2-D panels
for 3-D and more (4-D: rows along dim 0, columns along dim 1), with the slices the scene left out
counted between them.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping
from typing import Any

from ..scene.logical import gap_between
from .canvas import Canvas
from .elide import picks_not_drawn
from .facts import address_words, layout_summary, notation
from .grid import draw_slice, encodings, logical_cell_width
from .labels import colour_of, gap_note, viridis
from .primitives import LIMITS, PAD, G, Group, Rect, fitted, text_width, translated, wrapped

__all__ = ["draw_card"]


def draw_card(canvas: Canvas, tensor: Mapping[str, Any]) -> tuple[list, float, float]:
    """One tensor's card at (0, 0): title, facts line, logical grid or panels; its size."""
    saved, canvas.items = canvas.items, []
    saved_width, canvas.width = canvas.width, 0.0
    y = _head(canvas, tensor)
    logical = tensor["logical"]
    slices = [s for s in logical["slices"] if s["kind"] == "slice"]
    if not slices:
        y += G["line_h"]
        canvas.items.append(canvas.text(PAD, y, "empty tensor: no elements", muted=True))
        return _finish_card(canvas, saved, saved_width, y + 8)
    storage = canvas.lookup.storages.get(tensor["storage"])
    said = None  # over the weight budget: every cell's address in one line, not in each cell
    if canvas.address_line and storage is not None and storage["cells"]["text"] is not None:
        said = address_words(tensor["layout"], slices)  # None: a view whose cells keep theirs
    canvas.cell_addresses = said is None
    cell_w, show_values = logical_cell_width(canvas, tensor, storage, slices)
    ndim = logical["ndim"]
    if ndim >= 3:
        y += G["line_h"] - 10  # the caption is the next line under the facts
        inner = f"each panel: rows = dim {ndim - 2}, columns = dim {ndim - 1}"
        outer = (
            "panels: rows = dim 0, columns = dim 1"
            if ndim == 4
            else f"panels along dims {', '.join(map(str, range(ndim - 2)))}"
        )
        for k, line in enumerate(wrapped(f"{outer}; {inner}", _room(canvas), G["font_size"])):
            y += G["line_h"] if k else 0
            canvas.items.append(canvas.text(PAD, y, line, muted=True))
    shown = (
        set()
        if show_values or storage is None or storage["cells"]["text"] is None
        else encodings(canvas, tensor, slices, cell_w)
    )
    if "colour" in shown:
        y = _colour_key(canvas, tensor, storage, y)
        if "text" in shown:  # two encodings in one grid: said
            words = "a value short enough for its cell is written instead, on the cell's own fill"
            for line in wrapped(words, _room(canvas), G["font_size"]):
                y += G["line_h"]
                canvas.items.append(canvas.text(PAD, y, line, muted=True))
    for line in wrapped(said, _room(canvas), G["font_size"]) if said else ():
        y += G["line_h"]
        canvas.items.append(canvas.text(PAD, y, line, muted=True))
    y += 6 if ndim >= 3 else 2
    bottom = _slices(canvas, tensor, y, cell_w, show_values)
    canvas.cell_addresses = True
    return _finish_card(canvas, saved, saved_width, bottom)


def _colour_key(
    canvas: Canvas, tensor: Mapping[str, Any], storage: Mapping[str, Any], y: float
) -> float:
    """The line that says the grid's cells show values as colour: the scale's two ends (the
    range of the values the picture holds, not the tensor's), each with its swatch; the y of
    the line."""
    value_range = (tensor.get("reads") or {}).get("value_range") or storage.get("value_range")
    if not value_range:
        return y
    lo, hi = value_range
    y += G["line_h"]
    x = PAD
    space = text_width(" ", G["font_size"])  # SVG drops a text's own leading/trailing spaces
    what = colour_of(tensor["layout"]["dtype"])  # a complex value's colour is its magnitude
    for word, value in ((f"colour = {what}, on a scale from", lo), ("to", hi)):
        canvas.items.append(canvas.text(x, y, word, muted=True))
        x += text_width(word, G["font_size"]) + space
        fill = viridis(value, value_range)
        canvas.items.append(Rect(x, y - 10, 12, 12, fill[0] if fill else None, "#000000", rx=2))
        label = f"{value:.4g}"
        canvas.items.append(canvas.text(x + 15, y, label, muted=True))
        x += 15 + text_width(label, G["font_size"]) + space
    tail = "(each value: hover in the live widget)"
    if x + text_width(tail, G["font_size"]) <= _room(canvas):
        canvas.items.append(canvas.text(x, y, tail, muted=True))
    return y


def _head(canvas: Canvas, tensor: Mapping[str, Any]) -> float:
    """The card's title, facts line and read notes; the y below them."""
    order = tensor["order"]
    y = 16.0
    canvas.items.append(Rect(PAD, y - 12, 14, 14, ("pattern", order), "#000000", rx=3))
    canvas.items.append(
        canvas.text(
            PAD + 20,
            y,
            fitted(f"{tensor['mark']}  {tensor['name']}", _room(canvas) - 20, G["font_size_title"]),
            size=G["font_size_title"],
            bold=True,
        )
    )
    layout = tensor["layout"]
    lines = []
    for line in wrapped(layout_summary(layout), _room(canvas), G["font_size"]):
        y += G["line_h"]
        lines.append(canvas.text(PAD, y, line, muted=True))
    how = notation(len(layout["shape"]))
    canvas.items.append(Group("sws-facts", lines, title=f"{layout['text']} — {how}"))
    for note in (tensor.get("reads") or {}).get("notes", ()):
        lines = []
        for line in wrapped(note, _room(canvas), G["font_size"]):
            y += G["line_h"]
            lines.append(canvas.text(PAD, y, line, muted=True))
        canvas.items.append(Group("sws-reads", lines))
    return y + 10


def _room(canvas: Canvas) -> float:
    """The px a line of words has in a card: the width budget less the card's margins."""
    return canvas.card_width - 3 * PAD


def _slices(
    canvas: Canvas, tensor: Mapping[str, Any], y: float, cell_w: float, show_values: bool
) -> float:
    """The tensor's slices from ``y`` down, with a line for each run the scene left out; the y
    below.  Panels flow and wrap at the width budget, never past it: 3-D as one run of panels
    (at most ``max_panel_columns`` a row); 4-D and more in groups, one per index of the row dim
    (framed), a group beside the last when it fits, else on a new line.
    """
    logical = tensor["logical"]
    ndim = logical["ndim"]
    limit = canvas.card_width - PAD
    line = _Line(PAD, y)
    groups: list[list[tuple[int, list, float, float]]] = []
    thinned = _thinned(logical, canvas.max_panels, tensor["name"])
    drawn = {s for s, slice_ in thinned if slice_["kind"] == "slice"}
    notes = [picks_not_drawn(logical["slices"], drawn, tensor["name"]), _lost(tensor)]
    lines = [text for note in notes if note for text in _capped(note, limit - PAD, "slice")]
    for k, text in enumerate(lines):  # the picks the ladder left out or the tensor lost: said
        line.y += G["line_h"] - (6 if k == 0 else 0)
        canvas.items.append(Group("sws-pick-note", [canvas.text(PAD, line.y, text, muted=True)]))
        canvas.width = max(canvas.width, PAD + text_width(text, G["font_size"]))
    line.y += 10 if lines else 0
    for s, slice_ in thinned:
        if slice_["kind"] == "gap":
            _place_groups(canvas, groups, line, limit, ndim)
            groups = []
            line.newline()
            for k, text in enumerate(_capped(gap_note(slice_), limit - PAD)):
                line.y += (G["line_h"] - 10) if k == 0 else G["line_h"]
                canvas.items.append(
                    Group("sws-gap-note", [canvas.text(PAD, line.y, text, muted=True)])
                )
                canvas.width = max(canvas.width, PAD + text_width(text, G["font_size"]))
            line.h = 4.0  # the note's descent: the next panels start on a line below it
            line.newline()
            continue
        key = tuple(slice_["lead"][:-1]) if ndim >= 4 else None
        panel, h, w = draw_slice(canvas, tensor, slice_, s, cell_w, show_values, ndim >= 3)
        if not groups or groups[-1][0][0] != key:
            groups.append([(key, [], 0.0, 0.0)])
        groups[-1].append((s, panel, w, h))
    _place_groups(canvas, groups, line, limit, ndim)
    return line.y + line.h + 6


def _lost(tensor: Mapping[str, Any]) -> str | None:
    """The words for the slices a reader picked that are no slices of ``tensor`` now (it was
    resized in place since: ``"lost_picks"``), or None.

    >>> _lost({"name": "t", "layout": {"shape": [2, 3, 4]}, "lost_picks": [[9]]})
    'picked, not drawn (no slices of t since it was resized to (2, 3, 4)): t[9, :, :]'
    """
    lost, name = tensor.get("lost_picks"), tensor["name"]
    if not lost:
        return None
    shape = tuple(tensor["layout"]["shape"])
    rest = ", ".join([":"] * min(len(shape), 2))
    names = ", ".join(f"{name}[{', '.join(map(str, pick))}, {rest}]" for pick in lost)
    return f"picked, not drawn (no slices of {name} since it was resized to {shape}): {names}"


def _thinned(logical: Mapping[str, Any], most: int | None, name: str) -> list[tuple[int, Any]]:
    """The scene's slices (with their positions) to draw: all of them, or with ``most`` (a picture
    too tall for its height budget) the first ``most - 1`` panels, every slice a reader picked
    (``"picked"``) and the last, side by side, then what lay between them said as left-out runs
    (one for each two kept panels with slices between them), as ranges of consecutive indices.

    >>> sl = [{"kind": "slice", "lead": [i], "label": f"[{i}, :, :]"} for i in range(5)]
    >>> logical = {"shape": [5, 2, 2], "slices": sl}
    >>> [k for k, _ in _thinned(logical, 3, "x")], _thinned(logical, 3, "x")[3][1]["text"]
    ([0, 1, 4, 2], 'x[2:4, :, :] (between x[1, :, :] and x[4, :, :])')
    >>> sl[2] = {**sl[2], "picked": True}
    >>> [(k, s["kind"]) for k, s in _thinned(logical, 2, "x")]
    [(0, 'slice'), (2, 'slice'), (4, 'slice'), (1, 'gap'), (3, 'gap')]
    """
    slices = logical["slices"]
    panels = [k for k, s in enumerate(slices) if s["kind"] == "slice"]
    if most is None or len(panels) <= most:
        return list(enumerate(slices))
    first = panels[most - 2]
    kept = [
        first,
        *(k for k in panels if k > first and (slices[k].get("picked") or k == panels[-1])),
    ]
    shape = logical["shape"]
    lead = len(slices[first]["lead"])
    gaps = []
    for before, after in itertools.pairwise(kept):
        a, b = slices[before], slices[after]
        gap = gap_between(a["lead"], b["lead"], shape[:lead], name, len(shape) - lead)
        if gap["count"]:
            where = f" (between {name}{a['label']} and {name}{b['label']})"
            gaps.append((before + 1, {**gap, "text": gap["text"] + where}))
    return [*enumerate(slices[: first + 1]), *((k, slices[k]) for k in kept[1:]), *gaps]


def _wrapped(note: str, room: float) -> list[str]:
    """``note`` in lines of at most ``room`` px, broken between its listed ranges (after ``], ``)
    where it can; a continued line is indented."""
    lines: list[str] = []
    for part in re.split(r"(?<=\]), ", note):
        if lines and text_width(f"{lines[-1]}, {part}", G["font_size"]) <= room:
            lines[-1] = f"{lines[-1]}, {part}"
        elif lines:
            lines[-1] += ","
            lines.append(f"    {part}")
        else:
            lines.append(part)
    # a range longer than the room (a long name said twice in its "between" clause): at spaces,
    # a word longer than a line inside it
    return [piece for line in lines for piece in wrapped(line, room, G["font_size"])]


#: A card's note of slices left out says at most this many lines of their ranges.
_NOTE_LINES = 4


def _capped(note: str, room: float, unit: str = "range") -> list[str]:
    """``note`` in lines of at most ``room`` px (:func:`_wrapped`), at most :data:`_NOTE_LINES`
    of them where it can: past them, the ranges (each a ``unit``) left unsaid are counted (its
    "(between ...)" clause kept: where the slices left out lie).

    >>> ranges = ", ".join(f"x[{i}, 1]" for i in range(20))
    >>> for line in _capped(f"⋯ 20 slices not shown: {ranges} (between x[0, 0] and x[20, 0])", 260):
    ...     print(line)
    ⋯ 20 slices not shown: x[0, 1],
        x[1, 1], x[2, 1], x[3, 1],
        … and 16 more ranges (between
        x[0, 0] and x[20, 0])
    """
    lines = _wrapped(note, room)
    if len(lines) <= _NOTE_LINES:
        return lines
    between = note[note.index(" (between ") :] if " (between " in note else ""
    parts = re.split(r"(?<=\]), ", note[: len(note) - len(between)])
    for keep in range(len(parts) - 1, 0, -1):
        left = len(parts) - keep
        more = f"… and {left} more {unit}{'s' if left != 1 else ''}{between}"
        lines = _wrapped(", ".join([*parts[:keep], more]), room)
        if len(lines) <= _NOTE_LINES:
            break
    return lines


class _Line:
    """The running line of panels: its left x, top y and height so far."""

    def __init__(self, x: float, y: float) -> None:
        self.x, self.y, self.h = x, y, 0.0

    def newline(self) -> None:
        if self.x > PAD or self.h:
            self.x, self.y, self.h = PAD, self.y + self.h + G["panel_gap"], 0.0


def _place_groups(canvas: Canvas, groups: list, line: _Line, limit: float, ndim: int) -> None:
    """Lay the panel groups out on ``line`` (see :func:`_slices`)."""
    gap = G["panel_gap"]
    framed = ndim >= 4
    inset = 0.0  # the group's frame sits in the gap around it, as an outline: it costs no height
    for _head, *panels in groups:
        width = sum(w for _, _, w, _ in panels) + gap * (len(panels) - 1) + 2 * inset
        if line.x > PAD and line.x + width > limit:
            line.newline()
        start_x, start_y = line.x, line.y
        x, y, row_h, count = line.x + inset, line.y + inset, 0.0, 0
        right, wrapped = x, False
        for _, panel, w, h in panels:
            full = count >= LIMITS["max_panel_columns"] if ndim == 3 else False
            if count and (x + w > limit - inset or full):
                x, y, row_h, count = start_x + inset, y + row_h + gap, 0.0, 0
                wrapped = True
            canvas.items.extend(translated(panel, x, y))
            canvas.width = max(canvas.width, x + w + inset)
            right = max(right, x + w)
            x += w + gap
            row_h = max(row_h, h)
            count += 1
        bottom = y + row_h + inset
        if framed:
            c = canvas.colours
            canvas.items.insert(
                len(canvas.items) - sum(len(p) for _, p, _, _ in panels),
                Rect(start_x - 3, start_y - 3, right - start_x + 6, bottom - start_y + 6, None,
                     c["panel_stroke"], dash="4 3", rx=4),
            )  # fmt: skip
        if wrapped:  # the group wrapped: the next one starts below it
            line.x, line.y, line.h = PAD, start_y, bottom - start_y
            line.newline()
        else:
            line.x = right + inset + gap
            line.h = max(line.h, bottom - start_y)


def _finish_card(
    canvas: Canvas, saved: list, saved_width: float, bottom: float
) -> tuple[list, float, float]:
    items, width = canvas.items, canvas.width + PAD
    canvas.items, canvas.width = saved, saved_width
    c = canvas.colours
    frame = Rect(2, 0, width - 4, bottom, c["background"], c["panel_stroke"], rx=4)
    return [frame, *items], width, bottom
