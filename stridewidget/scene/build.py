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
                                         # of its natural layout (see storage._suggest_wrap)
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
            {"kind": "gap", "dim": 0, "count": 994, "lead": [],  # the slices left out between
             "ranges": [[[3, 997]]],     # two listed ones: boxes of leading indices, [start,
             "text": "x[3:997, :, :]"},  # stop) per dim, and as Python indexing; with the
                                         # listed slices they are every slice exactly once (one
                                         # box: a run along dim `dim` after prefix `lead`; more
                                         # boxes: dim and lead null)
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

import re
from collections.abc import Mapping, Sequence
from typing import Any

from ..adapters.inspect import layout_and_cells, storage_nbytes
from ..adapters.symbolic import SymbolicLayout
from ..errors import safe_repr
from ..layout.ints import as_option, as_wrap
from ..layout.layout import Layout
from ..limits import EDGE_ITEMS, MAX_DIM_ITEMS, MAX_STORAGE_CELLS, THRESHOLD
from ..limits import MAX_NAME as _MAX_NAME
from ..style import STYLE
from ..unseen import unseen
from .arrows import stride_arrows
from .logical import logical_window
from .reads import tensor_reads
from .storage import MAX_STRIP_CELLS, storage_scene

__all__ = ["MAX_SLICES", "SCENE_VERSION", "build_scene"]

SCENE_VERSION = 2

#: Default number of 2-D slices (panels) listed per tensor.
MAX_SLICES: int = STYLE["limits"]["max_slices"]


def build_scene(
    tensors: Mapping[str, Any],
    *,
    edge_items: int = EDGE_ITEMS,
    threshold: int = THRESHOLD,
    max_dim_items: int = MAX_DIM_ITEMS,
    max_slices: int = MAX_SLICES,
    max_storage_cells: int = MAX_STORAGE_CELLS,
    wrap: int | None = None,
    picked: Mapping[str, Sequence[Sequence[int]]] | None = None,
) -> dict[str, Any]:
    """A bounded, JSON-able scene for the named tensors/arrays (format: see the module docstring).

    ``edge_items`` elements are shown at each end of a dim that is elided; a dim is elided when the
    tensor has more than ``threshold`` elements (as ``torch.set_printoptions``) or the dim is longer
    than ``max_dim_items``.  At most ``max_slices`` 2-D slices are listed per tensor and at most
    ``max_storage_cells`` cells per storage.  ``wrap`` overrides every storage's suggested row width.
    ``picked`` maps a tensor's name to leading indices whose slices it shows besides the listed
    ones (the widget's slice picker).

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
    _check_options(tensors, edge_items, threshold, max_dim_items, max_slices, max_storage_cells)
    wrap = as_wrap(wrap)
    with unseen():  # its reads of values are no copy of the user's (a track_copies() block)
        groups, entries = _entries(
            tensors, edge_items, threshold, max_dim_items, max_slices, picked or {}
        )
        storages = []
        tensor_dicts: list[dict[str, Any]] = [{} for _ in entries]
        memories = [key[0] for key in groups]
        for storage_number, members in enumerate(groups.values()):
            storage_id = f"s{storage_number}"
            storage, raw, counts = storage_scene(
                storage_id, [entries[i] for i in members], members, max_storage_cells, wrap
            )
            storages.append(storage)
            # bytes past its last whole element (10 bytes under a float32 view): said too
            exact = [storage_nbytes(entries[i]["obj"]) for i in members]
            storage["nbytes"] = max([storage["nbytes"], *(b for b in exact if b is not None)])
            storage["same_memory"] = [
                f"s{other}"
                for other, memory in enumerate(memories)
                if memory == memories[storage_number] and other != storage_number
            ]
            for i, touch in zip(members, counts):
                tensor_dicts[i] = _tensor_scene(i, entries[i], storage, raw, touch)
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


def _check_options(
    tensors: Any,
    edge_items: int,
    threshold: int,
    max_dim_items: int,
    max_slices: int,
    max_storage_cells: int,
) -> None:
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


def _entries(
    tensors: Mapping[str, Any],
    edge_items: int,
    threshold: int,
    max_dim_items: int,
    max_slices: int,
    picked: Mapping[str, Sequence[Sequence[int]]],
) -> tuple[dict[Any, list[int]], list[dict[str, Any]]]:
    """Each tensor's name, object, layout, logical window and arrows, and the tensors grouped by
    the storage grid they are drawn on (the group's key: memory, dtype, cell unit)."""
    groups: dict[Any, list[int]] = {}
    entries = []
    for order, (name, obj) in enumerate(tensors.items()):
        # One inspection per object gives both its layout and its storage identity.
        try:
            layout, memory = (
                (obj, ("layout", order)) if isinstance(obj, Layout) else layout_and_cells(obj)
            )
        except TypeError as error:  # which of several arguments it is
            raise TypeError(f"{safe_repr(str(name))}: {error}") from None
        if isinstance(layout, SymbolicLayout):  # drawn at its example sizes, labelled with symbols
            layout = layout.example()
        # Views of one memory block with different dtypes count cells in different units, so
        # they get separate grids (their "memory" field says they share bytes).  Conj/neg views
        # share their base's grid: the strip shows what memory holds, each tensor's "reads"
        # what it reads there.
        key = (memory, layout.dtype, layout.unit)
        groups.setdefault(key, []).append(order)
        label = str(name)
        # longer names end in "…" (never cut silently); text no encoder can write (a lone
        # surrogate) is U+FFFD, so every surface can send and save the name
        label = label if len(label) <= _MAX_NAME else label[: _MAX_NAME - 1] + "…"
        label = label.encode("utf-8", "replace").decode("utf-8")
        # a bidi control would reorder the picture's text around it ("\u202eevil" drawn as
        # "live"): shown as its escape, so the name reads as written
        label = _BIDI.sub(lambda m: f"\\u{ord(m.group()):04x}", label)
        entries.append(
            {
                "name": label,
                "obj": obj,
                "layout": layout,
                "logical": logical_window(
                    layout,
                    edge_items,
                    threshold,
                    max_dim_items,
                    max_slices,
                    label,
                    picked.get(label, ()),
                ),
                "arrows": stride_arrows(layout),
            }
        )
    return groups, entries


def _tensor_scene(
    i: int, entry: dict[str, Any], storage: dict[str, Any], raw: Any, touch: list[int | None]
) -> dict[str, Any]:
    """The scene dict of tensor number ``i`` over ``storage`` (``raw``: its shown cells' values,
    ``touch``: how often the tensor reads each)."""
    shown = storage["cells"]["index"]
    return {
        "id": f"t{i}",
        "name": entry["name"],
        "storage": storage["id"],
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
            storage["cells"].get("text"),
            touch,
        ),
    }


#: Unicode's bidirectional controls (embeddings, overrides, isolates, marks).
_BIDI = re.compile("[\u200e\u200f\u061c\u202a-\u202e\u2066-\u2069]")


def _mark(order: int) -> str:
    """A short label per tensor (A, B, ..., Z, A1, ...), drawn with its colour for colour-blind readers."""
    letter = chr(ord("A") + order % 26)
    return letter if order < 26 else f"{letter}{order // 26}"
