"""The tracker records each call as raw snapshots and decides its kind when the log is read
(``Recorder.lazy``, issue 41): on real training steps the log read that way is the one the eager
recorder (the audit's path, deciding in the hook) builds from the same calls, field by field."""

from __future__ import annotations

import pytest
import torch

import stridewidget as sw
from stridewidget.copies.log import CopyLog
from stridewidget.copies.tracker import CallMode, OpMode, Recorder, tracking


class _Eager(Recorder):
    lazy = False


def _mlp() -> tuple[torch.nn.Module, torch.Tensor]:
    net = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 4))
    return net, torch.randn(4, 8)


def _conv() -> tuple[torch.nn.Module, torch.Tensor]:
    net = torch.nn.Sequential(
        torch.nn.Conv2d(3, 4, 3, padding=1),
        torch.nn.BatchNorm2d(4),
        torch.nn.ReLU(inplace=True),
        torch.nn.AdaptiveAvgPool2d(1),
        torch.nn.Flatten(),
    )
    return net, torch.randn(2, 3, 6, 6)


def _transformer() -> tuple[torch.nn.Module, torch.Tensor]:
    layer = torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
    return layer, torch.randn(2, 5, 8)


def _fields(event: sw.copies.log.CopyEvent) -> tuple:
    return (
        event.index,
        event.call,
        event.ops,
        event.kind,
        event.aliases_input,
        event.allocated,
        event.returned_input,
        event.wrote_input,
        event.bytes_copied,
        event.filename,
        event.line,
        event.inputs,
        event.outputs,
        event.transforms,
    )


@pytest.mark.parametrize("make", [_mlp, _conv, _transformer])
def test_lazy_log_is_the_eager_one(make) -> None:
    torch.manual_seed(0)
    model, x = make()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    eager = _Eager(CopyLog())
    # both trackers see the same calls of the same run: the lazy one inside the eager one
    with tracking(CallMode(eager), OpMode(eager)) as eager_log, sw.track_copies() as lazy_log:
        for _ in range(2):  # the second step runs AdamW's in-place updates on its state
            optimizer.zero_grad()
            model(x).pow(2).mean().backward()
            optimizer.step()
        t = torch.zeros(3, 4)
        t.t_()  # an in-place metadata op: its input is recorded as it was before
        t.add_(1).mul_(2)
    lazy = [_fields(e) for e in lazy_log.events]
    assert lazy == [_fields(e) for e in eager_log.events]
    assert {"in-place", "compute"} <= {e.kind for e in lazy_log.events}
    assert lazy_log.events[-3].inputs[0].shape == (3, 4)  # t_ saw (3, 4), made (4, 3)
    assert lazy_log.events[-3].outputs[0].shape == (4, 3)


def test_events_read_during_the_block_and_after() -> None:
    """Events are built when read, also inside the block, and keep their indices."""
    x = torch.arange(6.0).reshape(2, 3)
    with sw.track_copies() as log:
        x.t().contiguous()
        first = [(e.index, e.call, e.kind) for e in log.events]
        x.clone()
    assert first == [(0, "torch.Tensor.t", "view"), (1, "torch.Tensor.contiguous", "copy")]
    assert [(e.index, e.kind) for e in log.events] == [(0, "view"), (1, "copy"), (2, "copy")]


def test_a_tensor_given_a_new_layout_is_snapshotted_again() -> None:
    """A snapshot is lent to a tensor's next call only while it still holds: not after an op
    rewrote the layout (``t_``), ``.data =`` gave it another, or its storage was resized."""
    x = torch.zeros(2, 3)
    with sw.track_copies() as log:
        x.add_(1)
        x.t_()
        x.add_(1)
        x.data = x.data.reshape(6)
        x.add_(1)
        x.untyped_storage().resize_(48)
        x.add_(1)
    adds = [e for e in log.events if e.call == "torch.Tensor.add_"]
    assert [e.inputs[0].shape for e in adds] == [(2, 3), (3, 2), (6,), (6,)]
    assert [e.inputs[0].storage_size for e in adds] == [6, 6, 6, 12]
    assert adds[2].inputs[0] == sw.inspect(torch.zeros(6))


def test_setting_grad_keeps_the_snapshot_setting_data_does_not() -> None:
    """``p.grad =`` and ``p.requires_grad =`` leave ``p``'s layout as it was: its snapshot is lent
    on (an optimizer's ``zero_grad`` sets every ``grad``); ``p.data =`` a new layout of the same
    storage (same address, same size) is snapshotted again.  The log is the eager recorder's,
    which snapshots every call afresh, and each input is the layout read from the tensor."""
    p = torch.nn.Parameter(torch.zeros(2, 3))
    seen = []
    eager = _Eager(CopyLog())
    with tracking(CallMode(eager), OpMode(eager)) as eager_log, sw.track_copies() as log:
        p.mul(2)
        seen.append(sw.inspect(p.detach()))
        p.grad = torch.ones(2, 3)
        p.requires_grad = True
        p.mul(2)
        seen.append(sw.inspect(p.detach()))
        p.grad = None
        p.data = p.data.t()  # the same storage at the same address, another layout
        p.mul(2)
        seen.append(sw.inspect(p.detach()))
        p.data = torch.zeros(6, dtype=torch.float64)
        p.mul(2)
        seen.append(sw.inspect(p.detach()))
    assert [_fields(e) for e in log.events] == [_fields(e) for e in eager_log.events]
    muls = [e for e in log.events if e.call == "torch.Tensor.mul"]
    assert [e.inputs[0] for e in muls] == seen
    assert [e.inputs[0].shape for e in muls] == [(2, 3), (2, 3), (3, 2), (6,)]


def test_attribute_reads_of_held_fields_are_not_events() -> None:
    """``x.grad``, ``x.device``, ``x.shape`` ... run no op and are no events; ``x.T`` and
    ``x.data`` run ops that make views: events, as before."""
    x = torch.zeros(2, 3, requires_grad=True)
    x.grad = torch.ones(2, 3)
    with sw.track_copies() as log:
        held = (x.grad, x.device, x.shape, x.dtype, x.is_leaf, x.grad_fn, x.requires_grad)
        held += (x.is_sparse, x.ndim, x.layout, x.is_cuda, x._base)
        views = (x.T, x.data)
    assert held[0] is x.grad and held[2] == (2, 3) and views[0].shape == (3, 2)
    assert [(e.call, e.kind) for e in log.events] == [
        ("torch.Tensor.T.__get__", "view"),
        ("torch.Tensor.data.__get__", "view"),
    ]
