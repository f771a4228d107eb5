"""Property tests for stridewidget.tricks: each trick equals its reference op and is a view.

Inputs are drawn with random shapes, strides (including zero strides, i.e. overlapping
layouts) and storage offsets over one flat storage, plus permuted and sliced variants, so
no trick can get away with assuming a contiguous input.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import stridewidget as sw
from stridewidget import tricks

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def strided_tensors(draw, min_dims=1, max_dims=4, max_size=5, allow_zero_stride=True):
    """A float64 tensor with arbitrary shape/strides/offset over a larger 1-d storage."""
    ndim = draw(st.integers(min_dims, max_dims))
    shape = draw(st.lists(st.integers(0, max_size), min_size=ndim, max_size=ndim))
    stride_floor = 0 if allow_zero_stride else 1
    strides = draw(st.lists(st.integers(stride_floor, 12), min_size=ndim, max_size=ndim))
    offset = draw(st.integers(0, 7))
    span = sum((s - 1) * t for s, t in zip(shape, strides)) if all(shape) else 0
    base = torch.arange(offset + span + 1 + draw(st.integers(0, 3)), dtype=torch.float64)
    return torch.as_strided(base, shape, strides, offset)


@st.composite
def sliced_tensors(draw, min_dims=1, max_dims=4):
    """A non-overlapping view: a contiguous block, permuted, then sliced with steps and starts."""
    ndim = draw(st.integers(min_dims, max_dims))
    shape = draw(st.lists(st.integers(1, 6), min_size=ndim, max_size=ndim))
    x = torch.randn(*shape, dtype=torch.float64)
    x = x.permute(*draw(st.permutations(range(ndim))))
    index = []
    for n in x.shape:
        start = draw(st.integers(0, n - 1))
        step = draw(st.integers(1, 3))
        index.append(slice(start, None, step))
    return x[tuple(index)]


any_tensors = st.one_of(strided_tensors(), sliced_tensors())


def shares_storage(view: torch.Tensor, x: torch.Tensor) -> bool:
    """Independent of the code under test: same storage allocation, hence no copy."""
    return view.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()


def built_without_allocating(make_view):
    """Run a trick and check it allocated no tensor storage at all (a view, not a copy)."""
    with tricks.PeakMemory() as memory:
        view = make_view()
    assert memory.peak == 0
    return view


def assert_view_equal(view: torch.Tensor, reference: torch.Tensor, x: torch.Tensor) -> None:
    assert view.shape == reference.shape
    assert torch.equal(view, reference)
    assert shares_storage(view, x)
    assert sw.same_storage(view, x)


@SETTINGS
@given(x=any_tensors, data=st.data())
def test_broadcast_equals_expand(x, data):
    new_dims = data.draw(st.integers(0, 2))
    size = [data.draw(st.integers(0, 3)) for _ in range(new_dims)]
    for n in x.shape:
        size.append(data.draw(st.sampled_from([n, -1, 3] if n == 1 else [n, -1])))
    view = built_without_allocating(lambda: tricks.broadcast(x, size))
    assert_view_equal(view, x.expand(size), x)
    assert view.stride() == x.expand(size).stride()  # same metadata too, as PyTorch's test_expand


def test_broadcast_strides_of_new_leading_size_one_dims_match_expand():
    for x, size in [
        (torch.rand(5), (1, 1, 5)),
        (torch.rand(2, 3).t(), (1, 4, 1, 3, 2)),
        (torch.tensor(1.0), (1, 2)),
    ]:
        assert tricks.broadcast(x, size).stride() == x.expand(size).stride()


@SETTINGS
@given(x=any_tensors)
def test_broadcast_of_a_non_singleton_dim_raises(x):
    if not any(n > 1 for n in x.shape):
        return
    dim = next(i for i, n in enumerate(x.shape) if n > 1)
    size = list(x.shape)
    size[dim] += 1
    with pytest.raises(sw.LayoutError, match="cannot be broadcast"):
        tricks.broadcast(x, size)


@SETTINGS
@given(x=any_tensors, data=st.data())
def test_sliding_window_equals_unfold(x, data):
    dim = data.draw(st.integers(-x.dim(), x.dim() - 1))
    size = data.draw(st.integers(0, x.shape[dim]))
    step = data.draw(st.integers(1, 4))
    window = built_without_allocating(lambda: tricks.sliding_window(x, size, step=step, dim=dim))
    assert_view_equal(window, x.unfold(dim, size, step), x)
    if step == 1:
        numpy_windows = np.lib.stride_tricks.sliding_window_view(x.numpy(), size, axis=dim)
        np.testing.assert_array_equal(window.numpy(), numpy_windows)


def test_sliding_window_rejects_a_window_longer_than_the_dim():
    with pytest.raises(sw.LayoutError, match="does not fit"):
        tricks.sliding_window(torch.zeros(3), 4)


@SETTINGS
@given(x=any_tensors, data=st.data())
def test_transpose_equals_torch_transpose(x, data):
    dim0 = data.draw(st.integers(-x.dim(), x.dim() - 1))
    dim1 = data.draw(st.integers(-x.dim(), x.dim() - 1))
    out = built_without_allocating(lambda: tricks.transpose(x, dim0, dim1))
    reference = x.transpose(dim0, dim1)
    assert_view_equal(out, reference, x)
    assert out.stride() == reference.stride()
    assert out.storage_offset() == x.storage_offset()


@SETTINGS
@given(x=any_tensors, data=st.data())
def test_merge_dims_is_a_view_exactly_when_flatten_is(x, data):
    start = data.draw(st.integers(0, x.dim() - 1))
    end = data.draw(st.integers(start, x.dim() - 1))
    reference = x.flatten(start, end)
    event("flatten is a view" if shares_storage(reference, x) else "flatten copies")
    if shares_storage(reference, x) and x.numel() > 0:
        merged = built_without_allocating(lambda: tricks.merge_dims(x, start, end))
        assert_view_equal(merged, reference, x)
        # strides of size-1 dims are arbitrary; every other stride must match flatten's view
        for n, got, want in zip(merged.shape, merged.stride(), reference.stride()):
            assert n == 1 or got == want
    elif x.numel() > 0:
        with pytest.raises(sw.LayoutError, match="without a copy"):
            tricks.merge_dims(x, start, end)


def test_merge_dims_explains_a_transposed_pair():
    x = torch.zeros(3, 4).t()
    with pytest.raises(sw.LayoutError, match=r"dim 0 has stride 1 but dim 1 spans 4 x 3 = 12"):
        tricks.merge_dims(x, 0, 1)


def test_merge_dims_of_a_batch_keeps_the_offset():
    batch = torch.randn(5, 3, 4, 6)[1:]
    merged = tricks.merge_dims(batch, 0, 1)
    assert merged.storage_offset() == batch.storage_offset() == 72
    assert_view_equal(merged, batch.reshape(12, 4, 6), batch)


@st.composite
def even_2d_tensors(draw):
    height = 2 * draw(st.integers(0, 4))
    width = 2 * draw(st.integers(0, 4))
    return draw(
        st.one_of(
            strided_tensors(min_dims=2, max_dims=2, max_size=8).filter(
                lambda t: t.shape[0] % 2 == 0 and t.shape[1] % 2 == 0
            ),
            st.just(torch.randn(width + 3, height + 2).t()[1 : height + 1, 2 : width + 2]),
        )
    )


@SETTINGS
@given(x=even_2d_tensors())
def test_checkerboard_phases_equal_step_two_slices(x):
    board = built_without_allocating(lambda: tricks.checkerboard(x))
    height, width = x.shape
    assert board.shape == (2, 2, height // 2, width // 2)
    assert shares_storage(board, x)
    for a in range(2):
        for b in range(2):
            assert torch.equal(board[a, b], x[a::2, b::2])


@SETTINGS
@given(x=strided_tensors(min_dims=2, max_dims=2, max_size=8), data=st.data())
def test_blocks_equal_reshape_permute(x, data):
    height, width = x.shape
    bh = data.draw(st.sampled_from([d for d in range(1, height + 1) if height % d == 0] or [1]))
    bw = data.draw(st.sampled_from([d for d in range(1, width + 1) if width % d == 0] or [1]))
    if height == 0 or width == 0:
        return
    reference = x.reshape(height // bh, bh, width // bw, bw).permute(0, 2, 1, 3)
    assert_view_equal(built_without_allocating(lambda: tricks.blocks(x, bh, bw)), reference, x)


def test_blocks_and_checkerboard_reject_bad_shapes():
    with pytest.raises(sw.LayoutError, match="must be even"):
        tricks.checkerboard(torch.zeros(3, 4))
    with pytest.raises(sw.LayoutError, match="divide"):
        tricks.blocks(torch.zeros(4, 6), 3, 3)
    with pytest.raises(sw.LayoutError, match="2-d"):
        tricks.blocks(torch.zeros(4, 6, 1), 2, 2)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda x: tricks.sliding_window(x, 2.5), r"window size must be an int, got 2\.5"),
        (lambda x: tricks.sliding_window(x, 2, step=1.5), r"step must be an int, got 1\.5"),
        (lambda x: tricks.sliding_window(x, 2, dim="0"), r"dim must be an int, got '0'"),
        (lambda x: tricks.transpose(x, 0.5, 1), r"transpose: dim must be an int, got 0\.5"),
        (lambda x: tricks.merge_dims(x, 0, 1.0), r"merge_dims: dim must be an int"),
        (lambda x: tricks.blocks(x, 2.0, 2), r"blocks: bh must be an int"),
        (lambda x: tricks.broadcast(x, (2.0, 4, 6)), r"size entry must be an int"),
        (lambda x: tricks.broadcast(x, "246"), r"size must be a sequence of ints"),
        (lambda x: tricks.lrn(x[None], 2.5), r"window size must be an int"),
    ],
)
def test_tricks_refuse_non_integer_arguments_like_torch(call, message):
    x = torch.zeros(4, 6)
    with pytest.raises(TypeError, match=message):
        call(x)


def test_tricks_reject_non_tensors():
    with pytest.raises(TypeError, match=r"needs a torch\.Tensor, got list"):
        tricks.transpose([[1, 2]])


@st.composite
def lrn_inputs(draw):
    shape = (
        draw(st.integers(1, 3)),
        draw(st.integers(1, 9)),
        draw(st.integers(1, 4)),
        draw(st.integers(1, 4)),
    )
    x = torch.randn(*shape) * draw(st.sampled_from([0.1, 1.0, 30.0]))
    layout = draw(st.sampled_from(["contiguous", "channels_last", "sliced", "permuted"]))
    if layout == "channels_last":
        x = x.contiguous(memory_format=torch.channels_last)
    elif layout == "sliced":
        x = torch.randn(shape[0], shape[1] + 2, shape[2], 2 * shape[3])[:, 1:-1, :, ::2]
    elif layout == "permuted":
        x = x.permute(0, 1, 3, 2)
    return x


@SETTINGS
@given(
    x=lrn_inputs(),
    size=st.integers(1, 7),
    alpha=st.sampled_from([1e-4, 1e-2, 1.0]),
    beta=st.sampled_from([0.5, 0.75, 2.0]),
    k=st.sampled_from([0.5, 1.0, 2.0]),
)
def test_lrn_matches_local_response_norm(x, size, alpha, beta, k):
    expected = F.local_response_norm(x, size, alpha=alpha, beta=beta, k=k)
    torch.testing.assert_close(tricks.lrn(x, size, alpha, beta, k), expected, rtol=1e-5, atol=1e-7)


@SETTINGS
@given(x=lrn_inputs(), size=st.integers(1, 6))
def test_lrn_gradient_matches_local_response_norm(x, size):
    x = x.double().requires_grad_()
    (ours,) = torch.autograd.grad(tricks.lrn(x, size, beta=0.6).square().sum(), x)
    (reference,) = torch.autograd.grad(F.local_response_norm(x, size, beta=0.6).square().sum(), x)
    torch.testing.assert_close(ours, reference, rtol=1e-7, atol=1e-10)


def test_lrn_works_on_3d_and_5d_inputs():
    for shape in [(2, 6, 5), (2, 6, 3, 2, 2)]:
        x = torch.randn(*shape)
        torch.testing.assert_close(
            tricks.lrn(x, 3), F.local_response_norm(x, 3), rtol=1e-5, atol=1e-7
        )


def test_lrn_peak_memory_stays_far_below_a_window_sized_temporary():
    x = torch.randn(4, 32, 16, 16)
    with tricks.PeakMemory() as ours:
        tricks.lrn(x)
    with tricks.PeakMemory() as window_squares:
        padded = F.pad(x, (0, 0, 0, 0, 2, 2))
        (padded.unfold(1, 5, 1) ** 2).sum(-1)
    # padded squares ((32 + 4) / 32) + one output-sized buffer; the unfold**2 temporary alone is 5x
    assert ours.peak <= (36 / 32 + 1) * x.nbytes
    assert window_squares.peak >= 5 * x.nbytes


def test_peak_memory_counts_copies_and_not_views():
    x = torch.zeros(250, dtype=torch.float32)
    with tricks.PeakMemory() as views:
        x.view(10, 25).t()[1:]
    assert views.peak == 0
    with tricks.PeakMemory() as copies:
        a = x.clone()
        del a
        b = x + 1
    assert copies.peak == x.nbytes  # the clone was freed before b was allocated
    assert copies.live == b.nbytes


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.uint8, torch.bool])
def test_lrn_of_integer_input_gives_the_default_float_dtype(dtype):
    x = torch.randint(0, 3, (2, 5, 3)).to(dtype)
    result = tricks.lrn(x, 3)
    assert result.dtype == torch.get_default_dtype()
    if dtype == torch.int64:  # the one integer dtype local_response_norm itself accepts
        assert result.dtype == F.local_response_norm(x, 3).dtype
    torch.testing.assert_close(result, F.local_response_norm(x.float(), 3))


def test_lrn_supports_forward_mode_ad():
    import torch.autograd.forward_ad as fwAD

    x = torch.randn(2, 6, 3, dtype=torch.float64)
    tangent = torch.randn_like(x)
    with fwAD.dual_level():
        ours = fwAD.unpack_dual(tricks.lrn(fwAD.make_dual(x, tangent), 3))
        reference = fwAD.unpack_dual(F.local_response_norm(fwAD.make_dual(x, tangent), 3))
    torch.testing.assert_close(ours.primal, reference.primal)
    torch.testing.assert_close(ours.tangent, reference.tangent)


def test_lrn_gradcheck_and_half_precision():
    x = torch.randn(1, 5, 2, 2, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda t: tricks.lrn(t, 3), (x,))
    assert torch.autograd.gradcheck(lambda t: tricks.lrn(t, 3), (x,), check_forward_ad=True)
    for dtype in (torch.float16, torch.bfloat16):
        low = x.detach().to(dtype)
        result = tricks.lrn(low, 3)
        assert result.dtype == dtype
        # torch's CPU pooling has no half kernels: compare with float32 rounded to the dtype
        reference = F.local_response_norm(low.float(), 3).to(dtype)
        torch.testing.assert_close(result, reference, rtol=2e-2, atol=1e-3)
