"""The interactive widget: an ``anywidget`` that draws a scene and links hover both ways.

Python side only declares traits and keeps the tensors *weakly*: the picture is the scene
(:mod:`stridewidget._scene`, plain JSON), rebuilt by :meth:`StrideWidget.refresh`.  The front end is
the bundle ``static/widget.js`` built from ``js/`` (``npm run build``).
"""

from __future__ import annotations

import ast
import hashlib
import html
import inspect as inspect_module
import itertools
import os
import pathlib
import sys
import weakref
from collections.abc import Mapping
from types import FrameType
from typing import Any

import anywidget
import executing
import traitlets

from ._inspect import _is_ndarray, _is_tensor, inspect, read_cells
from ._ints import as_option, as_wrap
from ._layout import Layout
from ._scene import build_scene

__all__ = ["StrideWidget", "live_widgets", "show"]

_STATIC = pathlib.Path(__file__).parent / "static"
_SERIALS = itertools.count()
_PACKAGE_DIR = str(pathlib.Path(__file__).parent) + os.sep


class _Held:
    """One displayed tensor, held without keeping its memory alive.

    Holds a weak reference to the object and, for a view, to its base too: ``show(x[:, ::2])``
    passes a temporary view that dies at once, but while ``x`` lives the same view is rebuilt
    from ``x`` (sharing its storage, no copy).
    """

    def __init__(self, name: str, obj: Any) -> None:
        self.name = name
        self.layout = inspect(obj)  # first: a non-tensor gets inspect's TypeError
        self.strong = obj if isinstance(obj, Layout) else None  # pure data: tiny, keep it
        self.ref = None if self.strong is not None else weakref.ref(obj)
        self.base_ref = None
        if _is_tensor(obj) and obj._base is not None:
            self.base_ref = weakref.ref(obj._base)
        elif _is_ndarray(obj) and obj.base is not None and _is_ndarray(obj.base):
            root = obj
            while _is_ndarray(root.base):
                root = root.base
            self.base_ref = weakref.ref(root)
        self.byte_offset = (
            _data_address(obj) - _data_address(self.base_ref())
            if (self.base_ref is not None and _is_ndarray(obj))
            else 0
        )
        self.dtype = obj.dtype if not isinstance(obj, Layout) else None
        self.version = self.current_version()
        self.fingerprint: bytes | None = None

    def current_version(self) -> int | None:
        """The in-place version counter: the view's own, or its base's (views share it)."""
        obj = self.ref() if self.ref is not None else None
        if obj is None and self.base_ref is not None:
            obj = self.base_ref()
        return None if obj is None else _version(obj)

    def get(self) -> Any:
        """The live object, rebuilt from its base if only the base is alive; None once freed."""
        if self.strong is not None:
            return self.strong
        obj = self.ref()
        if obj is not None:
            return obj
        base = self.base_ref() if self.base_ref is not None else None
        if base is None:
            return None
        lay = self.layout
        if _is_tensor(base):
            # new_empty makes the tensor the base's kind (a FakeTensor's storage is on meta while
            # it says cpu: a plain empty tensor on base.device could not take that storage)
            view = base.new_empty(0, dtype=self.dtype, requires_grad=False)
            return view.set_(base.untyped_storage(), lay.offset, lay.shape, lay.strides)
        np = sys.modules["numpy"]
        return np.ndarray(
            lay.shape,
            dtype=self.dtype,
            buffer=base,
            offset=self.byte_offset,
            strides=lay.byte_strides,
        )


def _data_address(obj: Any) -> int:
    return obj.__array_interface__["data"][0]


def _version(obj: Any) -> int | None:
    """torch's in-place version counter (views share their base's); None where there is none."""
    if not _is_tensor(obj):
        return None
    try:
        return obj._version
    except RuntimeError:  # inference tensors track no version
        return None


# A label longer than this reads worse than the generic one (the user can still name it).
_MAX_SOURCE_LABEL = 40


def _user_frame() -> FrameType | None:
    """The innermost frame outside this package: the user's code that called us."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame = frame.f_back
    return frame


def _source_labels(frame: FrameType, count: int) -> list[str | None]:
    """The source text of the positional arguments of the call ``frame`` is making into us.

    ``sw.show(a[::2], y)`` gives ``["a[::2]", "y"]``.  Uses the ``executing`` library (the one
    IPython's tracebacks use), which finds the exact call node of the frame's current
    instruction; anything it cannot pin down (no source, ``*args``) gives ``None``s.
    """
    unknown: list[str | None] = [None] * count
    try:
        node = executing.Source.executing(frame).node
    except Exception:  # executing never promises a node: no source, odd bytecode, ...
        return unknown
    if not isinstance(node, ast.Call) or len(node.args) != count:
        return unknown
    if any(isinstance(arg, ast.Starred) for arg in node.args):
        return unknown
    labels = [ast.unparse(arg) for arg in node.args]
    return [label if len(label) <= _MAX_SOURCE_LABEL else None for label in labels]


def _caller_names(objects: tuple[Any, ...]) -> list[str | None]:
    """Labels for positional tensors: the caller's source text, else a variable bound to them.

    The source text is exact (``sw.show(a[::2])`` → ``a[::2]``; ``y = w; sw.show(y)`` → ``y``);
    the lookup by identity is the fallback where there is no source (``exec`` of a string, some
    REPLs).
    """
    frame = _user_frame()
    if frame is None:
        return [None] * len(objects)
    names = _source_labels(frame, len(objects))
    if all(name is not None for name in names):
        return names
    local_scope = frame.f_locals
    for position, obj in enumerate(objects):
        if names[position] is not None:
            continue
        for scope in (local_scope, frame.f_globals):
            found = next((k for k, v in scope.items() if v is obj and not k.startswith("_")), None)
            if found is not None:
                names[position] = found
                break
    if sys.version_info < (3, 13) and frame.f_code.co_flags & inspect_module.CO_OPTIMIZED:
        # Before PEP 667, f_locals of a function frame is a snapshot dict cached on the frame:
        # it would keep the caller's tensors alive after `del x`.  Emptying the snapshot is safe
        # (the next f_locals access re-reads the real locals).
        local_scope.clear()
    return names


# Every StrideWidget not yet closed, held weakly: a widget the front end still shows is kept alive
# by its comm (ipywidgets, marimo), one nobody can see any more just drops out.
_LIVE: weakref.WeakSet[StrideWidget] = weakref.WeakSet()


def live_widgets() -> list[StrideWidget]:
    """The StrideWidgets that are alive and not closed, oldest first.

    >>> import torch, stridewidget as sw
    >>> w = sw.show(x=torch.zeros(2))
    >>> w in live_widgets()
    True
    >>> w.close()
    >>> w in live_widgets()
    False
    """
    return sorted(_LIVE, key=lambda widget: widget._serial)


class StaticFallbackWidget(anywidget.AnyWidget):
    """An AnyWidget whose output also carries a static picture and a text summary.

    Subclasses provide ``summary() -> str`` and ``_static_html() -> str``.  The live view stays
    first; ``text/html`` is what nbviewer, GitHub and nbconvert without widget state show, and
    ``text/plain`` what a terminal shows.
    """

    def summary(self) -> str:  # pragma: no cover - every subclass overrides it
        raise NotImplementedError

    def _static_html(self) -> str:  # pragma: no cover - every subclass overrides it
        raise NotImplementedError

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        bundle = super()._repr_mimebundle_(**kwargs)
        if bundle is None:  # closed widget
            return None
        data, metadata = bundle if isinstance(bundle, tuple) else (bundle, {})
        data = dict(data)
        data["text/plain"] = self.summary()
        data["text/html"] = self._static_html()
        return data, metadata


class StrideWidget(StaticFallbackWidget):
    """Storage grid, logical grid(s) and stride arrows of live tensors, with hover linking.

    ``StrideWidget(*tensors, **named_tensors)`` takes ``torch.Tensor``, ``numpy.ndarray`` or
    :class:`~stridewidget.Layout` objects.  Positional ones are named after the caller's variable
    when there is one (``StrideWidget(x)`` → ``"x"``), else ``t0``, ``t1``, ...  Tensors over one
    storage share one storage grid; different storages are drawn separately.

    Options (keyword-only, so these names can't name tensors): ``wrap`` (storage cells per row;
    None = the scene's suggestion), ``edge_items`` and ``threshold`` (elision, see
    :func:`stridewidget._scene.build_scene`).

    Synced traits:

    * ``scene`` (dict, Python → JS): the scene, see :mod:`stridewidget._scene`.
    * ``hovered`` (dict or None, JS → Python): what the pointer is on —
      ``{"tensor": "t0", "name": "x", "index": [1, 2], "storage": "s0", "cell": 6}`` over a logical
      cell, ``{"storage": "s0", "cell": 6}`` over a storage cell.
    * ``wrap`` (int or None, both ways): storage row width; the widget's own control sets it too.

    Methods: :meth:`refresh` re-reads the tensors; :meth:`refresh_if_changed` does so only if one
    was modified in place (version counter), re-laid-out or freed, and says whether it did.
    The widget holds only weak references: it never keeps a tensor's memory alive.

    >>> import torch, stridewidget as sw
    >>> x = torch.arange(12.0).reshape(3, 4)
    >>> w = sw.StrideWidget(x, xt=x.t())
    >>> w.names, len(w.scene["storages"])
    (['x', 'xt'], 1)
    >>> _ = x.mul_(2)
    >>> w.refresh_if_changed(), w.scene["storages"][0]["cells"]["text"][1]
    (True, '2.')
    >>> w.refresh_if_changed()
    False
    """

    # The bundle's text, not its path: for a path anywidget connects every widget to a
    # class-wide file watcher that keeps the widget alive forever, even after close().
    _esm = (_STATIC / "widget.js").read_text(encoding="utf-8")
    _css = (_STATIC / "widget.css").read_text(encoding="utf-8")

    scene = traitlets.Dict().tag(sync=True)
    hovered = traitlets.Dict(default_value=None, allow_none=True).tag(sync=True)
    wrap = traitlets.Int(default_value=None, allow_none=True).tag(sync=True)

    def __init__(
        self,
        *tensors: Any,
        wrap: int | None = None,
        edge_items: int = 3,
        threshold: int = 256,
        **named_tensors: Any,
    ) -> None:
        if not tensors and not named_tensors:
            raise TypeError(
                "StrideWidget needs at least one tensor or array: StrideWidget(x) or "
                "StrideWidget(a=x, b=x.t())"
            )
        if len(tensors) == 1 and isinstance(tensors[0], Mapping) and not named_tensors:
            # names -> tensors as one mapping, so a tensor may be called "wrap" or "threshold"
            tensors, named_tensors = (), dict(tensors[0])
        named: dict[str, Any] = {}
        guesses = _caller_names(tensors)
        for position, (obj, guess) in enumerate(zip(tensors, guesses)):
            name = guess if guess is not None and guess not in named_tensors else f"t{position}"
            while name in named or name in named_tensors:
                name += "'"
            named[name] = obj
        named.update(named_tensors)
        # _Held inspects each object: a clear LayoutError/TypeError now, before a comm is opened,
        # so bad input leaves no half-built widget in ipywidgets' registry.
        held = [_Held(name, obj) for name, obj in named.items()]
        options = {
            "edge_items": as_option(edge_items, "edge_items"),
            "threshold": as_option(threshold, "threshold", minimum=0),
        }
        wrap = as_wrap(wrap)
        super().__init__()
        self._build_options = options
        self._held = held
        self.wrap = wrap
        self.refresh()
        self._serial = next(_SERIALS)
        _LIVE.add(self)
        # In IPython, re-read after every cell, so an in-place write in a later cell shows here
        # even without %load_ext (a no-op elsewhere: call refresh() there, e.g. in marimo).
        from ._display import ensure_refresh_hook

        ensure_refresh_hook(reason="widgets")

    @traitlets.validate("wrap")
    def _valid_wrap(self, proposal: Any) -> int | None:
        # w.wrap = -3 would hang the front end's row layout; the same rule as render_text's
        try:
            return as_wrap(proposal["value"])
        except (TypeError, ValueError) as error:
            raise traitlets.TraitError(str(error)) from None

    def close(self) -> None:
        """Close the front-end views; the widget leaves the live registry (no more refreshes)."""
        _LIVE.discard(self)
        super().close()

    # --- reading the tensors --------------------------------------------------------------------
    @property
    def names(self) -> list[str]:
        """The tensors' names, in display order."""
        return [held.name for held in self._held]

    @property
    def tensors(self) -> dict[str, Any]:
        """Name → the live tensor/array (None once it was freed).  Not a strong reference store."""
        return {held.name: held.get() for held in self._held}

    def refresh(self) -> None:
        """Re-read every live tensor (layout and shown values) and redraw."""
        live = {}
        released = []
        for held in self._held:
            obj = held.get()
            if obj is None:
                released.append(held.name)
                continue
            live[held.name] = obj
        if not live:
            scene = dict(self.scene) if self.scene else {"storages": [], "tensors": []}
            scene["released"] = released
            self.scene = scene
            return
        scene = build_scene(live, **self._build_options)
        scene["released"] = released
        for held in self._held:
            obj = live.get(held.name)
            if obj is not None:
                held.layout = inspect(obj)
                held.version = held.current_version()
                held.fingerprint = _fingerprint(obj, scene, held.name)
        self.scene = scene

    def refresh_if_changed(self) -> bool:
        """Refresh if a tensor changed since the last refresh; True if it did.

        Changed means: its in-place version counter moved (torch; views share it with their
        base, so writing through a view counts), its layout changed (``resize_``, ``set_``), it
        was freed, or — for NumPy, which has no version counter — a shown value changed.  Cheap
        enough to call after every notebook cell: O(ndim) per tensor, plus the shown cells for
        NumPy.
        """
        for held in self._held:
            obj = held.get()
            was_released = held.name in self.scene.get("released", ())
            if obj is None:
                if not was_released:
                    self.refresh()
                    return True
                continue
            if (
                was_released
                or inspect(obj) != held.layout
                or held.current_version() != held.version
                or _fingerprint(obj, self.scene, held.name) != held.fingerprint
            ):
                self.refresh()
                return True
        return False

    # --- text and static fallbacks --------------------------------------------------------------
    def summary(self) -> str:
        """A few plain lines: each tensor's layout and which storage it is in.

        >>> import torch, stridewidget as sw
        >>> x = torch.zeros(2, 3)
        >>> print(sw.StrideWidget(x, c=x.clone()).summary())
        StrideWidget · 2 tensors over 2 storages
          x: float32 (2,3):(3,1) +0 · storage 6 · contiguous  [storage s0]
          c: float32 (2,3):(3,1) +0 · storage 6 · contiguous  [storage s1]
        """
        scene = self.scene
        tensors = scene.get("tensors", [])
        storages = scene.get("storages", [])
        lines = [
            f"StrideWidget · {len(tensors)} tensor{'s' if len(tensors) != 1 else ''} over "
            f"{len(storages)} storage{'s' if len(storages) != 1 else ''}"
        ]
        for tensor in tensors:
            lines.append(
                f"  {tensor['name']}: {tensor['layout']['text']}  [storage {tensor['storage']}]"
            )
        for name in scene.get("released", ()):
            lines.append(f"  {name}: freed (the widget holds no reference)")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.summary()

    def _static_html(self) -> str:
        try:
            from .render import render_html
        except ImportError:
            return f"<pre>{html.escape(self.summary())}</pre>"
        scene = self.scene
        if self.wrap is not None:  # the static picture follows the user's row width too
            scene = {**scene, "storages": [{**st, "wrap": self.wrap} for st in scene["storages"]]}
        return render_html(scene)


def _fingerprint(obj: Any, scene: dict[str, Any], name: str) -> bytes | None:
    """Digest of the shown cells' raw values, for NumPy arrays (which have no version counter)."""
    if not _is_ndarray(obj):
        return None
    tensor = next((t for t in scene.get("tensors", []) if t["name"] == name), None)
    storage = next(
        (s for s in scene.get("storages", []) if tensor and s["id"] == tensor["storage"]), None
    )
    if storage is None or not storage["has_values"]:
        return None
    return hashlib.blake2b(read_cells(obj, storage["cells"]["index"]).tobytes()).digest()


def show(
    *tensors: Any,
    wrap: int | None = None,
    edge_items: int = 3,
    threshold: int = 256,
    **named_tensors: Any,
) -> StrideWidget:
    """The widget for these tensors (see :class:`StrideWidget`); display it or end a cell with it.

    >>> import torch, stridewidget as sw
    >>> a = torch.arange(6.0).reshape(2, 3)
    >>> w = sw.show(a, b=a.t(), c=a[:, ::2])
    >>> w.names, [t["storage"] for t in w.scene["tensors"]]
    (['a', 'b', 'c'], ['s0', 's0', 's0'])
    """
    return StrideWidget(
        *tensors, wrap=wrap, edge_items=edge_items, threshold=threshold, **named_tensors
    )
