"""The live widget of a ``DTensor``: the same picture as ``sw.render_svg(d)``, laid out in Python.

Python lays the distributed picture out (:func:`stridewidget.render.distributed.draw_distributed`:
the global grid coloured by the ranks holding each element, the mesh, the drawn ranks' storage
strips) into the widget's display list, for the px the browser reports; the browser paints it with
the ordinary widget front end and links hover from the picture's keys (``js/paint/link.js``): a
global element lights the storage cell holding it in every drawn rank strip and its holders' mesh
boxes, its hover line says which ranks hold it where (replicated or partial said so); a rank's
mesh box lights its elements and its storage.

The widget holds the ``DTensor`` weakly, as :class:`~stridewidget.StrideWidget` holds tensors:
once it is freed the picture stays as last laid out.  It is not re-read after every cell (an
in-place write under ``LocalTensorMode`` rewraps each rank's tensor without moving its version
counter, so only the values would tell): call :meth:`DistributedWidget.refresh`.
"""

from __future__ import annotations

import html
import weakref
from typing import Any

import traitlets

from ..adapters.distributed import distributed_layout
from ..layout.ints import as_wrap
from ..render.distributed import draw_distributed
from ..render.primitives import Picture
from .fallback import StaticFallbackWidget, bundle
from .picture import LaidOut

__all__ = ["DistributedWidget"]


class DistributedWidget(LaidOut, StaticFallbackWidget):
    """The live picture of one ``DTensor`` (``sw.show(d)``), hover-linked across the ranks.

    Synced traits as :class:`~stridewidget.StrideWidget`'s: ``picture`` (the display list),
    ``width``, ``hovered`` (``{"key": "e1,2"}`` over global element ``[1, 2]``, ``{"key": "r3"}``
    over rank 3, ``{"key": "r3:5"}`` over storage cell 5 of rank 3), ``wrap`` (the rank strips'
    storage cells a row).

    >>> import torch, torch.distributed as dist
    >>> from torch.distributed._local_tensor import LocalTensorMode
    >>> from torch.distributed.device_mesh import init_device_mesh
    >>> from torch.distributed.tensor import Shard, distribute_tensor
    >>> from torch.testing._internal.distributed.fake_pg import FakeStore
    >>> dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=2)
    >>> with LocalTensorMode(2):
    ...     d = distribute_tensor(torch.arange(4.0), init_device_mesh("cpu", (2,)), [Shard(0)])
    >>> w = DistributedWidget(d, "d")
    >>> print(w.summary())
    DistributedWidget · d: DTensor float32 (4,) on mesh (dim0=2) [Shard(0)]
    >>> dist.destroy_process_group()
    """

    _esm = bundle("widget.js")
    _css = bundle("widget.css")

    # what Python lays out from (not synced): a new dict lays the picture out again
    scene = traitlets.Dict()
    hovered = traitlets.Dict(default_value=None, allow_none=True).tag(sync=True)
    wrap = traitlets.Int(default_value=None, allow_none=True).tag(sync=True)
    # the toolbar's slice picker writes it; a DTensor's picture offers no slice to pick
    picked = traitlets.Dict().tag(sync=True)

    @traitlets.validate("picked")
    def _valid_picked(self, proposal: Any) -> dict[str, Any]:
        # a pick would be kept and draw nothing: refused in words
        if proposal["value"]:
            raise traitlets.TraitError(
                f"picked: a DTensor's picture draws its shards, it has no slices to pick "
                f"(got {proposal['value']!r:.40})"
            )
        return proposal["value"]

    def __init__(self, d: Any, name: str = "d", *, wrap: int | None = None) -> None:
        # read first: a DTensor whose process group is gone is one clear LayoutError, before a
        # comm is opened
        self.dlayout = distributed_layout(d)
        self.name = str(name)
        self._ref = weakref.ref(d)
        self._reads = 0
        super().__init__(scene={"dtensor": self.name, "read": 0}, wrap=as_wrap(wrap))

    @property
    def dtensor(self) -> Any:
        """The live ``DTensor`` (None once it was freed)."""
        return self._ref()

    def refresh(self) -> None:
        """Read the DTensor again and lay its picture out again."""
        d = self._ref()
        if d is not None:
            self.dlayout = distributed_layout(d)
        self._reads += 1  # a new scene (an equal dict would not be a change)
        self.scene = {"dtensor": self.name, "read": self._reads}

    def _draw(self, scene: dict[str, Any], width: int, wrap: int | None) -> Picture:
        d = self._ref()
        if d is None and self._laid_picture is not None:  # freed: the picture as last laid out
            return self._laid_picture
        return draw_distributed(d, self.name, width=width, roles=True, wrap=wrap)

    def lay_out(self) -> None:
        """Lay the picture out (:meth:`LaidOut.lay_out`); its rank strips offer no slice picker."""
        super().lay_out()
        tensors = self.picture.get("tensors", [])
        if any(t.get("pick") for t in tensors):
            self.picture = {**self.picture, "tensors": [{**t, "pick": None} for t in tensors]}

    def summary(self) -> str:
        """One line: the DTensor's layout in words."""
        gone = "" if self._ref() is not None else " (freed: the picture as last drawn)"
        return f"DistributedWidget · {self.name}: {str(self.dlayout).split(' · ')[0]}{gone}"

    def __repr__(self) -> str:
        return self.summary()

    def _static_html(self) -> str:
        from ..render.html import html_of
        from ..render.svg import svg_of_picture

        drawn = self.fallback_svg()  # the picture the widget laid out, keyless
        if drawn is None and self._ref() is not None:
            drawn = svg_of_picture(draw_distributed(self._ref(), self.name), keys=False)
        words = html.escape(self.dlayout.explain())
        pre = f'<pre style="white-space:pre-wrap;margin:4px 0">{words}</pre>'
        return html_of({}, (drawn or "") + pre)
