"""The laid-out picture a widget sends to the browser: Python lays out, the browser paints.

:class:`LaidOut` gives a widget with a ``scene`` (and ``wrap``) trait two more synced traits:

* ``picture`` (dict, Python → JS): the display list (:mod:`stridewidget.render.listing`) of the
  scene's picture, laid out for the widget's width, colours as theme roles; the front end
  (``js/paint/``) paints it and links hover from its keys, deciding nothing;
* ``width`` (int or None, JS → Python): the px the front end has for the picture.  Python lays the
  picture out again only when it changes by at least one storage cell's width, so a column that
  grows by a few px does not redraw.  None (no front end yet, a kernel-free page) lays out for
  :data:`~stridewidget.render.primitives.MAX_WIDTH`.
"""

from __future__ import annotations

from typing import Any

import traitlets

from ..render.listing import display_list
from ..render.picture import draw
from ..render.primitives import MAX_WIDTH
from ..style import STYLE

__all__ = ["LaidOut", "layout_width", "picture_of"]

#: Narrowest and widest px the picture is laid out for (a narrower box scales it down).
MIN_LAYOUT, MAX_LAYOUT = 320, 1600
#: A width change smaller than this keeps the picture as it is (one storage cell).
RELAYOUT_PX = STYLE["geometry"]["cell_w"]


def layout_width(width: int | None) -> int:
    """The px a picture is laid out for, given what the front end reports.

    >>> layout_width(None), layout_width(100), layout_width(900), layout_width(5000)
    (1240, 320, 900, 1600)
    """
    if width is None:
        return MAX_WIDTH
    return max(MIN_LAYOUT, min(MAX_LAYOUT, int(width)))


def picture_of(scene: dict[str, Any], width: int | None, wrap: int | None) -> dict[str, Any]:
    """The display list of ``scene`` laid out for ``width`` px, ``wrap`` cells per storage row.

    >>> import torch
    >>> from stridewidget.scene.build import build_scene
    >>> listed = picture_of(build_scene({"x": torch.zeros(3)}), 600, None)
    >>> listed["v"], listed["width"] <= 600
    (1, True)
    """
    if wrap is not None:
        scene = {**scene, "storages": [{**st, "wrap": wrap} for st in scene.get("storages", [])]}
    return display_list(draw(scene, width=layout_width(width), roles=True))


class LaidOut(traitlets.HasTraits):
    """The ``picture`` and ``width`` traits, kept in step with ``scene``, ``wrap`` and ``width``."""

    picture = traitlets.Dict().tag(sync=True)
    width = traitlets.Int(default_value=None, allow_none=True).tag(sync=True)

    _laid_width: int | None = None

    @traitlets.validate("width")
    def _valid_width(self, proposal: Any) -> int | None:
        value = proposal["value"]
        if value is not None and (isinstance(value, bool) or value < 0):
            raise traitlets.TraitError(f"width must be px >= 0 or None, got {value!r}")
        return value

    @traitlets.observe("scene", "wrap")
    def _scene_changed(self, change: Any) -> None:
        self.lay_out()

    @traitlets.observe("width")
    def _width_changed(self, change: Any) -> None:
        new = layout_width(change["new"])
        if self._laid_width is None or abs(new - self._laid_width) >= RELAYOUT_PX:
            self.lay_out()

    def lay_out(self) -> None:
        """Lay the picture out again for the current scene, wrap and width."""
        scene = getattr(self, "scene", None) or {"storages": [], "tensors": []}
        self._laid_width = layout_width(self.width)
        self.picture = picture_of(scene, self.width, getattr(self, "wrap", None))
