"""sw.audit on real models (torchvision ResNet and ViT, a Hugging Face BERT, nn.TransformerEncoderLayer
fed a transposed batch) and on small modules: invariants checked against storage identity, the
copy tracker and the models' own module names, never hard-coded counts."""

from __future__ import annotations

import copy
import inspect
import os
import subprocess
import sys
import types

import models
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import stridewidget as sw
from stridewidget.copies.audit.found import SCALARS_ROW
from stridewidget.copies.ops import COPY_OPS

REAL_MODELS = {
    "resnet18": models.resnet18,
    "vit": models.vit,
    "bert": models.bert,
    "transformer-layer-transposed": models.transposed_batch_layer,
}


def _byte_range(layout: sw.Layout) -> tuple[int, int]:
    return layout.storage_address, layout.storage_address + layout.storage_nbytes


@pytest.fixture(scope="module", params=sorted(REAL_MODELS))
def audited(request):
    torch.manual_seed(0)
    model, inputs = REAL_MODELS[request.param]()
    return model, inputs, sw.audit(model, *inputs)


def test_every_copy_allocated_new_storage(audited):
    _, _, report = audited
    for item in report.copies:
        if item.hidden_in:  # made inside a kernel: no result reaches Python
            assert item.result == () and item.bytes > 0
            assert item.hidden_in.removeprefix("aten.") not in COPY_OPS
            continue
        assert item.event.kind == "copy" and item.event.allocated
        sources = [s for s in item.source if s is not None and s.storage_address]
        for result in (r for r in item.result if r is not None and r.storage_address):
            start, end = _byte_range(result)
            for source in sources:
                other_start, other_end = _byte_range(source)
                # storage identity by address range: the result shares no byte with an input
                assert end <= other_start or other_end <= start, item


def test_every_copy_has_its_layouts(audited):
    """The audit reads layouts only for events it can report; every reported copy has them: the
    inputs' of the call, and the results' of a copy the tracker saw (the forward ones as the
    tracker alone records them)."""
    model, inputs, report = audited
    for item in report.copies:
        assert item.source and all(isinstance(layout, sw.Layout) for layout in item.source)
        if not item.hidden_in:
            assert item.result and all(isinstance(layout, sw.Layout) for layout in item.result)
    with sw.track_copies() as log:
        model(*inputs)

    def described(layouts):  # what the report shows of a layout (its address differs per run)
        return [str(layout) for layout in layouts]

    tracked = [(described(e.inputs), described(e.outputs)) for e in log.copies]
    visible = [c for c in report.copies if c.phase == "forward" and not c.hidden_in]
    assert [(described(c.source), described(c.result)) for c in visible] == tracked


def test_totals_are_sums_of_events(audited):
    _, _, report = audited
    assert report.total_bytes == sum(item.bytes for item in report.copies)
    visible = [item for item in report.copies if not item.hidden_in]
    assert sum(item.bytes for item in visible) == sum(item.event.bytes_copied for item in visible)
    for table in (report.by_line(), report.by_module()):
        assert sum(row.bytes for row in table) == report.total_bytes
        assert sum(row.count for row in table) == len(report.copies)


def test_module_paths_exist(audited):
    model, _, report = audited
    names = dict(model.named_modules())
    assert all(item.module in names for item in report.copies)
    grouped = {"(model)", SCALARS_ROW}  # the root module, wrapped scalars on one row
    assert {row.key for row in report.by_module()} <= set(names) - {""} | grouped


def test_audit_leaves_gradients_hooks_and_forwards_alone(audited):
    model, _, _ = audited
    assert all(p.grad is None for p in model.parameters())
    assert not any(m._forward_hooks or m._forward_pre_hooks for m in model.modules())
    # the audit follows modules by wrapping each one's forward for the step: all taken back
    assert not any("forward" in m.__dict__ for m in model.modules())


class _Scripted(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(4, 4)

    def forward(self, x):
        return self.linear(x).t().reshape(-1)  # reshape of a transpose: copies


@pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning")
def test_a_torchscript_model_is_audited_and_left_as_it_was():
    """TorchScript runs its ops with no Python frame and refuses forward hooks: the audit follows
    its modules all the same, puts its copies at the line that called the audit, and gives each
    module its own scripted ``forward`` back."""
    model = torch.jit.script(_Scripted())
    forwards = {name: module.__dict__.get("forward") for name, module in model.named_modules()}
    report = sw.audit(model, torch.randn(4, 4), backward=False)  # the line copies point at
    line = inspect.currentframe().f_lineno - 1
    assert [(c.module, c.ops, c.bytes) for c in report.copies] == [("", ("aten.clone",), 64)]
    assert report.copies[0].where.endswith(f"{os.path.basename(__file__)}:{line}")
    assert all(
        module.__dict__.get("forward") is forwards[name] for name, module in model.named_modules()
    )


def test_modules_with_their_own_forward_are_followed_and_given_it_back():
    """A module whose instance has its own ``forward`` (as ``torch.compile``'s wrapper sets one)
    is followed like any other and keeps that exact function; a signature read through the
    wrapper during the step is the module's own."""
    signatures = []

    class Flatten(torch.nn.Module):
        def forward(self, x):
            return x.permute(0, 2, 3, 1).reshape(len(x), -1)  # copies

    class Reader(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = Flatten()

        def forward(self, x):
            signatures.append(str(inspect.signature(self.inner.forward)))
            return self.inner(x)

    def own_forward(x):
        return model[1].inner(x)

    model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 1), Reader())
    model[1].forward = own_forward
    report = sw.audit(model, torch.randn(2, 3, 4, 4), backward=False)
    assert model[1].__dict__["forward"] is own_forward
    assert not any("forward" in m.__dict__ for m in (model, model[0], model[1].inner))
    assert [c.module for c in report.copies] == ["1.inner"]
    model[1].__dict__.pop("forward")
    sw.audit(model, torch.randn(2, 3, 4, 4), backward=False)
    assert signatures == ["(x)"]


def test_forward_matches_the_copy_tracker():
    """The audit's forward copies are the tracker's, for the same call."""
    torch.manual_seed(0)
    model, inputs = models.bert()
    report = sw.audit(model, *inputs, backward=False)
    with sw.track_copies() as log:
        model(*inputs)
    visible = [c for c in report.copies if not c.hidden_in]
    assert [c.event.call for c in visible] == [e.call for e in log.copies]
    assert sum(c.bytes for c in visible) == sum(e.bytes_copied for e in log.copies)
    assert {c.phase for c in report.copies} <= {"forward"}


class _GappedLinear(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(8, 4)

    def forward(self, x):
        return self.linear(x[:, ::2])  # a gapped operand: addmm clones it inside its kernel


@pytest.fixture(params=["legacy collector", "torch.profiler"])
def collector(request, monkeypatch):
    """Each test of copies hidden inside kernels runs with both of the audit's profiler sessions:
    the autograd profiler's legacy collector (CPU steps, bytes from allocations) and
    ``torch.profiler`` (any device, bytes from shapes and dtypes)."""
    from stridewidget.copies.audit import profiler as _audit

    if request.param == "legacy collector":
        assert _audit._legacy_profiler_usable({torch.device("cpu")})  # this torch still has it
    else:
        monkeypatch.setattr(_audit, "_legacy_profiler_usable", lambda devices: False)
    return request.param


def _facts(report) -> list[tuple]:
    return [
        (c.phase, c.module, c.where, c.call, c.ops, c.bytes, c.hidden_in, c.source, c.result)
        for c in report.copies
    ]


@pytest.mark.parametrize("name", ["transformer-layer-transposed", "bert"])
def test_both_collectors_report_the_same_copies(name, monkeypatch):
    """Same copies, bytes, places and layouts from either profiler session, on real models whose
    kernels hide clones (attention backward) and dtype conversions (scalar arguments)."""
    from stridewidget.copies.audit import profiler as _audit

    torch.manual_seed(0)
    model, inputs = REAL_MODELS[name]()
    legacy = sw.audit(model, *inputs)
    monkeypatch.setattr(_audit, "_legacy_profiler_usable", lambda devices: False)
    kineto = sw.audit(model, *inputs)
    assert any(c.hidden_in for c in legacy.copies)
    assert _facts(legacy) == _facts(kineto)


def test_profiler_dtype_numbers_are_torchs():
    """``torch.profiler`` records a ``dtype`` argument as a ``c10::ScalarType`` number; the audit's
    table of their sizes is checked against torch's own dtypes, through the profiler."""
    from stridewidget.copies.audit.profiler import _SCALAR_TYPE_ITEMSIZE

    dtypes = [
        torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.float16,
        torch.float64, torch.complex64, torch.complex128, torch.bool, torch.bfloat16,
    ]  # fmt: skip
    x = torch.ones(3, dtype=torch.float32)
    with torch.profiler.profile(
        activities=[torch.profiler.ProfilerActivity.CPU], record_shapes=True
    ) as profile:
        for dtype in dtypes:
            x.to(dtype)
    numbers = [
        event.concrete_inputs()[1]
        for event in profile.profiler.kineto_results.events()
        if event.name() == "aten::_to_copy"
    ]
    assert len(numbers) == len(dtypes)
    assert [_SCALAR_TYPE_ITEMSIZE[n] for n in numbers] == [d.itemsize for d in dtypes]


def test_copies_hidden_inside_an_op_are_counted_and_named(collector):
    x = torch.randn(5, 16)
    gapped = x[:, ::2]
    with sw.track_copies() as log:  # the tracker alone does not see this copy
        torch.nn.functional.linear(gapped, torch.randn(4, 8), torch.randn(4))
    assert log.copies == []
    report = sw.audit(_GappedLinear(), x)
    hidden = [c for c in report.copies if c.hidden_in]
    forward = [c for c in hidden if c.phase == "forward"]
    assert forward and all(c.hidden_in == "aten.addmm" and c.module == "linear" for c in forward)
    assert sum(c.bytes for c in forward) == gapped.numel() * gapped.element_size()
    assert "aten.clone in aten.addmm" in repr(report)


class _TwoGapped(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.first = _GappedLinear()
        self.second = torch.nn.Linear(2, 3)

    def forward(self, x):
        hidden = torch.relu(self.first(x)).exp()  # ops that can hide a copy and hide none
        return self.second(hidden[:, ::2])  # another gapped operand: a second clone in addmm


def test_each_hidden_copy_belongs_to_its_own_call(collector):
    """The profiler's events are paired with the ops that ran them, in order, in forward and in
    backward: each clone lands on its own call, module and line, with its operand's bytes."""
    torch.manual_seed(0)
    model, x = _TwoGapped(), torch.randn(5, 16)
    with torch.no_grad():
        hidden = torch.relu(model.first(x)).exp()
    expected = {
        "first.linear": x[:, ::2].numel() * x.element_size(),
        "second": hidden[:, ::2].numel() * hidden.element_size(),
    }
    report = sw.audit(model, x)
    forward = [c for c in report.copies if c.hidden_in and c.phase == "forward"]
    assert {c.module: c.bytes for c in forward} == expected
    assert all(c.hidden_in == "aten.addmm" and c.call == "F.linear" for c in forward)
    assert len({c.detail for c in forward}) == 1  # both in nn.Linear.forward's one line,
    assert len({c.where for c in forward}) == 2  # called from two lines of the model
    assert len({c.event.index for c in forward}) == 2
    for item in forward:  # the call the copy is charged to read the gapped operand
        assert any(s is not None and not s.is_contiguous for s in item.source)


class _Flip(torch.nn.Module):
    def forward(self, x):
        return x.flip(0) * 2


def test_backward_copies_point_at_the_forward_line(collector):
    """flip's gradient is a flip: a backward copy whose line is the forward flip's."""
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), _Flip())
    report = sw.audit(model, torch.randn(3, 4))
    lines, start = inspect.getsourcelines(_Flip.forward)
    flip_line = start + next(i for i, text in enumerate(lines) if ".flip(" in text)
    backward = [c for c in report.copies if c.phase == "backward" and "aten.flip" in c.ops]
    forward = [c for c in report.copies if c.phase == "forward" and "aten.flip" in c.ops]
    assert backward and forward
    for item in backward + forward:
        assert item.where.endswith(f"test_audit.py:{flip_line}")
        assert item.module == "1"
    assert all("FlipBackward" in c.call for c in backward)


def test_suggestions_are_measured_and_outputs_match():
    torch.manual_seed(0)
    model, inputs = models.transposed_batch_layer()
    report = sw.audit(model, *inputs)
    suggestions = report.suggestions
    assert suggestions, "a non-contiguous input is a candidate fix"
    for suggestion in suggestions:
        assert suggestion.outputs_match
        before = suggestion.measured["before"]
        assert (before.copies, before.bytes) == (len(report.copies), report.total_bytes)
        assert suggestion.measured["after"].seconds > 0
        assert suggestion.fix and suggestion.where and suggestion.what


def test_channels_last_suggestion_on_a_convolution_stack():
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3), torch.nn.BatchNorm2d(8), torch.nn.ReLU(), torch.nn.Conv2d(8, 4, 1)
    )
    strides = {name: t.stride() for name, t in model.state_dict().items()}
    report = sw.audit(model, torch.randn(2, 3, 12, 12))
    (suggestion,) = [s for s in report.suggestions if "channels_last" in s.fix]
    assert suggestion.outputs_match
    # measured on copies: the user's model keeps its layout
    assert {name: t.stride() for name, t in model.state_dict().items()} == strides


def test_no_copies_says_so():
    report = sw.audit(torch.nn.Linear(4, 3), torch.randn(2, 4))
    assert report.copies == [] and report.total_bytes == 0
    assert "no copies" in repr(report) and "no copies" in report._repr_html_()
    assert report.by_line() == [] and report.by_module() == []


def test_model_that_raises():
    class Broken(torch.nn.Module):
        def forward(self, x):
            raise ValueError("shapes do not fit")

    model = Broken()
    with pytest.raises(RuntimeError, match="raised ValueError: shapes do not fit") as caught:
        sw.audit(model, torch.randn(2))
    assert isinstance(caught.value.__cause__, ValueError)
    assert not model._forward_hooks and not model._forward_pre_hooks
    assert "forward" not in model.__dict__  # its forward is its class's again
    with sw.track_copies() as log:  # no mode was left behind
        torch.ones(2).flip(0)
    assert len(log.copies) == 1
    # the audit switches this thread's profiler events off between ops: they are back on
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as profile:
        torch.ones(2).flip(0)
    assert "aten::flip" in {event.name for event in profile.events()}


def test_audit_inside_the_users_own_profiler():
    """Under a ``torch.profiler`` the user runs, the audit starts no session of its own (torch
    keeps one per process: it would end the user's and drop its events): the user's session
    is still the one running afterwards, and the report says copies inside kernels were not
    searched for (tests/test_audit_trust.py checks the user's profile)."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]):
        with pytest.warns(UserWarning, match="not searched"):
            report = sw.audit(_GappedLinear(), torch.randn(5, 16))
        assert torch.autograd._profiler_enabled()  # the user's session runs on
    assert "not searched" in report.note
    assert not torch.autograd._profiler_enabled()


def test_inputs_on_the_wrong_device():
    with pytest.raises(sw.LayoutError, match=r"input 0 is on meta .* parameters are on cpu"):
        sw.audit(torch.nn.Linear(4, 3), torch.randn(2, 4, device="meta"))


def test_not_a_model():
    with pytest.raises(TypeError, match=r"expected a torch\.nn\.Module"):
        sw.audit(torch.randn(3), torch.randn(3))


def test_non_tensor_outputs():
    class Counts(torch.nn.Module):
        def __init__(self):
            super().__init__()
            # a trainable parameter, so the step gets past the frozen-model check to the outputs
            self.scale = torch.nn.Parameter(torch.ones(1))

        def forward(self, x):
            return {"count": int(x.numel()), "name": "x"}

    with pytest.raises(TypeError, match="loss_fn="):
        sw.audit(Counts(), torch.randn(3))
    assert sw.audit(Counts(), torch.randn(3), backward=False).copies == []

    class Pair(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = torch.nn.Linear(3, 3)

        def forward(self, x):
            y = self.linear(x)
            return {"loss": (y.t().reshape(-1) ** 2).sum(), "hidden": y}

    # a "loss" entry is picked; loss_fn picks anything else
    assert sw.audit(Pair(), torch.randn(2, 3)).copies
    report = sw.audit(Pair(), torch.randn(2, 3), loss_fn=lambda out: out["hidden"].sum())
    assert report.copies


def test_html_is_standalone_and_escaped(tmp_path):
    model = torch.nn.Sequential()
    model.add_module("<img src=x onerror=alert(1)>", _Flip())
    report = sw.audit(model, torch.randn(3, 2), backward=False)
    path = tmp_path / "audit.html"
    report.to_html(str(path))
    page = path.read_text()
    assert page.startswith("<!DOCTYPE html>") and "<svg" in page
    assert "<img src=x" not in page and "&lt;img src=x" in page
    assert "http://" not in page.replace("http://www.w3.org/2000/svg", "")
    assert "https://" not in page
    assert "innerHTML" not in page and "eval(" not in page  # the sort script only moves rows


def test_command_line(tmp_path):
    out = tmp_path / "audit.html"
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "stridewidget.audit",
            "torch.nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0)",
            "--input",
            "torch.randn(2, 6, 16).transpose(0, 1)",
            "--html",
            str(out),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "by line:" in run.stdout and "by module:" in run.stdout and "self_attn" in run.stdout
    assert out.read_text().startswith("<!DOCTYPE html>")


def _command_line(*arguments, **environment):
    return subprocess.run(
        [sys.executable, "-m", "stridewidget.audit", *arguments],
        capture_output=True,
        text=True,
        env={**os.environ, **environment},
    )


def test_command_line_names_a_package_built_for_another_torch(tmp_path):
    """A package whose compiled operators do not register with this torch (PyPI's torchvision
    wheel next to the CPU torch) fails on import with "operator ...::nms does not exist": the
    command line says so in one line, with what to do, instead of a traceback."""
    package = tmp_path / "mismatchedvision"
    package.mkdir()
    (package / "__init__.py").write_text(
        'raise RuntimeError("operator mismatchedvision::nms does not exist")\n'
    )
    run = _command_line(
        "mismatchedvision.models.net()", "--input", "torch.randn(1, 3)", PYTHONPATH=str(tmp_path)
    )
    assert run.returncode != 0 and "Traceback" not in run.stderr
    (line,) = [text for text in run.stderr.splitlines() if text.startswith("stridewidget.audit")]
    assert "operator mismatchedvision::nms does not exist" in line
    assert "built for another torch" in line and torch.__version__ in line
    assert "install the mismatchedvision release made for torch" in line


def test_command_line_with_the_installed_torchvision():
    """The issue's own command: with a torchvision that matches torch it audits, with one that
    does not it fails in one line (no traceback either way)."""
    run = _command_line(
        "torchvision.models.resnet18()", "--input", "torch.randn(1, 3, 32, 32)", "--no-backward"
    )
    assert "Traceback" not in run.stderr
    if run.returncode == 0:
        assert "by module:" in run.stdout and "layer1" in run.stdout
    else:
        assert "torchvision" in run.stderr and "built for another torch" in run.stderr


def test_importing_the_command_line_keeps_sw_audit_callable():
    import stridewidget.audit  # noqa: F401

    assert callable(sw.audit)
    assert sw.audit(torch.nn.Linear(2, 2), torch.randn(1, 2)).copies == []


def test_a_fix_that_changes_results_is_caught():
    """The outputs check is real: a 'fix' that changes the values is reported as not matching."""
    from stridewidget.copies.audit.suggest import measure as _measure

    def scale_inputs(model, inputs):
        return model, tuple(x * 2 for x in inputs)

    suggestion = _measure(
        torch.nn.Linear(3, 2),
        (torch.randn(4, 3),),
        True,
        None,
        "inputs",
        "scale",
        "x * 2",
        scale_inputs,
        round_seconds=0.002,
    )
    assert not suggestion.outputs_match and not suggestion.helps


class _TransposedWeight(torch.nn.Module):
    """Keeps its weight as (out, in) and copies its transpose every step."""

    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(6, 5))

    def forward(self, x):
        return x @ self.weight.t().contiguous()


class _PermuteReshape(torch.nn.Module):
    """A permute + reshape of its input, and one of a tensor it makes: both copy."""

    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(4, 4)

    def forward(self, x):  # x: (batch, channels=4, length)
        rows = self.linear(x.permute(0, 2, 1).reshape(-1, 4))
        return rows.view(len(x), -1, 4).permute(0, 2, 1).reshape(len(x), -1)


def _only(suggestions, text):
    (found,) = [s for s in suggestions if text in s.fix]
    return found


def test_transposed_weight_kept_in_its_used_layout():
    torch.manual_seed(0)
    model = _TransposedWeight()
    strides = model.weight.stride()
    report = sw.audit(model, torch.randn(3, 5))
    suggestion = _only(report.suggestions, 'get_parameter("weight")')
    assert suggestion.applied and suggestion.outputs_match
    before, after = suggestion.measured["before"], suggestion.measured["after"]
    assert (before.copies, before.bytes) == (len(report.copies), report.total_bytes)
    # the copy of weight.t() is gone, measured by re-auditing, not assumed
    copied = [c for c in report.copies if c.call == "Tensor.contiguous"]
    assert copied and after.bytes <= before.bytes - sum(c.bytes for c in copied)
    assert after.copies < before.copies and suggestion.helps
    assert model.weight.stride() == strides  # applied to a copy: the user's model is untouched
    # the fix's code does what it says on a copy of the model
    fixed = copy.deepcopy(model)
    exec(suggestion.fix, {"torch": torch, "model": fixed})
    assert fixed.weight.t().is_contiguous() and torch.equal(fixed.weight, model.weight)


def test_permute_reshape_of_an_input_stays_a_view_and_one_inside_is_not_faked():
    torch.manual_seed(0)
    report = sw.audit(_PermuteReshape(), torch.randn(2, 4, 3))
    suggestions = [s for s in report.suggestions if s.where.startswith("Tensor.reshape")]
    (stored,) = [s for s in suggestions if s.applied]
    assert stored.fix.startswith("inputs[0] = inputs[0].permute(")
    assert stored.outputs_match
    before, after = stored.measured["before"], stored.measured["after"]
    assert after.copies < before.copies and after.bytes < before.bytes
    (inside,) = [s for s in suggestions if not s.applied]
    assert inside.what.startswith("not applied automatically")
    assert set(inside.measured) == {"before"} and not inside.helps
    assert inside.measured["before"].bytes == report.total_bytes
    assert "after:" not in str(inside)


def test_a_relayout_that_changes_values_is_caught():
    """The same measurement reports a relayout that scrambles a weight as not matching."""
    from stridewidget.copies.audit.suggest import measure as _measure

    def scrambled(model, inputs):
        with torch.no_grad():
            model.weight.data = model.weight.data.t().contiguous().view(model.weight.shape)
        return model, inputs

    suggestion = _measure(
        _TransposedWeight(),
        (torch.randn(3, 5),),
        True,
        None,
        "w",
        "w",
        "w",
        scrambled,
        round_seconds=0.002,
    )
    assert not suggestion.outputs_match and not suggestion.helps


@settings(max_examples=60, deadline=None)
@given(
    shape=st.lists(st.integers(1, 4), min_size=1, max_size=4),
    data=st.data(),
)
def test_view_order_finds_the_permutation(shape, data):
    """Checked against brute force: every element of the view sits where the base, permuted by
    the order found, puts it; and storing the base for that order makes the view contiguous."""
    from stridewidget.copies.audit.fixes import laid_out_for as _laid_out_for
    from stridewidget.copies.audit.fixes import view_order as _view_order

    order = tuple(data.draw(st.permutations(range(len(shape)))))
    base = torch.arange(float(torch.Size(shape).numel())).reshape(shape)
    if data.draw(st.booleans()):  # a base that is itself a transpose
        base = base.transpose(0, -1)
    view = base.permute(order)
    found = _view_order(sw.inspect(view), tuple(base.shape), base.stride(), 0)
    assert found is not None
    candidate = base.permute(found)
    for index in torch.cartesian_prod(*(torch.arange(n) for n in view.shape)).reshape(
        -1, view.dim()
    ):
        index = tuple(index.tolist())
        assert view[index] == candidate[index]
    assert candidate.shape == view.shape
    stored = _laid_out_for(base, found)
    assert torch.equal(stored, base) and stored.permute(found).is_contiguous()
    assert _view_order(sw.inspect(view), tuple(base.shape), base.stride(), 1) is None


class _FakeEvent:
    """A profiler event (``torch.profiler``) or record (legacy collector): each accessor the
    audit reads returns the value given for it."""

    def __init__(self, **values):
        self._values = values

    def __getattr__(self, name):
        if name.startswith("_") or name not in self._values:
            raise AttributeError(name)
        return lambda: self._values[name]


def _ProfilerEvent(name, start, end, shapes=(), dtypes=(), **more):
    """A ``torch.profiler`` event on thread 1; ``more``: other accessors (``nbytes``)."""
    return _FakeEvent(
        name=name,
        start_ns=start,
        end_ns=end,
        start_thread_id=1,
        shapes=list(shapes),
        dtypes=list(dtypes),
        concrete_inputs=[],
        **more,
    )


def test_profiler_events_pair_with_their_ops_past_missing_and_stray_events():
    """An op that recorded no event is passed over; an event no op is waiting for is left out
    without shifting the pairings after it."""
    from stridewidget.copies.audit.profiler import THREAD_MARK as _THREAD_MARK
    from stridewidget.copies.audit.profiler import Marked as _Marked
    from stridewidget.copies.audit.profiler import hidden_copies_kineto as _hidden_copies

    marked = _Marked({7: [(0, "aten::mm"), (1, "aten::unobserved"), (2, "aten::addmm")]})
    clone_shape = [4, 3]
    events = [
        _ProfilerEvent("aten::before_the_mark", 0, 5),  # collection is on by default
        _ProfilerEvent(f"{_THREAD_MARK}7", 10, 11),
        _ProfilerEvent("aten::mm", 20, 30),
        _ProfilerEvent("aten::stray", 31, 32),  # named by no op still to come
        _ProfilerEvent("aten::addmm", 40, 60),
        _ProfilerEvent("aten::clone", 45, 55, [clone_shape, []], ["float", ""]),
        _ProfilerEvent("aten::clone", 50, 52, [clone_shape, []], ["float", ""]),  # inside it
    ]
    profile = types.SimpleNamespace(
        profiler=types.SimpleNamespace(
            kineto_results=types.SimpleNamespace(events=lambda: list(reversed(events)))
        )
    )
    expected_bytes = torch.empty(clone_shape, dtype=torch.float32).nbytes
    assert _hidden_copies(profile.profiler.kineto_results.events(), marked) == {
        2: [("aten.addmm", "aten.clone", expected_bytes)]
    }


def _LegacyEvent(kind, name="", handle=0, usage=0):
    return _FakeEvent(kind=kind, name=name, handle=handle, cpu_memory_usage=usage)


def _op(name, handle, *inside):
    return [_LegacyEvent("push", name, handle), *inside, _LegacyEvent("pop", handle=handle)]


def test_legacy_records_pair_with_their_ops_and_take_what_stays_allocated():
    """The legacy collector's records nest by push/pop: pairing as with ``torch.profiler``
    (missing and stray events), a copy's bytes what stays allocated of what it allocated inside
    it (a temporary freed inside it adds nothing), a clone inside a clone counted once,
    allocations outside copies and frees after them ignored."""
    from stridewidget.copies.audit.profiler import THREAD_MARK as _THREAD_MARK
    from stridewidget.copies.audit.profiler import Marked as _Marked
    from stridewidget.copies.audit.profiler import hidden_copies_legacy as _hidden_copies_legacy

    marked = _Marked({7: [(0, "aten::mm"), (1, "aten::unobserved"), (2, "aten::addmm")]})
    alloc = _LegacyEvent("memory_alloc", usage=48)
    records = [
        [
            _LegacyEvent("mark", "__start_profile"),
            *_op("aten::before_the_mark", 1, *_op("aten::clone", 2, alloc)),  # not the audit's
            *_op(f"{_THREAD_MARK}7", 3),
            *_op("aten::mm", 4, _LegacyEvent("memory_alloc", usage=16)),
            *_op("aten::stray", 5, *_op("aten::clone", 6, alloc)),  # named by no op to come
            *_op(
                "aten::addmm",
                7,
                _LegacyEvent("memory_alloc", usage=64),  # addmm's own result: not a copy
                *_op(
                    "aten::clone",
                    8,
                    *_op("aten::empty_like", 9, _LegacyEvent("memory_alloc", usage=96)),
                    *_op("aten::clone", 10, _LegacyEvent("memory_alloc", usage=12)),
                    _LegacyEvent("memory_alloc", usage=-12),  # a temporary
                ),
                *_op("aten::_to_copy", 11, _LegacyEvent("memory_alloc", usage=8)),
            ),
            _LegacyEvent("memory_alloc", usage=-8),
        ]
    ]
    assert _hidden_copies_legacy(records, marked) == {
        2: [("aten.addmm", "aten.clone", 96), ("aten.addmm", "aten._to_copy", 8)]
    }
