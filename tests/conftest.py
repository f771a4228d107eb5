"""Fixtures shared by the unit and property test files."""

from __future__ import annotations

import pytest

from stridewidget import _overlap


@pytest.fixture(params=["with NumPy's solver", "own search only"])
def solver_paths(request, monkeypatch):
    """Run a test through both step 4 (NumPy's C solver) and the pure-Python search."""
    if request.param == "own search only":
        monkeypatch.setattr(_overlap, "_numpy_solver", None)
    else:
        assert _overlap._numpy_solver is not None, "NumPy's solve_diophantine is not importable"
    return request.param
