"""What a notebook saves for a displayed object after ``sw.enable()``: its mime bundle as
IPython's display formatter writes it (the ``text/html`` is the static fallback)."""

from __future__ import annotations

from typing import Any

import stridewidget as sw


def displayed(obj: Any) -> dict[str, Any]:
    """The mime bundle IPython writes for ``obj`` with stridewidget enabled (then disabled)."""
    from IPython.core.interactiveshell import InteractiveShell

    ip = InteractiveShell.instance()
    sw.enable(ip)
    try:
        data, _ = ip.display_formatter.format(obj)
    finally:
        sw.disable(ip)
    return data
