"""The widget's picture as a matplotlib figure (for papers and slides): storage grid, stride arrows,
logical grid(s).

Drawn from the same scene as the widget and the SVG (:mod:`stridewidget._scene`), so no layout math
happens here beyond turning an index into coordinates.  Tensors differ by colour, hatch pattern and
letter mark; names are drawn as plain text (no mathtext: a ``$`` in a name stays a ``$``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._svg import PATTERNS, TENSOR_COLOURS, _Index, _logical_index, scene_of

__all__ = ["plot"]

# The SVG's textures as matplotlib hatches, in the same order.
_HATCHES = {
    "solid": "",
    "diagonal": "///",
    "dots": "..",
    "vertical": "|||",
    "cross": "++",
    "horizontal": "---",
    "antidiagonal": "\\\\\\",
}
_UNTOUCHED = "#e4e4e4"
_STRIP = 0.28  # height of the tensor strip at the top of a storage cell, in cell units
_ROW_H, _LOGICAL_H = 1.15, 0.8  # row pitch of the storage / logical grids, in cell units
_FONT = {"family": "monospace", "size": 8}
_ARC_LANE = 0.4  # vertical room per arc above the storage grid, in cell units
_CHAR = 0.16  # width of one 8 pt monospace character, in cell units


def _colour(order: int) -> str:
    return TENSOR_COLOURS[order % len(TENSOR_COLOURS)]


def _hatch(order: int) -> str:
    return _HATCHES[PATTERNS[order % len(PATTERNS)]]


def _scale(storage: Mapping[str, Any] | None) -> tuple[Any, Any]:
    """viridis (colour-blind safe, ordered) over the storage's shown value range."""
    from matplotlib import colormaps
    from matplotlib.colors import Normalize

    value_range = storage.get("value_range") if storage else None
    return colormaps["viridis"], Normalize(*(value_range or (0.0, 1.0)))


def _text(ax: Any, x: float, y: float, s: str, **kwargs: Any) -> Any:
    return ax.text(x, y, s, parse_math=False, **{**_FONT, **kwargs})


def _arcs_above(storage: Mapping[str, Any], members: list[Mapping[str, Any]], wrap: int) -> int:
    """How many arrows stay in one storage row (drawn as arcs above the grid)."""
    row_of: dict[int, int] = {}
    row = 0
    for segment in storage["segments"]:
        if segment["kind"] == "gap":
            row += 1
            continue
        col = segment["start"] % wrap
        for cell in range(segment["start"], segment["stop"]):
            if col == wrap:
                row, col = row + 1, 0
            row_of[cell] = row
            col += 1
        row += 1
    return sum(
        1
        for t in members
        for a in t["arrows"]
        if a["from"] in row_of and row_of[a["from"]] == row_of.get(a["to"])
    )


def _arrows(ax: Any, members: list[Mapping[str, Any]], positions: Mapping[int, tuple]) -> None:
    """Each tensor's stride arrows, as the SVG draws them: arcs above the grid for arrows within a
    row (a loop for stride 0), curves out to the left for arrows between rows."""
    from matplotlib.patches import FancyArrowPatch
    from matplotlib.path import Path

    arc = side = 0
    for tensor in members:
        colour = _colour(tensor["order"])
        style = "-" if tensor["order"] % 2 == 0 else "--"  # a second cue besides hue
        prefix = f"{tensor['mark']} " if len(members) > 1 else ""
        for arrow in tensor["arrows"]:
            start, end = positions.get(arrow["from"]), positions.get(arrow["to"])
            if start is None or end is None:
                continue
            stride = arrow["stride"]
            label = f"{prefix}dim {arrow['dim']}: {'+' if stride >= 0 else '−'}{abs(stride)}"
            if start[1] == end[1]:
                lift = _ARC_LANE * (arc + 1)
                top = start[1]
                x1, x2 = (start[0] - 0.2, end[0] + 0.2) if start == end else (start[0], end[0])
                vertices = [(x1, top), (x1, top - lift - 0.2), (x2, top - lift - 0.2), (x2, top)]
                label_at, align = (max(x1, x2) + 0.12, top - lift - 0.05), "left"
                arc += 1
            else:
                y1, y2 = start[1] + 0.75, end[1] + 0.75
                x1, x2 = start[0] - 0.4, end[0] - 0.4
                bend = min(x1, x2) - 0.9 - 0.45 * side
                vertices = [(x1, y1), (bend, y1), (bend, y2), (x2, y2)]
                label_at, align = (bend + 0.25 * (min(x1, x2) - bend) - 0.1, (y1 + y2) / 2), "right"
                side += 1
            path = Path(vertices, [Path.MOVETO, Path.CURVE4, Path.CURVE4, Path.CURVE4])
            ax.add_patch(
                FancyArrowPatch(
                    path=path, arrowstyle="-|>", mutation_scale=12, color=colour,
                    linewidth=1.8, linestyle=style,
                )
            )  # fmt: skip
            _text(
                ax, *label_at, label, ha=align, va="center", size=7,
                bbox={"boxstyle": "round,pad=0.15", "facecolor": "white", "edgecolor": colour, "alpha": 0.9},
            )  # fmt: skip


def _storage(
    ax: Any, storage: Mapping[str, Any], members: list[Mapping[str, Any]], top: float
) -> float:
    """Draw one storage grid with its arrows from ``top`` (y grows downwards); return its bottom."""
    from matplotlib.patches import Rectangle

    wrap = max(1, int(storage["wrap"]))
    _text(
        ax,
        0,
        top,
        f"storage {storage['id']} · {storage['dtype']} · {storage['size']:,} elements · "
        f"{storage['device']} · read by "
        + ", ".join(f"{t['mark']} = {t['name']}" for t in members),
        weight="bold",
        va="top",
    )
    y = top + 0.8 + _ARC_LANE * _arcs_above(storage, members, wrap) + 0.3
    texts = storage["cells"]["text"]
    values = storage["cells"]["value"]
    show_text = texts is not None and storage["text_width"] <= 6
    cmap, norm = _scale(storage)
    positions: dict[int, tuple[float, float]] = {}
    position = 0
    for segment in storage["segments"]:
        if segment["kind"] == "gap":
            count = segment["stop"] - segment["start"]
            what = "cells not shown" if segment["in_span"] else "cells untouched"
            ax.add_patch(
                Rectangle((0, y), wrap, 0.7, facecolor="#f4f4f4", edgecolor="#999", linestyle="--")
            )
            _text(
                ax,
                wrap / 2,
                y + 0.35,
                f"⋯ {count:,} {what} [{segment['start']:,} … {segment['stop'] - 1:,}] ⋯",
                ha="center",
                va="center",
            )
            y += 0.7 + 0.3
            continue
        col = segment["start"] % wrap
        _text(
            ax, -0.2, y + 0.3, f"{segment['start'] - col:,}", ha="right", va="center", color="#666"
        )
        for cell in range(segment["start"], segment["stop"]):
            if col == wrap:
                y += _ROW_H
                col = 0
                _text(ax, -0.2, y + 0.3, f"{cell:,}", ha="right", va="center", color="#666")
            readers = [(t, t["touch"][position]) for t in members if t["touch"][position] != 0]
            value = values[position] if values is not None else None
            face = _UNTOUCHED
            if readers:
                face = "white" if show_text or value is None else cmap(norm(value))
            rect = Rectangle(
                (col + 0.04, y),
                0.92,
                1.0,
                facecolor=face,
                edgecolor="#888" if readers else "#bbb",
                linestyle="-" if readers else "--",
                linewidth=2.0 if any((n or 0) > 1 for _, n in readers) else 0.8,
            )
            rect.set_gid(f"scell:{storage['id']}:{cell}")
            ax.add_patch(rect)
            for k, (tensor, count) in enumerate(readers):
                piece = 0.92 / len(readers)
                strip = Rectangle(
                    (col + 0.04 + k * piece, y),
                    piece,
                    _STRIP,
                    facecolor=_colour(tensor["order"]),
                    hatch=_hatch(tensor["order"]),
                    edgecolor="#333",
                    linewidth=0.3,
                )
                strip.set_gid(f"strip:{tensor['id']}:{cell}")
                ax.add_patch(strip)
                mark = tensor["mark"] + ("?" if count is None else f"×{count}" if count > 1 else "")
                _text(
                    ax, col + 0.04 + (k + 0.5) * piece, y + _STRIP / 2, mark,
                    ha="center", va="center", size=6, weight="bold",
                )  # fmt: skip
            if show_text:
                _text(ax, col + 0.5, y + 0.65, texts[position], ha="center", va="center")
            positions[cell] = (col + 0.5, y)
            position += 1
            col += 1
        y += _ROW_H
    _arrows(ax, members, positions)
    return y + 0.4


def _logical(ax: Any, tensor: Mapping[str, Any], index: _Index, top: float) -> tuple[float, float]:
    """Draw one tensor's logical grid(s); return (right edge, bottom)."""
    from matplotlib.patches import Rectangle

    order = tensor["order"]
    ax.add_patch(
        Rectangle(
            (0, top - 0.05),
            0.5,
            0.5,
            facecolor=_colour(order),
            hatch=_hatch(order),
            edgecolor="#000",
        )
    )
    _text(
        ax, 0.7, top + 0.2, f"{tensor['mark']}  {tensor['name']}: {tensor['layout']['text']}",
        va="center", weight="bold",
    )  # fmt: skip
    y = top + 0.9
    right = 1.0
    storage = index.storages.get(tensor["storage"])
    has_values = storage is not None and storage["cells"]["text"] is not None
    fits = has_values and storage["text_width"] <= 7  # else a colour scale, as the widget
    cmap, norm = _scale(storage)
    logical = tensor["logical"]
    if not logical["slices"]:
        _text(ax, 0, y, "empty tensor: no elements", va="top", color="#666")
        return right, y + 0.8
    for slice_ in logical["slices"]:
        if slice_["kind"] == "gap":
            where = "" if slice_["dim"] is None else f" along dim {slice_['dim']}"
            _text(
                ax, 0.5, y + 0.3, f"⋮ {slice_['count']} slices{where} not shown",
                va="center", color="#666", family="DejaVu Sans",
            )  # fmt: skip
            y += 0.8
            continue
        if logical["ndim"] > 2:
            _text(ax, 0, y + 0.3, f"{tensor['name']}{slice_['label']}", va="center")
            y += 0.7
        cols = slice_["cols"] if slice_["cols"] is not None else [0]
        for r, row_addresses in enumerate(slice_["addr"]):
            if slice_["rows"] is not None and slice_["rows"][r] is None:
                _text(
                    ax,
                    0.5,
                    y + 0.25,
                    "⋮",
                    ha="center",
                    va="center",
                    color="#666",
                    family="DejaVu Sans",
                )
                y += 0.5
                continue
            for c, address in enumerate(row_addresses):
                x = 0.5 + c * 1.3
                right = max(right, x + 1.3)
                if slice_["cols"] is not None and cols[c] is None:
                    _text(ax, x + 0.6, y + 0.35, "⋯", ha="center", va="center", color="#666")
                    continue
                value = index.value(tensor["storage"], address)
                face = "white" if fits or value is None else cmap(norm(value))
                rect = Rectangle((x, y), 1.2, 0.7, facecolor=face, edgecolor="#888")
                logical_index = _logical_index(slice_, r, c)
                rect.set_gid(f"lcell:{tensor['id']}:{','.join(map(str, logical_index))}:{address}")
                ax.add_patch(rect)
                ax.add_patch(
                    Rectangle(
                        (x, y),
                        0.12,
                        0.7,
                        facecolor=_colour(order),
                        hatch=_hatch(order),
                        linewidth=0,
                    )
                )
                text = index.text(tensor["storage"], address) if has_values else f"@{address}"
                if fits or not has_values:
                    _text(
                        ax,
                        x + 0.66,
                        y + 0.35,
                        "?" if text is None else text,
                        ha="center",
                        va="center",
                    )
            y += _LOGICAL_H + 0.05
        y += 0.4
    return right, y


def plot(*tensors: Any, ax: Any = None, wrap: int | None = None, **named: Any) -> Any:
    """Draw the storage grid(s), stride arrows and logical grid(s) with matplotlib; returns the figure.

    Takes what :func:`stridewidget.render_svg` takes (tensors, arrays, Layouts, a scene, a widget,
    ``wrap``).
    With ``ax`` the picture goes into that axes (its limits and aspect are set); otherwise a new
    figure sized to the picture is made.

    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import torch, stridewidget as sw
    >>> x = torch.arange(12.0).reshape(3, 4)
    >>> fig = sw.plot(x=x, xt=x.t())
    >>> sorted(t.get_text() for t in fig.axes[0].texts if t.get_text().startswith("B dim"))
    ['B dim 0: +1', 'B dim 1: +4']
    """
    scene = scene_of(*tensors, wrap=wrap, **named)
    index = _Index(scene)
    if ax is None:
        from matplotlib.figure import Figure

        fig = Figure()
        ax = fig.add_axes((0.0, 0.0, 1.0, 1.0))
    y = 0.0
    width = 8.0
    for storage in scene.get("storages", []):
        members = [t for t in scene.get("tensors", []) if t["storage"] == storage["id"]]
        y = _storage(ax, storage, members, y)
        width = max(width, float(storage["wrap"]) + 1, 80 * _CHAR)
    for tensor in scene.get("tensors", []):
        right, y = _logical(ax, tensor, index, y + 0.3)
        title = len(tensor["name"]) + len(tensor["layout"]["text"]) + 6
        width = max(width, right, 0.7 + title * _CHAR)
    for name in scene.get("released", []):
        _text(ax, 0, y + 0.3, f"{name}: freed (the widget holds no reference)", color="#666")
        y += 0.7
    left = -5.0  # room for row labels and the curves of arrows between rows
    ax.set_xlim(left, width + 0.5)
    ax.set_ylim(y + 0.3, -0.4)
    ax.set_aspect("equal")
    ax.axis("off")
    fig = ax.figure
    if fig.get_axes() == [ax] and not getattr(fig, "_stridewidget_sized", False):
        fig.set_size_inches(0.42 * (width + 0.5 - left), 0.42 * (y + 0.7))
        fig._stridewidget_sized = True
    return fig
