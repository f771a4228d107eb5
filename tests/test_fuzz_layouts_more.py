"""sw.fuzz_layouts: the caller's module untouched, outputs that are not tensors, writes into the
filler, nondeterministic functions."""

import dataclasses
import itertools
import types

import torch

import stridewidget as sw


def test_the_callers_module_is_never_written():
    torch.manual_seed(0)
    lin = torch.nn.Linear(3, 2)
    bn = torch.nn.BatchNorm1d(2)
    bn.register_buffer("seen", torch.zeros(2), persistent=False)

    def forward(x):
        out = bn(lin(x))
        bn.seen.add_(1)  # a non-persistent buffer written in place
        out.sum().backward()  # a forward that calls backward: .grad accumulates
        return out.detach()

    module = torch.nn.Module()
    module.lin, module.bn = lin, bn
    module.forward = forward
    versions = [t._version for t in (*lin.parameters(), *bn.buffers())]
    pending = lin(torch.randn(2, 3)).sum()
    sw.fuzz_layouts(module, torch.randn(4, 3))
    pending.backward()  # would say "modified by an inplace operation" had a parameter been written
    assert [t._version for t in (*lin.parameters(), *bn.buffers())] == versions
    assert torch.equal(bn.seen, torch.zeros(2)) and torch.equal(bn.running_mean, torch.zeros(2))
    assert lin.weight.grad is not None and bn.weight.grad is None  # only the pending backward's


def test_python_number_outputs_are_compared_with_tolerance_and_nan_equal():
    assert sw.fuzz_layouts(lambda t: t.sum().item(), torch.randn(8, 8)).ok
    nan = torch.randn(4, 4)
    nan[1, 2] = float("nan")
    assert sw.fuzz_layouts(lambda t: t.max().item(), nan).ok
    report = sw.fuzz_layouts(lambda t: t.stride()[0], torch.randn(3, 4))  # really layout-bound
    assert not report.ok and {f.kind for f in report.findings} == {"values"}


@dataclasses.dataclass
class Out:
    y: torch.Tensor
    n: int


def test_arrays_dataclasses_and_namespaces_are_compared_by_their_leaves():
    x = torch.randn(3, 4)
    assert sw.fuzz_layouts(lambda t: t.numpy() * 2, x).ok
    assert sw.fuzz_layouts(lambda t: Out(t * 2, 3), x).ok
    assert sw.fuzz_layouts(lambda t: types.SimpleNamespace(y=t + 1), x).ok
    bad = sw.fuzz_layouts(
        lambda t: Out(t.contiguous().view(-1)[: t.shape[1]] + t.stride()[1], 1), x
    )
    assert not bad.ok


def test_objects_that_cannot_be_compared_are_listed_not_flagged():
    report = sw.fuzz_layouts(lambda t: (t * 2, object()), torch.randn(3, 4))
    assert report.ok and report.uncompared == ("object",)


def _all_cells_outside(t: torch.Tensor) -> torch.Tensor:
    """Writes 0 into every cell of t's storage that is not one of t's elements."""
    flat = torch.empty(0, dtype=t.dtype).set_(t.untyped_storage())
    keep = t.clone()
    flat.zero_()
    t.copy_(keep)
    return t.sum()


def test_a_write_into_the_gaps_of_an_input_is_a_mutation():
    report = sw.fuzz_layouts(_all_cells_outside, torch.randn(3, 4))
    gapped = [f for f in report.findings if f.name == "gapped slice"]
    assert gapped and {f.kind for f in gapped} == {"mutation"}
    assert "outside the input's elements" in gapped[0].detail
    assert sw.fuzz_layouts(lambda t: t.mul_(2), torch.randn(3, 4)).ok  # writes only its elements


def test_a_nondeterministic_function_is_one_note_not_layout_findings():
    counter = itertools.count()
    report = sw.fuzz_layouts(lambda t: t + next(counter), torch.randn(3))
    assert report.nondeterministic and not report.ok and report.findings == []
    assert "nondeterministic" in repr(report)
    assert not sw.fuzz_layouts(torch.relu, torch.randn(3)).nondeterministic
