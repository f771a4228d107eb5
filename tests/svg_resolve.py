"""What an SVG draws, resolved as a browser resolves it, and what a picture's primitives say to draw.

:func:`drawn` walks a parsed SVG the way SVG's cascade does: presentation attributes inherit down
the tree (``fill``, ``stroke``, ``font-size``, ... from a ``<g>`` or the root), an unset property
takes SVG's initial value (``fill`` black, ``stroke`` none, ``stroke-width`` 1, ``font-size``
medium, ``text-anchor`` start), colours are compared as RGB (``#fff`` is ``#ffffff``) and a
``url(#id)`` paint is replaced by what the pattern / marker it names draws (ids differ between
renderings).  Each drawn shape comes out as one record: its tag, its geometry in px, its
effective paint and font, its text, and the chain of ``<g>`` groups around it (class, ``data-*``,
``<title>``), so a regrouped or retitled cell counts as a difference.

:func:`expected` writes the same records straight from :func:`stridewidget.render.picture.draw`'s
primitives (the display list every backend draws), with patterns rebuilt from the style.  The two
are compared by :func:`differences`, coordinates within ``TOLERANCE`` px (both sides round to
0.1 px).  Written independently of :mod:`stridewidget.render.svg`: it shares no code with it.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import Any

from stridewidget.render.primitives import Group, Path, Picture, Rect, Text
from stridewidget.style import STYLE

NS = "{http://www.w3.org/2000/svg}"
#: Coordinates may differ by this much (px): the old and the new writer both round to 0.1 px.
TOLERANCE = 0.051
#: SVG's inherited presentation properties this picture uses, with their initial values.
INHERITED = {
    "fill": "#000000",
    "stroke": "none",
    "stroke-width": "1",
    "stroke-dasharray": "none",
    "font-size": "medium",
    "font-weight": "normal",
    "text-anchor": "start",
    "paint-order": "normal",
    "font-family": "",
    "marker-end": "none",
}
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e-?\d+)?")
_N = r"(-?\d+(?:\.\d+)?)"
#: one rect as path data (``M x y h w v h h -w z``), and a path made only of them
#: (a later one may move from the one before: ``m dx dy``, SVG's relative moveto; after ``z`` the
#: current point is the closed subpath's start)
_RECT = re.compile(rf"([Mm]){_N}[ ]?{_N}h{_N}v{_N}h-{_N}z")
_RECTS = re.compile(rf"M{_N} {_N}h{_N}v{_N}h-{_N}z(?:[Mm]{_N}[ ]?{_N}h{_N}v{_N}h-{_N}z)*")


def colour(value: str) -> str:
    """A colour as lower-case ``#rrggbb`` (``#FFF`` → ``#ffffff``); anything else as is."""
    value = value.strip()
    if re.fullmatch(r"#[0-9a-fA-F]{3}", value):
        value = "#" + "".join(ch * 2 for ch in value[1:])
    return value.lower() if value.startswith("#") else value


def _numbers(value: str) -> tuple[float, ...]:
    return tuple(float(v) for v in _NUMBER.findall(value))


def _paint(value: str, defs: dict[str, Any]) -> Any:
    found = re.fullmatch(r"url\(#([^)]+)\)", value.strip())
    if found:
        return defs[found.group(1)]
    return colour(value)


def _def_content(element: ET.Element) -> tuple:
    """What a pattern or marker draws, as plain data (its id left out)."""
    own = tuple(sorted((k, v) for k, v in element.attrib.items() if k != "id"))
    children = tuple(
        (child.tag.replace(NS, ""), tuple(sorted(child.attrib.items()))) for child in element
    )
    return (element.tag.replace(NS, ""), own, children)


def _shape(tag: str, attrs: dict[str, str], style: dict[str, Any], text: str | None) -> dict:
    record: dict[str, Any] = {"tag": tag}
    if tag == "rect":
        record["box"] = tuple(
            attrs.get(k, "0") if "%" in attrs.get(k, "") else float(attrs.get(k, 0))
            for k in ("x", "y", "width", "height")
        )
        record["rx"] = float(attrs.get("rx", 0))
    elif tag == "text":
        record["at"] = (float(attrs.get("x", 0)), float(attrs.get("y", 0)))
        record["text"] = text or ""
        for key in ("font-size", "font-weight", "text-anchor", "paint-order"):
            record[key] = style[key]
    elif tag == "path":
        record["d"] = (re.findall(r"[MLCQZz]", attrs["d"]), _numbers(attrs["d"]))
        record["marker-end"] = style["marker-end"]
    record["fill"] = style["fill"]
    record["stroke"] = style["stroke"]
    if style["stroke"] != "none":
        record["stroke-width"] = float(style["stroke-width"])
        dash = style["stroke-dasharray"]
        record["stroke-dasharray"] = None if dash == "none" else _numbers(dash)
    return record


def drawn(svg: str) -> list[dict[str, Any]]:
    """Every shape ``svg`` draws, in paint order, with its effective style (see the module)."""
    root = ET.fromstring(svg)
    defs = {
        el.get("id"): _def_content(el)
        for el in root.iter()
        if el.tag in (f"{NS}pattern", f"{NS}marker") and el.get("id")
    }
    out: list[dict[str, Any]] = []

    def walk(element: ET.Element, style: dict[str, Any], groups: tuple) -> None:
        tag = element.tag.replace(NS, "")
        if tag in ("defs", "title", "pattern", "marker"):
            return
        style = dict(style)
        for key in INHERITED:
            if key in element.attrib:
                value = element.get(key)
                style[key] = (
                    _paint(value, defs) if key in ("fill", "stroke", "marker-end") else value
                )
        if tag in ("svg", "g"):
            if tag == "g":
                title = element.find(f"{NS}title")
                data = tuple(
                    sorted((k, v) for k, v in element.attrib.items() if k.startswith("data-"))
                )
                group = (element.get("class"), data, title.text if title is not None else None)
                if group != (None, (), None):  # a group that only passes a style on is no group
                    groups = (*groups, group)
            for child in element:
                walk(child, style, groups)
            return
        text = "".join(element.itertext()) if tag == "text" else None
        if tag == "text" and element.find(f"{NS}tspan") is not None:
            # a tspan with its own x starts a new text chunk (SVG 1.1 10.5), anchored alone: the
            # text's own words before it are one shape, each tspan another, on the text's y
            assert all(t.get("x") is not None and not len(t) for t in element), svg
            out.append({**_shape(tag, element.attrib, style, element.text), "groups": groups})
            for span in element:
                at = {"x": span.get("x"), "y": element.get("y")}
                out.append({**_shape(tag, at, style, span.text), "groups": groups})
            return
        if tag == "path" and _RECTS.fullmatch(element.get("d", "")):
            # square rects written as one path of closed subpaths: each is its rect
            at = (0.0, 0.0)
            for move, x, y, w, h, back in _RECT.findall(element.get("d")):
                assert back == w, element.get("d")
                if move == "m":
                    x, y = at[0] + float(x), at[1] + float(y)
                at = (float(x), float(y))
                box = {"x": str(x), "y": str(y), "width": w, "height": h}
                out.append({**_shape("rect", box, style, None), "groups": groups})
            return
        out.append({**_shape(tag, element.attrib, style, text), "groups": groups})

    walk(root, dict(INHERITED), ())
    return out


def root_facts(svg: str) -> dict[str, Any]:
    """The root's size, title and the font the picture asks for."""
    root = ET.fromstring(svg)
    title = root.find(f"{NS}title")
    return {
        "size": (root.get("width"), root.get("height"), root.get("viewBox")),
        "title": title.text if title is not None else None,
        "font-family": root.get("font-family"),
        "theme": root.get("data-theme"),
    }


def _pattern(order: int, theme: str) -> tuple:
    """The pattern tile of tensor ``order``, from the style (as the picture's legend promises)."""
    ink = STYLE["themes"][theme]["pattern_ink"]
    kind = STYLE["patterns"][order % len(STYLE["patterns"])]
    tile = STYLE["tensor_colours"][order % len(STYLE["tensor_colours"])]
    children = [("rect", (("fill", tile), ("height", "6"), ("width", "6")))]
    path = STYLE["pattern_paths"][kind]
    if path:
        children.append(("path", (("d", path), ("stroke", ink), ("stroke-width", "1.2"))))
    if kind == "dots":
        children.append(("circle", (("cx", "3"), ("cy", "3"), ("fill", ink), ("r", "1.3"))))
    own = (("height", "6"), ("patternUnits", "userSpaceOnUse"), ("width", "6"))
    return ("pattern", own, tuple(children))


def _marker(ink: str) -> tuple:
    own = (
        ("markerHeight", "7"), ("markerWidth", "7"), ("orient", "auto-start-reverse"),
        ("refX", "9"), ("refY", "5"), ("viewBox", "0 0 10 10"),
    )  # fmt: skip
    head = (
        ("d", "M 0 0 L 10 5 L 0 10 z"), ("fill", ink), ("stroke", "#000000"),
        ("stroke-width", "0.8"),
    )  # fmt: skip
    return ("marker", own, (("path", head),))


def expected(picture: Picture) -> list[dict[str, Any]]:
    """What ``picture``'s primitives say to draw, as :func:`drawn` records, background first."""
    theme = picture.theme
    base = {**INHERITED, "font-size": str(STYLE["geometry"]["font_size"])}
    out = [
        {
            **_shape(
                "rect",
                {"width": "100%", "height": "100%"},
                {**base, "fill": colour(STYLE["themes"][theme]["background"])},
                None,
            ),
            "groups": (),
        }
    ]

    def number(v: float) -> str:
        return repr(float(v))

    def add(item: Any, groups: tuple) -> None:
        style = dict(base)
        if isinstance(item, Group):
            data = tuple(
                sorted((f"data-{k}", str(v)) for k, v in item.data.items() if v is not None)
            )
            for child in item.children:
                add(child, (*groups, (item.cls, data, item.title)))
            return
        if isinstance(item, Rect):
            fill = item.fill
            style["fill"] = (
                _pattern(fill[1], theme) if isinstance(fill, tuple) else colour(fill or "none")
            )
            if item.stroke:
                style.update(stroke=colour(item.stroke), **{"stroke-width": str(item.stroke_width)})
                if item.dash:
                    style["stroke-dasharray"] = item.dash
            attrs = {"x": number(item.x), "y": number(item.y), "width": number(item.w),
                     "height": number(item.h), "rx": number(item.rx)}  # fmt: skip
            out.append({**_shape("rect", attrs, style, None), "groups": groups})
        elif isinstance(item, Text):
            style.update({"font-size": _trim(item.size), "fill": colour(item.fill),
                          "text-anchor": item.anchor, "font-weight": "bold" if item.bold else "normal"})  # fmt: skip
            if item.halo:
                style.update({"stroke": colour(item.halo), "stroke-width": "2.5", "paint-order": "stroke"})  # fmt: skip
            attrs = {"x": number(item.x), "y": number(item.y)}
            out.append({**_shape("text", attrs, style, item.text), "groups": groups})
        elif isinstance(item, Path):
            style.update(fill=colour(item.fill or "none"), stroke=colour(item.stroke),
                         **{"stroke-width": str(item.width)})  # fmt: skip
            if item.dash:
                style["stroke-dasharray"] = item.dash
            if item.arrow:
                style["marker-end"] = _marker(item.stroke)
            d = " ".join(
                f"{op} " + " ".join(number(v) for v in values) for op, *values in item.commands
            )
            out.append({**_shape("path", {"d": d}, style, None), "groups": groups})
        else:
            raise TypeError(type(item).__name__)

    for item in picture.items:
        add(item, ())
    return out


def _trim(size: float) -> str:
    return f"{size:g}"


def _close(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return abs(a - b) <= TOLERANCE
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))
    if isinstance(a, str) and isinstance(b, str) and _NUMBER.fullmatch(a) and _NUMBER.fullmatch(b):
        return abs(float(a) - float(b)) <= TOLERANCE
    return a == b


def differences(got: list[dict], want: list[dict], limit: int = 5) -> list[str]:
    """Where two record lists differ (at most ``limit`` lines); empty when they draw the same."""
    found = []
    if len(got) != len(want):
        found.append(f"{len(got)} shapes drawn, {len(want)} expected")
    for k, (a, b) in enumerate(zip(got, want)):
        keys = set(a) | set(b)
        bad = sorted(key for key in keys if not _close(a.get(key), b.get(key)))
        if bad:
            found.append(f"shape {k} ({a.get('tag')}): " + "; ".join(
                f"{key}: {a.get(key)!r} != {b.get(key)!r}" for key in bad))  # fmt: skip
        if len(found) >= limit:
            break
    return found
