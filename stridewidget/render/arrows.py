"""The stride arrows over the storage strip: one per dim (equal strides merged, stride 0 a loop),
each in a lane of its own, so that no two run on top of each other and none runs through a text.

* An arrow within one row (:func:`row_arrows`) rises from its start cell to its own lane over the
  row, runs along it and drops into its end cell; its label sits just above its line, where no
  higher arrow's leg passes.  Every arrow that starts or ends in a cell leaves it by a leg of its
  own, spread across the cell's width and nested (outer legs for higher lanes), so lines cross as
  little as they can and never share a stretch.
* An arrow between two rows of a wrapped strip (:func:`cross_arrow`) rises to a channel of its
  own over its start row, runs out to a lane of its own left of the strip, along it to its channel
  over the end row and in to the end cell; the labels stand in a column left of every lane.

Which arrows there are comes from the scene (``tensor["arrows"]``); :mod:`.strip` reserves the
room (:func:`lane_band`, :func:`channel_room`) and calls these with the cells' positions.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from .canvas import Canvas
from .labels import tensor_colour
from .primitives import G, Group, Path, Rect, text_width

__all__ = [
    "CHANNEL",
    "HEAD",
    "cell_width_for_legs",
    "channel_room",
    "channel_slots",
    "cross_arrow",
    "fewest_arrows",
    "label_width",
    "lane_band",
    "lane_leader",
    "lead_to_lanes",
    "place_side_labels",
    "row_arrows",
    "strip_arrows",
]

LANE = 16  # px between two lanes over a row: a label (13 px) above its line, clear of the next
BASE = 8  # px from a row's top to its lowest lane
CHANNEL = 4  # px between two cross-row arrows' channels over a row
#: px at least between two legs that leave one cell (closer, two lines read as one: the lint's
#: "on top of each other" is under 2 px)
LEG_GAP = 3.0
#: px an arrow drops from its channel to the row (with the 8 px under the row above, its ~11 px
#: head stays clear of the storage indices printed there)
HEAD = 5
LABEL_H = 13
_CORNER = 4.0  # radius of an arrow's bends
_CLEAR = 3.0  # px a label keeps from a leg it must not cover


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


def fewest_arrows(
    arrows: list[dict[str, Any]], most: int | None
) -> tuple[list[dict[str, Any]], list[str]]:
    """``arrows`` (:func:`strip_arrows`) with at most ``most`` per tensor (None: all), those of
    its smallest byte strides (their ends lie nearest its first cell: a picture over its height
    budget keeps a strip row for each arrow's end); and one sentence per tensor naming the dims
    whose arrows are left out (every stride is on the tensor's card).

    >>> arrows = [{"tensor": {"id": "t0", "name": "x"}, "dims": [d], "byte_stride": 4 * 10 ** (2 - d)}
    ...           for d in range(3)]
    >>> kept, words = fewest_arrows(arrows, 2)
    >>> [a["dims"] for a in kept], words
    ([[1], [2]], ["x: the stride arrow of d0 is not drawn (the picture's height budget); every stride is on its card"])
    """
    if most is None:
        return arrows, []
    by_tensor: dict[str, list[int]] = {}
    for k, arrow in enumerate(arrows):
        by_tensor.setdefault(arrow["tensor"]["id"], []).append(k)
    left_out: set[int] = set()
    words = []
    for ks in by_tensor.values():
        if len(ks) <= most:
            continue
        nearest = sorted(ks, key=lambda k: abs(arrows[k]["byte_stride"]))  # stable: dim order
        dropped = sorted(nearest[most:])
        left_out.update(dropped)
        dims = ", ".join(",".join(f"d{d}" for d in arrows[k]["dims"]) for k in dropped)
        what = "arrow of" if len(dropped) == 1 else "arrows of"
        verb = "is" if len(dropped) == 1 else "are"
        name = arrows[ks[0]]["tensor"]["name"]
        words.append(
            f"{name}: the stride {what} {dims} {verb} not drawn (the picture's height budget); "
            "every stride is on its card"
        )
    return [a for k, a in enumerate(arrows) if k not in left_out], words


def lane_band(arcs: int) -> float:
    """The height over a row that ``arcs`` lanes take, their labels included."""
    return BASE + LANE * arcs - 2 if arcs else 0.0


def channel_room(channels: int, head: bool = False) -> float:
    """The height over a row that ``channels`` cross-row channels add to the 6 px gap, and with
    ``head`` (an arrow ends in the row and no arc lanes lie over it) the arrowhead's drop below
    the lowest channel.

    >>> channel_room(0), channel_room(1), channel_room(3), channel_room(1, head=True)
    (0.0, 0.0, 8.0, 5.0)
    """
    if channels <= 0:
        return 0.0
    return float(CHANNEL * (channels - 1) + (HEAD if head else 0))


def channel_slots(
    cross: Sequence[Mapping[str, Any]], row_of: Mapping[int, int]
) -> tuple[dict[tuple[int, str], int], dict[int, int]]:
    """Each cross-row arrow end's channel over its row (``(k, "from"/"to")`` → 0, 1, …: one of
    its own) and how many channels each row has."""
    slots: dict[tuple[int, str], int] = {}
    count: dict[int, int] = {}
    for k, arrow in enumerate(cross):
        for end in ("from", "to"):
            r = row_of[arrow[end]]
            slots[(k, end)] = count.get(r, 0)
            count[r] = count.get(r, 0) + 1
    return slots, count


def label_width(label: str) -> float:
    """The width of an arrow label's box."""
    return text_width(label, G["font_size"]) + 6


def _arrow_group(arrow: Mapping[str, Any], path: Path) -> Group:
    return Group(
        "sws-arrow",
        [path],
        {"tensor": arrow["tensor"]["id"], "dim": ",".join(map(str, arrow["dims"]))},
        f"{arrow['tensor']['name']}: {arrow['label']} — one step along "
        + ", ".join(f"dim {d}" for d in arrow["dims"])
        + f" moves {arrow['stride']} storage cell{'' if arrow['stride'] in (1, -1) else 's'}",
    )


def _label(canvas: Canvas, arrow, x: float, y: float, anchor: str) -> Group:
    size = G["font_size"]
    w = label_width(arrow["label"])
    box_x = x - 3 if anchor == "start" else x - w + 3 if anchor == "end" else x - w / 2
    return Group(
        "sws-arrow-label",
        [
            Rect(
                box_x,
                y - 10,
                w,
                LABEL_H,
                canvas.colours["label_bg"],
                tensor_colour(arrow["tensor"]["order"]),
                1.0,
                rx=3,
            ),
            canvas.text(x, y, arrow["label"], size=size, anchor=anchor),
        ],
        {"tensor": arrow["tensor"]["id"], "dim": ",".join(map(str, arrow["dims"]))},
    )


def _style(arrow) -> tuple[str, str | None]:
    order = arrow["tensor"]["order"]
    return tensor_colour(order), (None if order % 2 == 0 else "6 3")


def cell_width_for_legs(cell_w: float, arrows: Sequence[Mapping[str, Any]]) -> float:
    """``cell_w``, or wider where more arrows start or end in one cell than its width spreads
    ``LEG_GAP`` apart (:func:`_legs`: its legs use the cell's width less 11 px).

    >>> ends = [{"from": 0, "to": k} for k in range(1, 16)]  # 15 arrows leave cell 0
    >>> cell_width_for_legs(36.0, ends[:4]), cell_width_for_legs(36.0, ends)
    (36.0, 53.0)
    """
    legs = Counter(cell for a in arrows for cell in (a["from"], a["to"]))
    most = max(legs.values(), default=0)
    return max(cell_w, 11 + (most - 1) * LEG_GAP) if most > 1 else cell_w


def _legs(arcs, cross_ends, positions, cell_w) -> tuple[dict, dict]:
    """Each arc's two legs' x (``(i, "from")``, ``(i, "to")``) and each cross-row arrow's leg x in
    this row (by its key), spread over their cells and nested: in a cell, loops' left legs, then
    legs whose line runs left (low lanes first), legs whose line runs right (high lanes first),
    loops' right legs (low lanes first)."""
    at: dict[int, list] = {}
    for i, arrow in enumerate(arcs):  # i is the lane: arcs come low lane first
        f, t = arrow["from"], arrow["to"]
        if f == t:
            at.setdefault(f, []).extend([((0, -i), ("a", i, "from")), ((3, i), ("a", i, "to"))])
            continue
        rightward = positions[t][0] > positions[f][0]
        left_end, right_end = ("from", "to") if rightward else ("to", "from")
        at.setdefault(arrow[left_end], []).append(((2, -i), ("a", i, left_end)))
        at.setdefault(arrow[right_end], []).append(((1, i), ("a", i, right_end)))
    for n, (key, cell) in enumerate(
        cross_ends
    ):  # above every lane: rightmost of those running left
        at.setdefault(cell, []).append(((1, 10**6 + n), ("c", key, None)))
    arc_x: dict = {}
    cross_x: dict = {}
    for cell, legs in at.items():
        legs.sort(key=lambda leg: leg[0])
        m = len(legs)
        step = min(10.0, (cell_w - 11) / (m - 1)) if m > 1 else 0.0
        centre = positions[cell][0] + (cell_w - 3) / 2
        for k, (_, (kind, i, end)) in enumerate(legs):
            x = centre + (k - (m - 1) / 2) * step
            if kind == "a":
                arc_x[(i, end)] = x
            else:
                cross_x[i] = x
    return arc_x, cross_x


def _bracket(x1: float, x2: float, top: float, y: float) -> list[tuple]:
    """Up from (x1, top) to the line at ``y``, along it and down to (x2, top), bends rounded."""
    r = min(_CORNER, abs(x2 - x1) / 2, (top - y) / 2)
    d = 1.0 if x2 > x1 else -1.0
    return [
        ("M", x1, top),
        ("L", x1, y + r),
        ("C", x1, y, x1, y, x1 + d * r, y),
        ("L", x2 - d * r, y),
        ("C", x2, y, x2, y, x2, y + r),
        ("L", x2, top),
    ]


def _free_centre(want: float, w: float, blocked: list[float], lo: float, hi: float) -> float:
    """The centre nearest ``want`` of a ``w`` px label within [lo, hi] that covers no x of
    ``blocked`` (else the one that covers fewest)."""
    half = w / 2 + _CLEAR
    candidates = [want, lo + w / 2, hi - w / 2]
    for x in blocked:
        candidates += [x - half, x + half]
    candidates = [c for c in candidates if lo + w / 2 - 1e-6 <= c <= hi - w / 2 + 1e-6] or [want]

    def cost(c: float) -> tuple[int, float]:
        return sum(1 for x in blocked if abs(x - c) < half - 1e-6), abs(c - want)

    return min(candidates, key=cost)


def row_arrows(
    canvas: Canvas,
    arcs: list[Mapping[str, Any]],
    cross_ends: list[tuple[Any, int]],
    positions,
    row_top: float,
    cell_w: float,
    bounds: tuple[float, float],
) -> tuple[list[Group], list[Group], dict]:
    """The arrows within the row at ``row_top``: ``arcs`` low lane first (lane ``i`` is the
    ``i``-th), each with its label above its line; and where ``cross_ends`` (``(key, cell)`` of
    the cross-row arrows that start or end in this row) leave their cells.  Returns the arrows,
    their labels and each cross-row arrow's leg x by key.  Labels stay within ``bounds``."""
    arc_x, cross_x = _legs(arcs, cross_ends, positions, cell_w)
    paths: list[Group] = []
    labels: list[Group] = []
    for i, arrow in enumerate(arcs):
        colour, dash = _style(arrow)
        y = row_top - BASE - LANE * i
        x1, x2 = arc_x[(i, "from")], arc_x[(i, "to")]
        paths.append(_arrow_group(arrow, Path(_bracket(x1, x2, row_top, y), colour, dash=dash)))
        # a higher arrow's legs and every cross-row leg of this row pass through this label's band
        blocked = [x for (j, _), x in arc_x.items() if j > i] + list(cross_x.values())
        w = label_width(arrow["label"])
        x = _free_centre((x1 + x2) / 2, w, blocked, *bounds)
        leader = _leader(min(x1, x2), max(x1, x2), x - w / 2, x + w / 2, y, colour)
        if leader is not None:  # the label sits away from its line: its line leads to it
            paths[-1].children.append(leader)
        labels.append(_label(canvas, arrow, x, y - 4, "middle"))
    return paths, labels, cross_x


def _leader(lo: float, hi: float, left: float, right: float, y: float, colour: str) -> Path | None:
    """A dotted line from an arc's line (at ``y``, from ``lo`` to ``hi``) to its label's box
    (``left``..``right``, its middle 7.5 px over the line) where the box is clear of the line
    (other arrows' legs left no room beside it); None where the label sits over its line.  It
    rises from the line's nearer end to the box's middle, over the arrowheads of the lowest lane.

    >>> _leader(10, 40, 20, 70, 50.0, "#000") is None
    True
    >>> _leader(10, 40, 90, 140, 50.0, "#000").commands
    [('M', 40, 50.0), ('L', 40, 42.5), ('L', 90, 42.5)]
    """
    if right < lo - _CLEAR:
        start, end = lo, right
    elif left > hi + _CLEAR:
        start, end = hi, left
    else:
        return None
    middle = y - 14 + LABEL_H / 2  # the box's (as :func:`_label` sets it at y - 4)
    commands = [("M", start, y), ("L", start, middle), ("L", end, middle)]
    return Path(commands, colour, width=1.0, dash="1 2", arrow=False)


def cross_arrow(
    canvas: Canvas,
    arrow,
    ends: tuple[tuple[float, float], tuple[float, float]],
    channels: tuple[float, float],
    lane_x: float,
    label_x: float,
) -> tuple[Group, Group]:
    """An arrow between two rows: up from its start leg ``ends[0]`` (x, cell top) to its channel
    ``channels[0]``, out to its lane at ``lane_x`` left of the strip, along it to its channel over
    the end row and in to its end leg; its label right-aligned at ``label_x``, left of every lane.
    """
    colour, dash = _style(arrow)
    (sx, y1), (ex, y2) = ends
    c1, c2 = channels
    commands = [
        ("M", sx, y1),
        ("L", sx, c1),
        ("L", lane_x, c1),
        ("L", lane_x, c2),
        ("L", ex, c2),
        ("L", ex, y2),
    ]
    path = Path(commands, colour, dash=dash)
    return _arrow_group(arrow, path), _label(canvas, arrow, label_x, (c1 + c2) / 2 + 4, "end")


def lane_leader(
    label: Group,
    lane_x: float,
    channels: tuple[float, float],
    colour: str,
    others: Sequence[float] = (),
) -> Path:
    """A dotted line from a cross-row arrow's label (left of every lane) to its own lane at
    ``lane_x`` (between its ``channels``): other lanes may run between the two.  It leaves the
    label at a height clear of the ``others`` arrows' channels (it would run on one).

    >>> from stridewidget.render.primitives import Text
    >>> label = Group("sws-arrow-label", [Rect(10, 40, 50, 13, "#fff"), Text(57, 50, "d0 +4", 11, "#000")])
    >>> lane_leader(label, 90, (30.0, 80.0), "#000").commands
    [('M', 60, 46.5), ('L', 90, 46.5)]
    >>> lane_leader(label, 90, (30.0, 80.0), "#000", [46.0]).commands
    [('M', 60, 49.0), ('L', 90, 49.0)]
    """
    box = label.children[0]
    middle = box.y + box.h / 2
    # every half px of the box's height, nearest its middle first
    heights = [middle + d / 2 for k in range(int(box.h) - 1) for d in ((k, -k) if k else (0,))]
    # the first height clear of every other channel, else the one farthest from them
    y = next(
        (h for h in heights if all(abs(h - o) >= _CLEAR for o in others)),
        max(heights, key=lambda h: min((abs(h - o) for o in others), default=0.0)),
    )
    end = min(max(y, min(channels)), max(channels))
    return Path([("M", box.x + box.w, y), ("L", lane_x, end)], colour, 1.0, "1 2", arrow=False)


def lead_to_lanes(lanes: Sequence[tuple[Group, Group, float, tuple[float, float]]]) -> None:
    """Each cross-row arrow (its group, label, lane's x, channels) gets a :func:`lane_leader`
    from its label to its lane, clear of the other arrows' channels."""
    for k, (path, label, lane_x, channels) in enumerate(lanes):
        others = [c for j, lane in enumerate(lanes) if j != k for c in lane[3]]
        path.children.append(lane_leader(label, lane_x, channels, path.children[0].stroke, others))


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
