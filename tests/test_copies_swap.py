"""A finished ``track_copies`` log or audit report leaves the model's parameters and gradients
swappable: ``torch.utils.swap_tensors`` (``module.to()`` with swapping on, or of a tensor-subclass
parameter) refuses a tensor any weak reference points to."""

from __future__ import annotations

import copy
import weakref

import pytest
import torch

import stridewidget as sw


@pytest.fixture
def swapping():
    before = torch.__future__.get_swap_module_params_on_conversion()
    torch.__future__.set_swap_module_params_on_conversion(True)
    yield
    torch.__future__.set_swap_module_params_on_conversion(before)


def _model() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Conv2d(3, 4, 3),
        torch.nn.BatchNorm2d(4),
        torch.nn.Flatten(),
        torch.nn.Linear(64, 2),
    )


def _step(model: torch.nn.Module, x: torch.Tensor) -> None:
    opt = torch.optim.AdamW(model.parameters())
    model(x).square().sum().backward()
    opt.step()


def _tensors(model: torch.nn.Module) -> list[torch.Tensor]:
    found = list(model.parameters())
    return found + [p.grad for p in model.parameters() if p.grad is not None]


def test_a_kept_log_holds_no_weak_reference_to_the_models_tensors(swapping):
    model, x = _model(), torch.randn(2, 3, 6, 6)
    with sw.track_copies() as log:
        _step(model, x)
    assert log.events  # the log is alive and recorded the step
    held = [t for t in _tensors(model) if weakref.getweakrefs(t)]
    assert held == []
    reference = copy.deepcopy(model).to(torch.float64)
    model.to(torch.float64)  # swaps each parameter and gradient in place
    for mine, theirs in zip(_tensors(model), _tensors(reference)):
        assert mine.dtype == theirs.dtype and torch.equal(mine, theirs)


def test_the_log_still_draws_what_the_block_made_with_its_values():
    x = torch.arange(6.0).reshape(2, 3)
    with sw.track_copies() as log:
        t = x.t()
        y = t.reshape(-1)
    event = log.events[1]
    assert event.kind == "copy"
    assert event._outputs[0].ref() is y  # made in the block: still drawn live
    assert event._inputs[0].ref() is t
    assert log.events[0]._inputs[0].ref() is x  # x.t(): x, from before the block, too
    widget = log.show(0)
    assert widget.names == ["src", "dst"]


def test_a_parameter_is_drawn_from_its_recorded_layout():
    model = torch.nn.Linear(3, 2)
    with sw.track_copies() as log:
        w = model.weight.t().contiguous()
    event = log.events[0]
    assert event._inputs[0].ref is None and event.inputs[0] == sw.inspect(model.weight)
    assert log.events[1]._outputs[0].ref() is w


def test_an_audit_report_leaves_the_model_swappable(swapping):
    model, x = _model(), torch.randn(2, 3, 6, 6)
    report = sw.audit(model, x)
    assert report is not None
    assert [t for t in _tensors(model) if weakref.getweakrefs(t)] == []
    model.to(torch.float64)
    assert all(p.dtype == torch.float64 for p in model.parameters())
    assert report.copies is not None


def test_blocks_after_a_released_one_record_the_same_events(swapping):
    model, x = _model(), torch.randn(2, 3, 6, 6)
    logs = []
    for _ in range(3):
        with sw.track_copies() as log:
            model(x).square().sum().backward()
        logs.append([(e.call, e.kind, e.bytes_copied, e.inputs, e.outputs) for e in log.events])
    assert logs[0] and logs[0] == logs[1] == logs[2]
    model.to(torch.float64)
