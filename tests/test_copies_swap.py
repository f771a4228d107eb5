"""A finished ``track_copies`` log or audit report holds no weak reference to a tensor, so the
model's parameters, gradients and buffers stay swappable: ``torch.utils.swap_tensors``
(``module.to()`` with swapping on or of a tensor-subclass parameter, ``load_state_dict`` with
swapping on) refuses a tensor any weak reference points to.  ``log.show(i)`` draws a tensor over
its storage (weakly referenced: torch never swaps a storage)."""

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
    held = [t for t in [*_tensors(model), *model.buffers(), x] if weakref.getweakrefs(t)]
    assert held == []
    reference = copy.deepcopy(model).to(torch.float64)
    model.to(torch.float64)  # swaps each parameter and gradient in place
    for mine, theirs in zip(_tensors(model), _tensors(reference)):
        assert mine.dtype == theirs.dtype and torch.equal(mine, theirs)


def _drawn(log, index: int, label: str):
    drawn = {}
    import stridewidget.notebook.widget as widget_module

    original = widget_module.show
    widget_module.show = lambda **kwargs: drawn.update(kwargs)
    try:
        log.show(index)
    finally:
        widget_module.show = original
    return drawn[label]


def test_the_log_draws_each_tensor_over_its_storage_with_its_values():
    x = torch.arange(6.0).reshape(2, 3)
    with sw.track_copies() as log:
        t = x.t()
        y = t.reshape(-1)
    assert [e.kind for e in log.events] == ["view", "copy"]
    for tensor in (x, t, y):
        assert weakref.getweakrefs(tensor) == []
    for index, label, tensor in ((0, "src", x), (1, "src", t), (1, "dst", y)):
        drawn = _drawn(log, index, label)
        assert drawn is not tensor and sw.inspect(drawn) == sw.inspect(tensor)
        assert torch.equal(drawn, tensor)
    y.mul_(10)  # its values now, its layout as recorded
    assert torch.equal(_drawn(log, 1, "dst"), y)
    del y, drawn, tensor  # (the loop's last: y and a view of its storage)
    assert _drawn(log, 1, "dst") == log.events[1].outputs[0]  # freed: the recorded layout
    x.untyped_storage().resize_(0)  # no longer where it was: the recorded layout
    assert _drawn(log, 0, "src") == log.events[0].inputs[0]
    assert log.show(1).names == ["src", "dst"]


def test_a_gradient_seen_without_its_parameter_can_be_swapped(swapping):
    """Found in review: a block that only touches the gradients (clipping them) kept its weak
    references to them, so model.to() failed half-way and lost a gradient."""
    model = torch.nn.Linear(4, 3)
    model(torch.randn(2, 4)).sum().backward()
    with sw.track_copies() as log:
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    assert log.events
    model.to(torch.float64)
    assert all(p.dtype == p.grad.dtype == torch.float64 for p in model.parameters())


def test_a_buffer_the_log_saw_can_be_swapped_by_load_state_dict(swapping):
    model, x = _model(), torch.randn(2, 3, 6, 6)
    with sw.track_copies() as log:
        _step(model, x)
    assert log.events
    reference = copy.deepcopy(model)
    for value in reference.state_dict().values():
        value.add_(1) if value.is_floating_point() else None
    model.load_state_dict(reference.state_dict())
    for mine, theirs in zip(model.state_dict().values(), reference.state_dict().values()):
        assert torch.equal(mine, theirs)


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


def test_a_widget_drawn_after_the_block_follows_the_storages_it_draws():
    """Found in review: the views drawn after the block were held by nothing (the widget holds
    its tensors weakly), so the widget said "freed" at its first refresh and stopped following
    the tensors."""
    import gc

    x = torch.arange(6.0).reshape(2, 3)
    with sw.track_copies() as log:
        y = x.flip(0)
    widget = log.show(0)
    gc.collect()
    assert all(t is not None for t in widget.tensors.values())
    assert not widget.refresh_if_changed()
    x.add_(1)
    assert widget.refresh_if_changed() and torch.equal(widget.tensors["src"], x)
    assert torch.equal(widget.tensors["dst"], y)


def test_a_sparse_tensors_event_says_it_has_no_layout_to_draw():
    x = torch.eye(3).to_sparse()
    with sw.track_copies() as log:
        x.coalesce()
    with pytest.raises(ValueError, match="no strided layout to draw"):
        log.show(0)
