"""Every tutorial passes when its cells run twice in one kernel, as a reader re-running cells does.

A cell that only works once (a warning torch emits once per process, a name the next cell
rebinds, a tensor modified in place) fails here. Each source's cells are executed in order, then
all of them again, in one kernel, with nbclient; an error in either pass fails the test.

The second pass leaves out the cells tagged ``nbval-ignore-output``: the live benchmark run of
notebook 05 and its figures, which carry no verdict (``test_notebooks_meta`` checks that) and
would double the test's time; the cells that assert on their results do run again.
"""

from __future__ import annotations

import copy
import importlib.util
from pathlib import Path

import pytest
from nbclient.exceptions import CellExecutionError

NOTEBOOK_DIR = Path(__file__).resolve().parent.parent / "notebooks"
SOURCES = sorted(NOTEBOOK_DIR.glob("[0-9][0-9]_*.py"))
LIVE_TIMING_TAG = "nbval-ignore-output"


def load_build_script():
    # notebooks/build.py is a script, not a package module: load it by path.
    spec = importlib.util.spec_from_file_location("notebooks_build", NOTEBOOK_DIR / "build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_notebook_passes_when_run_twice_in_one_kernel(path):
    build = load_build_script()
    notebook = build.read_source(path)
    second_pass = [
        cell for cell in notebook.cells if LIVE_TIMING_TAG not in cell.metadata.get("tags", [])
    ]
    notebook.cells = notebook.cells + copy.deepcopy(second_pass)
    try:
        build.execute(notebook)
    except CellExecutionError as error:
        pytest.fail(f"{path.name} fails on a second run of its cells:\n{error}")
