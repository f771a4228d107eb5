"""Review round 4 (#38): index-driven writes that never write what they read are no hazard
(oracle: torch's in-place result equals the clone-based one); the true overlaps still raise
(oracle: the two differ)."""

import warnings

import pytest
import torch

import stridewidget as sw


def _index(*values: int) -> torch.Tensor:
    return torch.tensor(values)


# (in place on x, the same on a clone of what it reads)
SAFE = {
    "index_put_ accumulate": (
        lambda x: x.index_put_((_index(1, 1, 2),), x[0:1].expand(3), accumulate=True),
        lambda x: x.index_put_((_index(1, 1, 2),), x[0:1].clone().expand(3), accumulate=True),
    ),
    "scatter_ reduce add": (
        lambda x: x.scatter_(0, _index(1, 1, 2), x[0:1].expand(3), reduce="add"),
        lambda x: x.scatter_(0, _index(1, 1, 2), x[0:1].clone().expand(3), reduce="add"),
    ),
    "scatter_reduce_ sum": (
        lambda x: x.scatter_reduce_(0, _index(1, 1, 2), x[0:1].expand(3), reduce="sum"),
        lambda x: x.scatter_reduce_(0, _index(1, 1, 2), x[0:1].clone().expand(3), reduce="sum"),
    ),
    "masked_scatter_": (
        lambda x: x.masked_scatter_(x > 4, x[:2]),
        lambda x: x.masked_scatter_(x > 4, x[:2].clone()),
    ),
    "index_add_": (
        lambda x: x.index_add_(0, _index(3, 4), x[0:1].expand(2)),
        lambda x: x.index_add_(0, _index(3, 4), x[0:1].clone().expand(2)),
    ),
    "2d index_put_ accumulate": (
        lambda x: x.view(3, 2).index_put_(
            (_index(1, 2),), x.view(3, 2)[0:1].expand(2, 2), accumulate=True
        ),
        lambda x: x.view(3, 2).index_put_(
            (_index(1, 2),), x.view(3, 2)[0:1].clone().expand(2, 2), accumulate=True
        ),
    ),
}

# writes an element another operand reads: torch's result differs from the clone-based one
HAZARDS = {
    "index_put_ accumulate": (
        lambda x: x.index_put_((_index(0, 1, 2),), x[0:1].expand(3), accumulate=True),
        lambda x: x.index_put_((_index(0, 1, 2),), x[0:1].clone().expand(3), accumulate=True),
    ),
    "scatter_add_": (
        lambda x: x.scatter_add_(0, _index(0, 1, 2), x[0:1].expand(3)),
        lambda x: x.scatter_add_(0, _index(0, 1, 2), x[0:1].clone().expand(3)),
    ),
    "scatter_reduce_ sum": (
        lambda x: x.scatter_reduce_(0, _index(0, 1, 2), x[0:1].expand(3), reduce="sum"),
        lambda x: x.scatter_reduce_(0, _index(0, 1, 2), x[0:1].clone().expand(3), reduce="sum"),
    ),
    "index_add_": (
        lambda x: x.index_add_(0, _index(0, 1, 2), x[0:1].expand(3)),
        lambda x: x.index_add_(0, _index(0, 1, 2), x[0:1].clone().expand(3)),
    ),
}


def _result(write, x: torch.Tensor) -> torch.Tensor:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # scatter_'s reduce= is deprecated
        write(x)
    return x


@pytest.mark.parametrize("name", SAFE)
def test_index_write_reading_only_unwritten_elements_runs(name):
    run, reference = SAFE[name]
    expected = _result(reference, torch.arange(1.0, 7.0))
    assert torch.equal(_result(run, torch.arange(1.0, 7.0)), expected)  # torch: exact
    x = torch.arange(1.0, 7.0)
    with sw.sanitize() as report:
        _result(run, x)
    assert report.ok and torch.equal(x, expected)


@pytest.mark.parametrize("name", HAZARDS)
def test_index_write_reading_a_written_element_still_raises(name):
    run, reference = HAZARDS[name]
    expected = _result(reference, torch.arange(1.0, 7.0))
    assert not torch.equal(_result(run, torch.arange(1.0, 7.0)), expected)  # torch: wrong
    x = torch.arange(1.0, 7.0)
    hazard = pytest.raises(sw.LayoutHazard, match="may read values it already overwrote")
    with hazard, sw.sanitize():
        _result(run, x)
    assert torch.equal(x, torch.arange(1.0, 7.0))  # refused before it wrote


class Tagged(torch.Tensor):
    """A subclass that overrides only ``__torch_function__``: torch's ``__deepcopy__`` raises."""

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return super().__torch_function__(func, types, args, kwargs or {})


class _Permuting(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.c = torch.nn.Conv2d(3, 4, 1)

    def forward(self, x):
        h = self.c(x) * 2
        return h.permute(0, 2, 3, 1).reshape(len(x), -1)


def test_audit_suggestions_and_html_for_a_torch_function_subclass_input(tmp_path):
    torch.manual_seed(0)
    model, x = _Permuting(), torch.randn(2, 3, 4, 4)
    tagged = x.as_subclass(Tagged)
    with pytest.raises(RuntimeError, match="__deepcopy__"):
        __import__("copy").deepcopy(tagged)  # torch's own deepcopy refuses it
    plain = sw.audit(model, x).suggestions
    report = sw.audit(model, tagged)
    suggestions = report.suggestions
    assert [(s.where, s.fix) for s in suggestions] == [(s.where, s.fix) for s in plain]
    applied = [s for s in suggestions if s.applied]
    assert applied and all(s.outputs_match and not s.unchecked for s in applied)
    page = tmp_path / "audit.html"
    report.to_html(str(page))
    assert "<html" in page.read_text().lower()
    assert type(tagged) is Tagged and torch.equal(tagged.as_subclass(torch.Tensor), x)
