"""The storage header's arithmetic is true on every surface (SVG strip, text, HTML facts), against
NumPy's and torch's own byte counts: a byte-misaligned or record-field view counts its storage's
1-byte cells, not elements of its dtype; a count of one is singular."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

import stridewidget as sw


def _misaligned() -> np.ndarray:
    return np.arange(17, dtype=np.uint8)[1:].view(np.float64)


def _record_field() -> np.ndarray:
    return np.zeros(3, dtype=[("a", "u1"), ("b", "f8"), ("c", "u1")])["b"]


def _headers(x: object) -> tuple[str, str, dict[str, str]]:
    svg = sw.render_svg(x)
    (strip,) = re.findall(r">(storage s0 ·[^<]*)<", svg)
    text = next(line for line in sw.render_text(x).splitlines() if line.startswith("storage s0"))
    facts = dict(re.findall(r"<th[^>]*>([^<]*)</th><td>([^<]*)</td>", sw.render_html(x)))
    return strip, text, facts


@pytest.mark.parametrize("make", [_misaligned, _record_field])
def test_cell_storage_counts_bytes(make) -> None:
    view = make()
    nbytes = view.base.nbytes  # NumPy's own size of the memory the view reads
    assert nbytes % 8 or view.strides[0] % 8  # its float64 elements straddle 8 B cells
    words = f"{nbytes} cells × 1 B = {nbytes} B (viewed as float64)"
    strip, text, facts = _headers(view)
    assert strip == f"storage s0 · {words} · cpu"
    assert text.startswith(f"storage s0 · {words} · cpu")
    assert facts["storage"] == words
    assert facts["touched"].endswith(f"of {nbytes} storage cells")
    assert "elements ×" not in strip


def test_aligned_storage_unchanged() -> None:
    t = torch.arange(12.0)
    strip, text, facts = _headers(t)
    nbytes = t.untyped_storage().nbytes()
    assert strip == f"storage s0 · float32 · 12 elements × 4 B = {nbytes} B · cpu"
    assert text.startswith("storage s0 · float32 · 12 elements · cpu")
    assert facts["storage"] == f"12 elements ({nbytes} B)"


@pytest.mark.parametrize("x", [torch.tensor(2.0), np.array(2.0)])
def test_one_element_is_singular(x) -> None:
    nbytes = x.untyped_storage().nbytes() if isinstance(x, torch.Tensor) else x.nbytes
    strip, text, facts = _headers(x)
    assert f"· 1 element × {nbytes} B = {nbytes} B ·" in strip
    assert "· 1 element · " in text
    assert facts["storage"] == f"1 element ({nbytes} B)"
    assert facts["touched"] == "1 of 1 storage element"
    assert "1 elements" not in strip + text + str(facts)


def test_explain_counts_one_skipped_cell_singular() -> None:
    t = torch.arange(3.0)[::2]
    read = {t.storage_offset() + i * t.stride(0) for i in range(t.numel())}  # torch's addresses
    skipped = max(read) - min(read) + 1 - len(read)
    assert skipped == 1
    text = sw.inspect(t).explain()
    assert "1 cell in between is skipped." in text and "1 cells" not in text


def test_out_of_bounds_on_a_one_cell_storage_is_singular() -> None:
    text = sw.Layout(
        shape=(2,), strides=(1,), storage_size=1, dtype="float32", itemsize=4
    ).explain()
    assert "but the storage has 1 cell." in text
