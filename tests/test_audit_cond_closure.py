"""Issue 37 (review 5 leftover): a model whose ``torch.cond`` branches capture a parameter (a
closure, not an operand) has a gradient in the plain step — torch's own autograd says so — but
under any dispatch mode torch 2.13 records none.  The audit said "the model returned Tensor with
no tensor that requires grad", blaming the model; it now names torch.cond, and the forward-only
audit still runs.
"""

from __future__ import annotations

import pytest
import torch

import stridewidget as sw


class ClosureCond(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        w = self.lin.weight
        return torch.cond(x.sum() > 0, lambda x: x @ w, lambda x: x @ w.t(), (x,))


def test_the_plain_step_has_a_gradient():
    """The oracle: torch's own eager autograd differentiates the model."""
    model = ClosureCond()
    out = model(torch.ones(2, 4))
    assert out.requires_grad
    out.sum().backward()
    assert model.lin.weight.grad is not None and model.lin.weight.grad.abs().sum() > 0


def test_the_audit_names_torch_cond_not_the_model():
    model = ClosureCond()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    with pytest.raises(RuntimeError) as raised:
        sw.audit(model, torch.ones(2, 4))
    message = str(raised.value)
    assert "torch.cond" in message and "backward=False" in message
    assert "no tensor that requires grad" not in message
    assert "\n" not in message
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())
    assert model.lin.weight.grad is None


def test_the_forward_only_audit_runs(tmp_path):
    report = sw.audit(ClosureCond(), torch.ones(2, 4), backward=False)
    report.to_html(tmp_path / "audit.html")  # the page renders
    assert "<html" in (tmp_path / "audit.html").read_text().lower()
