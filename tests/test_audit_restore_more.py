"""Issue 37 (review 5 leftovers): the audit leaves the model and the process as it found them —
also Python's and NumPy's global generators a forward draws from, a parameter's
``requires_grad`` a forward flips, its ``.grad`` a forward's ``zero_grad()`` drops, and grad mode a
forward switches off.  Oracles: the states Python, NumPy and torch report before and after.
"""

from __future__ import annotations

import random

import numpy as np
import torch

import stridewidget as sw


class Meddling(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.spare = torch.nn.Parameter(torch.ones(3))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        scale = 1.0 + 0.0 * random.random() + 0.0 * float(np.random.rand())
        self.zero_grad()  # drops every .grad (set_to_none)
        self.spare.requires_grad_(False)
        return self.lin(x) * scale


def test_rngs_flags_and_grads_are_given_back():
    model = Meddling()
    model.lin.weight.grad = torch.full_like(model.lin.weight, 7.0)
    grad = model.lin.weight.grad
    random.seed(5)
    np.random.seed(5)
    python_state, numpy_state = random.getstate(), np.random.get_state()
    sw.audit(model, torch.randn(2, 4))
    assert random.getstate() == python_state
    after = np.random.get_state()
    assert after[0] == numpy_state[0] and np.array_equal(after[1], numpy_state[1])
    assert after[2:] == numpy_state[2:]
    assert model.lin.weight.grad is grad and bool((grad == 7.0).all())
    assert model.spare.requires_grad and model.spare.grad is None


class SwitchesGradOff(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        torch.set_grad_enabled(False)
        return self.lin(x)


def test_grad_mode_is_given_back():
    assert torch.is_grad_enabled()
    try:
        sw.audit(SwitchesGradOff(), torch.randn(2, 4), backward=False)
        assert torch.is_grad_enabled()
    finally:
        torch.set_grad_enabled(True)
