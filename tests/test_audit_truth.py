"""sw.audit reports every copy the real step makes and only those: copies inside in-place calls,
the kernels the plain step runs, copies into buffers made in the step, the model left as found.
Oracles: torch.profiler's op list and allocations, the model's own state before and after."""

from __future__ import annotations

from collections import Counter

import pytest
import torch
import torch.nn.functional as F
from models import profiled_op_list
from torch.profiler import ProfilerActivity, profile

import stridewidget as sw
from stridewidget.copies.audit.found import SCALARS_ROW

INPLACE_ACTIVATIONS = {
    "silu": lambda h: F.silu(h, inplace=True),
    "hardswish": lambda h: F.hardswish(h, inplace=True),
    "hardsigmoid": lambda h: F.hardsigmoid(h, inplace=True),
    "mish": lambda h: F.mish(h, inplace=True),
    "sin_": lambda h: h.sin_(),
}


class _InPlaceAfterLinear(torch.nn.Module):
    def __init__(self, activation) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(8, 8)
        self.scale = torch.nn.Parameter(torch.randn(8))
        self.activation = activation

    def forward(self, x):
        h = self.linear(x)
        h = self.activation(h)
        return h.mul_(self.scale)  # scale requires grad: autograd clones h first


def _clone_bytes_in_forward(model, inputs) -> int:
    """Bytes the plain forward allocates inside its outermost ``aten::clone`` ops (profiler)."""
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        model(*inputs)
    total = 0
    for event in prof.events():
        parent = event.cpu_parent
        while parent is not None and parent.name != "aten::clone":
            parent = parent.cpu_parent
        if event.name == "aten::clone" and parent is None:
            total += event.cpu_memory_usage
    return total


@pytest.mark.parametrize("name", sorted(INPLACE_ACTIVATIONS))
def test_a_copy_inside_an_in_place_call_is_a_copy(name):
    model = _InPlaceAfterLinear(INPLACE_ACTIVATIONS[name])
    x = torch.randn(4, 8)
    expected = _clone_bytes_in_forward(model, (x,))
    assert expected > 0  # the profiler sees autograd's clones
    report = sw.audit(model, x)
    forward = [c for c in report.copies if c.phase == "forward"]
    assert sum(c.bytes for c in forward) == expected
    assert forward and all(c.event.kind == "copy" and c.event.wrote_input for c in forward)


def test_an_in_place_call_that_copied_nothing_stays_in_place():
    x = torch.randn(4, 8)
    with torch.no_grad(), sw.track_copies() as log:
        F.silu(x, inplace=True)  # no autograd: nothing to save, no clone
        x.add_(1)
    assert [e.kind for e in log.events] == ["in-place", "in-place"]
    h = torch.randn(4, 8, requires_grad=True) * 1
    with sw.track_copies() as log:
        F.silu(h, inplace=True)
    (event,) = log.events
    assert (event.kind, event.wrote_input) == ("copy", True)
    assert event.bytes_copied == h.numel() * h.element_size()


class _CompositeKernels(torch.nn.Module):
    """Ops with a CompositeImplicitAutograd decomposition *and* a CPU kernel of their own."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(4, 4, 1)

    def forward(self, x):
        h = F.mish(F.silu(self.conv(x)))
        return F.channel_shuffle(h, 2)


def test_the_tracked_step_runs_the_kernels_of_the_plain_step():
    model, x = _CompositeKernels(), torch.randn(2, 4, 3, 3)

    def step():
        out = model(x)
        torch.autograd.grad(out.sum(), list(model.parameters()))

    def tracked():
        with sw.track_copies():
            step()

    tracked()  # the tracker decides once per op what it does (on meta tensors): not the step's
    plain = profiled_op_list(step)
    assert {"aten::silu_backward", "aten::mish_backward", "aten::native_channel_shuffle"} <= set(
        plain
    )
    assert Counter(profiled_op_list(tracked)) == Counter(plain)
    assert profiled_op_list(tracked) == plain
    report = sw.audit(model, x)
    assert not [c for c in report.copies if c.ops == ("aten._to_copy",)]  # no phantom copies


class _Buffers(torch.nn.Module):
    """Copies into buffers the step allocates; a fill and a copy into a buffer with data don't."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(8, 8)

    def forward(self, x):
        a, b = self.linear(x), self.linear(x * 2)
        out = torch.empty(2 * len(x), 8)
        out[: len(x)] = a
        out[len(x) :] = b
        filled = torch.empty_like(out).copy_(out)
        filled[filled > 0] = 0  # a fill: constants, not data moved
        filled.copy_(out)  # into storage that holds data already: in-place
        return filled


def test_copies_into_a_buffer_made_in_the_step_count():
    model, x = _Buffers(), torch.randn(4, 8)
    report = sw.audit(model, x, backward=False)
    copies = {(c.call, c.bytes) for c in report.copies if c.ops == ("aten.copy_",)}
    row = 4 * 8 * 4
    assert [c.bytes for c in report.copies if c.call == "Tensor.__setitem__"] == [row, row]
    assert ("Tensor.copy_", 2 * row) in copies
    # the second copy_ into `filled` and the fill are not copies: three copy_ events in all
    assert len([c for c in report.copies if c.ops == ("aten.copy_",)]) == 3


class _Trained(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3)
        self.norm = torch.nn.BatchNorm2d(4)
        self.drop = torch.nn.Dropout(0.5)

    def forward(self, x):
        return self.drop(self.norm(self.conv(x)))


def test_buffers_and_rng_are_left_as_found():
    model, x = _Trained().train(), torch.randn(2, 3, 6, 6)
    before = {name: t.clone() for name, t in model.state_dict().items()}
    rng = torch.get_rng_state()
    report = sw.audit(model, x)
    assert report.suggestions  # channels-last, measured on copies: runs steps too
    assert torch.equal(torch.get_rng_state(), rng)
    after = model.state_dict()
    assert before.keys() == after.keys()
    for name, value in before.items():
        assert torch.equal(after[name], value), name
    model(x)  # the oracle: a plain step does change them
    assert not torch.equal(model.norm.running_mean, before["norm.running_mean"])
    assert int(model.norm.num_batches_tracked) == int(before["norm.num_batches_tracked"]) + 1


def test_a_compiled_model_audited_eager_is_said_to_be():
    """With loss_fn (which the compiled program's audit does not take), the eager model is
    audited, and the report and a warning say so."""
    model = torch.nn.Sequential(torch.nn.Linear(4, 4))
    compiled = torch.compile(model)
    x = torch.randn(3, 4).t().contiguous().t()

    def loss(out):
        return out.sum()

    with pytest.warns(UserWarning, match="eager model"):
        report = sw.audit(compiled, x, loss_fn=loss)
    assert "compile" in report.note and "compile" in report.summary()
    plain = sw.audit(model, x, loss_fn=loss)
    assert [c.bytes for c in report.copies] == [c.bytes for c in plain.copies]


@pytest.mark.parametrize(
    "make",
    [
        lambda: torch.nn.ReLU(),  # no parameters
        lambda: torch.nn.Linear(4, 4).requires_grad_(False),  # frozen
    ],
    ids=["parameter-free", "frozen"],
)
def test_a_model_without_trainable_parameters_gets_a_clear_error(make):
    # a plain input once raised "no tensor that requires grad; pass loss_fn=": the wrong fix.
    # An input that requires grad is audited instead (issue 37: tests/test_audit_lastmile.py)
    x = torch.randn(2, 4)
    with pytest.raises(ValueError, match="backward=False") as caught:
        sw.audit(make(), x)
    assert "loss_fn" not in str(caught.value)
    assert sw.audit(make(), x, backward=False).copies == []


def test_a_quantized_module_is_audited():
    model = torch.ao.nn.quantized.Linear(4, 4)
    x = torch.quantize_per_tensor(torch.randn(2, 4), 0.1, 0, torch.quint8)
    report = sw.audit(model, x, backward=False)
    assert isinstance(report.copies, list)


class _Keywords(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(4, 4)

    def forward(self, input_ids, labels=None):
        out = self.linear(input_ids.t().reshape(8).view(2, 4))
        return {"loss": ((out - labels) ** 2).sum()}


def test_keyword_inputs():
    x, labels = torch.randn(4, 2), torch.randn(2, 4)
    report = sw.audit(_Keywords(), model_kwargs={"input_ids": x, "labels": labels})
    assert [c.call for c in report.copies if c.phase == "forward"] == ["Tensor.reshape"]
    with pytest.raises(TypeError, match="model_kwargs must be a dict"):
        sw.audit(_Keywords(), model_kwargs=[x])


def test_the_speed_verdict_and_helps():
    from stridewidget.copies.audit.suggest import Measured, Suggestion

    def suggestion(before, after, bytes_after):
        measured = {"before": Measured(1, 100, *before), "after": Measured(1, bytes_after, *after)}
        return Suggestion("w", "w", "w", measured, True)

    same = suggestion((1.0, 0.9, 1.1), (1.0, 0.9, 1.1), 50)
    assert (same.speed, same.helps) == ("no measurable change", True)  # fewer bytes, not slower
    slower = suggestion((1.0, 0.99, 1.01), (1.2, 1.19, 1.21), 50)
    assert (slower.speed, slower.helps) == ("slower", False)
    faster = suggestion((1.0, 0.99, 1.01), (0.9, 0.89, 0.91), 100)
    assert (faster.speed, faster.helps) == ("faster", True)  # no fewer bytes, but faster
    noise = suggestion((1.0, 0.9, 1.1), (1.0, 0.95, 1.05), 100)
    assert not noise.helps


@pytest.mark.parametrize(
    "arguments, says",
    [
        (
            ["torch.nn.Linear(4, 2)", "--input", "torch.randn(3, 4)", "--html", "/no/such/a.html"],
            "cannot write the HTML report",
        ),
        (["torch.randn(3)", "--input", "torch.randn(3, 4)"], "not a torch.nn.Module"),
        (["torch.nn.Linear(4, 2)"], "no --input was given"),
        (["torch.nn.Linear(4, 2)", "--input", "torch.randn(3, 5)"], "raised RuntimeError"),
        (["torch.nn.Linear(4, 2)", "--kwargs", "[1]"], "not a dict"),
        (["torch.nn.ReLU()", "--input", "torch.randn(3, 4)"], "has no parameters"),
        (["torch.nn.Linear(4, 2).requires_grad_(False)", "--input", "torch.randn(3, 4)"], "frozen"),
    ],
    ids=[
        "bad-html-path",
        "not-a-module",
        "no-input",
        "model-raises",
        "kwargs-not-a-dict",
        "parameter-free",
        "frozen",
    ],
)
def test_command_line_errors_are_one_line(arguments, says):
    """``python -m`` prints a SystemExit's message as it is, without a traceback."""
    from stridewidget.audit import main

    with pytest.raises(SystemExit) as caught:
        main(arguments)
    message = str(caught.value.code)
    assert says in message and "\n" not in message


def test_command_line_keyword_inputs(capsys):
    from stridewidget.audit import main

    code = main(
        [
            "torch.nn.Bilinear(4, 4, 2)",
            "--kwargs",
            "dict(input1=torch.randn(3, 4), input2=torch.randn(4, 3).t())",
        ]
    )
    assert code == 0 and capsys.readouterr().out.startswith("sw.audit:")


class _Scaled(torch.nn.Module):
    """Python scalars (wrapped as 0-dim tensors, each a 4-byte _to_copy) beside a real copy."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3)

    def forward(self, x):
        h = self.conv(x) * 0.5 / 3.0 + 1.0
        return h.permute(0, 2, 3, 1).reshape(len(x), -1)


def test_wrapped_scalars_share_one_row_and_the_page_stays_small(tmp_path):
    report = sw.audit(_Scaled(), torch.randn(2, 3, 16, 16))
    scalars = [c for c in report.copies if c.wrapped_scalar]
    assert scalars and all(c.bytes == 4 for c in scalars)  # float32 scalars
    for rows in (report.by_line(), report.by_module(True)):
        grouped = [row for row in rows if row.key == SCALARS_ROW]
        assert sum(row.count for row in grouped) == len(scalars)
        assert len(grouped) == len({c.phase for c in scalars})
        assert sum(row.count for row in rows) == len(report.copies)
    assert f"{len(scalars)} Python scalars" in report.summary()
    path = tmp_path / "audit.html"
    report.to_html(str(path))
    page = path.read_text()
    assert "Suggestions" in page and "channels-last" in page
    assert page.count("<tr class='swa-") == len(report.copies) - len(scalars)
    assert len(page.encode()) <= 300_000


class _Block(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(8, 8)

    def forward(self, x):
        return self.linear(x.t().contiguous())  # the copy checkpointing re-runs


class _Checkpointed(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.block = _Block()

    def forward(self, x):
        from torch.utils.checkpoint import checkpoint

        return checkpoint(self.block, x, use_reentrant=False)


def test_a_checkpoint_recompute_is_reported_at_its_own_line():
    report = sw.audit(_Checkpointed(), torch.randn(8, 4))
    (forward,) = [c for c in report.copies if c.phase == "forward"]
    (again,) = [c for c in report.copies if c.recompute]
    assert again.bytes == forward.bytes and again.ops == forward.ops
    assert again.phase == "backward" and again.module == "block"
    assert again.where == f"{forward.where} (recompute)"
    assert "test_audit_truth.py" in again.where  # the model's line, not torch's


class _UsesTorchModules(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(8, 8)
        self.act = torch.nn.Hardswish(inplace=True)

    def forward(self, x):
        return self.act(self.linear(x))  # the copy is made in torch's Hardswish, for this line


def test_a_copy_torch_makes_for_the_model_points_at_the_models_line():
    import inspect

    report = sw.audit(_UsesTorchModules(), torch.randn(4, 8))
    lines, start = inspect.getsourcelines(_UsesTorchModules.forward)
    line = start + next(i for i, text in enumerate(lines) if "self.act(" in text)
    (forward,) = [c for c in report.copies if c.phase == "forward"]
    assert forward.where.endswith(f"test_audit_truth.py:{line}")
    assert forward.detail.startswith("torch/nn/modules/activation.py:")
    layer = torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0)  # torch's all the way up
    torch_report = sw.audit(layer, torch.randn(5, 2, 8))
    assert all(c.where.startswith("torch/") and not c.detail for c in torch_report.copies)


def test_a_patch_embedding_gets_an_unapplied_suggestion_that_agrees_with_the_measured_ones():
    from test_audit_zoo import _PatchEmbed

    report = sw.audit(_PatchEmbed(), torch.randn(2, 3, 16, 16))
    (edit,) = [s for s in report.suggestions if not s.applied]
    assert edit.where.startswith("F.layer_norm at ") and "test_audit_zoo.py:" in edit.where
    assert edit.fix.startswith("edit ") and not edit.outputs_match and "after" not in edit.measured
    (channels_last,) = [s for s in report.suggestions if s.applied]
    # the edit offers channels-last exactly when channels-last was measured to help
    assert ("run the patch convolution channels-last" in edit.fix) == channels_last.helps
