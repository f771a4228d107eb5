"""Hostile review of issue 41 (2026-12-05): two ``out=`` arguments that the op resizes onto each
other were not flagged (each resized output was compared with the inputs only), and the data
came out wrong with ``report.ok`` True.  The oracle is torch itself: the same call run plainly
gives values that differ from a fresh computation exactly when the outputs overlap."""

from __future__ import annotations

import pytest
import torch

import stridewidget as sw


def _max_into(buf_start: int, index_start: int):
    x = torch.arange(12.0, dtype=torch.float64).reshape(4, 3).flip(0) * 1.5 + 0.25
    buf = torch.zeros(10, dtype=torch.float64)
    values = buf[buf_start:buf_start]
    indices = buf.view(torch.int64)[index_start:index_start]
    return x, values, indices


def _foreach_into(first: int, second: int):
    out = torch.zeros(10)
    lists = ([torch.zeros(5), torch.zeros(5)], [torch.ones(5), 2 * torch.ones(5)])
    return lists, [out[first:first], out[second:second]]


@pytest.mark.parametrize("overlap", [True, False])
def test_two_outputs_resized_onto_each_other_are_a_hazard(overlap):
    x, values, indices = _max_into(0, 1 if overlap else 3)
    torch.max(x, 0, out=(values, indices))  # plainly: torch's own answer
    truth = x.max(0)
    wrong = not torch.equal(values, truth.values) or not torch.equal(indices, truth.indices)
    assert wrong == overlap  # the outputs really overwrite each other, and only then
    x, values, indices = _max_into(0, 1 if overlap else 3)
    if overlap:
        with pytest.raises(sw.LayoutHazard, match="resized by the op"), sw.sanitize():
            torch.max(x, 0, out=(values, indices))
    else:
        with sw.sanitize() as report:
            torch.max(x, 0, out=(values, indices))
        assert report.ok


@pytest.mark.parametrize("overlap", [True, False])
def test_a_foreach_out_list_resized_onto_itself_is_a_hazard(overlap):
    op = torch.ops.aten._foreach_add.List_out
    (selves, others), outs = _foreach_into(0, 3 if overlap else 5)
    op(selves, others, out=outs)
    wrong = not all(torch.equal(o, s + t) for o, s, t in zip(outs, selves, others))
    assert wrong == overlap
    (selves, others), outs = _foreach_into(0, 3 if overlap else 5)
    with sw.sanitize(on_hazard="collect") as report:
        op(selves, others, out=outs)
    assert report.ok != overlap
