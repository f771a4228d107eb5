"""Fixtures shared by the unit and property test files."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# The tutorials' scaffolding (notebooks/lessons.py) is not part of the wheel: the notebook checks
# import it from the notebooks folder, as the notebooks themselves do.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "notebooks"))

from stridewidget.layout.overlap import lattice as _lattice
from stridewidget.layout.overlap import portfolio as _portfolio


@pytest.fixture(params=["every member", "without NumPy's solver", "depth-first search only"])
def solver_paths(request, monkeypatch):
    """Run a test through the solver's portfolio with every member, without NumPy's C solver
    (step 4), and with the pure-Python depth-first search alone (no lattice search, step 6)."""
    if request.param == "every member":
        assert _portfolio._numpy_solver is not None, "NumPy's solve_diophantine is not importable"
        assert _lattice._load_flint() is not None, "python-flint (a dependency) is not importable"
    else:
        monkeypatch.setattr(_portfolio, "_numpy_solver", None)
    if request.param == "depth-first search only":
        monkeypatch.setattr(_lattice, "_flint", None)
    return request.param


@pytest.fixture
def group():
    """A fake process group (DTensor tests): ``group(world, rank=0)`` starts one of ``world``
    ranks as ``rank``; destroyed after the test."""
    import torch.distributed as dist
    from torch.testing._internal.distributed.fake_pg import FakeStore

    def start(world: int, rank: int = 0) -> None:
        dist.init_process_group("fake", store=FakeStore(), rank=rank, world_size=world)

    yield start
    if dist.is_initialized():
        dist.destroy_process_group()
