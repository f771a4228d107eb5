"""IPython integration: ``%load_ext stridewidget`` / :func:`enable` make tensors display as the widget.

Once enabled, ``display(t)`` and a bare ``t`` at the end of a cell show a
:class:`~stridewidget.StrideWidget` (a ``DTensor``: its
:class:`~stridewidget.notebook.distributed.DistributedWidget`) whose mime bundle also carries torch's own text
(``text/plain``) and the static SVG picture (``text/html``, for viewers without a kernel).
:func:`disable` (or ``%unload_ext stridewidget``) restores the plain repr.

After every cell, live widgets re-read their tensors if one was modified in place
(:meth:`StrideWidget.refresh_if_changed`), so writing through a view visibly changes the
displayed base.  The hook reaches widgets only through the widget module's weak registry
(:func:`stridewidget.notebook.live.live_widgets`: a closed or forgotten widget drops out), and the
widgets hold their tensors weakly.  The hook stays while anything needs it: :func:`enable`, or a
widget made by ``sw.show``; :func:`disable` withdraws only what :func:`enable` added.
"""

from __future__ import annotations

import contextlib
from typing import Any

from ..gcpause import cyclic_gc_paused
from .live import _shell, _withdraw_refresh_hook, ensure_refresh_hook, refresh_live_widgets

__all__ = [
    "disable",
    "enable",
    "ensure_refresh_hook",
    "load_ipython_extension",
    "refresh_live_widgets",
    "unload_ipython_extension",
]

# Registered by name so that enabling never imports torch (or NumPy) itself.
_TYPES = {"torch": ("torch", "Tensor"), "numpy": ("numpy", "ndarray")}

# Per shell: what we registered (and what was there before us, to put it back on disable).
_STATE: dict[int, dict[str, Any]] = {}


def _user_name(ip: Any, obj: Any) -> str:
    """The user's variable name for ``obj`` (by identity), else a generic one."""
    for name, value in getattr(ip, "user_ns", {}).items():
        if value is obj and not name.startswith("_"):
            return name
    return "tensor"


def _bundle_for(ip: Any) -> Any:
    @cyclic_gc_paused
    def bundle(obj: Any) -> tuple[dict[str, Any], dict[str, Any]] | None:
        from ..adapters.distributed import is_dtensor
        from ..adapters.inspect import drawable
        from ..errors import LayoutError
        from .distributed import DistributedWidget
        from .widget import StrideWidget

        try:
            if is_dtensor(obj):  # its own picture: global grid, mesh, ranks' storages
                widget: Any = DistributedWidget(obj, _user_name(ip, obj))
            else:
                drawable(obj)  # sparse, nested ...: keep their plain repr
                widget = StrideWidget(**{_user_name(ip, obj): obj})
        except (LayoutError, TypeError):
            return None
        result = widget._repr_mimebundle_()
        if result is None:
            return None
        data, metadata = result if isinstance(result, tuple) else (result, {})
        data = dict(data)
        # the library's own text stays the plain fallback, unless its repr raises (bits16,
        # uint4): then the widget's own summary stays
        with contextlib.suppress(Exception):
            data["text/plain"] = repr(obj)
        return data, dict(metadata or {})

    return bundle


def enable(ip: Any = None, *, numpy: bool = False) -> None:
    """Show ``torch.Tensor`` (and with ``numpy=True`` also ``numpy.ndarray``) results as the widget.

    ``ip`` is the IPython shell (default: the running one).  Idempotent; undo with :func:`disable`.

    >>> import torch, stridewidget as sw
    >>> from IPython.core.interactiveshell import InteractiveShell
    >>> ip = InteractiveShell.instance()
    >>> sw.enable(ip)
    >>> data, _ = ip.display_formatter.format(torch.arange(3.0))
    >>> "application/vnd.jupyter.widget-view+json" in data, data["text/plain"]
    (True, 'tensor([0., 1., 2.])')
    >>> sw.disable(ip)
    >>> sorted(ip.display_formatter.format(torch.arange(3.0))[0])
    ['text/plain']
    """
    if not isinstance(numpy, bool):  # "no" is truthy: it must not enable NumPy
        raise TypeError(f"enable(numpy=...) must be True or False, got {type(numpy).__name__}")
    ip = _shell(ip)
    state = _STATE.setdefault(id(ip), {"previous": {}})
    formatter = ip.display_formatter.mimebundle_formatter
    bundle = _bundle_for(ip)
    for kind in ("torch", "numpy") if numpy else ("torch",):
        module, name = _TYPES[kind]
        # ours from an earlier enable() go too, so that one entry is left for disable() to undo
        previous = _pop_all(formatter, f"{module}.{name}")
        state["previous"].setdefault(kind, previous)
        formatter.for_type_by_name(module, name, bundle)
    ensure_refresh_hook(ip, reason="enable")


def _pop_all(formatter: Any, dotted_name: str) -> Any:
    """Remove every formatter IPython holds for the type ``dotted_name``; return the first.

    IPython keeps a formatter registered by name as a deferred entry until a value of that type
    is first shown, then as a resolved one; registering by name again adds a new deferred entry
    beside the resolved one, and ``pop(name)`` takes only one of the two.
    """
    first = formatter.pop(dotted_name, None)
    while formatter.pop(dotted_name, None) is not None:
        pass
    return first


def disable(ip: Any = None) -> None:
    """Undo :func:`enable`: tensors get their plain repr back.

    Whatever formatter was registered for these types before :func:`enable` is put back.  The
    after-cell refresh stays if widgets from ``sw.show`` need it, and stops otherwise.

    >>> import stridewidget as sw
    >>> from IPython.core.interactiveshell import InteractiveShell
    >>> sw.disable(InteractiveShell.instance())  # not enabled: nothing to undo
    """
    ip = _shell(ip, "disable")
    _withdraw_refresh_hook(ip, "enable")
    state = _STATE.pop(id(ip), None)
    if state is None:
        return
    formatter = ip.display_formatter.mimebundle_formatter
    for kind, previous in state["previous"].items():
        module, name = _TYPES[kind]
        _pop_all(formatter, f"{module}.{name}")
        if previous is not None:
            formatter.for_type_by_name(module, name, previous)


def load_ipython_extension(ip: Any) -> None:
    """``%load_ext stridewidget``: same as :func:`enable` on that shell.

    >>> import stridewidget as sw
    >>> from IPython.core.interactiveshell import InteractiveShell
    >>> ip = InteractiveShell.instance()
    >>> sw.load_ipython_extension(ip); sw.unload_ipython_extension(ip)
    """
    enable(ip)


def unload_ipython_extension(ip: Any) -> None:
    """``%unload_ext stridewidget``: same as :func:`disable` on that shell."""
    disable(ip)
