"""A scene's logical grids cut to their first and last rows and columns: the over-budget ladder's
step for grids drawn whole (a tensor of at most ``THRESHOLD`` elements shows every element, so two
16 x 16 tensors took 1,729 px).  The cut rows and columns become one ``⋮`` / ``⋯`` each, as a
long dim's are; the storage strip and every count stay as they were.  Also the ladder's step for
long names (:func:`short_named`: each to its last characters), and the tests that say whether a
scene has what either step cuts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["elided_scene", "has_long_grid", "has_long_names", "short_named"]


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


def has_long_names(scene: Mapping[str, Any], most: int) -> bool:
    """Is a name in ``scene`` longer than ``most`` characters?"""
    names = [t["name"] for t in scene.get("tensors", [])] + list(scene.get("released", []))
    return any(len(name) > most for name in names)


def short_named(scene: Mapping[str, Any], most: int) -> dict[str, Any]:
    """``scene`` with each name longer than ``most`` characters written as an ellipsis and its
    last characters (a module path's end tells ``…attention.query.weight`` from
    ``…attention.key.weight``); names that would read alike keep more of their ends, up to whole.

    >>> scene = {"tensors": [{"name": "layer.0.attention.query.weight"},
    ...                      {"name": "layer.0.attention.key.weight"}, {"name": "x"}]}
    >>> [t["name"] for t in short_named(scene, 16)["tensors"]]
    ['…on.query.weight', '…tion.key.weight', 'x']
    >>> scene = {"tensors": [{"name": "layer.0.attention.query.weight"},
    ...                      {"name": "layer.1.attention.query.weight"}]}
    >>> [t["name"] for t in short_named(scene, 16)["tensors"]]
    ['…er.0.attention.query.weight', '…er.1.attention.query.weight']
    """
    names = [t["name"] for t in scene.get("tensors", [])] + list(scene.get("released", []))
    kept = {name: most - 1 for name in names if len(name) > most}  # characters kept from the end

    def short(name: str) -> str:
        return name if name not in kept else "…" + name[len(name) - kept[name] :]

    while True:  # names that read alike keep more of their ends
        readers: dict[str, set[str]] = {}
        for name in names:
            readers.setdefault(short(name), set()).add(name)
        alike = [n for group in readers.values() if len(group) > 1 for n in group if n in kept]
        if not alike:
            break
        for name in alike:
            kept[name] += 4
            if kept[name] >= len(name) - 1:
                del kept[name]
    tensors = [{**t, "name": short(t["name"])} for t in scene.get("tensors", [])]
    return {**scene, "tensors": tensors, "released": [short(n) for n in scene.get("released", [])]}


def has_long_grid(scene: Mapping[str, Any], most: int) -> bool:
    """Does a slice of ``scene`` draw more than ``most`` rows or columns?"""
    return any(
        len(s[key] or ()) > most
        for t in scene.get("tensors", [])
        for s in t["logical"]["slices"]
        if s["kind"] == "slice"
        for key in ("rows", "cols")
    )
