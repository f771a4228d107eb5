"""sw.fuzz_layouts on hostile inputs (issue 38): a Tensor subclass keeps its class, a function
that draws random numbers is said nondeterministic (not layout findings), and inputs that cannot
be relaid (sparse, nested, quantized, wrapper subclasses) are named: skipped, or one clear line
when nothing is left to try.  Oracles: torch's own result type and values, the same model in
eval() mode, the function's own storage read."""

from __future__ import annotations

import pytest
import torch

import stridewidget as sw
from stridewidget.errors import LayoutError


class Tagged(torch.Tensor):
    """A plain ``as_subclass`` subclass (no dispatch of its own)."""


class Wrapper(torch.Tensor):
    """A wrapper subclass: its data is a tensor of its own."""

    @staticmethod
    def __new__(cls, inner):
        return torch.Tensor._make_wrapper_subclass(cls, inner.shape, dtype=inner.dtype)

    def __init__(self, inner):
        self.inner = inner

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        unwrap = lambda v: v.inner if isinstance(v, Wrapper) else v  # noqa: E731
        args = torch.utils._pytree.tree_map(unwrap, args)
        kwargs = torch.utils._pytree.tree_map(unwrap, kwargs or {})
        return func(*args, **kwargs)


def _first_row(t):  # reads the storage as if t were contiguous: a real layout bug
    flat = torch.empty(0, dtype=t.dtype).set_(t.untyped_storage())
    return flat[: t.shape[1]].clone()


@pytest.mark.parametrize("fn", [lambda t: t * 2, torch.relu, lambda t: t.t() @ t])
def test_a_subclass_input_is_relaid_as_itself(fn):
    t = torch.randn(3, 4).as_subclass(Tagged)
    seen = []

    def recorded(x):
        seen.append(type(x))
        return fn(x)

    report = sw.fuzz_layouts(recorded, t)
    assert type(fn(t)) is Tagged  # torch's own answer keeps the class
    assert report.ok and report.runs > 0, report
    assert set(seen) == {Tagged}
    # a real layout bug is still found through the subclass
    assert not sw.fuzz_layouts(_first_row, torch.arange(6.0).reshape(2, 3).as_subclass(Tagged)).ok


@pytest.mark.parametrize(
    "make",
    [
        lambda: torch.nn.Sequential(torch.nn.Dropout(), torch.nn.Linear(4, 3)),
        lambda: torch.nn.Dropout(0.3),
        lambda: torch.nn.AlphaDropout(0.5),
    ],
)
def test_random_draws_in_memory_order_are_not_layout_findings(make):
    torch.manual_seed(1)
    model, x = make(), torch.randn(5, 4)
    state = torch.get_rng_state()
    report = sw.fuzz_layouts(model.train(), x)
    assert torch.equal(state, torch.get_rng_state())  # the caller's RNG is as found
    assert not [f for f in report.findings if f.kind == "values"], report
    assert report.nondeterministic and not report.ok
    assert "random" in repr(report)
    assert sw.fuzz_layouts(model.eval(), x).ok  # the same model without the draw: layout-free


def test_a_draw_that_does_not_follow_layout_is_still_ok():
    report = sw.fuzz_layouts(lambda x: x + torch.randn(x.shape), torch.randn(3, 4))
    assert report.ok and report.runs > 0


@pytest.mark.parametrize(
    "make, said",
    [
        (lambda: torch.randn(3, 3).to_sparse(), "sparse"),
        (lambda: torch.randn(3, 3).to_sparse_csr(), "sparse"),
        (lambda: torch.quantize_per_tensor(torch.randn(3, 4), 0.1, 0, torch.quint8), "quantized"),
        (lambda: torch.nested.nested_tensor([torch.randn(2, 3), torch.randn(4, 3)]), "nested"),
        (
            lambda: torch.nested.nested_tensor(
                [torch.randn(2, 3), torch.randn(4, 3)], layout=torch.jagged
            ),
            "nested",
        ),
        (lambda: Wrapper(torch.randn(2, 3)), "wrapper subclass"),
    ],
)
def test_inputs_that_cannot_be_relaid_are_named(make, said):
    t = make()
    with pytest.raises(LayoutError) as caught:
        sw.fuzz_layouts(lambda s: s * 2, t)
    message = str(caught.value)
    assert "\n" not in message and said in message and "nothing to try" in message
    # beside an input that can be relaid: skipped with its reason, the other one tried
    report = sw.fuzz_layouts(lambda s, x: x * 2, t, torch.randn(3, 4))
    assert report.ok and report.runs > 0
    assert len(report.skipped) == 1 and said in report.skipped[0] and "input 0" in report.skipped[0]


def _reads_storage_as_contiguous(x, draw):
    """A layout bug: the first row as if x were contiguous; optionally a random draw beside it."""
    if draw:
        _ = torch.rand(1)
    flat = torch.empty(0, dtype=x.dtype).set_(x.untyped_storage())
    return flat[: x.shape[1]].clone()


def _first_row_drawing(x, draw):
    """Correct in every layout (torch's own indexing), with the same random draw."""
    if draw:
        _ = torch.rand(1)
    return x[0].clone()


@pytest.mark.parametrize("draw", [False, True], ids=["no-draw", "a-random-draw"])
def test_a_random_draw_does_not_hide_a_layout_bug(draw):
    x = torch.arange(12.0).reshape(3, 4)
    buggy = sw.fuzz_layouts(lambda t: _reads_storage_as_contiguous(t, draw), x)
    fine = sw.fuzz_layouts(lambda t: _first_row_drawing(t, draw), x)
    # oracle: torch's x[0] is the right answer; the buggy function's own output per layout
    # differs from it exactly where the fuzzer reports a finding
    assert buggy.findings and not buggy.ok
    assert {f.kind for f in buggy.findings} == {"values"}
    assert fine.ok and not fine.findings
