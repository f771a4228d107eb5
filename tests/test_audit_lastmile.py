"""Issue 37's last mile (items 7 on): each against torch's own result."""

from __future__ import annotations

import warnings

import pytest
import torch
from test_audit_zoo import _into_blank_buffer, _moved_bytes
from torch.utils._python_dispatch import TorchDispatchMode

import stridewidget as sw


def _one_line_error(error: BaseException) -> str:
    message = str(error)
    assert message.startswith("sw.audit:") and "\n" not in message
    return message


class _Cond(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)

    def forward(self, x):
        y = self.lin(x)
        return torch.cond(y.sum() > 0, lambda t: t.relu(), lambda t: t.sin(), (y,))


class _BareMode(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


def test_cond_backward_under_a_dispatch_mode_is_refused_in_honest_words():
    model, x = _Cond(), torch.randn(3, 4)
    params = list(model.parameters())
    # torch's own: cond's backward runs without a mode, and raises under a bare dispatch mode
    assert all(g is not None for g in torch.autograd.grad(model(x).sum(), params))
    out = model(x).sum()
    with pytest.raises(NotImplementedError, match="cond"), _BareMode():
        torch.autograd.grad(out, params)
    with pytest.raises(RuntimeError) as caught, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sw.audit(model, x)
    message = _one_line_error(caught.value)
    assert "torch.cond" in message and "dispatch mode" in message
    assert "backward=False" in message and "has no len" not in message
    assert "torch.compile(model)" in message  # the way it offers, which audits the backward:
    compiled = sw.audit(torch.compile(model), x)
    assert compiled.backward


def test_cond_gets_no_torch_compile_note_it_does_not_need():
    model, x = _Cond(), torch.randn(3, 4)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = sw.audit(model, x, backward=False)
    assert "torch.compile" not in report.note
    assert not [w for w in caught if "torch.compile" in str(w.message)]

    @torch.compile(backend="eager")
    def double(t):
        return t * 2

    class _Calls(_Cond):
        def forward(self, x):
            return double(super().forward(x))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = sw.audit(_Calls(), x, backward=False)
    assert "torch.compile'd code (double" in report.note  # the user's own compile is still said


class _ReluFlatten(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(48, 2)

    def forward(self, x):
        return self.lin(torch.relu(x).permute(0, 2, 3, 1).reshape(len(x), -1))


def test_a_permute_reshape_that_a_channels_last_input_makes_a_view_is_said_so():
    x = torch.randn(2, 3, 4, 4)
    # torch's own: NCHW, the reshape copies; a channels-last input, relu keeps it and it is a view
    plain = torch.relu(x).permute(0, 2, 3, 1)
    assert plain.reshape(2, -1).data_ptr() != plain.data_ptr()
    nhwc = torch.relu(x.contiguous(memory_format=torch.channels_last)).permute(0, 2, 3, 1)
    assert nhwc.reshape(2, -1).data_ptr() == nhwc.data_ptr()
    report = sw.audit(_ReluFlatten(), x)
    (channels_last,) = [s for s in report.suggestions if s.applied and "channels_last" in s.fix]
    assert channels_last.outputs_match
    assert channels_last.measured["after"].bytes < channels_last.measured["before"].bytes
    (inside,) = [s for s in report.suggestions if not s.applied]
    assert "in any order" not in inside.what and "channels-last" in inside.what


class _KeepsState(torch.nn.Module):
    """A plain tensor attribute written in place, and a generator of its own, in forward."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 1)
        self.cache = torch.zeros(3)
        self.history = [torch.zeros(2)]
        self.gen = torch.Generator().manual_seed(0)

    def forward(self, x):
        self.cache.add_(1)
        self.history[0].sub_(1)
        noise = torch.randn(x.shape, generator=self.gen)
        return self.conv(x + noise).flatten(1)


def test_plain_tensor_attributes_and_a_models_generator_are_left_as_found():
    model, x = _KeepsState(), torch.randn(2, 3, 4, 4)
    cache, history, gen = model.cache, model.history[0], model.gen
    values = (cache.clone(), history.clone(), gen.get_state())
    # torch's own: one step writes the attributes and moves the generator
    probe = _KeepsState()
    probe(x)
    assert not torch.equal(probe.cache, values[0]) and not torch.equal(probe.history[0], values[1])
    assert not torch.equal(probe.gen.get_state(), values[2])
    report = sw.audit(model, x)
    assert report.suggestions  # measured on copies: the user's model is not run again
    assert model.cache is cache and model.history[0] is history and model.gen is gen
    assert torch.equal(cache, values[0]) and torch.equal(history, values[1])
    assert torch.equal(gen.get_state(), values[2])


class _Flatten(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x).permute(0, 2, 3, 1).reshape(len(x), -1)


@pytest.mark.parametrize("model", [_Flatten(), torch.nn.Linear(4, 4).requires_grad_(False)])
def test_a_model_without_trainable_parameters_audits_the_gradient_of_an_input(model):
    x = torch.randn(2, 3, 4, 4) if isinstance(model, _Flatten) else torch.randn(3, 4).t().t()
    x.requires_grad_(True)
    report = sw.audit(model, x)
    assert x.grad is None  # left as found
    # torch's own: the profiler's bytes of the plain step, backward reaching the input
    _, forward = _moved_bytes(lambda: model(x))
    output = model(x)
    seed = torch.ones_like(output)  # the audit's: a dense gradient of sum(), made outside
    _, backward = _moved_bytes(lambda: torch.autograd.backward(output, seed, inputs=[x]))
    assert x.grad is not None
    for phase, expected in (("forward", forward), ("backward", backward)):
        items = [c for c in report.copies if c.phase == phase]
        assert sum(c.bytes for c in items if not _into_blank_buffer(c)) == expected, phase
    assert report.backward
    applied = [s for s in report.suggestions if s.applied]  # compared on the input's gradient
    assert all(s.outputs_match and not s.unchecked for s in applied)
    assert x.grad is not None and x.is_leaf  # the user's input: the fixes ran on copies
