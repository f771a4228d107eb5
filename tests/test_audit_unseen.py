"""``sw.audit`` inside a user's ``with sw.track_copies() as log:`` block (review finding): the
user's log recorded the audit's own work as the user's: a ``clone`` copy of each parameter and
buffer at ``contextlib.py`` (the state the audit keeps to give back), the views and computes of
its comparison, and the audited step again, 62 events and 240 B of copies for a Linear +
BatchNorm1d whose own step has 5 events and no copy.  The audit is a measuring instrument: a
block around it records what the block's own code does, as if the audit had not run.

Oracle: the same block without the audit (its events' calls, kinds and bytes), and the audit's
report outside any block."""

from __future__ import annotations

import torch

import stridewidget as sw


class _Flatten(torch.nn.Module):
    def forward(self, x):
        return x.permute(0, 2, 3, 1).reshape(len(x), -1)  # permute, then reshape: copies


def _model() -> tuple[torch.nn.Module, torch.Tensor]:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 1), torch.nn.BatchNorm2d(4), _Flatten())
    return model, torch.randn(2, 3, 4, 4)


def _events(log) -> list[tuple]:
    return [(e.call, e.kind, e.bytes_copied) for e in log.events]


def _rows(report) -> list[tuple]:
    return [(c.phase, c.module, c.call, c.ops, c.bytes) for c in report.copies]


def _users_block(x: torch.Tensor, audit=None) -> list[tuple]:
    """The user's own calls around an audit (``audit``: a callable run between them)."""
    with sw.track_copies() as log:
        x.t().reshape(-1)  # a copy of the user's
        if audit is not None:
            audit()
        x.t().contiguous()  # and another
    return _events(log)


def test_a_block_around_an_audit_records_the_users_calls_alone():
    model, inputs = _model()
    x = torch.arange(12.0).reshape(3, 4)
    alone = _users_block(x)
    reports = []
    around = _users_block(x, lambda: reports.append(sw.audit(model, inputs)))
    assert around == alone
    assert sum(b for _, _, b in around) == 2 * x.numel() * x.element_size()
    assert _rows(reports[0]) == _rows(sw.audit(model, inputs))
    assert reports[0].total_bytes > 0  # the audit itself still saw the model's copies


def test_a_block_around_the_suggestions_records_none_of_their_measuring():
    model, inputs = _model()
    x = torch.arange(12.0).reshape(3, 4)
    report = sw.audit(model, inputs)
    alone = _users_block(x)
    found = []
    around = _users_block(x, lambda: found.extend(report.suggestions))
    assert around == alone
    assert found, "the permute-then-reshape model has a candidate fix to measure"


def test_trackers_opened_inside_still_record_and_the_outer_one_after():
    model, inputs = _model()
    x = torch.arange(12.0).reshape(3, 4)
    with sw.track_copies() as outer:
        with sw.track_copies() as inner:
            x.t().reshape(-1)
        report = sw.audit(model, inputs)
        x.flip(0)
    with sw.track_copies() as alone:
        x.flip(0)
    assert [kind for _, kind, _ in _events(inner)] == ["view", "copy"]
    assert _events(outer) == [*_events(inner), *_events(alone)]
    assert _rows(report) == _rows(sw.audit(model, inputs))


@torch.jit.script
def _inner(z: torch.Tensor) -> torch.Tensor:
    return z.t().contiguous()


@torch.jit.script
def _forked(z: torch.Tensor) -> torch.Tensor:
    return torch.jit.wait(torch.jit.fork(_inner, z))


class _Forks(torch.nn.Module):
    """Its forward runs ops on a thread torch starts (TorchScript's fork), which torch gives the
    same interception modes: the audit's work there is the audit's too (review: on CUDA, the
    backward's device thread is such a thread)."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(8, 8)

    def forward(self, z):
        return self.linear(_forked(z).t())


def test_the_audits_work_on_threads_torch_starts_is_not_the_blocks():
    torch.manual_seed(0)
    model, z = _Forks(), torch.randn(4, 8)
    for _ in range(3):  # the script's profiling runs first
        model(z)
    x = torch.arange(12.0).reshape(3, 4)
    alone = _users_block(x)
    assert _users_block(x, lambda: sw.audit(model, z, backward=False)) == alone


def test_a_layout_the_audited_step_changed_is_read_again_after_it():
    """Review: ``g.t_()`` inside the audited forward ran while the user's tracker was hushed, and
    its snapshot of ``g`` (kept for reuse) said (3, 4):(4, 1) at the user's next call."""
    g = torch.arange(12.0).reshape(3, 4)

    class TransposesAGlobal(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.linear = torch.nn.Linear(4, 4)

        def forward(self, z):
            with torch.no_grad():
                g.t_()
            return self.linear(z)

    with sw.track_copies() as log:
        g.sum()
        sw.audit(TransposesAGlobal(), torch.randn(2, 4), backward=False)
        g.reshape(-1)
    event = log.events[-1]
    assert event.call == "torch.Tensor.reshape"
    assert event.inputs[0] == sw.inspect(g)  # the layout g has now: (4, 3):(1, 4)
    assert (event.kind, event.bytes_copied) == ("copy", g.numel() * g.element_size())
