"""Static renderers of a scene: inline SVG, an HTML fallback (no JS, no kernel) and plain text.

They draw the same picture as the widget — storage grid, logical grid(s), stride arrows — from the
scene of :func:`stridewidget._scene.build_scene`, and do no layout math of their own beyond turning
an index into coordinates (addresses, touch counts and values all come from the scene).  They are
what a notebook shows where no kernel runs (nbviewer, GitHub, ``nbconvert`` without widget state)
and what a terminal prints.

Every string that comes from the scene (tensor names, value texts, explanations) is escaped: a
tensor named ``<img onerror=...>`` is drawn as that text.  Tensors differ by colour *and* by a fill
pattern and a letter mark (A, B, ...), so they stay apart for colour-blind readers.
"""

from __future__ import annotations

import hashlib
import html
import json
from collections.abc import Mapping
from typing import Any

from ._validate import validate_scene

__all__ = ["render_html", "render_svg", "render_text", "scene_of"]

# Okabe-Ito colours and one texture per tensor: the same order as the widget (js/dom.js).
TENSOR_COLOURS = ("#E69F00", "#56B4E9", "#009E73", "#CC79A7", "#0072B2", "#D55E00", "#F0E442")
PATTERNS = ("solid", "diagonal", "dots", "vertical", "cross", "horizontal", "antidiagonal")
# viridis at 5 stops: perceptually ordered and colour-blind safe (as the widget).
VIRIDIS = ((68, 1, 84), (59, 82, 139), (33, 145, 140), (94, 201, 98), (253, 231, 37))

# Geometry in px, close to the widget's so both pictures read the same.
CELL_W, CELL_H, STRIP_H, ROW_GAP = 46, 34, 11, 4
ROW_LABEL_W, ARROW_LANE, GAP_H = 70, 16, 24
LOGICAL_W, LOGICAL_H, ELLIPSIS_W, ELLIPSIS_H, INDEX_W, INDEX_H = 42, 26, 20, 16, 34, 16
CHAR_W = 6.7  # monospace 11 px
LINE_H = 18
PAD = 10

# Styling as presentation attributes, not a <style> sheet: HTML sanitizers (notebook viewers)
# drop <style> elements, and a rect without a fill would turn black.
_FONT = {
    "font_family": "ui-monospace, SFMono-Regular, Menlo, Consolas, monospace",
    "font_size": 11,
    "fill": "#222",
}
_PRESENTATION: dict[str, dict[str, Any]] = {
    "sws-title": {"font_size": 13, "font_weight": "bold"},
    "sws-muted": {"fill": "#666"},
    "sws-gap-box": {"fill": "#f4f4f4", "stroke": "#aaa", "stroke_dasharray": "4 3"},
    "sws-strip-label": {
        "font_size": 9,
        "font_weight": "bold",
        "fill": "#000",
        "paint_order": "stroke",
        "stroke": "#fff",
        "stroke_width": 2,
    },
    "sws-count": {"font_size": 10, "font_weight": "bold"},
    "sws-arrow-line": {"fill": "none", "stroke_width": 1.6},
    "sws-arrow-label": {"font_size": 10},
    "sws-arrow-label-bg": {"fill": "#fff", "opacity": 0.85},
}
_CELL_BG = {"fill": "#fff", "stroke": "#888", "stroke_width": 1}
_UNTOUCHED_BG = {"fill": "#e4e4e4", "stroke": "#bbb", "stroke_width": 1, "stroke_dasharray": "3 2"}
_MULTI_BG = {"fill": "#fff", "stroke": "#000", "stroke_width": 2}

# ``render_html``'s wrapper: a white card, so the picture reads the same in light and dark themes.
_HTML_STYLE = (
    "background:#fff;color:#222;padding:8px;border:1px solid #ccc;border-radius:4px;"
    "display:inline-block;max-width:100%;overflow-x:auto;"
    "font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px"
)


# --- input ----------------------------------------------------------------------------------------


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
    if wrap is not None and (not isinstance(wrap, int) or isinstance(wrap, bool) or wrap < 1):
        raise ValueError(f"wrap must be a positive int (storage cells per row), got {wrap!r}")
    if len(tensors) == 1 and not named:
        only = tensors[0]
        given = None
        if isinstance(only, Mapping) and "storages" in only and "tensors" in only:
            given = only
        elif isinstance(getattr(only, "scene", None), Mapping):  # a StrideWidget (duck-typed)
            given = only.scene
            if wrap is None:
                wrap = getattr(only, "wrap", None)
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
    from ._scene import build_scene

    mapping: dict[str, Any] = {f"t{i}": obj for i, obj in enumerate(tensors)}
    clash = set(mapping) & set(named)
    if clash:
        raise TypeError(f"names {sorted(clash)} are used both positionally and as keywords")
    mapping.update(named)
    return build_scene(mapping, wrap=wrap)


class _Index:
    """Lookups over a scene: storage by id, position of a storage cell among the shown cells."""

    def __init__(self, scene: Mapping[str, Any]) -> None:
        self.storages = {s["id"]: s for s in scene.get("storages", [])}
        self.position = {
            s["id"]: {cell: i for i, cell in enumerate(s["cells"]["index"])}
            for s in scene.get("storages", [])
        }

    def text(self, storage_id: str, cell: int | None) -> str | None:
        storage = self.storages.get(storage_id)
        if storage is None or cell is None or storage["cells"]["text"] is None:
            return None
        i = self.position[storage_id].get(cell)
        return None if i is None else storage["cells"]["text"][i]

    def value(self, storage_id: str, cell: int | None) -> float | None:
        storage = self.storages.get(storage_id)
        if storage is None or cell is None or storage["cells"]["value"] is None:
            return None
        i = self.position[storage_id].get(cell)
        return None if i is None else storage["cells"]["value"][i]


def _logical_index(slice_: Mapping[str, Any], r: int, c: int) -> list[int]:
    index = list(slice_["lead"])
    if slice_["rows"] is not None:
        index.append(slice_["rows"][r])
    if slice_["cols"] is not None:
        index.append(slice_["cols"][c])
    return index


def _group_digits(n: int) -> str:
    return f"{n:,}"


def _stride_label(stride: int) -> str:
    return f"+{stride}" if stride >= 0 else f"−{-stride}"


def _scale_colour(value: float | None, value_range: Any) -> str | None:
    if value is None or not value_range:
        return None
    lo, hi = value_range
    t = min(1.0, max(0.0, (value - lo) / (hi - lo))) if hi > lo else 0.5
    position = t * (len(VIRIDIS) - 1)
    k = min(len(VIRIDIS) - 2, int(position))
    f = position - k
    mix = [round(a + (b - a) * f) for a, b in zip(VIRIDIS[k], VIRIDIS[k + 1])]
    return f"rgb({mix[0]},{mix[1]},{mix[2]})"


# --- SVG building ---------------------------------------------------------------------------------


def _dashed(attributes: Mapping[str, Any]) -> dict[str, Any]:
    return {k.replace("_", "-"): v for k, v in attributes.items()}


def _attrs(attributes: Mapping[str, Any]) -> str:
    return "".join(
        f' {key}="{html.escape(str(value), quote=True)}"'
        for key, value in attributes.items()
        if value is not None
    )


def _el(tag: str, text: str | None = None, /, **attributes: Any) -> str:
    """One SVG element; attribute names use ``_`` for ``-`` and a trailing ``_`` for keywords.

    A ``class_`` brings its presentation attributes (``_PRESENTATION``); explicit ones win.
    """
    attributes = {**_PRESENTATION.get(attributes.get("class_", ""), {}), **attributes}
    attrs = _attrs({k.rstrip("_").replace("_", "-"): v for k, v in attributes.items()})
    if text is None:
        return f"<{tag}{attrs}/>"
    return f"<{tag}{attrs}>{html.escape(text, quote=False)}</{tag}>"


def _pattern_defs(uid: str, tensors: list[Mapping[str, Any]]) -> str:
    parts = []
    ink = {"stroke": "rgba(0,0,0,0.55)", "stroke_width": 1.2}
    for tensor in tensors:
        order = tensor["order"]
        kind = PATTERNS[order % len(PATTERNS)]
        body = _el("rect", width=6, height=6, fill=TENSOR_COLOURS[order % len(TENSOR_COLOURS)])
        path = {
            "diagonal": "M0,6 L6,0",
            "antidiagonal": "M0,0 L6,6",
            "vertical": "M3,0 L3,6",
            "horizontal": "M0,3 L6,3",
            "cross": "M0,3 L6,3 M3,0 L3,6",
        }.get(kind)
        if path:
            body += _el("path", d=path, **ink)
        if kind == "dots":
            body += _el("circle", cx=3, cy=3, r=1.3, fill="rgba(0,0,0,0.55)")
        parts.append(
            f'<pattern id="{uid}-p{order}" width="6" height="6" patternUnits="userSpaceOnUse">'
            f"{body}</pattern>"
        )
    for tensor in tensors:
        colour = TENSOR_COLOURS[tensor["order"] % len(TENSOR_COLOURS)]
        parts.append(
            f'<marker id="{uid}-m{tensor["order"]}" viewBox="0 0 10 10" refX="9" refY="5" '
            f'markerWidth="7" markerHeight="7" orient="auto-start-reverse">'
            f'<path d="M 0 0 L 10 5 L 0 10 z" fill="{colour}" stroke="#000" stroke-width="0.8"/>'
            f"</marker>"
        )
    return "<defs>" + "".join(parts) + "</defs>"


def _swatch(uid: str, tensor: Mapping[str, Any], x: float, y: float) -> str:
    return _el(
        "rect",
        x=x,
        y=y,
        width=14,
        height=14,
        rx=3,
        fill=f"url(#{uid}-p{tensor['order']})",
        stroke="#000",
    )


def _storage_items(
    storage: Mapping[str, Any], wrap: int, top: float, left: float
) -> tuple[list, list, float]:
    """Coordinates of the shown cells and gaps: a cells segment starts a new row at column
    ``start % wrap`` (so columns keep their meaning); a gap is a row of its own."""
    items: list[dict[str, Any]] = []
    row_labels: list[tuple[float, int]] = []
    y = top
    position = 0
    for segment in storage["segments"]:
        if segment["kind"] == "gap":
            items.append({"kind": "gap", "segment": segment, "x": left, "y": y})
            y += GAP_H + ROW_GAP
            continue
        col = segment["start"] % wrap
        row_labels.append((y, segment["start"] - col))
        for cell in range(segment["start"], segment["stop"]):
            if col == wrap:
                y += CELL_H + ROW_GAP
                col = 0
                row_labels.append((y, cell))
            items.append(
                {"kind": "cell", "cell": cell, "i": position, "x": left + col * CELL_W, "y": y}
            )
            position += 1
            col += 1
        y += CELL_H + ROW_GAP
    return items, row_labels, y


def _storage_svg(
    uid: str, storage: Mapping[str, Any], members: list[Mapping[str, Any]], top: float
) -> tuple[list[str], float, float]:
    """SVG parts of one storage (header, grid, arrows), its width and its bottom y."""
    wrap = max(1, int(storage["wrap"]))
    parts = []
    header = (
        f"storage {storage['id']} · {storage['dtype']} · {_group_digits(storage['size'])} elements "
        f"× {storage['itemsize']} B = {_group_digits(storage['nbytes'])} B · {storage['device']}"
    )
    parts.append(_el("text", header, x=PAD, y=top + 14, class_="sws-title"))
    names = "  ".join(f"{t['mark']} = {t['name']}" for t in members)
    parts.append(_el("text", f"read by: {names}", x=PAD, y=top + 14 + LINE_H, class_="sws-muted"))
    # Room above the grid for the arcs of stride arrows that stay in one row (and stride-0 loops).
    probe, _, _ = _storage_items(storage, wrap, 0, 0)
    row_of = {item["cell"]: item["y"] for item in probe if item["kind"] == "cell"}
    arcs = sum(
        1
        for t in members
        for a in t["arrows"]
        if a["from"] in row_of and row_of[a["from"]] == row_of.get(a["to"])
    )
    grid_top = top + 2 * LINE_H + (ARROW_LANE * arcs + 12 if arcs else 4)
    # Room left of the row labels for arrows between rows: their lanes and their labels.
    cross = [
        a
        for t in members
        for a in t["arrows"]
        if a["from"] in row_of and row_of[a["from"]] != row_of.get(a["to"])
    ]
    label_room = max(
        (len(_arrow_label(a, "A" if len(members) > 1 else "")) * 6.2 + 16 for a in cross), default=0
    )
    left = PAD + label_room + ARROW_LANE * len(cross) + ROW_LABEL_W
    items, row_labels, bottom = _storage_items(storage, wrap, grid_top, left)
    width = left + wrap * CELL_W + PAD

    texts = storage["cells"]["text"]
    values = storage["cells"]["value"]
    show_text = texts is not None and storage["text_width"] * CHAR_W <= CELL_W - 6
    value_range = storage.get("value_range")
    for y, first_cell in row_labels:
        parts.append(
            _el(
                "text",
                _group_digits(first_cell),
                x=left - 6,
                y=y + 13,
                text_anchor="end",
                class_="sws-muted",
            )
        )
    positions: dict[int, dict[str, Any]] = {}
    for item in items:
        if item["kind"] == "gap":
            segment = item["segment"]
            count = segment["stop"] - segment["start"]
            what = "cells not shown" if segment["in_span"] else "cells untouched"
            label = (
                f"⋯ {_group_digits(count)} {what} "
                f"[{_group_digits(segment['start'])} … {_group_digits(segment['stop'] - 1)}] ⋯"
            )
            w = wrap * CELL_W - 2
            parts.append(
                '<g class="sws-gap">'
                + _el(
                    "rect",
                    x=item["x"],
                    y=item["y"],
                    width=w,
                    height=GAP_H - 2,
                    rx=4,
                    class_="sws-gap-box",
                )
                + _el(
                    "text",
                    label,
                    x=item["x"] + w / 2,
                    y=item["y"] + GAP_H / 2 + 3,
                    text_anchor="middle",
                )
                + "</g>"
            )
            continue
        positions[item["cell"]] = item
        parts.append(
            _storage_cell(uid, storage, members, item, show_text, texts, values, value_range)
        )
    arrow_parts, arrows_right = _arrows_svg(uid, members, positions, left - ROW_LABEL_W + 8)
    parts.extend(arrow_parts)
    width = max(width, arrows_right + PAD)
    if texts is not None and not show_text and value_range:
        lo, hi = value_range
        note = f"values too wide for the cells: colour = value (viridis, dark {lo:.4g} … light {hi:.4g}); hover for values"
        parts.append(_el("text", note, x=left, y=bottom + 8, class_="sws-muted"))
        bottom += LINE_H
    return parts, width, bottom


def _storage_cell(
    uid: str,
    storage: Mapping[str, Any],
    members: list[Mapping[str, Any]],
    item: Mapping[str, Any],
    show_text: bool,
    texts: list[str] | None,
    values: list[float | None] | None,
    value_range: Any,
) -> str:
    i, cell = item["i"], item["cell"]
    w, h = CELL_W - 2, CELL_H - 2
    readers = [(t, t["touch"][i]) for t in members if t["touch"][i] != 0]
    classes = ["sws-scell"] if readers else ["sws-scell", "sws-untouched"]
    max_count = max((count or 0 for _, count in readers), default=0)
    if max_count > 1:
        classes.append("sws-multi")
    value = values[i] if values is not None else None
    fill = None if show_text or not readers else _scale_colour(value, value_range)
    look = _MULTI_BG if max_count > 1 else _CELL_BG if readers else _UNTOUCHED_BG
    body = [
        _el(
            "rect",
            width=w,
            height=h,
            rx=3,
            class_="sws-cell-bg",
            **{**look, "fill": fill or look["fill"]},
        )
    ]
    if readers:
        piece = w / len(readers)
        for k, (tensor, count) in enumerate(readers):
            body.append(
                _el(
                    "rect",
                    x=k * piece,
                    y=0,
                    width=piece,
                    height=STRIP_H,
                    fill=f"url(#{uid}-p{tensor['order']})",
                )
            )
            mark = tensor["mark"] + ("?" if count is None else f"×{count}" if count > 1 else "")
            if piece >= len(mark) * 5.5 + 2:
                body.append(
                    _el(
                        "text",
                        mark,
                        x=k * piece + piece / 2,
                        y=STRIP_H - 2,
                        text_anchor="middle",
                        class_="sws-strip-label",
                    )
                )
    if max_count > 1:
        body.append(
            _el("text", f"×{max_count}", x=w - 3, y=h - 3, text_anchor="end", class_="sws-count")
        )
    if show_text and texts is not None:
        shift = 6 if max_count > 1 else 0  # leave the corner to the count
        body.append(
            _el(
                "text",
                texts[i],
                x=w / 2 - shift,
                y=STRIP_H + (h - STRIP_H) / 2 + 4,
                text_anchor="middle",
                fill=None if readers else "#888",
            )
        )
    tip = [f"storage[{cell}]"]
    if texts is not None:
        tip.append(f"= {texts[i]}")
    tip.extend(f"· {t['name']} reads it {'?' if n is None else n}×" for t, n in readers)
    if not readers:
        tip.append("· not read by any shown tensor")
    body.append(_el("title", " ".join(tip)))
    return (
        f'<g class="{" ".join(classes)}" data-storage="{html.escape(storage["id"])}" '
        f'data-cell="{cell}" transform="translate({item["x"]},{item["y"]})">'
        + "".join(body)
        + "</g>"
    )


def _arrow_label(arrow: Mapping[str, Any], mark: str) -> str:
    label = f"dim {arrow['dim']}: {_stride_label(arrow['stride'])}"
    return f"{mark} {label}" if mark else label


def _arrows_svg(
    uid: str,
    members: list[Mapping[str, Any]],
    positions: Mapping[int, Mapping[str, Any]],
    lanes_right: float,
) -> tuple[list[str], float]:
    """Each tensor's stride arrows (element 0 → its neighbour along each dim) in its colour."""
    parts = []
    prefix_marks = len(members) > 1
    rightmost = 0.0  # of the labels, so the picture is wide enough for them
    arc = 0  # arcs above the grid, stacked in lanes
    side = 0  # curves left of the row labels (arrows between rows), stacked outwards
    for tensor in members:
        colour = TENSOR_COLOURS[tensor["order"] % len(TENSOR_COLOURS)]
        dash = None if tensor["order"] % 2 == 0 else "6 3"  # a second cue besides hue
        for arrow in tensor["arrows"]:
            start, end = positions.get(arrow["from"]), positions.get(arrow["to"])
            if start is None or end is None:
                continue
            label = _arrow_label(arrow, tensor["mark"] if prefix_marks else "")
            if start["y"] == end["y"]:
                lift = ARROW_LANE * (arc + 1) + 4
                top = start["y"]
                control = top - lift / 0.75  # puts the curve's apex at `top - lift`
                if arrow["from"] == arrow["to"]:  # stride 0: a loop on the cell
                    cx = start["x"] + CELL_W / 2
                    d = f"M {cx - 6} {top} C {cx - 14} {control}, {cx + 14} {control}, {cx + 6} {top}"
                    right = cx + 12
                else:  # same row: an arc above
                    x1, x2 = start["x"] + CELL_W / 2, end["x"] + CELL_W / 2
                    d = f"M {x1} {top} C {x1} {control}, {x2} {control}, {x2} {top}"
                    right = max(x1, x2) + 4
                # beside the apex, not on it: the label must not hide its own arc
                anchor = "start"
                lx, ly = right + 2, top - lift + 4
                arc += 1
            else:  # another row: out to the left (below the row labels) and back
                x1, y1 = start["x"] + 2, start["y"] + CELL_H - 9
                x2, y2 = end["x"] + 2, end["y"] + CELL_H - 9
                bend = lanes_right - ARROW_LANE * (side + 1)
                d = f"M {x1} {y1} C {bend} {y1}, {bend} {y2}, {x2} {y2}"
                anchor = "end"
                # one text line per arrow, so labels of arrows with equal ends never overlap
                lx, ly = bend - 3, min(y1, y2) + 14 + 14 * side
                side += 1
            width = len(label) * 6.2 + 6
            box_x = lx - 3 if anchor == "start" else lx - width + 3
            rightmost = max(rightmost, box_x + width)
            parts.append(
                f'<g class="sws-arrow" data-tensor="{html.escape(tensor["id"])}" data-dim="{arrow["dim"]}">'
                + _el(
                    "path",
                    d=d,
                    class_="sws-arrow-line",
                    stroke=colour,
                    stroke_dasharray=dash,
                    marker_end=f"url(#{uid}-m{tensor['order']})",
                )
                + _el(
                    "rect",
                    x=box_x,
                    y=ly - 10,
                    width=width,
                    height=13,
                    rx=3,
                    class_="sws-arrow-label-bg",
                )
                + _el("text", label, x=lx, y=ly, text_anchor=anchor, class_="sws-arrow-label")
                + "</g>"
            )
    return parts, rightmost


def _logical_svg(
    uid: str, tensor: Mapping[str, Any], index: _Index, top: float
) -> tuple[list[str], float, float]:
    """SVG parts of one tensor's logical grid(s), its width and its bottom y."""
    parts = [_swatch(uid, tensor, PAD, top + 2)]
    parts.append(
        _el(
            "text",
            f"{tensor['mark']}  {tensor['name']}: {tensor['layout']['text']}",
            x=PAD + 20,
            y=top + 14,
            class_="sws-title",
        )
    )
    width = PAD + 20 + len(tensor["name"] + tensor["layout"]["text"]) * 8.2 + 40
    y = top + LINE_H + 6
    storage = index.storages.get(tensor["storage"])
    has_text = storage is not None and storage["cells"]["text"] is not None
    fits = has_text and storage["text_width"] * CHAR_W <= LOGICAL_W - 4
    logical = tensor["logical"]
    if not logical["slices"]:
        parts.append(_el("text", "empty tensor: no elements", x=PAD, y=y + 14, class_="sws-muted"))
        return parts, width, y + LINE_H + 4
    left = PAD + INDEX_W
    for s, slice_ in enumerate(logical["slices"]):
        if slice_["kind"] == "gap":
            text = (
                f"⋮ {slice_['count']} more slices not shown"
                if slice_["dim"] is None
                else f"⋮ {slice_['count']} slices along dim {slice_['dim']} not shown"
            )
            parts.append(_el("text", text, x=left, y=y + 14, class_="sws-muted"))
            y += 20
            continue
        if logical["ndim"] > 2:
            parts.append(_el("text", f"{tensor['name']}{slice_['label']}", x=PAD, y=y + 13))
            y += 18
        rows = slice_["rows"] if slice_["rows"] is not None else [None]
        cols = slice_["cols"] if slice_["cols"] is not None else [None]
        xs = []
        x = left
        for col in cols:
            xs.append(x)
            x += ELLIPSIS_W if (col is None and slice_["cols"] is not None) else LOGICAL_W
        width = max(width, x + PAD)
        if slice_["cols"] is not None:
            for c, col in enumerate(cols):
                w = LOGICAL_W if col is not None else ELLIPSIS_W
                parts.append(
                    _el(
                        "text",
                        "⋯" if col is None else str(col),
                        x=xs[c] + w / 2,
                        y=y + 12,
                        text_anchor="middle",
                        class_="sws-muted",
                    )
                )
            y += INDEX_H
        for r, row in enumerate(rows):
            if slice_["rows"] is not None and row is None:
                parts.append(
                    _el("text", "⋮", x=left - 6, y=y + 12, text_anchor="end", class_="sws-muted")
                )
                y += ELLIPSIS_H
                continue
            if slice_["rows"] is not None:
                parts.append(
                    _el(
                        "text",
                        str(row),
                        x=left - 6,
                        y=y + LOGICAL_H / 2 + 4,
                        text_anchor="end",
                        class_="sws-muted",
                    )
                )
            for c, col in enumerate(cols):
                if slice_["cols"] is not None and col is None:
                    parts.append(
                        _el(
                            "text",
                            "⋯",
                            x=xs[c] + ELLIPSIS_W / 2,
                            y=y + LOGICAL_H / 2 + 4,
                            text_anchor="middle",
                            class_="sws-muted",
                        )
                    )
                    continue
                parts.append(_logical_cell(uid, tensor, index, slice_, s, r, c, xs[c], y, fits))
            y += LOGICAL_H
        y += 10
    return parts, width, y


def _logical_cell(
    uid: str,
    tensor: Mapping[str, Any],
    index: _Index,
    slice_: Mapping[str, Any],
    s: int,
    r: int,
    c: int,
    x: float,
    y: float,
    fits: bool,
) -> str:
    address = slice_["addr"][r][c]
    storage_id = tensor["storage"]
    text = index.text(storage_id, address)
    value = index.value(storage_id, address)
    w, h = LOGICAL_W - 2, LOGICAL_H - 2
    storage = index.storages.get(storage_id)
    value_range = storage.get("value_range") if storage else None
    fill = None if fits else _scale_colour(value, value_range)
    body = [
        _el(
            "rect",
            width=w,
            height=h,
            rx=3,
            class_="sws-cell-bg",
            **{**_CELL_BG, "fill": fill or "#fff"},
        )
    ]
    body.append(_el("rect", width=4, height=h, fill=f"url(#{uid}-p{tensor['order']})"))
    if storage is not None and storage["cells"]["text"] is None:
        body.append(
            _el(
                "text",
                f"@{address}",
                x=w / 2 + 2,
                y=h / 2 + 4,
                text_anchor="middle",
                class_="sws-muted",
            )
        )
    elif fits and text is not None:
        body.append(_el("text", text, x=w / 2 + 2, y=h / 2 + 4, text_anchor="middle"))
    logical_index = ", ".join(str(i) for i in _logical_index(slice_, r, c))
    tip = f"{tensor['name']}[{logical_index}] → storage[{address}]"
    if text is not None:
        tip += f" = {text}"
    body.append(_el("title", tip))
    return (
        f'<g class="sws-lcell" data-tensor="{html.escape(tensor["id"])}" data-slice="{s}" '
        f'data-r="{r}" data-c="{c}" data-addr="{address}" transform="translate({x},{y})">'
        + "".join(body)
        + "</g>"
    )


def render_svg(*tensors: Any, wrap: int | None = None, **named: Any) -> str:
    """A standalone SVG of the storage grid(s), the stride arrows and each tensor's logical grid.

    Takes tensors/arrays/:class:`~stridewidget.Layout` objects (positional ones are named ``t0``,
    ``t1``, ...), a scene from :func:`~stridewidget._scene.build_scene`, or a ``StrideWidget``.
    ``wrap`` sets the storage cells per row (default: the scene's choice, rows of ``C`` for a
    contiguous ``(R, C)`` base).

    >>> import torch, stridewidget as sw
    >>> x = torch.arange(6.0).reshape(2, 3)
    >>> svg = sw.render_svg(x=x, xt=x.t())
    >>> svg.startswith("<svg") and "dim 1: +3" in svg and "xt[2, 1] → storage[5] = 5." in svg
    True
    """
    scene = scene_of(*tensors, wrap=wrap, **named)
    index = _Index(scene)
    # Pattern/marker ids must not clash between pictures on one page: derive them from the scene
    # (same picture, same ids: harmless; any difference, different ids).
    uid = (
        "sw"
        + hashlib.blake2b(json.dumps(scene, sort_keys=True).encode(), digest_size=5).hexdigest()
    )
    parts: list[str] = []
    width = 240.0
    y = 4.0
    for storage in scene.get("storages", []):
        members = [t for t in scene.get("tensors", []) if t["storage"] == storage["id"]]
        storage_parts, storage_width, y = _storage_svg(uid, storage, members, y)
        parts.extend(storage_parts)
        width = max(width, storage_width)
        y += 8
    for tensor in scene.get("tensors", []):
        tensor_parts, tensor_width, y = _logical_svg(uid, tensor, index, y)
        parts.extend(tensor_parts)
        width = max(width, tensor_width)
    for name in scene.get("released", []):
        parts.append(
            _el(
                "text",
                f"{name}: freed (the widget holds no reference)",
                x=PAD,
                y=y + 14,
                class_="sws-muted",
            )
        )
        y += LINE_H
    height = y + 6
    title = "memory layout of " + ", ".join(t["name"] for t in scene.get("tensors", []))
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="sws-svg" role="img" width="{width:.0f}" '
        f'height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}"{_attrs(_dashed(_FONT))}>'
        + _el("title", title)
        + _el("rect", width="100%", height="100%", fill="#fff")
        + _pattern_defs(uid, list(scene.get("tensors", [])))
        + "".join(parts)
        + "</svg>"
    )


def render_html(*tensors: Any, wrap: int | None = None, **named: Any) -> str:
    """Static HTML: the inline SVG plus each tensor's facts and ``explain()`` — no JS, no kernel.

    This is the ``text/html`` fallback in the widget's mime bundle (nbviewer, GitHub, nbconvert
    without widget state).  Every string is escaped.

    >>> import torch, stridewidget as sw
    >>> page = sw.render_html(**{"<img src=x onerror=alert(1)>": torch.zeros(2)})
    >>> "<img" in page, "&lt;img src=x onerror=alert(1)&gt;" in page
    (False, True)
    """
    scene = scene_of(*tensors, wrap=wrap, **named)
    facts = []
    for tensor in scene.get("tensors", []):
        layout = tensor["layout"]
        rows = [
            ("shape", str(tuple(layout["shape"]))),
            (
                "strides",
                f"{tuple(layout['strides'])} elements = {tuple(layout['byte_strides'])} bytes",
            ),
            ("offset", f"{layout['offset']} elements"),
            ("dtype / device", f"{layout['dtype']} / {layout['device']}"),
            (
                "storage",
                f"{_group_digits(layout['storage_size'])} elements ({_group_digits(layout['storage_nbytes'])} B)",
            ),
            (
                "touched",
                f"{_group_digits(layout['touched'])} of {_group_digits(layout['storage_size'])} storage elements",
            ),
        ]
        flags = [
            name
            for key, name in (
                ("is_contiguous", "C-contiguous"),
                ("is_f_contiguous", "F-contiguous"),
                ("is_channels_last", "channels-last"),
                ("is_dense", "dense"),
                ("has_overlap", "overlapping"),
            )
            if layout.get(key)
        ]
        rows.append(("flags", ", ".join(flags) or "none"))
        table = "".join(
            f'<tr><th style="text-align:left;padding-right:8px">{html.escape(k)}</th>'
            f"<td>{html.escape(v)}</td></tr>"
            for k, v in rows
        )
        facts.append(
            f"<details><summary>{html.escape(tensor['mark'])} {html.escape(tensor['name'])}: "
            f"{html.escape(layout['text'])}</summary><table>{table}</table>"
            f'<pre style="white-space:pre-wrap;margin:4px 0">{html.escape(layout["explain"])}</pre>'
            "</details>"
        )
    return (
        f'<div class="stridewidget-fallback" style="{_HTML_STYLE}">'
        + render_svg(scene)
        + "".join(facts)
        + "</div>"
    )


# --- text -----------------------------------------------------------------------------------------


def _storage_text(storage: Mapping[str, Any], members: list[Mapping[str, Any]]) -> list[str]:
    wrap = max(1, int(storage["wrap"]))
    texts = storage["cells"]["text"]
    marks_of = []
    for i in range(len(storage["cells"]["index"])):
        marks = ""
        for tensor in members:
            count = tensor["touch"][i]
            if count == 0:
                continue
            marks += tensor["mark"] + ("?" if count is None else f"×{count}" if count > 1 else "")
        marks_of.append(marks or "·")
    width = max([4, *(len(m) for m in marks_of), *(len(t) for t in texts or ())]) + 1
    label_width = len(_group_digits(storage["size"]))
    lines = [
        f"storage {storage['id']} · {storage['dtype']} · {_group_digits(storage['size'])} elements · "
        f"{storage['device']} · rows of {wrap}"
        + ("" if texts is not None else " · no values (meta / layout only)")
    ]

    def row(start: int, positions: list[int]) -> None:
        """One storage row: its values line (when there are values), then its readers line."""
        pad = " " * (width * (start % wrap))
        head = _group_digits(start - start % wrap).rjust(label_width)
        marks = pad + "".join(marks_of[p].rjust(width) for p in positions)
        if texts is None:
            lines.append(f"  {head} |{marks}")
            return
        lines.append(f"  {head} |" + pad + "".join(texts[p].rjust(width) for p in positions))
        lines.append(f"  {'':>{label_width}} |{marks}")

    position = 0
    for segment in storage["segments"]:
        if segment["kind"] == "gap":
            count = segment["stop"] - segment["start"]
            what = "cells not shown" if segment["in_span"] else "cells untouched"
            lines.append(
                f"  {'':>{label_width}}  ⋯ {_group_digits(count)} {what} "
                f"[{_group_digits(segment['start'])} … {_group_digits(segment['stop'] - 1)}] ⋯"
            )
            continue
        start = segment["start"]
        row_positions: list[int] = []
        for cell in range(segment["start"], segment["stop"]):
            if row_positions and cell % wrap == 0:
                row(start, row_positions)
                start, row_positions = cell, []
            row_positions.append(position)
            position += 1
        if row_positions:
            row(start, row_positions)
    return lines


def _logical_text(tensor: Mapping[str, Any], index: _Index) -> list[str]:
    lines = []
    storage_id = tensor["storage"]
    logical = tensor["logical"]
    has_values = index.storages[storage_id]["cells"]["text"] is not None

    def cell_text(address: int | None) -> str:
        if not has_values:
            return f"@{address}"
        text = index.text(storage_id, address)
        return "?" if text is None else text

    texts = [
        cell_text(a)
        for s in logical["slices"]
        if s["kind"] == "slice"
        for row in s["addr"]
        for a in row
        if a is not None
    ]
    width = max([1, *(len(t) for t in texts)])
    if not logical["slices"]:
        lines.append("  (empty: no elements)")
    for slice_ in logical["slices"]:
        if slice_["kind"] == "gap":
            where = "" if slice_["dim"] is None else f" along dim {slice_['dim']}"
            lines.append(f"  ⋮ {slice_['count']} slices{where} not shown")
            continue
        if logical["ndim"] > 2:
            lines.append(f"  {tensor['name']}{slice_['label']}")
        for r, row in enumerate(slice_["addr"]):
            if slice_["rows"] is not None and slice_["rows"][r] is None:
                lines.append("    ⋮")
                continue
            cells = [
                "…".rjust(width)
                if slice_["cols"] is not None and slice_["cols"][c] is None
                else cell_text(a).rjust(width)
                for c, a in enumerate(row)
            ]
            lines.append("    [" + "  ".join(cells) + "]")
    return lines


def render_text(*tensors: Any, wrap: int | None = None, **named: Any) -> str:
    """A terminal picture: each tensor's layout line (CuTe-like ``shape:strides``), its stride
    arrows, the storage strip with each cell's readers (``A``, ``B×2``; ``·`` = untouched) and the
    logical grid(s).

    >>> import torch, stridewidget as sw
    >>> print(sw.render_text(e=torch.arange(3.0).expand(2, 3)))
    A e: float32 (2,3):(0,1) +0 · storage 3 · overlapping
      arrows: dim 0: +0 (storage[0] → storage[0]), dim 1: +1 (storage[0] → storage[1])
    storage s0 · float32 · 3 elements · cpu · rows of 3
      0 |   0.   1.   2.
        |  A×2  A×2  A×2
    logical e (2, 3):
        [0.  1.  2.]
        [0.  1.  2.]
    """
    scene = scene_of(*tensors, wrap=wrap, **named)
    index = _Index(scene)
    lines: list[str] = []
    for tensor in scene.get("tensors", []):
        lines.append(f"{tensor['mark']} {tensor['name']}: {tensor['layout']['text']}")
        arrows = ", ".join(
            f"dim {a['dim']}: {_stride_label(a['stride'])} (storage[{a['from']}] → storage[{a['to']}])"
            for a in tensor["arrows"]
        )
        if arrows:
            lines.append(f"  arrows: {arrows}")
    for storage in scene.get("storages", []):
        members = [t for t in scene.get("tensors", []) if t["storage"] == storage["id"]]
        lines.extend(_storage_text(storage, members))
    for tensor in scene.get("tensors", []):
        lines.append(f"logical {tensor['name']} {tuple(tensor['logical']['shape'])}:")
        lines.extend(_logical_text(tensor, index))
    for name in scene.get("released", []):
        lines.append(f"{name}: freed (the widget holds no reference)")
    return "\n".join(line.rstrip() for line in lines)
