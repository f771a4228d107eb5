"""Fuzz layer: random inputs × every renderer.  Each input gets a picture or a clear refusal.

Every example draws a torch tensor or a NumPy array of any dtype the library can make, with a
random shape, strides and offset (NumPy: byte strides and offsets that need not be multiples of
the item size), sometimes made lazy (conj/neg), expanded, quantized, fake, meta or zero-size.
Each one goes through ``inspect``, ``build_scene``, the text, SVG and HTML renderers and the
widget's synced model state.  The only exceptions allowed are ``sw.LayoutError`` and
``TypeError``, with a one-line message; every picture's flags must equal the library's own
(``Tensor.is_contiguous``, NumPy's ``flags``) and brute-force enumeration.

Bounded: a fixed number of small examples (about 20-40 s on one core).
"""

from __future__ import annotations

import itertools
import json
import warnings

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from torch._prims_common import is_non_overlapping_and_dense_or_false

import stridewidget as sw
from stridewidget.scene.build import build_scene

FUZZ = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


def _creatable(dtype: torch.dtype) -> bool:
    try:
        torch.empty(2, dtype=dtype)
    except (RuntimeError, TypeError):  # e.g. quantized dtypes need a quantizer
        return False
    return True


TORCH_DTYPES = sorted(
    {
        value
        for value in vars(torch).values()
        if isinstance(value, torch.dtype) and _creatable(value)
    },
    key=str,
)
NUMPY_DTYPES = [
    np.dtype(name)
    for name in (
        "bool",
        "int8",
        "uint8",
        "int16",
        "uint16",
        "int32",
        "uint32",
        "int64",
        "uint64",
        "float16",
        "float32",
        "float64",
        "longdouble",
        "complex64",
        "complex128",
        "datetime64[s]",
        "timedelta64[ms]",
        "V3",
        "S5",
        "U2",
    )
] + [np.dtype([("a", "<i2"), ("b", "<f8")])]


QUANTIZED_DTYPES = {torch.quint8, torch.qint8, torch.qint32, torch.quint4x2, torch.quint2x4}


def _storage(dtype: torch.dtype, n: int) -> torch.Tensor:
    """``n`` elements of ``dtype``: small counting values where torch can convert to it."""
    if dtype in QUANTIZED_DTYPES:
        return torch.quantize_per_tensor(torch.randn(n), 0.25, 3, dtype)
    try:
        return (torch.arange(n) % 7 - 3).to(dtype)
    except (RuntimeError, TypeError):  # bits, sub-byte and other dtypes without conversions
        return torch.zeros(n, dtype=dtype)


@st.composite
def strided(draw):
    """``(shape, strides, offset, storage_size)`` with every address inside the storage."""
    ndim = draw(st.integers(0, 4))
    shape = [draw(st.integers(0, 4)) for _ in range(ndim)]
    strides = [draw(st.integers(0, 9)) for _ in range(ndim)]
    offset = draw(st.integers(0, 5))
    reach = sum((n - 1) * s for n, s in zip(shape, strides)) if all(shape) else 0
    return shape, strides, offset, offset + reach + 1 + draw(st.integers(0, 3))


@st.composite
def torch_inputs(draw):
    shape, strides, offset, size = draw(strided())
    kind = draw(
        st.sampled_from(["plain", "plain", "conj", "neg", "meta", "quantized", "per-channel"])
    )
    if kind == "quantized":
        base = torch.quantize_per_tensor(torch.randn(size), 0.25, 3, torch.quint8)
    elif kind == "per-channel":
        rows = draw(st.integers(1, 3))
        return torch.quantize_per_channel(
            torch.randn(rows, 4),
            torch.rand(rows) + 0.1,
            torch.zeros(rows, dtype=torch.long),
            0,
            torch.qint8,
        )
    elif kind == "meta":
        dtype = draw(st.sampled_from([d for d in TORCH_DTYPES if d not in QUANTIZED_DTYPES]))
        base = torch.empty(size, dtype=dtype, device="meta")
    elif kind == "conj":
        base = torch.randn(size, dtype=draw(st.sampled_from([torch.complex64, torch.complex128])))
    else:
        base = _storage(draw(st.sampled_from(TORCH_DTYPES)), size)
    view = torch.as_strided(base, shape, strides, offset)
    if kind == "conj":
        view = view.conj()
    elif kind == "neg" and view.dtype.is_floating_point and view.element_size() > 1:
        view = torch._neg_view(view)
    return view


@st.composite
def numpy_inputs(draw):
    dtype = draw(st.sampled_from(NUMPY_DTYPES))
    ndim = draw(st.integers(0, 3))
    shape = tuple(draw(st.integers(0, 4)) for _ in range(ndim))
    aligned = draw(st.booleans())
    unit = dtype.itemsize if aligned else 1
    strides = tuple(unit * draw(st.integers(-6, 6)) for _ in range(ndim))
    offset = unit * draw(st.integers(0, 40))
    buffer = bytearray(draw(st.integers(0, 200)))
    try:
        array = np.ndarray(shape, dtype, buffer=buffer, offset=offset, strides=strides)
    except (ValueError, TypeError):  # leaves the buffer
        assume(False)
    if draw(st.booleans()):
        array.flags.writeable = False
    return array


def _brute_force_bytes(shape, byte_strides, itemsize):
    covered = []
    for index in itertools.product(*(range(n) for n in shape)):
        start = sum(i * s for i, s in zip(index, byte_strides))
        covered.extend(range(start, start + itemsize))
    return covered


def _check_flags(x, lay):
    if isinstance(x, torch.Tensor):
        assert lay.is_contiguous == x.is_contiguous()
        if x.dim() in (4, 5):
            memory_format = torch.channels_last if x.dim() == 4 else torch.channels_last_3d
            assert lay.is_channels_last == x.is_contiguous(memory_format=memory_format)
        if not x.is_quantized and is_non_overlapping_and_dense_or_false(x):
            # torch's Python mirror answers False for some dense layouts with a stride-0 size-1
            # dim ((2, 1, 2):(1, 0, 2)); its True is sure, the rest is checked by brute force
            assert lay.is_dense
        itemsize, byte_strides = x.element_size(), [s * x.element_size() for s in x.stride()]
    else:
        assert lay.is_contiguous == x.flags.c_contiguous
        assert lay.is_f_contiguous == x.flags.f_contiguous
        itemsize, byte_strides = x.itemsize, x.strides
    if lay.numel > 10_000:  # the fuzz draws small views; hand-picked huge ones skip brute force
        return
    covered = _brute_force_bytes(lay.shape, byte_strides, itemsize)
    assert lay.has_overlap == (len(set(covered)) < len(covered))
    gap_free = not covered or max(covered) - min(covered) + 1 == len(set(covered))
    assert lay.is_dense == (gap_free and len(set(covered)) == len(covered)), (lay, covered)
    assert lay.touched * lay.unit == len(set(covered))


def _clear(error: Exception) -> None:
    message = str(error)
    assert message and "Traceback" not in message and "\n" not in message, message


def _draw_everything(x) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sw.OverlapWarning)
        try:
            lay = sw.inspect(x)
        except (sw.LayoutError, TypeError) as refusal:
            _clear(refusal)
            return
        _check_flags(x, lay)
        scene = build_scene({"x": x, "y": x})
        json.dumps(scene, allow_nan=False)
        assert scene["tensors"][0]["layout"]["strides"] == list(lay.strides)
        assert sw.render_text(x).startswith("A x: ") or "x:" in sw.render_text(x=x)
        assert sw.render_svg(x=x).startswith("<svg")
        assert "<svg" in sw.render_html(x=x)
        widget = sw.StrideWidget(x=x)
        json.dumps(widget.get_state(drop_defaults=True), allow_nan=False)
        widget.close()


@FUZZ
@given(torch_inputs())
def test_fuzz_torch_inputs_get_a_picture_or_a_clear_error(x):
    _draw_everything(x)


@FUZZ
@given(numpy_inputs())
def test_fuzz_numpy_inputs_get_a_picture_or_a_clear_error(a):
    _draw_everything(a)


@pytest.mark.parametrize("dtype", TORCH_DTYPES, ids=str)
def test_every_torch_dtype_draws(dtype):
    """The dtype list the fuzz draws from, once each, so no dtype is left to chance."""
    _draw_everything(torch.as_strided(_storage(dtype, 12), (3, 2), (1, 4), 1))


def test_fake_functional_and_wrapper_tensors_draw():
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.testing._internal.two_tensor import TwoTensor

    with FakeTensorMode():
        fake = torch.empty(3, 4)[:, 1:]
    _draw_everything(fake)
    _draw_everything(TwoTensor(torch.randn(3, 4), torch.randn(3, 4)).t())

    def body(t):
        _draw_everything(t[1:].unsqueeze(0))
        return t

    torch.func.functionalize(body)(torch.randn(4))


# --- arguments: anything a user might pass gets a result or a clear refusal ----------------------

ODD_VALUES = st.one_of(
    st.integers(-(2**70), 2**70),
    st.integers(-3, 12),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=3),
    st.none(),
    st.booleans(),
    st.builds(np.int64, st.integers(-3, 12)),
    st.builds(torch.tensor, st.integers(-3, 12)),
)
ODD_SEQUENCES = st.one_of(st.lists(ODD_VALUES, max_size=3), st.tuples(), ODD_VALUES)


def _result_or_refusal(call) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sw.OverlapWarning)
        try:
            result = call()
        except (sw.LayoutError, TypeError) as refusal:
            _clear(refusal)
            return
    if isinstance(result, torch.Tensor):  # a checked view: inside its storage, never a copy
        lay = sw.inspect(result)
        assert lay.in_bounds and sw.same_storage(result, X)


X = torch.arange(24.0).reshape(4, 6)


@FUZZ
@given(ODD_SEQUENCES, ODD_SEQUENCES, st.one_of(st.none(), ODD_VALUES))
def test_fuzz_as_strided_arguments(size, stride, offset):
    _result_or_refusal(lambda: sw.as_strided(X, size, stride, offset, allow_overlap=True))


@FUZZ
@given(
    st.sampled_from(["sliding_window", "transpose", "merge_dims", "blocks", "broadcast"]),
    ODD_VALUES,
    ODD_VALUES,
)
def test_fuzz_trick_arguments(name, first, second):
    trick = getattr(sw.tricks, name)
    if name == "broadcast":
        _result_or_refusal(lambda: trick(X, (first, second, 6)))
    else:
        _result_or_refusal(lambda: trick(X, first, second))


@FUZZ
@given(ODD_SEQUENCES)
def test_fuzz_layout_address_arguments(index):
    lay = sw.inspect(X)
    try:
        cell = lay.address(index)
    except (TypeError, IndexError) as refusal:
        _clear(refusal)
        return
    assert 0 <= cell < lay.storage_size


def _storage_shrunk_under_a_view(nbytes: int) -> torch.Tensor:
    base = torch.arange(6.0)
    view = base[2:]
    base.untyped_storage().resize_(nbytes)
    return view


EXOTIC = {
    "big-endian": lambda: np.arange(6, dtype=">i4").reshape(2, 3).T,
    "np.matrix": lambda: np.matrix([[1, 2], [3, 4]]),
    "masked array": lambda: np.ma.masked_array([1, 2, 3], mask=[0, 1, 0]),
    "record array": lambda: np.rec.array([(1, 2.0)], dtype=[("a", "i4"), ("b", "f8")]),
    "subarray field": lambda: np.zeros(3, dtype=[("a", "i4", (2,))]),
    "zero-size dtype": lambda: np.empty(3, dtype="V0"),
    "read-only bytes": lambda: np.frombuffer(b"abcdefgh", np.int16)[::2],
    "0-d array": lambda: np.array(3.5),
    "from misaligned numpy": lambda: torch.from_numpy(
        np.ndarray((4,), np.int32, buffer=bytearray(17), offset=1)
    ),
    "requires grad": lambda: torch.arange(4.0, requires_grad=True)[1:],
    "parameter": lambda: torch.nn.Parameter(torch.randn(2, 3)).t(),
    "storage freed under a view": lambda: _storage_shrunk_under_a_view(0),
    "storage shrunk under a view": lambda: _storage_shrunk_under_a_view(8),
    "nan and inf": lambda: torch.tensor([float("nan"), float("inf"), -float("inf"), 1e300]),
    "int64 extremes": lambda: torch.tensor([2**63 - 1, -(2**63)]),
    "uint64": lambda: torch.tensor([2**63], dtype=torch.uint64),
    "expanded 10^12": lambda: torch.zeros(1).expand(10**6, 10**6),
    "meta 10^18": lambda: torch.empty(10**9, 10**9, device="meta"),
    "plain subclass": lambda: torch.Tensor._make_subclass(
        type("Sub", (torch.Tensor,), {}), torch.arange(3.0)
    ),
    "dlpack from numpy": lambda: torch.from_dlpack(np.arange(4.0)),
}


@pytest.mark.parametrize("make", EXOTIC.values(), ids=EXOTIC.keys())
def test_exotic_inputs_draw(make):
    _draw_everything(make())
