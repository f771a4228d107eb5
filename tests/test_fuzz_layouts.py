"""sw.fuzz_layouts against hand-made layout bugs (each must be found, with the layouts that
expose it), correct functions, modules and custom ops (must be ok), determinism, bounds, and
the caller's tensors and modules left exactly as they were."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest
import torch

import stridewidget as sw


def _storage_as_contiguous(t: torch.Tensor) -> torch.Tensor:
    """Bug: reads t's storage from its start as if t were contiguous there."""
    flat = torch.empty(0, dtype=t.dtype).set_(t.untyped_storage())
    return flat[: t.numel()].view(t.shape) * 2


def _data_ptr_as_contiguous(t: torch.Tensor) -> torch.Tensor:
    """Bug: a 'kernel' reading numel floats from data_ptr(), as C code given the pointer does."""
    pointer = ctypes.cast(t.data_ptr(), ctypes.POINTER(ctypes.c_float))
    values = np.ctypeslib.as_array(pointer, shape=(t.numel(),)).copy()
    return torch.from_numpy(values).view(t.shape) + 1


def _wrong_for_f_order(t: torch.Tensor) -> torch.Tensor:
    """Bug: a fast path for column-major inputs that forgets to transpose back."""
    if t.dim() == 2 and t.stride(0) == 1 and t.stride(1) == t.shape[0] and t.shape[0] > 1:
        return t.t().contiguous().view(t.shape).sum(0)
    return t.sum(0)


def _ignores_storage_offset(t: torch.Tensor) -> torch.Tensor:
    """Bug: rebuilds the view with the right strides from offset 0."""
    return torch.empty(0, dtype=t.dtype).set_(t.untyped_storage(), 0, t.shape, t.stride()) - 1


def _zeroes_its_input_when_viewable(t: torch.Tensor) -> torch.Tensor:
    """Bug: ``reshape`` is a view only for some layouts, so the input is zeroed only for those."""
    total = t.sum()
    t.reshape(-1).zero_()
    return total


def _flattens_with_view(t: torch.Tensor) -> torch.Tensor:
    """Bug: ``view(-1)`` refuses layouts that are not viewable."""
    return t.view(-1).cumsum(0)


def _kinds(report) -> set[str]:
    return {f.kind for f in report.findings}


def test_a_storage_reader_is_found_and_its_layouts_named():
    x = torch.arange(12.0).reshape(3, 4)
    report = sw.fuzz_layouts(_storage_as_contiguous, x)
    assert not report.ok and _kinds(report) == {"values"}
    names = {f.name for f in report.findings}
    assert {"F-contiguous", "gapped slice", "storage offset"} <= names
    for finding in report.findings:  # each layout it names is one that breaks the bug
        assert finding.input == 0 and finding.layout.shape == (3, 4)
        assert not finding.layout.is_contiguous or finding.layout.offset
        assert "max abs error" in finding.detail or "(filler NaN)" in finding.detail


def test_a_data_ptr_kernel_is_found():
    report = sw.fuzz_layouts(_data_ptr_as_contiguous, torch.randn(4, 5))
    assert "values" in _kinds(report)
    assert "F-contiguous" in {f.name for f in report.findings}


def test_a_bug_only_for_f_contiguous_inputs_is_found_only_there():
    report = sw.fuzz_layouts(_wrong_for_f_order, torch.randn(3, 5))
    assert "F-contiguous" in {f.name for f in report.findings}
    assert all(f.layout.strides == (1, 3) for f in report.findings)  # column-major, any offset


def test_a_bug_only_with_a_storage_offset_is_found_only_there():
    report = sw.fuzz_layouts(_ignores_storage_offset, torch.randn(2, 3, 4))
    assert report.findings
    assert all(f.layout.offset != 0 for f in report.findings)
    assert "storage offset" in {f.name for f in report.findings}


def test_a_layout_dependent_mutation_is_found():
    x = torch.arange(6.0).reshape(2, 3)
    report = sw.fuzz_layouts(_zeroes_its_input_when_viewable, x)
    assert _kinds(report) == {"mutation"}
    assert torch.equal(x, torch.arange(6.0).reshape(2, 3))  # the caller's tensor: untouched


def test_a_function_that_refuses_some_layouts_is_found():
    report = sw.fuzz_layouts(_flattens_with_view, torch.randn(3, 4))
    assert _kinds(report) == {"raised"}
    assert all("RuntimeError" in f.detail for f in report.findings)


def test_dtype_and_shape_differences_are_their_own_kinds():
    def promotes_when_strided(t):
        return t.double() if not t.is_contiguous() else t.clone()

    def drops_a_dim_when_strided(t):
        return t.sum(0) if not t.is_contiguous() else t.clone()

    assert _kinds(sw.fuzz_layouts(promotes_when_strided, torch.randn(3, 4))) == {"dtype"}
    assert _kinds(sw.fuzz_layouts(drops_a_dim_when_strided, torch.randn(3, 4))) == {"shape"}


def test_correct_functions_modules_and_custom_ops_are_ok():
    @torch.library.custom_op("swfuzz::centred", mutates_args=())
    def centred(x: torch.Tensor) -> torch.Tensor:
        return x - x.mean()

    torch.manual_seed(0)
    conv = torch.nn.Conv2d(3, 4, 3)
    batch_norm = torch.nn.BatchNorm2d(3)  # train mode: its running stats change per run
    cases = [
        (torch.mm, (torch.randn(3, 4), torch.randn(4, 2))),
        (torch.add, (torch.randn(3, 4), torch.randn(4))),
        (lambda t: t.softmax(-1).cumsum(0), (torch.randn(2, 3, 5),)),
        (conv, (torch.randn(2, 3, 6, 6),)),
        (batch_norm, (torch.randn(2, 3, 4, 4),)),
        (centred, (torch.randn(3, 4),)),
        (
            lambda a, b: {"sum": a + b[0], "parts": [b[1] * 2]},
            (torch.randn(2), [torch.ones(2)] * 2),
        ),
    ]
    for fn, inputs in cases:
        report = sw.fuzz_layouts(fn, *inputs, rtol=1e-5, atol=1e-5)
        assert report.ok, (fn, report)
        assert report.runs > 0


def test_the_callers_tensors_and_module_are_untouched():
    x = torch.randn(2, 3, 4, 4).contiguous(memory_format=torch.channels_last)[:, :, 1:]
    values, strides, offset, version = x.clone(), x.stride(), x.storage_offset(), x._version
    model = torch.nn.BatchNorm2d(3)
    state = {k: v.clone() for k, v in model.state_dict().items()}

    def mutates(t):
        t.add_(1)
        return t * 2

    report = sw.fuzz_layouts(mutates, x)
    assert report.ok
    assert torch.equal(x, values) and x.stride() == strides and x.storage_offset() == offset
    assert x._version == version
    report = sw.fuzz_layouts(model, x)  # a module: its running stats are put back
    for key, value in model.state_dict().items():
        assert torch.equal(value, state[key]), key


def test_deterministic_for_a_seed_and_bounded():
    x = torch.randn(3, 4, 5)
    first = sw.fuzz_layouts(_storage_as_contiguous, x, seed=7, max_layouts=12)
    again = sw.fuzz_layouts(_storage_as_contiguous, x, seed=7, max_layouts=12)
    assert first.runs == again.runs == 12
    assert [(f.name, f.kind, f.detail) for f in first.findings] == [
        (f.name, f.kind, f.detail) for f in again.findings
    ]
    assert [f.layout for f in first.findings] == [f.layout for f in again.findings]
    assert sw.fuzz_layouts(_storage_as_contiguous, x, max_layouts=3).runs == 3


def test_every_input_gets_layouts_and_keyword_inputs_are_named():
    def wrong_in_b(a, *, b):
        return a + _storage_as_contiguous(b)

    report = sw.fuzz_layouts(wrong_in_b, torch.randn(3, 4), b=torch.randn(3, 4))
    assert {f.input for f in report.findings} == {"b"}


def test_layouts_the_rank_allows_are_tried():
    seen = []

    def records(t):
        seen.append((t.stride(), t.storage_offset()))
        return t * 1

    sw.fuzz_layouts(records, torch.randn(2, 3, 1, 4), max_layouts=40)
    assert (
        torch.empty(2, 3, 1, 4).contiguous(memory_format=torch.channels_last).stride(),
        0,
    ) in seen
    assert any(stride[2] == 0 for stride, _ in seen)  # stride 0 on the size-1 dim
    assert any(offset > 0 for _, offset in seen)


def test_dropout_draws_in_memory_order_so_it_is_fuzzed_in_eval_mode():
    dropout = torch.nn.Dropout(0.5)
    assert not sw.fuzz_layouts(dropout, torch.ones(4, 5)).ok  # its mask follows the strides
    assert sw.fuzz_layouts(dropout.eval(), torch.ones(4, 5)).ok


def test_a_sparse_input_is_copied_not_relaid():
    sparse = torch.eye(3).to_sparse()
    report = sw.fuzz_layouts(lambda s, d: torch.sparse.mm(s, d), sparse, torch.randn(3, 2))
    assert report.ok and report.runs > 0


def test_findings_draw_and_the_report_reads():
    report = sw.fuzz_layouts(_wrong_for_f_order, torch.randn(3, 5))
    assert "<svg" in report.findings[0]._repr_html_()
    assert "F-contiguous" in repr(report) and "<svg" in report._repr_html_()


def test_bad_arguments_are_clear_errors():
    with pytest.raises(sw.LayoutError, match="no tensor among the inputs"):
        sw.fuzz_layouts(lambda n: n + 1, 3)
    with pytest.raises(sw.LayoutError, match="both rtol and atol"):
        sw.fuzz_layouts(torch.relu, torch.ones(2), rtol=1e-3)
    with pytest.raises(sw.LayoutError, match="must be callable"):
        sw.fuzz_layouts(torch.ones(2), torch.ones(2))
