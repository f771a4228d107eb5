"""Checks that catch layout bugs with silent wrong results.

* :func:`sanitize` — a dispatch mode refusing writes whose result depends on memory layout
  (:mod:`.sanitize`, rules in :mod:`.rules`, exact geometry in :mod:`.geometry`);
* :func:`fuzz_layouts` — re-runs a function with its inputs in other layouts and compares
  (:mod:`.fuzz`, the layouts in :mod:`.relayout`).
"""

from __future__ import annotations

from .fuzz import FuzzFinding, FuzzReport, fuzz_layouts
from .geometry import Witness
from .sanitize import SanitizeReport, sanitize

__all__ = ["FuzzFinding", "FuzzReport", "SanitizeReport", "Witness", "fuzz_layouts", "sanitize"]
