"""Issue 37: the ops the audit does not mark for the profiler although their schemas say neither
view nor copy (``profiler._COPY_FREE``) copy nothing inside their kernels, whatever their inputs:
the profiler, collecting everything, finds no ``clone`` / ``_to_copy`` under them; and a copy
hidden in an op still marked is still reported next to them.  Oracle: the profiler's own events."""

from __future__ import annotations

import pytest
import torch

import stridewidget as sw
from stridewidget.copies.audit.profiler import _COPY_FREE, profiler_name

_COPIES = {"aten::clone", "aten::_to_copy", "aten::copy_", "aten::contiguous"}


def _nested_copies(run) -> list[str]:
    """The copy ops the profiler records under ``run``'s ops (nested, not the outermost)."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        run()
    return [e.name for e in prof.events() if e.name in _COPIES and e.cpu_parent is not None]


_CASES = {
    "aten._unsafe_view.default": [
        lambda: torch.ops.aten._unsafe_view(torch.randn(4, 6), [6, 4]),
        lambda: torch.ops.aten._unsafe_view(torch.randn(4, 6)[:, :3], [4, 3]),  # gapped, viewable
        lambda: torch.ops.aten._unsafe_view(torch.randn(4, 6).t(), [6, 4]),
        lambda: torch.ops.aten._unsafe_view(torch.randn(3, dtype=torch.complex64).conj(), [3]),
        lambda: torch.ops.aten._unsafe_view(torch.randn(4, 6, requires_grad=True), [24]),
    ],
    "aten.empty.memory_format": [
        lambda: torch.ops.aten.empty.memory_format([2, 3, 4, 5], memory_format=torch.channels_last),
        lambda: torch.ops.aten.empty.memory_format([7], dtype=torch.float64),
        lambda: torch.ops.aten.empty.memory_format([2, 2], dtype=torch.bool),
    ],
    "aten.empty_strided.default": [
        lambda: torch.ops.aten.empty_strided.default([3, 4], [1, 3]),
        lambda: torch.ops.aten.empty_strided.default([3, 4], [0, 1], dtype=torch.int64),
    ],
}


def test_every_copy_free_op_is_tested_and_unmarked():
    assert set(_CASES) == set(_COPY_FREE)
    for name in _COPY_FREE:
        packet, _, overload = name.removeprefix("aten.").rpartition(".")
        assert profiler_name(getattr(getattr(torch.ops.aten, packet), overload)) is None


@pytest.mark.parametrize("name", sorted(_CASES))
def test_copy_free_ops_make_no_copy_inside(name):
    for case in _CASES[name]:
        assert _nested_copies(case) == []


def test_unsafe_view_has_no_kernel_but_the_composite_view():
    """A backend kernel of its own (a nested tensor's, say) could copy: then it must be marked."""
    dump = torch._C._dispatch_dump("aten::_unsafe_view")
    kernels = {line.split(":")[0] for line in dump.splitlines()[4:] if "registered at" in line}
    allowed = {"Functionalize", "Conjugate", "Negative", "ZeroTensor", "Tracer", "Meta"}
    allowed |= {"FuncTorchBatched", "Autograd[alias]", "CompositeExplicitAutograd[alias]"}
    assert kernels <= allowed, kernels - allowed


class _Reshaped(torch.nn.Module):
    """``linear`` on a 3-d input (an ``_unsafe_view`` at its end) and an ``empty`` beside a matmul
    on an operand with gaps between its elements (``mm`` clones it inside its kernel): that hidden
    copy is still found."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = torch.nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.proj(x)  # 3-d: addmm then _unsafe_view
        strided = y.reshape(-1, 8)[:, ::2]  # a view; its rows' elements 2 apart
        return torch.mm(strided, self.proj.weight[:4]) + torch.empty(1, 8).fill_(0)


def test_copies_hidden_next_to_copy_free_ops_are_reported():
    torch.manual_seed(0)
    report = sw.audit(_Reshaped(), torch.randn(2, 3, 8))
    found = {(c.phase, c.hidden_in) for c in report.copies if c.hidden_in}
    assert ("forward", "aten.mm") in found, report.copies
