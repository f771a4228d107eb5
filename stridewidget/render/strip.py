"""The storage strip: one storage drawn as memory, with its stride arrows over it.

A header line (id, dtype, size, bytes, device), a legend (each tensor's swatch and letter, what the
cells show), then the cells: one row of up to ``max_strip_cells`` cells, each with its storage
index under it; when it must wrap, rows of the storage's own natural width with a ``+0 … +n``
column header and full row labels.  Long runs the scene collapsed are drawn as gap markers.  Each
cell shows its value (or a viridis colour when values are too wide) and a strip of its readers'
letters (``A``, ``B×2``); untouched cells are dashed.  The stride arrows (:mod:`.arrows`) get lanes
above each row, or a lane left of the strip when they join two rows.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..style import STYLE
from .arrows import (
    CHANNEL,
    HEAD,
    cell_width_for_legs,
    channel_room,
    channel_slots,
    cross_arrow,
    fewest_arrows,
    label_width,
    lane_band,
    lead_to_lanes,
    place_side_labels,
    row_arrows,
    strip_arrows,
)
from .canvas import Canvas
from .labels import (
    colour_of,
    compact_marks,
    gap_words,
    group_digits,
    reader_mark,
    same_memory_note,
    special_text,
    storage_words,
    viridis,
)
from .primitives import PAD, G, Group, Rect, Text, fitted, text_width, wrapped
from .strip_rows import rows_of_cells, strip_rows

__all__ = ["draw_strip", "no_values_reason"]


def no_values_reason(storage: Mapping[str, Any]) -> str:
    """Why a storage strip shows no values, as exactly as the scene tells.

    >>> no_values_reason({"itemsize": 8, "unit": 4})
    'no values: its 8 B elements straddle the 4 B cells (a byte-misaligned or record-field view)'
    >>> no_values_reason({"itemsize": 1, "unit": 1, "dtype": "uint4", "device": "cpu"})
    'no values: torch reads no number from one uint4 element (a packed or raw-bits dtype)'
    """
    itemsize, unit = storage.get("itemsize"), storage.get("unit")
    if unit is not None and itemsize is not None and unit != itemsize:
        return (
            f"no values: its {itemsize} B elements straddle the {unit} B cells "
            "(a byte-misaligned or record-field view)"
        )
    dtype = str(storage.get("dtype", ""))
    if not str(storage.get("device", "")).startswith("meta") and _PACKED.fullmatch(dtype):
        return f"no values: torch reads no number from one {dtype} element (a packed or raw-bits dtype)"
    return "no values (meta tensor or layout only)"


#: torch's dtypes whose elements torch itself turns into no Python number (``.item()`` and
#: ``.tolist()`` refuse them): sub-byte integers, raw bits, packed 4-bit floats.
_PACKED = re.compile(r"u?int[1-7]|bits\w*|float4\w*")


def draw_strip(
    canvas: Canvas,
    storage: Mapping[str, Any],
    members: list[Mapping[str, Any]],
    top: float,
    arrowed: list[Mapping[str, Any]] | None = None,
) -> float:
    """Draw ``storage`` (read by ``members``, the scene's tensors over it) from ``top`` down onto
    ``canvas``; the y just below it.  Titled ``storage s0`` (its id) unless it has a ``label``.
    Only the tensors of ``arrowed`` (default: every member) get stride arrows: the others are
    listed in words under the cards, their reads marked and counted all the same."""
    words = storage_words(
        storage["size"], storage["itemsize"], storage["unit"], storage["dtype"], storage["nbytes"]
    )
    header = f"{storage.get('label') or 'storage ' + storage['id']} · {words} · {storage['device']}"
    y = top + G["font_size_title"] + 2
    storage = canvas.lookup.storages.get(storage["id"], storage)  # its values as shown
    for k, line in enumerate(wrapped(header, canvas.max_width - 2 * PAD, G["font_size_title"])):
        y += G["line_h"] if k else 0
        canvas.items.append(canvas.text(PAD, y, line, size=G["font_size_title"], bold=True))
    y += G["line_h"]
    if storage.get("same_memory"):  # a float32 tensor and its .view(torch.int32): one memory
        note = same_memory_note(storage["same_memory"])
        for line in wrapped(note, canvas.max_width - 2 * PAD, G["font_size"]):
            canvas.items.append(canvas.text(PAD, y - 2, line, muted=True))
            y += G["line_h"]
    # the tensors listed in words: their reads marked in their plain colour
    listed = set() if arrowed is None else {t["id"] for t in members} - {t["id"] for t in arrowed}
    canvas.unpatterned = listed
    plan = _kept_plan(canvas, storage, members, arrowed)
    for line in (
        ln
        for words in plan.left_out
        for ln in wrapped(words, canvas.max_width - 2 * PAD, G["font_size"])
    ):
        canvas.items.append(canvas.text(PAD, y - 2, line, muted=True))
        y += G["line_h"]
    y = _legend(canvas, storage, members, plan.wrap, y)
    if canvas.measure:  # a trial's height (picture.draw): the rows' alone, no cell, no arrow
        y = _rows_bottom(plan, y)
    else:
        y = _rows_and_arrows(canvas, storage, members, plan, y)
    if storage["cells"]["text"] is not None and not plan.show_text and storage.get("value_range"):
        lo, hi = storage["value_range"]
        note = f"values too wide for their cells: colour = {colour_of(storage['dtype'])} (viridis, dark {lo:.4g} … light {hi:.4g}); each value: hover in the live widget"
        y -= 4
        for line in wrapped(note, canvas.max_width - plan.left - PAD, G["font_size"]):
            y += G["line_h"]
            canvas.items.append(canvas.text(plan.left, y, line, muted=True))
    return y + 2


def _rows_and_arrows(
    canvas: Canvas,
    storage: Mapping[str, Any],
    members: list[Mapping[str, Any]],
    plan: _Plan,
    y: float,
) -> float:
    """The strip's rows (:func:`_draw_rows`) and its arrows over them; the y below the rows."""
    legs: dict = {}
    lanes: list[tuple] = []
    y, positions, row_tops, arc_items, label_items = _draw_rows(
        canvas, storage, members, plan, y, legs
    )
    for k, arrow in enumerate(plan.cross):  # each in a lane and channels of its own
        lane_x = PAD + plan.cross_label_w + 8 + 8 * k
        ends = tuple((legs[(k, end)], positions[arrow[end]][1]) for end in ("from", "to"))
        channels = tuple(  # over the row's arc lanes, 3 px (and an arrowhead's drop) up
            row_tops[r] - plan.lanes.get(r, 0.0) - 3 - HEAD * (r in plan.heads)
            - CHANNEL * plan.channels[(k, end)]
            for r, end in ((plan.row_of[arrow[e]], e) for e in ("from", "to"))
        )  # fmt: skip
        path, label = cross_arrow(
            canvas, arrow, ends, channels, lane_x, PAD + plan.cross_label_w - 3
        )
        arc_items.append(path)
        label_items.append(label)
        lanes.append((path, label, lane_x, channels))
    place_side_labels(label_items)
    lead_to_lanes(lanes)  # once the labels are pushed apart
    canvas.items.extend(arc_items)
    canvas.items.extend(label_items)
    return y


def _rows_bottom(plan: _Plan, y: float) -> float:
    """The y below the strip's rows from ``y``: :func:`_draw_rows`'s, nothing drawn."""
    if plan.wrap is not None:
        y += G["header_h"]
    below = G["cell_h"] + (2 if plan.wrap is not None else G["index_h"] + 2)
    for r in range(len(plan.rows)):  # the same sums in the same order: the same float
        y += 6 + plan.bands.get(r, 0.0)
        y += below
    return y


def _kept_plan(
    canvas: Canvas,
    storage: Mapping[str, Any],
    members: list[Mapping[str, Any]],
    arrowed: list[Mapping[str, Any]] | None,
) -> _Plan:
    """The strip's :func:`_plan`, made once per lookup (one picture's layouts with the same
    shown cells: the height ladder's trials and the picture it chose; the plan is only read)."""
    key = (
        id(storage),
        tuple(map(id, members)),
        None if arrowed is None else tuple(map(id, arrowed)),
        canvas.max_width,
        canvas.inline_gaps,
        canvas.max_strip_rows,
        canvas.max_arrows,
    )
    kept = canvas.lookup.kept.get(key)
    if kept is None:  # the objects the key names by id are kept with it: no id is reused
        plan = _plan(
            storage,
            members,
            canvas.max_width,
            canvas.inline_gaps,
            arrowed,
            canvas.max_strip_rows,
            canvas.max_arrows,
        )
        kept = canvas.lookup.kept[key] = (storage, list(members), arrowed and list(arrowed), plan)
    return kept[-1]


@dataclass
class _Plan:
    """Where a strip's cells go: their width, rows and wrap, the left edge of the cells, and its
    arrows (``cross``: those that join two rows; ``same_row``: the arcs of each row)."""

    cell_w: float
    show_text: bool
    rows: list[list[dict[str, Any]]]
    wrap: int | None
    left: float
    row_of: dict[int, int]
    cross: list[dict[str, Any]]
    cross_label_w: float
    same_row: dict[int, list[dict[str, Any]]]
    bands: dict[int, float]  # each row's height over its 6 px gap: channels, then arc lanes
    lanes: dict[int, float]  # each row's height of arc lanes
    channels: dict[tuple[int, str], int]  # (cross arrow, "from"/"to"): its channel over the row
    heads: set[int]  # rows an arrowhead drops into below its channel (no arc lanes over them)
    left_out: list[str]  # per tensor whose outer dims' arrows are not drawn: which (fewest_arrows)


#: How many times a strip is wrapped again for the lanes and row labels left of it (each pass
#: can only widen that gutter; more arrows than passes would still find room).
_GUTTER_PASSES = 4


def _plan(
    storage: Mapping[str, Any],
    members: list[Mapping[str, Any]],
    max_width: float,
    inline: bool,
    arrowed: list[Mapping[str, Any]] | None = None,
    most_rows: int | None = None,
    most_arrows: int | None = None,
) -> _Plan:
    arrows, left_out = fewest_arrows(
        strip_arrows(members if arrowed is None else arrowed), most_arrows
    )
    # wide enough for its values and marks, and for the legs of the arrows leaving one cell
    cell_w = cell_width_for_legs(_storage_cell_width(storage, members), arrows)
    texts = storage["cells"]["text"]
    # every text fits when the longest does (a width grows with the length alone)
    show_text = texts is not None and (
        not texts or text_width(max(texts, key=len), G["font_size"]) <= cell_w - 6
    )
    # which arrows change rows (their lanes and labels sit left of the strip), and the row
    # labels: the strip wrapped again in the room they leave, until they fit in it (a narrower
    # strip has more rows: more arrows may change rows, and its row labels may be wider)
    ends = {cell for a in arrows for cell in (a["from"], a["to"])}
    rows, wrap = strip_rows(storage, members, cell_w, max_width - 2 * PAD, ends, inline, most_rows)
    left, cross_label_w = PAD, 0.0
    for _ in range(_GUTTER_PASSES):
        row_of = rows_of_cells(rows)
        cross = [
            a for a in arrows
            if a["from"] in row_of and a["to"] in row_of and row_of[a["from"]] != row_of[a["to"]]
        ]  # fmt: skip
        labels = [_row_label(row) for row in rows] if wrap else []
        label_w = max((text_width(t, G["font_size"]) + 10 for t in labels), default=0)
        wanted_w = max((label_width(a["label"]) for a in cross), default=0)
        gutter = max(cross_label_w, wanted_w) + 8 + 8 * len(cross) if cross else 0
        wanted = PAD + gutter + label_w
        if wanted <= left and wanted_w <= cross_label_w:
            break
        left, cross_label_w = max(left, wanted), max(cross_label_w, wanted_w)
        rows, wrap = strip_rows(
            storage, members, cell_w, max_width - PAD - left, ends, inline, most_rows
        )
    row_of = rows_of_cells(rows)
    shown = [a for a in arrows if a["from"] in row_of and a["to"] in row_of]
    cross = [a for a in shown if row_of[a["from"]] != row_of[a["to"]]]
    same_row: dict[int, list[dict[str, Any]]] = {}
    for arrow in shown:
        if row_of[arrow["from"]] == row_of[arrow["to"]]:
            same_row.setdefault(row_of[arrow["from"]], []).append(arrow)
    lanes = {r: lane_band(len(arcs)) for r, arcs in same_row.items()}
    channels, count = channel_slots(cross, row_of)
    # a row an arrow ends in, with no arc lanes over it, drops the arrowhead below its channels
    heads = {row_of[a["to"]] for a in cross} - set(lanes)
    bands = {
        r: lanes.get(r, 0.0) + channel_room(count.get(r, 0), r in heads) for r in range(len(rows))
    }
    return _Plan(
        cell_w, show_text, rows, wrap, left, row_of, cross, cross_label_w, same_row, bands,
        lanes, channels, heads, left_out,
    )  # fmt: skip


#: Readers a strip's legend names one by one at most; the rest are one line (their marks run in
#: the order the tensors were given).
_LEGEND_MOST = 24


def _legend(
    canvas: Canvas,
    storage: Mapping[str, Any],
    members: list[Mapping[str, Any]],
    wrap: int | None,
    y: float,
) -> float:
    """The legend line(s) at ``y``: swatch + letter = name of each tensor, then what the cells
    show; the y where the strip starts."""
    x, size = PAD, G["font_size"]
    shown, rest = members[:_LEGEND_MOST], members[_LEGEND_MOST:]
    for tensor in shown:  # legend: swatch + letter = name (a name in a wide script: cut)
        label = fitted(f"{tensor['mark']} = {tensor['name']}", canvas.max_width - 40, size)
        if x > PAD and x + 17 + text_width(label, G["font_size"]) > canvas.max_width:
            x, y = PAD, y + G["line_h"]
        canvas.items.append(Rect(x, y - 11, 13, 13, _swatch(canvas, tensor), "#000000", rx=2))
        canvas.items.append(canvas.text(x + 17, y, label))
        x += 17 + text_width(label, G["font_size"]) + 14
    if rest:  # many readers (a flat buffer's parameter views): their marks in the order given
        more = f"… and {len(rest)} more readers: marks {rest[0]['mark']} to {rest[-1]['mark']} (in the order the tensors were given)"
        for line in wrapped(more, canvas.max_width - 2 * PAD, G["font_size"]):
            x, y = PAD, y + G["line_h"]
            canvas.items.append(canvas.text(x, y, line, muted=True))
        x = canvas.max_width  # what the cells show: on a line of its own
    texts = storage["cells"]["text"]
    shown_as = "values" if texts is not None else no_values_reason(storage)
    digits = canvas.lookup.digits.get(storage["id"])
    if texts is not None and digits:  # shortened to fit: say so, and where the rest is
        shown_as = (
            f"values to {digits} digit{'s' if digits > 1 else ''} after the point "
            "(all: hover in the live widget)"
        )
    where = (
        "a cell's storage index is its row's label plus its column's +offset"
        if wrap is not None
        else "the small number under each cell is its storage index"
    )
    what = f"cells show {shown_as}; {where}" if texts is not None else f"{shown_as}; {where}"
    if x > PAD and x + 10 + text_width(what, G["font_size"]) > canvas.max_width:
        x, y = PAD, y + G["line_h"]
    if x == PAD and PAD + text_width(what, G["font_size"]) > canvas.max_width:
        first, rest = what.split("; ", 1)  # too long for a line of its own: one per clause
        canvas.items.append(canvas.text(x, y, first + ";", muted=True, role="l"))
        x, y, what = PAD, y + G["line_h"], rest
    # role "l": the words on what the numbers are; the widget hides them when its toggle shows
    # one kind of number only (its toggle then says which)
    canvas.items.append(canvas.text(x + (10 if x > PAD else 0), y, what, muted=True, role="l"))
    y += 4
    y += 6
    return y


def _draw_rows(
    canvas: Canvas,
    storage: Mapping[str, Any],
    members: list[Mapping[str, Any]],
    plan: _Plan,
    y: float,
    legs: dict,
) -> tuple[float, dict[int, tuple[float, float]], list[float], list, list]:
    """The column header (wrapped strips), then each row: its label, cells and gaps, and its
    arrows.  Returns the y below, each cell's position, each row's top, and the arrows and labels
    (not yet on the canvas: they go over every row); ``legs`` gets each cross-row arrow's leg x
    by ``(k, "from"/"to")``."""
    left, cell_w, wrap = plan.left, plan.cell_w, plan.wrap
    if wrap is not None:  # column offsets over the columns
        y += G["header_h"]
        for col in range(wrap):
            x = left + col * cell_w + cell_w / 2
            canvas.items.append(
                canvas.text(x, y - 3, f"+{col}", size=G["font_size"], muted=True, anchor="middle")
            )
    positions: dict[int, tuple[float, float]] = {}
    row_tops: list[float] = []
    arc_items: list = []
    label_items: list = []
    for r, row in enumerate(plan.rows):
        y += 6 + plan.bands.get(r, 0.0)  # a channel (cross-row arrows run there), then arc lanes
        row_tops.append(y)
        if wrap is not None:
            canvas.items.append(
                canvas.text(
                    left - 8, y + G["cell_h"] / 2 + 4, _row_label(row), muted=True, anchor="end"
                )
            )
        for item in row:
            x = left + item["x"]
            if item["kind"] == "gap":
                canvas.items.append(
                    _gap(canvas, item["segment"], item["label"], x, y, item["w"] - 3, storage)
                )
                continue
            positions[item["cell"]] = (x, y)
            canvas.items.append(
                _storage_cell(
                    canvas, storage, members, item, x, y, cell_w, plan.show_text, wrap is None
                )
            )
        canvas.width = max(canvas.width, left + row[-1]["x"] + row[-1]["w"] + PAD)
        # short arcs low, long ones above them, stride-0 loops on top: a loop's label, right
        # of it, then sits above every arc instead of on one
        by_length = sorted(
            plan.same_row.get(r, []), key=lambda a: (a["stride"] == 0, abs(a["to"] - a["from"]))
        )
        cross_ends = [
            ((k, end), arrow[end])
            for k, arrow in enumerate(plan.cross)
            for end in ("from", "to")
            if plan.row_of[arrow[end]] == r
        ]
        bounds = (left, canvas.max_width - PAD)
        paths, labels, cross_x = row_arrows(
            canvas, by_length, cross_ends, positions, y, cell_w, bounds
        )
        arc_items.extend(paths)
        label_items.extend(labels)
        legs.update(cross_x)
        y += G["cell_h"] + (2 if wrap is not None else G["index_h"] + 2)
    return y, positions, row_tops, arc_items, label_items


def _storage_cell_width(storage: Mapping[str, Any], members: Sequence[Mapping[str, Any]]) -> float:
    """Wide enough for the value, the storage index and the readers' letters of every cell."""
    texts = storage["cells"]["text"] or []
    # a text's width grows with its length alone: the longest text's is the widest
    value_w = text_width(max(texts, key=len), G["font_size"]) if texts else 0
    index = storage["cells"]["index"]
    if index and min(index) >= 0:  # an index's digits grow with it: the largest is the widest
        index_w = text_width(group_digits(max(index)), G["font_size_small"])
    else:
        index_w = max((text_width(group_digits(c), G["font_size_small"]) for c in index), default=0)
    letters_w = 0.0
    # a cell's marks follow from its readers' counts alone: each set of counts is measured once
    touches = [t["touch"] for t in members]
    measured: set[tuple] = set()
    for i in range(len(storage["cells"]["index"])):
        counts = tuple([touch[i] for touch in touches])
        if counts in measured:
            continue
        measured.add(counts)
        marks = [reader_mark(t, n) for t, n in zip(members, counts) if n != 0]
        letters_w = max(letters_w, _letters_width(marks))
    natural = max(G["cell_w"] - 10, index_w + 6, letters_w + 2)
    # values wider than this are drawn as colour (viridis) instead of text
    return max(natural, min(value_w + 8, 2 * G["cell_w"]))


def _letters_width(marks: list[str]) -> float:
    """What a cell's readers' marks claim of its width: a piece each, the strip splitting the
    cell evenly; past two cells' width, the marks run together in one text (:func:`_reader_strip`),
    and past that too, the first of them plus "+N"."""
    size, cap = G["strip_letter_min_px"], 2 * G["cell_w"]
    widest = max((text_width(m, size) + 4 for m in marks), default=0)
    if len(marks) * widest <= cap:
        return len(marks) * widest
    return min(text_width("".join(marks), size) + 4, cap)


def _cell_title(storage: Mapping[str, Any], cell: int, text: str | None, readers: list) -> str:
    # two strips of one memory (a float32 tensor and its int32 view): the hover names its strip
    at = group_digits(cell)  # as the index under the cell
    tip = [f"storage {storage['id']}[{at}]" if storage.get("same_memory") else f"storage[{at}]"]
    if text is not None:
        tip.append(f"= {text}")
    tip.extend(f"· {t['name']} reads it {'?' if n is None else n}×" for t, n in readers)
    if not readers and storage.get("same_memory"):  # the other strip's tensors may read it
        tip.append("· not read by a tensor over this strip")
    elif not readers:
        tip.append("· not read by any shown tensor")
    return " ".join(tip)


def _swatch(canvas: Canvas, tensor: Mapping[str, Any]) -> Any:
    """A tensor's fill in a strip: its pattern; a tensor the picture lists in words instead of
    drawing (no pattern is defined for it) its plain colour."""
    order = tensor["order"]
    if tensor["id"] in canvas.unpatterned:
        return STYLE["tensor_colours"][order % len(STYLE["tensor_colours"])]
    return ("pattern", order)


def _reader_strip(
    canvas: Canvas, readers: list, x: float, y: float, w: float, colours: Mapping
) -> list:
    """A storage cell's strip of readers: one piece per tensor, each with its mark when every
    mark fits its piece; else all the marks as one centred text (:func:`compact_marks`)."""
    piece, strip_h, size = w / len(readers), G["strip_h"], G["strip_letter_min_px"]
    marks = [reader_mark(tensor, count) for tensor, count in readers]
    drawn: list = [
        Rect(x + k * piece, y, piece, strip_h, _swatch(canvas, tensor))
        for k, (tensor, _) in enumerate(readers)
    ]
    if all(text_width(mark, size) <= piece for mark in marks):
        spots = [(x + k * piece + piece / 2, mark) for k, mark in enumerate(marks)]
    else:
        spots = [(x + w / 2, compact_marks(marks, lambda t: text_width(t, size) <= w))]
    ink, halo = colours["strip_text"], colours["strip_halo"]
    drawn += [Text(cx, y + strip_h - 2, m, size, ink, "middle", True, halo) for cx, m in spots]
    return drawn


def _row_label(row: list[dict[str, Any]]) -> str:
    """A wrapped row's start index: full digits, grouped (a row of one marker: none)."""
    first = next((item for item in row if item["kind"] == "cell"), None)
    if first is None:
        return ""
    return group_digits(first["cell"] - round(first["x"] / first["w"]))


def _gap(
    canvas: Canvas,
    segment: Mapping[str, Any],
    label: str,
    x: float,
    y: float,
    w: float,
    storage: Mapping[str, Any],
) -> Group:
    c = canvas.colours
    size = G["font_size"]
    # read cells left out for room are boxed like cells (solid); a run not counted (it may hold
    # read cells) solid and muted; only a run known to be unread is dashed like untouched cells
    unread = segment.get("read") == 0 or not segment["in_span"]
    if segment.get("read"):
        box = Rect(x, y, w, G["cell_h"] - 2, c["cell_bg"], c["cell_stroke"], 1.5, rx=4)
    elif unread:
        box = Rect(x, y, w, G["cell_h"] - 2, c["gap_bg"], c["gap_stroke"], dash="4 3", rx=4)
    else:
        box = Rect(x, y, w, G["cell_h"] - 2, c["gap_bg"], c["cell_stroke"], rx=4)
    kind = (
        "sws-gap-read" if segment.get("read") else "sws-gap-unread" if unread else "sws-gap-unknown"
    )
    where = f"storage {storage['id']}" if storage.get("same_memory") else "storage"
    return Group(
        f"sws-gap {kind}",
        [box, canvas.text(x + w / 2, y + G["cell_h"] / 2 + 3, label, size=size, anchor="middle")],
        title=f"{gap_words(segment)}: {where}[{group_digits(segment['start'])}] … "
        f"{where}[{group_digits(segment['stop'] - 1)}]{_whose(storage, segment)}",
    )


def _whose(storage: Mapping[str, Any], segment: Mapping[str, Any]) -> str:
    """On a strip of one memory viewed as another dtype too, whose reads a gap's "untouched" or
    "unread" counts: this strip's tensors (another dtype's strip may read its bytes)."""
    every = segment.get("read") == segment["stop"] - segment["start"]
    return "" if every or not storage.get("same_memory") else " (by this strip's tensors)"


def _storage_cell(
    canvas: Canvas, storage, members, item, x, y, cell_w, show_text, indexed
) -> Group:
    c = canvas.colours
    i, cell = item["i"], item["cell"]
    w, h = cell_w - 3, G["cell_h"] - 2
    readers = [(t, t["touch"][i]) for t in members if t["touch"][i] != 0]
    max_count = max((n or 0 for _, n in readers), default=0)
    classes = (
        "sws-scell"
        + ("" if readers else " sws-untouched")
        + (" sws-multi" if max_count > 1 else "")
    )
    texts, values = storage["cells"]["text"], storage["cells"]["value"]
    text = texts[i] if texts is not None else None
    # on a colour scale, a value whose own text fits its cell is printed all the same
    size = G["font_size"]
    show_text = show_text or (text is not None and text_width(text, size) <= cell_w - 6)
    scale = (
        None
        if show_text or not readers
        else viridis(values[i] if values else None, storage.get("value_range"))
    )
    # on a colour scale, a value with no place on it (nan, ±inf) keeps its text on a marked fill
    special = not show_text and readers and scale is None and text is not None
    if special:
        fill, stroke, dash = c["phantom_bg"], c["phantom_stroke"], None
    elif readers:
        fill, stroke, dash = (scale[0] if scale else c["cell_bg"]), c["cell_stroke"], None
    else:
        fill, stroke, dash = c["untouched_bg"], c["untouched_stroke"], "3 2"
    body: list = [Rect(x, y, w, h, fill, stroke, 2.0 if max_count > 1 else 1.0, dash)]
    strip_h = G["strip_h"]
    if readers:
        body.extend(_reader_strip(canvas, readers, x, y, w, c))
    if special:
        text = special_text(text, w - 4)
    if (show_text or special) and text is not None:
        ink = c["phantom_text"] if special else c["text"] if readers else c["untouched_text"]
        body.append(
            canvas.middle(x + w / 2, y + strip_h + (h - strip_h) / 2 + 4, text, size, ink, "v")
        )
    if indexed:  # a wrapped strip gives the index by its row label and column header instead
        index = f"{cell:,}"  # group_digits
        small, muted = G["font_size_small"], c["text_muted"]
        body.append(canvas.middle(x + w / 2, y + h + G["index_h"], index, small, muted, "i"))
    return Group(
        classes,
        body,
        {"storage": storage["id"], "cell": cell},
        _cell_title(storage, cell, canvas.lookup.cell(storage["id"], cell, "full"), readers),
    )
