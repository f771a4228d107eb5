"""The interactive widget: an ``anywidget`` that draws a scene and links hover both ways.

Python side only declares traits and keeps the tensors *weakly*: the picture is the scene
(:mod:`stridewidget.scene.build`, plain JSON), rebuilt by :meth:`StrideWidget.refresh`.  The front end is
the bundle ``static/widget.js`` built from ``js/`` (``npm run build``).
"""

from __future__ import annotations

import ast
import html
import inspect as inspect_module
import itertools
import sys
import weakref
from collections.abc import Mapping
from types import FrameType
from typing import Any

import executing
import traitlets

from .._compat import version_counter, view_base
from ..adapters.inspect import drawable
from ..adapters.numpy import is_ndarray
from ..adapters.rebuild import array_memory, rebuild_array, rebuild_tensor, tensor_memory
from ..adapters.torch import is_tensor
from ..frames import package_caller
from ..layout.ints import as_option, as_wrap
from ..layout.layout import Layout
from ..limits import MAX_SOURCE_LABEL as _MAX_SOURCE_LABEL
from ..render.distributed import single_dtensor
from ..render.labels import one_memory_words
from ..scene.build import build_scene
from ..scene.logical import checked_picks
from .distributed import DistributedWidget
from .fallback import StaticFallbackWidget, bundle
from .live import ensure_refresh_hook, forget, register
from .picture import LaidOut
from .watch import ShownCells

__all__ = ["StaticFallbackWidget", "StrideWidget", "bundle", "show"]

_SERIALS = itertools.count()


class _Held:
    """One displayed tensor, held without keeping its memory alive.

    Holds a weak reference to the object and to what may still hold its memory: its base (a
    NumPy view's root array) and, for a tensor, the other shown tensors (a ``b.view(torch.int32)``
    has no ``_base``).  ``show(x[:, ::2])`` passes a temporary view that dies at once, but while
    ``x`` holds the same memory the view is rebuilt over it (sharing it, no copy).
    """

    def __init__(self, name: str, obj: Any) -> None:
        self.name = name
        self.layout = drawable(obj)  # first: a non-tensor gets a TypeError, a DTensor a LayoutError
        self.strong = obj if isinstance(obj, Layout) else None  # pure data: tiny, keep it
        self.ref = None if self.strong is not None else weakref.ref(obj)
        self.base_refs: list[weakref.ref] = []
        self.memory: tuple | None = None
        self.byte_offset = 0
        self.writeable = True
        self.version_ref = self.ref
        if is_tensor(obj):
            self.memory = tensor_memory(obj)
            base = view_base(obj)
            if base is not None:  # a view shares its base's version counter
                self.base_refs.append(weakref.ref(base))
                self.version_ref = self.base_refs[0]
        elif is_ndarray(obj) and is_ndarray(obj.base):
            root = obj
            while is_ndarray(root.base):
                root = root.base
            self.base_refs.append(weakref.ref(root))
            self.memory = array_memory(root)
            self.byte_offset = _data_address(obj) - _data_address(root)
            self.writeable = "read-only" not in self.layout.notes
        self.dtype = obj.dtype if not isinstance(obj, Layout) else None
        self.gone_reason = "freed (the widget holds no reference)"
        self.version: int | None = None
        self.version = self.current_version()

    def share_memory_with(self, others: list[_Held]) -> None:
        """Let a freed tensor be rebuilt over another shown tensor that holds its storage."""
        if is_tensor(self.get()):
            self.base_refs += [o.ref for o in others if o is not self and o.ref is not None]

    def _live_bases(self) -> list[Any]:
        return [b for b in (ref() for ref in self.base_refs) if b is not None]

    def current_version(self) -> int | None:
        """The in-place version counter: the view's own, or its base's (views share it)."""
        obj = self.ref() if self.ref is not None else None
        if obj is None and self.version_ref is not None:
            obj = self.version_ref()
        if obj is None:  # rebuilt over another tensor's storage: no counter shared, bytes tell
            return self.version
        return _version(obj)

    def remember(self, obj: Any) -> None:
        """Record what ``obj`` is now: its layout, version and, while it lives, its memory."""
        self.layout = drawable(obj)
        self.version = self.current_version()
        if self.ref is not None and self.ref() is obj and is_tensor(obj):
            self.memory = tensor_memory(obj)

    def get(self) -> Any:
        """The live object, rebuilt over memory a live base still holds; None once gone."""
        if self.strong is not None:
            return self.strong
        obj = self.ref()
        if obj is not None:
            return obj
        bases = self._live_bases()
        if not bases:
            return None
        if is_tensor(bases[0]):
            view = rebuild_tensor(bases, self.layout, self.dtype, self.memory)
        else:
            view = rebuild_array(
                bases[0], self.layout, self.dtype, self.byte_offset, self.writeable, self.memory
            )
        if isinstance(view, str):
            self.gone_reason = view
            return None
        return view


def _data_address(obj: Any) -> int:
    return obj.__array_interface__["data"][0]


def _version(obj: Any) -> int | None:
    """torch's in-place version counter (views share their base's); None where there is none."""
    if not is_tensor(obj):
        return None
    return version_counter(obj)


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
    frame = package_caller()
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


def _still_slices(
    live: Mapping[str, Any], picked: Mapping[str, Any]
) -> tuple[dict[str, list], dict[str, list[list[int]]]]:
    """``picked`` split into the picks that are slices of their ``live`` tensors now and, by
    name, those that are not (their tensor was resized in place since they were picked)."""
    kept: dict[str, list] = {}
    lost: dict[str, list[list[int]]] = {}
    for name, picks in picked.items():
        if name not in live:
            continue
        shape = drawable(live[name]).shape
        for pick in picks:
            try:
                checked_picks([pick], shape[: max(len(shape) - 2, 0)], name)
            except (TypeError, ValueError):
                lost.setdefault(name, []).append(list(pick) if isinstance(pick, list) else [pick])
            else:
                kept.setdefault(name, []).append(pick)
    return kept, lost


class StrideWidget(LaidOut, StaticFallbackWidget):
    """Storage grid, logical grid(s) and stride arrows of live tensors, with hover linking.

    ``StrideWidget(*tensors, **named_tensors)`` takes ``torch.Tensor``, ``numpy.ndarray`` or
    :class:`~stridewidget.Layout` objects.  Positional ones are named after the caller's variable
    when there is one (``StrideWidget(x)`` → ``"x"``), else ``t0``, ``t1``, ...  Tensors over one
    storage share one storage grid; different storages are drawn separately.

    Options (keyword-only, so these names can't name tensors): ``wrap`` (storage cells per row;
    None = the scene's suggestion), ``edge_items`` and ``threshold`` (elision, see
    :func:`stridewidget.scene.build.build_scene`).

    Synced traits:

    * ``scene`` (dict, Python → JS): the scene, see :mod:`stridewidget.scene.build`.
    * ``hovered`` (dict or None, JS → Python): what the pointer is on —
      ``{"tensor": "t0", "name": "x", "index": [1, 2], "storage": "s0", "cell": 6}`` over a logical
      cell, ``{"storage": "s0", "cell": 6}`` over a storage cell, ``{"tensor": "t0", "dim": "1"}``
      over a stride arrow or its label.
    * ``wrap`` (int or None, both ways): storage row width; the widget's own control sets it too.
    * ``picture`` (dict, Python → JS) and ``width`` (int or None, JS → Python): the scene's picture
      laid out by Python for the px the front end has (:mod:`stridewidget.notebook.picture`); the
      browser only paints and links it.

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
    _esm = bundle("widget.js")
    _css = bundle("widget.css")

    # what Python lays out (not synced: the front end gets the laid-out `picture`)
    scene = traitlets.Dict()
    hovered = traitlets.Dict(default_value=None, allow_none=True).tag(sync=True)
    wrap = traitlets.Int(default_value=None, allow_none=True).tag(sync=True)
    # the slice picker: tensor name -> leading indices whose slices are shown besides the listed
    picked = traitlets.Dict().tag(sync=True)

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
        for one in held:
            one.share_memory_with(held)
        options = {
            "edge_items": as_option(edge_items, "edge_items"),
            "threshold": as_option(threshold, "threshold", minimum=0),
        }
        wrap = as_wrap(wrap)
        self._build_options = options
        self._held = held
        # the comm opens with the whole state: one message, not one per trait set after it
        # (setting scene lays the picture out before the comm opens: LaidOut observes it)
        super().__init__(scene=self._read(), wrap=wrap)
        self._serial = next(_SERIALS)
        register(self)
        # In IPython, re-read after every cell, so an in-place write in a later cell shows here
        # even without %load_ext (a no-op elsewhere: call refresh() there, e.g. in marimo).
        ensure_refresh_hook(reason="widgets")

    @traitlets.validate("picked")
    def _valid_picked(self, proposal: Any) -> dict[str, Any]:
        # a pick that is no slice of its tensor would fail every redraw: refused when set
        value = proposal["value"]
        shapes = {t["name"]: t["logical"]["shape"] for t in self.scene.get("tensors", [])}
        for name, picks in value.items():
            if name not in shapes:
                raise traitlets.TraitError(f"picked: no tensor named {name!r} in this widget")
            shape = shapes[name]
            # the picker adds to the list: a pick kept from before its tensor was resized in
            # place is no slice now, said in the card (lost_picks), never refusing a new one
            kept = self.picked.get(name, [])
            if isinstance(picks, list):
                picks = [pick for pick in picks if pick not in kept]
            try:
                checked_picks(picks, shape[: max(len(shape) - 2, 0)], name)
            except TypeError as error:
                raise traitlets.TraitError(str(error)) from None
            except ValueError as error:
                grid = (  # one grid: no slice to pick
                    f"picked: {name} is {len(shape)}-D, drawn as one grid: it has no slices to "
                    "pick (a tensor of 3 dims or more has)"
                )
                raise traitlets.TraitError(grid if len(shape) < 3 else str(error)) from None
        return value

    @traitlets.observe("picked")
    def _picked_changed(self, change: Any) -> None:
        self.refresh()

    def close(self) -> None:
        """Close the front-end views; the widget leaves the live registry (no more refreshes)."""
        forget(self)
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
        self.scene = self._read()

    def _read(self) -> dict[str, Any]:
        """The scene of the tensors now; remembers what each one is and which cells it shows."""
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
            self._shown = ShownCells({}, {})
            return scene
        # a picked slice the tensor no longer has (resized in place): not drawn, said in its card
        picked, lost = _still_slices(live, self.picked)
        scene = build_scene(live, picked=picked, **self._build_options)
        for tensor in scene["tensors"]:
            if tensor["name"] in lost:
                tensor["lost_picks"] = lost[tensor["name"]]
        scene["released"] = released
        for held in self._held:
            obj = live.get(held.name)
            if obj is not None:
                held.remember(obj)
        self._shown = ShownCells(live, scene)
        return scene

    def refresh_if_changed(self) -> bool:
        """Refresh if a tensor changed since the last refresh; True if it did.

        Changed means: its in-place version counter moved (torch; views share it with their
        base, so writing through a view counts), its layout or its memory changed (``resize_``,
        ``set_``, ``p.data = new``), it was freed, or a shown storage cell holds another value
        than drawn.  The last catches what no version counter sees: NumPy writes, and writes
        to a CPU tensor through ``t.numpy()`` or ``t.data``.  On other devices (CUDA) only the
        version counter is checked: comparing would copy the cells to the host and sync.  Cheap
        enough to call after every notebook cell: O(ndim) per tensor, plus one read of the shown
        cells (at most ``max_storage_cells``) per CPU storage.
        """
        live = {}
        for held in self._held:
            obj = held.get()
            was_released = held.name in self.scene.get("released", ())
            if obj is None:
                if not was_released:
                    self.refresh()
                    return True
                continue
            now = drawable(obj)
            if (
                was_released
                or now != held.layout
                or now.storage_address != held.layout.storage_address
                or held.current_version() != held.version
            ):
                self.refresh()
                return True
            live[held.name] = obj
        if self._shown.changed(live):
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
        lines[0] += "".join(f" ({words})" for words in one_memory_words(storages))
        for tensor in tensors:
            lines.append(
                f"  {tensor['name']}: {tensor['layout']['text']}  [storage {tensor['storage']}]"
            )
        reasons = {held.name: held.gone_reason for held in self._held}
        for name in scene.get("released", ()):
            lines.append(f"  {name}: {reasons.get(name, 'freed')}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.summary()

    def _static_html(self) -> str:
        try:
            from ..render import render_html
            from ..render.html import html_of
        except ImportError:
            return f"<pre>{html.escape(self.summary())}</pre>"
        drawn = self.fallback_svg()  # the picture the widget laid out: not laid out twice
        if drawn is not None:
            tensors = self._laid_picture.tensors if self._laid_picture is not None else []
            return html_of(self.scene, drawn, drawn=[t["id"] for t in tensors])
        scene = self.scene
        if self.wrap is not None:  # the static picture follows the user's row width too
            scene = {**scene, "storages": [{**st, "wrap": self.wrap} for st in scene["storages"]]}
        return render_html(scene)


def show(
    *tensors: Any,
    wrap: int | None = None,
    edge_items: int = 3,
    threshold: int = 256,
    **named_tensors: Any,
) -> StrideWidget | DistributedWidget:
    """The widget for these tensors (see :class:`StrideWidget`); display it or end a cell with it.

    A ``DTensor`` alone gets its own live picture (:class:`DistributedWidget`: the global grid by
    holding ranks, the mesh, the ranks' storage strips, as ``sw.render_svg(d)`` draws them, with
    hover linking an element to every rank's storage cell holding it).

    >>> import torch, stridewidget as sw
    >>> a = torch.arange(6.0).reshape(2, 3)
    >>> w = sw.show(a, b=a.t(), c=a[:, ::2])
    >>> w.names, [t["storage"] for t in w.scene["tensors"]]
    (['a', 'b', 'c'], ['s0', 's0', 's0'])
    """
    dtensor = single_dtensor(tensors, named_tensors)
    if dtensor is not None:
        name = dtensor[0] if named_tensors else (_caller_names(tensors)[0] or "d")
        return DistributedWidget(dtensor[1], name, wrap=wrap)
    try:
        return StrideWidget(
            *tensors, wrap=wrap, edge_items=edge_items, threshold=threshold, **named_tensors
        )
    except TypeError as error:  # the refusal names what the user called: show(), not inspect()
        said = str(error)
        if not said.startswith("stridewidget.inspect() takes "):
            raise
        raise TypeError(
            "stridewidget.show()" + said.removeprefix("stridewidget.inspect()")
        ) from None
