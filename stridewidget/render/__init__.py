"""Renderers of a scene, all drawing one picture from one style (:mod:`stridewidget.style`).

* :mod:`.picture` — the static picture, assembled as primitives in px: :mod:`.strip` (the storage
  strip), :mod:`.arrows` (stride arrows), :mod:`.card` and :mod:`.grid` (each tensor's card and
  logical grid), :mod:`.facts` (the facts line), on :mod:`.primitives` / :mod:`.canvas` /
  :mod:`.labels`;
* :mod:`.svg`, :mod:`.html` — the standalone SVG and the no-JavaScript HTML fallback;
* :mod:`.mpl` — the same picture as a matplotlib figure;
* :mod:`.text` — the terminal picture;
* :mod:`.phantom` — the cells an out-of-bounds ``as_strided`` setting would read.
"""

from .html import render_html
from .mpl import plot
from .picture import scene_of
from .svg import render_svg
from .text import render_text

__all__ = ["plot", "render_html", "render_svg", "render_text", "scene_of"]
