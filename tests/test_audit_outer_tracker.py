"""Issue 37 (hostile review): ``sw.audit`` inside a ``with sw.track_copies():`` block reported an
``aten.copy_`` of each parameter's gradient by ``AccumulateGrad`` that the plain step does not
make (a Linear: 0 B outside a tracker, 129 KiB inside).  The copy was real, not a phantom row:
the outer tracker saw the audit's backward ops with no user-level call around them (the audit
runs backward with torch-function handling off), and its line cache kept each op's finished
handler frame, whose locals held the op's result: the gradient, which ``AccumulateGrad`` then
could not take into ``.grad`` without a copy (it steals one only when nothing else holds it).

Oracle: torch's profiler, counting the ``aten::copy_`` ops run under ``AccumulateGrad`` in the
plain step and in the audited one."""

from __future__ import annotations

import pytest
import torch

import stridewidget as sw
from stridewidget._compat import disable_torch_function


def _models() -> dict:
    torch.manual_seed(0)
    return {
        "linear": (torch.nn.Linear(128, 256), (torch.randn(4, 128),)),
        "mlp": (
            torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10)),
            (torch.randn(8, 32),),
        ),
        "conv": (
            torch.nn.Sequential(
                torch.nn.Conv2d(3, 8, 3), torch.nn.ReLU(), torch.nn.Conv2d(8, 4, 3)
            ),
            (torch.randn(2, 3, 16, 16),),
        ),
    }


def _accumulate_copies(run) -> int:
    """How many ``aten::copy_`` ops torch's profiler records under an ``AccumulateGrad`` node
    while ``run()`` runs."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        run()
    count = 0
    for event in prof.events():
        if event.name != "aten::copy_":
            continue
        parent = event.cpu_parent
        while parent is not None and "AccumulateGrad" not in parent.name:
            parent = parent.cpu_parent
        count += parent is not None
    return count


def _plain_step(model, inputs, disabled: bool = False):
    def step():
        model.zero_grad(set_to_none=True)
        loss = model(*inputs).sum()
        if disabled:  # backward's ops seen by a tracker with no user-level call around them
            with disable_torch_function():
                loss.backward()
        else:
            loss.backward()

    return step


def _rows(report) -> list[tuple]:
    return [(c.phase, c.module, c.where, c.call, c.ops, c.bytes) for c in report.copies]


@pytest.mark.parametrize("name", ["linear", "mlp", "conv"])
def test_audit_inside_a_tracker_reports_what_it_reports_outside(name):
    model, inputs = _models()[name]
    plain = _accumulate_copies(_plain_step(model, inputs))
    outside = sw.audit(model, *inputs)
    with sw.track_copies():
        inside = sw.audit(model, *inputs)
    assert _rows(inside) == _rows(outside)
    assert inside.total_bytes == outside.total_bytes
    accumulated = [c for c in inside.copies if c.call.startswith("AccumulateGrad")]
    assert len(accumulated) == plain == 0


@pytest.mark.parametrize("name", ["linear", "conv"])
def test_audited_step_inside_a_tracker_makes_no_copy_the_plain_step_does_not(name):
    """The profiler's own count over the audited step, run inside a tracker (the audit warns that
    a profiler of the caller's runs, and leaves it running)."""
    model, inputs = _models()[name]
    plain = _accumulate_copies(_plain_step(model, inputs))

    def audited():
        with sw.track_copies(), pytest.warns(UserWarning, match="torch.profiler session"):
            sw.audit(model, *inputs)

    assert _accumulate_copies(audited) == plain == 0


def test_tracker_keeps_no_result_of_an_op_it_saw_alone():
    """The tracker itself: backward's ops with torch-function handling off are events of their
    own, and the step under it accumulates each gradient without a copy, as it does bare."""
    model, inputs = _models()["mlp"]
    plain = _accumulate_copies(_plain_step(model, inputs, disabled=True))

    def tracked():
        with sw.track_copies() as log:
            _plain_step(model, inputs, disabled=True)()
        assert any(e.call.startswith("aten.") for e in log.events)

    assert _accumulate_copies(tracked) == plain == 0
    for disabled in (False, True):  # nested trackers: each sees every op, neither keeps one
        step = _plain_step(model, inputs, disabled=disabled)

        def nested(step=step):
            with sw.track_copies(), sw.track_copies():
                step()

        assert _accumulate_copies(nested) == 0
