"""``refresh()`` and the post-cell check keep the picture identical while nothing changed, and
catch every real change, including writes no version counter sees (issue 22 §1)."""

from __future__ import annotations

import copy
import gc
import warnings

import numpy as np
import torch
from oracle_cells import parse_number

import stridewidget as sw
from stridewidget.adapters.inspect import read_cells


def _stored(t, cells):
    """The oracle: what memory holds, through a plain tensor over the same storage."""
    plain = torch.tensor([], dtype=t.dtype).set_(t.untyped_storage())
    return [plain[c].item() for c in cells]


def test_a_freed_conj_or_neg_view_is_redrawn_with_its_lazy_bit():
    b = torch.tensor([1 + 2j, 3 - 4j, 5 + 0j])
    widget = sw.show(v=b.conj(), n=torch._neg_view(b)[1:])
    gc.collect()  # both views die: only b keeps their memory
    before = copy.deepcopy(widget.scene)
    assert widget.refresh_if_changed() is False
    widget.refresh()
    assert widget.scene == before
    v, n = widget.tensors["v"], widget.tensors["n"]
    assert v.is_conj() and n.is_neg() and not n.is_conj()
    conj_view, neg_view = widget.scene["tensors"]
    assert [parse_number(text) for text in conj_view["reads"]["text"]] == (b.conj()).tolist()
    assert [parse_number(text) for text in neg_view["reads"]["text"][1:]] == (-b[1:]).tolist()
    assert conj_view["reads"]["notes"] and neg_view["reads"]["notes"]


def test_a_freed_quantized_view_keeps_its_quantizer():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # quantized creation is deprecated in torch 2.13
        q = torch.quantize_per_tensor(torch.tensor([0.5, -1.0, 2.0, 1.5]), 0.5, 3, torch.quint8)
    widget = sw.show(q1=q[1:])
    gc.collect()
    before = copy.deepcopy(widget.scene)
    widget.refresh()
    assert widget.scene == before
    (cells,) = [s["cells"]["index"] for s in widget.scene["storages"]]
    texts = widget.scene["tensors"][0]["reads"]["text"]
    assert texts[0] is None  # q[1:] never reads cell 0: no read of it is drawn
    read = [parse_number(text) for text in texts[1:]]
    assert cells == [0, 1, 2, 3] and read == [q[i].item() for i in range(1, 4)]


def _drawn(widget):
    storage = widget.scene["storages"][0]
    return storage["cells"]["index"], storage["cells"]["text"]


def test_writes_no_version_counter_sees_are_caught():
    t = torch.zeros(4)
    widget = sw.show(t=t, tt=t[::2])
    version = t._version
    t.numpy()[1] = 5.0  # through NumPy: no version bump
    assert t._version == version
    assert widget.refresh_if_changed() is True
    cells, texts = _drawn(widget)
    assert texts == [f"{v:g}." for v in _stored(t, cells)]
    t.data[2] = 7.0  # through .data: no version bump either
    assert t._version == version
    assert widget.refresh_if_changed() is True
    assert _drawn(widget)[1][2] == "7."
    assert widget.refresh_if_changed() is False


def test_parameter_data_swap_is_caught():
    p = torch.nn.Parameter(torch.zeros(3))
    widget = sw.show(p=p)
    p.data = torch.arange(3.0)
    assert widget.refresh_if_changed() is True
    cells, texts = _drawn(widget)
    assert texts == [f"{v:g}." for v in _stored(p, cells)]
    p.data = torch.arange(3.0)  # same values, other memory: redrawn, and the same picture
    before = copy.deepcopy(widget.scene)
    assert widget.refresh_if_changed() is True
    assert widget.scene == before


def test_numpy_writes_are_caught_and_an_unchanged_array_is_not_redrawn():
    a = np.zeros(6, dtype=np.float32)
    widget = sw.show(a=a)
    assert widget.refresh_if_changed() is False
    a[3] = 2.5
    assert widget.refresh_if_changed() is True
    assert read_cells(a, [3]).tolist() == [2.5] and _drawn(widget)[1][3] == "2.5"
