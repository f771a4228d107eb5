"""The third review's findings on ``sw.audit``, each checked against an independent answer: a
``torch.compile`` backend that counts its calls, ``torch.profiler`` of the plain step, the state
before and after (``torch.equal``, raw bytes, identities), the error of the user's own call."""

from __future__ import annotations

import sys
import types
import warnings

import models
import pytest
import torch
from torch import nn
from torch.profiler import ProfilerActivity, profile

import stridewidget as sw
from stridewidget import cli
from stridewidget.copies.audit.step import run_step

# --- compiled functions inside a model: warned and noted, never audited silently as eager ---------


def _audited(model, *inputs, **options):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = sw.audit(model, *inputs, **options)
    said = [str(w.message) for w in caught if "torch.compile'd" in str(w.message)]
    return report, said


class _CompiledAttribute(nn.Module):
    def __init__(self):
        super().__init__()
        self.l = nn.Linear(8, 8)
        self.f = torch.compile(lambda t: t.t().contiguous() * 2, backend="eager")

    def forward(self, x):
        return self.l(self.f(x))


class _CompiledForward(nn.Module):
    def __init__(self):
        super().__init__()
        self.l = nn.Linear(8, 8)

    @torch.compile(backend="eager")
    def forward(self, x):
        return self.l(x.t().contiguous())


@pytest.mark.parametrize("model", [_CompiledAttribute, _CompiledForward])
def test_a_compiled_function_attribute_or_forward_is_warned_and_noted(model):
    report, said = _audited(model(), torch.randn(8, 8))
    assert len(said) == 1 and "eager code was audited" in said[0]
    assert "torch.compile'd" in report.note and report.note in report.summary()


_backend_calls: list[int] = []


def _counting_backend(gm, example_inputs):
    _backend_calls.append(1)
    return gm


@torch.compile(backend=_counting_backend)
def _compiled_helper(t):
    return t.t().contiguous() * 2


class _CallsACompiledFunction(nn.Module):
    def __init__(self):
        super().__init__()
        self.l = nn.Linear(8, 8)

    def forward(self, x):
        return self.l(_compiled_helper(x))


def test_a_compiled_function_only_called_is_seen_at_run_time_and_compiles_afterwards():
    """Nothing on the model says that forward calls a compiled function: the audit sees dynamo
    skip it while the step runs.  The oracle for "left as found": torch.compile's backend is
    called on the first plain call after the audit, as it would be without the audit (dynamo
    marks a code it skipped under a dispatch mode to be skipped for good)."""
    x = torch.randn(8, 8)
    report, said = _audited(_CallsACompiledFunction(), x)
    assert len(said) == 1 and "_compiled_helper" in said[0] and "ran eagerly" in said[0]
    assert "_compiled_helper" in report.note
    before = len(_backend_calls)
    _CallsACompiledFunction()(x)
    assert len(_backend_calls) == before + 1  # compiled on its first plain call


def test_an_eager_model_gets_no_compile_note():
    report, said = _audited(nn.Linear(4, 4), torch.randn(2, 4))
    assert not said and report.note == ""


# --- a sparse gradient: no copy the plain step does not make, never dense bytes ------------------


def test_a_sparse_embedding_reports_only_the_plain_steps_copies():
    """The oracle: the ATen ops ``torch.profiler`` sees in the plain step (AccumulateGrad shares
    a sparse gradient's indices and values: no clone there)."""
    model, inputs = nn.Embedding(10, 4, sparse=True), (torch.tensor([1, 2]),)
    plain = models.profiled_op_list(lambda: run_step(model, inputs, True, None))
    assert "aten::clone" not in plain  # torch's behaviour the rule rests on
    report = sw.audit(model, *inputs)
    reported = {op.replace("aten.", "aten::") for c in report.copies for op in c.ops}
    assert reported <= set(plain), reported - set(plain)
    assert {c.phase for c in report.copies} == {"forward"}


def test_a_sparse_copy_counts_its_indices_and_values_not_the_dense_size():
    dense = torch.zeros(20, 10)
    dense[2, 3], dense[7, 1], dense[19, 9] = 1.0, 2.0, 3.0
    sparse = dense.to_sparse()
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        sparse.clone()
    (allocated,) = [e.cpu_memory_usage for e in prof.events() if e.name == "aten::clone"]
    with sw.track_copies() as log:
        sparse.clone()
    (event,) = log.events
    assert event.bytes_copied == allocated != dense.nbytes


# --- inputs and plain attributes left as found ----------------------------------------------------


class _Stateful(nn.Module):
    def __init__(self):
        super().__init__()
        self.l = nn.Linear(4, 4)
        self.calls = 0
        self.cache = None

    def forward(self, x, extra=None):
        self.calls += 1
        x.mul_(2)
        if extra is not None:
            extra["scale"][0].add_(1)
            self.l.seen = True  # a new attribute on a submodule
        self.cache = x.detach().clone()
        return self.l(x) * (1 if extra is None else extra["scale"][0])


def test_inputs_written_in_place_and_rebound_attributes_are_put_back():
    model = _Stateful()
    x, scale, untouched = torch.randn(3, 4), torch.randn(1), torch.randn(2)
    x_bytes, scale_bytes = x.view(torch.uint8).clone(), scale.view(torch.uint8).clone()
    attributes = {name: dict(vars(m)) for name, m in model.named_modules()}
    untouched_version = untouched._version
    kwargs = {"extra": {"scale": [scale], "unused": untouched}}
    sw.audit(model, x, model_kwargs=kwargs)
    assert torch.equal(x.view(torch.uint8), x_bytes)  # raw bytes: bit for bit
    assert torch.equal(scale.view(torch.uint8), scale_bytes)
    assert untouched._version == untouched_version  # not written back: it was not written
    for name, module in model.named_modules():
        now, found = vars(module), attributes[name]
        assert now.keys() == found.keys(), (name, now.keys() ^ found.keys())
        assert all(now[k] is found[k] for k in found), name
    assert model.calls == 0 and model.cache is None


def test_the_suggestions_steps_leave_inputs_as_found_too():
    model = _Stateful()
    x = torch.randn(4, 3).t()  # transposed: a copy to suggest a fix for
    x0 = x.clone()
    report = sw.audit(model, x)
    report.suggestions  # noqa: B018  (re-runs the step, measured)
    assert torch.equal(x, x0) and model.calls == 0


# --- models the audit cannot train, or with no bytes -------------------------------------------


def test_a_quantized_model_is_said_quantized_not_frozen():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = torch.ao.quantization.quantize_dynamic(
            nn.Sequential(nn.Linear(4, 4)), {nn.Linear}, dtype=torch.qint8
        )
    with pytest.raises(ValueError) as raised:
        sw.audit(model, torch.randn(2, 4))
    message = str(raised.value)
    assert "quantized" in message and "backward=False" in message
    assert "requires_grad_" not in message and "\n" not in message
    sw.audit(model, torch.randn(2, 4), backward=False)  # the advice works


def test_a_meta_model_is_audited_and_left_on_meta():
    """Meta tensors have no bytes to compare: the oracle is the plain step's profiled ops."""
    model, inputs = nn.Linear(4, 4, device="meta"), (torch.randn(2, 4, device="meta"),)
    plain = models.profiled_op_list(lambda: run_step(model, inputs, True, None))
    report = sw.audit(model, *inputs)
    reported = {op.replace("aten.", "aten::") for c in report.copies for op in c.ops}
    assert reported <= set(plain), reported - set(plain)
    assert all(p.device.type == "meta" and p.grad is None for p in model.parameters())


# --- errors of the user's loss_fn and backward: one line, where, the original as cause ----------


def _raised(call):
    try:
        call()
    except Exception as error:
        return error
    raise AssertionError("no error")


def test_an_error_in_loss_fn_is_wrapped_naming_loss_fn():
    model, x = nn.Linear(4, 4), torch.randn(2, 4)

    def loss_fn(output):
        return output["x"]

    original = _raised(lambda: loss_fn(model(x)))  # the oracle: the user's own call
    error = _raised(lambda: sw.audit(model, x, loss_fn=loss_fn))
    assert "loss_fn" in str(error) and "\n" not in str(error)
    assert type(error.__cause__) is type(original) and str(error.__cause__) == str(original)


class _BadBackward(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        return a * 1

    @staticmethod
    def backward(ctx, grad):
        raise ValueError("bad backward")


class _RaisesInBackward(nn.Module):
    def __init__(self):
        super().__init__()
        self.l = nn.Linear(4, 4)

    def forward(self, x):
        return _BadBackward.apply(self.l(x))


def test_an_error_in_backward_is_wrapped_naming_backward():
    model, x = _RaisesInBackward(), torch.randn(2, 4)
    original = _raised(lambda: model(x).sum().backward())
    error = _raised(lambda: sw.audit(model, x))
    assert isinstance(error, RuntimeError) and "backward" in str(error)
    assert type(error.__cause__) is type(original) and str(error.__cause__) == str(original)
    assert all(p.grad is None for p in model.parameters())


# --- the command lines --------------------------------------------------------------------------


def test_a_lazy_import_failing_in_torch_names_the_package_at_fault(monkeypatch, capsys):
    """What ``transformers.BertModel`` raises when torchvision's operators do not register: its
    own ImportError, the operator error as its cause."""
    lazy = types.ModuleType("lazypkg")

    def __getattr__(name):
        try:
            raise RuntimeError("operator torchvision::nms does not exist")
        except RuntimeError as cause:
            raise ModuleNotFoundError(f"Could not import module {name!r}") from cause

    lazy.__getattr__ = __getattr__
    monkeypatch.setitem(sys.modules, "lazypkg", lazy)
    with pytest.raises(SystemExit) as raised:
        cli.audit_main(["lazypkg.Model()", "--input", "torch.randn(2)"])
    message = str(raised.value.code)
    assert "torchvision" in message and "built for another torch" in message
    assert "lazypkg imports torchvision" in message and "\n" not in message


def test_audit_as_a_subcommand_points_to_its_own_command():
    with pytest.raises(SystemExit) as raised:
        cli.main(["audit", "torch.nn.Linear(2, 2)", "--input", "torch.randn(2, 2)"])
    message = str(raised.value.code)
    assert "python -m stridewidget.audit" in message and "\n" not in message


def test_a_single_copy_is_one_copy_in_the_summary():
    class OneCopy(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin = torch.nn.Linear(4, 4)

        def forward(self, x):
            return self.lin(x.t().contiguous())

    report = sw.audit(OneCopy(), torch.randn(4, 4), backward=False)
    forward = [c for c in report.copies if c.phase == "forward"]
    assert len(forward) == 1  # the .contiguous() of the transposed input
    assert "forward: 1 copy," in report.summary() and "1 copies" not in report.summary()
