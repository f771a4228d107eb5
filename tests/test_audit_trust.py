"""sw.audit leaves the user's world as it was and says what it could not do: the user's own
profiler keeps recording, compiled parts are named, reentrant checkpoints get a clear error,
parameters written in forward are put back bit for bit; copies into buffers made in the step
through index/scatter ops count, and a copy whose call also wrote in place says so.
Oracles: the user's own torch.profiler, the raw bytes of the model's tensors, the values moved."""

from __future__ import annotations

import warnings

import pytest
import torch
from torch.profiler import ProfilerActivity, profile, record_function
from torch.utils.checkpoint import checkpoint

import stridewidget as sw
from stridewidget.copies.audit.found import IN_PLACE_MARK


class _GappedLinear(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(8, 4)

    def forward(self, x):
        return self.linear(x[:, ::2])  # a gapped operand: addmm clones it inside its kernel


def test_the_users_profiler_keeps_recording_around_and_inside_the_audit():
    x = torch.randn(5, 16)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        with record_function("user: before"):
            torch.ones(3).flip(0)
        with pytest.warns(UserWarning, match="torch.profiler session of yours"):
            report = sw.audit(_GappedLinear(), x)
        with record_function("user: after"):
            torch.ones(3).roll(1)
    names = [event.name for event in prof.events()]
    for label in ("user: before", "user: after", "aten::flip", "aten::roll"):
        assert label in names, label
    assert "aten::addmm" in names  # the audited step's own ops reached the user's profile
    assert "profiler session of yours" in report.note and report.note in report.summary()
    assert not [c for c in report.copies if c.hidden_in]  # not searched, as the note says
    assert not torch.autograd._profiler_enabled()
    # outside a profiler the same step's hidden copy is found (the note is not a cover story)
    outside = sw.audit(_GappedLinear(), x)
    assert [c.hidden_in for c in outside.copies if c.phase == "forward"] == ["aten.addmm"]
    assert not outside.note


class _Merge(torch.nn.Module):
    def forward(self, x):
        return x.transpose(1, 2).reshape(len(x), -1)


class _WithMerge(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(4, 4)
        self.merge = _Merge()

    def forward(self, x):
        return self.merge(self.linear(x))


def _compile_whole_in_place(model):
    model.compile()
    return "the model"


def _compile_submodule_in_place(model):
    model.merge.compile()
    return "'merge'"


def _wrap_submodule(model):
    model.merge = torch.compile(model.merge)
    return "'merge'"


@pytest.mark.parametrize(
    "compile_",
    [_compile_whole_in_place, _compile_submodule_in_place, _wrap_submodule],
    ids=["model.compile()", "submodule.compile()", "torch.compile(submodule)"],
)
def test_compiled_parts_audited_eager_are_said_to_be(compile_):
    torch.manual_seed(0)
    model, x = _WithMerge(), torch.randn(2, 3, 4)
    plain = sw.audit(model, x)
    assert not plain.note
    named = compile_(model)
    with pytest.warns(UserWarning, match="torch.compile'd") as caught:
        report = sw.audit(model, x)
    assert named in str(caught[0].message) and named in report.note
    assert "eager" in report.summary()
    assert [(c.phase, c.bytes) for c in report.copies] == [(c.phase, c.bytes) for c in plain.copies]


class _Reentrant(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.pre = torch.nn.Linear(4, 4)
        self.block = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU())

    def forward(self, x):
        return checkpoint(self.block, self.pre(x), use_reentrant=True)


def test_a_reentrant_checkpoint_gets_one_clear_line():
    with pytest.raises(RuntimeError) as caught:
        sw.audit(_Reentrant(), torch.randn(8, 4))
    message = str(caught.value)
    assert message.startswith("sw.audit:") and "use_reentrant=False" in message
    assert "\n" not in message
    assert caught.value.__suppress_context__ and caught.value.__cause__ is None  # no autograd chain
    report = sw.audit(_Reentrant(), torch.randn(8, 4), backward=False)  # what the error offers
    assert report.backward is False


class _WritesItsWeight(torch.nn.Module):
    """Normalises a weight in place in forward (weight-norm by hand), with BatchNorm and
    dropout: a step writes a parameter, buffers and the RNG."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(6, 6)
        self.norm = torch.nn.BatchNorm1d(6)
        self.drop = torch.nn.Dropout(0.3)

    def forward(self, x):
        with torch.no_grad():
            self.linear.weight.div_(self.linear.weight.norm(dim=1, keepdim=True))
        return self.drop(self.norm(self.linear(x)))


def _raw(model):
    """Every parameter's and buffer's bytes, by name (the oracle: what memory holds)."""
    tensors = [*model.named_parameters(), *model.named_buffers()]
    return {name: bytes(t.detach().reshape(-1).view(torch.uint8).numpy()) for name, t in tensors}


def test_parameters_written_in_forward_buffers_and_rng_are_left_bit_for_bit():
    torch.manual_seed(0)
    model, x = _WritesItsWeight().train(), torch.randn(8, 6)
    weight = model.linear.weight
    before, rng = _raw(model), torch.get_rng_state()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning of ours either
        report = sw.audit(model, x)
    assert report.suggestions is not None  # measured on copies: runs steps too
    assert _raw(model) == before
    assert torch.equal(torch.get_rng_state(), rng)
    assert model.linear.weight is weight
    model(x)  # the oracle: a plain step does write them
    after = _raw(model)
    assert after["linear.weight"] != before["linear.weight"]
    assert after["norm.running_mean"] != before["norm.running_mean"]


class _FlipsSigns(torch.nn.Module):
    """Negates its zeros in forward (weight and buffer): equal as numbers (-0.0 == 0.0), not as
    bits; leaves its NaNs alone (unequal as numbers, equal as bits)."""

    def __init__(self, dtype: torch.dtype) -> None:
        super().__init__()
        self.register_buffer("zeros", torch.zeros(8, dtype=dtype))
        self.register_buffer("nans", torch.full((8,), float("nan"), dtype=dtype))
        self.weight = torch.nn.Parameter(torch.zeros(8, dtype=dtype))

    def forward(self, x):
        with torch.no_grad():
            self.zeros.mul_(-1)
            self.weight.mul_(-1)
        return x + (self.weight + self.nans.isnan()).abs().sum().to(x.dtype)


@pytest.mark.parametrize(
    "dtype",
    [torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.complex128],
    ids=str,
)
def test_values_equal_as_numbers_but_not_as_bits_are_put_back(dtype):
    model = _FlipsSigns(dtype)
    before, version = _raw(model), model.nans._version
    sw.audit(model, torch.randn(8))
    assert _raw(model) == before
    assert model.nans._version == version  # left alone: not written back
    model(torch.randn(8))  # the oracle: a plain step changes the bits, not the numbers
    assert _raw(model)["zeros"] != before["zeros"] and _raw(model)["weight"] != before["weight"]
    assert torch.equal(model.zeros, torch.zeros(8, dtype=dtype))


_FRESH = {
    "index_copy_": lambda a, i: torch.zeros(len(a), 8).index_copy_(0, i, a),
    "index_put_": lambda a, i: torch.empty(len(a), 8).index_put_((i,), a),
    "setitem": lambda a, i: torch.empty(len(a), 8).__setitem__(i, a),
    "scatter_": lambda a, i: torch.zeros(len(a), 8).scatter_(0, i[:, None].expand(-1, 8), a),
    "masked_scatter_": lambda a, i: torch.zeros(len(a), 8).masked_scatter_(
        torch.ones(len(a), 8, dtype=torch.bool), a
    ),
}
_NOT_MOVES = {  # arithmetic or constants into a fresh buffer: no data moved
    "index_add_": lambda a, i: torch.zeros(len(a), 8).index_add_(0, i, a),
    "fill by index": lambda a, i: torch.empty(len(a), 8).__setitem__(i, 0.0),
    "scatter_ a value": lambda a, i: torch.zeros(len(a), 8).scatter_(
        0, i[:, None].expand(-1, 8), 1.5
    ),
    "accumulate": lambda a, i: torch.zeros(len(a), 8).index_put_((i,), a, accumulate=True),
}


class _IntoFresh(torch.nn.Module):
    def __init__(self, write) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(8, 8)
        self.write = write

    def forward(self, x):
        a = self.linear(x)
        return self.write(a, torch.arange(len(a)).flip(0))


def _written_calls(report):
    return [c for c in report.copies if c.event.wrote_input]


@pytest.mark.parametrize("name", sorted(_FRESH))
def test_index_and_scatter_copies_into_a_buffer_made_in_the_step_count(name):
    x = torch.randn(4, 8)
    model = _IntoFresh(_FRESH[name])
    with torch.no_grad():
        a = model.linear(x)
    (item,) = _written_calls(sw.audit(model, x, backward=False))
    assert item.bytes == a.numel() * a.element_size()  # the source's bytes, moved
    assert not item.in_place  # writing the blank buffer is the copy itself


@pytest.mark.parametrize("name", sorted(_NOT_MOVES))
def test_arithmetic_and_fills_into_a_fresh_buffer_are_not_copies(name):
    report = sw.audit(_IntoFresh(_NOT_MOVES[name]), torch.randn(4, 8), backward=False)
    assert not _written_calls(report)


class _InPlaceSilu(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(8, 8)

    def forward(self, x):
        h = torch.nn.functional.silu(self.linear(x), inplace=True)  # autograd clones h first
        return h.t().reshape(-1)  # a plain copy


def test_a_copy_whose_call_also_wrote_in_place_is_flagged_and_shown(tmp_path):
    report = sw.audit(_InPlaceSilu(), torch.randn(4, 8), backward=False)
    flagged = [c for c in report.copies if c.in_place]
    plain = [c for c in report.copies if not c.in_place and not c.wrapped_scalar]
    assert [c.call for c in flagged] == ["F.silu"]
    assert all(c.event.kind == "copy" and c.event.wrote_input for c in flagged)
    assert [c.call for c in plain] == ["Tensor.reshape"]
    text = report.to_text()
    assert f"aten.clone{IN_PLACE_MARK}" in text
    assert text.count(IN_PLACE_MARK) == 1  # its line's row; none for reshape's
    # the module's row holds both clones: the op once, with how many were in place
    assert text.count("aten.clone (1 of 2 in-place calls)") == 1
    path = tmp_path / "audit.html"
    report.to_html(str(path))
    assert f"aten.clone{IN_PLACE_MARK}" in path.read_text()
