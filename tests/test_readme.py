"""The README's Python examples run, in order, as one session: they are documentation that can fail."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_python_blocks_run():
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)
    assert len(blocks) >= 2, "the README should show the inspector and the widget in Python"
    namespace: dict = {}
    for number, block in enumerate(blocks):
        code = compile(block, f"README.md python block {number}", "exec")
        exec(code, namespace)


def _brute_touched(shape: tuple[int, ...], strides: tuple[int, ...]) -> int:
    import numpy as np

    addresses = np.zeros(1, dtype=np.int64)
    for n, s in zip(shape, strides):
        addresses = (addresses[:, None] + np.arange(n, dtype=np.int64) * s).reshape(-1)
    seen = np.zeros(int(addresses.max()) + 1, dtype=bool)
    seen[addresses] = True
    return int(seen.sum())


def test_touched_is_exact_where_the_readme_says():
    # "exact whenever it has at most 10⁶ run starts": its own example (12·10⁶ overlapping
    # elements, 3 run starts), a 9·10⁶ one, and one past the limit (1.1·10⁶ run starts)
    import torch

    import stridewidget as sw
    from stridewidget.layout.layout import TOUCHED_ENUMERATION_LIMIT

    text = README.read_text(encoding="utf-8")
    assert TOUCHED_ENUMERATION_LIMIT == 10**6 and "at most 10⁶ run starts" in text
    assert "shape `(4_000_000, 3)` with strides `(2, 3)`" in text
    for shape, strides, exact in [
        ((4_000_000, 3), (2, 3), True),
        ((3_000_000, 3), (2, 3), True),
        ((1100, 1000, 2), (7, 5, 3), False),
    ]:
        span = sum((n - 1) * s for n, s in zip(shape, strides)) + 1
        layout = sw.inspect(torch.empty(span, device="meta").as_strided(shape, strides))
        truth = _brute_touched(shape, strides)
        assert layout.has_overlap and layout.touched_exact == exact, shape
        assert layout.touched == truth if exact else layout.touched >= truth, shape
