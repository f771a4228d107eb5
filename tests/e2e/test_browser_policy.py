"""The browser layer never passes silently: without a browser it fails in CI, skips (visibly) else."""

from __future__ import annotations

import pytest

from .conftest import require_or_skip


def test_missing_browser_fails_in_ci(monkeypatch):
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI is set"):
        require_or_skip(False, "/usr/bin/chromium is missing")


def test_missing_browser_skips_locally_with_the_reason(monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="chromium is missing"):
        require_or_skip(False, "/usr/bin/chromium is missing")


def test_present_browser_runs(monkeypatch):
    monkeypatch.setenv("CI", "true")
    require_or_skip(True, "unused")  # no exception: the tests run
