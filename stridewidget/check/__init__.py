"""Checks that catch layout bugs with silent wrong results.

* :func:`sanitize` — a dispatch mode refusing writes whose result depends on memory layout
  (:mod:`.sanitizer`, a name of its own: ``check.sanitize`` stays this function whatever was
  imported first; rules in :mod:`.rules`, exact geometry in :mod:`.geometry`);
* :func:`fuzz_layouts` — re-runs a function with its inputs in other layouts and compares
  (:mod:`.fuzz`, the layouts in :mod:`.relayout`).
"""

from __future__ import annotations

import importlib
from typing import Any

# Loaded on first use: ``sw.LayoutHazard`` (``.hazard``) must not import the dispatch modes.
_LAZY = {
    "FuzzFinding": ".fuzz",
    "FuzzReport": ".fuzz",
    "fuzz_layouts": ".fuzz",
    "Witness": ".geometry",
    "SanitizeReport": ".sanitizer",
    "sanitize": ".sanitizer",
}

__all__ = ["FuzzFinding", "FuzzReport", "SanitizeReport", "Witness", "fuzz_layouts", "sanitize"]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'stridewidget.check' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
