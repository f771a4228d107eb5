"""Nothing a display does may cost more than the cells it shows (issue 38: drawing
``torch.zeros(1).expand(n, n)`` gathered the edge rows one dim at a time, 6·n elements: 84 s and
+23 GB at n = 10^9).  Oracle: torch's own profiler, counting every byte torch allocates while the
whole display bundle is made."""

from __future__ import annotations

import pytest
import torch
from torch.profiler import ProfilerActivity, profile

import stridewidget as sw


@pytest.mark.parametrize(
    "make",
    [
        lambda n: torch.zeros(1).expand(n, n),
        lambda n: torch.arange(3.0).reshape(3, 1, 1).expand(3, n, n),
        lambda n: torch.zeros(1, dtype=torch.complex64).expand(n, n).conj(),
    ],
    ids=["expand-2d", "expand-3d", "expand-conj"],
)
def test_a_display_allocates_bytes_for_the_shown_cells_not_for_the_tensor(make):
    n = 10**6
    x = make(n)
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        widget = sw.show(x=x)
        widget._repr_mimebundle_()
    allocated = sum(max(e.cpu_memory_usage, 0) for e in prof.events())
    widget.close()
    # a few shown cells: kilobytes; one edge row of the tensor alone would be 6·n·4 B = 24 MB
    assert allocated < 1_000_000, allocated
