"""The ranks' storages of a DTensor's picture (:mod:`.distributed`): each drawn rank's local
storage as the strip of an ordinary scene of its ``to_local()``, titled by its rank, its cells
keyed for hover and naming the global elements (or, under a ``Partial``, the summands) they hold;
why a rank's storage is not drawn; the ranks not drawn, in words.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..layout.distributed import DistributedLayout, RankShard, rank_runs
from ..scene.build import build_scene
from .canvas import Canvas
from .primitives import PAD, G, Group, wrapped
from .strip import draw_strip

__all__ = [
    "MAX_RANK_STRIPS",
    "Unseen",
    "holds_words",
    "not_drawn_words",
    "rank_strip",
    "rest_in_words",
    "rest_lines",
]

#: How many ranks' local storages are drawn as strips; the others are listed in words.
MAX_RANK_STRIPS = 4


def _tup(values: tuple[int, ...]) -> str:
    return "(" + ", ".join(map(str, values)) + ("," if len(values) == 1 else "") + ")"


def not_drawn_words(
    lay: DistributedLayout, rank: int, drawn: tuple[int, ...], present: bool, cut: bool = False
) -> str:
    """Why rank ``rank``'s storage has no strip, and its local layout (``present``: its local
    tensor is in this process; ``cut``: its strip was left out for the picture's height budget).

    >>> from stridewidget.layout.layout import Layout
    >>> local = Layout(shape=(1, 4), strides=(4, 1), storage_size=4)
    >>> ranks = tuple(RankShard(r, (r,), ((r,), (0, 1, 2, 3)), local) for r in range(6))
    >>> from stridewidget.layout.distributed import Placement
    >>> lay = DistributedLayout((6, 4), "float32", (6,), None, (Placement("shard", 0),), ranks)
    >>> not_drawn_words(lay, 5, (0, 1, 2, 3), True)
    "rank 5's storage is not drawn: at most 4 strips; its layout: (1, 4) local tensor, strides (4, 1), contiguous"
    """
    shard = lay.rank(rank)
    if not present:
        why = "its local tensor is not in this process"
    elif 0 in shard.shape:
        why = "it holds no element"
    elif drawn and lay.held_by(rank, drawn):
        s = "s" if len(drawn) > 1 else ""
        why = f"its elements are all in the drawn strip{s} of rank{s} {', '.join(map(str, drawn))}"
    elif cut:
        room = f"{len(drawn)} strip{'s' if len(drawn) > 1 else ''}" if drawn else "no strip"
        why = f"the picture's height budget leaves room for {room}"
    else:
        why = f"at most {MAX_RANK_STRIPS} strips"
    return f"rank {rank}'s storage is not drawn: {why}; its layout: {_layout_words(shard)}"


class Unseen(Mapping):
    """Rank -> :func:`not_drawn_words`, for the ranks not drawn as strips, worked out when asked."""

    def __init__(
        self, lay: DistributedLayout, drawn: tuple[int, ...], present: frozenset, cut=()
    ) -> None:
        self.lay, self.drawn, self.present, self.cut = lay, drawn, present, frozenset(cut)
        self.ranks = [s.rank for s in lay.ranks if s.rank not in drawn]
        self.lookup, self.said = frozenset(self.ranks), {}

    def __getitem__(self, rank: int) -> str:
        if rank not in self.lookup:
            raise KeyError(rank)
        if rank not in self.said:
            self.said[rank] = not_drawn_words(
                self.lay, rank, self.drawn, rank in self.present, rank in self.cut
            )
        return self.said[rank]

    def __contains__(self, rank: object) -> bool:
        return rank in self.lookup

    def __iter__(self):
        return iter(self.ranks)

    def __len__(self) -> int:
        return len(self.ranks)


def _layout_words(shard: RankShard) -> str:
    lay = shard.local
    if lay is None:
        return f"{_tup(shard.shape)} local tensor{{s}} (computed from the placements)".format(s="")
    flags = ", ".join(lay.flags) if lay.flags else "strided"
    return f"{_tup(lay.shape)} local tensor, strides {_tup(lay.strides)}, {flags}"


def _keyed(items: list, rank: int, holds: Mapping[int, list[str]] | None = None) -> list:
    """A rank strip's storage cells keyed for hover (``r3:5``: storage cell 5 of rank 3, linked
    to the rank's mesh box ``r3``), their hover lines naming the drawn global elements they hold
    (``holds``: storage index -> words); the strips' own storage ids (``s0`` in each) stay."""
    out, holds = [], holds or {}
    for item in items:
        if isinstance(item, Group):
            data, title = item.data, item.title
            if item.cls == "sws-scell":
                data = {**data, "key": f"r{rank}:{data['cell']}", "links": f"r{rank}"}
                words = holds.get(data["cell"])
                title = f"{title} · holds {', '.join(words)}" if words and title else title
            item = Group(item.cls, _keyed(item.children, rank, holds), data, title)
        out.append(item)
    return out


def holds_words(
    held: Mapping[tuple[int, int], list[tuple]], rank: int, name: str, summand: str = ""
) -> dict:
    """Rank ``rank``'s storage index -> the global elements it holds in words (3 at most); under
    a ``Partial`` (``summand``: its placements, ``Partial(sum)``) a summand of each.

    >>> holds_words({(1, 0): [(2, 0)]}, 1, "d", "Partial(sum)")
    {0: ['a summand of d[2, 0] (Partial(sum))']}
    """
    out = {}
    for (r, at), indices in held.items():
        if r == rank:
            words = [f"{name}[{', '.join(map(str, i))}]" for i in indices[:3]]
            words += [f"{len(indices) - 3} more"] if len(indices) > 3 else []
            if summand:
                sums = all(one == "Partial(sum)" for one in summand.split(", "))
                part = "a summand" if sums else "a partial value"  # Partial(max): no summand
                words[0] = f"{part} of {words[0]}"
                words[-1] = f"{words[-1]} ({summand})"
            out[at] = words
    return out


def rank_strip(
    shard: RankShard,
    tensor: Any,
    name: str,
    theme: str,
    width: float,
    roles: bool,
    wrap: int | None = None,
    holds: Mapping[int, list[str]] | None = None,
):
    """One rank's local storage as the strip of an ordinary scene of its local tensor."""
    scene = build_scene({f"{name} rank {shard.rank}": tensor}, wrap=wrap)
    canvas = Canvas(scene, theme, max_width=width, roles=roles)
    head = f"rank {shard.rank} at {_tup(shard.coordinate)}: local {scene['tensors'][0]['layout']['text']}"
    lines = wrapped(head, canvas.max_width - 2 * PAD, G["font_size_title"])  # a narrow column
    words = [
        canvas.text(PAD, G["font_size_title"] + k * G["line_h"], line, bold=True, anchor="start")
        for k, line in enumerate(lines)
    ]
    # the heading stands for the rank, as its mesh box does: hovered, it lights its elements
    key = {"rank": shard.rank, "key": f"r{shard.rank}"}
    canvas.items.append(Group("sws-rank-head", words, key, shard.explain()))
    top = G["line_h"] * len(lines)
    storage = {**scene["storages"][0], "label": f"rank {shard.rank}'s storage"}
    bottom = draw_strip(canvas, storage, scene["tensors"], top)
    group = Group(
        "sws-rank-strip",
        _keyed(canvas.items, shard.rank, holds),
        {"rank": shard.rank},
        shard.explain(),
    )
    return group, canvas.width, bottom, scene["tensors"][0]


def rest_in_words(shards: list[RankShard]) -> list[str]:
    """The ranks not drawn, one line per local layout (ranks of one layout together).

    >>> from stridewidget.layout.layout import Layout
    >>> local = Layout(shape=(4, 2), strides=(2, 1), storage_size=8)
    >>> shards = [RankShard(r, (r,), ((0, 1, 2, 3), (0, 1)), local) for r in range(4, 8)]
    >>> rest_in_words(shards)
    ['ranks 4–7: (4, 2) local tensors, strides (2, 1), contiguous']
    """
    kinds: dict[str, list[int]] = {}
    for shard in shards:
        lay = shard.local
        if lay is None:
            what = f"{_tup(shard.shape)} local tensor{{s}} (computed from the placements)"
        else:
            flags = ", ".join(lay.flags) if lay.flags else "strided"
            what = f"{_tup(lay.shape)} local tensor{{s}}, strides {_tup(lay.strides)}, {flags}"
        kinds.setdefault(what, []).append(shard.rank)
    return [
        f"rank{'s' if len(r) > 1 else ''} {rank_runs(r)}: {what.format(s='s' if len(r) > 1 else '')}"
        for what, r in kinds.items()
    ]


def rest_lines(lay: DistributedLayout, drawn: list[RankShard], cut: bool = False) -> list[str]:
    """The lines listing the ranks whose storages are not drawn (none: no line); ``cut``: some
    were left out for the picture's height budget."""
    rest = [s for s in lay.ranks if s not in drawn]
    budget = " within the picture's height budget" if cut else ""
    heading = (
        f"storages not drawn (at most {MAX_RANK_STRIPS} strips{budget}, chosen to hold the most "
        "distinct elements):"
    )
    return [heading, *rest_in_words(rest)] if rest else []
