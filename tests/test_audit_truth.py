"""sw.audit reports every copy the real step makes and only those: copies inside in-place calls,
the kernels the plain step runs, copies into buffers made in the step, the model left as found.
Oracles: torch.profiler's op list and allocations, the model's own state before and after."""

from __future__ import annotations

from collections import Counter

import pytest
import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile

import stridewidget as sw

INPLACE_ACTIVATIONS = {
    "silu": lambda h: F.silu(h, inplace=True),
    "hardswish": lambda h: F.hardswish(h, inplace=True),
    "hardsigmoid": lambda h: F.hardsigmoid(h, inplace=True),
    "mish": lambda h: F.mish(h, inplace=True),
    "sin_": lambda h: h.sin_(),
}


class _InPlaceAfterLinear(torch.nn.Module):
    def __init__(self, activation) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(8, 8)
        self.scale = torch.nn.Parameter(torch.randn(8))
        self.activation = activation

    def forward(self, x):
        h = self.linear(x)
        h = self.activation(h)
        return h.mul_(self.scale)  # scale requires grad: autograd clones h first


def _clone_bytes_in_forward(model, inputs) -> int:
    """Bytes the plain forward allocates inside its outermost ``aten::clone`` ops (profiler)."""
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        model(*inputs)
    total = 0
    for event in prof.events():
        parent = event.cpu_parent
        while parent is not None and parent.name != "aten::clone":
            parent = parent.cpu_parent
        if event.name == "aten::clone" and parent is None:
            total += event.cpu_memory_usage
    return total


@pytest.mark.parametrize("name", sorted(INPLACE_ACTIVATIONS))
def test_a_copy_inside_an_in_place_call_is_a_copy(name):
    model = _InPlaceAfterLinear(INPLACE_ACTIVATIONS[name])
    x = torch.randn(4, 8)
    expected = _clone_bytes_in_forward(model, (x,))
    assert expected > 0  # the profiler sees autograd's clones
    report = sw.audit(model, x)
    forward = [c for c in report.copies if c.phase == "forward"]
    assert sum(c.bytes for c in forward) == expected
    assert forward and all(c.event.kind == "copy" and c.event.wrote_input for c in forward)


def test_an_in_place_call_that_copied_nothing_stays_in_place():
    x = torch.randn(4, 8)
    with torch.no_grad(), sw.track_copies() as log:
        F.silu(x, inplace=True)  # no autograd: nothing to save, no clone
        x.add_(1)
    assert [e.kind for e in log.events] == ["in-place", "in-place"]
    h = torch.randn(4, 8, requires_grad=True) * 1
    with sw.track_copies() as log:
        F.silu(h, inplace=True)
    (event,) = log.events
    assert (event.kind, event.wrote_input) == ("copy", True)
    assert event.bytes_copied == h.numel() * h.element_size()


class _CompositeKernels(torch.nn.Module):
    """Ops with a CompositeImplicitAutograd decomposition *and* a CPU kernel of their own."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(4, 4, 1)

    def forward(self, x):
        h = F.mish(F.silu(self.conv(x)))
        return F.channel_shuffle(h, 2)


def _op_list(step) -> list[str]:
    """The ATen ops the profiler saw, in order; an op inside an op of the same name (a dispatch
    mode running the op it was handed) once."""
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        step()
    names = []
    for event in sorted(prof.events(), key=lambda e: e.time_range.start):
        parent = event.cpu_parent
        while parent is not None and parent.name != event.name:
            parent = parent.cpu_parent
        if event.name.startswith("aten::") and parent is None:
            names.append(event.name)
    return names


def test_the_tracked_step_runs_the_kernels_of_the_plain_step():
    model, x = _CompositeKernels(), torch.randn(2, 4, 3, 3)

    def step():
        out = model(x)
        torch.autograd.grad(out.sum(), list(model.parameters()))

    def tracked():
        with sw.track_copies():
            step()

    tracked()  # the tracker decides once per op what it does (on meta tensors): not the step's
    plain = _op_list(step)
    assert {"aten::silu_backward", "aten::mish_backward", "aten::native_channel_shuffle"} <= set(
        plain
    )
    assert Counter(_op_list(tracked)) == Counter(plain)
    assert _op_list(tracked) == plain
    report = sw.audit(model, x)
    assert not [c for c in report.copies if c.ops == ("aten._to_copy",)]  # no phantom copies
