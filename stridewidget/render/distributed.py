"""The one picture of a ``DTensor``, laid out in Python: its global logical grid with the rank(s)
holding each element, the device mesh beside or below it (whichever is shorter), and ranks' local
storages as strips of their own with their stride arrows.

* the global grid: the 2-D slices of the global shape that a picture of a tensor that shape would
  show (:func:`~stridewidget.scene.logical.logical_window`, elided and bounded alike); each cell
  says which rank holds it (``r5``; a replicated element every rank of its replica group, a
  partial one marked ``Σ``), coloured by the group of ranks holding the same elements; its title
  says which rank holds it where (``d[3, 5] → rank 2 at (0, 2) local storage[7]``), and, when no
  drawn strip holds it, why its holder's storage is not drawn;
* the mesh: its shape, dim names and placements, each rank a small box with its coordinate;
* the ranks' local tensors: at most :data:`MAX_RANK_STRIPS` drawn as the storage strip of an
  ordinary scene of that rank's real ``to_local()`` (:mod:`.rank_strips`, arrows and all), chosen
  to hold the most distinct elements (no replica of a drawn rank, no empty rank), fewer when the
  picture would pass its height budget; the rest in words, ranks of one local layout on one line.

A rank whose local tensor is not in this process (a real multi-process run holds only its own) is
drawn from its computed share: its cells name it, its storage index is not known.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from typing import Any

from ..adapters.distributed import distributed_layout, is_dtensor, local_tensors
from ..layout.distributed import DistributedLayout
from ..layout.layout import Layout
from ..layout.strides import contiguous_strides
from ..limits import EDGE_ITEMS, MAX_DIM_ITEMS, THRESHOLD
from ..scene.build import MAX_SLICES
from ..scene.logical import logical_window
from .canvas import Canvas
from .labels import counted, tensor_colour
from .picture import height_budget
from .primitives import (
    MAX_WIDTH,
    PAD,
    G,
    Group,
    Picture,
    Rect,
    Text,
    text_width,
    translated,
    wrapped,
)
from .rank_strips import MAX_RANK_STRIPS, Unseen, holds_words, rank_strip, rest_lines
from .rank_window import mesh_window, not_in_grid_words, spread

__all__ = [
    "MAX_MESH_BOXES",
    "MAX_RANK_STRIPS",
    "MAX_TITLE_RANKS",
    "draw_distributed",
    "single_dtensor",
]

#: How many ranks the mesh draws as boxes; the others are counted.
MAX_MESH_BOXES = 64
#: How many holders a global cell's hover line names (the others are counted).
MAX_TITLE_RANKS = 16


def single_dtensor(tensors: tuple, named: Mapping[str, Any]) -> tuple[str, Any] | None:
    """``(name, d)`` when the one thing to draw is a ``DTensor`` (a positional one is named
    ``d``), else ``None``.

    >>> import torch
    >>> single_dtensor((torch.zeros(2),), {}) is None
    True
    """
    items = [("d", t) for t in tensors] + list(named.items())
    if len(items) == 1 and is_dtensor(items[0][1]):
        return str(items[0][0]), items[0][1]
    return None


def _tup(values: tuple[int, ...]) -> str:
    return "(" + ", ".join(map(str, values)) + ("," if len(values) == 1 else "") + ")"


def _groups(lay: DistributedLayout) -> dict[int, int]:
    """Each rank's colour: ranks holding the same global elements (a replica group) share one."""
    seen: dict[tuple, int] = {}
    return {s.rank: seen.setdefault(s.indices, len(seen)) for s in lay.ranks}


def rank_bar(x: float, y: float, w: float, h: float, group: int) -> list[Rect]:
    """The bar over a cell or a mesh box marking its group of ranks (those holding the same
    elements): one of the 7 tensor colours, cut by ``group // 7 % 7`` notches, so the first 49
    groups differ in colour or notches (past them, the rank written under the bar tells them
    apart); a notch is a 2 px gap showing the cell's own fill, no text is drawn on a bar.

    >>> [len(rank_bar(0, 0, 40, 5, g)) for g in (0, 6, 7, 15, 48)], rank_bar(0, 0, 40, 5, 7)[0].fill
    ([1, 1, 2, 3, 7], '#E69F00')
    """
    notches = group // 7 % 7
    piece = (w - 2 * notches) / (notches + 1)
    colour = tensor_colour(group)
    return [Rect(x + k * (piece + 2), y, piece, h, colour) for k in range(notches + 1)]


def _partial_over(lay: DistributedLayout) -> str:
    """Which reduction over which mesh dims makes a partial value whole (``sum over mesh dim
    'dp'``): over those dims' ranks only, not every holder."""
    names = lay.mesh_dim_names or tuple(f"dim{i}" for i in range(len(lay.mesh_shape)))
    return ", ".join(
        f"{p.reduce_op} over mesh dim {n!r}"
        for n, p in zip(names, lay.placements)
        if p.kind == "partial"
    )


def _partial_words(lay: DistributedLayout) -> str:
    ops = {str(p.reduce_op) for p in lay.placements if p.kind == "partial"}
    kept = "a summand" if ops == {"sum"} else "a partial value"  # Partial("max"): no summand
    return f"; partial: each holder keeps {kept}, the value is the {_partial_over(lay)}"


def cell_title(
    lay: DistributedLayout,
    name: str,
    index: tuple[int, ...],
    places: tuple[tuple[int, int | None], ...] | None = None,
    unseen: Mapping[int, str] | None = None,
) -> str:
    """Who holds global element ``index``, and where in each holder's local storage (``places``:
    ``lay.where(index)`` when the caller has it).  A replicated element says so; at most
    :data:`MAX_TITLE_RANKS` holders are named, the others counted.  ``unseen``: the sentence
    saying why a rank's storage is not drawn (:func:`not_drawn_words`), by rank: such a holder
    is marked so, and an element no drawn strip holds says why for its first holder.

    >>> from stridewidget.layout.distributed import Placement, RankShard
    >>> local = Layout(shape=(1, 4), strides=(4, 1), storage_size=4)
    >>> ranks = tuple(RankShard(r, (r,), ((r,), (0, 1, 2, 3)), local) for r in range(2))
    >>> lay = DistributedLayout((2, 4), "float32", (2,), None, (Placement("shard", 0),), ranks)
    >>> cell_title(lay, "d", (1, 2))
    'd[1, 2] → rank 1 at (1,) local storage[2]'
    """
    places = lay.where(index) if places is None else places
    partial = any(p.kind == "partial" for p in lay.placements)
    coordinates = {s.rank: s.coordinate for s in lay.ranks} if len(places) > 1 else {}
    words, unseen = [], unseen or {}
    for rank, cell in places[:MAX_TITLE_RANKS]:
        where = (
            "local index not read (computed share)" if cell is None else f"local storage[{cell:,}]"
        )
        at = coordinates.get(rank) or lay.rank(rank).coordinate
        shown = " (storage not drawn)" if rank in unseen and len(places) > 1 else ""
        words.append(f"rank {rank} at {_tup(at)} {where}{shown}")
    if len(places) > MAX_TITLE_RANKS:
        words.append(f"… and {counted(len(places) - MAX_TITLE_RANKS, 'more rank')}")
    how = f"replicated on {len(places)} ranks: " if len(places) > 1 and not partial else ""
    text = f"{name}[{', '.join(map(str, index))}] → {how}" + "; ".join(words or ["no rank"])
    if partial:
        text += _partial_words(lay)
    if places and all(rank in unseen for rank, _ in places):
        text += "; " + unseen[places[0][0]]
    return text


def _mark(holders: tuple[int, ...], partial: str) -> str:
    """A grid cell's mark: its holders (``r0,4``; ``r0+3``: rank 0 and 3 more), then ``partial``
    (``Σ`` for summands, ``·max`` ... for another reduction; ``""``: whole values)."""
    text = (
        "r" + ",".join(map(str, holders))
        if len(holders) <= 2
        else f"r{holders[0]}+{len(holders) - 1}"
    )
    return text + partial


def _partial_mark(lay: DistributedLayout) -> str:
    """What a partial cell's mark ends with: ``Σ`` when every Partial sums, else the reductions
    (``·max``, ``·avg``): a sum sign on a max would be misread."""
    ops = sorted({str(p.reduce_op) for p in lay.placements if p.kind == "partial"})
    if not ops:
        return ""
    return "Σ" if ops == ["sum"] else "·" + "/".join(ops)


def _cells(window: Mapping[str, Any], slice_: Mapping[str, Any]) -> list[list[tuple | None]]:
    """The global index of each cell of one slice (``None`` at an elided row or column)."""
    rows = slice_["rows"] if slice_["rows"] is not None else [0]
    cols = slice_["cols"] if slice_["cols"] is not None else [0]
    out = []
    for r in rows:
        line = []
        for c in cols:
            if r is None or c is None:
                line.append(None)
                continue
            index = list(slice_["lead"])
            index += [r] if window["row_dim"] is not None else []
            index += [c] if window["col_dim"] is not None else []
            line.append(tuple(index))
        out.append(line)
    return out


class _Drawer:
    """Lays out one DTensor's picture on a canvas: grid, mesh, strips, from the top down."""

    def __init__(
        self,
        canvas: Canvas,
        lay: DistributedLayout,
        name: str,
        strips: frozenset = frozenset(),
        unseen: Mapping[int, str] | None = None,
        max_slices: int = MAX_SLICES,
    ) -> None:
        self.canvas, self.lay, self.name = canvas, lay, name
        #: the global grid's panels at most (fewer: a picture over its height budget)
        self.max_slices = max_slices
        #: the ranks drawn as mesh boxes and as storage strips: what a cell's hover links to
        self.boxes = frozenset(s.rank for s in lay.ranks[:MAX_MESH_BOXES])
        #: the (column, row) box positions of the mesh's "…" (:meth:`mesh_places`)
        self.mesh_gaps: list[tuple[int, int, str]] = []
        self.strips = strips
        #: why each rank not drawn as a strip is not (:func:`not_drawn_words`)
        self.unseen = unseen or {}
        #: (rank, local storage index) -> the drawn global elements it holds (strip hover lines)
        self.held: dict[tuple[int, int], list[tuple]] = {}
        self.colour = _groups(lay)
        self.partial = any(p.kind == "partial" for p in lay.placements)
        #: what a partial cell's mark ends with (``Σ``, ``·max``; ``""``: none)
        self.partial_mark = _partial_mark(lay)
        #: the Partial placements a rank's storage holds summands under (``""``: none)
        self.summand = ", ".join(str(p) for p in lay.placements if p.kind == "partial")
        #: the holders of the first cell drawn with each kind of mark (0 to 3+ holders)
        self.marks: dict[int, tuple[int, ...]] = {}
        #: the ranks holding a drawn cell of the grid
        self.seen: set[int] = set()

    def legend(self) -> str:
        """What the grid's cell marks mean, for the kinds of mark it drew (none: ``""``)."""
        words, m = [], self.marks
        if 1 in m:
            words.append(f"r{m[1][0]}: held by rank {m[1][0]}")
        if 2 in m:
            how = "held by" if self.partial else "replicated on"
            words.append(f"{_mark(m[2], '')}: {how} ranks {m[2][0]} and {m[2][1]}")
        if 3 in m:
            more = counted(len(m[3]) - 1, "more rank")
            words.append(f"{_mark(m[3], '')}: rank {m[3][0]} and {more}")
        if self.partial and m:
            ops = sorted({str(p.reduce_op) for p in self.lay.placements if p.kind == "partial"})
            kept = "a partial summand" if ops == ["sum"] else "a partial value"
            over = _partial_over(self.lay)
            words.append(f"{kept} (marked {self.partial_mark}): the value is the {over}")
        if m and max(self.colour.values(), default=0) >= 7:  # more groups than colours
            words.append("bar: colour × notches, one per set of ranks holding the same elements")
        return " · ".join(words)

    def text(self, x: float, y: float, text: str, **kw: Any) -> Text:
        return self.canvas.text(x, y, text, anchor="start", **kw)

    def slice_panel(
        self, window: Mapping[str, Any], slice_: Mapping[str, Any], cell_w: float, room: float
    ) -> tuple[list, float, float]:
        """One 2-D slice of the global grid at (0, 0): its items, width and height.  A slice
        wider than ``room`` px continues below in blocks of columns (as torch prints it)."""
        items: list = []
        cells = _cells(window, slice_)
        label_w = max(text_width(str(r), G["font_size_small"]) for r in slice_["rows"] or [0]) + 8
        y = 0.0
        if window["ndim"] > 2:
            items.append(
                self.text(0, y + G["font_size"], f"{self.name}{slice_['label']}", bold=True)
            )
            y += G["line_h"]
        per_block = max(1, int((room - label_w) // cell_w))
        columns = list(range(len(cells[0]) if cells else 0))
        for b in range(0, len(columns), per_block):
            y += 8 if b else 0
            y = self.block(items, slice_, cells, columns[b : b + per_block], label_w, cell_w, y)
        width = label_w + cell_w * min(per_block, len(columns))
        return items, width, y

    def block(self, items, slice_, cells, columns, label_w, cell_w, y) -> float:
        """Columns ``columns`` of one slice from ``y`` down: header, row indices, cells."""
        for k, position in enumerate(columns):
            col = (slice_["cols"] or [None])[position]
            x = label_w + k * cell_w + (cell_w - 3) / 2
            word = "…" if col is None else str(col)
            if slice_["cols"] is not None:
                items.append(
                    self.canvas.text(x, y + 10, word, size=G["font_size_small"], muted=True)
                )
        y += G["header_h"] if slice_["cols"] is not None else 0
        h = G["logical_h"] - 3
        small = {"size": G["font_size_small"], "muted": True, "anchor": "end"}
        for r, line in enumerate(cells):
            row = (slice_["rows"] or [None])[r]
            if slice_["rows"] is not None:
                word = "…" if row is None else str(row)
                items.append(self.canvas.text(label_w - 6, y + h / 2 + 4, word, **small))
            for k, position in enumerate(columns):
                x, index = label_w + k * cell_w, line[position]
                if index is None:
                    items.append(self.canvas.text(x + cell_w / 2, y + h / 2 + 4, "…", muted=True))
                    continue
                items.append(self.cell(index, x, y, cell_w - 3, h, self.canvas.colours))
            y += G["logical_h"]
        return y

    def cell(self, index: tuple, x: float, y: float, w: float, h: float, c: Mapping) -> Group:
        places = self.lay.where(index)
        holders = tuple(rank for rank, _ in places)
        self.marks.setdefault(min(len(holders), 3), holders)
        self.seen.update(holders)
        dash = "3 2" if self.partial else None
        body = [
            Rect(x, y, w, h, c["cell_bg"], c["cell_stroke"], 1.0, dash, rx=3),
            *(
                rank_bar(x + 1, y + 1, w - 2, 5, self.colour[holders[0]])
                if holders
                else [Rect(x + 1, y + 1, w - 2, 5, c["untouched_bg"])]
            ),
            self.canvas.text(
                x + w / 2, y + h / 2 + 6, _mark(holders, self.partial_mark), anchor="middle"
            ),
        ]
        # the hover keys (js/paint/link.js): this element, linked to its holders' mesh boxes and
        # to the storage cell holding it in each drawn rank strip
        links = [f"r{r}" for r in holders if r in self.boxes]
        links += [f"r{r}:{at}" for r, at in places if r in self.strips and at is not None]
        for r, at in places:
            if r in self.strips and at is not None:
                self.held.setdefault((r, at), []).append(index)
        data = {
            "index": ",".join(map(str, index)),
            "ranks": ",".join(map(str, holders)),
            "key": "e" + ",".join(map(str, index)),
            "links": " ".join(links),
        }
        title = cell_title(self.lay, self.name, index, places, self.unseen)
        return Group("sws-dcell", body, data, title)

    def grid(self, room: float) -> tuple[list, float, float]:
        """The global grid's slices at (0, 0), laid out in rows of panels within ``room`` px."""
        lay = self.lay
        glob = Layout(shape=lay.global_shape, strides=contiguous_strides(lay.global_shape))
        window = logical_window(
            glob, EDGE_ITEMS, THRESHOLD, MAX_DIM_ITEMS, self.max_slices, self.name
        )
        window = spread(window, lay)  # every rank's block along the rows and columns shows
        replicas: dict[tuple, tuple[int, ...]] = {}
        for shard in lay.ranks:
            replicas[shard.indices] = (*replicas.get(shard.indices, ()), shard.rank)
        longest = max(
            text_width(_mark(r, self.partial_mark), G["font_size"]) for r in replicas.values()
        )
        cell_w = max(G["logical_w"] - 10, longest + 10)
        items: list = []
        x = y = row_h = width = 0.0
        for slice_ in window["slices"]:
            if slice_["kind"] == "gap":
                if x:
                    x, y, row_h = 0.0, y + row_h + G["panel_gap"], 0.0
                items.append(
                    self.text(0, y + G["font_size"], f"{slice_['text']} not drawn", muted=True)
                )
                y += G["line_h"]
                continue
            panel, w, h = self.slice_panel(window, slice_, cell_w, room)
            if x and x + w > room:
                x, y, row_h = 0.0, y + row_h + G["panel_gap"], 0.0
            items.extend(translated(panel, x, y))
            width = max(width, x + w)
            x += w + G["panel_gap"]
            row_h = max(row_h, h)
        if not window["slices"]:
            words = "no element (an empty tensor)"
            items.append(self.text(0, y + G["font_size"], words, muted=True))
            row_h, width = G["line_h"], max(width, text_width(words, G["font_size"]))
        return items, width, y + row_h

    def placed_grid(self, room: float, mesh_w: float, mesh_h: float) -> tuple:
        """The global grid laid out with the mesh beside it (when that leaves the grid half the
        room) or below it, whichever is shorter (beside on a tie): its items, width, height and
        whether the mesh goes beside it."""
        beside = room - mesh_w - 2 * G["panel_gap"]
        best: tuple | None = None
        for r in [beside, room] if beside >= room / 2 else [room]:
            self.held = {}
            grid, w, h = self.grid(r)
            side = r < room and w <= beside
            tall = max(h, mesh_h) if side else h + 6 + mesh_h
            if best is None or tall < best[0]:
                best = (tall, (grid, w, h, side), self.held)
        assert best is not None
        self.held = best[2]
        return best[1]

    def mesh_places(self, fit: int) -> dict:
        """Each drawn rank's box position (column, row) for ``fit`` boxes a line: a 1-D mesh of
        at most :data:`MAX_MESH_BOXES` ranks wraps; any other keeps its rows (each coordinate of
        the mesh dims but the last) and columns (the last mesh dim), the middle ones left out
        (``self.mesh_gaps``: where "…" and "⋮" mark them) past ``fit`` columns or ``MAX_MESH_BOXES``."""
        lay, places, self.mesh_gaps = self.lay, {}, []
        if len(lay.mesh_shape) <= 1 and len(lay.ranks) <= MAX_MESH_BOXES:
            places = {s: (k % fit, k // fit) for k, s in enumerate(lay.ranks)}
        else:
            at = {s.coordinate: s for s in lay.ranks}
            kept_rows, kept_cols = mesh_window(lay.mesh_shape, fit, MAX_MESH_BOXES)
            lead = list(itertools.product(*(range(n) for n in lay.mesh_shape[:-1])))
            for y, row in enumerate(kept_rows):
                for x, col in enumerate(kept_cols):
                    if row is None:
                        self.mesh_gaps += [(x, y, "⋮")] if x == 0 else []
                    elif col is None:
                        self.mesh_gaps.append((x, y, "…"))
                    elif (*lead[row], col) in at:
                        places[at[(*lead[row], col)]] = (x, y)
        self.boxes = frozenset(s.rank for s in places)
        return places

    def mesh_words(self, drawn: int) -> str:
        """The mesh's boxes in words when some are left out: its shape as rows × columns."""
        shape = self.lay.mesh_shape
        rows = math.prod(shape[:-1]) if shape else 1
        left = len(self.lay.ranks) - drawn
        return (
            f"mesh {_tup(shape)}: {counted(rows, 'row')} × {counted(shape[-1], 'column')} of "
            f"boxes; {drawn} drawn, … and ⋮ mark the {counted(left, 'rank')} left out"
        )

    def mesh(self, room: float) -> tuple[list, float, float]:
        """The mesh at (0, 0): its words, then each rank a box with its coordinate."""
        lay, c, items = self.lay, self.canvas.colours, []
        names = lay.mesh_dim_names or tuple(f"dim{i}" for i in range(len(lay.mesh_shape)))
        words = ", ".join(f"{n}={s}" for n, s in zip(names, lay.mesh_shape))
        lines = [f"mesh ({words})"] + [f"{n}: {p}" for n, p in zip(names, lay.placements)]
        y = 0.0
        for k, words in enumerate(lines):
            for line in wrapped(words, room, G["font_size"]):
                y += G["line_h"]
                items.append(self.text(0, y - 4, line, bold=not k, muted=bool(k)))
        box_w = max(text_width(_tup(lay.ranks[-1].coordinate), G["font_size_small"]) + 8, 40)
        box_h, width = 32.0, max(min(text_width(line, G["font_size"]), room) for line in lines)
        fit = max(1, int((room + 4) // (box_w + 4)))
        places = self.mesh_places(fit)
        for shard, (col, row) in places.items():
            bx, by = col * (box_w + 4), y + 4 + row * (box_h + 4)
            body = [
                Rect(bx, by, box_w, box_h, c["cell_bg"], c["cell_stroke"], rx=3),
                *rank_bar(bx + 1, by + 1, box_w - 2, 4, self.colour[shard.rank]),
                self.canvas.text(
                    bx + box_w / 2, by + 17, f"r{shard.rank}", anchor="middle", bold=True
                ),
                self.canvas.text(
                    bx + box_w / 2,
                    by + 28,
                    _tup(shard.coordinate),
                    anchor="middle",
                    size=G["font_size_small"],
                    muted=True,
                ),
            ]
            data = {"rank": shard.rank, "key": f"r{shard.rank}"}
            title = shard.explain()
            if shard.rank in self.unseen:
                title += "; " + self.unseen[shard.rank]
            items.append(Group("sws-mesh-rank", body, data, title))
            width = max(width, bx + box_w)
        for col, row, mark in self.mesh_gaps:  # the boxes left out between, marked
            bx, by = col * (box_w + 4), y + 4 + row * (box_h + 4)
            items.append(self.canvas.text(bx + box_w / 2, by + 20, mark, muted=True))
        at = [*places.values(), *(g[:2] for g in self.mesh_gaps)]
        rows = 1 + max((row for _, row in at), default=-1)
        y += 4 + rows * (box_h + 4)
        if len(places) < len(lay.ranks):
            for line in wrapped(self.mesh_words(len(places)), room, G["font_size"]):
                y += G["line_h"]
                items.append(self.text(0, y - 4, line, muted=True))
        return items, width, y


def draw_distributed(
    d: Any,
    name: str = "d",
    theme: str = "light",
    *,
    width: float = MAX_WIDTH,
    roles: bool = False,
    wrap: int | None = None,
) -> Picture:
    """The picture of DTensor ``d`` (see the module docstring), laid out for ``width`` px (the
    rank strips ``wrap`` storage cells a row, ``None``: as an ordinary picture would).

    Its groups carry hover keys (``key``/``links``, linked by ``js/paint/link.js``): a global
    cell ``e1,2`` links its holders' mesh boxes ``r3`` and the storage cells ``r3:5`` holding it
    in the drawn rank strips (each of those links its rank's box); a rank strip's heading is
    keyed ``r3`` as its mesh box is.

    >>> import torch, torch.distributed as dist
    >>> from torch.distributed._local_tensor import LocalTensorMode
    >>> from torch.distributed.device_mesh import init_device_mesh
    >>> from torch.distributed.tensor import Shard, distribute_tensor
    >>> from torch.testing._internal.distributed.fake_pg import FakeStore
    >>> dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=2)
    >>> with LocalTensorMode(2):
    ...     d = distribute_tensor(torch.arange(6.0).reshape(2, 3), init_device_mesh("cpu", (2,)), [Shard(0)])
    >>> picture = draw_distributed(d)
    >>> [g.title for g in picture.items if isinstance(g, Group) and g.cls == "sws-dcell"][4]
    'd[1, 1] → rank 1 at (1,) local storage[1]'
    >>> dist.destroy_process_group()
    """
    lay, tensors = distributed_layout(d), local_tensors(d)
    chosen = lay.covering_ranks([s.rank for s in lay.ranks if s.rank in tensors], MAX_RANK_STRIPS)
    # the budget of a picture of the global tensor and the drawn ranks' local tensors
    shapes = [lay.global_shape, *(lay.rank(r).shape for r in chosen)]
    budget = height_budget({"tensors": [{"layout": {"shape": list(n)}} for n in shapes]})
    cut: tuple[int, ...] = ()
    drawing = (lay, tensors, name, theme, width, roles, wrap)
    # over the budget: fewer strips down to one, then fewer panels of the global grid (a rank's
    # real storage is the point of the picture), then no strip
    panels = [MAX_SLICES, *(n for n in (4, 2) if n < MAX_SLICES)]
    while True:
        picture = _draw(drawing, chosen, cut, panels[0])
        if picture.height <= budget or not chosen:
            return picture
        if len(chosen) == 1 and len(panels) > 1:
            panels = panels[1:]
            continue
        chosen, cut = chosen[:-1], (*cut, chosen[-1])


def _draw(
    drawing: tuple, chosen: tuple[int, ...], cut: tuple[int, ...], panels: int = MAX_SLICES
) -> Picture:
    """The picture with the storages of ranks ``chosen`` drawn as strips (``cut``: ranks left out
    for the height budget), the global grid in at most ``panels`` panels."""
    lay, tensors, name, theme, width, roles, wrap = drawing
    canvas = Canvas({"storages": [], "tensors": []}, theme, max_width=width, roles=roles)
    drawn = [lay.rank(r) for r in sorted(chosen)]
    unseen = Unseen(lay, chosen, frozenset(tensors), cut)
    drawer = _Drawer(canvas, lay, name, frozenset(chosen), unseen, panels)
    head = f"{name}: {str(lay).split(' · ')[0]}"
    room, size = canvas.max_width - 2 * PAD, G["font_size"]
    y = 4.0 + G["font_size_title"] - G["line_h"]
    for line in wrapped(head, room, G["font_size_title"]):
        y += G["line_h"]
        canvas.items.append(drawer.text(PAD, y, line, size=G["font_size_title"], bold=True))
    mesh, mesh_w, mesh_h = drawer.mesh(room)
    grid, grid_w, grid_h, side = drawer.placed_grid(room, mesh_w, mesh_h)
    # under the heading: what the cell marks mean (the saved picture has no tooltips), then
    # which dims are split unevenly
    for words in [drawer.legend(), not_in_grid_words(lay, drawer.seen), *lay.uneven_words()]:
        for line in wrapped(words, room, size) if words else []:
            y += G["line_h"]
            canvas.items.append(drawer.text(PAD, y, line, muted=True))
    y += 8
    canvas.items.extend(translated(grid, PAD, y))
    if side:
        canvas.items.extend(translated(mesh, PAD + grid_w + 2 * G["panel_gap"], y - 4))
        y += max(grid_h, mesh_h)
        canvas.width = max(canvas.width, PAD + grid_w + 2 * G["panel_gap"] + mesh_w + PAD)
    else:
        canvas.items.extend(translated(mesh, PAD, y + grid_h + 6))
        y += grid_h + 6 + mesh_h
        canvas.width = max(canvas.width, PAD + max(grid_w, mesh_w) + PAD)
    y += 10
    patterns: list = []
    for shard in drawn:
        holds = holds_words(drawer.held, shard.rank, name, drawer.summand)
        group, w, h, tensor = rank_strip(
            shard, tensors[shard.rank], name, theme, width, roles, wrap, holds
        )
        canvas.items.append(
            Group(group.cls, translated(group.children, 0, y), group.data, group.title)
        )
        canvas.width = max(canvas.width, w)
        patterns = patterns or [tensor]
        y += h + 8
    listed = rest_lines(lay, drawn, bool(cut))
    for line in (part for words in listed for part in wrapped(words, room, size)):
        y += G["line_h"]
        canvas.items.append(drawer.text(PAD, y - 4, line, muted=True))
    words = f"distributed layout of {name}: {str(lay).split(' · ')[0]}"
    return Picture(max(canvas.width, 240.0), y + 8, theme, canvas.items, words, patterns)
