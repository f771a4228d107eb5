"""Extra memory a callable allocates, measured the same way on every device.

Everywhere: :class:`stridewidget.tricks.PeakMemory`, a ``TorchDispatchMode`` that sees every ATen op,
counts each new storage an op returns and its release, and so gives the peak of new bytes alive at
once and what is still alive at the end. What it cannot see: scratch memory a single kernel
allocates internally (a BLAS or oneDNN workspace).

On CUDA the caching allocator's counters (``torch.cuda.memory_allocated`` /
``max_memory_allocated``) are read as well; they do include that scratch memory.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from ..tricks import PeakMemory
from ._timing import synchronize


@dataclass(frozen=True)
class MemoryStats:
    """New storage bytes of one call.

    ``peak_bytes``: most new bytes alive at once during the call; ``retained_bytes``: still alive
    when it returned (usually the result); ``cuda_peak_bytes``: the CUDA allocator's peak above
    its starting point (``None`` off CUDA).

    >>> MemoryStats(peak_bytes=8, retained_bytes=8, cuda_peak_bytes=None).peak_bytes
    8
    """

    peak_bytes: int
    retained_bytes: int
    cuda_peak_bytes: int | None


def measure_memory(fn: Callable[[], Any], device: torch.device) -> tuple[MemoryStats, Any]:
    """Run ``fn()`` once and return its :class:`MemoryStats` and its result.

    >>> x = torch.ones(64, 64)
    >>> measure_memory(lambda: x.expand(8, 64, 64), torch.device("cpu"))[0]
    MemoryStats(peak_bytes=0, retained_bytes=0, cuda_peak_bytes=None)
    >>> measure_memory(lambda: x.repeat(8, 1, 1), torch.device("cpu"))[0].peak_bytes == 8 * x.nbytes
    True
    """
    on_cuda = device.type == "cuda"
    if on_cuda:
        synchronize(device)
        torch.cuda.reset_peak_memory_stats(device)
        cuda_start = torch.cuda.memory_allocated(device)
    with PeakMemory() as counter:
        result = fn()
    synchronize(device)
    cuda_peak = torch.cuda.max_memory_allocated(device) - cuda_start if on_cuda else None
    stats = MemoryStats(
        peak_bytes=counter.peak, retained_bytes=counter.live, cuda_peak_bytes=cuda_peak
    )
    return stats, result
