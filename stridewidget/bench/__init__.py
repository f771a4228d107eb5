"""Benchmark harness: layout-sensitive operations timed and sized on your own hardware.

Run ``python -m stridewidget.bench --quick`` (about 20 s of CPU time: buffers capped at 16 MiB,
short timing) or without ``--quick`` for full sizes (buffers 4x the last-level cache); ``--device cuda`` on a GPU. Each variant is first checked against a reference result,
then its new memory is measured, then it is timed (``torch.utils.benchmark`` or, on CUDA with Triton,
``triton.testing.do_bench``). The first case, a large contiguous copy, sets the run's peak GB/s; every
variant reports its counted bytes moved, GB/s and fraction of that peak.

>>> from stridewidget import bench
>>> list(bench.CASES)
['ceiling', 'layout', 'expand_repeat', 'copy', 'lrn', 'sliding_window', 'contiguity', 'conv']
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ._base import BenchContext, Case, Variant
from ._cases import CASES
from ._harness import (
    SCHEMA_VERSION,
    VARIANT_KEYS,
    bytes_moved,
    find_variant,
    format_table,
    run,
    time_ratio,
)
from ._plot import plot_case, save_plots

__all__ = [
    "CASES",
    "SCHEMA_VERSION",
    "VARIANT_KEYS",
    "BenchContext",
    "Case",
    "Variant",
    "bytes_moved",
    "find_variant",
    "format_table",
    "load_results",
    "plot_case",
    "run",
    "save_plots",
    "time_ratio",
]


def load_results(path: str | Path) -> dict[str, Any]:
    """Read a results JSON written by ``python -m stridewidget.bench --json``; check its schema tag.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = Path(folder) / "r.json"
    ...     _ = path.write_text('{"schema": "stridewidget.bench/1", "cases": []}')
    ...     load_results(path)["cases"]
    []
    """
    data = json.loads(Path(path).read_text())
    if data.get("schema") != SCHEMA_VERSION:
        raise ValueError(
            f"{path} is not a stridewidget benchmark result (schema {data.get('schema')!r}, "
            f"expected {SCHEMA_VERSION!r}); write one with python -m stridewidget.bench --json"
        )
    return data
