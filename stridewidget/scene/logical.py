"""Which logical indices a scene shows: each dim elided like ``torch``'s print (``edge_items`` at
each end), the 2-D slices of the last two dims listed in index order with gap markers for the
leading-dim slices left out (at most ``max_slices``), and the panel grid they are laid out in.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..layout.layout import Layout

__all__ = ["logical_window", "slice_addresses"]


def _shown_indices(size: int, elide: bool, edge_items: int) -> list[int | None]:
    """Indices shown along one dim; ``None`` marks the elided middle."""
    if not elide or size <= 2 * edge_items + 1:
        return list(range(size))
    return [*range(edge_items), None, *range(size - edge_items, size)]


def logical_window(
    layout: Layout, edge_items: int, threshold: int, max_dim_items: int, max_slices: int
) -> dict[str, Any]:
    shape = layout.shape
    ndim = layout.ndim
    summarize = layout.numel > threshold
    per_dim = [_shown_indices(n, summarize or n > max_dim_items, edge_items) for n in shape]
    elided = any(None in shown for shown in per_dim)
    lead_dims = max(ndim - 2, 0)
    row_dim = ndim - 2 if ndim >= 2 else None
    col_dim = ndim - 1 if ndim >= 1 else None
    rows = per_dim[row_dim] if row_dim is not None else None
    cols = per_dim[col_dim] if col_dim is not None else None

    slices: list[dict[str, Any]] = []
    if layout.numel > 0:
        for lead in _lead_indices(per_dim[:lead_dims], max_slices):
            if isinstance(lead, dict):
                slices.append(lead)
                continue
            slices.append(_slice(layout, lead, rows, cols))
    return {
        "shape": list(shape),
        "ndim": ndim,
        "elided": elided,
        "row_dim": row_dim,
        "col_dim": col_dim,
        "panels": _panels(ndim),
        "slices": slices,
    }


def _panels(ndim: int) -> dict[str, Any]:
    """Which leading dims lay the 2-D slices out as a grid of panels, and which get a selector.

    3-D: one row of panels along dim 0.  4-D: rows along dim 0, columns along dim 1 (N×C of H×W).
    Higher: the last two leading dims make the grid, the outer ones are picked with a selector.
    """
    lead = max(ndim - 2, 0)
    if lead == 0:
        return {"row_dim": None, "col_dim": None, "select_dims": []}
    if lead == 1:
        return {"row_dim": None, "col_dim": 0, "select_dims": []}
    return {"row_dim": lead - 2, "col_dim": lead - 1, "select_dims": list(range(lead - 2))}


def _lead_indices(
    lead_per_dim: Sequence[list[int | None]], max_slices: int
) -> list[list[int] | dict[str, Any]]:
    """Leading-dim index tuples in order, with gap markers where a dim was elided.

    A marker ``{"kind": "gap", "dim": d, "count": n}`` says ``n`` slices along dim ``d`` were left
    out.  When there are still more than ``max_slices`` slices, the first ``max_slices - 1`` and the
    last one are kept and a marker with ``dim: null`` counts the rest.
    """
    items: list[list[int] | dict[str, Any]] = [[]]
    for dim, shown in enumerate(lead_per_dim):
        skipped = sum(1 for _ in shown if _ is None)
        size_known = [i for i in shown if i is not None]
        count = (size_known[-1] + 1 - len(size_known)) if skipped else 0
        grown: list[list[int] | dict[str, Any]] = []
        for prefix in items:
            if isinstance(prefix, dict):
                grown.append(prefix)
                continue
            for i in shown:
                if i is None:
                    grown.append({"kind": "gap", "dim": dim, "count": count, "lead": prefix})
                else:
                    grown.append([*prefix, i])
            if len(grown) > 4 * max_slices:  # stop growing early: only the ends survive anyway
                break
        items = grown
    real = [i for i, item in enumerate(items) if not isinstance(item, dict)]
    if len(real) <= max_slices:
        return items
    total = math.prod(len([i for i in shown if i is not None]) for shown in lead_per_dim)
    keep_first = real[: max_slices - 1]
    tail = [next(i for i in reversed(shown) if i is not None) for shown in lead_per_dim]
    trimmed = items[: keep_first[-1] + 1]
    trimmed.append({"kind": "gap", "dim": None, "count": total - max_slices, "lead": None})
    trimmed.append(tail)
    return trimmed


def _slice(
    layout: Layout, lead: list[int], rows: list[int | None] | None, cols: list[int | None] | None
) -> dict[str, Any]:
    row_list = rows if rows is not None else [0]
    col_list = cols if cols is not None else [0]
    addresses = []
    for r in row_list:
        row_addresses: list[int | None] = []
        for c in col_list:
            if r is None or c is None:
                row_addresses.append(None)
                continue
            index = list(lead)
            if rows is not None:
                index.append(r)
            if cols is not None:
                index.append(c)
            row_addresses.append(layout.address(tuple(index)))
        addresses.append(row_addresses)
    label_parts = [str(i) for i in lead] + [":"] * (layout.ndim - len(lead))
    return {
        "kind": "slice",
        "lead": list(lead),
        "label": "[" + ", ".join(label_parts) + "]",
        "rows": rows,
        "cols": cols,
        "addr": addresses,
    }


def slice_addresses(logical: dict[str, Any]) -> list[int]:
    return [
        a
        for item in logical["slices"]
        if item["kind"] == "slice"
        for row in item["addr"]
        for a in row
        if a is not None
    ]
