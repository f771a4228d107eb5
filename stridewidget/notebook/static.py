"""The one home of the front-end files shipped in ``notebook/static/`` (bundles, styles, host).

>>> "export" in read_static("widget.js")
True
"""

from __future__ import annotations

import pathlib

__all__ = ["read_static"]

_STATIC = pathlib.Path(__file__).parent / "static"


def read_static(name: str) -> str:
    """The text of ``static/<name>`` (a built bundle or stylesheet).

    >>> read_static("playground.css").strip() != ""
    True
    """
    return (_STATIC / name).read_text(encoding="utf-8")
