"""The SVG writer: a laid-out picture's primitives as an SVG document (:mod:`.svg` is the public
entry point; :func:`stridewidget.render.picture.draw` weighs its fallback with it).

It writes the primitives of :func:`stridewidget.render.picture.draw`, so it draws what ``sw.plot``
draws.  Styling is presentation attributes, not a ``<style>`` sheet and not ``<use>`` copies: HTML
sanitizers (notebook viewers) drop ``<style>`` elements (a rect without a fill would turn black)
and DOMPurify drops ``<use>``.  To stay small the SVG leans on inheritance instead: one group
around the picture says the usual text ink and alignment once, the root the usual font size, and
each shape writes only what differs; numbers are as short as their 0.1 px rounding allows and
colours ``#rgb`` where that is exact.  Each style is written once into a cache and reused, and each
distinct string escaped once.  Every string that comes from the scene (names, values) is escaped:
a tensor named ``<img onerror=...>`` is drawn as that text.
"""

from __future__ import annotations

import hashlib
import html
import re
from collections import Counter
from collections.abc import Mapping
from typing import Any

from ..style import STYLE
from .bidi import isolated
from .labels import tensor_colour, tensor_pattern
from .layers import layered
from .primitives import Group, Path, Picture, Rect, Text, path_data
from .primitives import px as _number

__all__ = ["svg_of", "svg_of_picture"]

#: Stands for the picture's id prefix until the picture is written (U+0000 is not allowed in XML,
#: so no escaped text holds it: :func:`_text` replaces it).
_UID = "\x00"


def _colour(value: str) -> str:
    """``#rrggbb`` as ``#rgb`` where that is the same colour; anything else as it is."""
    v = value
    if len(v) == 7 and v[0] == "#" and v[1] == v[2] and v[3] == v[4] and v[5] == v[6]:
        return "#" + v[1] + v[3] + v[5]
    return value


#: What XML 1.0 cannot hold (C0 controls but tab/newline/return, lone surrogates, U+FFFE/F):
#: a name holding one is written with U+FFFD there, so the SVG stays a valid document.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _text(value: str) -> str:
    """Escaped for an element's text or a quoted attribute (the fast path: nothing to escape)."""
    if "&" in value or "<" in value or ">" in value or '"' in value or "'" in value:
        value = html.escape(value, quote=True)
    if not value.isprintable() and _NOT_XML.search(value):
        value = _NOT_XML.sub("\ufffd", value)  # also the _UID stand-in (U+0000)
    return value if value.isascii() else isolated(value)


class _Writer:
    """Writes one picture's primitives, each distinct style and string once."""

    def __init__(self, picture: Picture) -> None:
        colours = STYLE["themes"][picture.theme]
        #: a picture laid out with role tokens (``"@text"``) gets this theme's colours for them
        self.roles = {"@" + role: value for role, value in colours.items()}
        #: what the group around the picture says for every text under it
        self.ink = colours["text"]
        #: the fills of few rects (a value's colour on a scale): written on each rect, in one
        #: layer with its neighbours (see :meth:`write_layers`)
        self.rare_fills: frozenset = frozenset()
        self.size = STYLE["geometry"]["font_size"]
        self.markers: dict[str, str] = {}
        self.styles: dict[tuple, str] = {}
        self.escaped: dict[str, str] = {}
        #: coordinate → its text (a number and the equal int share one: both write the same)
        self.numbers: dict[float, str] = {}
        #: a nonzero move between two written numbers → its text (:meth:`write_rect_path`)
        self.moves: dict[float, str] = {}
        self.parts: list[str] = []

    def escape(self, value: str) -> str:
        found = self.escaped.get(value)
        if found is None:
            found = self.escaped[value] = _text(value)
        return found

    def paint(self, value: Any) -> Any:
        """A colour as written: a role token resolved in the picture's theme."""
        if type(value) is str and value[:1] == "@":
            return self.roles[value]
        return value

    def rect_style(self, item: Rect) -> str:
        """A rect's attributes but its geometry: its corner radius, then its paint."""
        paint = self.rect_paint(item)
        return f' rx="{_number(item.rx)}"{paint}' if item.rx else paint

    def rect_paint(self, item: Rect) -> str:
        """A rect's fill and stroke attributes (inherited ones: a layer's group may say them)."""
        key = ("r", item.fill, item.stroke, item.stroke_width, item.dash)
        found = self.styles.get(key)
        if found is None:
            fill = self.paint(item.fill)
            if isinstance(fill, tuple):  # ("pattern", order)
                paint = f"url(#{_UID}-p{fill[1]})"
            else:
                paint = _colour(fill) if fill else "none"
            found = self.styles[key] = f' fill="{paint}"' + self.stroke_paint(item)
        return found

    def stroke_paint(self, item: Rect) -> str:
        """A rect's stroke attributes: what a layer of rects each with its own fill shares."""
        stroke = self.paint(item.stroke)
        if not stroke:
            return ""
        found = f' stroke="{_colour(stroke)}"'
        if item.stroke_width != 1:  # 1 is SVG's initial stroke width
            found += f' stroke-width="{_number(item.stroke_width)}"'
        if item.dash:
            found += f' stroke-dasharray="{item.dash}"'
        return found

    def layer_key(self, item: Any) -> Any:
        """What shapes written under one group share: the style they inherit from it."""
        kind = type(item)
        if kind is Rect:
            # as painted (a role token and the colour it names are one style)
            roles = self.roles
            fill, stroke = roles.get(item.fill, item.fill), roles.get(item.stroke, item.stroke)
            if fill in self.rare_fills:
                # a colour of its own (a value on the colour scale): a layer per fill would
                # break the order into a run per cell
                return ("f", stroke, item.stroke_width, item.dash)
            return ("r", fill, stroke, item.stroke_width, item.dash)
        if kind is Text:
            roles = self.roles
            fill, halo = roles.get(item.fill, item.fill), roles.get(item.halo, item.halo)
            return ("t", item.size, fill, item.anchor, item.bold, halo)
        return id(item)  # a path is written whole

    def write_layers(self, items: list) -> None:
        """The shapes of ``items`` without their groups, in layers of one style (see
        :mod:`.layers`): a layer of two or more shapes says its style once, on a group."""
        parts = self.parts
        fills = Counter(map(self.paint, _rect_fills(items, [])))
        self.rare_fills = frozenset(f for f, n in fills.items() if n < _RARE and type(f) is str)
        for run in layered(items, self.layer_key):
            first = run[0]
            kind = type(first)
            if len(run) == 1 or kind is Path:
                self.write(run)
                continue
            if kind is Rect and self.layer_key(first)[0] == "f":
                parts.append(f"<g{self.stroke_paint(first)}>")
                for item in run:
                    x, y, w, h = self.xywh(item)
                    rx = f' rx="{_number(item.rx)}"' if item.rx else ""
                    parts.append(
                        f'<rect x="{x}" y="{y}" width="{w}" height="{h}"{rx} '
                        f'fill="{_colour(self.paint(item.fill))}"/>'
                    )
                parts.append("</g>")
                continue
            if kind is Rect and not any(item.rx for item in run):
                self.write_rect_path(run)
                continue
            if kind is Rect:
                parts.append(f"<g{self.rect_paint(first)}>")
                for item in run:
                    x, y, w, h = self.xywh(item)
                    rx = f' rx="{_number(item.rx)}"' if item.rx else ""
                    parts.append(f'<rect x="{x}" y="{y}" width="{w}" height="{h}"{rx}/>')
            else:
                parts.append(f"<g{self.text_style(first)}>")
                self.write_texts(run)
            parts.append("</g>")

    def write_rect_path(self, run: list) -> None:
        """A layer of square rects as one path of closed subpaths, each drawn as its rect; each
        subpath after the first moves from the one before it (``m``: a closed subpath's end is
        its start), by the difference of the written numbers, exact."""
        parts, numbers, number, moves = self.parts, self.numbers, self.number, self.moves
        parts.append(f'<path{self.rect_paint(run[0])} d="')
        at = None
        for item in run:
            x, y, w, h = item.x, item.y, item.w, item.h
            x, y = numbers.get(x) or number(x), numbers.get(y) or number(y)
            w, h = numbers.get(w) or number(w), numbers.get(h) or number(h)
            fx, fy = float(x), float(y)
            if at is None:
                parts.append(f"M{x} {y}h{w}v{h}h-{w}z")
            else:
                # a difference written once (not zero: 0.0 and -0.0 are one key, "0" and "-0")
                ddx, ddy = fx - at[0], fy - at[1]
                dx = (
                    (moves.get(ddx) or moves.setdefault(ddx, _number(ddx))) if ddx else _number(ddx)
                )
                dy = (
                    (moves.get(ddy) or moves.setdefault(ddy, _number(ddy))) if ddy else _number(ddy)
                )
                parts.append(f"m{dx}{'' if dy[0] == '-' else ' '}{dy}h{w}v{h}h-{w}z")
            at = (fx, fy)
        parts.append('"/>')

    def write_texts(self, run: list) -> None:
        """A layer's texts; neighbours on one baseline as one ``<text>`` whose later ones are
        ``<tspan x>``: each absolutely placed tspan is a text chunk of its own, anchored alone.
        A text with spaces at its ends or doubled keeps its own element (spaces would join)."""
        parts, numbers, number = self.parts, self.numbers, self.number
        open_y = None
        for item in run:
            x, y, text = item.x, item.y, item.text
            xs = numbers.get(x) or number(x)
            alone = "  " in text or text[:1] == " " or text[-1:] == " " or not text
            if open_y is not None and y == open_y and not alone:
                parts.append(f'<tspan x="{xs}">{self.escape(text)}</tspan>')
                continue
            if open_y is not None:
                parts.append("</text>")
                open_y = None
            parts.append(f'<text x="{xs}" y="{numbers.get(y) or number(y)}">{self.escape(text)}')
            if alone:
                parts.append("</text>")
            else:
                open_y = y
        if open_y is not None:
            parts.append("</text>")

    def text_style(self, item: Text) -> str:
        key = ("t", item.size, item.fill, item.anchor, item.bold, item.halo)
        found = self.styles.get(key)
        if found is None:
            found = "" if item.size == self.size else f' font-size="{_number(item.size)}"'
            fill = self.paint(item.fill)
            found += "" if fill == self.ink else f' fill="{_colour(fill)}"'
            found += "" if item.anchor == "middle" else f' text-anchor="{item.anchor}"'
            found += ' font-weight="bold"' if item.bold else ""
            if item.halo:
                halo = _colour(self.paint(item.halo))
                found += f' stroke="{halo}" stroke-width="2.5" paint-order="stroke"'
            self.styles[key] = found
        return found

    def path(self, item: Path) -> str:
        d = path_data(item.commands)
        fill, stroke = self.paint(item.fill), self.paint(item.stroke)
        attributes = f' fill="{_colour(fill) if fill else "none"}"'
        attributes += f' stroke="{_colour(stroke)}"'
        if item.width != 1:  # 1 is SVG's initial stroke width
            attributes += f' stroke-width="{_number(item.width)}"'
        if item.dash:
            attributes += f' stroke-dasharray="{item.dash}"'
        if item.arrow:
            marker = self.markers.setdefault(stroke, f"{_UID}-m{len(self.markers)}")
            attributes += f' marker-end="url(#{marker})"'
        return f'<path d="{d}"{attributes}/>'

    def number(self, value: float) -> str:
        """:func:`_number` of a coordinate, each distinct one formatted once."""
        found = self.numbers[value] = _number(value)
        return found

    def xywh(self, item: Rect) -> tuple[str, str, str, str]:
        """A rect's x, y, width and height as written."""
        numbers, number = self.numbers, self.number
        x, y, w, h = item.x, item.y, item.w, item.h
        return (
            numbers.get(x) or number(x),
            numbers.get(y) or number(y),
            numbers.get(w) or number(w),
            numbers.get(h) or number(h),
        )

    def write(self, items: list) -> None:
        parts, numbers, number = self.parts, self.numbers, self.number
        for item in items:
            kind = type(item)
            if kind is Rect:
                x, y, w, h = self.xywh(item)
                parts.append(
                    f'<rect x="{x}" y="{y}" width="{w}" height="{h}"{self.rect_style(item)}/>'
                )
            elif kind is Text:
                x, y = item.x, item.y
                parts.append(
                    f'<text x="{numbers.get(x) or number(x)}" y="{numbers.get(y) or number(y)}"'
                    f"{self.text_style(item)}>{self.escape(item.text)}</text>"
                )
            elif kind is Group:
                parts.append(f'<g class="{self.escape(item.cls)}"')
                for key, value in item.data.items():
                    if type(value) is int:
                        parts.append(f' data-{key}="{value}"')
                    elif value is not None:
                        parts.append(f' data-{key}="{self.escape(_number(value))}"')
                parts.append(f"><title>{_text(item.title)}</title>" if item.title else ">")
                self.write(item.children)
                parts.append("</g>")
            elif kind is Path:
                parts.append(self.path(item))
            else:
                raise TypeError(f"cannot draw {kind.__name__}")


#: A fill of fewer rects than this is written on each of them, not on a layer of its own.
_RARE = 4


def _rect_fills(items: list, out: list) -> list:
    """The fill of every rect in ``items``, groups opened."""
    for item in items:
        kind = type(item)
        if kind is Rect:
            out.append(item.fill)
        elif kind is Group:
            _rect_fills(item.children, out)
    return out


def _defs(picture: Picture, markers: Mapping[str, str]) -> str:
    ink = STYLE["themes"][picture.theme]["pattern_ink"]
    parts = []
    for tensor in picture.tensors:
        order = tensor["order"]
        kind, colour = tensor_pattern(order), tensor_colour(order)
        body = f'<rect width="6" height="6" fill="{colour}"/>'
        path = STYLE["pattern_paths"][kind]
        if path:
            body += f'<path d="{path}" stroke="{ink}" stroke-width="1.2"/>'
        if kind == "dots":
            body += f'<circle cx="3" cy="3" r="1.3" fill="{ink}"/>'
        parts.append(
            f'<pattern id="{_UID}-p{order}" width="6" height="6" patternUnits="userSpaceOnUse">{body}</pattern>'
        )
    for colour, marker in markers.items():
        parts.append(
            f'<marker id="{marker}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
            f'markerHeight="7" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" '
            f'fill="{colour}" stroke="#000000" stroke-width="0.8"/></marker>'
        )
    return "<defs>" + "".join(parts) + "</defs>"


def _document(picture: Picture, keys: bool = True) -> str:
    """The SVG of ``picture`` with ``_UID`` where its id prefix goes; ``keys=False`` leaves out
    each cell's group, data attributes and tooltip (the picture in words stays, once)."""
    writer = _Writer(picture)
    if keys:
        writer.write(picture.items)
    else:
        writer.write_layers(picture.items)
    width, height = round(picture.width), round(picture.height)
    geometry = STYLE["geometry"]
    background = STYLE["themes"][picture.theme]["background"]
    words = _text(picture.title)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="sws-svg" role="img" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" style="max-width:100%;height:auto" '
        f'font-family="{_text(geometry["font_family"])}" font-size="{geometry["font_size"]}" '
        f'data-theme="{_text(picture.theme)}" aria-label="{words}"><title>{words}</title>'
        f'<rect width="100%" height="100%" fill="{background}"/>'
        + _defs(picture, writer.markers)
        + f'<g fill="{_colour(writer.ink)}" text-anchor="middle">'
        + "".join(writer.parts)
        + "</g></svg>"
    )


def svg_of(picture: Picture, uid: str) -> str:
    """The SVG document of ``picture``; ``uid`` prefixes its pattern and marker ids.

    >>> from stridewidget.render.primitives import Picture, Rect
    >>> svg = svg_of(Picture(20, 10, "light", [Rect(1, 2, 3.25, 4.0, "#ffffff")], "a box", []), "u")
    >>> svg[svg.index("<rect x"):].split("/>")[0]
    '<rect x="1" y="2" width="3.2" height="4" fill="#fff"'
    """
    return _document(picture).replace(_UID, uid)


def svg_of_picture(picture: Picture, *, keys: bool = True) -> str:
    """The SVG of a laid-out picture, ids from a hash of the document (see :func:`svg_of_scene`):
    the widget writes its static fallback from the picture it laid out, not laying it out twice.

    ``keys=False`` writes the picture only: no group, ``data-*`` key or tooltip per cell (the
    saved notebook fallback, a third of the bytes; the kernel-free page is the interactive
    export), the layout in words once, as the root's ``<title>`` and ``aria-label``.

    >>> import torch
    >>> from stridewidget.render.picture import draw
    >>> from stridewidget.render.svg import svg_of_scene
    >>> from stridewidget.scene.build import build_scene
    >>> scene = build_scene({"x": torch.arange(3.0)})
    >>> svg_of_picture(draw(scene, roles=True)) == svg_of_scene(scene)
    True
    >>> bare = svg_of_picture(draw(scene), keys=False)
    >>> "<g class" in bare, 'aria-label="memory layout of x: float32 (3):(1) +0' in bare
    (False, True)
    """
    if not keys and picture.written is not None:  # written when the layout was weighed
        return picture.written
    document = _document(picture, keys)
    digest = hashlib.blake2b(document.encode(), digest_size=5).hexdigest()
    return document.replace(_UID, "sw" + digest)
