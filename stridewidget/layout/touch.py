"""Touch counts: for each shown storage cell, how many logical indices of a whole view read it.

The scene shows, under every storage cell, a count of the logical elements that read it (0, 1, or
more for broadcasts and windows).  The counts must be exact for the cells shown, whatever the size of
the view, and cheap: the scene is built for every display.  Five methods, tried in this order:

1. Dense views (no gap, no cell twice): 1 inside the span, 0 outside.  O(cells shown).
2. Views of at most ``_ENUMERATE_LIMIT`` element cells: enumerate every address, sort, and look the
   shown cells up.  O(numel log numel) time and O(numel) memory, both bounded by the limit.
3. *Nested* strides (each exceeds the reach of all the smaller ones: every slice, transpose or
   permute of a contiguous tensor): greedy division finds a cell's only preimage.
   O(ndim * cells shown).
4. Overlapping views over a span of at most ``_HISTOGRAM_SPAN_LIMIT`` cells: the histogram of every
   address, built dim by dim with cumulative sums.  O(ndim * span) time and memory.
5. Anything else: a memoised counting search per cell (:class:`_PreimageCounter`), sharing a work
   budget of ``_COUNT_WORK_LIMIT`` loop steps per view; cells left when it runs out get ``None``
   ("unknown"), which the renderers show as such.

Methods 2-4 compute in int64, so they only run on spans inside ``±_INT64_SAFE``; method 5 uses
Python ints.  Worst case: the work budget caps method 5 (≈ 50 ms); methods 2 and 4 are capped by
their size limits (a few MiB and ≈ 24 MiB).
"""

from __future__ import annotations

import math

from ..limits import TOUCH_COUNT_WORK_LIMIT as _COUNT_WORK_LIMIT
from ..limits import TOUCH_ENUMERATE_LIMIT as _ENUMERATE_LIMIT
from ..limits import TOUCH_HISTOGRAM_SPAN_LIMIT as _HISTOGRAM_SPAN_LIMIT
from .ints import INT64_SAFE as _INT64_SAFE
from .layout import Layout


def touch_counts(layout: Layout, cells: list[int]) -> list[int | None]:
    """For each storage cell, how many logical indices of the whole tensor read it."""
    if not cells:
        return []
    if layout.span is None:
        return [0] * len(cells)
    lo, hi = layout.span
    if layout.is_dense and layout.element_cells == 1:
        # a dense view covers its span with no gap and no cell twice
        return [1 if lo <= c <= hi else 0 for c in cells]
    if lo > -_INT64_SAFE and hi < _INT64_SAFE:
        if layout.numel * layout.element_cells <= _ENUMERATE_LIMIT:
            return _enumerated_counts(layout, cells)
        if layout.element_cells == 1:
            nested = _nested_counts(layout, cells)
            if nested is not None:
                return nested
        if hi - lo + 1 <= _HISTOGRAM_SPAN_LIMIT:
            return _histogram_counts(layout, cells)
    counter = _PreimageCounter(layout)
    return [counter.cell(c) if lo <= c <= hi else 0 for c in cells]


def _enumerated_counts(layout: Layout, cells: list[int]) -> list[int | None]:
    import numpy as np

    addresses = np.full(1, layout.offset, dtype=np.int64)
    for n, s in zip(layout.shape, layout.strides):
        addresses = (addresses[:, None] + np.arange(n, dtype=np.int64) * s).reshape(-1)
    if layout.element_cells > 1:
        addresses = (addresses[:, None] + np.arange(layout.element_cells, dtype=np.int64)).reshape(
            -1
        )
    addresses.sort()
    wanted = np.asarray(cells, dtype=np.int64)
    counts = np.searchsorted(addresses, wanted, side="right") - np.searchsorted(
        addresses, wanted, side="left"
    )
    return [int(c) for c in counts]


def _nested_counts(layout: Layout, cells: list[int]) -> list[int | None] | None:
    """Exact counts, vectorised, when the strides are *nested*: each stride exceeds the reach of
    all smaller ones (``|s_k| > sum(|s_j| * (n_j - 1))`` over smaller strides), as in every
    slice/transpose/permute of a contiguous tensor.  Then a cell has at most one preimage per
    stride-0 combination and greedy division finds it.  ``None`` when the strides are not nested.
    """
    import numpy as np

    dims = sorted(
        ((abs(s), n - 1) for n, s in zip(layout.shape, layout.strides) if n > 1 and s != 0),
        reverse=True,
    )
    reach = 0
    for stride, bound in reversed(dims):
        if stride <= reach:
            return None
        reach += stride * bound
    multiplier = math.prod(n for n, s in zip(layout.shape, layout.strides) if s == 0 and n > 1)
    remainder = np.asarray(cells, dtype=np.int64) - layout.span[0]
    hit = (remainder >= 0) & (remainder <= reach)
    for stride, bound in dims:
        step = np.clip(remainder // stride, 0, bound)
        remainder = remainder - step * stride
    hit &= remainder == 0
    return [multiplier if h else 0 for h in hit.tolist()]


def _histogram_counts(layout: Layout, cells: list[int]) -> list[int | None]:
    """Exact counts from the histogram of all addresses over the span, built dim by dim.

    Adding a dim of size ``n`` and stride ``s`` turns the histogram ``h`` into
    ``h'[k] = sum(h[k - i*s] for i < n)``: a window sum along each residue class mod ``s``, which
    cumulative sums give in O(span).  So the cost is O(ndim * span), whatever the element count —
    the right tool for big overlapping views (sliding windows) over a modest span.
    """
    import numpy as np

    dims = [(abs(s), n) for n, s in zip(layout.shape, layout.strides) if n > 1 and s != 0]
    if layout.element_cells > 1:
        dims.append((1, layout.element_cells))
    multiplier = math.prod(n for n, s in zip(layout.shape, layout.strides) if s == 0 and n > 1)
    histogram = np.ones(1, dtype=np.int64)
    for stride, n in dims:
        length = histogram.size + stride * (n - 1)
        rows = -(-length // stride)
        padded = np.zeros(rows * stride, dtype=np.int64)
        padded[: histogram.size] = histogram
        running = np.cumsum(padded.reshape(rows, stride), axis=0)
        window = running.copy()
        window[n:] -= running[:-n]
        histogram = window.reshape(-1)[:length]
    offsets = np.asarray(cells, dtype=np.int64) - layout.span[0]
    inside = (offsets >= 0) & (offsets < histogram.size)
    counts = np.zeros(offsets.size, dtype=np.int64)
    counts[inside] = histogram[offsets[inside]] * multiplier
    return [int(c) for c in counts]


class _PreimageCounter:
    """Counts the logical indices whose element covers a storage cell, exactly, for big views.

    The count is the number of solutions of a bounded knapsack (``sum(i_k * |s_k|) == target``,
    ``0 <= i_k < n_k``), searched from the largest stride down with only the ``i_k`` that keep the
    rest reachable, and memoised per ``(level, remainder)`` — the counting twin of
    :func:`stridewidget.layout.overlap.bounded_knapsack`.  Stride-0 dims multiply the count.  For views
    whose span is too big for :func:`_histogram_counts`.  The work budget is shared by all cells of
    one tensor; cells left when it runs out get ``None`` (unknown).
    """

    def __init__(self, layout: Layout) -> None:
        self.width = layout.element_cells
        self.multiplier = math.prod(n for n, s in zip(layout.shape, layout.strides) if s == 0)
        # Negative strides walk backwards from the span's low end: flip them.
        self.base = layout.span[0] if layout.span is not None else layout.offset
        dims = sorted(
            ((abs(s), n - 1) for n, s in zip(layout.shape, layout.strides) if n > 1 and s != 0),
            reverse=True,
        )
        self.strides = [s for s, _ in dims]
        self.bounds = [u for _, u in dims]
        self.reach = [0] * (len(dims) + 1)
        for k in range(len(dims) - 1, -1, -1):
            self.reach[k] = self.reach[k + 1] + self.strides[k] * self.bounds[k]
        self.memo: dict[tuple[int, int], int] = {}
        self.work = 0

    def cell(self, cell: int) -> int | None:
        total = 0
        for shift in range(self.width):
            try:
                total += self._count(0, cell - shift - self.base)
            except _TooMuchWork:
                return None
        return total * self.multiplier

    def _count(self, level: int, remainder: int) -> int:
        if remainder < 0 or remainder > self.reach[level]:
            return 0
        if level == len(self.strides):
            return 1 if remainder == 0 else 0
        stride, bound = self.strides[level], self.bounds[level]
        if level == len(self.strides) - 1:
            return 1 if remainder % stride == 0 and remainder // stride <= bound else 0
        key = (level, remainder)
        if key in self.memo:
            return self.memo[key]
        rest = self.reach[level + 1]
        high = min(bound, remainder // stride)
        low = max(0, -((rest - remainder) // stride))
        self.work += 1 + max(high - low + 1, 0)
        if self.work > _COUNT_WORK_LIMIT:
            raise _TooMuchWork
        count = sum(self._count(level + 1, remainder - stride * i) for i in range(low, high + 1))
        self.memo[key] = count
        return count


class _TooMuchWork(Exception):
    pass
