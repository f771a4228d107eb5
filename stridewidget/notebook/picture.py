"""The laid-out picture a widget sends to the browser: Python lays out, the browser paints.

:class:`LaidOut` gives a widget with a ``scene`` (and ``wrap``) trait two more synced traits:

* ``picture`` (dict, Python → JS): the display list (:mod:`stridewidget.render.listing`) of the
  scene's picture, laid out for the widget's width, colours as theme roles; the front end
  (``js/paint/``) paints it and links hover from its keys, deciding nothing.  It is synced as one
  JSON text (``JSON.parse`` in the browser): ipywidgets walks a nested state in Python for
  binary buffers on every send, a text it passes as it is;
* ``width`` (int or None, JS → Python): the px the front end has for the picture.  Python lays the
  picture out again whenever the picture as laid out is wider than that (else the painter would
  scale it down), and when the width grows by at least one storage cell's width, so a column that
  grows by a few px does not redraw.  None (no front end yet, a kernel-free page) lays out for
  :data:`~stridewidget.render.primitives.MAX_WIDTH`.
"""

from __future__ import annotations

import json
from typing import Any

import traitlets

from ..layout.ints import as_wrap
from ..render.listing import display_list
from ..render.picture import draw
from ..render.primitives import MAX_WIDTH, Picture
from ..render.svg import svg_of_picture
from ..style import STYLE

__all__ = ["LaidOut", "laid_out", "layout_width", "listed_json", "picture_of"]

#: Narrowest and widest px the picture is laid out for (a narrower box scales it down).
MIN_LAYOUT, MAX_LAYOUT = 320, 1600
#: A wider width by less than this keeps the picture as it is (one storage cell); a narrower one
#: lays it out again whenever the picture no longer fits.
RELAYOUT_PX = STYLE["geometry"]["cell_w"]


def listed_json(listed: dict[str, Any]) -> str:
    """A display list as the JSON text the ``picture`` trait is synced as.

    >>> listed_json({"v": 1, "items": [["t", 1.5, 2, "x"]]})
    '{"v":1,"items":[["t",1.5,2,"x"]]}'
    """
    return _ENCODER.encode(listed)


#: The display list is a tree our own code builds, never a cycle: no container is checked for
#: one (a set entry per list: an eighth of the encoding)
_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, check_circular=False)


def layout_width(width: int | None) -> int:
    """The px a picture is laid out for, given what the front end reports.

    >>> layout_width(None), layout_width(100), layout_width(900), layout_width(5000)
    (900, 320, 900, 1600)
    """
    if width is None:
        return MAX_WIDTH
    return max(MIN_LAYOUT, min(MAX_LAYOUT, int(width)))


def laid_out(
    scene: dict[str, Any],
    width: int | None,
    wrap: int | None,
    every_tensor: bool = False,
    light: bool = True,
) -> Picture:
    """The picture of ``scene`` laid out for ``width`` px, ``wrap`` cells per storage row, its
    colours theme roles (one layout for the widget and the static fallback); ``every_tensor``,
    ``light``: see :func:`~stridewidget.render.picture.draw`."""
    if wrap is not None:
        scene = {**scene, "storages": [{**st, "wrap": wrap} for st in scene.get("storages", [])]}
    return draw(
        scene,
        width=layout_width(width),
        roles=True,
        every_tensor=every_tensor,
        light=light,
    )


def picture_of(scene: dict[str, Any], width: int | None, wrap: int | None) -> dict[str, Any]:
    """The display list of ``scene`` laid out for ``width`` px, ``wrap`` cells per storage row.

    >>> import torch
    >>> from stridewidget.scene.build import build_scene
    >>> listed = picture_of(build_scene({"x": torch.zeros(3)}), 600, None)
    >>> listed["v"], listed["width"] <= 600
    (1, True)

    As the widget lays it out: for a width its front end reported, not lighter for the saved
    fallback's weight (``light``); without one (``width=None``), for the fallback too.
    """
    return display_list(laid_out(scene, width, wrap, light=width is None))


class LaidOut(traitlets.HasTraits):
    """The ``picture`` and ``width`` traits, kept in step with ``scene``, ``wrap`` and ``width``."""

    picture = traitlets.Dict().tag(sync=True, to_json=lambda value, _widget: listed_json(value))
    width = traitlets.Int(default_value=None, allow_none=True).tag(sync=True)

    _laid_width: int | None = None

    @traitlets.validate("wrap")
    def _valid_wrap(self, proposal: Any) -> int | None:
        """A widget's ``wrap`` (where it has one) as ``render_text`` takes it: ``w.wrap = -3``
        would hang the front end's row layout."""
        try:
            return as_wrap(proposal["value"])
        except (TypeError, ValueError) as error:
            raise traitlets.TraitError(str(error)) from None

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
        new, laid = layout_width(change["new"]), self._laid_width
        lightened = self._laid_picture is not None and self._laid_picture.lightened
        if change["new"] is not None:
            self._light = False  # a front end paints it: nothing it paints is saved
        if laid is None or new - laid >= RELAYOUT_PX or lightened:
            self.lay_out()
        elif new < laid and self._laid_picture is not None and self._laid_picture.width > new:
            self.lay_out()  # narrower than the picture: laid out again, never painted scaled

    _laid: tuple | None = None
    _laid_picture: Picture | None = None
    #: laid out for the saved fallback too (over its weight budget: lighter), until a front end
    #: reports its width: then for the front end alone
    _light: bool = True

    def lay_out(self) -> None:
        """Lay the picture out again for the current scene, wrap and width (once for each)."""
        scene = getattr(self, "scene", None) or {"storages": [], "tensors": []}
        wrap = getattr(self, "wrap", None)
        key = (id(scene), wrap, layout_width(self.width), self._light)
        if key == self._laid and self._laid_picture is not None:
            return
        self._laid, self._laid_width = key, layout_width(self.width)
        self._laid_picture = self._draw(scene, layout_width(self.width), wrap)
        self.picture = display_list(self._laid_picture)

    def _draw(self, scene: dict[str, Any], width: int, wrap: int | None) -> Picture:
        """The picture of ``scene`` for ``width`` px (a widget may add to it: the playground's
        cells past the end); slices its reader picked are in the scene, marked: a picture too
        tall for its budget draws fewer panels, those last (:func:`.render.card._thinned`), and
        names the picks it leaves out in words (:func:`.render.elide.picks_not_drawn`)."""
        return laid_out(scene, width, wrap, light=self._light)

    def fallback_svg(self) -> str | None:
        """The static SVG of the picture as laid out, when it was laid out for the fallback's
        width (no front end has reported another yet): the display writes it from the same
        layout instead of laying the picture out twice.  None otherwise."""
        if self._laid_picture is None or self._laid_width != MAX_WIDTH or not self._light:
            return None
        return svg_of_picture(self._laid_picture, keys=False)
