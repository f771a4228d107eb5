"""Static checks on the saved tutorial notebooks (no kernel; nbval re-runs them separately).

Every notebook must have been executed top to bottom without errors and end with a table of the
seed claims it checked, each with a verdict (a markdown table naming the cell that shows each
claim, or a code cell that prints the table from its measurements). Tutorials 01-04 must also
label the cells the table cites, tag their timing cells for nbval, and match the generator
script they were built from.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import nbformat
import pytest

NOTEBOOK_DIR = Path(__file__).resolve().parent.parent / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("[0-9][0-9]_*.ipynb"))
VERDICTS = ("right", "wrong", "partly", "gpu-only")
CLAIM_TAG = re.compile(r"\[([A-D]\d+|copies)\]")
TIMING_CALLS = ("median_us(", "benchmark.Timer", "timeit", "time.perf_counter")


def read(path: Path) -> nbformat.NotebookNode:
    return nbformat.read(path, as_version=4)


def code_cells(notebook: nbformat.NotebookNode) -> list[nbformat.NotebookNode]:
    return [cell for cell in notebook.cells if cell.cell_type == "code"]


def table_rows(markdown: str) -> list[list[str]]:
    rows = []
    for line in markdown.splitlines():
        if line.startswith("|") and not re.match(r"^\|[-\s|]+\|$", line):
            rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    return rows


def test_the_four_tutorials_exist():
    names = {path.name[:2] for path in NOTEBOOKS}
    assert {"01", "02", "03", "04"} <= names


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_code_cell_ran_in_order_without_errors(path):
    cells = code_cells(read(path))
    assert cells, "no code cells"
    counts = [cell.execution_count for cell in cells]
    assert None not in counts, "some code cells were never executed"
    assert counts == list(range(1, len(cells) + 1)), "cells were not run once, top to bottom"
    for cell in cells:
        errors = [out for out in cell.outputs if out.output_type == "error"]
        assert not errors, f"cell {cell.execution_count} saved an error: {errors[0].ename}"


def output_text(cell: nbformat.NotebookNode) -> str:
    parts = []
    for out in cell.outputs:
        if out.output_type == "stream":
            parts.append(out.text)
        elif "text/plain" in out.get("data", {}):
            parts.append(out.data["text/plain"])
    return "".join(parts)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_ends_with_a_seed_claims_table(path):
    notebook = read(path)
    last = notebook.cells[-1]
    if last.cell_type == "code":
        # a table computed from the measurements: its printed header must name the verdicts
        assert "verdict" in output_text(last).lower(), "the last cell prints no claims table"
        return
    rows = table_rows(last.source)
    assert len(rows) >= 2, "no table in the last cell"
    header = [column.lower() for column in rows[0]]
    verdict_column = next(i for i, name in enumerate(header) if "verdict" in name)
    cell_column = next(i for i, name in enumerate(header) if "cell" in name)
    code = [cell.source for cell in code_cells(notebook)]
    for row in rows[1:]:
        assert row[verdict_column].lower().startswith(VERDICTS), f"bad verdict in {row}"
        for tag in CLAIM_TAG.findall(row[cell_column]):
            assert any(f"[{tag}]" in source.splitlines()[0] for source in code), (
                f"the table cites cell [{tag}], which no code cell is labelled with"
            )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_claim_cells_assert_and_timing_cells_are_ignored_by_nbval(path):
    for cell in code_cells(read(path)):
        tags = cell.metadata.get("tags", [])
        first_line = cell.source.splitlines()[0] if cell.source else ""
        if any(call in cell.source for call in TIMING_CALLS) and "def median_us" not in cell.source:
            assert "nbval-ignore-output" in tags, f"timing cell not tagged: {first_line}"
        elif CLAIM_TAG.search(first_line):
            assert "assert" in cell.source, f"claim cell without an assert: {first_line}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_is_small(path):
    assert path.stat().st_size < 1_000_000


def load_generator():
    spec = importlib.util.spec_from_file_location(
        "make_notebooks", NOTEBOOK_DIR / "make_notebooks.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_saved_notebooks_match_their_generator():
    generator = load_generator()
    for name, source in generator.NOTEBOOKS.items():
        expected = generator.parse_cells(generator.expand(source))
        saved = read(NOTEBOOK_DIR / f"{name}.ipynb").cells
        assert [c.source for c in saved] == [c.source for c in expected], (
            f"{name}.ipynb is out of date: run `.venv/bin/python notebooks/make_notebooks.py {name[:2]}`"
        )
        assert [c.metadata.get("tags", []) for c in saved] == [
            c.metadata.get("tags", []) for c in expected
        ]
