"""Which of a storage strip's cells go on which row: the cells the scene shows and its gap
markers flowed into rows of the strip's width (or wrapped at the storage's natural row width),
at most ``max_strip_rows`` rows (the rest one marker), and, for a picture over its height
budget, each marker set into a row beside cells instead of a row of its own
(:func:`inline_gaps`).  :mod:`.strip` draws the rows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .labels import gap_words, group_digits
from .primitives import LIMITS, G, text_width

__all__ = ["gap_label", "inline_gaps", "rows_of_cells", "strip_rows"]


def gap_label(segment: Mapping[str, Any], room: float) -> str:
    """The elision marker's text: the longest of its forms that fits in ``room`` px, each with the
    storage range it stands for but the last (the count and one word, the range on hover).

    >>> gap = {"start": 12, "stop": 106, "in_span": True, "read": 94}
    >>> [gap_label(gap, room) for room in (300, 200, 140, 60)]
    ['⋯ 94 read cells not drawn [12 … 105]', '⋯ 94 read, storage[12…105]', '⋯ 94 read [12…105]', '⋯ 94 read']
    """
    count = group_digits(segment["stop"] - segment["start"])
    first, last = group_digits(segment["start"]), group_digits(segment["stop"] - 1)
    short = f"⋯ {count} {_gap_short(segment)}"
    forms = (
        f"⋯ {gap_words(segment)} [{first} … {last}]",
        f"{short}, storage[{first}…{last}]",
        f"{short} [{first}…{last}]",
    )
    return next((f for f in forms if text_width(f, G["font_size"]) + 10 <= room), short)


def _gap_short(segment: Mapping[str, Any]) -> str:
    """The gap's one word when the full label does not fit: what it holds, never less true."""
    read, length = segment.get("read"), segment["stop"] - segment["start"]
    if read is None:
        return "not shown" if segment["in_span"] else "unread"
    if read == 0:
        return "unread"
    return "read" if read == length else f"· {group_digits(read)} read"


def strip_rows(
    storage: Mapping[str, Any],
    members: Sequence[Mapping[str, Any]],
    cell_w: float,
    room: float,
    ends: set[int] = frozenset(),  # type: ignore[assignment]
    inline: bool = False,
    most_rows: int | None = None,
) -> tuple[list[list[dict[str, Any]]], int | None]:
    """The strip's rows of items (cells and elision markers, each with its ``x`` and ``w``) and
    the wrap: ``None`` for one line, or a line that flows on (it has elisions) without columns.

    Shown cells with no elision that do not fit one line wrap at the storage's natural row width
    (the scene's ``wrap``, or its largest divisor that fits, so that columns keep their meaning; when
    that divisor would leave a quarter of the width unused, as many cells as fit).  At most
    ``most_rows`` rows (default ``max_strip_rows``; :func:`_capped`); with ``inline``, markers
    beside cells (:func:`inline_gaps`).
    """
    segments = storage["segments"]
    has_gaps = any(segment["kind"] == "gap" for segment in segments)
    cells = sum(len(range(s["start"], s["stop"])) for s in segments if s["kind"] != "gap")
    max_cells = LIMITS["max_strip_cells"]
    natural = max(1, int(storage["wrap"]))
    if has_gaps or (cells <= min(natural, max_cells) and cells * cell_w <= room):
        rows: list[list[dict[str, Any]]] = [[]]
        x = count = 0.0
        for item in _strip_items(segments, cell_w):
            if rows[-1] and (
                x + item["w"] > room or (item["kind"] == "cell" and count >= max_cells)
            ):
                rows.append([])
                x = count = 0
            item["x"] = x  # each item is new here, in one row: placed where it is
            rows[-1].append(item)
            x += item["w"]
            count += item["kind"] == "cell"
        rows = _capped([row for row in rows if row], members, cell_w, room, ends, most_rows)
        return _ranged(inline_gaps(rows, members, room, ends) if inline else rows, room), None
    limit = max(1, min(int(room // cell_w), LIMITS["max_wrap"]))
    wrap = natural if natural <= limit else max(d for d in range(1, limit + 1) if natural % d == 0)
    if natural > limit and wrap < 0.75 * limit:  # a small divisor of a long natural row would
        wrap = limit  # waste the width: rows of what fits (each row's label says where it starts)
    rows = []
    position = 0
    for segment in segments:  # cells only: no marker
        for cell in range(segment["start"], segment["stop"]):
            col = cell % wrap
            x = col * cell_w
            if not rows or col == 0 or x <= rows[-1][-1]["x"]:
                rows.append([])
            rows[-1].append({"kind": "cell", "cell": cell, "i": position, "w": cell_w, "x": x})
            position += 1
    rows = _capped(rows, members, cell_w, room, ends, most_rows)
    return (inline_gaps(rows, members, room, ends, columns=True) if inline else rows), wrap


def _strip_items(segments: list[dict[str, Any]], cell_w: float) -> list[dict[str, Any]]:
    """The strip's cells and elision markers in storage order, each with its ``w`` (a cell's
    ``i``: its position among the shown cells)."""
    items: list[dict[str, Any]] = []
    position = 0
    for segment in segments:
        if segment["kind"] == "gap":
            label = gap_label(segment, 2 * cell_w)
            width = max(2 * cell_w, text_width(label, G["font_size"]) + 10)
            items.append({"kind": "gap", "segment": segment, "label": label, "w": width})
            continue
        for cell in range(segment["start"], segment["stop"]):
            items.append({"kind": "cell", "cell": cell, "i": position, "w": cell_w})
            position += 1
    return items


def _ranged(rows: list[list[dict[str, Any]]], room: float) -> list[list[dict[str, Any]]]:
    """``rows`` with each gap marker given the px its row has to spare (first markers first),
    so that it says its storage range where that fits (:func:`gap_label`); the row's later items
    move right.  No row gets longer than ``room``, so the strip keeps its height.

    >>> gap = {"kind": "gap", "w": 60.0, "x": 0.0, "label": "⋯ 94 read",
    ...        "segment": {"kind": "gap", "start": 12, "stop": 106, "in_span": True, "read": 94}}
    >>> cell = {"kind": "cell", "cell": 106, "i": 1, "w": 30.0, "x": 60.0}
    >>> [(it["label"], round(it["w"])) if it["kind"] == "gap" else round(it["x"])
    ...  for it in _ranged([[gap, cell]], 250.0)[0]]
    [('⋯ 94 read, storage[12…105]', 193), 193]
    """
    out = []
    for row in rows:
        row = [dict(item) for item in row]
        for k, item in enumerate(row):
            spare = room - _end(row)
            if item["kind"] != "gap" or spare < 1:
                continue
            label = gap_label(item["segment"], item["w"] + spare)
            if label == item["label"]:
                continue
            grow = max(0.0, text_width(label, G["font_size"]) + 10 - item["w"])
            item.update(label=label, w=item["w"] + grow)
            for later in row[k + 1 :]:
                later["x"] += grow
        out.append(row)
    return out


def _capped(
    rows: list[list[dict[str, Any]]],
    members: Sequence[Mapping[str, Any]],
    cell_w: float,
    room: float,
    ends: set[int],
    most_rows: int | None = None,
) -> list[list[dict[str, Any]]]:
    """At most ``most_rows`` (default ``max_strip_rows``) rows where it can: the first and last rows and every row a
    stride arrow starts or ends in are kept, then the first rows while there is room; each run
    of two or more rows left out becomes one elision marker that says what it holds, read cells
    counted (issue 36: a long strip took most of a picture's height while the logical grids show
    the same cells)."""
    limit = LIMITS["max_strip_rows"] if most_rows is None else most_rows
    if len(rows) <= limit:
        return rows
    keep = {0, len(rows) - 1} | {
        r for r, row in enumerate(rows) if not ends.isdisjoint([it.get("cell") for it in row])
    }
    for r in range(len(rows)):
        if _drawn_rows(keep | {r}, len(rows)) > limit:
            break
        keep.add(r)
    capped: list[list[dict[str, Any]]] = []
    run: list[list[dict[str, Any]]] = []
    for r, row in enumerate([*rows, None]):
        if row is not None and r not in keep:
            run.append(row)
            continue
        if len(run) == 1:
            capped.append(run[0])
        elif run:
            segment = _dropped([it for left_out in run for it in left_out], members)
            label = gap_label(segment, room)
            width = min(room, max(2 * cell_w, text_width(label, G["font_size"]) + 10))
            capped.append(
                [{"kind": "gap", "segment": segment, "label": label, "w": width, "x": 0.0}]
            )
        run = []
        if row is not None:
            capped.append(row)
    return capped


def _drawn_rows(keep: set[int], total: int) -> int:
    """How many rows a strip of ``total`` rows draws when it keeps ``keep``: a run of one row
    left out is drawn anyway (its marker would take a row too), a longer run is one marker."""
    count, run = 0, 0
    for r in range(total + 1):
        if r < total and r not in keep:
            run += 1
            continue
        count += run if run == 1 else min(run, 1)
        count += r < total
        run = 0
    return count


def _dropped(items: list[dict[str, Any]], members: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The gap segment of strip items left out: their storage range and how many of its cells
    the tensors read (None when a gap among them was not counted)."""
    first, last = items[0], items[-1]
    start = first["cell"] if first["kind"] == "cell" else first["segment"]["start"]
    stop = last["cell"] + 1 if last["kind"] == "cell" else last["segment"]["stop"]
    touches = [t["touch"] for t in members]
    alone = touches[0] if len(touches) == 1 else None  # one tensor: its count is the counts
    total, known = 0, True
    for it in items:
        if it["kind"] == "cell":  # read by a tensor; unknown (a count too costly to take: None)
            counts = [alone[it["i"]]] if alone is not None else [t[it["i"]] for t in touches]
            if any(counts):  # None is no read
                total += 1
            elif None in counts:
                known = False
        else:
            count = it["segment"].get("read")
            if count is None:
                known = False
            else:
                total += count
    read = total if known else None
    return {"kind": "gap", "start": start, "stop": stop, "in_span": True, "read": read}


def rows_of_cells(rows: list[list[dict[str, Any]]]) -> dict[int, int]:
    return {item["cell"]: r for r, row in enumerate(rows) for item in row if item["kind"] == "cell"}


def inline_gaps(
    rows: list[list[dict[str, Any]]],
    members: Sequence[Mapping[str, Any]],
    room: float,
    ends: set[int],
    columns: bool = False,
) -> list[list[dict[str, Any]]]:
    """``rows`` with each row that holds one marker only set into a neighbouring row instead:
    at the head of the next row when that row has room for it (not where the rows have
    ``columns``: a cell keeps its column), else at the end of the previous row, whose last cells
    (never an arrow's end) join the marker, counted in it, until it fits.  A picture over its height budget: a strip of
    ``n`` runs of cells takes ``n`` rows, not ``2n - 1``.

    >>> cell = lambda c: {"kind": "cell", "cell": c, "i": c, "w": 10.0}
    >>> gap = {"kind": "gap", "w": 20.0, "label": "⋯",
    ...        "segment": {"kind": "gap", "start": 4, "stop": 9, "in_span": True, "read": 5}}
    >>> rows = [[{**cell(c), "x": 10.0 * c} for c in range(4)], [{**gap, "x": 0.0}],
    ...         [{**cell(c), "x": 10.0 * (c - 9)} for c in range(9, 11)]]
    >>> [[(it["kind"], it["x"]) for it in row] for row in inline_gaps(rows, [], 40.0, set())]
    [[('cell', 0.0), ('cell', 10.0), ('cell', 20.0), ('cell', 30.0)], [('gap', 0.0), ('cell', 20.0), ('cell', 30.0)]]
    """
    out: list[list[dict[str, Any]]] = []
    rows = [list(row) for row in rows]
    for r, row in enumerate(rows):
        if not (len(row) == 1 and row[0]["kind"] == "gap"):
            out.append(row)
            continue
        marker = row[0]
        after = rows[r + 1] if r + 1 < len(rows) else None
        fits = after and after[0]["kind"] == "cell" and _end(after) + marker["w"] <= room
        if fits and not columns:
            rows[r + 1] = [{**marker, "x": 0.0}] + [
                {**it, "x": it["x"] + marker["w"]} for it in after
            ]
            continue
        before = out[-1] if out and out[-1][0]["kind"] == "cell" else None
        joined = _joined(before, marker, members, room, ends) if before else None
        if joined is None:
            out.append(row)
        else:
            out[-1] = joined
    return out


def _end(row: list[dict[str, Any]]) -> float:
    return row[-1]["x"] + row[-1]["w"]


def _joined(
    row: list[dict[str, Any]],
    marker: dict[str, Any],
    members: Sequence[Mapping[str, Any]],
    room: float,
    ends: set[int],
) -> list[dict[str, Any]] | None:
    """``row`` with ``marker`` at its end, its last cells (no arrow's end) in the marker until
    it fits in ``room``; None when it cannot."""
    kept, taken = list(row), []
    while True:
        items = [*taken, marker]
        segment = _dropped(items, members) if taken else marker["segment"]
        label = gap_label(segment, room - _end(kept)) if taken and kept else marker["label"]
        width = max(marker["w"], text_width(label, G["font_size"]) + 10)
        if kept and _end(kept) + width <= room:
            gap = {"kind": "gap", "segment": segment, "label": label, "w": width}
            return [*kept, {**gap, "x": _end(kept)}]
        last = kept[-1] if len(kept) > 1 else None
        if last is None or last["kind"] != "cell" or last["cell"] in ends:
            return None
        taken.insert(0, kept.pop())
