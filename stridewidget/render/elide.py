"""A scene's logical grids cut to their first and last rows and columns: the over-budget ladder's
step for grids drawn whole (a tensor of at most ``THRESHOLD`` elements shows every element, so two
16 x 16 tensors took 1,729 px).  The cut rows and columns become one ``⋮`` / ``⋯`` each, as a
long dim's are; the storage strip and every count stay as they were.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["elided_scene"]


def _cut(values: list, edge: int) -> tuple[list, list[int]]:
    """``values`` with the middle beyond ``edge`` at each end as one ``None`` (an existing one
    folds in), and the positions kept (``-1``: the new ``None``)."""
    if len(values) <= 2 * edge + 1:
        return list(values), list(range(len(values)))
    keep = [*range(edge), -1, *range(len(values) - edge, len(values))]
    return [values[k] if k >= 0 else None for k in keep], keep


def elided_scene(scene: Mapping[str, Any], edge: int) -> dict[str, Any]:
    """``scene`` with each slice's rows and columns cut to ``edge`` at each end.

    >>> import torch
    >>> from stridewidget.scene.build import build_scene
    >>> cut = elided_scene(build_scene({"x": torch.zeros(16, 16)}), 3)
    >>> s = cut["tensors"][0]["logical"]["slices"][0]
    >>> s["rows"], s["addr"][3], s["addr"][6]
    ([0, 1, 2, None, 13, 14, 15], [None, None, None, None, None, None, None], [240, 241, 242, None, 253, 254, 255])
    """
    tensors = []
    for tensor in scene.get("tensors", []):
        logical = tensor["logical"]
        slices = []
        for slice_ in logical["slices"]:
            if slice_.get("kind") != "slice" or (slice_["rows"] is None and slice_["cols"] is None):
                slices.append(slice_)
                continue
            rows, row_keep = _cut(slice_["rows"], edge) if slice_["rows"] else (None, [0])
            cols, col_keep = _cut(slice_["cols"], edge) if slice_["cols"] else (None, [0])
            addr = [
                [None if r < 0 or c < 0 else slice_["addr"][r][c] for c in col_keep]
                for r in row_keep
            ]
            slices.append({**slice_, "rows": rows, "cols": cols, "addr": addr})
        tensors.append({**tensor, "logical": {**logical, "slices": slices}})
    return {**scene, "tensors": tensors}
