"""Issue 37: the ops the audit does not mark for the profiler when their inputs are plain CPU
tensors of one float dtype (``profiler._COPY_FREE_IN_FLOAT``, decided per call by
``copy_free_call``; ``mm`` also when both its matrices are ready for BLAS as they are) copy
nothing inside their kernels then, whatever the layout: the profiler, collecting everything,
finds no ``copy_`` / ``contiguous`` / op of ``hidden.NEW_STORAGE_COPIES`` (``clone``,
``_to_copy``, ``index_select``, ``cat`` ...) under them.  Each input the rule
leaves out does make one copy there (another dtype, a wrapped Python number, a matrix with gaps),
and the audit still reports it.  Oracle: the profiler's own events."""

from __future__ import annotations

import itertools

import pytest
import torch

import stridewidget as sw
from stridewidget.copies.audit.hidden import NEW_STORAGE_COPIES
from stridewidget.copies.audit.profiler import _COPY_FREE_IN_FLOAT, copy_free_call

_COPIES = NEW_STORAGE_COPIES | {"aten::copy_", "aten::contiguous"}
A = torch.ops.aten


def _nested_copies(run) -> list[str]:
    """The copy ops the profiler records under ``run``'s ops (nested, not the outermost)."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        run()
    return [e.name for e in prof.events() if e.name in _COPIES and e.cpu_parent is not None]


# Layouts of a (4, 6)-broadcastable tensor: contiguous, transposed, gaps between elements, an
# expanded (stride 0) dimension, a storage offset, a row and a 0-dim one to broadcast, channels
# last, and large ones (vectorized and cascaded loops) transposed and with gaps.
_LAYOUTS = {
    "contiguous": lambda d: torch.randn(4, 6, dtype=d),
    "transposed": lambda d: torch.randn(6, 4, dtype=d).t(),
    "gapped": lambda d: torch.randn(4, 12, dtype=d)[:, ::2],
    "expanded": lambda d: torch.randn(4, 1, dtype=d).expand(4, 6),
    "offset": lambda d: torch.randn(5, 6, dtype=d)[1:],
    "row": lambda d: torch.randn(6, dtype=d),
    "0-dim": lambda d: torch.randn((), dtype=d),
    "channels_last": lambda d: torch.randn(2, 3, 4, 6, dtype=d).contiguous(
        memory_format=torch.channels_last
    ),
    "large transposed": lambda d: torch.randn(256, 64, dtype=d).t(),
    "large gapped": lambda d: torch.randn(64, 768, dtype=d)[:, ::3],
}

# op -> (op, args, kwargs) of a call of it on a and b, the ops that take one tensor ignoring b
_CALLS = {
    "aten.add.Tensor": lambda a, b: (A.add.Tensor, (a, b), {"alpha": 2}),
    "aten.add_.Tensor": lambda a, b: (A.add_.Tensor, (a, b), {}),
    "aten.mul.Tensor": lambda a, b: (A.mul.Tensor, (a, b), {}),
    "aten.relu.default": lambda a, b: (A.relu.default, (a,), {}),
    "aten.relu_.default": lambda a, b: (A.relu_.default, (a,), {}),
    "aten.threshold_backward.default": lambda a, b: (A.threshold_backward.default, (a, b, 0), {}),
    "aten.gelu.default": lambda a, b: (A.gelu.default, (a,), {}),
    "aten.gelu_backward.default": lambda a, b: (A.gelu_backward.default, (a, b), {}),
    "aten.tanh.default": lambda a, b: (A.tanh.default, (a,), {}),
    "aten.tanh_backward.default": lambda a, b: (A.tanh_backward.default, (a, b), {}),
    "aten.sum.dim_IntList": lambda a, b: (A.sum.dim_IntList, (a, [-1], True), {}),
    "aten.empty_like.default": lambda a, b: (A.empty_like.default, (a,), {}),
    "aten.ones_like.default": lambda a, b: (A.ones_like.default, (a,), {}),
}
_MORE_CALLS = {  # other arguments of the same ops
    "aten.gelu.default": lambda a, b: (A.gelu.default, (a,), {"approximate": "tanh"}),
    "aten.gelu_backward.default": lambda a, b: (
        A.gelu_backward.default,
        (a, b),
        {"approximate": "tanh"},
    ),
    "aten.sum.dim_IntList": lambda a, b: (A.sum.dim_IntList, (a, None), {}),
    "aten.empty_like.default": lambda a, b: (
        A.empty_like.default,
        (a,),
        {"memory_format": torch.channels_last if a.dim() == 4 else torch.preserve_format},
    ),
    "aten.ones_like.default": lambda a, b: (
        A.ones_like.default,
        (a,),
        {"memory_format": torch.contiguous_format},
    ),
}
_IN_PLACE = {"aten.add_.Tensor", "aten.relu_.default"}


def test_every_op_of_the_rule_is_tested():
    matmuls = {"aten.mm.default", "aten.bmm.default", "aten.addmm.default"}
    assert set(_CALLS) | matmuls | set(_NORMS) == set(_COPY_FREE_IN_FLOAT)


# (rows, columns) -> a matrix of that shape: rows or columns contiguous, a leading dimension equal
# to or larger than their length (these mm passes to BLAS as they are); elements apart, an
# expanded dimension, rows that overlap (these it clones)
_MATRICES = {
    "rows": lambda r, c, d: torch.randn(r, c, dtype=d),
    "columns": lambda r, c, d: torch.randn(c, r, dtype=d).t(),
    "rows, longer leading dimension": lambda r, c, d: torch.randn(r, c + 3, dtype=d)[:, :c],
    "columns, longer leading dimension": lambda r, c, d: torch.randn(c, r + 3, dtype=d)[:, :r].t(),
    "gapped": lambda r, c, d: torch.randn(r, 2 * c, dtype=d)[:, ::2],
    "expanded": lambda r, c, d: torch.randn(r, 1, dtype=d).expand(r, c),
    "overlapping": lambda r, c, d: torch.randn(r * c, dtype=d).as_strided((r, c), (c - 1, 1)),
}
_BLAS_READY = {
    "rows",
    "columns",
    "rows, longer leading dimension",
    "columns, longer leading dimension",
}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_mm_is_left_unmarked_only_when_it_clones_nothing(dtype):
    """The rule holds a call exactly when both matrices are ready for BLAS and no size is 1, and
    then the profiler finds no copy inside; each other layout here mm does clone."""
    for (m, k, n), first, second in itertools.product(
        [(3, 4, 5), (64, 32, 48), (1, 4, 5), (3, 1, 5)], _MATRICES, _MATRICES
    ):
        a, b = _MATRICES[first](m, k, dtype), _MATRICES[second](k, n, dtype)
        free = copy_free_call(A.mm.default, (a, b), {})
        copies = _nested_copies(lambda: A.mm.default(a, b))  # noqa: B023
        ready = first in _BLAS_READY and second in _BLAS_READY and 1 not in (m, k, n)
        assert free == ready, (m, k, n, first, second)
        if free:
            assert copies == [], (m, k, n, first, second)
        elif 1 not in (m, k, n):
            assert "aten::clone" in copies, (m, k, n, first, second)


# (rows, columns) -> a bias addmm broadcasts to its result: copied into it by copy_ whatever its
# layout, a new storage never
_BIASES = {
    "row": lambda r, c, d: torch.randn(c, dtype=d),
    "full": lambda r, c, d: torch.randn(r, c, dtype=d),
    "full, transposed": lambda r, c, d: torch.randn(c, r, dtype=d).t(),
    "row with gaps": lambda r, c, d: torch.randn(2 * c, dtype=d)[::2],
    "column": lambda r, c, d: torch.randn(r, 1, dtype=d),
    "0-dim": lambda r, c, d: torch.randn((), dtype=d),
}
_NEW_STORAGE = NEW_STORAGE_COPIES | {"aten::contiguous"}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_addmm_is_left_unmarked_only_when_it_clones_nothing(dtype):
    """As mm, whatever the bias and the scalars: unmarked exactly when both matrices are ready
    for BLAS, and then the only copy inside is the bias's ``copy_`` into the result, which makes
    no new storage (the audit counts none); each other matrix layout here addmm clones."""
    cases = itertools.product(
        [(3, 4, 5), (64, 32, 48), (1, 4, 5)], _MATRICES, _MATRICES, _BIASES, [{}, {"beta": 0}]
    )
    for (m, k, n), first, second, bias, scalars in cases:
        a, b = _MATRICES[first](m, k, dtype), _MATRICES[second](k, n, dtype)
        c = _BIASES[bias](m, n, dtype)
        free = copy_free_call(A.addmm.default, (c, a, b), scalars)
        copies = _nested_copies(lambda: A.addmm.default(c, a, b, **scalars))  # noqa: B023
        ready = first in _BLAS_READY and second in _BLAS_READY and m > 1
        assert free == ready, (m, k, n, first, second, bias)
        if free:
            assert set(copies) <= {"aten::copy_"}, (m, k, n, first, second, bias, copies)
        elif m > 1:
            assert _NEW_STORAGE & set(copies), (m, k, n, first, second, bias, copies)
    mixed = torch.randn(5, dtype=torch.float64)  # a bias of another dtype: marked
    assert not copy_free_call(A.addmm.default, (mixed, torch.randn(3, 4), torch.randn(4, 5)), {})


# (batch, rows, columns) -> a batch of matrices: each ready for BLAS, in batches of any stride
# (after the rows, between the columns, 0), or with gaps (cloned where the batch is not small)
_BATCHES = {
    "rows": lambda b, r, c, d: torch.randn(b, r, c, dtype=d),
    "columns": lambda b, r, c, d: torch.randn(b, c, r, dtype=d).transpose(1, 2),
    "batch between rows": lambda b, r, c, d: torch.randn(r, b, c, dtype=d).transpose(0, 1),
    "batch between columns": lambda b, r, c, d: torch.randn(c, b, r, dtype=d).permute(1, 2, 0),
    "one matrix, expanded": lambda b, r, c, d: torch.randn(1, r, c, dtype=d).expand(b, r, c),
    "rows, longer leading dimension": lambda b, r, c, d: torch.randn(b, r, c + 3, dtype=d)[..., :c],
    "gapped": lambda b, r, c, d: torch.randn(b, r, 2 * c, dtype=d)[..., ::2],
}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_bmm_is_left_unmarked_only_when_it_clones_nothing(dtype):
    for (batch, m, k, n), first, second in itertools.product(
        [(4, 3, 4, 5), (8, 32, 16, 32), (2, 64, 64, 64), (3, 1, 4, 5)], _BATCHES, _BATCHES
    ):
        a, b = _BATCHES[first](batch, m, k, dtype), _BATCHES[second](batch, k, n, dtype)
        free = copy_free_call(A.bmm.default, (a, b), {})
        copies = _nested_copies(lambda: A.bmm.default(a, b))  # noqa: B023
        ready = "gapped" not in (first, second) and 1 not in (m, k, n)
        assert free == ready, (batch, m, k, n, first, second)
        if free:
            assert copies == [], (batch, m, k, n, first, second)
        elif m * k * n >= 400 and 1 not in (m, k, n):  # smaller ones are multiplied in loops
            assert "aten::clone" in copies, (batch, m, k, n, first, second)


def test_mm_is_marked_under_a_lower_float32_matmul_precision():
    a, b = torch.randn(3, 4), torch.randn(4, 5)
    assert copy_free_call(A.mm.default, (a, b), {})
    before = torch.get_float32_matmul_precision()
    try:
        torch.set_float32_matmul_precision("medium")
        assert not copy_free_call(A.mm.default, (a, b), {})
        assert not copy_free_call(A.bmm.default, (a[None], b[None]), {})
    finally:
        torch.set_float32_matmul_precision(before)
    # oneDNN's own setting: torch then refuses to say the overall precision; marked, no error
    try:
        torch.backends.mkldnn.matmul.fp32_precision = "tf32"
        assert not copy_free_call(A.mm.default, (a, b), {})
    finally:
        torch.backends.mkldnn.matmul.fp32_precision = "none"
    assert copy_free_call(A.mm.default, (a, b), {})


@pytest.mark.parametrize("name", sorted(_CALLS))
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_the_rule_holds_only_calls_that_copy_nothing(name, dtype):
    calls = [_CALLS[name]] + ([_MORE_CALLS[name]] if name in _MORE_CALLS else [])
    ran = set()
    for call, first, second in itertools.product(calls, _LAYOUTS, _LAYOUTS):
        if "contiguous" not in (first, second) and first != second:
            continue
        a, b = _LAYOUTS[first](dtype), _LAYOUTS[second](dtype)
        try:
            shape = torch.broadcast_shapes(a.shape, b.shape)
        except RuntimeError:
            continue
        if name in _IN_PLACE and (0 in a.stride() or shape != a.shape):
            continue  # an in-place op writes neither an expanded nor a broadcast self
        if name not in _IN_PLACE and a.shape != b.shape and name.endswith("_backward.default"):
            continue  # a gradient has its input's shape
        func, args, kwargs = call(a, b)
        assert str(func) == name
        assert copy_free_call(func, args, kwargs), (first, second)
        copies = _nested_copies(lambda: func(*args, **kwargs))  # noqa: B023
        assert copies == [], (dtype, first, second)
        ran.add(first)
    assert ran == set(_LAYOUTS) - ({"expanded"} if name in _IN_PLACE else set())


def test_the_calls_left_out_copy_inside_and_are_marked():
    """Each input the rule refuses makes a copy inside one of its ops."""
    x = torch.randn(4, 6)
    refused = [
        (A.add.Tensor, (x, torch.randn(4, 6, dtype=torch.float64)), {}),  # promoted
        (A.mul.Tensor, (x, torch.tensor(2.0, dtype=torch.float64)), {}),  # x * 2.0's wrapped
        (A.sum.dim_IntList, (torch.ones(4, 6, dtype=torch.int32), [0]), {}),  # into int64
        (A.sum.dim_IntList, (torch.ones(4, 1, dtype=torch.bfloat16).expand(4, 6), None), {}),
        (A.tanh.default, (torch.ones(4, 6, dtype=torch.int64),), {}),  # into float
        (A.sum.dim_IntList, (x, [0]), {"dtype": torch.float64}),
        (A.add.Tensor, (torch.randn(3, dtype=torch.complex64).conj(), torch.randn(3)), {}),
        (A.add.Tensor, (x, 1.0), {}),  # x + 1.0: a Python number, wrapped and converted
        (A.mul.Tensor, (x, 2), {}),
        (A.add_.Tensor, (x.double(), 1), {}),
    ]
    for func, args, kwargs in refused:
        assert not copy_free_call(func, args, kwargs), func
        assert _nested_copies(lambda: func(*args, **kwargs)), func  # noqa: B023
    # and what the rule never holds: other ops, devices, layouts
    assert not copy_free_call(A.mm.default, (x[:, ::2], torch.randn(3, 5)), {})
    assert _nested_copies(lambda: A.mm.default(x[:, ::2], torch.randn(3, 5)))  # cloned
    assert not copy_free_call(A.relu.default, (torch.randn(4, 6).to_sparse(),), {})
    assert not copy_free_call(A.relu.default, (torch.randn(4, 6, device="meta"),), {})


class _Promoting(torch.nn.Module):
    """A float32 activation added to a float64 buffer (its ``add`` copies the activation into
    float64 inside its kernel), next to float32 adds and a ReLU the audit does not mark."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = torch.nn.Linear(8, 8)
        self.register_buffer("offset", torch.randn(8, dtype=torch.float64))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.proj(x) + x)
        return (y + self.offset).float()


def test_a_copy_hidden_in_an_add_of_two_dtypes_is_reported():
    torch.manual_seed(0)
    report = sw.audit(_Promoting(), torch.randn(3, 8))
    hidden = [c for c in report.copies if c.hidden_in == "aten.add" and c.phase == "forward"]
    assert len(hidden) == 1, report.copies
    assert hidden[0].bytes == 3 * 8 * 8, hidden[0]


_NORMS = {
    "aten.native_layer_norm.default",
    "aten.native_layer_norm_backward.default",
    "aten.native_batch_norm.default",
    "aten.native_batch_norm_backward.default",
}
# (N, C, ...) inputs of a norm
_FORMATS = {
    "contiguous": lambda shape, d: torch.randn(shape, dtype=d),
    "channels_last": lambda shape, d: torch.randn(shape, dtype=d).contiguous(
        memory_format=torch.channels_last
    ),
    "permuted": lambda shape, d: torch.randn(shape[::-1], dtype=d).permute(
        *range(len(shape) - 1, -1, -1)
    ),
    "gapped": lambda shape, d: torch.randn(*shape[:-1], 2 * shape[-1], dtype=d)[..., ::2],
}


def _norm_calls(x, grad, dtype):
    """(op, args) of each norm's forward and backward on input ``x``, output gradient ``grad``."""
    channels, last = x.shape[1], [x.shape[-1]]
    w, b, mean, var = (torch.rand(channels, dtype=dtype) + 0.5 for _ in range(4))
    lw, lb = torch.randn(last, dtype=dtype), torch.randn(last, dtype=dtype)
    _, lmean, lrstd = A.native_layer_norm.default(x, last, lw, lb, 1e-5)
    yield A.native_layer_norm.default, (x, last, lw, lb, 1e-5)
    yield A.native_layer_norm_backward.default, (grad, x, last, lmean, lrstd, lw, lb, [True] * 3)
    for train in (True, False):
        _, smean, sinv = A.native_batch_norm.default(x, w, b, mean, var, train, 0.1, 1e-5)
        yield A.native_batch_norm.default, (x, w, b, mean, var, train, 0.1, 1e-5)
        backward = (grad, x, w, mean, var, smean, sinv, train, 1e-5, [True] * 3)
        yield A.native_batch_norm_backward.default, backward


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_norms_are_left_unmarked_only_where_they_copy_nothing(dtype):
    """Layer norm with every tensor contiguous, batch norm with every tensor contiguous in the
    input's format: the profiler finds no copy inside; an input of other strides (and layer
    norm's gradient) is copied inside, and those calls are marked."""
    held, refused_copied = set(), set()
    for shape, first, second in itertools.product(
        [(2, 3, 4, 5), (8, 16, 8, 8), (4, 7, 32), (6, 5)], _FORMATS, _FORMATS
    ):
        if "channels_last" in (first, second) and len(shape) != 4:
            continue
        x, grad = _FORMATS[first](shape, dtype), _FORMATS[second](shape, dtype)
        for func, args in _norm_calls(x, grad, dtype):
            copies = _nested_copies(lambda: func(*args))  # noqa: B023
            if copy_free_call(func, args, {}):
                assert copies == [], (str(func), shape, first, second)
                held.add((str(func), first))
            elif copies:
                refused_copied.add((str(func), first))
    assert {name for name, _ in held} == _NORMS
    assert ("aten.native_batch_norm.default", "channels_last") in held
    assert ("aten.native_batch_norm.default", "permuted") in refused_copied
    assert ("aten.native_layer_norm.default", "channels_last") in refused_copied
    assert ("aten.native_layer_norm_backward.default", "contiguous") in refused_copied
