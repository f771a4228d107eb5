"""Hostile review (issues 37/41): auditing a ``torch.compile``d model with dropout moved the
caller's global random state; the eager audit kept it.  Oracle: torch's own generator state."""

from __future__ import annotations

import pytest
import torch

import stridewidget as sw


@pytest.mark.parametrize("backend", ["aot_eager"])
def test_auditing_a_compiled_model_keeps_the_random_state(backend):
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(16, 32), torch.nn.Dropout(0.5), torch.nn.ReLU(), torch.nn.Linear(32, 4)
    )
    compiled = torch.compile(model, backend=backend)
    x = torch.randn(4, 16)
    before = torch.get_rng_state().clone()
    sw.audit(compiled, x)
    assert torch.equal(before, torch.get_rng_state())
    # and the next draw is the one the caller's generator would give
    after_draw = torch.rand(3)
    torch.set_rng_state(before)
    assert torch.equal(after_draw, torch.rand(3))
