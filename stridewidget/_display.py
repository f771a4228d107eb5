"""IPython integration: ``%load_ext stridewidget`` / :func:`enable` make tensors display as the widget.

Once enabled, ``display(t)`` and a bare ``t`` at the end of a cell show a
:class:`~stridewidget.StrideWidget` whose mime bundle also carries torch's own text
(``text/plain``) and the static SVG picture (``text/html``, for viewers without a kernel).
:func:`disable` (or ``%unload_ext stridewidget``) restores the plain repr.

After every cell, live widgets re-read their tensors if one was modified in place
(:meth:`StrideWidget.refresh_if_changed`), so writing through a view visibly changes the
displayed base.  The hook reaches widgets only through the widget module's weak registry
(:func:`stridewidget._widget.live_widgets`: a closed or forgotten widget drops out), and the
widgets hold their tensors weakly.  The hook stays while anything needs it: :func:`enable`, or a
widget made by ``sw.show``; :func:`disable` withdraws only what :func:`enable` added.
"""

from __future__ import annotations

import contextlib
import warnings
import weakref
from typing import Any

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

# Widgets whose refresh failed once: skipped afterwards (weakly held).
_BROKEN: weakref.WeakSet = weakref.WeakSet()

# Per shell: what we registered (and what was there before us, to put it back on disable).
_STATE: dict[int, dict[str, Any]] = {}

# Per shell: why the after-cell refresh hook is installed ("enable", "widgets"); it goes when
# no reason is left.
_HOOK_REASONS: dict[int, set[str]] = {}


def _shell(ip: Any, caller: str = "enable") -> Any:
    if ip is not None:
        if not hasattr(type(ip), "display_formatter"):  # asked of the type: no user __getattr__
            raise TypeError(
                f"stridewidget.{caller}(ip): ip must be an IPython shell (get_ipython()), got "
                f"{type(ip).__name__}"
            )
        return ip
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython ships with ipywidgets, our dependency
        get_ipython = None
    ip = get_ipython() if get_ipython is not None else None
    if ip is None:
        raise RuntimeError(
            f"stridewidget.{caller}() works inside IPython/Jupyter only; outside, use "
            "sw.show(x) in a notebook, print(sw.render_text(x)) in a terminal, or "
            "`python -m stridewidget EXPR`"
        )
    return ip


def _user_name(ip: Any, obj: Any) -> str:
    """The user's variable name for ``obj`` (by identity), else a generic one."""
    for name, value in getattr(ip, "user_ns", {}).items():
        if value is obj and not name.startswith("_"):
            return name
    return "tensor"


def _bundle_for(ip: Any) -> Any:
    def bundle(obj: Any) -> tuple[dict[str, Any], dict[str, Any]] | None:
        from ._errors import LayoutError
        from ._inspect import inspect
        from ._widget import StrideWidget

        try:
            inspect(obj)  # sparse / nested / ... tensors: keep their plain repr
        except (LayoutError, TypeError):
            return None
        widget = StrideWidget(**{_user_name(ip, obj): obj})
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


def refresh_live_widgets() -> int:
    """Refresh every open widget whose tensors changed since it was drawn; returns how many did.

    Runs after each IPython cell (see :func:`ensure_refresh_hook`).  A widget whose refresh fails is left as
    it is, with one warning: a display hook must never break the user's next cell.

    >>> import torch, stridewidget as sw
    >>> x = torch.zeros(2, 2)
    >>> w = sw.show(x=x)
    >>> x[0].fill_(1.0)  # through a view
    tensor([1., 1.])
    >>> refresh_live_widgets() >= 1, w.scene["storages"][0]["cells"]["text"][:2]
    (True, ['1.', '1.'])
    """
    from ._errors import safe_repr
    from ._widget import live_widgets

    refreshed = 0
    for widget in live_widgets():
        if widget in _BROKEN:
            continue
        try:
            refreshed += bool(widget.refresh_if_changed())
        except Exception as error:  # a broken widget must not break the user's next cell
            _BROKEN.add(widget)  # say it once, not after every cell
            warnings.warn(
                f"stridewidget: could not refresh a displayed widget ({safe_repr(error)}); "
                "call its .refresh() to see the error",
                RuntimeWarning,
                stacklevel=2,
            )
    return refreshed


def _post_run_cell(_result: Any = None) -> None:
    refresh_live_widgets()


def ensure_refresh_hook(ip: Any = None, *, reason: str = "widgets") -> bool:
    """Make live widgets re-read their tensors after every cell; False outside IPython.

    Idempotent.  ``reason`` says who needs the hook: :func:`enable` passes ``"enable"``, every new
    widget ``"widgets"`` (so an in-place write in a later cell shows up in it).  The hook is
    removed once no reason is left (:func:`disable` withdraws ``"enable"`` only).

    >>> from IPython.core.interactiveshell import InteractiveShell
    >>> ip = InteractiveShell.instance()
    >>> ensure_refresh_hook(ip, reason="enable"), ensure_refresh_hook(ip, reason="enable")
    (True, True)
    >>> ip.events.callbacks["post_run_cell"].count(_post_run_cell)
    1
    """
    if ip is None:
        try:
            ip = _shell(None)
        except RuntimeError:  # plain Python, marimo: there are no IPython cells to hook
            return False
    _HOOK_REASONS.setdefault(id(ip), set()).add(reason)
    if _post_run_cell not in ip.events.callbacks["post_run_cell"]:
        ip.events.register("post_run_cell", _post_run_cell)
    return True


def _withdraw_refresh_hook(ip: Any, reason: str) -> None:
    reasons = _HOOK_REASONS.get(id(ip), set())
    reasons.discard(reason)
    if reasons:
        return
    _HOOK_REASONS.pop(id(ip), None)
    with contextlib.suppress(ValueError):  # not hooked (or already removed by the user)
        ip.events.unregister("post_run_cell", _post_run_cell)


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
