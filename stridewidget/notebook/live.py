"""The live widgets of a session and the after-cell hook that refreshes them.

Every :class:`~stridewidget.StrideWidget` not yet closed is in a weak registry (a widget the front
end still shows is kept alive by its comm; one nobody can see any more drops out).  In IPython a
``post_run_cell`` hook re-reads those widgets after every cell (:func:`refresh_live_widgets`), so an
in-place write in a later cell shows.  The hook stays while anything needs it: :func:`enable
<stridewidget.enable>` (reason ``"enable"``) or any widget (reason ``"widgets"``).
"""

from __future__ import annotations

import contextlib
import warnings
import weakref
from typing import Any

from ..errors import safe_repr

__all__ = ["ensure_refresh_hook", "forget", "live_widgets", "refresh_live_widgets", "register"]

# Widgets whose refresh failed once: skipped afterwards (weakly held).
_BROKEN: weakref.WeakSet = weakref.WeakSet()

# Per shell: why the after-cell refresh hook is installed ("enable", "widgets"); it goes when
# no reason is left.
_HOOK_REASONS: dict[int, set[str]] = {}


# Every StrideWidget not yet closed, held weakly: a widget the front end still shows is kept alive
# by its comm (ipywidgets, marimo), one nobody can see any more just drops out.
_LIVE: weakref.WeakSet[Any] = weakref.WeakSet()


def live_widgets() -> list[Any]:
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


def register(widget: Any) -> None:
    """Add a new widget to the live registry (it must have a ``_serial``, its creation order)."""
    _LIVE.add(widget)


def forget(widget: Any) -> None:
    """Take a closed widget out of the live registry (no more refreshes)."""
    _LIVE.discard(widget)


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
