"""Self-contained HTML pages that host anywidget views with no kernel and no network.

An anywidget front end is a standard ES module (``export default {render}``) that only needs a
model with ``get/set/on/off/save_changes``.  A page written here holds, for each view, the widget's
own bundle and its synced state as one JSON payload, plus ``static/host.js`` (built from
``js/host/``), which gives each view a model held in the page and calls its ``render``.  No
require.js, no widget manager, nothing fetched: a page from a plain ``pip install`` works offline,
and the view's own controls (hover, the storage row width, the playground's editing) work in it.
"""

from __future__ import annotations

import html
import json
from typing import Any

import anywidget

from .static import read_static

__all__ = ["view_payload", "widget_page"]

VIEW_MIME = "application/vnd.stridewidget.view+json"
# Traits every anywidget has (layout, tabbable, ...; the private ones are left out by name): not
# the view's own state.
_BASE_TRAITS = frozenset(anywidget.AnyWidget.class_trait_names(sync=True))


def script_json(data: Any) -> str:
    """JSON safe inside a ``<script>`` element (no ``</script>`` or ``<!--`` can end it).

    >>> script_json({"name": "</script><b>"})
    '{"name": "\\\\u003c/script\\\\u003e\\\\u003cb\\\\u003e"}'
    """
    return json.dumps(data).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _inline(tag: str, text: str, attributes: str = "") -> str:
    """``text`` as the content of a ``<tag>`` element; refused if it could end the element early."""
    if f"</{tag}" in text.lower():  # our own bundles; a minifier could in principle write one
        raise ValueError(f"cannot inline text containing '</{tag}' into a <{tag}> element")
    return f"<{tag}{attributes}>{text}</{tag}>"


def view_payload(widget: anywidget.AnyWidget) -> dict[str, Any]:
    """The widget's ES module and its own synced state: what the page host needs to draw it.

    >>> import torch, stridewidget as sw
    >>> payload = view_payload(sw.StrideWidget(x=torch.zeros(2)))
    >>> sorted(payload["state"]), "export" in payload["esm"]
    (['hovered', 'picked', 'picture', 'width', 'wrap'], True)
    """
    if not isinstance(widget, anywidget.AnyWidget):
        raise TypeError(
            f"widget_page() takes anywidget widgets (e.g. sw.show(x), sw.playground()), "
            f"got {type(widget).__name__}"
        )
    state = widget.get_state()
    own = sorted(
        name
        for name in set(widget.trait_names(sync=True)) - _BASE_TRAITS
        if not name.startswith("_")
    )
    return {"esm": str(state["_esm"]), "state": {name: state[name] for name in own}}


def widget_page(
    *widgets: anywidget.AnyWidget, title: str = "stridewidget", before: str = "", after: str = ""
) -> str:
    """One HTML page drawing ``widgets`` interactively, offline, without a kernel.

    ``before`` and ``after`` are trusted HTML placed around the views (callers escape what they
    put there).  Each distinct ``_css`` is inlined once; the host script is inlined once.

    >>> import torch, stridewidget as sw
    >>> page = widget_page(sw.show(x=torch.arange(6.0)), title="<demo>")
    >>> "<title>&lt;demo&gt;</title>" in page, page.count('class="stridewidget-view"')
    (True, 1)
    """
    payloads = [view_payload(widget) for widget in widgets]
    styles = dict.fromkeys(str(widget.get_state()["_css"]) for widget in widgets)
    views = "".join(
        f'<div class="stridewidget-view"><script type="{VIEW_MIME}">{script_json(payload)}</script></div>'
        for payload in payloads
    )
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title>"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="color-scheme" content="light dark">'
        "<style>body{font-family:system-ui,sans-serif;margin:16px}"
        "pre{padding:8px;overflow-x:auto}</style>"
        + "".join(_inline("style", css) for css in styles if css)
        + "</head><body>"
        + before
        + views
        + after
        + _inline("script", read_static("host.js"), ' type="module"')
        + "</body></html>\n"
    )
