"""Static HTML: the SVG picture plus each tensor's facts — no JavaScript, no kernel.

This is the ``text/html`` fallback in the widget's mime bundle (nbviewer, GitHub, nbconvert without
widget state).  Each tensor gets one summary line (the flags that matter for its ndim) in a
``<details>`` whose body holds the rest of the facts and ``explain()``.  Every string is escaped.
"""

from __future__ import annotations

import html
from collections.abc import Collection, Mapping
from typing import Any

from ..adapters.inspect import inspect
from ..style import STYLE
from .distributed import draw_distributed, single_dtensor
from .facts import facts_of
from .picture import draw, scene_of
from .svg import svg_of_picture

__all__ = ["html_of", "render_html"]


def render_html(*tensors: Any, wrap: int | None = None, theme: str = "light", **named: Any) -> str:
    """Static HTML: the inline SVG plus each tensor's facts and ``explain()`` — no JS, no kernel.

    Takes what :func:`~stridewidget.render_svg` takes (a ``DTensor`` alone too: its picture and
    ``sw.inspect(d).explain()``); ``theme`` is ``"light"`` or ``"dark"``.

    >>> import torch, stridewidget as sw
    >>> page = sw.render_html(**{"<img src=x onerror=alert(1)>": torch.zeros(2)})
    >>> "<img" in page, "&lt;img src=x onerror=alert(1)&gt;" in page
    (False, True)
    """
    dtensor = single_dtensor(tensors, named)
    if dtensor is not None:  # its picture, then the mesh and every rank's share in words
        picture = svg_of_picture(draw_distributed(dtensor[1], dtensor[0], theme), keys=False)
        words = html.escape(inspect(dtensor[1]).explain())
        pre = f'<pre style="white-space:pre-wrap;margin:4px 0">{words}</pre>'
        return html_of({}, picture + pre, theme)
    scene = scene_of(*tensors, wrap=wrap, **named)
    # the picture first: it checks the theme; a picture, not an app (no per-cell keys or tooltips)
    picture = draw(scene, theme)
    drawn = [t["id"] for t in picture.tensors]
    return html_of(scene, svg_of_picture(picture, keys=False), theme, drawn)


def html_of(
    scene: Mapping[str, Any],
    picture: str,
    theme: str = "light",
    drawn: Collection[str] | None = None,
) -> str:
    """The fallback's HTML around an SVG ``picture`` of ``scene`` already written (the widget
    passes the SVG of the picture it laid out), with each tensor's facts: the tensors it lists
    in words (their ids not in ``drawn``; None: it draws every one) their summary line alone."""
    colours = STYLE["themes"][theme]
    style = (
        f"background:{colours['background']};color:{colours['text']};padding:6px;"
        f"border:1px solid {colours['panel_stroke']};border-radius:4px;display:inline-block;"
        "max-width:100%;overflow-x:auto;font-size:12px;"
        f"font-family:{STYLE['geometry']['font_family']}"
    )
    return (
        f'<div class="stridewidget-fallback" style="{html.escape(style)}">'
        + picture
        + facts_of(scene.get("tensors", []), drawn)
        + "</div>"
    )
