"""A hostile review (2026-12-04): a CPU tensor of a packed or raw-bits dtype (uint4, int4, uint1,
bits8, float4_e2m1fn_x2) was said to have "no values (meta tensor or layout only)".  It is
neither: torch itself reads no number from its elements (the oracle: ``.item()`` refuses).
"""

from __future__ import annotations

import pytest
import torch

import stridewidget as sw

PACKED = [torch.uint4, torch.int4, torch.uint1, torch.bits8, torch.float4_e2m1fn_x2]


@pytest.mark.parametrize("dtype", PACKED, ids=str)
def test_a_packed_dtype_says_why_it_has_no_values(dtype):
    x = torch.zeros(4, dtype=torch.uint8).view(dtype)
    with pytest.raises(Exception):  # noqa: B017 - torch's own answer: no number for it
        x[0].item()
    name = str(dtype).removeprefix("torch.")
    for text in (sw.render_text(x=x), sw.render_svg(x=x)):
        assert f"torch reads no number from one {name} element" in text
        assert "meta tensor" not in text


def test_a_meta_tensor_still_says_meta():
    text = sw.render_text(x=torch.empty(3, device="meta"))
    assert "no values (meta tensor or layout only)" in text


def _header(svg: str) -> str:
    import re

    return re.search(r"storage s0 · [^<]*", svg).group(0)


def test_a_storage_header_says_every_byte_of_its_storage():
    """Review: a float32 view of 10 bytes said "2 elements × 4 B = 8 B"; its storage holds 10
    (torch's ``untyped_storage().nbytes()``, NumPy's base ``nbytes``: the oracles)."""
    import numpy as np

    u = torch.arange(10, dtype=torch.uint8)
    f = u[:8].view(torch.float32)
    a = np.arange(10, dtype=np.uint8)
    g = a[:8].view(np.float32)
    assert np.shares_memory(a, g)
    for view, nbytes in ((f, f.untyped_storage().nbytes()), (g, a.nbytes)):
        assert nbytes == 10
        header = _header(sw.render_svg(v=view))
        assert f"2 elements × 4 B = 8 B, and 2 B after them: {nbytes} B" in header
    whole = torch.zeros(3)
    assert _header(sw.render_svg(v=whole)).startswith(
        f"storage s0 · float32 · 3 elements × 4 B = {whole.untyped_storage().nbytes()} B ·"
    )
