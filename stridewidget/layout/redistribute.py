"""What ``DTensor.redistribute`` would move, computed from the current and the target placements
alone: no collective is run and no value is read (pure ints, like the rest of ``layout/``).

The rule, per element and per rank (``Redistribution`` says it in its words too):

* A rank **needs** every global element its target placements give it (shards applied left to
  right over the mesh dims, each splitting what the ones before left, as ``torch.chunk`` splits).
* Without ``Partial`` in the source, it **receives** each element it needs and does not hold
  now, and each such element comes from **one** holder: the lowest-numbered rank that holds it
  now.  That holder **sends** it.  Elements a rank already holds never move.
* A source ``Partial`` makes it a **reduction**: each rank holds a summand of its elements (the
  summands differ along the Partial mesh dims; along Replicate dims they are copies).  A rank
  that needs an element's full value receives every summand of it that it does not hold, each
  from the lowest-numbered rank holding that summand: every partial holder sends its summand.
  Counts are then of summands, bytes of summands times the item size.
* A ``Partial`` kept on the same mesh dim stays a summand: a rank needs only its own summand
  there.  Making a new ``Partial`` is refused (torch does that locally: nothing moves).

This counts what must arrive, not how torch routes it: a ring all-gather relays chunks through
ranks in between, an all-reduce sends reduced partial sums; the elements (summands) each rank
newly holds are exact, the senders are this module's rule.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["RankMove", "Redistribution", "bytes_words", "chunk_positions", "plan", "target_indices"]


def chunk_positions(length: int, num_chunks: int, coordinate: int) -> list[int]:
    """The positions among ``length`` that chunk ``coordinate`` of ``num_chunks`` holds, as
    ``torch.chunk`` (and ``Shard``) split: chunks of ``ceil(length / num_chunks)``, the last ones
    shorter or empty.

    >>> chunk_positions(7, 4, 0), chunk_positions(7, 4, 3), chunk_positions(2, 4, 3)
    ([0, 1], [6], [])
    """
    chunk = -(-length // num_chunks) if num_chunks else 0
    offset = min(coordinate * chunk, length)
    return list(range(offset, offset + min(chunk, length - offset)))


def target_indices(
    placements: Sequence[tuple[str, int | None]],
    shape: Sequence[int],
    mesh_shape: Sequence[int],
    coordinate: Sequence[int],
) -> tuple[tuple[int, ...], ...]:
    """The global indices along each dim the rank at ``coordinate`` holds under ``placements``
    (``(kind, dim)`` pairs; only ``"shard"`` splits).

    >>> target_indices([("shard", 0), ("shard", 1)], (4, 6), (2, 3), (1, 2))
    ((2, 3), (4, 5))
    """
    held = [list(range(n)) for n in shape]
    for mesh_dim, (kind, dim) in enumerate(placements):
        if kind == "shard" and dim is not None:
            positions = chunk_positions(len(held[dim]), mesh_shape[mesh_dim], coordinate[mesh_dim])
            held[dim] = [held[dim][i] for i in positions]
    return tuple(tuple(h) for h in held)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def bytes_words(n: int) -> str:
    """Bytes exactly, with MiB / GiB beside them from one MiB up.

    >>> bytes_words(96), bytes_words(528482304)
    ('96 B', '528482304 B = 504 MiB')
    """
    if n < 2**20:
        return f"{n} B"
    unit, size = ("GiB", n / 2**30) if n >= 2**30 else ("MiB", n / 2**20)
    return f"{n} B = {size:.4g} {unit}"


def _ranks_words(ranks: Sequence[int]) -> str:
    ranks = sorted(ranks)
    shown = ", ".join(map(str, ranks[:8])) + (f", … ({len(ranks)} ranks)" if len(ranks) > 8 else "")
    return f"rank{'' if len(ranks) == 1 else 's'} {shown}"


@dataclass(frozen=True)
class RankMove:
    """What one rank receives and sends in a redistribution: counts of elements (of summands in
    a reduction), their bytes, and the ranks on the other end.

    >>> m = RankMove(0, receives=24, sends=8, from_ranks=(1, 4), to_ranks=(2,), itemsize=4)
    >>> m.receive_bytes, m.send_bytes
    (96, 32)
    """

    rank: int
    receives: int
    sends: int
    from_ranks: tuple[int, ...]
    to_ranks: tuple[int, ...]
    itemsize: int

    @property
    def receive_bytes(self) -> int:
        """Bytes this rank receives."""
        return self.receives * self.itemsize

    @property
    def send_bytes(self) -> int:
        """Bytes this rank sends."""
        return self.sends * self.itemsize


#: An atom: per-dim index groups whose elements share holders (source and target).
_Atom = tuple[tuple[tuple[int, ...], ...], frozenset[int], frozenset[int]]


@dataclass(frozen=True)
class Redistribution:
    """What redistributing a :class:`DistributedLayout` to ``target`` moves (see the module's
    rule).  ``moves`` has one :class:`RankMove` per rank, in the mesh's rank order.

    >>> from stridewidget.layout.distributed import DistributedLayout, Placement, RankShard
    >>> ranks = tuple(RankShard(r, (r,), ((2 * r, 2 * r + 1), (0, 1, 2))) for r in range(2))
    >>> d = DistributedLayout((4, 3), "float32", (2,), None, (Placement("shard", 0),), ranks)
    >>> move = d.redistribute(["Replicate()"])
    >>> move.moves[0].receives, move.total_bytes
    (6, 48)
    >>> print(move.explain().splitlines()[1])
    rank 0 receives 6 elements (24 B) from rank 1; sends 6 elements (24 B) to rank 1
    """

    source_placements: tuple[str, ...]
    target_placements: tuple[str, ...]
    moves: tuple[RankMove, ...]
    itemsize: int
    dtype: str
    reduction: str | None
    atoms: tuple[
        tuple[tuple[tuple[int, ...], ...], tuple[tuple[int, tuple[int, ...], int], ...]], ...
    ]
    #: the source's uneven splits that the move re-splits (``DistributedLayout.uneven_words``):
    #: torch pads each rank's chunk to the largest for its collectives; not counted
    padding: tuple[str, ...] = ()

    @property
    def total_elements(self) -> int:
        """Elements (summands in a reduction) that move, over all ranks."""
        return sum(m.receives for m in self.moves)

    @property
    def total_bytes(self) -> int:
        """Bytes that move, over all ranks."""
        return self.total_elements * self.itemsize

    def move(self, rank: int) -> RankMove:
        """One rank's :class:`RankMove`."""
        for m in self.moves:
            if m.rank == rank:
                return m
        raise KeyError(f"rank {rank} is not in this mesh")

    def received(self, rank: int) -> dict[tuple[int, ...], dict[tuple[int, ...], int]]:
        """Every global element ``rank`` receives: ``{index: {summand: sender}}`` (the summand is
        the source's coordinates on its Partial mesh dims, ``()`` without Partial).  Enumerates
        elements: meant for checks and small tensors."""
        out: dict[tuple[int, ...], dict[tuple[int, ...], int]] = {}
        for groups, arrivals in self.atoms:
            got = {summand: sender for r, summand, sender in arrivals if r == rank}
            if got:
                for index in itertools.product(*groups):
                    out.setdefault(index, {}).update(got)
        return out

    def explain(self) -> str:
        """The move in plain words: per rank what it receives and sends, the total, the rule."""
        unit = "summand" if self.reduction else "element"
        head = (
            f"redistribute [{', '.join(self.source_placements)}] → "
            f"[{', '.join(self.target_placements)}]: {bytes_words(self.total_bytes)} move in all "
            f"({_plural(self.total_elements, unit)} of {self.dtype}, {self.itemsize} B each)"
        )
        lines = [head]
        for m in self.moves[:16]:
            got = f"receives {_plural(m.receives, unit)} ({bytes_words(m.receive_bytes)})"
            if m.from_ranks:
                got += f" from {_ranks_words(m.from_ranks)}"
            sent = f"sends {_plural(m.sends, unit)} ({bytes_words(m.send_bytes)})"
            if m.to_ranks:
                sent += f" to {_ranks_words(m.to_ranks)}"
            lines.append(f"rank {m.rank} {got}; {sent}")
        if len(self.moves) > 16:
            lines.append(f"… and {_plural(len(self.moves) - 16, 'more rank')}")
        if self.reduction:
            lines.append(
                f"a reduction ({self.reduction}): every partial holder sends its summand of each "
                "element a rank needs whole; counts are summands"
            )
        if self.padding:
            lines += [
                "padding excluded: the counts are elements ranks newly hold, not the padding "
                "torch's collectives send (all_gather / all_to_all pad each uneven chunk to the "
                "largest one)",
                *self.padding,
            ]
        lines.append(
            "each element a rank needs and lacks comes from its lowest-numbered holder "
            "(torch's collectives may route it through others; what each rank receives is exact)"
        )
        return "\n".join(lines)


def _groups(
    per_rank: dict[int, tuple[int, ...]], length: int
) -> list[tuple[tuple[int, ...], frozenset[int]]]:
    """Indices along one dim grouped by the set of ranks whose share contains them."""
    by_key: dict[frozenset[int], list[int]] = {}
    members: dict[int, set[int]] = {i: set() for i in range(length)}
    for rank, indices in per_rank.items():
        for i in indices:
            members[i].add(rank)
    for i in range(length):
        by_key.setdefault(frozenset(members[i]), []).append(i)
    return [(tuple(v), k) for k, v in by_key.items()]


def plan(
    shape: tuple[int, ...],
    source: dict[int, tuple[tuple[int, ...], ...]],
    target: dict[int, tuple[tuple[int, ...], ...]],
    summand_of: dict[int, tuple[int, ...]],
    kept: dict[int, tuple[tuple[int, int], ...]],
) -> tuple[list, dict[int, dict]]:
    """The moves: atoms of elements with the same source holders and target needers, and for
    each needer the summands it lacks with their senders.  ``summand_of[r]`` is rank r's source
    coordinates on the Partial mesh dims (``()`` without Partial); ``kept[r]`` the ``(position,
    value)`` pairs of it a kept Partial fixes: a needer wants only summands agreeing there.

    >>> atoms, ranks = plan((4,), {0: ((0, 1),), 1: ((2, 3),)}, {0: ((0, 1, 2, 3),), 1: ((2, 3),)},
    ...                     {0: (), 1: ()}, {0: (), 1: ()})
    >>> atoms, ranks[1]["sends"]
    ([(((2, 3),), ((0, (), 1),))], 2)
    """
    both = {("s", r): v for r, v in source.items()} | {("t", r): v for r, v in target.items()}
    per_dim = [_groups({key: idx[d] for key, idx in both.items()}, n) for d, n in enumerate(shape)]
    atoms = []
    ranks = {r: {"receives": 0, "sends": 0, "from": set(), "to": set()} for r in source}
    for combo in itertools.product(*per_dim):
        keys = frozenset.intersection(*(k for _, k in combo)) if combo else frozenset(both)
        holders = sorted(r for kind, r in keys if kind == "s")
        needers = sorted(r for kind, r in keys if kind == "t")
        if not needers or not holders:
            continue
        size = math.prod(len(g) for g, _ in combo)
        first: dict[tuple[int, ...], int] = {}
        for r in holders:  # the lowest-numbered holder of each summand
            first.setdefault(summand_of[r], r)
        arrivals = []
        for r in needers:
            mine = summand_of[r] if r in holders else None
            for summand, sender in first.items():
                if summand == mine or any(summand[p] != v for p, v in kept[r]):
                    continue
                arrivals.append((r, summand, sender))
                ranks[r]["receives"] += size
                ranks[r]["from"].add(sender)
                ranks[sender]["sends"] += size
                ranks[sender]["to"].add(r)
        if arrivals:
            atoms.append((tuple(g for g, _ in combo), tuple(arrivals)))
    return atoms, ranks
