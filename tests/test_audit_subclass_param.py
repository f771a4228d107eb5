"""``sw.audit`` of a model whose parameter is a wrapper tensor subclass (found in review: the
state guard read the data pointer of the subclass's storage object, which has none, and the
audit raised "Attempted to access the data pointer on an invalid python storage")."""

from __future__ import annotations

import pytest
import torch
from models import outermost_moves
from torch.profiler import ProfilerActivity, profile
from torch.testing._internal.two_tensor import TwoTensor

import stridewidget as sw


def _model() -> torch.nn.Linear:
    torch.manual_seed(0)
    linear = torch.nn.Linear(4, 3)
    weight = linear.weight.detach()
    linear.weight = torch.nn.Parameter(TwoTensor(weight.clone(), weight.clone()))
    return linear


def test_an_audit_of_a_subclass_parameter_reports_and_gives_the_state_back():
    model, x = _model(), torch.randn(2, 4).t().contiguous().t()
    before = {key: value.clone() for key, value in model.state_dict().items()}
    report = sw.audit(model, x)
    for key, value in model.state_dict().items():
        assert torch.equal(value, before[key]), key
        assert type(value) is type(before[key]), key
    assert all(p.grad is None for p in model.parameters())
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        model(x)
    forward = sum(max(e.cpu_memory_usage, 0) for e in outermost_moves(prof.events()))
    assert sum(c.bytes for c in report.copies if c.phase == "forward") == forward


class _RefusesCopy(torch.Tensor):
    """A wrapper subclass whose ``copy_`` raises (what the audit gives values back with)."""

    @staticmethod
    def __new__(cls, inner):
        return torch.Tensor._make_wrapper_subclass(cls, inner.shape, dtype=inner.dtype)

    def __init__(self, inner):
        self.inner = inner

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        if func is torch.ops.aten.copy_.default:
            raise RuntimeError("no copy_ here")
        args = [a.inner if isinstance(a, _RefusesCopy) else a for a in args]
        out = func(*args, **(kwargs or {}))
        return _RefusesCopy(out) if isinstance(out, torch.Tensor) else out


class _WritesIts(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("odd", _RefusesCopy(torch.ones(4)))
        self.norm = torch.nn.BatchNorm1d(4)

    def forward(self, x):
        self.odd.add_(1)
        return self.norm(x)


def test_a_tensor_that_cannot_be_given_back_is_said_and_the_rest_is_given_back():
    """Found in review: the first tensor whose copy_ raised ended the giving back, leaving
    BatchNorm's statistics moved and a bare subclass error."""
    model, x = _WritesIts(), torch.randn(8, 4, requires_grad=True)
    mean, count = model.norm.running_mean.clone(), model.norm.num_batches_tracked.item()
    version = model.norm.running_mean._version
    with pytest.raises(
        sw.LayoutError, match=r"could not give back 1 .*_RefusesCopy of shape \(4,\)"
    ):
        sw.audit(model, x)
    assert torch.equal(model.norm.running_mean, mean)
    assert model.norm.num_batches_tracked.item() == count
    assert model.norm.running_mean._version == version and x.grad is None
