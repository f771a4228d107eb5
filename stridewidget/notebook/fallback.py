"""The base of the package's anywidgets: a live view whose output also carries a static picture.

:class:`StaticFallbackWidget` puts the saved picture (``text/html``) and a text summary
(``text/plain``) beside the live view in the output's mime bundle; :func:`bundle` is a shipped
front-end bundle as the trait anywidget reads.
"""

from __future__ import annotations

from typing import Any

import anywidget
import traitlets

from .static import read_static

__all__ = ["StaticFallbackWidget", "bundle"]


def bundle(name: str) -> traitlets.Unicode:
    """A shipped bundle's text as the synced trait anywidget reads (``_esm``, ``_css``)."""
    return traitlets.Unicode(read_static(name)).tag(sync=True)


class StaticFallbackWidget(anywidget.AnyWidget):
    """An AnyWidget whose output also carries a static picture and a text summary.

    Subclasses provide ``summary() -> str`` and ``_static_html() -> str``.  The live view stays
    first; ``text/html`` is what nbviewer, GitHub and nbconvert without widget state show, and
    ``text/plain`` what a terminal shows.
    """

    # anywidget adds `_esm`, `_css` and `_anywidget_id` as traits of each instance when the class
    # does not declare them: a new class per widget (0.4 ms of a display).  Declared here (the
    # bundles by each subclass: ``_esm = bundle("widget.js")``), add_traits only sets the id.
    _anywidget_id = traitlets.Unicode().tag(sync=True)

    def add_traits(self, **traits: Any) -> None:
        """Add ``traits`` to this instance; those its class declares already only take their
        value (anywidget's per-instance traits: no class is made per widget)."""
        if traits and all(self.has_trait(name) for name in traits):
            for name, trait in traits.items():
                self.set_trait(name, trait.default_value)
            return
        super().add_traits(**traits)

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
