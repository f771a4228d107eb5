"""The benchmark cases by name, in run order (each case builder lives with its kind: bandwidth,
views, compute; what a builder gets and returns is in ``_base``)."""

from __future__ import annotations

from collections.abc import Callable

from ._bandwidth import ceiling, copy_methods, layout_bandwidth
from ._base import BenchContext, Case
from ._compute import conv_layout, implicit_contiguity
from ._views import expand_vs_repeat, local_response_norm, sliding_windows

__all__ = ["CASES"]

#: Case builders by name, in run order. ``ceiling`` is always measured first.
CASES: dict[str, Callable[[BenchContext], Case]] = {
    "ceiling": ceiling,
    "layout": layout_bandwidth,
    "expand_repeat": expand_vs_repeat,
    "copy": copy_methods,
    "lrn": local_response_norm,
    "sliding_window": sliding_windows,
    "contiguity": implicit_contiguity,
    "conv": conv_layout,
}
