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
