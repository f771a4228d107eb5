"""The picture as a standalone SVG: the static fallback shown where no kernel runs (nbviewer,
GitHub, ``nbconvert`` without widget state) and an export format.

It writes the primitives of :func:`stridewidget.render.picture.draw`, so it draws what ``sw.plot``
draws.  Styling is presentation attributes, not a ``<style>`` sheet: HTML sanitizers (notebook
viewers) drop ``<style>`` elements, and a rect without a fill would turn black.  Every string that
comes from the scene (names, values) is escaped: a tensor named ``<img onerror=...>`` is drawn as
that text.
"""

from __future__ import annotations

import hashlib
import html
import json
from collections.abc import Mapping
from typing import Any

from ..style import STYLE
from .picture import draw, scene_of
from .primitives import Group, Path, Picture, Rect, Text

__all__ = ["render_svg", "svg_of"]


def _attrs(attributes: Mapping[str, Any]) -> str:
    return "".join(
        f' {key}="{html.escape(_number(value), quote=True)}"'
        for key, value in attributes.items()
        if value is not None
    )


def _number(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.1f}".rstrip("0").rstrip(".")
    return str(value)


def _fill(uid: str, fill: Any) -> str | None:
    if isinstance(fill, tuple):  # ("pattern", order)
        return f"url(#{uid}-p{fill[1]})"
    return fill


def _element(uid: str, item: Any, markers: dict[str, str]) -> str:
    if isinstance(item, Rect):
        return "<rect" + _attrs(
            {
                "x": item.x, "y": item.y, "width": item.w, "height": item.h,
                "rx": item.rx or None, "fill": _fill(uid, item.fill) or "none",
                "stroke": item.stroke, "stroke-width": item.stroke_width if item.stroke else None,
                "stroke-dasharray": item.dash,
            }
        ) + "/>"  # fmt: skip
    if isinstance(item, Text):
        attributes = {
            "x": item.x, "y": item.y, "font-size": item.size, "fill": item.fill,
            "text-anchor": None if item.anchor == "start" else item.anchor,
            "font-weight": "bold" if item.bold else None,
        }  # fmt: skip
        if item.halo:
            attributes.update({"stroke": item.halo, "stroke-width": 2.5, "paint-order": "stroke"})
        return f"<text{_attrs(attributes)}>{html.escape(item.text, quote=False)}</text>"
    if isinstance(item, Path):
        d = " ".join(
            f"{op} " + " ".join(_number(float(v)) for v in values) for op, *values in item.commands
        )
        marker = markers.setdefault(item.stroke, f"{uid}-m{len(markers)}") if item.arrow else None
        return "<path" + _attrs(
            {
                "d": d, "fill": item.fill or "none", "stroke": item.stroke,
                "stroke-width": item.width,
                "stroke-dasharray": item.dash, "marker-end": f"url(#{marker})" if marker else None,
            }
        ) + "/>"  # fmt: skip
    if isinstance(item, Group):
        data = {f"data-{key}": value for key, value in item.data.items()}
        title = f"<title>{html.escape(item.title, quote=False)}</title>" if item.title else ""
        body = "".join(_element(uid, child, markers) for child in item.children)
        return f"<g{_attrs({'class': item.cls, **data})}>{title}{body}</g>"
    raise TypeError(f"cannot draw {type(item).__name__}")


def _defs(uid: str, picture: Picture, markers: dict[str, str]) -> str:
    ink = STYLE["themes"][picture.theme]["pattern_ink"]
    parts = []
    for tensor in picture.tensors:
        order = tensor["order"]
        kind = STYLE["patterns"][order % len(STYLE["patterns"])]
        colour = STYLE["tensor_colours"][order % len(STYLE["tensor_colours"])]
        body = f'<rect width="6" height="6" fill="{colour}"/>'
        path = STYLE["pattern_paths"][kind]
        if path:
            body += f'<path d="{path}" stroke="{ink}" stroke-width="1.2"/>'
        if kind == "dots":
            body += f'<circle cx="3" cy="3" r="1.3" fill="{ink}"/>'
        parts.append(
            f'<pattern id="{uid}-p{order}" width="6" height="6" patternUnits="userSpaceOnUse">{body}</pattern>'
        )
    for colour, marker in markers.items():
        parts.append(
            f'<marker id="{marker}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
            f'markerHeight="7" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" '
            f'fill="{colour}" stroke="#000000" stroke-width="0.8"/></marker>'
        )
    return "<defs>" + "".join(parts) + "</defs>"


def svg_of(picture: Picture, uid: str) -> str:
    """The SVG document of ``picture``; ``uid`` prefixes its pattern and marker ids."""
    markers: dict[str, str] = {}
    body = "".join(_element(uid, item, markers) for item in picture.items)
    width, height = round(picture.width), round(picture.height)
    root = {
        "xmlns": "http://www.w3.org/2000/svg", "class": "sws-svg", "role": "img",
        "width": width, "height": height, "viewBox": f"0 0 {width} {height}",
        "font-family": STYLE["geometry"]["font_family"], "font-size": STYLE["geometry"]["font_size"],
        "data-theme": picture.theme,
    }  # fmt: skip
    background = STYLE["themes"][picture.theme]["background"]
    return (
        f"<svg{_attrs(root)}><title>{html.escape(picture.title, quote=False)}</title>"
        f'<rect width="100%" height="100%" fill="{background}"/>'
        + _defs(uid, picture, markers)
        + body
        + "</svg>"
    )


def render_svg(*tensors: Any, wrap: int | None = None, theme: str = "light", **named: Any) -> str:
    """A standalone SVG of the storage strip(s), the stride arrows and each tensor's card.

    Takes tensors/arrays/:class:`~stridewidget.Layout` objects (positional ones are named ``t0``,
    ``t1``, ...), a scene from :func:`~stridewidget.scene.build.build_scene`, or a ``StrideWidget``.
    ``wrap`` sets the storage cells per row when the strip wraps; ``theme`` is ``"light"`` or
    ``"dark"``.

    >>> import torch
    >>> x = torch.arange(6.0).reshape(2, 3)
    >>> svg = render_svg(x=x, xt=x.t())
    >>> svg.startswith("<svg") and "B d1 +3" in svg and "xt[2, 1] → storage[5] = 5." in svg
    True
    """
    scene = scene_of(*tensors, wrap=wrap, **named)
    # Pattern/marker ids must not clash between pictures on one page: derive them from the scene
    # (same picture, same ids: harmless; any difference, different ids).
    digest = hashlib.blake2b(
        json.dumps([scene, theme], sort_keys=True).encode(), digest_size=5
    ).hexdigest()
    return svg_of(draw(scene, theme), "sw" + digest)
