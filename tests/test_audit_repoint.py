"""sw.audit leaves each parameter and buffer as found when the step re-points it (``set_``,
``resize_``, ``.data =`` of another dtype) or writes it by any path; the oracle is a deep copy
of the model taken before, compared as raw bytes, with sizes, strides and dtype."""

from __future__ import annotations

import copy

import pytest
import torch

import stridewidget as sw


def _bytes(t: torch.Tensor) -> torch.Tensor:
    return t.detach().contiguous().reshape(-1).view(torch.uint8)


class Writer(torch.nn.Module):
    """A linear layer plus a buffer, whose forward writes or re-points them by ``how``."""

    def __init__(self, how: str) -> None:
        super().__init__()
        self.how = how
        self.first = torch.nn.Linear(4, 4)
        self.second = torch.nn.Linear(4, 4)
        self.register_buffer("table", torch.arange(8.0))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        w, table = self.first.weight, self.table
        with torch.no_grad():
            if self.how == "data":
                w.data.mul_(3)
            elif self.how == "detach":
                w.detach()[0].zero_()
            elif self.how == "numpy":
                w.detach().numpy()[:] = 0
            elif self.how == "set":
                table.set_(torch.zeros(3))
            elif self.how == "resize":
                table.resize_(2)
            elif self.how == "data_assign":
                w.data = torch.zeros(4, 4)
            elif self.how == "data_dtype":
                table.data = table.data.double()
        return self.second(self.first(x)) + self.table.sum()


@pytest.mark.parametrize(
    "how", ["data", "detach", "numpy", "set", "resize", "data_assign", "data_dtype"]
)
def test_each_write_or_re_pointing_is_put_back(how):
    torch.manual_seed(0)
    model = Writer(how)
    before = copy.deepcopy(model)
    plain = copy.deepcopy(model)
    plain(torch.randn(2, 4))  # the step really changes the model (else the test proves nothing)
    changed = [
        name
        for (name, t), (_, b) in zip(
            [*plain.named_parameters(), *plain.named_buffers()],
            [*before.named_parameters(), *before.named_buffers()],
        )
        if (t.shape, t.dtype) != (b.shape, b.dtype) or not torch.equal(_bytes(t), _bytes(b))
    ]
    assert changed
    sw.audit(model, torch.randn(2, 4))
    for (name, t), (_, b) in zip(
        [*model.named_parameters(), *model.named_buffers()],
        [*before.named_parameters(), *before.named_buffers()],
    ):
        assert (t.shape, t.stride(), t.dtype) == (b.shape, b.stride(), b.dtype), name
        assert torch.equal(_bytes(t), _bytes(b)), name
