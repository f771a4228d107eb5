"""The ``as_strided`` playground: edit a view's size, stride and storage offset over a real storage.

Python lays the picture out (x and the view, one picture as :func:`stridewidget.show` draws it,
plus the cells a refused setting would read past the storage's end) and sends it as the
``picture`` trait (:class:`~stridewidget.notebook.picture.LaidOut`); the front end
(``js/playground/``, bundled into ``static/playground.js``) paints it with the widget's painter
and linker.  The verdict on a setting — bounds, overlap, the standard op it equals — the front end
computes itself as you type (``js/playground/math.js``, the twin of the checks here), so it answers
at once and also in a page with no kernel; there the picture stays the one saved with the page
and says that drawing another needs a kernel (``drawn`` names the setting it shows).  With a
kernel, :attr:`Playground.view` is the checked :func:`stridewidget.as_strided` view and
:attr:`Playground.code` the ``torch.as_strided`` call to copy.  A setting that would leave the
storage is refused by the same checks on both sides and never reaches ``torch.as_strided``.
"""

from __future__ import annotations

import html
import warnings
from collections.abc import Sequence
from typing import Any

import traitlets

from ..adapters.as_strided import as_strided
from ..adapters.inspect import inspect
from ..adapters.numpy import is_ndarray, numpy_storage_view
from ..errors import LayoutError
from ..layout.ints import as_index, as_indices
from ..unseen import unseen
from .picture import LaidOut, laid_out
from .widget import StaticFallbackWidget, bundle

__all__ = ["Playground", "playground"]


def _python_tuple(values: Sequence[int]) -> str:
    return "(" + ", ".join(str(v) for v in values) + ("," if len(values) == 1 else "") + ")"


def _numpy_view(base: Any, size: Sequence[int], stride: Sequence[int], offset: int) -> Any:
    """A NumPy array over ``base``'s buffer with an already checked setting (no copy).

    Built from an ``__array_interface__`` whose owner keeps ``base`` alive, as NumPy's own
    ``as_strided`` does; writable exactly when ``base`` is.
    """
    import numpy as np

    layout = inspect(base)

    class _Window:
        def __init__(self) -> None:
            self.base = base
            self.__array_interface__ = {
                "shape": tuple(size),
                "typestr": base.dtype.str,
                "data": (
                    (layout.storage_address or 0) + offset * layout.itemsize,
                    not base.flags.writeable,
                ),
                "strides": tuple(s * layout.itemsize for s in stride),
                "version": 3,
            }

    return np.asarray(_Window())


def _numpy_backwards(stride: tuple[int, ...]) -> str:
    """The one line for a NumPy setting that steps backwards (NumPy allows it; the playground's
    checks and its browser twin take non-negative strides only).

    >>> _numpy_backwards((-1,))
    'playground: stride (-1,) steps backwards, and the playground edits non-negative strides only; pass the array that owns the memory (a.base) or strides >= 0'
    """
    return (
        f"playground: stride {_python_tuple(stride)} steps backwards, and the playground edits "
        "non-negative strides only; pass the array that owns the memory (a.base) or strides >= 0"
    )


class Playground(LaidOut, StaticFallbackWidget):
    """Edit ``size``, ``stride`` and ``storage_offset`` over a tensor's storage and watch the view.

    Build it with :func:`playground`.  The traits ``size``, ``stride`` and ``offset`` follow the
    controls (and setting them from Python moves the controls); ``error`` is the refusal message
    for the current setting, ``""`` when it is valid.
    """

    # The bundle's text, not its path: anywidget ties a widget whose _esm is a path to a
    # class-wide file watcher that keeps it (and its base tensor) alive forever.
    _esm = bundle("playground.js")
    _css = bundle("playground.css")

    # the base `x` and its storage (Python -> JS, set once)
    base_shape = traitlets.List(traitlets.Int()).tag(sync=True)
    base_strides = traitlets.List(traitlets.Int()).tag(sync=True)
    base_offset = traitlets.Int(0).tag(sync=True)
    storage_size = traitlets.Int(0).tag(sync=True)
    dtype = traitlets.Unicode("").tag(sync=True)
    itemsize = traitlets.Int(1).tag(sync=True)
    device = traitlets.Unicode("cpu").tag(sync=True)
    # what Python lays out (x and the checked view; not synced: the front end gets `picture`)
    scene = traitlets.Dict()
    # the setting `picture` shows: a page with no kernel compares it with the one being edited
    drawn = traitlets.Dict().tag(sync=True)
    # the edited view (both ways)
    size = traitlets.List(traitlets.Int()).tag(sync=True)
    stride = traitlets.List(traitlets.Int()).tag(sync=True)
    offset = traitlets.Int(0).tag(sync=True)
    # Python's verdict on the current setting (the front end computes the same message itself)
    error = traitlets.Unicode("").tag(sync=True)
    # the hovered cell (JS -> Python), as StrideWidget's: {"index": [...], "cell": k, ...} or None
    hovered = traitlets.Dict(default_value=None, allow_none=True).tag(sync=True)

    def __init__(
        self,
        base: Any,
        size: Sequence[int] | None = None,
        stride: Sequence[int] | None = None,
        storage_offset: int | None = None,
        **kwargs: Any,
    ) -> None:
        layout = inspect(base)
        if layout.unit != layout.itemsize:
            raise LayoutError(
                "playground: this NumPy view is not aligned to its item size, so its storage has "
                "no element cells; pass the array that owns the memory instead"
            )
        self._is_numpy = is_ndarray(base)
        if self._is_numpy:
            import torch

            # The whole buffer as a 1-d tensor (zero copy): the checked view is built on it.
            with warnings.catch_warnings():
                # torch warns that the buffer view is read-only: the playground never writes
                # through it, and `view` hands NumPy users read-only arrays for read-only bases.
                warnings.simplefilter("ignore", UserWarning)
                self._storage = torch.from_numpy(numpy_storage_view(base, layout))
        else:  # a torch.Tensor: inspect() refused everything else
            self._storage = base
        self._base = base
        size = layout.shape if size is None else size
        stride = layout.strides if stride is None else stride
        stride = list(as_indices(stride, "playground stride", int64=False))
        if self._is_numpy and min(stride, default=0) < 0:
            raise LayoutError(_numpy_backwards(tuple(stride)))
        super().__init__(
            base_shape=list(layout.shape),
            base_strides=list(layout.strides),
            base_offset=layout.offset,
            storage_size=layout.storage_size,
            dtype=layout.dtype,
            itemsize=layout.itemsize,
            device=layout.device,
            # as as_strided takes them: 2.7, "34" and True are refused, never truncated
            size=list(as_indices(size, "playground size", int64=False)),
            stride=stride,
            offset=as_index(
                layout.offset if storage_offset is None else storage_offset,
                "playground storage_offset",
                int64=False,
            ),
            **kwargs,
        )
        self._redraw()

    @traitlets.observe("size", "stride", "offset")
    def _on_setting(self, _change: Any) -> None:
        self._redraw()

    def _redraw(self) -> None:
        """Check the setting and lay out its picture: x and the view, or x alone when refused."""
        from ..scene.build import build_scene

        view = self._check()
        tensors = {"x": self._storage} if view is None else {"x": self._storage, "view": view}
        setting = {"size": list(self.size), "stride": list(self.stride), "offset": self.offset}
        self._laid = None
        self.scene = build_scene(tensors)  # lays the picture out (LaidOut observes it) ...
        if self._laid is None:  # ... unless it equals the last: the escaping cells still moved
            self.lay_out()
        self.drawn = setting

    def _draw(self, scene: dict[str, Any], width: int, wrap: int | None) -> Any:
        """The picture, with the cells a refused setting would read past the storage's end."""
        from ..render.phantom import below, escaping_cells, phantom_picture

        picture = laid_out(scene, width, wrap, light=self._light)
        if not self.error:
            return picture
        found = escaping_cells(self.size, self.stride, self.offset, self.storage_size)
        if not found or not found[0]:
            return picture
        cells, total = found
        more = phantom_picture(self.storage_size, cells, total, width=width, roles=True)
        return below(picture, more)

    def _check(self) -> Any:
        """The checked view for the current setting, or None; keeps ``error`` up to date."""
        try:
            view = as_strided(
                self._storage, self.size, self.stride, self.offset, allow_overlap=True
            )
        except LayoutError as refusal:
            backwards = self._is_numpy and min(self.stride, default=0) < 0
            self.error = _numpy_backwards(tuple(self.stride)) if backwards else str(refusal)
            return None
        self.error = ""
        return view

    @property
    def view(self) -> Any:
        """The view for the current setting (checked by :func:`stridewidget.as_strided`), or
        ``None`` when the setting is refused (``error`` says why).  For a NumPy base, a NumPy
        array sharing its memory."""
        view = self._check()
        if view is not None and self._is_numpy:
            return _numpy_view(self._base, self.size, self.stride, self.offset)
        return view

    @property
    def code(self) -> str:
        """The ``torch.as_strided`` call that builds the current view from ``x`` (the base).

        For a NumPy base, ``x`` stands for ``torch.from_numpy`` of the array that owns the memory.
        """
        return (
            f"torch.as_strided(x, size={_python_tuple(self.size)}, "
            f"stride={_python_tuple(self.stride)}, storage_offset={self.offset})"
        )

    def summary(self) -> str:
        """One paragraph of text: the setting, and the verdict."""
        head = (
            f"as_strided playground over {self.dtype} storage of {self.storage_size} "
            f"element{'' if self.storage_size == 1 else 's'} "
            f"(x: shape {_python_tuple(self.base_shape)}, stride {_python_tuple(self.base_strides)}, "
            f"offset {self.base_offset})\n{self.code}"
        )
        if self.error:
            return f"{head}\nrefused: {self.error}"
        view = self._check()
        return f"{head}\n{inspect(view)}"

    def __repr__(self) -> str:
        return self.summary()

    def _static_html(self) -> str:
        """The picture without JavaScript: the SVG of the picture the widget laid out."""
        from ..render.html import html_of
        from ..render.primitives import MAX_WIDTH
        from ..render.svg import svg_of_picture

        text = f"<pre>{html.escape(self.summary())}</pre>"
        picture = self._laid_picture
        if picture is None or self._laid_width != MAX_WIDTH or not self._light:
            # laid out for another column, or for the front end alone: laid out for saving
            saved, self._light = self._light, True
            try:
                picture = self._draw(self.scene, MAX_WIDTH, None)
            finally:
                self._light = saved
        svg = svg_of_picture(picture, keys=False)
        return text + html_of(self.scene, svg, drawn=[t["id"] for t in picture.tensors])


def playground(
    base: Any = None,
    size: Sequence[int] | None = None,
    stride: Sequence[int] | None = None,
    storage_offset: int | None = None,
) -> Playground:
    """An ``as_strided`` playground over ``base``'s storage (default: ``torch.arange(24).view(4, 6)``,
    whose values are their storage indices).

    ``size``, ``stride`` and ``storage_offset`` give the first setting (default: ``base``'s own).
    Edit them in the widget, or set ``pg.size``, ``pg.stride``, ``pg.offset``; read the result as
    ``pg.view`` (checked, ``None`` when refused) and the call to copy as ``pg.code``.

    >>> import torch, stridewidget as sw
    >>> pg = sw.playground(torch.arange(12.0).view(3, 4), size=(4, 3), stride=(1, 4))
    >>> pg.code
    'torch.as_strided(x, size=(4, 3), stride=(1, 4), storage_offset=0)'
    >>> torch.equal(pg.view, torch.arange(12.0).view(3, 4).t())
    True
    >>> pg.stride = [1, 5]
    >>> pg.view is None, pg.error.split(";")[0]
    (True, 'as_strided: index (2, 2) maps to storage element 12, but the storage has only 12 elements (valid: 0..11)')
    """
    if base is None:
        import torch

        base = torch.arange(24).view(4, 6)
    with unseen():  # its views and picture are no event of a track_copies() block around it
        return Playground(base, size=size, stride=stride, storage_offset=storage_offset)
