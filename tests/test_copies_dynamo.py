"""Issue 41: the tracker's op mode runs without torch's per-op dynamo-disable wrapper while no
``torch.compile`` frame hook is set, and hands over to it when one is: the events are the same
either way, and dynamo never sees the handler's frame."""

from __future__ import annotations

import pytest
import torch

import stridewidget as sw
from stridewidget.copies import tracker

UNWRAPPED = not hasattr(tracker.OpMode.__dict__["__torch_dispatch__"], "__wrapped__")


@pytest.fixture
def loud(monkeypatch):
    """Counts the ops whose handler found a frame hook set (and handed over to torch's wrapper)."""
    count = [0]
    quiet = tracker._dynamo_quiet

    def counting() -> bool:
        answer = quiet()
        count[0] += not answer
        return answer

    torch._dynamo.eval_frame.skip_code(counting.__code__)  # run as the handler runs it
    monkeypatch.setattr(tracker, "_dynamo_quiet", counting)
    return count


def _events(log):
    return [(e.call, e.kind, e.ops, e.bytes_copied) for e in log.events]


def test_the_handler_is_unwrapped_and_quiet_outside_compile():
    if not UNWRAPPED:
        pytest.skip("this torch keeps its wrapper (no frame-hook reader)")
    assert tracker._dynamo_quiet()
    assert tracker._dynamo_wrapped.__wrapped__ is tracker.OpMode.__dict__["__torch_dispatch__"]


def test_a_compiled_function_in_the_block_is_tracked_as_run_eagerly(loud):
    def f(x):
        return (x.t().contiguous() * 2).sum(0)

    compiled = torch.compile(f, backend="eager")
    x = torch.arange(20.0).reshape(4, 5)
    compiled(x)  # compiled before the block
    with sw.track_copies() as eager:
        f(x)
    loud[0] = 0
    frames = dict(torch._dynamo.utils.counters["frames"])
    with sw.track_copies() as log:
        y = compiled(x)
    # dynamo compiled no frame in the block: not the handler's, nor the check it starts with
    assert dict(torch._dynamo.utils.counters["frames"]) == frames
    assert _events(log) == _events(eager)
    assert _events(log)[1] == ("torch.Tensor.contiguous", "copy", ("aten.clone",), 80)
    assert torch.equal(y, f(x))
    if UNWRAPPED:  # dynamo's hook was on while the ops ran: each went through torch's wrapper
        assert loud[0] > 0
    with sw.track_copies() as after:  # the handler is quiet again once the hook is off
        f(x)
    assert _events(after) == _events(eager)


def test_a_stance_that_runs_compiled_code_only_is_kept(loud):
    x = torch.arange(6.0).reshape(2, 3)
    with sw.track_copies() as plain:
        x.t().reshape(-1)
    with torch.compiler.set_stance("eager_on_recompile"), sw.track_copies() as log:
        x.t().reshape(-1)  # the wrapper would set the run-only hook (False): handed over, once
    assert _events(log) == _events(plain)
    if UNWRAPPED:
        assert loud[0] == len([op for e in log.events for op in e.ops])
