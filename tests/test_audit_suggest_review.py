"""The review of sw.audit's suggestions (#23): texts true to the numbers, no fix for a copy that
is not there, keyword inputs treated as positional ones, a page that does not measure for minutes
unannounced, and activation-checkpoint recomputes at the module and library line re-run.

Where a test is about texts and the verdict rules, the measuring is replaced by fixed numbers
(the rule, written out again here, is the oracle); the rest audit tiny models for real."""

from __future__ import annotations

import random
import warnings

import pytest
import torch
from test_audit_zoo import _PatchEmbed  # a ViT stem: conv patches, flatten(2).transpose(1, 2)
from torch.utils.checkpoint import checkpoint

import stridewidget as sw
from stridewidget.copies.audit import suggest
from stridewidget.copies.audit.suggest import Measured, Suggestion
from stridewidget.copies.audit.timing import Timing


def _rule(before: tuple[float, float, float], after: tuple[float, float, float]) -> str:
    """#23 item 4, written out: faster / slower when the IQRs do not overlap and the medians
    differ by 5 % or more; else too noisy when an IQR is wider than half its median; else no
    measurable change."""
    (m0, a0, b0), (m1, a1, b1) = before, after
    if b1 < a0 and m1 <= 0.95 * m0:
        return "faster"
    if a1 > b0 and m1 >= 1.05 * m0:
        return "slower"
    if b0 - a0 > 0.5 * m0 or b1 - a1 > 0.5 * m1:
        return "too noisy to judge"
    return "no measurable change"


def _suggestion(before, after, bytes_before=100, bytes_after=50) -> Suggestion:
    measured = {
        "before": Measured(1, bytes_before, *before),
        "after": Measured(1, bytes_after, *after),
    }
    return Suggestion("w", "w", "w", measured, True)


# The reviewer's numbers: 1.10 ms (IQR 0.97-1.27) before, 5.00 ms (IQR 0.85-5.21) after.
_QUIET = (1.10e-3, 0.97e-3, 1.27e-3)
_NOISY = (5.00e-3, 0.85e-3, 5.21e-3)


def test_a_noisy_timing_reads_too_noisy_to_judge_and_says_what_was_measured():
    noisy = _suggestion(_QUIET, _NOISY)
    assert noisy.speed == _rule(_QUIET, _NOISY) == "too noisy to judge"
    assert noisy.helps  # fewer bytes and not measured slower: the rule's "helps"
    assert "fewer bytes copied, the timing too noisy to judge" in str(noisy)
    quiet = _suggestion(_QUIET, _QUIET)
    assert quiet.speed == "no measurable change"
    assert "fewer bytes copied, no measurable change in time" in str(quiet)


def test_the_speed_and_helps_follow_the_rule_on_random_timings():
    rng = random.Random(0)
    for _ in range(2000):
        timings = []
        for _ in range(2):
            median = rng.uniform(0.5, 2.0)
            timings.append((median, median * rng.uniform(0.3, 1.0), median * rng.uniform(1.0, 1.7)))
        fewer = rng.random() < 0.5
        item = _suggestion(*timings, bytes_after=50 if fewer else 100)
        expected = _rule(*timings)
        assert item.speed == expected, timings
        assert item.helps == ((fewer and expected != "slower") or expected == "faster")


def _fixed_measure(before, after, after_bytes):
    """A stand-in for suggest.measure: the unchanged step's copies, fixed timings."""

    def measure(model, inputs, backward, loss_fn, where, what, fix, apply, kwargs=None):
        copies = sw.audit(model, *inputs, backward=backward, model_kwargs=kwargs or None).copies
        size = sum(c.bytes for c in copies)
        measured = {
            "before": Measured(len(copies), size, *before),
            "after": Measured(len(copies), after_bytes(size), *after),
        }
        return Suggestion(where, what, fix, measured, True)

    return measure


def test_the_patch_embedding_edit_says_what_channels_last_measured(monkeypatch):
    x = torch.randn(2, 3, 16, 16)
    # fewer bytes, the timing too noisy: "helps" by the rule, never "measured to help" in words
    monkeypatch.setattr(suggest, "measure", _fixed_measure(_QUIET, _NOISY, lambda n: n // 2))
    report = sw.audit(_PatchEmbed(), x)
    (channels_last,) = [s for s in report.suggestions if s.applied]
    (edit,) = [s for s in report.suggestions if not s.applied]
    assert channels_last.helps and "run the patch convolution channels-last" in edit.fix
    assert "measured to help" not in edit.fix
    assert "fewer bytes copied, the timing too noisy to judge" in edit.fix
    # one measurement of the unchanged step, not a second that reads differently
    assert edit.measured["before"] == channels_last.measured["before"]
    # slower: the edit does not build on it, and says what was measured
    slower = (2 * _QUIET[0], 1.9 * _QUIET[0], 2.1 * _QUIET[0])
    monkeypatch.setattr(suggest, "measure", _fixed_measure(_QUIET, slower, lambda n: n // 2))
    report = sw.audit(_PatchEmbed(), x)
    (edit,) = [s for s in report.suggestions if not s.applied]
    assert "run the patch convolution" not in edit.fix
    assert "did not help: fewer bytes copied, slower" in edit.fix


class _MadePermuted(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.n = torch.nn.LayerNorm(8)

    def forward(self, x):
        return self.n((x * 2).permute(2, 1, 0))


def test_an_edit_names_channels_last_only_when_it_was_tried():
    report = sw.audit(_MadePermuted(), torch.randn(8, 4, 2))
    (edit,) = report.suggestions  # no convolution: channels-last was never tried
    assert not edit.applied and edit.fix.startswith("edit ")
    assert "channels-last" not in edit.fix and "channels-last" not in edit.what


def _profiled_copies(model: torch.nn.Module, x: torch.Tensor) -> list[tuple[str, str]]:
    with torch.profiler.profile() as profile:
        model(x).sum().backward()
    copies = ("aten::copy_", "aten::clone", "aten::contiguous", "aten::_to_copy")
    return sorted(
        (event.name, event.cpu_parent.name if event.cpu_parent else "")
        for event in profile.events()
        if event.name in copies
    )


def test_no_fix_is_suggested_for_an_input_no_copy_reads():
    model = torch.nn.Sequential(torch.nn.Linear(64, 8), torch.nn.GELU(), torch.nn.Linear(8, 4))
    x = torch.randn(64, 16).t()
    # the oracle: the profiler sees the same copy ops in the step whether x is contiguous or
    # not (addmm reads x.t() as it is): making it contiguous would remove none
    assert _profiled_copies(model, x) == _profiled_copies(model, x.contiguous())
    report = sw.audit(model, x)
    assert not report.copies
    assert report.suggestions == []


class _Norm(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.n = torch.nn.LayerNorm(64)

    def forward(self, a=None, *, b=None):
        return self.n(a if a is not None else b)


def _fixed_timing(steps, **_):
    """A stand-in for suggest.interleaved: each step run once, every timing the same."""
    for step in steps.values():
        step()
    return {label: Timing(1e-3, 0.99e-3, 1.01e-3) for label in steps}


def test_a_keyword_input_gets_the_fix_a_positional_one_gets(monkeypatch):
    monkeypatch.setattr(suggest, "interleaved", _fixed_timing)
    x = torch.randn(64, 16, 2).permute(2, 1, 0)
    positional = sw.audit(_Norm(), x).suggestions
    keyword = sw.audit(_Norm(), model_kwargs={"b": x}).suggestions
    assert [s.fix for s in positional] == ["inputs[0] = inputs[0].contiguous()"]
    assert [s.fix for s in keyword] == ['model_kwargs["b"] = model_kwargs["b"].contiguous()']
    for found in (positional, keyword):
        (item,) = found
        assert item.applied and item.outputs_match
        assert "channels-last" not in str(item)
        # after the fix the step copies x once, in the fix: its bytes, raw
        assert item.measured["after"].bytes == x.numel() * x.element_size()
    assert positional[0].measured["after"].copies == keyword[0].measured["after"].copies


class _Convs(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.c = torch.nn.Conv2d(3, 4, 3)

    def forward(self, x):
        return self.c(x).permute(0, 2, 3, 1).reshape(len(x), -1)


def test_the_page_measures_within_a_budget_and_names_what_it_left(monkeypatch, tmp_path):
    calls = []
    fixed = _fixed_measure(_QUIET, _QUIET, lambda n: n)

    def counted(*arguments, **keywords):
        calls.append(arguments[4])
        return fixed(*arguments, **keywords)

    monkeypatch.setattr(suggest, "measure", counted)
    report = sw.audit(_Convs(), torch.randn(2, 3, 6, 6))
    path = tmp_path / "audit.html"
    report.to_html(str(path), budget_s=0)
    page = path.read_text()
    assert calls == [] and "suggestions" not in report.__dict__
    # channels-last, and the edit of the permute + reshape (it shows the step's time)
    assert "Not measured: 2 more candidate fixes" in page and "the convolution stack" in page
    found = report.suggestions  # all of them, measured when read
    assert [s.where for s in found if s.applied] == ["the convolution stack"] == calls
    assert [s.fix for s in found if not s.applied] == [f"edit {report.copies[0].where}"]
    report.to_html(str(path), budget_s=0)  # already measured: the page costs nothing more
    page = path.read_text()
    assert len(calls) == 1 and "Not measured" not in page and "helps: " in page


class _Checkpointed(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a = torch.nn.Linear(8, 8)
        self.b = torch.nn.Linear(8, 8)
        self.d = torch.nn.Dropout(0.3)

    def block(self, x):
        return self.b(self.d(torch.relu(self.a(x))).transpose(0, 1).contiguous())

    def forward(self, x):
        return checkpoint(self.block, x, use_reentrant=False)


def test_a_recomputed_copy_has_the_module_and_library_line_it_re_ran():
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = sw.audit(_Checkpointed(), torch.randn(4, 5, 8))
    forward = [c for c in report.copies if c.phase == "forward"]
    recomputed = [c for c in report.copies if c.recompute]
    assert recomputed and len(recomputed) == len(forward)
    # the same calls, re-run in the same order: same module, same line, same library line
    for first, again in zip(forward, recomputed):
        assert again.where == f"{first.where} (recompute)"
        assert again.module == first.module
        assert again.detail == first.detail
    assert "d" in {c.module for c in recomputed}


if __name__ == "__main__":
    pytest.main([__file__, "-q"])
