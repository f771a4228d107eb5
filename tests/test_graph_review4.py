"""sw.graph, review 4 (an independent reviewer's findings): what the compiled audit says it
leaves out, one clear line when the eager model cannot run, an ExportedProgram's fixed shapes."""

from __future__ import annotations

import pytest
import torch

import stridewidget as sw


class _ChannelsLastWeight(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(2, 3, 4, 4).to(memory_format=torch.channels_last))

    def forward(self, x):
        return (self.w * 2).sum() + x.sum()


def test_the_compiled_audit_says_it_leaves_out_copies_outside_the_graphs():
    model, x = _ChannelsLastWeight(), torch.randn(3, 4)
    eager = sw.audit(model, x)
    # the eager audit sees AccumulateGrad copy the gradient into the channels_last layout: a
    # backward copy of the parameter's size, made outside any graph torch.compile hands on
    assert any(c.phase == "backward" and c.bytes == model.w.nbytes for c in eager.copies)
    compiled = sw.audit(torch.compile(model, backend="aot_eager"), x)
    assert not any(n.bytes == model.w.nbytes for n in compiled.copies)
    assert "AccumulateGrad" in compiled.summary()  # so the report says what it leaves out


def test_compare_eager_when_the_eager_model_raises_is_one_line():
    @torch.library.custom_op("swreview4::needs_contiguous", mutates_args=())
    def needs_contiguous(x: torch.Tensor) -> torch.Tensor:
        assert x.is_contiguous(), x.stride()  # the real kernel's requirement
        return x * 2

    @needs_contiguous.register_fake
    def _(x):  # the fake kernel does not check: the capture works, eager fails
        return torch.empty_like(x)

    g = sw.graph(lambda y: needs_contiguous(y.t()), torch.randn(4, 3), stage="export")
    with pytest.raises(
        RuntimeError, match=r"^compare_eager: the eager model raised AssertionError"
    ):
        g.compare_eager()


def test_an_exported_program_refuses_dynamic_shapes_it_cannot_take():
    program = torch.export.export(torch.nn.Linear(4, 4), (torch.randn(2, 4),))
    with pytest.raises(ValueError, match="fixed when it was exported"):
        sw.graph(program, dynamic_shapes={"input": {0: torch.export.Dim("b")}})
