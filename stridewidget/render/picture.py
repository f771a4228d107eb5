"""The static picture of a scene as a list of drawing primitives, in px, for any backend.

:func:`draw` lays out what the widget shows, without interaction: the storage as a strip of memory
(one row of up to ``max_strip_cells`` cells, each with its storage index under it; when it must
wrap, rows of the storage's own natural width with a ``+0 … +n`` column header and full row labels),
one stride arc per dim in reserved lanes above the strip (equal strides merged, stride 0 a loop),
and one card per tensor: a summary line of its facts and its logical grid, 3-D/4-D as a grid of
2-D panels.  :mod:`.svg` writes the primitives as SVG and :mod:`.mpl` draws them with matplotlib,
so both show the same picture.  Text widths come from the monospace advance (``char_em``); every
text gets room of its own, so no two texts overlap and none is cut.

No layout math happens here beyond turning indices into coordinates: addresses, touch counts,
values and arrows all come from the scene.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import safe_repr
from ..layout.ints import as_wrap
from ..scene.index import logical_index
from ..scene.validate import validate_scene
from ..style import STYLE

__all__ = ["Group", "Path", "Picture", "Rect", "Text", "draw", "scene_of", "text_width"]

G = STYLE["geometry"]
LIMITS = STYLE["limits"]
#: The picture's width budget in px (issue 10: legible at 1,280 px wide, margins included).
MAX_WIDTH = 1240
PAD = G["pad"]


@dataclass
class Rect:
    x: float
    y: float
    w: float
    h: float
    fill: Any  # a colour, ("pattern", order) or None
    stroke: str | None = None
    stroke_width: float = 1.0
    dash: str | None = None
    rx: float = 0.0


@dataclass
class Text:
    x: float
    y: float  # the baseline
    text: str
    size: float
    fill: str
    anchor: str = "start"  # start | middle | end
    bold: bool = False
    halo: str | None = None  # a stroke painted under the glyphs


@dataclass
class Path:
    commands: list[tuple]  # ("M", x, y) | ("L", x, y) | ("C", x1, y1, x2, y2, x, y)
    stroke: str
    width: float = 1.6
    dash: str | None = None
    arrow: bool = True  # an arrowhead at the end
    fill: str | None = None


@dataclass
class Group:
    """Primitives that belong together (one cell, one arrow) with the ids tests select on."""

    cls: str
    children: list = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)
    title: str | None = None


@dataclass
class Picture:
    width: float
    height: float
    theme: str
    items: list
    title: str
    tensors: list[Mapping[str, Any]]


def text_width(text: str, size: float) -> float:
    """Advance width of ``text`` in the monospace font at ``size`` px."""
    return len(text) * G["char_em"] * size


def group_digits(n: int) -> str:
    """``1234567`` → ``1,234,567``: row labels and counts keep every digit."""
    return f"{n:,}"


def signed(stride: int) -> str:
    return f"+{stride}" if stride >= 0 else f"−{-stride}"


def tensor_colour(order: int) -> str:
    colours = STYLE["tensor_colours"]
    return colours[order % len(colours)]


def reader_mark(tensor: Mapping[str, Any], count: int | None) -> str:
    """The tensor's letter with its read count: ``A``, ``A×2``, ``A?`` (count unknown)."""
    return tensor["mark"] + ("?" if count is None else f"×{count}" if count > 1 else "")


def viridis(value: float | None, value_range: Any) -> tuple[str, str] | None:
    """(fill, ink) of ``value`` on the shared viridis scale, or None without a value."""
    if value is None or not value_range:
        return None
    lo, hi = value_range
    t = min(1.0, max(0.0, (value - lo) / (hi - lo))) if hi > lo else 0.5
    stops = STYLE["viridis"]["stops"]
    position = t * (len(stops) - 1)
    k = min(len(stops) - 2, int(position))
    f = position - k
    a, b = ([int(stops[j][i : i + 2], 16) for i in (1, 3, 5)] for j in (k, k + 1))  # #rrggbb → ints
    mix = "#" + "".join(f"{round(x + (y - x) * f):02x}" for x, y in zip(a, b))
    return mix, STYLE["viridis"]["text"][round(position)]


def layout_summary(layout: Mapping[str, Any]) -> str:
    """One line of facts: ``shape (3, 4) · strides (4, 1) · offset 0 · float32 · contiguous``,
    with only the flags that matter for the tensor's ndim."""
    if layout.get("symbolic"):  # a symbolic layout drawn at an example: its symbols, not ints
        return layout["symbolic"]
    ndim = len(layout["shape"])
    flags = []
    if layout.get("is_contiguous"):
        flags.append("contiguous")
    elif ndim >= 2 and layout.get("is_f_contiguous"):
        flags.append("F-contiguous")
    if ndim == 4 and layout.get("is_channels_last"):
        flags.append("channels-last")
    if not flags and layout.get("is_dense"):
        flags.append("dense")
    if layout.get("has_overlap") is None and "has_overlap" in layout:
        flags.append("overlap not decided")  # the display's time budget ran out
    elif layout.get("has_overlap"):
        flags.append("overlapping")
    if not flags:
        flags.append("strided")
    return " · ".join(
        [
            f"shape {tuple(layout['shape'])}",
            f"strides {tuple(layout['strides'])}",
            f"offset {layout['offset']}",
            layout["dtype"],
            *flags,
        ]
    )


NOTATION = "shape:strides +offset — element [i, j] lives at storage[offset + i·stride0 + j·stride1]"


def scene_of(*tensors: Any, wrap: int | None = None, **named: Any) -> dict[str, Any]:
    """The scene to draw: a scene dict or a widget as is, else :func:`build_scene` of the tensors.

    Positional tensors are named ``t0``, ``t1``, ...; keyword ones keep their names.  ``wrap``
    (storage cells per row) overrides the scene's suggestion; a widget's own ``wrap`` is used
    when it has one.

    >>> import torch
    >>> scene = scene_of(torch.zeros(2, 3), y=torch.ones(3))
    >>> [t["name"] for t in scene["tensors"]]
    ['t0', 'y']
    >>> scene_of(scene) == scene
    True
    >>> scene_of(scene, wrap=2)["storages"][0]["wrap"]
    2
    """
    wrap = as_wrap(wrap)
    if len(tensors) == 1 and not named:
        only = tensors[0]
        given = None
        if isinstance(only, Mapping) and "storages" in only and "tensors" in only:
            given = only
        elif isinstance(getattr(only, "scene", None), Mapping):  # a StrideWidget (duck-typed)
            given = only.scene
            if wrap is None:
                wrap = getattr(only, "wrap", None)
        elif isinstance(only, Mapping):  # names -> tensors as one mapping: any name, even "wrap"
            tensors, named = (), dict(only)
        if given is not None:
            validate_scene(given)
            scene = dict(given)
            if wrap is not None:
                scene["storages"] = [{**st, "wrap": wrap} for st in scene.get("storages", [])]
            return scene
    if not tensors and not named:
        raise TypeError(
            "nothing to draw: pass tensors/arrays (render_svg(x), render_svg(a=x, b=x.t())), "
            "a scene from build_scene, or a StrideWidget"
        )
    from ..scene.build import build_scene

    mapping: dict[str, Any] = {f"t{i}": obj for i, obj in enumerate(tensors)}
    clash = set(mapping) & set(named)
    if clash:
        raise TypeError(f"names {sorted(clash)} are used both positionally and as keywords")
    mapping.update(named)
    return build_scene(mapping, wrap=wrap)


class _Lookup:
    """Storage by id, and each shown storage cell's position among the shown cells."""

    def __init__(self, scene: Mapping[str, Any]) -> None:
        self.storages = {s["id"]: s for s in scene.get("storages", [])}
        self.position = {
            s["id"]: {cell: i for i, cell in enumerate(s["cells"]["index"])}
            for s in scene.get("storages", [])
        }

    def cell(self, storage_id: str, cell: int | None, what: str) -> Any:
        storage = self.storages.get(storage_id)
        if storage is None or cell is None or storage["cells"][what] is None:
            return None
        i = self.position[storage_id].get(cell)
        return None if i is None else storage["cells"][what][i]

    def read(self, tensor: Mapping[str, Any], cell: int | None, what: str) -> Any:
        """What ``tensor`` reads at storage ``cell`` (a conj/neg view or a quantized tensor reads
        other values than memory holds: its ``reads``); else the stored value."""
        reads = tensor.get("reads")
        if reads is None or reads.get(what) is None:
            return self.cell(tensor["storage"], cell, what)
        i = self.position[tensor["storage"]].get(cell) if cell is not None else None
        return None if i is None else reads[what][i]


def no_values_reason(storage: Mapping[str, Any]) -> str:
    """Why a storage strip shows no values, as exactly as the scene tells.

    >>> no_values_reason({"itemsize": 8, "unit": 4})
    'no values: its 8 B elements straddle the 4 B cells (a byte-misaligned or record-field view)'
    """
    itemsize, unit = storage.get("itemsize"), storage.get("unit")
    if unit is not None and itemsize is not None and unit != itemsize:
        return (
            f"no values: its {itemsize} B elements straddle the {unit} B cells "
            "(a byte-misaligned or record-field view)"
        )
    return "no values (meta tensor or layout only)"


# --- storage strip --------------------------------------------------------------------------------


def _arrows(members: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
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


def _storage_cell_width(storage: Mapping[str, Any], members: Sequence[Mapping[str, Any]]) -> float:
    """Wide enough for the value, the storage index and the readers' letters of every cell."""
    texts = storage["cells"]["text"] or []
    value_w = max((text_width(t, G["font_size"]) for t in texts), default=0)
    index_w = max(
        (text_width(group_digits(c), G["font_size_small"]) for c in storage["cells"]["index"]),
        default=0,
    )
    letters_w = 0.0
    for i in range(len(storage["cells"]["index"])):
        marks = [reader_mark(t, t["touch"][i]) for t in members if t["touch"][i] != 0]
        widest = max((text_width(m, G["strip_letter_min_px"]) + 4 for m in marks), default=0)
        letters_w = max(letters_w, len(marks) * widest)  # the strip splits the cell evenly
    natural = max(G["cell_w"] - 10, index_w + 6, letters_w + 2)
    # values wider than this are drawn as colour (viridis) instead of text
    return max(natural, min(value_w + 8, 2 * G["cell_w"]))


def _gap_label(segment: Mapping[str, Any], room: float) -> str:
    """The elision marker's text: the count and the range when they fit in ``room`` px."""
    count = group_digits(segment["stop"] - segment["start"])
    what = "cells not shown" if segment["in_span"] else "cells untouched"
    full = (
        f"⋯ {count} {what} [{group_digits(segment['start'])} … {group_digits(segment['stop'] - 1)}]"
    )
    return full if text_width(full, G["font_size"]) + 10 <= room else f"⋯ {count} cells"


def _strip_rows(
    storage: Mapping[str, Any], cell_w: float, room: float
) -> tuple[list[list[dict[str, Any]]], int | None]:
    """The strip's rows of items (cells and elision markers, each with its ``x`` and ``w``) and
    the wrap: ``None`` for one line, or a line that flows on (it has elisions) without columns.

    Shown cells with no elision that do not fit one line wrap at the storage's natural row width
    (the scene's ``wrap``, or its largest divisor that fits), so that columns keep their meaning.
    """
    items: list[dict[str, Any]] = []
    position = 0
    for segment in storage["segments"]:
        if segment["kind"] == "gap":
            label = _gap_label(segment, 2 * cell_w)
            width = max(2 * cell_w, text_width(label, G["font_size"]) + 10)
            items.append({"kind": "gap", "segment": segment, "label": label, "w": width})
            continue
        for cell in range(segment["start"], segment["stop"]):
            items.append({"kind": "cell", "cell": cell, "i": position, "w": cell_w})
            position += 1
    cells = sum(1 for item in items if item["kind"] == "cell")
    max_cells = LIMITS["max_strip_cells"]
    has_gaps = cells < len(items)
    natural = max(1, int(storage["wrap"]))
    if has_gaps or (cells <= min(natural, max_cells) and cells * cell_w <= room):
        rows: list[list[dict[str, Any]]] = [[]]
        x = count = 0.0
        for item in items:
            if rows[-1] and (
                x + item["w"] > room or (item["kind"] == "cell" and count >= max_cells)
            ):
                rows.append([])
                x = count = 0
            rows[-1].append({**item, "x": x})
            x += item["w"]
            count += item["kind"] == "cell"
        return [row for row in rows if row], None
    limit = max(1, min(int(room // cell_w), LIMITS["max_wrap"]))
    wrap = natural if natural <= limit else max(d for d in range(1, limit + 1) if natural % d == 0)
    rows = []
    for item in items:
        col = item["cell"] % wrap
        if not rows or col == 0 or col * cell_w <= rows[-1][-1]["x"]:
            rows.append([])
        rows[-1].append({**item, "x": col * cell_w})
    return rows, wrap


def _cell_title(storage: Mapping[str, Any], cell: int, text: str | None, readers: list) -> str:
    tip = [f"storage[{cell}]"]
    if text is not None:
        tip.append(f"= {text}")
    tip.extend(f"· {t['name']} reads it {'?' if n is None else n}×" for t, n in readers)
    if not readers:
        tip.append("· not read by any shown tensor")
    return " ".join(tip)


def _row_of(rows: list[list[dict[str, Any]]]) -> dict[int, int]:
    return {item["cell"]: r for r, row in enumerate(rows) for item in row if item["kind"] == "cell"}


def _row_label(row: list[dict[str, Any]]) -> str:
    """A wrapped row's start index: full digits, grouped."""
    first = next(item for item in row if item["kind"] == "cell")
    return group_digits(first["cell"] - round(first["x"] / first["w"]))


class _Builder:
    def __init__(self, scene: Mapping[str, Any], theme: str) -> None:
        if theme not in STYLE["themes"]:
            raise ValueError(
                f"theme must be one of {sorted(STYLE['themes'])}, got {safe_repr(theme)}"
            )
        self.scene = scene
        self.theme = theme
        self.colours = STYLE["themes"][theme]
        self.lookup = _Lookup(scene)
        self.items: list = []
        self.width = 0.0
        self._bands: dict[int, float] = {}

    # -- small helpers

    def text(self, x: float, y: float, text: str, *, size: float | None = None, muted: bool = False,
             fill: str | None = None, **kwargs: Any) -> Text:  # fmt: skip
        size = size or G["font_size"]
        colour = fill or (self.colours["text_muted"] if muted else self.colours["text"])
        item = Text(x, y, text, size, colour, **kwargs)
        left = x - (text_width(text, size) if item.anchor == "end" else 0)
        if item.anchor == "middle":
            left = x - text_width(text, size) / 2
        self.width = max(self.width, left + text_width(text, size))
        return item

    # -- storage

    def storage(
        self, storage: Mapping[str, Any], members: list[Mapping[str, Any]], top: float
    ) -> float:
        header = (
            f"storage {storage['id']} · {storage['dtype']} · {group_digits(storage['size'])} elements "
            f"× {storage['itemsize']} B = {group_digits(storage['nbytes'])} B · {storage['device']}"
        )
        y = top + G["font_size_title"] + 2
        self.items.append(self.text(PAD, y, header, size=G["font_size_title"], bold=True))
        y += G["line_h"]
        cell_w = _storage_cell_width(storage, members)
        texts = storage["cells"]["text"]
        show_text = texts is not None and all(
            text_width(t, G["font_size"]) <= cell_w - 6 for t in texts
        )
        arrows = _arrows(members)
        # first pass: which arrows change rows (their lanes and labels sit left of the strip)
        rows, wrap = _strip_rows(storage, cell_w, MAX_WIDTH - 2 * PAD)
        labels = [_row_label(row) for row in rows] if wrap else []
        label_w = max((text_width(t, G["font_size"]) + 10 for t in labels), default=0)
        row_of = _row_of(rows)
        cross = [
            a for a in arrows
            if a["from"] in row_of and a["to"] in row_of and row_of[a["from"]] != row_of[a["to"]]
        ]  # fmt: skip
        cross_label_w = max((text_width(a["label"], 10) for a in cross), default=0)
        gutter = cross_label_w + 8 + 8 * len(cross) if cross else 0
        left = PAD + gutter + label_w
        rows, wrap = _strip_rows(storage, cell_w, MAX_WIDTH - PAD - left)
        row_of = _row_of(rows)
        shown = [a for a in arrows if a["from"] in row_of and a["to"] in row_of]
        cross = [a for a in shown if row_of[a["from"]] != row_of[a["to"]]]
        same_row: dict[int, list[dict[str, Any]]] = {}
        for arrow in shown:
            if row_of[arrow["from"]] == row_of[arrow["to"]]:
                same_row.setdefault(row_of[arrow["from"]], []).append(arrow)
        self._bands = {r: len(arcs) * G["arrow_lane"] + 8 for r, arcs in same_row.items()}
        x = PAD
        for tensor in members:  # legend: swatch + letter = name
            label = f"{tensor['mark']} = {tensor['name']}"
            if x > PAD and x + 17 + text_width(label, G["font_size"]) > MAX_WIDTH:
                x, y = PAD, y + G["line_h"]
            self.items.append(
                Rect(x, y - 11, 13, 13, ("pattern", tensor["order"]), "#000000", rx=2)
            )
            self.items.append(self.text(x + 17, y, label))
            x += 17 + text_width(label, G["font_size"]) + 14
        shown_as = "values" if texts is not None else no_values_reason(storage)
        where = (
            "a cell's storage index is its row's label plus its column's +offset"
            if wrap is not None
            else "the small number under each cell is its storage index"
        )
        what = f"cells show {shown_as}; {where}" if texts is not None else f"{shown_as}; {where}"
        if x > PAD and x + 10 + text_width(what, G["font_size"]) > MAX_WIDTH:
            x, y = PAD, y + G["line_h"]
        self.items.append(self.text(x + (10 if x > PAD else 0), y, what, muted=True))
        y += 4
        y += 6
        if wrap is not None:  # column offsets over the columns
            y += G["header_h"]
            for col in range(wrap):
                x = left + col * cell_w + cell_w / 2
                self.items.append(
                    self.text(x, y - 3, f"+{col}", size=G["font_size"], muted=True, anchor="middle")
                )
        positions: dict[int, tuple[float, float]] = {}
        row_tops: list[float] = []
        arc_items: list = []
        label_items: list = []
        for r, row in enumerate(rows):
            y += 6 + self._band(r)  # a channel (cross-row arrows run there), then the arcs' lanes
            row_tops.append(y)
            if wrap is not None:
                self.items.append(
                    self.text(
                        left - 8, y + G["cell_h"] / 2 + 4, _row_label(row), muted=True, anchor="end"
                    )
                )
            for item in row:
                x = left + item["x"]
                if item["kind"] == "gap":
                    self.items.append(
                        self._gap(item["segment"], item["label"], x, y, item["w"] - 3)
                    )
                    continue
                positions[item["cell"]] = (x, y)
                self.items.append(
                    self._storage_cell(
                        storage, members, item, x, y, cell_w, show_text, wrap is None
                    )
                )
            self.width = max(self.width, left + row[-1]["x"] + row[-1]["w"] + PAD)
            # short arcs low, long ones above them, stride-0 loops on top: a loop's label, right
            # of it, then sits above every arc instead of on one
            by_length = sorted(
                same_row.get(r, []), key=lambda a: (a["stride"] == 0, abs(a["to"] - a["from"]))
            )
            for lane, arrow in enumerate(by_length):
                arc, label = self._arc(arrow, positions, y, lane, cell_w)
                arc_items.append(arc)
                label_items.append(label)
            y += G["cell_h"] + (2 if wrap is not None else G["index_h"] + 2)
        for k, arrow in enumerate(cross):
            lane_x = PAD + cross_label_w + 8 + 8 * k
            arc, label = self._cross_arrow(arrow, positions, row_tops, row_of, lane_x, k)
            arc_items.append(arc)
            label_items.append(label)
        self._place_side_labels(label_items)
        self.items.extend(arc_items)
        self.items.extend(label_items)
        if texts is not None and not show_text and storage.get("value_range"):
            lo, hi = storage["value_range"]
            note = f"values too wide for the cells: colour = value (viridis, dark {lo:.4g} … light {hi:.4g}); hover for values"
            y += G["line_h"] - 4
            self.items.append(self.text(left, y, note, muted=True))
        return y + 2

    def _gap(self, segment: Mapping[str, Any], label: str, x: float, y: float, w: float) -> Group:
        count = group_digits(segment["stop"] - segment["start"])
        what = "cells not shown" if segment["in_span"] else "cells untouched"
        c = self.colours
        size = G["font_size"]
        return Group(
            "sws-gap",
            [
                Rect(x, y, w, G["cell_h"] - 2, c["gap_bg"], c["gap_stroke"], dash="4 3", rx=4),
                self.text(x + w / 2, y + G["cell_h"] / 2 + 3, label, size=size, anchor="middle"),
            ],
            title=f"{count} {what}: storage[{group_digits(segment['start'])}] … "
            f"storage[{group_digits(segment['stop'] - 1)}]",
        )

    def _storage_cell(self, storage, members, item, x, y, cell_w, show_text, indexed) -> Group:
        c = self.colours
        i, cell = item["i"], item["cell"]
        w, h = cell_w - 3, G["cell_h"] - 2
        readers = [(t, t["touch"][i]) for t in members if t["touch"][i] != 0]
        max_count = max((n or 0 for _, n in readers), default=0)
        classes = (
            ["sws-scell"]
            + ([] if readers else ["sws-untouched"])
            + (["sws-multi"] if max_count > 1 else [])
        )
        texts, values = storage["cells"]["text"], storage["cells"]["value"]
        text = texts[i] if texts is not None else None
        scale = (
            None
            if show_text or not readers
            else viridis(values[i] if values else None, storage.get("value_range"))
        )
        if readers:
            fill, stroke, dash = (scale[0] if scale else c["cell_bg"]), c["cell_stroke"], None
        else:
            fill, stroke, dash = c["untouched_bg"], c["untouched_stroke"], "3 2"
        body: list = [Rect(x, y, w, h, fill, stroke, 2.0 if max_count > 1 else 1.0, dash, rx=3)]
        strip_h = G["strip_h"]
        if readers:
            piece = w / len(readers)
            for k, (tensor, count) in enumerate(readers):
                body.append(Rect(x + k * piece, y, piece, strip_h, ("pattern", tensor["order"])))
                mark = reader_mark(tensor, count)
                if text_width(mark, G["strip_letter_min_px"]) <= piece:
                    body.append(
                        Text(
                            x + k * piece + piece / 2,
                            y + strip_h - 2,
                            mark,
                            G["strip_letter_min_px"],
                            c["strip_text"],
                            "middle",
                            True,
                            c["strip_halo"],
                        )
                    )
        if show_text and text is not None:
            ink = c["text"] if readers else c["untouched_text"]
            body.append(
                self.text(
                    x + w / 2, y + strip_h + (h - strip_h) / 2 + 4, text, fill=ink, anchor="middle"
                )
            )
        if indexed:  # a wrapped strip gives the index by its row label and column header instead
            index = group_digits(cell)
            size = G["font_size_small"]
            body.append(
                self.text(
                    x + w / 2, y + h + G["index_h"], index, size=size, muted=True, anchor="middle"
                )
            )
        return Group(
            " ".join(classes),
            body,
            {"storage": storage["id"], "cell": cell},
            _cell_title(storage, cell, text, readers),
        )

    def _arrow_group(self, arrow: Mapping[str, Any], path: Path) -> Group:
        return Group(
            "sws-arrow",
            [path],
            {"tensor": arrow["tensor"]["id"], "dim": ",".join(map(str, arrow["dims"]))},
            f"{arrow['tensor']['name']}: {arrow['label']} — one step along "
            + ", ".join(f"dim {d}" for d in arrow["dims"])
            + f" moves {arrow['stride']} storage cells",
        )

    def _label(self, arrow, x: float, y: float, anchor: str) -> Group:
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
                    self.colours["label_bg"],
                    tensor_colour(arrow["tensor"]["order"]),
                    1.0,
                    rx=3,
                ),
                self.text(x, y, arrow["label"], size=size, anchor=anchor),
            ],
        )

    def _arc(
        self, arrow, positions, row_top: float, lane: int, cell_w: float
    ) -> tuple[Group, Group]:
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
        return self._arrow_group(arrow, path), self._label(arrow, label_x, apex + 4, anchor)

    def _cross_arrow(
        self, arrow, positions, row_tops, row_of, lane_x: float, k: int
    ) -> tuple[Group, Group]:
        order = arrow["tensor"]["order"]
        colour, dash = tensor_colour(order), (None if order % 2 == 0 else "6 3")
        (x1, y1), (x2, y2) = positions[arrow["from"]], positions[arrow["to"]]
        # up into the channel over the start row, out to a lane left of the strip, along it to the
        # channel over the end row, and in to the end cell: never across a cell or a text
        c1 = row_tops[row_of[arrow["from"]]] - self._band(row_of[arrow["from"]]) - 3
        c2 = row_tops[row_of[arrow["to"]]] - self._band(row_of[arrow["to"]]) - 3
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
        return self._arrow_group(arrow, path), self._label(
            arrow, lane_x - 5, (c1 + c2) / 2 + 4, "end"
        )

    def _band(self, row: int) -> float:
        return self._bands.get(row, 0.0)

    def _place_side_labels(self, labels: list[Group]) -> None:
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

    # -- logical cards

    def card(self, tensor: Mapping[str, Any]) -> tuple[list, float, float]:
        """One tensor's card at (0, 0): title, facts line, logical grid or panels; its size."""
        saved, self.items = self.items, []
        saved_width, self.width = self.width, 0.0
        order = tensor["order"]
        y = 16.0
        self.items.append(Rect(PAD, y - 12, 14, 14, ("pattern", order), "#000000", rx=3))
        self.items.append(
            self.text(
                PAD + 20,
                y,
                f"{tensor['mark']}  {tensor['name']}",
                size=G["font_size_title"],
                bold=True,
            )
        )
        y += G["line_h"]
        layout = tensor["layout"]
        self.items.append(
            Group(
                "sws-facts",
                [self.text(PAD, y, layout_summary(layout), muted=True)],
                title=f"{layout['text']} — {NOTATION}",
            )
        )
        for note in (tensor.get("reads") or {}).get("notes", ()):
            y += G["line_h"]
            self.items.append(Group("sws-reads", [self.text(PAD, y, note, muted=True)]))
        y += 10
        logical = tensor["logical"]
        slices = [s for s in logical["slices"] if s["kind"] == "slice"]
        if not slices:
            y += G["line_h"]
            self.items.append(self.text(PAD, y, "empty tensor: no elements", muted=True))
            return self._finish_card(saved, saved_width, y + 8)
        storage = self.lookup.storages.get(tensor["storage"])
        cell_w, show_values = self._logical_cell_width(tensor, storage, slices)
        ndim = logical["ndim"]
        if ndim >= 3:
            y += G["line_h"]
            inner = f"each panel: rows = dim {ndim - 2}, columns = dim {ndim - 1}"
            outer = (
                "panels: rows = dim 0, columns = dim 1"
                if ndim == 4
                else f"panels along dims {', '.join(map(str, range(ndim - 2)))}"
            )
            self.items.append(self.text(PAD, y, f"{outer}; {inner}", muted=True))
        y += 6 if ndim >= 3 else 2
        x, row_h, panel_row_key = PAD, 0.0, None
        for s, slice_ in enumerate(logical["slices"]):
            if slice_["kind"] == "gap":
                y += row_h + G["line_h"]
                where = "" if slice_["dim"] is None else f" along dim {slice_['dim']}"
                self.items.append(
                    self.text(
                        PAD,
                        y,
                        f"⋯ {group_digits(slice_['count'])} slices{where} not shown",
                        muted=True,
                    )
                )
                x, row_h, panel_row_key = PAD, 10.0, None
                continue
            key = tuple(slice_["lead"][:-1]) if ndim >= 4 else None
            panel = self._slice(tensor, slice_, s, cell_w, show_values, ndim >= 3)
            w, h = panel.pop(), panel.pop()
            columns_full = (
                ndim == 3
                and x > PAD
                and (
                    x + w > MAX_WIDTH - PAD or (x - PAD) // max(w, 1) >= LIMITS["max_panel_columns"]
                )
            )
            if x > PAD and (key != panel_row_key or columns_full):
                x, y, row_h = PAD, y + row_h + G["panel_gap"], 0.0
            panel_row_key = key
            self.items.extend(_translated(panel, x, y))
            self.width = max(self.width, x + w)
            x += w + G["panel_gap"]
            row_h = max(row_h, h)
        return self._finish_card(saved, saved_width, y + row_h + 6)

    def _finish_card(
        self, saved: list, saved_width: float, bottom: float
    ) -> tuple[list, float, float]:
        items, width = self.items, self.width + PAD
        self.items, self.width = saved, saved_width
        c = self.colours
        frame = Rect(2, 0, width - 4, bottom, c["background"], c["panel_stroke"], rx=4)
        return [frame, *items], width, bottom

    def _logical_cell_width(self, tensor, storage, slices) -> tuple[float, bool]:
        addresses = [a for s in slices for row in s["addr"] for a in row if a is not None]
        addr_w = max(
            (text_width(f"@{group_digits(a)}", G["font_size_small"]) for a in addresses), default=0
        )
        has_values = storage is not None and storage["cells"]["text"] is not None
        if not has_values:
            addr_w = max(
                (text_width(f"@{group_digits(a)}", G["font_size"]) for a in addresses), default=0
            )
            return max(G["logical_w"] - 10, addr_w + 8), False
        texts = [self.lookup.read(tensor, a, "text") or "?" for a in addresses]
        value_w = max((text_width(t, G["font_size"]) for t in texts), default=0)
        show_values = value_w + 8 <= 2 * G["logical_w"]
        return max(G["logical_w"] - 10, addr_w + 8, value_w + 8 if show_values else 0), show_values

    def _slice(self, tensor, slice_, s, cell_w, show_values, panel) -> list:
        """One 2-D slice at (0, 0), followed by its height and width (popped by the caller)."""
        c = self.colours
        items: list = []
        saved, self.items = self.items, items
        saved_width, self.width = self.width, 0.0
        pad = G["panel_pad"] if panel else 0
        y = pad
        if panel:
            y += G["font_size"] + 2
            items.append(
                self.text(
                    pad,
                    y,
                    f"{tensor['name']}{slice_['label']}"
                    if len(tensor["name"]) <= 12
                    else slice_["label"],
                    muted=True,
                )
            )
            y += 4
        rows = slice_["rows"] if slice_["rows"] is not None else [None]
        cols = slice_["cols"] if slice_["cols"] is not None else [None]
        label_w = max([text_width(str(r), G["font_size"]) for r in rows if r is not None] + [0]) + 8
        left = pad + (label_w if slice_["rows"] is not None else 0)
        xs, x = [], left
        for col in cols:
            xs.append(x)
            x += G["ellipsis_w"] if (col is None and slice_["cols"] is not None) else cell_w
        if slice_["cols"] is not None:
            y += G["font_size"] + 2
            for k, col in enumerate(cols):
                w = cell_w if col is not None else G["ellipsis_w"]
                items.append(
                    self.text(
                        xs[k] + w / 2,
                        y,
                        "⋯" if col is None else str(col),
                        size=G["font_size"],
                        muted=True,
                        anchor="middle",
                    )
                )
            y += 4
        for r, row in enumerate(rows):
            if slice_["rows"] is not None and row is None:
                items.append(
                    self.text(left - 6, y + G["ellipsis_h"] - 4, "⋮", muted=True, anchor="end")
                )
                y += G["ellipsis_h"]
                continue
            if slice_["rows"] is not None:
                items.append(
                    self.text(
                        left - 6,
                        y + G["logical_h"] / 2 + 3,
                        str(row),
                        size=G["font_size"],
                        muted=True,
                        anchor="end",
                    )
                )
            for k, col in enumerate(cols):
                if slice_["cols"] is not None and col is None:
                    items.append(
                        self.text(
                            xs[k] + G["ellipsis_w"] / 2,
                            y + G["logical_h"] / 2 + 4,
                            "⋯",
                            muted=True,
                            anchor="middle",
                        )
                    )
                    continue
                items.append(
                    self._logical_cell(tensor, slice_, s, r, k, xs[k], y, cell_w, show_values)
                )
            y += G["logical_h"]
        width = max(x, self.width) + pad
        height = y + pad
        if panel:
            items.insert(0, Rect(0, 0, width, height, c["panel_bg"], c["panel_stroke"], rx=4))
        self.items, self.width = saved, saved_width
        return [*items, height, width]

    def _logical_cell(self, tensor, slice_, s, r, k, x, y, cell_w, show_values) -> Group:
        c = self.colours
        address = slice_["addr"][r][k]
        storage_id = tensor["storage"]
        text = self.lookup.read(tensor, address, "text")
        value = self.lookup.read(tensor, address, "value")
        storage = self.lookup.storages.get(storage_id)
        has_values = storage is not None and storage["cells"]["text"] is not None
        w, h = cell_w - 3, G["logical_h"] - 3
        scale = (
            None
            if show_values or not has_values
            else viridis(
                value, (tensor.get("reads") or {}).get("value_range") or storage.get("value_range")
            )
        )
        fill, ink, muted_ink = c["cell_bg"], c["text"], c["text_muted"]
        if scale:
            fill, ink = scale
            muted_ink = ink
        body: list = [
            Rect(x, y, w, h, fill, c["cell_stroke"], rx=3),
            Rect(x, y, 4, h, ("pattern", tensor["order"])),
        ]
        addr = f"@{group_digits(address)}" if address is not None else "@?"
        if not has_values:
            body.append(self.text(x + w / 2 + 2, y + h / 2 + 4, addr, fill=ink, anchor="middle"))
        else:
            if show_values:
                body.append(
                    self.text(
                        x + w / 2 + 2,
                        y + 12,
                        "?" if text is None else text,
                        fill=ink,
                        anchor="middle",
                    )
                )
            body.append(
                self.text(
                    x + w / 2 + 2,
                    y + h - 4,
                    addr,
                    size=G["font_size_small"],
                    fill=muted_ink,
                    anchor="middle",
                )
            )
        at = logical_index(slice_, r, k)
        index = ",".join(map(str, at))
        tip = f"{tensor['name']}[{', '.join(map(str, at))}] → storage[{address}]"
        if text is not None:
            tip += f" = {text}"
        return Group(
            "sws-lcell",
            body,
            {"tensor": tensor["id"], "slice": s, "r": r, "c": k, "addr": address, "index": index},
            tip,
        )


def _translated(items: list, dx: float, dy: float) -> list:
    """``items`` moved by (dx, dy) (in place: the items were built for this one use)."""
    for item in items:
        if isinstance(item, Group):
            _translated(item.children, dx, dy)
        elif isinstance(item, Path):
            item.commands = [
                (op, *[v + (dx if i % 2 == 0 else dy) for i, v in enumerate(values)])
                for op, *values in item.commands
            ]
        else:
            item.x += dx
            item.y += dy
    return items


def draw(scene: Mapping[str, Any], theme: str = "light") -> Picture:
    """The picture of ``scene`` (see the module docstring) in ``theme`` ("light" or "dark").

    >>> import torch
    >>> from stridewidget.scene.build import build_scene
    >>> picture = draw(build_scene({"x": torch.arange(6.0).reshape(2, 3)}))
    >>> arrows = [i for i in picture.items if isinstance(i, Group) and i.cls == "sws-arrow"]
    >>> picture.width <= MAX_WIDTH + PAD, [a.data["dim"] for a in arrows]
    (True, ['1', '0'])
    """
    builder = _Builder(scene, theme)
    tensors = list(scene.get("tensors", []))
    y = 4.0
    for storage in scene.get("storages", []):
        members = [t for t in tensors if t["storage"] == storage["id"]]
        y = builder.storage(storage, members, y) + 6
    x, row_h = 0.0, 0.0
    for tensor in tensors:
        items, w, h = builder.card(tensor)
        if x > 0 and x + w > MAX_WIDTH:
            x, y, row_h = 0.0, y + row_h + G["panel_gap"], 0.0
        builder.items.extend(_translated(items, x, y))
        builder.width = max(builder.width, x + w)
        x += w + G["panel_gap"]
        row_h = max(row_h, h)
    y += row_h + 6
    for name in scene.get("released", []):
        y += G["line_h"]
        builder.items.append(
            builder.text(
                PAD,
                y,
                f"{name}: snapshot — the tensor was freed; this shows its layout when drawn",
                muted=True,
            )
        )
    title = "memory layout of " + ", ".join(t["name"] for t in tensors)
    return Picture(max(builder.width, 240.0), y + 8, theme, builder.items, title, tensors)
