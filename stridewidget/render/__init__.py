"""Renderers of a scene, all drawing one picture from one style.

* :mod:`.style` — the one style source (colours, patterns, themes, geometry, limits, viridis),
  committed as ``style.json`` and shared with the widget's JavaScript;
* :mod:`.picture` — the static picture's layout, as primitives in px;
* :mod:`.svg`, :mod:`.html` — the standalone SVG and the no-JavaScript HTML fallback;
* :mod:`.mpl` — the same picture as a matplotlib figure;
* :mod:`.text` — the terminal picture.
"""

from .html import render_html
from .mpl import plot
from .picture import scene_of
from .svg import render_svg
from .text import render_text

__all__ = ["plot", "render_html", "render_svg", "render_text", "scene_of"]
