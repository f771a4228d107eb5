"""One tensor's card: its title (swatch, letter, name), its facts line (:mod:`.facts`), notes on
what it reads, and its logical grid (:mod:`.grid`): one grid for 0-D to 2-D, a grid of 2-D panels
for 3-D and more (4-D: rows along dim 0, columns along dim 1), with the slices the scene left out
counted between them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .canvas import Canvas
from .facts import NOTATION, layout_summary
from .grid import draw_slice, logical_cell_width
from .labels import group_digits
from .primitives import LIMITS, MAX_WIDTH, PAD, G, Group, Rect, translated

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
    cell_w, show_values = logical_cell_width(canvas, tensor, storage, slices)
    ndim = logical["ndim"]
    if ndim >= 3:
        y += G["line_h"]
        inner = f"each panel: rows = dim {ndim - 2}, columns = dim {ndim - 1}"
        outer = (
            "panels: rows = dim 0, columns = dim 1"
            if ndim == 4
            else f"panels along dims {', '.join(map(str, range(ndim - 2)))}"
        )
        canvas.items.append(canvas.text(PAD, y, f"{outer}; {inner}", muted=True))
    y += 6 if ndim >= 3 else 2
    bottom = _slices(canvas, tensor, y, cell_w, show_values)
    return _finish_card(canvas, saved, saved_width, bottom)


def _head(canvas: Canvas, tensor: Mapping[str, Any]) -> float:
    """The card's title, facts line and read notes; the y below them."""
    order = tensor["order"]
    y = 16.0
    canvas.items.append(Rect(PAD, y - 12, 14, 14, ("pattern", order), "#000000", rx=3))
    canvas.items.append(
        canvas.text(
            PAD + 20,
            y,
            f"{tensor['mark']}  {tensor['name']}",
            size=G["font_size_title"],
            bold=True,
        )
    )
    y += G["line_h"]
    layout = tensor["layout"]
    canvas.items.append(
        Group(
            "sws-facts",
            [canvas.text(PAD, y, layout_summary(layout), muted=True)],
            title=f"{layout['text']} — {NOTATION}",
        )
    )
    for note in (tensor.get("reads") or {}).get("notes", ()):
        y += G["line_h"]
        canvas.items.append(Group("sws-reads", [canvas.text(PAD, y, note, muted=True)]))
    return y + 10


def _slices(
    canvas: Canvas, tensor: Mapping[str, Any], y: float, cell_w: float, show_values: bool
) -> float:
    """The tensor's slices from ``y`` down, side by side while they fit (a new row of panels per
    4-D row, or when a 3-D row is full), with a line for each run the scene left out; the y below.
    """
    logical = tensor["logical"]
    ndim = logical["ndim"]
    x, row_h, panel_row_key = PAD, 0.0, None
    for s, slice_ in enumerate(logical["slices"]):
        if slice_["kind"] == "gap":
            y += row_h + G["line_h"]
            where = "" if slice_["dim"] is None else f" along dim {slice_['dim']}"
            canvas.items.append(
                canvas.text(
                    PAD,
                    y,
                    f"⋯ {group_digits(slice_['count'])} slices{where} not shown",
                    muted=True,
                )
            )
            x, row_h, panel_row_key = PAD, 10.0, None
            continue
        key = tuple(slice_["lead"][:-1]) if ndim >= 4 else None
        panel, h, w = draw_slice(canvas, tensor, slice_, s, cell_w, show_values, ndim >= 3)
        columns_full = (
            ndim == 3
            and x > PAD
            and (x + w > MAX_WIDTH - PAD or (x - PAD) // max(w, 1) >= LIMITS["max_panel_columns"])
        )
        if x > PAD and (key != panel_row_key or columns_full):
            x, y, row_h = PAD, y + row_h + G["panel_gap"], 0.0
        panel_row_key = key
        canvas.items.extend(translated(panel, x, y))
        canvas.width = max(canvas.width, x + w)
        x += w + G["panel_gap"]
        row_h = max(row_h, h)
    return y + row_h + 6


def _finish_card(
    canvas: Canvas, saved: list, saved_width: float, bottom: float
) -> tuple[list, float, float]:
    items, width = canvas.items, canvas.width + PAD
    canvas.items, canvas.width = saved, saved_width
    c = canvas.colours
    frame = Rect(2, 0, width - 4, bottom, c["background"], c["panel_stroke"], rx=4)
    return [frame, *items], width, bottom
