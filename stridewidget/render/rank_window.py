"""Which global rows and columns a shortened DTensor grid keeps (:mod:`.distributed`): a
tensor's ordinary window keeps the first and last few indices of a long dim, which along a
sharded dim are only the first and last ranks' blocks; here, when that leaves a block out of a
grid of one slice, every block of indices held by one same set of ranks contributes its first
index instead (at most :data:`MAX_GRID_BLOCKS` blocks a dim, spread evenly; and the dim's last
index), the gaps between kept indices marked ``…``.  The ranks whose elements are still
not drawn are named by :func:`not_in_grid_words`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..layout.distributed import DistributedLayout, rank_runs
from .labels import counted

__all__ = [
    "MAX_GRID_BLOCKS",
    "blocks",
    "kept_indices",
    "mesh_window",
    "not_in_grid_words",
    "spread",
]

#: How many blocks of one holder set a shortened grid dim shows at most (spread evenly).
MAX_GRID_BLOCKS = 8


def blocks(lay: DistributedLayout, dim: int) -> list[int]:
    """The first index of each run of indices along ``dim`` held by one same set of ranks.

    >>> from stridewidget.layout.distributed import Placement, RankShard
    >>> ranks = tuple(RankShard(r, (r,), ((0,), tuple(range(3 * r, 3 * r + 3)))) for r in range(4))
    >>> lay = DistributedLayout((1, 12), "f", (4,), None, (Placement("shard", 1),), ranks)
    >>> blocks(lay, 1)
    [0, 3, 6, 9]
    """
    n = lay.global_shape[dim]
    owners: list[list[int]] = [[] for _ in range(n)]
    for k, held in enumerate(sorted({s.indices[dim] for s in lay.ranks})):
        for i in held:
            owners[i].append(k)
    return [i for i in range(n) if i == 0 or owners[i] != owners[i - 1]]


def kept_indices(
    shown: Sequence[int | None], starts: Sequence[int], size: int, slots: int
) -> list[int | None]:
    """The indices kept along one dim of ``size``: ``shown`` (a window's, ``None`` at the
    elided middle) when it shows an index of every block (``starts``: each block's first
    index) or ``slots`` (cells and gaps a dim may take) is no more than its own; else every
    index when ``size`` fits ``slots``; else each block's first index (as many blocks as fit,
    spread evenly) and the last index.  ``None`` marks each gap.

    >>> kept_indices([0, 1, 2, None, 61, 62, 63], [0, 8, 16, 24, 32, 40, 48, 56], 64, 17)
    [0, None, 8, None, 16, None, 24, None, 32, None, 40, None, 48, None, 56, None, 63]
    >>> kept_indices([0, 1, 2, None, 61, 62, 63], [0, 32], 64, 17)
    [0, 1, 2, None, 61, 62, 63]
    """
    ends = [*starts[1:], size]
    listed = {i for i in shown if i is not None}
    if slots <= len(shown) or all(any(a <= i < b for i in listed) for a, b in zip(starts, ends)):
        return list(shown)
    if size <= slots:
        return list(range(size))
    most = max(1, (slots - 1) // 2)  # a block's first index and a gap each, and the last index
    if len(starts) > most:
        last = len(starts) - 1
        picks = {round(k * last / max(1, most - 1)) for k in range(most)}
        starts = [starts[k] for k in sorted(picks)]
    kept = sorted({*starts, size - 1})
    out: list[int | None] = []
    for i in kept:
        if out and out[-1] is not None and i != out[-1] + 1:
            out.append(None)
        out.append(i)
    return out


def spread(window: Mapping[str, Any], lay: DistributedLayout) -> dict[str, Any]:
    """``window`` (:func:`~stridewidget.scene.logical.logical_window` of the global shape) with
    its rows and columns kept by :func:`kept_indices`, so every rank's block along them shows: a
    grid of one slice (up to 2 dims) takes ``2 * MAX_GRID_BLOCKS + 1`` cells and gaps a dim; a
    grid of many slices keeps the window's own (its words name the ranks left out)."""
    slots = 2 * MAX_GRID_BLOCKS + 1 if window["ndim"] <= 2 else 0
    slices = []
    for slice_ in window["slices"]:
        if slice_["kind"] != "gap":
            slice_ = dict(slice_)
            for key in ("rows", "cols"):
                dim = window["row_dim" if key == "rows" else "col_dim"]
                if slice_[key] is not None and dim is not None:
                    size = lay.global_shape[dim]
                    slice_[key] = kept_indices(slice_[key], blocks(lay, dim), size, slots)
        slices.append(slice_)
    return {**window, "slices": slices}


def not_in_grid_words(lay: DistributedLayout, seen: Iterable[int]) -> str:
    """The words naming the ranks holding elements of which none is drawn in the grid (``seen``:
    the holders of the drawn cells); ``""`` when every rank holding an element shows.

    >>> from stridewidget.layout.distributed import Placement, RankShard
    >>> ranks = tuple(RankShard(r, (r,), ((r,),)) for r in range(3))
    >>> lay = DistributedLayout((3,), "f", (3,), None, (Placement("shard", 0),), ranks)
    >>> not_in_grid_words(lay, [0, 2])
    'not drawn in the shortened grid: the elements of 1 rank (1)'
    """
    seen = set(seen)
    missing = [s.rank for s in lay.ranks if 0 not in s.shape and s.rank not in seen]
    if not missing:
        return ""
    return (
        f"not drawn in the shortened grid: the elements of {counted(len(missing), 'rank')} "
        f"({rank_runs(missing).split(' (')[0]})"
    )


def _ends(n: int, keep: int) -> list[int | None]:
    """``range(n)``, or its first and last positions (``keep`` in all) with ``None`` between."""
    if n <= keep:
        return list(range(n))
    head = max(1, (keep + 1) // 2)
    tail = max(1, keep - head)
    return [*range(head), None, *range(n - tail, n)]


def mesh_window(
    mesh_shape: Sequence[int], fit: int, most: int
) -> tuple[list[int | None], list[int | None]]:
    """The mesh boxes drawn as rows × columns (the last mesh dim is the columns, each row one
    coordinate of the dims before it, in order): the rows and columns kept, ``None`` where the
    ones between are left out, so a mesh too wide for ``fit`` boxes a line or with more than
    ``most`` boxes keeps its shape.

    >>> mesh_window((2, 64), 20, 64)
    ([0, 1], [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, None, 55, 56, 57, 58, 59, 60, 61, 62, 63])
    >>> mesh_window((16, 16), 20, 64)
    ([0, 1, None, 15], [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15])
    """
    rows = math.prod(mesh_shape[:-1]) if mesh_shape else 1
    cols = mesh_shape[-1] if mesh_shape else 1
    kept_cols = _ends(cols, max(1, fit - 1) if cols > fit else cols)
    boxes_a_row = sum(c is not None for c in kept_cols)
    room_rows = max(2, most // boxes_a_row)
    kept_rows = _ends(rows, max(1, room_rows - 1) if rows > room_rows else rows)
    return kept_rows, kept_cols
