"""Every kind of input the inspector meets: what it reports, and the errors it gives."""

from __future__ import annotations

import gc
import warnings

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import stridewidget as sw
from stridewidget import cli
from stridewidget.adapters.inspect import read_cells, storage_key
from stridewidget.scene.build import build_scene

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
    assert read_cells(z.conj(), [1])[0] == z.conj()[1].item()  # the value read through the view
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


# --- issue 12: adversarial inputs -----------------------------------------------------------------


def _covered_bytes(a: np.ndarray) -> list[int]:
    """Every byte offset (from the array's data pointer) that ``a``'s elements cover, brute force."""
    covered = []
    for index in np.ndindex(*a.shape):
        start = sum(i * s for i, s in zip(index, a.strides))
        covered.extend(range(start, start + a.itemsize))
    return covered


@st.composite
def misaligned_arrays(draw):
    """NumPy views whose byte offset or strides need not be multiples of the item size."""
    itemsize = draw(st.sampled_from([2, 4, 8]))
    dtype = {2: np.int16, 4: np.int32, 8: np.float64}[itemsize]
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(0, 4), min_size=ndim, max_size=ndim)))
    strides = tuple(draw(st.lists(st.integers(-20, 20), min_size=ndim, max_size=ndim)))
    offset = draw(st.integers(0, 40))
    buffer = bytearray(draw(st.integers(64, 160)))
    try:
        return np.ndarray(shape, dtype, buffer=buffer, offset=offset, strides=strides)
    except ValueError:  # leaves the buffer
        assume(False)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(misaligned_arrays())
def test_misaligned_numpy_flags_match_numpy_and_brute_force(a):
    lay = sw.inspect(a)
    assert lay.is_contiguous == a.flags.c_contiguous
    assert lay.is_f_contiguous == a.flags.f_contiguous
    covered = _covered_bytes(a)
    distinct = set(covered)
    assert lay.has_overlap == (len(distinct) < len(covered))
    dense = len(distinct) == len(covered) and (
        not covered or max(covered) - min(covered) + 1 == len(covered)
    )
    assert lay.is_dense == dense
    assert lay.touched * lay.unit == len(distinct)
    if a.flags.c_contiguous and a.size:
        assert lay.explain().startswith("Contiguous")


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(misaligned_arrays(), misaligned_arrays())
def test_misaligned_numpy_overlap_matches_shares_memory(a, b):
    # Two views of one buffer: re-point b at a's buffer with b's own offset and strides.
    buffer = a.base if isinstance(a.base, bytearray) else a.base.obj
    offset = b.__array_interface__["data"][0] - np.frombuffer(b.base, np.uint8).ctypes.data
    try:
        b = np.ndarray(b.shape, b.dtype, buffer=buffer, offset=offset, strides=b.strides)
    except ValueError:
        assume(False)
    assert sw.overlap(a, b) == np.shares_memory(a, b, max_work=None)


def test_misaligned_numpy_examples_from_the_issue(tmp_path):
    shifted = np.ndarray((4,), np.int32, buffer=bytearray(17), offset=1)
    lay = sw.inspect(shifted)
    assert lay.is_contiguous and "contiguous" in str(lay) and "Gapped" not in lay.explain()
    path = tmp_path / "data.bin"
    path.write_bytes(bytes(64))
    mapped = np.memmap(path, np.int16, "r", offset=3, shape=(10,))
    assert sw.inspect(mapped).is_contiguous == mapped.flags.c_contiguous
    assert sw.inspect(np.frombuffer(bytes(64), np.int32, offset=1, count=5)).is_contiguous
    one_byte_apart = np.ndarray((2,), np.int32, buffer=bytearray(16), strides=(1,))
    lay = sw.inspect(one_byte_apart)
    assert lay.has_overlap and not lay.is_contiguous and not lay.is_dense
    assert "returns the tensor itself" not in lay.explain() and "Overlapping" in lay.explain()


def test_conj_and_neg_views_show_the_values_they_read():
    conj = torch.tensor([1 + 2j]).conj()
    assert "1.-2.j" in sw.render_text(c=conj)
    neg = torch._neg_view(torch.tensor([1.5, -2.0]))
    text = sw.render_text(n=neg)
    assert "-1.5" in text and " 2." in text
    # a view and its conjugate over one storage: one strip of what memory holds, and what each
    # tensor reads there
    z = torch.tensor([1 + 2j, 3 - 1j])
    scene = build_scene({"z": z, "zc": z.conj()})
    assert [storage["cells"]["text"] for storage in scene["storages"]] == [["1.+2.j", "3.-1.j"]]
    plain, conjugated = scene["tensors"]
    assert plain["reads"] is None and conjugated["reads"]["text"] == ["1.-2.j", "3.+1.j"]


def test_numpy_view_of_a_tensor_follows_the_base_chain_into_the_storage():
    t = torch.arange(10.0)
    lay = sw.inspect(t.numpy()[2:7:2])
    reference = sw.inspect(t[2:7:2])
    assert (lay.offset, lay.storage_size, lay.strides) == (
        reference.offset,
        reference.storage_size,
        reference.strides,
    )
    assert lay.storage_address == t.untyped_storage().data_ptr()


def test_broadcast_arrays_inspect_silently():
    outputs = np.broadcast_arrays(np.zeros((3, 1)), np.zeros(4))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lay = sw.inspect(outputs[0])
    with pytest.warns(FutureWarning):  # NumPy's warning is still there for the user's own read
        writeable = outputs[0].flags.writeable
    assert lay.strides == (1, 0) and ("read-only" in lay.notes) == (not writeable)


def _quantized(per_channel: bool) -> torch.Tensor:
    values = torch.tensor([[0.0, 0.5, 1.0], [1.5, -1.0, 2.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # quantized creation is deprecated in torch 2.13
        if per_channel:
            return torch.quantize_per_channel(
                values, torch.tensor([0.5, 0.25]), torch.tensor([0, 1]), 0, torch.qint8
            )
        return torch.quantize_per_tensor(values, 0.5, 2, torch.quint8)


@pytest.mark.parametrize("per_channel", [False, True], ids=["per-tensor", "per-channel"])
def test_quantized_tensors_draw_their_codes_everywhere(per_channel, tmp_path):
    q = _quantized(per_channel)
    codes = q.int_repr().reshape(-1).tolist()
    # torch itself refuses strided views of a per-channel tensor
    for view in (q,) if per_channel else (q, q.t(), q[1:]):
        scene = build_scene({"q": view})
        shown = scene["storages"][0]["cells"]
        assert shown["text"] == [str(codes[i]) for i in shown["index"]]
        assert "quantized" in scene["tensors"][0]["layout"]["notes"]
        assert "<svg" in sw.render_svg(view) and "quint8" in sw.render_text(view).replace(
            "qint8", "quint8"
        )
        assert "<" in sw.render_html(view)
    # the view dies at once; refreshing rebuilds it from its quantized base
    widget = sw.show(q=q if per_channel else q[1:])
    gc.collect()
    widget.refresh()
    shown = widget.scene["storages"][0]["cells"]
    assert shown["text"] == [str(codes[i]) for i in shown["index"]]
    board = sw.playground(q)
    board_cells = board.scene["storages"][0]["cells"]
    assert board_cells["text"] == [str(codes[i]) for i in board_cells["index"]]
    assert board.error.startswith("as_strided: torch makes no strided views") == per_channel
    assert cli.main([_QUANTIZED_EXPR[per_channel], "--text"]) == 0


_QUANTIZED_EXPR = {
    False: "torch.quantize_per_tensor(torch.ones(2, 3), 0.5, 2, torch.quint8).t()",
    True: "torch.quantize_per_channel(torch.ones(2, 3), torch.tensor([0.5, 0.25]), "
    "torch.tensor([0, 1]), 0, torch.qint8)",
}

VALUELESS_DTYPES = [
    getattr(torch, name)
    for name in (
        "float4_e2m1fn_x2",
        "bits1x8",
        "bits2x4",
        "bits4x2",
        "bits8",
        "bits16",
        *(f"int{n}" for n in range(1, 8)),
        *(f"uint{n}" for n in range(1, 8)),
    )
    if hasattr(torch, name)
]


@pytest.mark.parametrize("dtype", VALUELESS_DTYPES, ids=str)
def test_dtypes_torch_cannot_index_are_drawn_without_values_saying_why(dtype):
    x = torch.empty(6, dtype=dtype)
    with pytest.raises(NotImplementedError):
        x[torch.tensor([0])]  # the reason: no indexing kernel for this dtype
    view = x[1::2]
    lay = sw.inspect(view)
    assert "unreadable-dtype" in lay.notes and "No values shown" in lay.explain()
    assert read_cells(view, [0, 1]) is None
    _assert_drawn_without_values(view, "unreadable-dtype")


def _assert_drawn_without_values(x, note):
    """Every renderer draws the layout; the scene they share says there are no values and why."""
    scene = build_scene({"x": x})
    assert not scene["storages"][0]["has_values"]
    assert note in scene["tensors"][0]["layout"]["notes"]
    lay = sw.inspect(x)
    assert scene["tensors"][0]["layout"]["strides"] == list(lay.strides)
    assert "<svg" in sw.render_svg(x) and "<" in sw.render_html(x)
    assert "no values" in sw.render_text(x)
    assert sw.show(x=x).scene["tensors"][0]["layout"]["notes"] == list(lay.notes)


def test_complex32_shows_its_values():
    z = torch.tensor([1 + 2j, 3 - 4j], dtype=torch.complex32)
    assert read_cells(z, [0, 1]).tolist() == [1 + 2j, 3 - 4j]
    assert "3.-4.j" in sw.render_text(z)


def test_fake_tensor_is_noted_and_drawn_without_values():
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        fake = torch.empty(3, 4).t()
    lay = sw.inspect(fake)
    assert "fake" in lay.notes and "Fake tensor" in lay.explain()
    assert (lay.shape, lay.strides) == ((4, 3), (1, 4))
    assert read_cells(fake, [0]) is None
    _assert_drawn_without_values(fake, "fake")


def test_wrapper_subclass_is_inspected_by_its_metadata():
    from torch.testing._internal.two_tensor import TwoTensor

    pair = TwoTensor(torch.randn(3, 4), torch.randn(3, 4)).t()
    lay = sw.inspect(pair)
    assert (lay.shape, lay.strides, lay.offset) == (
        tuple(pair.shape),
        pair.stride(),
        pair.storage_offset(),
    )
    assert "wrapper-subclass" in lay.notes and read_cells(pair, [0]) is None
    assert "inner tensors" in lay.explain()
    _assert_drawn_without_values(pair, "wrapper-subclass")


def test_tensor_inside_functionalize_is_inspected_by_its_metadata():
    seen = []

    def body(t):
        seen.append(sw.inspect(t[1:]))
        seen.append(sw.render_text(t[1:]))
        return t + 1

    torch.func.functionalize(body)(torch.randn(4))
    lay, text = seen
    assert (lay.shape, lay.offset, lay.storage_size) == ((3,), 1, 4)
    assert "functional" in lay.notes and "functionalize" in lay.explain() and "no values" in text


def _object_without_module():
    """An instance whose class has no ``__module__`` (built here: pytest's doctest collection
    would trip over such a class at module level)."""

    class NoModuleMeta(type):
        def __getattribute__(cls, name):
            if name == "__module__":
                raise AttributeError(name)
            return super().__getattribute__(name)

    return NoModuleMeta("_NoModule", (), {})()


def test_errors_for_odd_arguments_are_clear():
    assert sw.Layout((4,), (1,)).address(np.int64(3)) == 3
    with pytest.raises(TypeError, match="index must be ints"):
        sw.Layout((4,), (1,)).address(1.5)
    with pytest.raises(TypeError, match=r"takes a torch\.Tensor or numpy\.ndarray, got _NoModule"):
        sw.inspect(_object_without_module())
    with pytest.raises(TypeError, match=r"got builtins\.list.*torch\.as_tensor"):
        sw.show(a=[1, 2])
    assert (
        sw.OverlapWarning
        is __import__(
            "stridewidget.adapters.as_strided", fromlist=["OverlapWarning"]
        ).OverlapWarning
    )
    assert "OverlapWarning" in sw.__all__


@pytest.mark.parametrize(
    "args, error, message",
    [
        (((2.7,), (1.9,), 1.5), TypeError, r"size entry must be an int, got 2\.7"),
        ((("34"), ("11")), TypeError, r"size must be a sequence of ints.*'34'"),
        (((3,), ("abc",)), TypeError, r"stride entry must be an int, got 'abc'"),
        (((1,), (2**70,)), sw.LayoutError, "does not fit in a 64-bit int"),
        (((2,), (1,), 0.5), TypeError, r"storage_offset must be an int, got 0\.5"),
        ((5, (1,)), TypeError, r"size must be a sequence of ints"),
    ],
)
def test_as_strided_refuses_non_integer_arguments_like_torch(args, error, message):
    x = torch.arange(10.0)
    with pytest.raises(error, match=message):
        sw.as_strided(x, *args)
    if error is TypeError:  # torch refuses them too
        with pytest.raises((TypeError, RuntimeError)):
            torch.as_strided(x, *args)


@pytest.mark.parametrize("dtype", [torch.quint4x2, torch.quint2x4], ids=str)
def test_packed_quantized_dtypes_are_refused_not_called_out_of_bounds(dtype):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # quantized creation is deprecated in torch 2.13
        packed = torch.quantize_per_tensor(torch.randn(12), 0.25, 3, dtype)
    assert packed.untyped_storage().nbytes() < packed.numel()  # several codes per byte
    with pytest.raises(sw.LayoutError, match=r"packs \d codes into each byte.*int_repr"):
        sw.inspect(packed)
