"""``sw.audit`` of a model whose parameter is a wrapper tensor subclass (found in review: the
state guard read the data pointer of the subclass's storage object, which has none, and the
audit raised "Attempted to access the data pointer on an invalid python storage")."""

from __future__ import annotations

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
