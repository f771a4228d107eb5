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
