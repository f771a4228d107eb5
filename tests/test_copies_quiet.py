"""The tracker's cheap paths give the events its general paths give (issue 41): calls that only
read a plain tensor's field (``torch.is_complex(x)``, ``x.dim()``) return before any bookkeeping,
and :func:`~stridewidget.copies.snapshot.call_snapshots` lends a tensor's earlier snapshot, met
positionally, by keyword, in a list or as the result, only while its storage is where it was."""

from __future__ import annotations

import pytest
import torch

import stridewidget as sw
from stridewidget.copies import tracker
from stridewidget.copies.log import CopyLog
from stridewidget.copies.tracker import CallMode, OpMode, Recorder, tracking


class _Eager(Recorder):
    lazy = False  # snapshots every call afresh: no snapshot lent


def _fields(event: sw.copies.log.CopyEvent) -> tuple:
    return (event.call, event.ops, event.kind, event.returned_input, event.wrote_input,
            event.bytes_copied, event.inputs, event.outputs, event.transforms)  # fmt: skip


def _calls() -> None:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x = torch.randn(3, 4)
    for _ in range(2):  # AdamW asks torch.is_complex of each parameter
        optimizer.zero_grad()
        model(x).pow(2).mean().backward()
        optimizer.step()
    z = torch.zeros(2, dtype=torch.complex64)
    torch.is_complex(z), z.is_complex(), x.is_floating_point(), x.dim()
    torch.vmap(lambda t: t.add(1) if t.is_complex() or t.dim() else t.mul(2))(x)


@pytest.mark.parametrize("quiet", [True, False])
def test_quiet_calls_give_the_events_of_the_general_path(quiet, monkeypatch) -> None:
    if not quiet:  # the general path for every call: the log recorded without the fast return
        monkeypatch.setattr(tracker, "_QUIET_CALLS", {})
    with sw.track_copies() as log:
        _calls()
    monkeypatch.setattr(tracker, "_QUIET_CALLS", {})
    with sw.track_copies() as general:
        _calls()
    assert [_fields(e) for e in log.events] == [_fields(e) for e in general.events]
    calls = {e.call for e in log.events}
    assert not calls & {"torch.is_complex", "torch.Tensor.is_complex", "torch.Tensor.dim"}
    assert "torch.Tensor.addcdiv_" in calls and any(e.transforms for e in log.events)


def test_lent_snapshots_are_the_fresh_ones_wherever_the_tensor_is_met() -> None:
    """Positional, keyword, list and result: the lazy log equals the eager recorder's (every
    snapshot fresh), also after the storage was resized or moved under the tensor."""
    x, y = torch.zeros(2, 3), torch.ones(2, 3)
    eager = _Eager(CopyLog())
    with tracking(CallMode(eager), OpMode(eager)) as eager_log, sw.track_copies() as log:
        for resize in (None, 48, 24, 0, 24):
            if resize is not None:
                x.untyped_storage().resize_(resize)  # no op the tracker sees
            if resize == 0:
                x.untyped_storage().resize_(24)  # freed and allocated again: it may move
            x.add_(y)
            torch.add(x, other=y, out=None)
            torch.mul(input=x, other=2)
            torch.cat([x, y])
            torch.stack((y, x))
            x.mul_(1)
    assert [_fields(e) for e in log.events] == [_fields(e) for e in eager_log.events]
    adds = [e for e in log.events if e.call == "torch.Tensor.add_"]
    assert [e.inputs[0].storage_size for e in adds] == [6, 12, 6, 6, 6]
    assert all(e.returned_input and e.kind == "in-place" for e in adds)
