"""The audit's review (round 5): a candidate fix that breaks the model, and a sparse input, leave
``report.suggestions`` and ``to_html`` working (each failed before with a raw error)."""

from __future__ import annotations

import torch
from torch import nn

import stridewidget as sw


class _ViewsItsInput(nn.Module):
    """``x.view`` needs the NCHW input: the channels-last-inputs candidate breaks it."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(48, 5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a = x.view(x.shape[0], -1)
        b = torch.relu(x).permute(0, 2, 3, 1).reshape(x.shape[0], -1)
        return self.lin(a + b)


def test_a_fix_that_breaks_the_model_is_named_and_the_rest_still_count(tmp_path):
    torch.manual_seed(0)
    model, x = _ViewsItsInput(), torch.randn(2, 3, 4, 4)
    model(x).sum().backward()  # the plain step runs
    report = sw.audit(model, x)
    page = tmp_path / "audit.html"
    report.to_html(str(page), budget_s=30)  # raised RuntimeError before
    text = page.read_text()
    assert "breaks the model" in text and "view size is not compatible" in text
    assert isinstance(report.suggestions, list)


class _Sparse(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.lin(x.to_dense())


def test_a_sparse_input_leaves_the_suggestions_working(tmp_path):
    report = sw.audit(_Sparse(), torch.randn(3, 4).to_sparse())
    assert isinstance(report.suggestions, list)  # NotImplementedError (storage) before
    report.to_html(str(tmp_path / "a.html"))
