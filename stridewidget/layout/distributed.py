"""A distributed tensor's layout as pure data: the global shape, the mesh, the placements, and
for every rank the global indices it holds and (where its tensor is at hand) its local
:class:`Layout`.

The adapter (:mod:`stridewidget.adapters.distributed`) reads a live ``DTensor`` into a
:class:`DistributedLayout`; everything here is ints and strings.  A rank whose local tensor is
not in this process (a real multi-process run holds only its own) has ``local=None``: its
indices are computed from the placements, and the words say so.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import LayoutError
from .layout import Layout
from .redistribute import RankMove, Redistribution, _plural, plan, target_indices

__all__ = ["DistributedLayout", "Placement", "RankShard", "index_words"]

#: How many ranks :meth:`DistributedLayout.explain` describes one by one; the rest are counted.
EXPLAIN_RANKS = 16
#: How many blocks of elements :meth:`DistributedLayout.covering_ranks` counts (past it: the first
#: ranks are chosen).
MAX_ATOMS = 100_000


@dataclass(frozen=True)
class Placement:
    """One mesh dim's placement: ``kind`` is ``"shard"``, ``"strided_shard"``, ``"replicate"``
    or ``"partial"``.

    >>> str(Placement("shard", dim=0)), str(Placement("partial", reduce_op="sum"))
    ('Shard(0)', 'Partial(sum)')
    """

    kind: str
    dim: int | None = None
    reduce_op: str | None = None
    split_factor: int | None = None

    def __str__(self) -> str:
        if self.kind == "shard":
            return f"Shard({self.dim})"
        if self.kind == "strided_shard":
            return f"StridedShard(dim={self.dim}, split_factor={self.split_factor})"
        if self.kind == "partial":
            return f"Partial({self.reduce_op})"
        return "Replicate()"


def index_words(indices: Sequence[int]) -> str:
    """Global indices along one dim as words: a run ``4–7``, one index, or a short list.

    >>> index_words(range(4, 8)), index_words([3]), index_words([0, 1, 4, 5]), index_words([])
    ('4–7', '3', '0, 1, 4, 5', 'none')
    """
    values = list(indices)
    if not values:
        return "none"
    if len(values) == 1:
        return str(values[0])
    if values == list(range(values[0], values[0] + len(values))):
        return f"{values[0]}–{values[-1]}"
    if len(values) <= 6:
        return ", ".join(map(str, values))
    return f"{values[0]}, {values[1]}, …, {values[-1]} ({len(values)} indices)"


def rank_runs(ranks: Sequence[int]) -> str:
    """Ranks as runs (``5–1023``), at most six runs named, then how many ranks in all.

    >>> rank_runs([5, 6, 7]), rank_runs([1, 3, 4, 9]), rank_runs(list(range(0, 40, 2)))
    ('5–7', '1, 3–4, 9', '0, 2, 4, 6, 8, 10, … (20 ranks)')
    """
    runs: list[list[int]] = []
    for r in sorted(ranks):
        if runs and r == runs[-1][-1] + 1:
            runs[-1].append(r)
        else:
            runs.append([r])
    parts = [str(run[0]) if len(run) == 1 else f"{run[0]}–{run[-1]}" for run in runs]
    if len(parts) > 6:
        return ", ".join(parts[:6]) + f", … ({len(ranks)} ranks)"
    return ", ".join(parts)


def _dim_name(dim: int, ndim: int, count: int = 2) -> str:
    """What the indices along ``dim`` are called, singular for ``count`` one.

    >>> _dim_name(0, 2, 1), _dim_name(1, 2, 4), _dim_name(0, 1, 1), _dim_name(2, 3, 0)
    ('row', 'columns', 'element', 'dim 2 indices')
    """
    one = count == 1
    if ndim == 1:
        return "element" if one else "elements"
    if ndim == 2:
        return ("row", "column")[dim] + ("" if one else "s")
    return f"dim {dim} {'index' if one else 'indices'}"


def _tup(values: Sequence[int]) -> str:
    return "(" + ", ".join(map(str, values)) + ("," if len(values) == 1 else "") + ")"


@dataclass(frozen=True)
class RankShard:
    """What one rank holds: its mesh coordinate, the global indices along each tensor dim (the
    rank holds their product), and its local tensor's real layout, ``None`` when that tensor is
    not in this process (then the indices are computed from the placements)."""

    rank: int
    coordinate: tuple[int, ...]
    indices: tuple[tuple[int, ...], ...]
    local: Layout | None = None

    @property
    def shape(self) -> tuple[int, ...]:
        """The local shape the placements give this rank."""
        return tuple(len(i) for i in self.indices)

    @property
    def present(self) -> bool:
        """Is this rank's local tensor in this process (read, not computed)?"""
        return self.local is not None

    def holds(self, index: Sequence[int]) -> bool:
        """Does this rank hold global element ``index``?"""
        return all(i in held for i, held in zip(index, self.indices, strict=True))

    def explain(self) -> str:
        """One line: which global indices, and the local tensor's layout (or that it is computed).

        >>> lay = Layout(shape=(4, 2), strides=(2, 1), storage_size=8)
        >>> print(RankShard(6, (1, 2), ((4, 5, 6, 7), (4, 5)), lay).explain())
        rank 6 at (1, 2) holds rows 4–7 and columns 4–5: a (4, 2) local tensor, strides (2, 1), offset 0, storage 8, contiguous
        """
        ndim = len(self.indices)
        parts = [
            f"{_dim_name(d, ndim, len(i))} {index_words(i)}" for d, i in enumerate(self.indices)
        ]
        where = " and ".join(parts) if parts else "the one element"
        if 0 in self.shape:
            where = f"no element ({where})"
        head = f"rank {self.rank} at {_tup(self.coordinate)} holds {where}"
        if self.local is None:
            return f"{head}: a {_tup(self.shape)} local tensor (computed from the placements)"
        lay = self.local
        flags = ", ".join(lay.flags) if lay.flags else "strided"
        text = (
            f"{head}: a {_tup(lay.shape)} local tensor, strides {_tup(lay.strides)}, "
            f"offset {lay.offset}, storage {lay.storage_size}, {flags}"
        )
        if lay.shape != self.shape:
            text += f" (the placements give {_tup(self.shape)})"
        return text


@dataclass(frozen=True)
class DistributedLayout:
    """A distributed tensor's layout: global shape, mesh, placements and every rank's share.

    ``local`` is the :class:`Layout` of this process's rank's local tensor (``this_rank``).

    >>> lay = Layout(shape=(1, 4), strides=(4, 1), storage_size=4)
    >>> ranks = tuple(RankShard(r, (r,), ((r,), (0, 1, 2, 3)), lay if r == 0 else None)
    ...               for r in range(2))
    >>> d = DistributedLayout((2, 4), "float32", (2,), ("dp",), (Placement("shard", 0),), ranks, 0)
    >>> print(d)
    DTensor float32 (2, 4) on mesh (dp=2) [Shard(0)] · rank 0: float32 (1,4):(4,1) +0 · storage 4 · contiguous
    >>> d.holders((1, 3))
    (1,)
    """

    global_shape: tuple[int, ...]
    dtype: str
    mesh_shape: tuple[int, ...]
    mesh_dim_names: tuple[str, ...] | None
    placements: tuple[Placement, ...]
    ranks: tuple[RankShard, ...]
    this_rank: int | None = None
    itemsize: int | None = None
    #: Reads one placement of the library's own (a torch ``Shard(0)``) into a :class:`Placement`:
    #: the adapter sets it, so :meth:`redistribute` takes torch's placements while this stays pure.
    read_placement: Callable[[Any], Placement] | None = field(
        default=None, compare=False, repr=False
    )

    @property
    def local(self) -> Layout | None:
        """This rank's local layout (``None`` when this process is no rank of the mesh)."""
        for shard in self.ranks:
            if shard.rank == self.this_rank:
                return shard.local
        return None

    @property
    def present_ranks(self) -> tuple[int, ...]:
        """Ranks whose local tensors were read (all of them under ``LocalTensorMode``)."""
        return tuple(s.rank for s in self.ranks if s.present)

    @property
    def computed_ranks(self) -> tuple[int, ...]:
        """Ranks whose local shapes and indices come from the placements only."""
        return tuple(s.rank for s in self.ranks if not s.present)

    def rank(self, rank: int | Sequence[int]) -> RankShard:
        """The share of one rank, given as a flat rank or as its mesh coordinate; a one-line
        error for a rank or a coordinate not in the mesh.

        >>> lay = Layout(shape=(1, 2), strides=(2, 1), storage_size=2)
        >>> ranks = tuple(RankShard(r, divmod(r, 2), ((r // 2,), (2 * (r % 2), 2 * (r % 2) + 1)), lay)
        ...               for r in range(4))
        >>> placements = (Placement("shard", 0), Placement("shard", 1))
        >>> d = DistributedLayout((2, 4), "f", (2, 2), None, placements, ranks)
        >>> d.rank((1, 0)).rank, d.rank(3).coordinate
        (2, (1, 1))
        """
        if isinstance(rank, Sequence) and not isinstance(rank, str):
            coordinate = tuple(rank)
            if len(coordinate) != len(self.mesh_shape) or not all(
                isinstance(c, int) and 0 <= c < n
                for c, n in zip(coordinate, self.mesh_shape, strict=True)
            ):
                raise KeyError(
                    f"mesh coordinate {_tup(coordinate)} is not in this mesh of shape "
                    f"{_tup(self.mesh_shape)}"
                )
            for shard in self.ranks:
                if shard.coordinate == coordinate:
                    return shard
            raise KeyError(f"mesh coordinate {_tup(coordinate)} has no rank in this mesh")
        for shard in self.ranks:
            if shard.rank == rank:
                return shard
        raise KeyError(
            f"rank {rank} is not in this mesh (ranks {rank_runs([s.rank for s in self.ranks])})"
        )

    def holders(self, index: Sequence[int]) -> tuple[int, ...]:
        """The ranks that hold global element ``index`` (every rank of a replicated dim)."""
        index = tuple(index)
        if len(index) != len(self.global_shape) or not all(
            0 <= i < n for i, n in zip(index, self.global_shape, strict=True)
        ):
            raise IndexError(f"index {index} is not in the global shape {self.global_shape}")
        return tuple(s.rank for s in self.ranks if s.holds(index))

    def where(self, index: Sequence[int]) -> tuple[tuple[int, int | None], ...]:
        """Every rank that holds global element ``index``, with the storage element of its local
        tensor that holds it (``None`` where that tensor was not read, only computed).

        >>> lay = Layout(shape=(1, 4), strides=(4, 1), storage_size=4)
        >>> ranks = tuple(RankShard(r, (r,), ((r,), (0, 1, 2, 3)), lay) for r in range(2))
        >>> DistributedLayout((2, 4), "float32", (2,), None, (Placement("shard", 0),), ranks).where((1, 2))
        ((1, 2),)
        """
        found = []
        holders = set(self.holders(index))
        for shard in self.ranks:
            if shard.rank in holders:
                local_index = tuple(held.index(i) for i, held in zip(index, shard.indices))
                cell = None if shard.local is None else shard.local.address(local_index)
                found.append((shard.rank, cell))
        return tuple(found)

    def _atoms(self, ranks: Sequence[int]) -> list[tuple[int, int]] | None:
        """The global elements cut into blocks held by one same set of ``ranks``: per block its
        element count and a bit mask of its holders (bit k: ``ranks[k]``); ``None`` past
        :data:`MAX_ATOMS` blocks."""
        shards = [self.rank(r) for r in ranks]
        # a partial holder's summand is its own: its partial mesh coordinates are one more dim
        partial = [m for m, p in enumerate(self.placements) if p.kind == "partial"]
        summands = sorted({tuple(s.coordinate[m] for m in partial) for s in shards})
        held = [
            (*s.indices, (summands.index(tuple(s.coordinate[m] for m in partial)),)) for s in shards
        ]
        per_dim = []
        for d, n in enumerate((*self.global_shape, len(summands))):
            masks = [0] * n
            for k in range(len(shards)):
                for i in held[k][d]:
                    masks[i] |= 1 << k
            counts: dict[int, int] = {}
            for m in masks:
                counts[m] = counts.get(m, 0) + 1
            per_dim.append([(c, m) for m, c in counts.items() if m])
        if math.prod(len(c) for c in per_dim) > MAX_ATOMS:
            return None
        atoms = []
        for combo in itertools.product(*per_dim):
            mask, count = (1 << len(shards)) - 1, 1
            for c, m in combo:
                mask, count = mask & m, count * c
            if mask and count:
                atoms.append((count, mask))
        return atoms

    def covering_ranks(self, candidates: Iterable[int], limit: int) -> tuple[int, ...]:
        """At most ``limit`` of ``candidates`` that hold as many distinct global elements as
        possible, in the order chosen: greedily, each next the one holding the most elements
        the ones before it do not (the lowest rank on a tie); a rank holding no element, or only
        elements already held, is never chosen.

        >>> lay = Layout(shape=(2, 2), strides=(2, 1), storage_size=4)
        >>> cols = lambda r: (0, 1) if r < 2 else (2, 3)  # [Shard(1), Replicate()] on 2x2
        >>> ranks = tuple(RankShard(r, divmod(r, 2), ((0, 1), cols(r)), lay) for r in range(4))
        >>> placements = (Placement("shard", 1), Placement("replicate"))
        >>> DistributedLayout((2, 4), "f", (2, 2), None, placements, ranks).covering_ranks(range(4), 4)
        (0, 2)
        """
        ranks = [r for r in candidates if 0 not in self.rank(r).shape]
        atoms = self._atoms(ranks)
        if atoms is None:  # too many blocks to count: the first ranks
            return tuple(ranks[:limit])
        chosen: list[int] = []
        while len(chosen) < limit:
            gains = [
                (sum(c for c, m in atoms if m >> k & 1), -k)
                for k in range(len(ranks))
                if k not in chosen
            ]
            gain, k = max(gains, default=(0, 0))
            if not gain:
                break
            chosen.append(-k)
            atoms = [(c, m) for c, m in atoms if not m >> -k & 1]
        return tuple(ranks[k] for k in chosen)

    def held_by(self, rank: int, others: Iterable[int]) -> bool:
        """Is every element ``rank`` holds held by one of ``others`` too (a replica's)?"""
        others = [r for r in others if r != rank]
        atoms = self._atoms([rank, *others])
        if atoms is None:
            return False
        return all(m != 1 for c, m in atoms if m & 1)

    def _target_placement(self, p: Any, mesh_dim: int) -> Placement:
        if isinstance(p, str):
            text = p.replace(" ", "")
            shard = re.fullmatch(r"Shard\((-?\d+)\)", text)
            partial = re.fullmatch(r"Partial\((\w*)\)", text)
            if shard is not None:
                p = Placement("shard", dim=int(shard.group(1)))
            elif partial is not None:
                p = Placement("partial", reduce_op=partial.group(1) or "sum")
            elif text == "Replicate()":
                p = Placement("replicate")
            else:
                raise LayoutError(
                    f"redistribute: {p!r} is not Shard(dim), Replicate() or Partial(op)"
                )
        elif not isinstance(p, Placement):
            if self.read_placement is None:
                raise LayoutError(f"redistribute: {p!r} is not a placement")
            try:
                p = self.read_placement(p)
            except LayoutError as error:  # said for sw.inspect: say it for redistribute
                raise LayoutError(
                    "redistribute: " + str(error).removeprefix("sw.inspect: ")
                ) from None
        ndim = len(self.global_shape)
        if p.kind == "strided_shard":
            raise LayoutError(
                f"redistribute: to {p} is not counted (only Shard, Replicate, Partial)"
            )
        if p.kind == "shard":
            if p.dim is None or not -ndim <= p.dim < ndim:
                raise LayoutError(
                    f"redistribute: {p} on mesh dim {mesh_dim}, but the tensor has {ndim} dims "
                    f"(shape {_tup(self.global_shape)})"
                )
            p = Placement("shard", dim=p.dim % ndim)
        if p.kind == "partial" and self.placements[mesh_dim] != p:
            raise LayoutError(
                f"redistribute: to {p} on mesh dim {mesh_dim} from {self.placements[mesh_dim]}: "
                "only a Partial kept as it is is counted (torch makes a new one locally)"
            )
        return p

    def redistribute(self, placements: Sequence[Any]) -> Redistribution:
        """What ``d.redistribute(mesh, placements)`` would move between ranks, computed from the
        current and the target placements (no collective runs): per rank the elements and bytes
        it receives (those it holds after and not before) and sends (each element a rank lacks
        comes from its lowest-numbered holder), and the total.  From a ``Partial`` it is a
        reduction: every partial holder sends its summand (see :mod:`.redistribute`).
        ``placements`` are torch's (through ``sw.inspect(d)``), :class:`Placement` s or words,
        one per mesh dim, in a list (a single one alone only for a 1-D mesh).

        >>> lay = Layout(shape=(2, 4), strides=(4, 1), storage_size=8)
        >>> ranks = tuple(RankShard(r, (r,), ((2 * r, 2 * r + 1), (0, 1, 2, 3)), lay)
        ...               for r in range(2))
        >>> d = DistributedLayout((4, 4), "float32", (2,), ("tp",), (Placement("shard", 0),),
        ...                       ranks, itemsize=4)
        >>> print(d.redistribute(["Shard(1)"]).explain().splitlines()[0])
        redistribute [Shard(0)] → [Shard(1)]: 32 B move in all (8 elements of float32, 4 B each)
        """
        mesh = f"{len(self.mesh_shape)}-dim mesh {_tup(self.mesh_shape)}"
        if placements is None:
            raise LayoutError(f"redistribute: no placements (None) for a {mesh}: pass a list")
        if isinstance(placements, (str, Placement)) or not isinstance(placements, Iterable):
            if len(self.mesh_shape) != 1:  # one placement: only for a 1-D mesh
                raise LayoutError(
                    f"redistribute: one placement {placements!r} for a {mesh}: "
                    "pass a list, one per mesh dim"
                )
            placements = [placements]
        placements = list(placements)
        if len(placements) != len(self.mesh_shape):
            given = f"{len(placements)} placement{'' if len(placements) == 1 else 's'}"
            raise LayoutError(
                f"redistribute: {given} for a {len(self.mesh_shape)}-dim mesh "
                f"{_tup(self.mesh_shape)}: give one per mesh dim"
            )
        target = tuple(self._target_placement(p, m) for m, p in enumerate(placements))
        partial = [m for m, p in enumerate(self.placements) if p.kind == "partial"]
        kept_dims = [i for i, m in enumerate(partial) if target[m].kind == "partial"]
        pairs = [(p.kind, p.dim) for p in target]
        source, needs, summand_of, kept = {}, {}, {}, {}
        for s in self.ranks:
            source[s.rank] = s.indices
            needs[s.rank] = target_indices(pairs, self.global_shape, self.mesh_shape, s.coordinate)
            summand_of[s.rank] = tuple(s.coordinate[m] for m in partial)
            kept[s.rank] = tuple((i, summand_of[s.rank][i]) for i in kept_dims)
        atoms, moved = plan(self.global_shape, source, needs, summand_of, kept)
        itemsize = self.itemsize or _itemsize(self.dtype, self.ranks)
        reduce_ops = sorted({str(self.placements[m].reduce_op) for m in partial})
        reduced = len(kept_dims) < len(partial)
        # a dim whose split changes goes through a collective, which pads uneven chunks
        resplit = [
            p.dim
            for m, p in enumerate(self.placements)
            if p.kind in ("shard", "strided_shard") and p.dim is not None and target[m] != p
        ]
        return Redistribution(
            source_placements=tuple(map(str, self.placements)),
            target_placements=tuple(map(str, target)),
            moves=tuple(
                RankMove(
                    s.rank,
                    moved[s.rank]["receives"],
                    moved[s.rank]["sends"],
                    tuple(sorted(moved[s.rank]["from"])),
                    tuple(sorted(moved[s.rank]["to"])),
                    itemsize,
                )
                for s in self.ranks
            ),
            itemsize=itemsize,
            dtype=self.dtype,
            reduction=", ".join(reduce_ops) if reduced else None,
            atoms=tuple(atoms),
            padding=tuple(self.uneven_words(resplit)),
        )

    def _mesh_words(self) -> str:
        names = self.mesh_dim_names or tuple(f"dim{i}" for i in range(len(self.mesh_shape)))
        return "(" + ", ".join(f"{n}={s}" for n, s in zip(names, self.mesh_shape)) + ")"

    def __str__(self) -> str:
        head = (
            f"DTensor {self.dtype} {_tup(self.global_shape)} on mesh {self._mesh_words()} "
            f"[{', '.join(map(str, self.placements))}]"
        )
        local = self.local
        if local is None:
            return head
        return f"{head} · rank {self.this_rank}: {local}"

    def uneven_words(self, dims: Iterable[int] | None = None) -> list[str]:
        """One line per tensor dim (of ``dims``, ``None``: all) that is split unevenly: which
        ranks hold fewer indices."""
        lines = []
        for dim in range(len(self.global_shape)) if dims is None else sorted(set(dims)):
            sizes = {s.rank: s.shape[dim] for s in self.ranks}
            most = max(sizes.values(), default=0)
            fewer = {r: n for r, n in sizes.items() if n < most}
            if not fewer:
                continue
            by_size: dict[int, list[int]] = {}
            for r, n in sorted(fewer.items()):
                by_size.setdefault(n, []).append(r)
            said = "; ".join(
                f"rank{'s' if len(rs) > 1 else ''} {rank_runs(rs)} hold{'' if len(rs) > 1 else 's'} "
                f"{n} ({most - n} fewer, padded to {most} for collectives)"
                for n, rs in sorted(by_size.items(), reverse=True)
            )
            lines.append(
                f"uneven: dim {dim} ({self.global_shape[dim]}) — most ranks hold {most}; {said}"
            )
        return lines

    def explain(self) -> str:
        """The mesh, the placements, each rank's share and local layout, in plain words."""
        lines = [str(self).split(" · ")[0]]
        names = self.mesh_dim_names or tuple(f"dim{i}" for i in range(len(self.mesh_shape)))
        for name, size, placement in zip(names, self.mesh_shape, self.placements):
            if placement.kind in ("shard", "strided_shard"):
                what = f"splits tensor dim {placement.dim} over its {_plural(size, 'coordinate')}"
            elif placement.kind == "partial":
                what = (
                    f"holds partial values: the tensor is the {placement.reduce_op} over its "
                    f"{_plural(size, 'rank')}"
                )
            else:
                what = (
                    f"replicates: each of its {_plural(size, 'coordinate')} holds the same elements"
                )
            lines.append(f"mesh dim {name!r} ({size}): {placement} — {what}")
        shown = list(self.ranks[:EXPLAIN_RANKS])
        if self.computed_ranks:  # this process's rank(s), read, are said whatever their number
            shown += [s for s in self.ranks[EXPLAIN_RANKS:] if s.present]
        lines += [s.explain() for s in shown]
        if len(self.ranks) > len(shown):
            lines.append(f"… and {_plural(len(self.ranks) - len(shown), 'more rank')}")
        lines += self.uneven_words()
        computed = self.computed_ranks
        if not computed:
            lines.append("every rank's local tensor was read (all ranks are in this process)")
        else:
            lines.append(
                f"read: rank{'s' if len(self.present_ranks) != 1 else ''} "
                f"{', '.join(map(str, self.present_ranks)) or 'none'}; the other "
                + (
                    "rank's share is"
                    if len(computed) == 1
                    else f"{len(computed)} ranks' shares are"
                )
                + " computed from the placements"
            )
        return "\n".join(lines)


def _itemsize(dtype: str, ranks: Sequence[RankShard]) -> int:
    """Bytes per element: a read local tensor's, else the bits in the dtype's name."""
    for s in ranks:
        if s.local is not None:
            return s.local.itemsize
    bits = re.search(r"\d+", dtype)
    return max(1, int(bits.group()) // 8) if bits else 1
