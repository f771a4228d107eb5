"""The benchmark's data: what a case builder gets (:class:`BenchContext`) and returns (a
:class:`Case`, a group of :class:`Variant` objects).

A case builder gets a :class:`BenchContext` (device, quick or full sizes, the size of a buffer that
does not fit in the caches) and returns a :class:`Case`. Every :class:`Variant` carries the callable
to time, the result it must equal (``expected``, computed by a *different* reference implementation
wherever one exists), and the tensors it reads and writes, from which the harness counts bytes moved.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

__all__ = ["FLOAT", "BenchContext", "Case", "Variant"]

FLOAT = torch.float32


@dataclass(frozen=True)
class BenchContext:
    """What a case builder needs to size and place its tensors.

    >>> ctx = BenchContext(device=torch.device("cpu"), quick=True, big_bytes=1 << 20)
    >>> ctx.big_square_side()
    512
    """

    device: torch.device
    quick: bool
    big_bytes: int
    """Bytes of one bandwidth buffer: several times the last-level cache, so data comes from DRAM."""

    def big_square_side(self, itemsize: int = 4) -> int:
        """Side of a square matrix of ``itemsize``-byte elements that takes about ``big_bytes``."""
        return math.isqrt(self.big_bytes // itemsize)

    def randn(self, *shape: int) -> torch.Tensor:
        return torch.randn(*shape, dtype=FLOAT, device=self.device)


@dataclass
class Variant:
    """One way of computing a case's result.

    ``reads``: tensors the variant reads (each counted once: the distinct storage bytes it touches);
    ``writes``: preallocated outputs it writes into (``out=``); ``view_of``: tensors whose storage the
    result may share without reading it (views). A result in storage none of these own is counted as
    written once. ``rtol``/``atol`` are for ``torch.testing.assert_close`` against ``expected``.
    """

    name: str
    fn: Callable[[], Any]
    expected: Any
    reads: Sequence[torch.Tensor] = ()
    writes: Sequence[torch.Tensor] = ()
    view_of: Sequence[torch.Tensor] = ()
    rtol: float = 0.0
    atol: float = 0.0
    note: str = ""


@dataclass
class Case:
    """A named group of variants, plotted and tabled together."""

    name: str
    title: str
    metric: str  # "gbps" for bandwidth-bound cases, "time" for the rest (plots use it)
    variants: list[Variant]
    notes: list[str] = field(default_factory=list)


def _sum_tolerance(x: torch.Tensor) -> float:
    # float32 sums of n terms drift by about n * eps * mean|x| in the worst order; this bound is
    # loose enough for any summation order and still catches a wrong element set.
    return float(x.numel()) * 1e-6 * float(x.abs().mean()) + 1e-3
