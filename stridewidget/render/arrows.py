"""The stride arrows over the storage strip: one arc per dim (equal strides merged, stride 0 a
loop) in its own lane above a row, or a path through a lane left of the strip when the arrow joins
two rows of a wrapped strip; each with a boxed label, pushed apart where labels share a column.

Which arrows there are and their lanes come from the scene (``tensor["arrows"]``); :mod:`.strip`
reserves the lanes and calls these with the cells' positions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .canvas import Canvas
from .labels import tensor_colour
from .primitives import G, Group, Path, Rect, text_width

__all__ = ["arc", "cross_arrow", "place_side_labels", "strip_arrows"]


def strip_arrows(members: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Every member's arrows (the scene merges dims of equal stride into one, ``d0,d1 +1``),
    labelled with the tensor's letter when several tensors share the storage."""
    prefix = len(members) > 1
    return [
        {
            **arrow,
            "tensor": tensor,
            "label": f"{tensor['mark']} {arrow['label']}" if prefix else arrow["label"],
        }
        for tensor in members
        for arrow in tensor["arrows"]
    ]


def _arrow_group(arrow: Mapping[str, Any], path: Path) -> Group:
    return Group(
        "sws-arrow",
        [path],
        {"tensor": arrow["tensor"]["id"], "dim": ",".join(map(str, arrow["dims"]))},
        f"{arrow['tensor']['name']}: {arrow['label']} — one step along "
        + ", ".join(f"dim {d}" for d in arrow["dims"])
        + f" moves {arrow['stride']} storage cells",
    )


def _label(canvas: Canvas, arrow, x: float, y: float, anchor: str) -> Group:
    size = G["font_size"]
    w = text_width(arrow["label"], size) + 6
    box_x = x - 3 if anchor == "start" else x - w + 3 if anchor == "end" else x - w / 2
    return Group(
        "sws-arrow-label",
        [
            Rect(
                box_x,
                y - 11,
                w,
                14,
                canvas.colours["label_bg"],
                tensor_colour(arrow["tensor"]["order"]),
                1.0,
                rx=3,
            ),
            canvas.text(x, y, arrow["label"], size=size, anchor=anchor),
        ],
    )


def arc(
    canvas: Canvas, arrow, positions, row_top: float, lane: int, cell_w: float
) -> tuple[Group, Group]:
    """An arrow within one row: an arc in lane ``lane`` over the row at ``row_top`` (a loop over
    the cell for stride 0), and its label at the apex."""
    order = arrow["tensor"]["order"]
    colour, dash = tensor_colour(order), (None if order % 2 == 0 else "6 3")
    (x1, _), (x2, _) = positions[arrow["from"]], positions[arrow["to"]]
    apex = row_top - G["arrow_lane"] * (lane + 1) - 4
    control = row_top + (apex - row_top) / 0.75  # a cubic's apex is 3/4 of its control height
    if arrow["from"] == arrow["to"]:  # stride 0: a loop over the cell
        cx = x1 + cell_w / 2
        half = G["loop_w"] / 2
        commands = [
            ("M", cx - 5, row_top),
            ("C", cx - half, control, cx + half, control, cx + 5, row_top),
        ]
        label_x, anchor = cx + half / 2 + 6, "start"
    else:
        a, b = x1 + cell_w / 2, x2 + cell_w / 2
        commands = [("M", a, row_top), ("C", a, control, b, control, b, row_top)]
        label_x, anchor = (a + b) / 2, "middle"
    path = Path(commands, colour, dash=dash)
    return _arrow_group(arrow, path), _label(canvas, arrow, label_x, apex + 4, anchor)


def cross_arrow(
    canvas: Canvas, arrow, positions, row_tops, row_of, bands, lane_x: float, k: int
) -> tuple[Group, Group]:
    """An arrow between two rows (the ``k``-th such): through the lane at ``lane_x`` left of the
    strip, and its label left of that lane; ``bands`` is each row's height of arc lanes."""
    order = arrow["tensor"]["order"]
    colour, dash = tensor_colour(order), (None if order % 2 == 0 else "6 3")
    (x1, y1), (x2, y2) = positions[arrow["from"]], positions[arrow["to"]]
    # up into the channel over the start row, out to a lane left of the strip, along it to the
    # channel over the end row, and in to the end cell: never across a cell or a text
    c1 = row_tops[row_of[arrow["from"]]] - bands.get(row_of[arrow["from"]], 0.0) - 3
    c2 = row_tops[row_of[arrow["to"]]] - bands.get(row_of[arrow["to"]], 0.0) - 3
    sx, ex = x1 + 4 + 2 * k, x2 + 4 + 2 * k
    commands = [
        ("M", sx, y1),
        ("L", sx, c1),
        ("L", lane_x, c1),
        ("L", lane_x, c2),
        ("L", ex, c2),
        ("L", ex, y2),
    ]
    path = Path(commands, colour, dash=dash)
    return _arrow_group(arrow, path), _label(canvas, arrow, lane_x - 5, (c1 + c2) / 2 + 4, "end")


def place_side_labels(labels: list[Group]) -> None:
    """Push labels that share a column apart vertically (one line each)."""
    placed: list[Rect] = []
    for label in labels:
        box, text = label.children
        for other in sorted(placed, key=lambda r: r.y):
            if (
                box.x < other.x + other.w
                and other.x < box.x + box.w
                and box.y < other.y + other.h + 1
                and other.y < box.y + box.h + 1
            ):
                shift = other.y + other.h + 2 - box.y
                box.y += shift
                text.y += shift
        placed.append(box)
