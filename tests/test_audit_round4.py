"""Issue 38's audit items and issue 37's last mile: each against torch's own result, the eager
run or the profiler (``tests/test_audit_zoo.py``'s oracle)."""

from __future__ import annotations

import dataclasses

import pytest
import torch
from test_audit_zoo import _into_blank_buffer, _moved_bytes
from torch.utils.checkpoint import checkpoint

import stridewidget as sw


def _one_line_error(error: BaseException) -> str:
    message = str(error)
    assert message.startswith("sw.audit:") and "\n" not in message
    return message


class _ReentrantOnData(torch.nn.Module):
    """A reentrant checkpoint fed the data itself: no parameter lies before it."""

    def __init__(self) -> None:
        super().__init__()
        self.block = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU())

    def forward(self, x):
        return checkpoint(self.block, x, use_reentrant=True)


def test_a_reentrant_checkpoint_that_backward_inputs_would_skip_is_refused():
    model, x = _ReentrantOnData(), torch.randn(8, 4, requires_grad=True)
    params = list(model.parameters())
    # torch's own result: the training step's backward() reaches the parameters, the
    # backward(inputs=params) a step restricted to them does not (silently: no error)
    model(x).sum().backward()
    assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in params)
    for p in params:
        p.grad = None
    torch.autograd.backward(model(x).sum(), inputs=params)
    assert all(p.grad is None for p in params)
    with pytest.raises(RuntimeError) as caught:
        sw.audit(model, x)
    assert "use_reentrant=False" in _one_line_error(caught.value)
    assert sw.audit(model, x, backward=False).backward is False


class _DropoutConvNet(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 1)
        self.drop = torch.nn.Dropout(0.5)

    def forward(self, x):
        return self.drop(self.conv(x)).permute(0, 2, 3, 1).reshape(len(x), -1)


def test_a_fix_is_compared_under_the_same_draws_and_the_rng_is_left_as_found():
    torch.manual_seed(0)
    model, x = _DropoutConvNet(), torch.randn(2, 3, 8, 8)
    # torch's own: the same seed draws another dropout mask in channels-last memory order, so a
    # comparison that only reseeds calls the layout fix a change of values
    wide = torch.randn(2, 4, 8, 8)
    torch.manual_seed(1)
    plain = torch.nn.functional.dropout(wide, 0.5)
    torch.manual_seed(1)
    nhwc = torch.nn.functional.dropout(wide.contiguous(memory_format=torch.channels_last), 0.5)
    assert not torch.equal(plain, nhwc)
    state = torch.get_rng_state()
    report = sw.audit(model, x)
    (channels_last,) = [s for s in report.suggestions if s.applied]
    assert channels_last.fix.startswith("model = model.to(memory_format=torch.channels_last)")
    assert channels_last.outputs_match
    assert torch.equal(torch.get_rng_state(), state)


def test_a_lazy_module_not_yet_run_is_refused_in_one_line_and_left_lazy():
    model = torch.nn.Sequential(torch.nn.LazyLinear(4))
    with pytest.raises(ValueError) as caught:
        sw.audit(model, torch.randn(2, 3))
    assert "model(*inputs) once" in _one_line_error(caught.value)
    assert torch.nn.parameter.is_lazy(model[0].weight)  # as found
    model(torch.randn(2, 3))  # what the error says to do: then the audit runs
    assert sw.audit(model, torch.randn(2, 3)).backward


@dataclasses.dataclass
class _Out:
    logits: torch.Tensor
    label: str = "scores"


class _ReturnsADataclass(torch.nn.Module):
    """A transposed weight, and a reshape that copies."""

    def __init__(self) -> None:
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(6, 5).t())

    def forward(self, x):
        return _Out(torch.relu(x * self.weight).t().reshape(-1))


def test_a_dataclass_output_is_searched_for_tensors():
    torch.manual_seed(0)
    model, x = _ReturnsADataclass(), torch.randn(5, 6)
    report = sw.audit(model, x)
    _, forward = _moved_bytes(lambda: model(x))  # the profiler's: the plain step
    output = model(x)
    _, backward = _moved_bytes(lambda: torch.autograd.backward(output.logits.sum()))
    model.weight.grad = None
    for phase, expected in (("forward", forward), ("backward", backward)):
        items = [c for c in report.copies if c.phase == phase]
        counted = sum(c.bytes for c in items if not _into_blank_buffer(c))
        assert counted == expected, phase
    assert forward > 0  # the reshape's copy


def test_a_parameter_free_module_is_told_it_has_none():
    with pytest.raises(ValueError) as caught:
        sw.audit(torch.nn.ReLU(), torch.randn(3, 4))
    message = _one_line_error(caught.value)
    assert next(torch.nn.ReLU().parameters(), None) is None  # torch's: it has none
    assert "no parameters" in message and "unfreeze" not in message


class _MakesFloat32(torch.nn.Module):
    """Builds a float32 tensor in forward: the float64 check cannot run it."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 1)

    def forward(self, x):
        return self.conv(x).flatten(1) @ torch.ones(4 * 8 * 8, 3)


def test_a_check_that_cannot_run_says_so_and_the_report_renders(tmp_path):
    torch.manual_seed(0)
    model, x = _MakesFloat32(), torch.randn(2, 3, 8, 8)
    with pytest.raises(RuntimeError) as torchs:  # torch's own: the model cannot run in float64
        model.double()(x.double())
    model.float()
    report = sw.audit(model, x)
    (suggestion,) = report.suggestions
    assert not suggestion.outputs_match
    assert suggestion.unchecked.startswith("outputs not checked:")
    assert str(torchs.value).splitlines()[0] in suggestion.unchecked
    assert "\n" not in suggestion.unchecked and suggestion.unchecked in str(suggestion)
    report.to_html(str(tmp_path / "audit.html"))
    assert suggestion.unchecked in (tmp_path / "audit.html").read_text()


class _Scales(torch.nn.Module):
    def forward(self, x):
        return x * 0.5 / 3.0 + 1.0  # Python scalars, each wrapped as a 0-d tensor


def test_by_module_keys_are_module_paths_and_the_tables_keep_the_scalar_row(tmp_path):
    from stridewidget.copies.audit.found import SCALARS_ROW

    model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 1), _Scales())
    report = sw.audit(model, torch.randn(2, 3, 4, 4))
    scalars = [c for c in report.copies if c.wrapped_scalar]
    assert scalars
    paths = {name or "(model)" for name, _ in model.named_modules()}  # torch's module paths
    rows = report.by_module()
    assert {row.key for row in rows} <= paths
    assert sum(row.count for row in rows) == len(report.copies)
    assert sum(row.bytes for row in rows) == report.total_bytes
    made_by = {c.module for c in scalars}
    assert made_by == {"1"}  # _Scales, as the copies themselves say
    assert sum(row.count for row in rows if row.key == "1") == len(scalars)
    assert SCALARS_ROW in [row.key for row in report.by_module(scalars_apart=True)]
    assert SCALARS_ROW in report.to_text().split("by module:")[1]
    report.to_html(str(tmp_path / "audit.html"), budget_s=0)
    assert SCALARS_ROW in (tmp_path / "audit.html").read_text().split("By module:")[1]


class _Tokens(torch.nn.Module):
    """A patch embedding whose tokens are batch-first or sequence-first (DETR-like)."""

    def __init__(self, view) -> None:
        super().__init__()
        self.patches = torch.nn.Conv2d(3, 16, 4, stride=4)
        self.norm = torch.nn.LayerNorm(16)
        self.view = view

    def forward(self, x):
        return self.norm(self.view(self.patches(x)))


_VIEWS = {
    "batch-first": lambda y: y.flatten(2).transpose(1, 2),
    "sequence-first": lambda y: y.flatten(2).permute(2, 0, 1),
}


@pytest.mark.parametrize("name", sorted(_VIEWS))
def test_the_channels_last_edit_is_offered_only_where_it_makes_the_view_contiguous(
    name, monkeypatch
):
    from test_audit_suggest_review import _QUIET, _fixed_measure

    from stridewidget.copies.audit import suggest

    # channels-last measured to help (fewer bytes, quiet timings): the edit may build on it
    monkeypatch.setattr(suggest, "measure", _fixed_measure(_QUIET, _QUIET, lambda n: n // 2))
    torch.manual_seed(0)
    model, x = _Tokens(_VIEWS[name]), torch.randn(2, 3, 16, 16)
    report = sw.audit(model, x)
    (channels_last,) = [s for s in report.suggestions if s.applied]
    (edit,) = [s for s in report.suggestions if not s.applied]
    assert channels_last.helps
    # torch's own: the same view of the convolution run channels-last
    nhwc = model.to(memory_format=torch.channels_last)
    made = nhwc.view(nhwc.patches(x.contiguous(memory_format=torch.channels_last)))
    assert ("run the patch convolution channels-last" in edit.fix) == made.is_contiguous()
    assert made.is_contiguous() == (name == "batch-first")


class _CheckpointsATorchModule(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layer = torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0)

    def forward(self, x):
        return checkpoint(self.layer, x, use_reentrant=False)


def test_a_recomputed_torch_module_is_placed_at_the_users_checkpoint_line(tmp_path):
    import inspect

    source, first = inspect.getsourcelines(_CheckpointsATorchModule.forward)
    (line,) = [first + i for i, text in enumerate(source) if "checkpoint(" in text]  # Python's
    torch.manual_seed(0)
    report = sw.audit(_CheckpointsATorchModule(), torch.randn(2, 5, 8).transpose(0, 1))
    recomputed = [c for c in report.copies if c.recompute]
    assert recomputed
    for item in recomputed:
        assert item.where.endswith(f"test_audit_round4.py:{line} (recompute)"), item.where
        assert item.detail.startswith("torch/nn/")  # the library line: the detail
    report.to_html(str(tmp_path / "audit.html"), budget_s=0)
    page = (tmp_path / "audit.html").read_text()
    assert "unknown&gt;" not in page and "<unknown>" not in report.to_text(max_rows=100)


class _InPlaceOnAView(torch.nn.Module):
    """``mul_`` on a slice: backward's CopySlices writes the slice's gradient back in place."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(64, 64)

    def forward(self, x):
        y = self.linear(x)
        y[:, :32].mul_(torch.sigmoid(y[:, 32:]).detach())
        return y


def _copy_slices_bytes(model, x) -> int:
    """The profiler's: bytes the data-moving ops run directly by CopySlices moved."""
    import math

    from torch.profiler import ProfilerActivity, profile

    output = model(x)
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        output.sum().backward()
    for p in model.parameters():
        p.grad = None
    moved = 0
    for event in prof.events():
        parent = event.cpu_parent
        if parent is None or "CopySlices" not in parent.name:
            continue
        if event.name in ("aten::copy_", "aten::clone"):
            source = event.input_shapes[1 if event.name == "aten::copy_" else 0]
            moved += math.prod(source) * x.element_size()
    return moved


def test_copy_slices_second_write_is_counted_in_the_note():
    torch.manual_seed(0)
    model, x = _InPlaceOnAView(), torch.randn(128, 64)
    report = sw.audit(model, x)
    copied = sum(c.bytes for c in report.copies if c.call.startswith("CopySlices"))
    written = sum(size for phase, call, size in report.in_place_writes if call == "CopySlices")
    assert written > 0 and copied + written == _copy_slices_bytes(model, x)
    assert "not counted as copies: 1 in-place write" in report.summary()
    assert "by CopySlices in backward" in report.note


def test_recompute_search_stops_at_the_frame_that_runs_backward():
    """The search for an activation-checkpoint recompute walks up to the frame running backward
    (``outermost``: the audit's ``gradients``) and no further: a checkpoint frame above it is
    not the recompute of this backward; below it, it is found as before."""
    from stridewidget.copies.audit import origins

    fake_checkpoint: dict = {}
    exec(
        compile("def run(f):\n    return f()\n", origins._CHECKPOINT_FILE, "exec"), fake_checkpoint
    )

    def backward_frame():
        return origins.recompute_line(backward_frame.__code__)

    assert fake_checkpoint["run"](backward_frame) is None  # above the backward frame: not walked
    found = fake_checkpoint["run"](lambda: origins.recompute_line(backward_frame.__code__))
    assert found is not None and found.filename == __file__
