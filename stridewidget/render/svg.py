"""The picture as a standalone SVG: the static fallback shown where no kernel runs (nbviewer,
GitHub, ``nbconvert`` without widget state) and an export format (the writer itself:
:mod:`.svg_writer`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..limits import MAX_DTENSOR_SVG_BYTES
from .distributed import draw_distributed, single_dtensor
from .picture import draw, scene_of
from .primitives import MAX_WIDTH
from .svg_writer import svg_of, svg_of_picture

__all__ = ["render_svg", "svg_of", "svg_of_picture", "svg_of_scene"]


def svg_of_scene(
    scene: Mapping[str, Any],
    theme: str = "light",
    *,
    width: float = MAX_WIDTH,
    keys: bool = True,
    light: bool = True,
) -> str:
    """The SVG of a checked scene (what :func:`render_svg` draws once it has the scene), laid out
    for ``width`` px; ``light=False``: not laid out lighter for the saved fallback's weight (as
    the live widget lays it out for a width its front end reports).

    Its pattern and marker ids come from the document itself: the same picture gets the same
    ids (harmless on one page), any difference different ones.

    >>> import torch
    >>> from stridewidget.scene.build import build_scene
    >>> scene = build_scene({"x": torch.arange(3.0)})
    >>> svg_of_scene(scene) == render_svg(x=torch.arange(3.0))
    True
    """
    return svg_of_picture(draw(scene, theme, width=width, light=light), keys=keys)


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

    A ``DTensor`` (alone) is drawn as its global grid, each cell naming the rank(s) holding it,
    its mesh and each rank's local storage (:mod:`.distributed`), its cells keyed with hover
    titles while that fits :data:`~stridewidget.limits.MAX_DTENSOR_SVG_BYTES`, else the picture
    alone (its layout in words once, as the saved fallback writes it).
    """
    dtensor = single_dtensor(tensors, named)
    if dtensor is not None:
        picture = draw_distributed(dtensor[1], dtensor[0], theme)
        keyed = svg_of_picture(picture)
        if len(keyed.encode()) <= MAX_DTENSOR_SVG_BYTES:
            return keyed
        return svg_of_picture(picture, keys=False)
    return svg_of_scene(scene_of(*tensors, wrap=wrap, **named), theme)
