"""How many cells of a long storage gap some tensors read, counted without touching each cell.

A gap of the storage strip too long to count cell by cell (``limits.GAP_COUNT_LIMIT``) is
counted here when every tensor that meets it reads it as a few **arithmetic runs** (first cell,
step, last cell): ``x[::1000]`` is one run, ``x.view(1000, 1000)[:, :3]`` three (one per inner
column), a dense layout one of step 1.  The cells the tensors read together are the union of
their runs, counted by inclusion-exclusion: two runs meet in a run (the Chinese remainder
theorem: ``x = a mod p`` and ``x = b mod q`` hold together on a run of step ``lcm(p, q)``, or
nowhere), so every intersection is one more run, and a subset whose runs do not meet is not
extended (its supersets do not meet either).  Hand-written: no library here counts a union of
arithmetic progressions.

Cost: a layout is cut into at most ``_MOST_RUNS`` runs; the count intersects two runs at most
``_MOST_MEETS`` times (about a microsecond each), else it gives up (``None``: the picture says
"not shown"): a gap costs at most a few milliseconds, however many runs meet it.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import gcd, prod
from typing import Any

__all__ = ["read_count"]

#: Runs one layout is cut into at most (the product of its sizes beside its longest dim).
_MOST_RUNS = 64
#: Intersections of two runs the inclusion-exclusion of one gap tries at most (about 1 µs each).
_MOST_MEETS = 2_000

Run = tuple[int, int, int]  # first cell, step (>= 1), last cell (first + k * step)


def read_count(layouts: Sequence[Any], start: int, stop: int) -> int | None:
    """How many of storage cells ``[start, stop)`` one of ``layouts`` reads (one cell per
    element each), or ``None`` when their cells there are not a few arithmetic runs.

    >>> import torch, stridewidget as sw
    >>> x = torch.arange(10**6.0)
    >>> a, b = sw.inspect(x[::1000]), sw.inspect(x[3::777])
    >>> read_count([a, b], 2001, 997000) == len(set(range(3000, 997000, 1000)) | set(range(2334, 997000, 777)))
    True
    """
    runs: list[Run] = []
    for layout in layouts:
        found = _runs_of(layout)
        if found is None:
            return None
        runs += [r for r in (_clipped(run, start, stop - 1) for run in found) if r is not None]
    return _union_count(runs)


def _runs_of(layout: Any) -> list[Run] | None:
    """The cells ``layout`` reads as arithmetic runs (at most ``_MOST_RUNS``), or ``None``."""
    if layout.span is None:
        return []
    if layout.element_cells != 1:
        return None
    dims = sorted(
        ((n, s) for n, s in zip(layout.shape, layout.strides) if n > 1 and s != 0),
        key=lambda d: -abs(d[1]),
    )  # stride 0 reads its cells again: the same cells
    merged: list[tuple[int, int]] = []
    for n, s in dims:  # a dim that steps over the next one's cells exactly: one dim
        if merged and merged[-1][1] == s * n:
            merged[-1] = (merged[-1][0] * n, s)
        else:
            merged.append((n, s))
    if not merged:
        return [(layout.offset, 1, layout.offset)]
    longest = max(range(len(merged)), key=lambda k: merged[k][0])
    count, stride = merged[longest]
    others = merged[:longest] + merged[longest + 1 :]
    if prod(n for n, _ in others) > _MOST_RUNS:
        return None
    bases = [layout.offset]
    for n, s in others:
        bases = [b + i * s for b in bases for i in range(n)]
    reach = (count - 1) * stride
    return [(min(b, b + reach), abs(stride), max(b, b + reach)) for b in bases]


def _clipped(run: Run, low: int, high: int) -> Run | None:
    """The cells of ``run`` in ``[low, high]``."""
    first, step, last = run
    if first < low:
        first += -((first - low) // step) * step
    if last > high:
        last -= ((last - high + step - 1) // step) * step
    return (first, step, last) if first <= last else None


def _meet(a: Run, b: Run) -> Run | None:
    """The cells two runs share: one run, or ``None``."""
    low, high = max(a[0], b[0]), min(a[2], b[2])
    if low > high:
        return None
    (f1, d1, _), (f2, d2, _) = a, b
    g = gcd(d1, d2)
    if (f2 - f1) % g:
        return None
    period = d1 // g * d2
    # x = f1 + d1 * k with d1 * k = f2 - f1 (mod d2)
    k = (f2 - f1) // g * pow(d1 // g, -1, d2 // g) % (d2 // g) if d2 // g > 1 else 0
    x = f1 + d1 * k
    first = low + (x - low) % period
    if first > high:
        return None
    return (first, period, first + (high - first) // period * period)


def _merged(runs: list[Run]) -> list[Run]:
    """``runs`` with the runs of one step and one residue joined where they meet or touch
    (the rows of one layout: ``x.as_strided((900, 64), (1000, 1000))``'s 64 runs are one)."""
    classes: dict[tuple[int, int], list[Run]] = {}
    for run in runs:
        classes.setdefault((run[1], run[0] % run[1]), []).append(run)
    merged: list[Run] = []
    for (step, _), group in classes.items():
        group.sort()
        first, _, last = group[0]
        for f, _, end in group[1:]:
            if f > last + step:
                merged.append((first, step, last))
                first, last = f, end
            else:
                last = max(last, end)
        merged.append((first, step, last))
    return merged


def _union_count(runs: list[Run]) -> int | None:
    """How many cells the runs hold together (inclusion-exclusion), or ``None`` past
    ``_MOST_MEETS`` intersections tried."""
    runs = sorted(_merged(runs))
    total, tried = 0, 0
    stack: list[tuple[Run, int, int]] = [(run, k, 1) for k, run in enumerate(runs)]
    while stack:
        run, last, sign = stack.pop()
        total += sign * ((run[2] - run[0]) // run[1] + 1)
        for k in range(last + 1, len(runs)):
            if runs[k][0] > run[2]:  # sorted by first cell: none after it meets this run
                break
            tried += 1
            if tried > _MOST_MEETS:
                return None
            both = _meet(run, runs[k])
            if both is not None:
                stack.append((both, k, -sign))
    return total
