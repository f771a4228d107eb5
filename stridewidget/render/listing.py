"""The picture as a display list: the JSON the widget's painter (``js/paint/``) paints.

Python lays the picture out once (:func:`.picture.draw`); this writes its primitives as compact JSON
(``listing.schema.json``) that the browser only paints and links: it decides no position, no
word and no colour.  Each primitive is an array, its kind first:

* ``["r", x, y, w, h, fill, stroke, stroke_width, dash, rx]`` — a rect (``fill`` ``"p3"``: the
  pattern of the tensor of order 3; ``null``: none);
* ``["t", x, y, text, size, fill, anchor, bold, halo, role]`` — a text at its baseline (``role``
  ``"v"``: a cell's value, ``"i"``: its storage index: the values/index toggle hides one of them;
  ``"l"``: the legend's words on them, hidden while the toggle shows one kind);
* ``["p", d, stroke, width, dash, arrow, fill]`` — a path in SVG path data;
* ``["g", cls, data, title, children]`` — a group with its class, its keys (``storage`` +
  ``cell``; ``tensor`` + ``slice`` + ``r``/``c`` + ``addr`` + ``index``; an arrow's ``dim``;
  in a DTensor's picture ``key`` + ``links``, the keys it lights, space-separated) and its hover
  line (``title``).

Coordinates are rounded to 0.1 px as the SVG writer (:mod:`.svg`) writes them, so the painted DOM
and the saved SVG draw the same numbers.  Colours are theme role tokens (``"@text"``) where the
picture was laid out with ``roles=True``: the painter resolves them in the theme the page shows.
``tensors`` gives the linker what a logical cell's index walk needs (offset and strides, in
storage cells; ``null`` where a walk cannot be drawn cell by cell).  Its size is bounded by what
the picture shows, as the scene is.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from .bidi import isolated
from .primitives import Group, Path, Picture, Rect, Text, path_data

__all__ = ["VERSION", "display_list"]

#: The display list's format version (``v``); the painter refuses another.
VERSION = 1


def _bidi(text: str) -> str:
    """:func:`.bidi.isolated` (ASCII text at once: most texts)."""
    return text if text.isascii() else isolated(text)


def _items(items: list) -> list:
    # Long loops of primitives: coordinates rounded inline (round(v, 1), as the SVG writer's
    # 0.1 px), no call per number
    out: list = []
    for item in items:
        kind = type(item)
        if kind is Rect:
            fill = item.fill
            if type(fill) is tuple:  # ("pattern", order)
                fill = f"p{fill[1]}"
            out.append(
                ["r", round(item.x, 1), round(item.y, 1), round(item.w, 1), round(item.h, 1),
                 fill or None, item.stroke, item.stroke_width, item.dash, item.rx]
            )  # fmt: skip
        elif kind is Text:
            out.append(
                ["t", round(item.x, 1), round(item.y, 1), _bidi(item.text), item.size, item.fill,
                 item.anchor, int(item.bold), item.halo, item.role]
            )  # fmt: skip
        elif kind is Group:
            title = item.title
            out.append(
                ["g", item.cls, dict(item.data), title and _bidi(title), _items(item.children)]
            )
        elif kind is Path:
            out.append(
                ["p", path_data(item.commands), item.stroke, item.width, item.dash,
                 int(item.arrow), item.fill]
            )  # fmt: skip
        else:
            raise TypeError(f"cannot list {kind.__name__}")
    return out


def _pick(tensor: Mapping[str, Any], drawn: int) -> dict[str, Any] | None:
    """What the slice picker needs: the leading dims' sizes and how many slices the picture
    leaves out, of ``drawn`` panels drawn (``None`` when it shows them all): the count the
    card's "slices not shown" note says, after the height ladder drew fewer panels."""
    logical = tensor["logical"]
    lead = list(logical["shape"][: max(logical["ndim"] - 2, 0)])
    left_out = math.prod(lead) - drawn if lead else 0
    if left_out <= 0:
        return None
    return {"lead": lead, "left_out": left_out}


def _panels(items: list, found: dict[str, set]) -> dict[str, set]:
    """The slices each tensor's logical cells are drawn in (tensor id -> slice positions)."""
    for item in items:
        if type(item) is Group:
            if item.cls == "sws-lcell":
                found.setdefault(item.data["tensor"], set()).add(item.data["slice"])
            elif any(type(child) is Group for child in item.children):  # a panel, a card
                _panels(item.children, found)
    return found


def _walk_basis(tensor: Mapping[str, Any]) -> dict[str, Any] | None:
    """Offset and strides in storage cells, where a cell is one element (else no walk)."""
    layout = tensor["layout"]
    numbers = [layout["offset"], *layout["strides"]]
    if layout.get("unit") != layout.get("itemsize") or not all(type(v) is int for v in numbers):
        return None
    return {"offset": layout["offset"], "strides": list(layout["strides"])}


def display_list(picture: Picture) -> dict[str, Any]:
    """The JSON display list of ``picture`` (see the module docstring).

    >>> import torch
    >>> from stridewidget.render.picture import draw
    >>> from stridewidget.scene.build import build_scene
    >>> listed = display_list(draw(build_scene({"x": torch.arange(3.0)}), roles=True))
    >>> listed["v"], listed["tensors"][0]["walk"], listed["items"][0][:4]
    (1, {'offset': 0, 'strides': [1]}, ['t', 10, 19.0, 'storage s0 · float32 · 3 elements × 4 B = 12 B · cpu'])
    """
    panels = _panels(picture.items, {})
    return {
        "v": VERSION,
        "width": round(picture.width),
        "height": round(picture.height),
        "theme": picture.theme,
        "title": _bidi(picture.title),
        "tensors": [
            {
                "id": t["id"],
                "name": t["name"],
                "mark": t["mark"],
                "storage": t["storage"],
                "order": t["order"],
                "walk": _walk_basis(t),
                "pick": _pick(t, len(panels.get(t["id"], ()))),
            }
            for t in picture.tensors
        ],
        "items": _items(picture.items),
    }
