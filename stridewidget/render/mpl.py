"""The picture as a matplotlib figure (for papers and slides): the same primitives as the SVG.

:func:`plot` draws :func:`stridewidget.render.picture.draw`'s primitives in a px coordinate system
(y down) at 96 px per inch, so fonts, cells and arrows have the sizes the SVG gives them and texts
keep the room the layout reserved for them.  Tensors differ by colour, hatch pattern and letter;
names are plain text (no mathtext: a ``$`` in a name stays a ``$``).  Each cell's patches carry a
``gid`` (``sws-lcell:t0:1,2:6`` = tensor, logical index, storage cell; ``sws-scell:s0:6``).
"""

from __future__ import annotations

from typing import Any

from ..style import STYLE
from .labels import tensor_colour, tensor_pattern
from .picture import draw, scene_of
from .primitives import Group, Path, Picture, Rect, Text

__all__ = ["plot"]

#: The SVG's textures as matplotlib hatches, in the same order.
_HATCHES = {
    "solid": "",
    "diagonal": "///",
    "dots": "..",
    "vertical": "|||",
    "cross": "++",
    "horizontal": "---",
    "antidiagonal": "\\\\\\",
}
_PX = 72 / 96  # points per px: the SVG's px at 96 dpi
_FONT = ["DejaVu Sans Mono", "DejaVu Sans"]  # ship with matplotlib; the second has ⋮
_ALIGN = {"start": "left", "middle": "center", "end": "right"}


def _dash(dash: str | None) -> Any:
    return "-" if dash is None else (0, tuple(float(v) for v in dash.split()))


def _gid(group: Group) -> str | None:
    data = group.data
    if "sws-lcell" in group.cls:
        return f"sws-lcell:{data['tensor']}:{data['index']}:{data['addr']}"
    if "sws-scell" in group.cls:
        return f"sws-scell:{data['storage']}:{data['cell']}"
    return None


def _draw(ax: Any, item: Any, picture: Picture, gid: str | None = None) -> None:
    from matplotlib import patheffects
    from matplotlib.patches import FancyArrowPatch, FancyBboxPatch
    from matplotlib.path import Path as MplPath

    if isinstance(item, Group):
        gid = _gid(item) or gid
        for child in item.children:
            _draw(ax, child, picture, gid)
    elif isinstance(item, Rect):
        style: dict[str, Any] = {"linewidth": item.stroke_width * _PX if item.stroke else 0}
        if isinstance(item.fill, tuple):  # ("pattern", order)
            order = item.fill[1]
            style.update(
                facecolor=tensor_colour(order),
                hatch=_HATCHES[tensor_pattern(order)],
                edgecolor=item.stroke or "#00000088",
            )
        else:
            style.update(facecolor=item.fill or "none", edgecolor=item.stroke or "none")
        patch = FancyBboxPatch(
            (item.x, item.y), item.w, item.h, boxstyle=f"round,pad=0,rounding_size={item.rx}",
            linestyle=_dash(item.dash), **style,
        )  # fmt: skip
        patch.set_gid(gid)
        ax.add_patch(patch)
    elif isinstance(item, Text):
        text = ax.text(
            item.x, item.y, item.text, ha=_ALIGN[item.anchor], va="baseline", color=item.fill,
            fontsize=item.size * _PX, fontfamily=_FONT, fontweight="bold" if item.bold else "normal",
            parse_math=False,
        )  # fmt: skip
        if item.halo:
            text.set_path_effects(
                [patheffects.withStroke(linewidth=2.5 * _PX, foreground=item.halo)]
            )
        text.set_gid(gid)
    elif isinstance(item, Path):
        codes = {"M": [MplPath.MOVETO], "L": [MplPath.LINETO], "C": [MplPath.CURVE4] * 3}
        vertices, kinds = [], []
        for op, *values in item.commands:
            vertices.extend(zip(values[0::2], values[1::2]))
            kinds.extend(codes[op])
        ax.add_patch(
            FancyArrowPatch(
                path=MplPath(vertices, kinds), arrowstyle="-|>" if item.arrow else "-",
                mutation_scale=10, color=item.stroke, linewidth=item.width * _PX,
                linestyle=_dash(item.dash),
            )
        )  # fmt: skip


def plot(
    *tensors: Any, ax: Any = None, wrap: int | None = None, theme: str = "light", **named: Any
) -> Any:
    """Draw the storage strip(s), stride arrows and tensor cards with matplotlib; returns the figure.

    Takes what :func:`stridewidget.render_svg` takes (tensors, arrays, Layouts, a scene, a widget,
    ``wrap``, ``theme``).  With ``ax`` the picture goes into that axes (its limits and aspect are
    set); otherwise a new figure of the SVG's size (at 96 dpi) is made.

    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import torch, stridewidget as sw
    >>> x = torch.arange(12.0).reshape(3, 4)
    >>> fig = sw.plot(x=x, xt=x.t())
    >>> sorted(t.get_text() for t in fig.axes[0].texts if t.get_text().startswith("B d"))
    ['B d0 +1', 'B d1 +4']
    """
    if ax is not None:
        from matplotlib.axes import Axes

        if not isinstance(ax, Axes):
            raise TypeError(
                f"plot(ax=...) takes a matplotlib Axes (fig, ax = plt.subplots()), got "
                f"{type(ax).__name__}"
            )
    scene = scene_of(*tensors, wrap=wrap, **named)
    picture = draw(scene, theme)
    if ax is None:
        from matplotlib.figure import Figure

        fig = Figure(figsize=(picture.width / 96, picture.height / 96), dpi=96)
        ax = fig.add_axes((0.0, 0.0, 1.0, 1.0))
    ax.add_patch(_background(picture))
    for item in picture.items:
        _draw(ax, item, picture)
    ax.set_xlim(0, picture.width)
    ax.set_ylim(picture.height, 0)
    ax.set_aspect("equal")
    ax.axis("off")
    return ax.figure


def _background(picture: Picture) -> Any:
    from matplotlib.patches import Rectangle

    colour = STYLE["themes"][picture.theme]["background"]
    return Rectangle((0, 0), picture.width, picture.height, facecolor=colour, linewidth=0)
