"""The scene: a bounded, JSON-able description of what every renderer draws.

:func:`build_scene` turns live tensors/arrays (or pure :class:`~stridewidget.Layout` objects) into
plain dicts, lists, strings, ints, floats and ``None``.  The widget (JS), the static SVG, the
matplotlib figure and the text renderer all draw from it and do no layout math of their own beyond
turning an index into coordinates.  Its size is bounded whatever the tensor size: the logical window
is elided like ``torch``'s print and the storage window collapses long runs into gap segments, so a
10**9-element tensor gives a payload of the same order as a 100-element one.  Only the values of the
storage cells that are shown are read (:func:`stridewidget.adapters.inspect.read_cells`).

Format (``SCENE_VERSION`` = 2; the JSON Schema ``stridewidget/scene/schema.json`` says the same and
both test suites check scenes against it)::

    {
      "version": 2,
      "storages": [{
        "id": "s0",                      # position in this list, as a string
        "dtype": "float32", "itemsize": 4, "unit": 4,   # unit: bytes per storage cell
        "device": "cpu", "size": 12,     # storage size in cells
        "nbytes": 48,
        "has_values": true,              # false for meta tensors and pure Layouts
        "wrap": 12,                      # suggested cells per row (user may override): the whole
                                         # storage in one row up to MAX_STRIP_CELLS, else the row
                                         # of its natural layout (see _suggest_wrap)
        "segments": [                    # cover [0, size) in order, stop exclusive
          {"kind": "cells", "start": 0, "stop": 5},
          {"kind": "gap", "start": 5, "stop": 99995, "in_span": true},   # collapsed run
          ...],                          # in_span: inside some tensor's span (may hold touched cells)
        "cells": {                       # the shown cells, in storage order (the "cells" segments)
          "index": [0, 1, ...],          # storage cell indices
          "text": ["0.", "1.", ...] | null,     # dtype-aware display strings
          "value": [0.0, 1.0, ...] | null,      # numbers for a colour scale (null: nan/inf)
        },
        "value_range": [lo, hi] | null,  # finite min/max of the shown values
        "text_width": 2,                 # longest shown text, in characters
        "tensors": ["t0", "t1"],         # tensor ids over this storage, in input order
        "same_memory": [],               # other storages over the same bytes: views of it with
                                         # another dtype (x.view(torch.int32)) count other cells
      }],
      "tensors": [{
        "id": "t0", "name": "x", "storage": "s0", "mark": "A",   # mark: colour-blind-safe label
        "order": 0,                      # input position (colour index)
        "layout": {...},                 # Layout.to_dict(): shape, strides, byte_strides, offset,
                                         # dtype, device, storage_size, flags, touched, explain, text
        "logical": {
          "shape": [3, 4], "ndim": 2, "elided": false,
          "row_dim": 0 | null, "col_dim": 1 | null,     # dims drawn as rows / columns
          "panels": {                    # how the 2-D slices are laid out (3-D and more)
            "row_dim": 0 | null,         # leading dim whose index picks the panel row (4-D: N)
            "col_dim": 1 | null,         # leading dim whose index picks the panel column (4-D: C)
            "select_dims": [],           # outer leading dims (>= 5-D) chosen with a slice selector
          },
          "slices": [                    # 2-D slices of the last two dims, in index order
            {"kind": "slice", "lead": [i0, ...],     # indices of the leading dims
             "label": "[0, :, :]",
             "rows": [0, 1, null, 9] | null,   # indices along row_dim (null entry = "...")
             "cols": [0, 1, 2, 3] | null,      # indices along col_dim
             "addr": [[0, 1, 2, 3], ...]},     # storage cell of each shown cell (null at "...")
            {"kind": "gap", "dim": 0, "count": 994, "lead": [...]},  # slices left out: along
                                         # dim `dim` after prefix `lead`; dim null: thinned to
                                         # max_slices (count = slices of shown indices dropped)
          ],
        },
        # The logical index of cell (r, c) of a slice is lead + [rows[r]] + [cols[c]], leaving out
        # rows/cols where they are null (0-d: one cell; 1-d: one row).
        "touch": [1, 1, 0, ...],         # per shown storage cell (aligned with storage cells.index):
                                         # how many logical indices of the WHOLE tensor read it
                                         # (exact; null where too costly to count)
        "arrows": [                      # one per distinct stride of the dims of size > 1:
                                         # the first element -> its neighbour along those dims
          {"dims": [0], "dim": 0,        # dim: the first of dims
           "stride": 4, "byte_stride": 16, "from": 0, "to": 4,
           "from_index": [0, 0], "to_index": [1, 0],    # to_index: along dim `dim`
           "label": "d0 +4",             # "d0,d1 +1" for merged dims, "d1 ×0" for a stride-0 loop
           "lane": 1},                   # 0, 1, ...: band above the strip, no two arcs share one;
                                         # stride-0 loops first, then arcs by growing |stride|
        ],
      }],
      "released": ["y"],               # added by StrideWidget: names whose tensor was freed
      "limits": {"edge_items": 3, "threshold": 256, "max_dim_items": 32, "max_slices": 8,
                 "max_storage_cells": 1024, "max_strip_cells": 32},
    }
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from ..adapters.inspect import layout_and_cells, read_cells
from ..adapters.numbers import value_texts
from ..adapters.symbolic import SymbolicLayout
from ..adapters.torch import QUANTIZED_CODES
from ..errors import LayoutError
from ..layout.ints import as_option, as_wrap
from ..layout.layout import Layout
from ..layout.touch import touch_counts
from ..style import STYLE
from .reads import tensor_reads

__all__ = ["MAX_SLICES", "MAX_STRIP_CELLS", "SCENE_VERSION", "build_scene"]

SCENE_VERSION = 2

#: Storage cells shown on each side of a cell that must be visible (a shown element, the storage
#: ends, an arrow end).
_CONTEXT_CELLS = 2
#: Runs shorter than this (or than a storage row) are drawn, not collapsed: a gap marker is as wide.
_MIN_GAP = 4
#: A storage of up to this many cells is drawn as one strip; no suggested row is wider (one value
#: in the shared style, so the widget, the playground and the static pictures cannot drift).
MAX_STRIP_CELLS: int = STYLE["limits"]["max_strip_cells"]
#: A suggested row narrower than this reads as a column, not a strip of memory.
_MIN_WRAP = 8
#: Default number of 2-D slices (panels) listed per tensor.
MAX_SLICES: int = STYLE["limits"]["max_slices"]
#: Names longer than this are cut (a name is a label, not a payload).
_MAX_NAME = 80


def build_scene(
    tensors: Mapping[str, Any],
    *,
    edge_items: int = 3,
    threshold: int = 256,
    max_dim_items: int = 32,
    max_slices: int = MAX_SLICES,
    max_storage_cells: int = 1024,
    wrap: int | None = None,
) -> dict[str, Any]:
    """A bounded, JSON-able scene for the named tensors/arrays (format: see the module docstring).

    ``edge_items`` elements are shown at each end of a dim that is elided; a dim is elided when the
    tensor has more than ``threshold`` elements (as ``torch.set_printoptions``) or the dim is longer
    than ``max_dim_items``.  At most ``max_slices`` 2-D slices are listed per tensor and at most
    ``max_storage_cells`` cells per storage.  ``wrap`` overrides every storage's suggested row width.

    >>> import torch
    >>> x = torch.arange(6.0).reshape(2, 3)
    >>> scene = build_scene({"x": x, "xt": x.t()})
    >>> len(scene["storages"]), scene["storages"][0]["wrap"], scene["storages"][0]["cells"]["text"]
    (1, 6, ['0.', '1.', '2.', '3.', '4.', '5.'])
    >>> xt = scene["tensors"][1]
    >>> xt["logical"]["slices"][0]["addr"], [(a["dim"], a["stride"]) for a in xt["arrows"]]
    ([[0, 3], [1, 4], [2, 5]], [(0, 1), (1, 3)])
    >>> big = build_scene({"big": torch.empty(10**9, device="meta")})
    >>> len(big["storages"][0]["cells"]["index"]) <= 1024, big["storages"][0]["has_values"]
    (True, False)
    """
    if not isinstance(tensors, Mapping):
        raise TypeError(
            f"build_scene takes a mapping of names to tensors, got {type(tensors).__name__}; "
            "wrap a single tensor as {'x': x}"
        )
    for option, value in (
        ("edge_items", edge_items),
        ("max_dim_items", max_dim_items),
        ("max_slices", max_slices),
        ("max_storage_cells", max_storage_cells),
    ):
        as_option(value, option)
    as_option(threshold, "threshold", minimum=0)
    wrap = as_wrap(wrap)

    groups: dict[Any, list[int]] = {}
    entries = []
    for order, (name, obj) in enumerate(tensors.items()):
        # One inspection per object gives both its layout and its storage identity.
        layout, memory = (
            (obj, ("layout", order)) if isinstance(obj, Layout) else layout_and_cells(obj)
        )
        if isinstance(layout, SymbolicLayout):  # drawn at its example sizes, labelled with symbols
            layout = layout.example()
        # Views of one memory block with different dtypes count cells in different units, so
        # they get separate grids (their "memory" field says they share bytes).  Conj/neg views
        # share their base's grid: the strip shows what memory holds, each tensor's "reads"
        # what it reads there.
        key = (memory, layout.dtype, layout.unit)
        groups.setdefault(key, []).append(order)
        entries.append(
            {
                "name": str(name)[:_MAX_NAME],
                "obj": obj,
                "layout": layout,
                "logical": _logical_window(
                    layout, edge_items, threshold, max_dim_items, max_slices
                ),
                "arrows": _arrows(layout),
            }
        )

    storages = []
    tensor_dicts: list[dict[str, Any]] = [{} for _ in entries]
    memories = [key[0] for key in groups]
    for storage_number, members in enumerate(groups.values()):
        storage_id = f"s{storage_number}"
        storage, raw = _storage(
            storage_id, [entries[i] for i in members], members, max_storage_cells, wrap
        )
        storages.append(storage)
        storages[-1]["same_memory"] = [
            f"s{other}"
            for other, memory in enumerate(memories)
            if memory == memories[storage_number] and other != storage_number
        ]
        shown = storages[-1]["cells"]["index"]
        for i in members:
            entry = entries[i]
            touch = touch_counts(entry["layout"], shown)
            tensor_dicts[i] = {
                "id": f"t{i}",
                "name": entry["name"],
                "storage": storage_id,
                "mark": _mark(i),
                "order": i,
                "layout": entry["layout"].to_dict(),
                "logical": entry["logical"],
                "touch": touch,
                "arrows": entry["arrows"],
                "reads": tensor_reads(
                    entry["obj"],
                    entry["layout"].notes,
                    shown,
                    raw,
                    entry["logical"]["slices"],
                    storages[-1]["cells"].get("text"),
                    touch,
                ),
            }
    return {
        "version": SCENE_VERSION,
        "storages": storages,
        "tensors": tensor_dicts,
        "limits": {
            "edge_items": edge_items,
            "threshold": threshold,
            "max_dim_items": max_dim_items,
            "max_slices": max_slices,
            "max_storage_cells": max_storage_cells,
            "max_strip_cells": MAX_STRIP_CELLS,
        },
    }


def _mark(order: int) -> str:
    """A short label per tensor (A, B, ..., Z, A1, ...), drawn with its colour for colour-blind readers."""
    letter = chr(ord("A") + order % 26)
    return letter if order < 26 else f"{letter}{order // 26}"


# --- logical window -------------------------------------------------------------------------------


def _shown_indices(size: int, elide: bool, edge_items: int) -> list[int | None]:
    """Indices shown along one dim; ``None`` marks the elided middle."""
    if not elide or size <= 2 * edge_items + 1:
        return list(range(size))
    return [*range(edge_items), None, *range(size - edge_items, size)]


def _logical_window(
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


def _slice_addresses(logical: dict[str, Any]) -> list[int]:
    return [
        a
        for item in logical["slices"]
        if item["kind"] == "slice"
        for row in item["addr"]
        for a in row
        if a is not None
    ]


# --- storage window -------------------------------------------------------------------------------


def _storage(
    storage_id: str,
    entries: list[dict[str, Any]],
    members: list[int],
    max_storage_cells: int,
    wrap: int | None,
) -> tuple[dict[str, Any], Any]:
    """The storage's scene dict, and the raw values of its shown cells (``None`` without values)."""
    first = entries[0]["layout"]
    size = max(e["layout"].storage_size for e in entries)
    must_show: list[int] = []
    spans = []
    for entry in entries:
        layout = entry["layout"]
        must_show.extend(_slice_addresses(entry["logical"]))
        for arrow in entry["arrows"]:
            must_show.extend((arrow["from"], arrow["to"]))
        if layout.span is not None:
            spans.append(layout.span)
            must_show.append(layout.offset)
    if size:
        must_show.extend((0, size - 1))
    suggested = wrap if wrap is not None else _suggest_wrap([e["layout"] for e in entries], size)
    cells = _window(must_show, size, max_storage_cells, min_gap=max(_MIN_GAP, suggested))
    segments = _segments(cells, size, spans)
    text, value, raw = _values(entries, cells)
    finite = [v for v in value or () if v is not None]
    return {
        "id": storage_id,
        "dtype": first.dtype,
        "itemsize": first.itemsize,
        "unit": first.unit,
        "device": first.device,
        "size": size,
        "nbytes": size * first.unit,
        "has_values": text is not None,
        "wrap": suggested,
        "segments": segments,
        "cells": {"index": cells, "text": text, "value": value},
        "value_range": [min(finite), max(finite)] if finite else None,
        "text_width": max((len(t) for t in text), default=0) if text else 0,
        "tensors": [f"t{i}" for i in members],
    }, raw


def _window(must_show: list[int], size: int, max_cells: int, min_gap: int) -> list[int]:
    """Sorted storage cells to draw: the must-show cells with a little context, holes shorter than
    ``min_gap`` (a gap marker's width, or a storage row) filled.

    Never more than ``max_cells``: context shrinks first, then the must-show cells are thinned
    evenly (their logical cells then have no storage cell on screen).
    """
    wanted = sorted({c for c in must_show if 0 <= c < size})
    for context in (_CONTEXT_CELLS, 1, 0):
        runs = _runs(wanted, context, size, min_gap)
        total = sum(stop - start for start, stop in runs)
        if total <= max_cells:
            return [c for start, stop in runs for c in range(start, stop)]
    step = len(wanted) / max_cells
    thinned = sorted({wanted[int(k * step)] for k in range(max_cells)})
    return thinned


def _runs(wanted: list[int], context: int, size: int, min_gap: int) -> list[tuple[int, int]]:
    """Merged ``[start, stop)`` runs around ``wanted``; holes shorter than ``min_gap`` are filled."""
    runs: list[tuple[int, int]] = []
    for cell in wanted:
        start, stop = max(cell - context, 0), min(cell + context + 1, size)
        if runs and start - runs[-1][1] < min_gap:
            runs[-1] = (runs[-1][0], max(runs[-1][1], stop))
        else:
            runs.append((start, stop))
    return runs


def _segments(cells: list[int], size: int, spans: list[tuple[int, int]]) -> list[dict[str, Any]]:
    segments: list[dict[str, Any]] = []

    def gap(start: int, stop: int) -> None:
        in_span = any(lo <= stop - 1 and start <= hi for lo, hi in spans)
        segments.append({"kind": "gap", "start": start, "stop": stop, "in_span": in_span})

    position = 0
    for cell in cells:
        if cell > position:
            gap(position, cell)
        if segments and segments[-1]["kind"] == "cells" and segments[-1]["stop"] == cell:
            segments[-1]["stop"] = cell + 1
        else:
            segments.append({"kind": "cells", "start": cell, "stop": cell + 1})
        position = cell + 1
    if position < size:
        gap(position, size)
    return segments


def _suggest_wrap(layouts: list[Layout], size: int) -> int:
    """Cells per storage row: the whole storage as one strip when it is short, else the row of the
    storage's natural layout.

    The natural layout is that of the widest dense member (the base tensor, when it is shown), else
    of any non-overlapping member: its row is the largest stride (for a dense member, a product of
    its trailing sizes, or its whole size) that fits in ``MAX_STRIP_CELLS``, widened to the largest
    multiple that still fits, so rows start on its multiples and read as one continuing line:

    >>> from stridewidget import Layout
    >>> _suggest_wrap([Layout((2, 3, 4, 5), (60, 20, 5, 1))], 120)   # NCHW: rows of W·H
    20
    >>> _suggest_wrap([Layout((5, 7), (7, 1))], 35)   # rows of 7, four per strip row
    28
    >>> _suggest_wrap([Layout((3, 4), (1, 3))], 12)   # short: one strip
    12
    """
    if size <= MAX_STRIP_CELLS:
        return max(size, 1)
    candidates = [lay for lay in layouts if lay.numel and lay.quick_has_overlap is False]
    for layout in sorted(candidates, key=lambda lay: (not lay.is_dense, -lay.numel)):
        strides = {abs(s) for n, s in zip(layout.shape, layout.strides) if n > 1 and s != 0}
        if layout.is_dense:
            strides.add(layout.numel)
        fitting = [s for s in strides if 2 <= s <= MAX_STRIP_CELLS]
        if fitting:
            row = max(fitting)
            return row * (MAX_STRIP_CELLS // row)
        wider = [s for s in strides if s > MAX_STRIP_CELLS]
        if wider:
            natural = min(wider)
            divisors = [d for d in range(_MIN_WRAP, MAX_STRIP_CELLS + 1) if natural % d == 0]
            if divisors:
                return divisors[-1]
        break
    return MAX_STRIP_CELLS


# --- values ---------------------------------------------------------------------------------------


def _values(
    entries: list[dict[str, Any]], cells: list[int]
) -> tuple[list[str] | None, list[float | None] | None, Any]:
    """Display texts and colour numbers of what memory holds at ``cells``, and the raw array."""
    obj = entries[0]["obj"]
    if isinstance(obj, Layout):
        return None, None, None
    try:
        raw = read_cells(obj, cells, as_stored=True)
    except LayoutError:
        return None, None, None  # byte-misaligned NumPy views have no element cells to read
    if raw is None:
        return None, None, None
    dtype_of_obj = getattr(obj, "dtype", None)
    if raw.dtype.kind == "V" and getattr(dtype_of_obj, "itemsize", None) == raw.dtype.itemsize:
        raw = raw.view(dtype_of_obj)  # structured records arrive as raw bytes: give them fields
    texts, values = value_texts(raw.tolist(), stored_dtype(obj, raw))
    return texts, values, raw


def stored_dtype(obj: Any, raw: Any) -> Any:
    """The dtype whose printer formats the values memory holds: a quantized tensor holds integer
    codes, NumPy arrays print as the raw array's dtype."""
    if not hasattr(obj, "is_quantized"):
        return raw.dtype
    return (
        getattr(sys.modules["torch"], QUANTIZED_CODES[str(obj.dtype)[6:]])
        if obj.is_quantized
        else obj.dtype
    )


# --- arrows --------------------------------------------------------------------------------------


def _arrows(layout: Layout) -> list[dict[str, Any]]:
    """One arrow per distinct stride of the dims of size > 1, from the first element to its
    neighbour along those dims; each gets its own lane above the storage strip.

    >>> from stridewidget import Layout
    >>> [(a["label"], a["lane"]) for a in _arrows(Layout((3, 4, 2), (0, 1, 1)))]
    [('d0 ×0', 0), ('d1,d2 +1', 1)]
    """
    if layout.numel == 0:
        return []
    origin = (0,) * layout.ndim
    start = layout.address(origin)
    by_stride: dict[int, list[int]] = {}
    for dim, (n, stride) in enumerate(zip(layout.shape, layout.strides)):
        if n > 1:
            by_stride.setdefault(stride, []).append(dim)
    # Loops first (they sit on their cell), then arcs from short to long: nested arcs never cross.
    ordered = sorted(by_stride.items(), key=lambda item: (item[0] != 0, abs(item[0]), item[1][0]))
    arrows = []
    for lane, (stride, dims) in enumerate(ordered):
        dim = dims[0]
        neighbour = tuple(1 if d == dim else 0 for d in range(layout.ndim))
        names = ",".join(f"d{d}" for d in dims)
        step = "×0" if stride == 0 else (f"+{stride}" if stride > 0 else f"−{-stride}")
        arrows.append(
            {
                "dims": dims,
                "dim": dim,
                "stride": stride,
                "byte_stride": layout.byte_strides[dim],
                "from": start,
                "to": layout.address(neighbour),
                "from_index": list(origin),
                "to_index": list(neighbour),
                "label": f"{names} {step}",
                "lane": lane,
            }
        )
    arrows.sort(key=lambda arrow: arrow["dim"])
    return arrows
