"""A freed view is redrawn only over memory still its own, never by touching the live tensor,
and never breaks the widget (issue 22 review items 1, 2, 4, 5)."""

from __future__ import annotations

import gc
import warnings

import numpy as np
import pytest
import torch

import stridewidget as sw


@pytest.mark.parametrize("replacement", [torch.empty(0), torch.arange(3.0)])
def test_a_freed_view_never_resizes_its_bases_new_storage(replacement):
    x = torch.arange(12.0)
    widget = sw.show(v=x[6:])
    gc.collect()
    x.set_(replacement)
    pointer, nbytes = x.untyped_storage().data_ptr(), x.untyped_storage().nbytes()
    assert widget.refresh_if_changed() is True
    assert (x.untyped_storage().data_ptr(), x.untyped_storage().nbytes()) == (pointer, nbytes)
    assert widget.tensors["v"] is None
    assert widget.scene["released"] == ["v"]
    assert "no longer holds its memory" in widget.summary()


def test_a_freed_per_channel_quantized_view_is_reported_not_broken():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # quantized creation is deprecated in torch 2.13
        qc = torch.quantize_per_channel(
            torch.randn(3, 4), torch.tensor([0.1, 0.02, 0.05, 0.2]),
            torch.tensor([0, 1, -2, 3]), 1, torch.qint8,
        )  # fmt: skip
    widget = sw.show(a=qc[:, 1:3], b=qc[1])
    gc.collect()
    widget.refresh()  # raised "Setting strides is possible only on uniformly quantized tensor"
    assert widget.refresh_if_changed() is False
    assert widget.scene["released"] == ["a", "b"]
    assert "per-channel" in widget.summary()


def test_a_freed_dtype_view_is_rebuilt_over_a_shown_tensor_holding_its_storage():
    b = torch.arange(4.0)
    widget = sw.show(a=b, v=b.view(torch.int32))
    gc.collect()
    assert widget.refresh_if_changed() is False
    v = widget.tensors["v"]
    assert v is not None and v.dtype == torch.int32
    assert v.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()
    assert torch.equal(v, b.view(torch.int32))  # the oracle: torch's own dtype view


def test_a_freed_broadcast_view_stays_read_only():
    bc = np.arange(3.0)
    widget = sw.show(v=np.broadcast_to(bc, (2, 3)))
    gc.collect()
    v = widget.tensors["v"]
    assert not v.flags.writeable and np.shares_memory(v, bc)
    np.testing.assert_array_equal(v, np.broadcast_to(bc, (2, 3)))
    assert widget.refresh_if_changed() is False
    assert "read-only" in widget.scene["tensors"][0]["layout"]["notes"]


def test_a_freed_view_of_a_non_contiguous_array_is_rebuilt():
    a = np.arange(10.0)
    win = np.lib.stride_tricks.as_strided(a, (3, 3), (8, 8))
    widget = sw.show(v=win[:, ::2])
    gc.collect()
    assert widget.refresh_if_changed() is False  # raised "ndarray is not contiguous"
    v = widget.tensors["v"]
    np.testing.assert_array_equal(v, win[:, ::2])
    assert v.flags.writeable == win[:, ::2].flags.writeable and np.shares_memory(v, a)


def test_a_freed_structured_field_view_is_rebuilt():
    rec = np.zeros(4, dtype=[("a", "i4"), ("b", "f8")])
    rec["b"] = [0.5, 1.5, 2.5, 3.5]
    widget = sw.show(v=rec["b"][1:])
    gc.collect()
    np.testing.assert_array_equal(widget.tensors["v"], rec["b"][1:])
