"""``sw.audit`` gives back what it kept with its version counters too (hostile review): a training
step writes BatchNorm's running statistics and the audit writes them back, each moving the
buffer's version counter, so a graph the caller built before the audit refused the buffer it had
saved ("modified by an inplace operation").  The oracle is torch's own autograd: the same
backward, run on a copy of the model that was never audited."""

from __future__ import annotations

import copy

import torch
from torch import nn

import stridewidget as sw


def _model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 2))


def test_a_graph_built_before_the_audit_still_runs_backward():
    model = _model()
    twin = copy.deepcopy(model)
    x = torch.randn(5, 8, requires_grad=True)
    x_twin = x.detach().clone().requires_grad_(True)
    y, y_twin = model(x), twin(x_twin)
    versions = {name: t._version for name, t in [*model.named_buffers(), *model.named_parameters()]}
    sw.audit(model, x)
    after = {name: t._version for name, t in [*model.named_buffers(), *model.named_parameters()]}
    assert after == versions
    y.sum().backward()  # raised before: running_mean at version 2, expected 1
    y_twin.sum().backward()
    assert torch.equal(x.grad, x_twin.grad)
    for (name, p), (_, q) in zip(model.named_parameters(), twin.named_parameters()):
        assert torch.equal(p.grad, q.grad), name
    for (name, b), (_, c) in zip(model.named_buffers(), twin.named_buffers()):
        assert torch.equal(b, c), name


class _Scales(nn.Module):
    """Writes its input in place (a forward the audit must undo)."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x.mul_(2)
        return self.lin(x)


def test_an_input_written_by_the_step_gets_its_values_and_version_back():
    model = _Scales()
    x = torch.randn(3, 4)
    kept = x.clone()
    pending = x * 3  # mul saves nothing of x, but a view reads it later
    view = x[1:]
    version = x._version
    sw.audit(model, x)
    assert torch.equal(x, kept)
    assert x._version == version == view._version
    assert torch.equal(pending, kept * 3)


def test_a_tensor_left_changed_keeps_its_moved_counter():
    """Only a tensor whose bits are its saved ones gets its counter back: the guard compares
    bits (a model whose step changed nothing in place keeps every counter as it was)."""
    model = nn.Linear(4, 2)
    x = torch.randn(3, 4)
    versions = [p._version for p in model.parameters()] + [x._version]
    sw.audit(model, x)
    assert [p._version for p in model.parameters()] + [x._version] == versions
