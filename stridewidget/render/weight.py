"""How heavy a picture's saved fallback is, and what it may weigh.

The saved fallback (the notebook's ``text/html``: the picture's SVG and each tensor's facts) has a
budget (``limits.FALLBACK_BYTES_2D`` / ``_4D`` / ``FALLBACK_BYTES``); :func:`weight_budget` is
what is left of it for the picture.  :func:`weight` weighs a picture: an estimate from above
when that already fits, else the SVG itself, written once and kept on the picture (the fallback
then uses it).  :func:`address_bytes` is the most the cells' own addresses weigh: what
``render.picture``'s ladder can save by saying them in one line per card.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from ..limits import FALLBACK_BYTES, FALLBACK_BYTES_2D, FALLBACK_BYTES_4D
from .facts import facts_of
from .primitives import Group, Path, Picture, Text
from .svg_writer import svg_of_picture

__all__ = ["address_bytes", "weight", "weight_budget"]


def address_bytes(items: list) -> int:
    """The most the cells' own addresses can weigh in the saved fallback: what saying them in
    one line per card can save, at most (each no more than a text of its own in its layer)."""
    found, stack = 0, list(items)
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is Group:
            stack.extend(item.children)
        elif kind is Text and item.role == "i":
            found += _TEXT_BYTES + len(item.text.encode())
    return found


#: ``<text x="123.4" y="123.4"></text>``: the most a text adds to a layer of the saved fallback
#: beside its own characters (in a run on one baseline it is a shorter ``<tspan x>``)
_TEXT_BYTES = 32


def weight_budget(scene: Mapping[str, Any], drawn: Collection[str] | None = None) -> int:
    """The bytes the SVG of a picture of ``scene`` may weigh as the saved fallback: the
    fallback's budget (``FALLBACK_BYTES_2D`` when every tensor has at most 2 dims,
    ``FALLBACK_BYTES_4D`` at most 4, else ``FALLBACK_BYTES``) less its HTML around the picture
    (each tensor's facts: a tensor whose id is not in ``drawn``, listed in words, its summary
    line alone; and the frame).

    >>> import torch
    >>> from stridewidget.scene.build import build_scene
    >>> 20_000 < weight_budget(build_scene({"x": torch.zeros(3, 4)})) < 24_000
    True
    """
    tensors = scene.get("tensors", [])
    most = max((len(t["layout"]["shape"]) for t in tensors), default=0)
    total = FALLBACK_BYTES_2D if most <= 2 else FALLBACK_BYTES_4D if most <= 4 else FALLBACK_BYTES
    return total - _FRAME_BYTES - len(facts_of(tensors, drawn).encode())


#: The fallback's HTML frame around the picture and facts (its ``<div>`` and style; 452 B).
_FRAME_BYTES = 600
#: Bytes a shape's SVG takes at most beside its text (a ``<text x y>`` with its own style; a
#: path's points), and the document's own (root, title, defs): an estimate never below the
#: written size (``tests/test_fallback_weight.py`` checks it over the lint corpus).
_SHAPE_BYTES, _PATH_BYTES, _DOCUMENT_BYTES = 64, 400, 2_000


def weight(picture: Picture, budget: int) -> int:
    """The bytes of ``picture``'s saved fallback SVG: written (once, kept on the picture for the
    fallback) unless an estimate from above already fits ``budget``.

    >>> from stridewidget.render.primitives import Picture, Rect
    >>> weight(Picture(20, 10, "light", [Rect(1, 2, 3, 4, "#fff")], "a box", []), 24_000) < 3_000
    True
    """
    if picture.written is None:
        estimate = _DOCUMENT_BYTES + len(picture.title.encode()) * 2
        stack = list(picture.items)
        while stack:
            item = stack.pop()
            kind = type(item)
            if kind is Group:
                stack.extend(item.children)
            elif kind is Text:
                estimate += _SHAPE_BYTES + len(item.text.encode())
            elif kind is Path:
                estimate += _PATH_BYTES
            else:
                estimate += _SHAPE_BYTES
            if estimate > budget:
                break
        else:
            return estimate
        picture.written = svg_of_picture(picture, keys=False)
    return len(picture.written.encode())
