"""A geometric lint of a laid-out picture's stride arrows (issue 36 "Arrows").

Over the primitives :func:`stridewidget.render.picture.draw` returns, it counts

* ``overlaps``: pairs of arrows (``Path`` items with ``arrow=True``) whose segments run on top of
  each other: parallel segments closer than ``NEAR`` px over a shared stretch longer than
  ``SHARED`` px (a cubic is flattened into short segments first);
* ``label_overlaps``: pairs of arrow label boxes that overlap;
* ``crossings``: (arrow, text) pairs where a segment of the arrow (or of the dotted line that
  leads to its label) runs through the text's box (estimated from x, baseline y, size, anchor and
  ``len(text) * char_em * size``, as :func:`stridewidget.render.primitives.text_width` does);
* ``strays``: arrow labels whose box is farther than ``LABEL_NEAR`` px from every line of their
  own arrow (the ``sws-arrow`` group of the label's tensor and dims): a label set beside another
  arrow's line names the wrong arrow.

Each finding is a short string naming what it found, so a failing test says where.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

from stridewidget.render.primitives import G, Group, Path, Rect, Text, text_width

NEAR = 2.0  # px: parallel segments closer than this run on top of each other
SHARED = 2.0  # px: ... when they share a stretch longer than this
INSET = 1.0  # px: a text box shrunk by this much on every side (touching is not crossing)
LABEL_NEAR = 2.5  # px: a label's box at most this far from a line of its own arrow

Segment = tuple[float, float, float, float]


@dataclass
class Findings:
    overlaps: list[str] = field(default_factory=list)
    label_overlaps: list[str] = field(default_factory=list)
    crossings: list[str] = field(default_factory=list)
    strays: list[str] = field(default_factory=list)

    def counts(self) -> tuple[int, int, int]:
        return len(self.overlaps), len(self.label_overlaps), len(self.crossings)


def _groups(items, cls: str):
    """Every group of class ``cls`` among ``items`` (nested groups opened)."""
    for item in items:
        if isinstance(item, Group):
            if item.cls == cls:
                yield item
            yield from _groups(item.children, cls)


def _box_distance(box, segs: list[Segment]) -> float:
    """The least distance from ``box`` to points of ``segs`` (sampled every 0.5 px)."""
    x0, y0, x1, y1 = box
    best = math.inf
    for ax, ay, bx, by in segs:
        n = max(1, int(math.hypot(bx - ax, by - ay) / 0.5))
        for k in range(n + 1):
            px, py = ax + (bx - ax) * k / n, ay + (by - ay) * k / n
            best = min(best, math.hypot(max(x0 - px, 0, px - x1), max(y0 - py, 0, py - y1)))
    return best


def strays(picture) -> list[str]:
    """The arrow labels farther than ``LABEL_NEAR`` px from every line of their own arrow."""
    lines: dict[tuple, list[Segment]] = {}
    for group in _groups(picture.items, "sws-arrow"):
        key = (group.data.get("tensor"), group.data.get("dim"))
        for child in group.children:
            if isinstance(child, Path):
                lines.setdefault(key, []).extend(segments(child))
    found = []
    for group in _groups(picture.items, "sws-arrow-label"):
        box = next(c for c in group.children if isinstance(c, Rect))
        text = next(c for c in group.children if isinstance(c, Text)).text
        key = (group.data.get("tensor"), group.data.get("dim"))
        near = _box_distance((box.x, box.y, box.x + box.w, box.y + box.h), lines.get(key, []))
        if near > LABEL_NEAR:
            found.append(f"label {text!r} {near:.0f} px from its arrow")
    return found


def _walk(items, arrow_name=None):
    """(item, the arrow group's name it sits in or None, the group cls) for every leaf."""
    for item in items:
        if isinstance(item, Group):
            name = arrow_name
            if item.cls == "sws-arrow":
                name = f"{item.data.get('tensor')}:d{item.data.get('dim')}"
            yield from ((leaf, n, cls or item.cls) for leaf, n, cls in _walk(item.children, name))
        else:
            yield item, arrow_name, None


def _cubic(p0, p1, p2, p3, n=24):
    out = []
    for i in range(n + 1):
        t = i / n
        u = 1 - t
        out.append(
            tuple(
                u**3 * a + 3 * u * u * t * b + 3 * u * t * t * c + t**3 * d
                for a, b, c, d in zip(p0, p1, p2, p3)
            )
        )
    return out


def segments(path: Path) -> list[Segment]:
    """The path as straight segments (cubics flattened)."""
    out: list[Segment] = []
    here = None
    for op, *v in path.commands:
        if op == "M":
            here = (v[0], v[1])
        elif op == "L":
            out.append((*here, v[0], v[1]))
            here = (v[0], v[1])
        elif op == "C":
            points = _cubic(here, (v[0], v[1]), (v[2], v[3]), (v[4], v[5]))
            out.extend((*a, *b) for a, b in itertools.pairwise(points))
            here = (v[4], v[5])
    return [s for s in out if math.hypot(s[2] - s[0], s[3] - s[1]) > 1e-9]


def _on_top(s: Segment, t: Segment) -> bool:
    """Whether segments ``s`` and ``t`` run on top of each other (parallel, close, shared)."""
    dx, dy = s[2] - s[0], s[3] - s[1]
    length = math.hypot(dx, dy)
    ex, ey = t[2] - t[0], t[3] - t[1]
    other = math.hypot(ex, ey)
    if abs(dx * ey - dy * ex) / (length * other) > 0.2:  # more than ~11° apart
        return False
    ux, uy = dx / length, dy / length
    # t's ends in s's frame: along s, and off its line
    along = [(t[0] - s[0]) * ux + (t[1] - s[1]) * uy, (t[2] - s[0]) * ux + (t[3] - s[1]) * uy]
    off = [(t[0] - s[0]) * -uy + (t[1] - s[1]) * ux, (t[2] - s[0]) * -uy + (t[3] - s[1]) * ux]
    lo, hi = max(0.0, min(along)), min(length, max(along))
    if hi - lo <= min(SHARED, 0.5 * min(length, other)):
        return False
    # the distance at both ends of the shared stretch
    a0, a1 = along
    for a in (lo, hi):
        f = 0.5 if a1 == a0 else (a - a0) / (a1 - a0)
        if abs(off[0] + f * (off[1] - off[0])) >= NEAR:
            return False
    return True


def _text_box(text: Text) -> tuple[float, float, float, float]:
    w = text_width(text.text, text.size)
    x = text.x - (w if text.anchor == "end" else w / 2 if text.anchor == "middle" else 0)
    return (
        x + INSET,
        text.y - 0.8 * text.size + INSET,
        x + w - INSET,
        text.y + 0.2 * text.size - INSET,
    )


def _crosses(s: Segment, box) -> bool:
    """Whether segment ``s`` meets the inside of ``box`` (Liang–Barsky clipping)."""
    x0, y0, x1, y1 = box
    dx, dy = s[2] - s[0], s[3] - s[1]
    t0, t1 = 0.0, 1.0
    for p, q in ((-dx, s[0] - x0), (dx, x1 - s[0]), (-dy, s[1] - y0), (dy, y1 - s[1])):
        if p == 0:
            if q < 0:
                return False
            continue
        r = q / p
        if p < 0:
            t0 = max(t0, r)
        else:
            t1 = min(t1, r)
        if t0 > t1:
            return False
    return t1 - t0 > 1e-6


def _bbox(segs: list[Segment]):
    xs = [v for s in segs for v in (s[0], s[2])]
    ys = [v for s in segs for v in (s[1], s[3])]
    return min(xs), min(ys), max(xs), max(ys)


def _boxes_meet(a, b, margin=0.0) -> bool:
    return (
        a[0] < b[2] + margin
        and b[0] < a[2] + margin
        and a[1] < b[3] + margin
        and b[1] < a[3] + margin
    )


def lint(picture) -> Findings:
    """The arrow findings of a laid-out picture."""
    arrows: list[tuple[str, list[Segment]]] = []
    texts: list[tuple[str, Text]] = []
    label_boxes: list[tuple[str, tuple]] = []
    leaders: list[bool] = []
    for item, owner, cls in _walk(picture.items):
        if isinstance(item, Path) and (item.arrow or owner):  # an arrow, or its label's leader
            arrows.append((owner or "?", segments(item)))
            leaders.append(not item.arrow)
        elif isinstance(item, Text):
            texts.append((owner or "", item))
        elif isinstance(item, Rect) and cls == "sws-arrow-label":
            label_boxes.append((owner or "", (item.x, item.y, item.x + item.w, item.y + item.h)))
    found = Findings()
    boxes = [_bbox(segs) for _, segs in arrows]
    for i, (name_a, segs_a) in enumerate(arrows):
        for j in range(i + 1, len(arrows)):
            if not _boxes_meet(boxes[i], boxes[j], NEAR):
                continue
            name_b, segs_b = arrows[j]
            if name_a == name_b and (leaders[i] or leaders[j]):
                continue  # an arrow and the line leading to its label
            if any(_on_top(s, t) or _on_top(t, s) for s in segs_a for t in segs_b):
                found.overlaps.append(f"{name_a} on {name_b}")
    for i, (_, a) in enumerate(label_boxes):
        for _, b in label_boxes[i + 1 :]:
            if _boxes_meet(a, b, -0.5):
                found.label_overlaps.append(f"label {a} on {b}")
    for name, segs in arrows:
        for _, text in texts:
            box = _text_box(text)
            if box[0] >= box[2] or box[1] >= box[3]:
                continue
            if any(_crosses(s, box) for s in segs):
                found.crossings.append(f"{name} through {text.text!r}")
    found.strays = strays(picture)
    return found


__all__ = ["Findings", "G", "lint", "segments", "strays"]
