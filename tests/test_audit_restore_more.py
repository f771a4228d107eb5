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


class _BigWrite(torch.nn.Module):
    """Large parameters (into the saved-value buffer), the first written through NumPy in
    forward: a write no mode sees, found only by comparing with the values saved for this step."""

    def __init__(self) -> None:
        super().__init__()
        self.first = torch.nn.Linear(256, 256)
        self.second = torch.nn.Linear(256, 256)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.first.weight.detach().numpy()[0, 0] += 1.0
        return self.second(self.first(x))


def test_a_reused_buffer_holds_each_steps_own_values():
    """The buffer a step's values were saved in serves the next audit: each audit gives back the
    values its own step started from, not those of an earlier step or another model."""
    from stridewidget.copies.audit import saved

    torch.manual_seed(0)
    models = [_BigWrite(), _BigWrite()]
    x = torch.randn(2, 256)
    for round_ in range(3):
        for model in models:
            with (
                torch.no_grad()
            ):  # new values between audits: a stale buffer would restore old ones
                model.first.weight.add_(round_ + 1)
            before = [p.detach().clone() for p in model.parameters()]
            sw.audit(model, x)
            after = list(model.parameters())
            assert all(
                torch.equal(a.view(torch.int32), b.view(torch.int32)) for a, b in zip(after, before)
            )
    if saved._HUGE_PAGES:
        assert saved._SPARE  # kept for the next audit


def test_a_buffer_in_use_is_never_handed_out_twice():
    """A buffer is taken by one save at a time (a nested audit gets another), and given back
    only by :func:`released`; a given-back one is reused with the new values written in."""
    from stridewidget.copies.audit.saved import _HUGE_PAGES, released, saved_values

    a, b = torch.randn(512, 256), torch.randn(512, 256)
    released(saved_values([torch.randn(512, 256)]))  # one given back already
    first = saved_values([a])
    second = saved_values([b])  # while first is in use
    assert first[0].data_ptr() != second[0].data_ptr()
    assert torch.equal(first[0], a) and torch.equal(second[0], b)
    address = first[0].untyped_storage().data_ptr()
    released(first)
    assert first == []  # nothing to read after release
    third = saved_values([b * 2])
    assert torch.equal(third[0], b * 2) and torch.equal(second[0], b)
    if _HUGE_PAGES:
        assert third[0].untyped_storage().data_ptr() == address  # the buffer given back
    released(second)
    released(third)
