"""Every kind of input the inspector meets: what it reports, and the errors it gives."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import stridewidget as sw
from stridewidget._inspect import read_cells, storage_key

ALL_DTYPES = [
    torch.bool,
    torch.uint8,
    torch.int8,
    torch.int16,
    torch.int32,
    torch.int64,
    torch.float16,
    torch.bfloat16,
    torch.float32,
    torch.float64,
    torch.complex64,
    torch.complex128,
    torch.float8_e4m3fn,
    torch.float8_e5m2,
]


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_every_dtype(dtype):
    base = torch.arange(24).reshape(2, 3, 4).to(dtype)
    view = base.transpose(0, 2)[1:]
    lay = sw.inspect(view)
    assert lay.dtype == str(dtype).removeprefix("torch.")
    assert lay.itemsize == base.element_size()
    assert lay.strides == view.stride() and lay.offset == view.storage_offset()
    assert lay.storage_size == 24 and lay.storage_nbytes == 24 * base.element_size()
    assert lay.byte_strides == tuple(s * base.element_size() for s in view.stride())
    cells = [lay.address(i) for i in [(0, 0, 0), (2, 2, 1)]]
    stored = read_cells(view, cells)
    wide = view if dtype.is_complex else view.float()
    expected = np.array([wide[0, 0, 0].item(), wide[2, 2, 1].item()])
    np.testing.assert_array_equal(stored.astype(expected.dtype), expected)


def test_quantized_tensor_reports_codes():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # quantized creation is deprecated in torch 2.13
        q = torch.quantize_per_tensor(torch.tensor([[0.0, 0.5], [1.0, 1.5]]), 0.5, 2, torch.quint8)
    lay = sw.inspect(q.t())
    assert lay.dtype == "quint8" and lay.strides == (1, 2) and "quantized" in lay.notes
    assert read_cells(q, [0, 1, 2, 3]).tolist() == q.int_repr().reshape(-1).tolist()
    assert "integer codes" in lay.explain()


def test_meta_zero_d_and_zero_size():
    meta = torch.empty(4, 5, device="meta").t()
    lay = sw.inspect(meta)
    assert (lay.device, lay.shape, lay.strides, lay.storage_size) == ("meta", (5, 4), (1, 5), 20)
    assert read_cells(meta, [0, 1]) is None
    scalar = sw.inspect(torch.tensor(3.5))
    assert (scalar.shape, scalar.strides, scalar.numel, scalar.span, scalar.touched) == (
        (),
        (),
        1,
        (0, 0),
        1,
    )
    assert scalar.address(()) == 0 and scalar.is_contiguous
    empty = sw.inspect(torch.empty(3, 0, 2)[1:])
    assert (empty.numel, empty.span, empty.touched, empty.has_overlap) == (0, None, 0, False)
    assert "Empty view" in empty.explain()


def test_expand_sliding_windows_conj_neg_parameter_grad():
    x = torch.arange(6.0, requires_grad=True)
    expanded = sw.inspect(x.expand(3, 6))
    assert expanded.strides == (0, 1) and expanded.has_overlap and expanded.touched == 6
    assert "Overlapping" in expanded.explain()
    windows = sw.inspect(x.unfold(0, 3, 1))
    assert windows.strides == (1, 1) and windows.touched == 6 and windows.numel == 12
    z = torch.randn(4, dtype=torch.complex64)
    assert "conj" in sw.inspect(z.conj()).notes
    assert "neg" in sw.inspect(torch._neg_view(torch.randn(3))).notes
    assert read_cells(z.conj(), [1])[0] == z[1].item()  # the stored (unconjugated) value
    p = torch.nn.Parameter(torch.randn(3, 4))
    assert sw.inspect(p).shape == (3, 4) and sw.same_storage(p, p.detach())


def test_numpy_inputs():
    a = np.arange(24, dtype=np.float64).reshape(4, 6)
    rev = sw.inspect(a[::-1, ::2])
    assert rev.strides == (-6, 2) and rev.offset == 18 and rev.storage_size == 24
    assert rev.span == (0, 22) and rev.touched == 12
    ro = np.broadcast_to(a[0], (5, 6))
    lay = sw.inspect(ro)
    assert lay.strides == (0, 1) and "read-only" in lay.notes and lay.has_overlap
    assert sw.same_storage(a, a[1:, 2:]) and sw.same_storage(a, ro)
    assert not sw.same_storage(a, a.copy())
    raw = np.zeros(16, dtype=np.uint8)
    misaligned = raw[1:13].view(np.int32)  # int32 elements starting 1 byte into the buffer
    lay = sw.inspect(misaligned)
    assert (lay.unit, lay.element_cells, lay.strides, lay.offset) == (1, 4, (4,), 1)
    assert lay.span == (1, 12) and lay.touched == 12 and not lay.has_overlap
    odd = np.lib.stride_tricks.as_strided(raw, shape=(3,), strides=(3,)).view(np.uint8)
    assert sw.inspect(odd).strides == (3,)
    overlapping = np.lib.stride_tricks.as_strided(raw[:12].view(np.int32), shape=(3,), strides=(2,))
    lay = sw.inspect(overlapping)
    # three 4-byte elements, 2 bytes apart, cover bytes 0..7: four cells of 2 bytes
    assert lay.unit == 2 and lay.has_overlap and lay.touched == 4 and lay.span == (0, 3)
    assert read_cells(a[::-1], [0, 23]).tolist() == [0.0, 23.0]
    with pytest.raises(sw.LayoutError, match="object array"):
        sw.inspect(np.array([None, 1], dtype=object))


def test_torch_numpy_cross_library_identity():
    t = torch.arange(12.0)
    a = t.numpy()[3:]
    assert sw.same_storage(t, a) and sw.overlap(t[3:4], a) and not sw.overlap(t[:3], a)
    back = torch.from_numpy(a)
    assert sw.same_storage(back, t) and storage_key(t) == storage_key(t[5:])
    assert sw.same_storage(t, t.view(torch.int32)) and sw.overlap(t.view(torch.int32)[1:2], t[1:2])


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: torch.randn(3, 3).to_sparse(), r"sparse COO tensor.*t\.indices\(\)"),
        (lambda: torch.randn(3, 3).to_sparse_csr(), r"sparse CSR tensor.*crow_indices"),
        (lambda: torch.randn(3, 3).to_sparse_csc(), r"sparse CSC tensor.*ccol_indices"),
        (
            lambda: torch.nested.nested_tensor([torch.randn(2), torch.randn(3)]),
            r"nested tensor.*unbind",
        ),
        (lambda: torch.randn(3).to_mkldnn(), r"MKL-DNN"),
    ],
)
def test_tensors_without_strides_get_clear_errors(make, message):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # beta/prototype warnings from torch itself
        x = make()
    with pytest.raises(sw.LayoutError, match=message):
        sw.inspect(x)


def test_jagged_nested_tensor():
    jagged = torch.nested.nested_tensor([torch.randn(2, 3), torch.randn(4, 3)], layout=torch.jagged)
    with pytest.raises(sw.LayoutError, match="nested tensor"):
        sw.inspect(jagged)


@pytest.mark.parametrize(
    "obj, hint",
    [
        ([1, 2, 3], "torch.as_tensor"),
        (3.5, "torch.as_tensor"),
        ("abc", "takes a torch.Tensor or numpy.ndarray, got builtins.str"),
        (memoryview(b"abc"), "got builtins.memoryview"),
        (object(), "got builtins.object"),
        (None, "got builtins.NoneType"),
    ],
)
def test_non_tensors_get_type_errors(obj, hint):
    with pytest.raises(TypeError, match=hint.replace(".", r"\.")) as error:
        sw.inspect(obj)
    assert "Traceback" not in str(error.value)


def test_inspector_never_writes_copies_or_syncs():
    x = torch.arange(20.0).reshape(4, 5)
    views = [x, x.t(), x[:, ::2], x.expand(2, 4, 5), x.unfold(1, 3, 1)]
    before = x.clone()
    version = x._version
    pointer = x.untyped_storage().data_ptr()
    for v in views:
        lay = sw.inspect(v)
        lay.explain()
        str(lay)
        sw.overlap(v, x[1:])
        sw.same_storage(v, x)
        read_cells(v, [0, 3])
    sw.as_strided(x, (2, 2), (5, 1))
    assert x._version == version and torch.equal(x, before)
    assert x.untyped_storage().data_ptr() == pointer


def test_inspect_is_independent_of_size():
    """Cost is O(ndim): a 10^12-element meta tensor needs no values and no enumeration."""
    huge = torch.empty(10**6, 10**6, device="meta")[::3, 5:]
    lay = sw.inspect(huge)
    assert lay.numel == 333334 * 999995
    assert (lay.touched, lay.touched_exact) == (lay.numel, True)
    assert not lay.has_overlap and not lay.is_dense


def test_str_and_explain_say_the_facts():
    x = torch.arange(12.0).reshape(3, 4)
    assert str(sw.inspect(x.t())) == "float32 (4,3):(1,4) +0 · storage 12 · F-contiguous"
    text = sw.inspect(x[:, 1:]).explain()
    assert "dim 0 (size 3) has stride 4 where a contiguous layout has 3" in text
    assert ".view(-1) fails" in text and "copies 9 elements (36 bytes)" in text
    assert "Gapped: the view reads 9 of the 11 cells" in text
    assert (
        ".view(-1) works: every element is one step of 2" in sw.inspect(x.view(-1)[::2]).explain()
    )
    assert "returns the tensor itself" in sw.inspect(x).explain()
    overlapping = sw.inspect(x.view(-1).unfold(0, 3, 2)).explain()
    assert "are the same cell" in overlapping and "unsafe" in overlapping
