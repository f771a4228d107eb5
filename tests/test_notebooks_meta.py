"""Static checks on the tutorial notebooks, their sources and the claims registry (no kernel).

nbval re-runs the saved notebooks separately, and ``test_notebooks_rerun.py`` runs each source
twice in one kernel. Here: each saved ``NN_*.ipynb`` is its source ``NN_*.py`` executed top to
bottom without errors; every verdict is rendered from ``notebooks/claims.toml`` and backed by a
labelled code cell that asserts; cells that nbval does not compare carry no verdict.
"""

from __future__ import annotations

import re
from pathlib import Path

import jupytext
import nbformat
import pytest
from lessons import (
    ARTICLES,
    VERDICTS,
    load_claims,
    seed_myth,
    stored_cuda_runs,
    verdict_table,
)

NOTEBOOK_DIR = Path(__file__).resolve().parent.parent / "notebooks"
SOURCES = sorted(NOTEBOOK_DIR.glob("[0-9][0-9]_*.py"))
CLAIMS = load_claims(NOTEBOOK_DIR / "claims.toml")
IGNORED = "nbval-ignore-output"
IGNORED_COMMENT = "# NBVAL_IGNORE_OUTPUT"  # nbval's other way to skip a cell's output
SEEDS_DIR = Path("/work/shared/seeds")
TIMING_CALLS = ("median_us(", "benchmark.Timer", "timeit", "time.perf_counter", "bench.run(")
LONGEST_CELL = 25  # lines; a cell a reader takes in at a glance


def source_cells(path: Path) -> list[nbformat.NotebookNode]:
    return jupytext.read(path, fmt="py:percent").cells


def code_cells(cells: list[nbformat.NotebookNode]) -> list[nbformat.NotebookNode]:
    return [cell for cell in cells if cell.cell_type == "code"]


def first_line(cell: nbformat.NotebookNode) -> str:
    return cell.source.splitlines()[0] if cell.source else ""


def test_the_five_tutorials_are_there_in_reading_order():
    assert [path.name for path in SOURCES] == [
        "01_storage_strides_views.py",
        "02_copy_semantics.py",
        "03_expand_and_contiguity.py",
        "04_as_strided_tricks.py",
        "05_gpu_benchmarks.py",
        *[p.name for p in SOURCES[5:]],  # later notebooks (e.g. 06) are welcome
    ]


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_saved_notebook_matches_its_source(path):
    saved_path = path.with_suffix(".ipynb")
    rebuild = f"run `.venv/bin/python notebooks/build.py {path.name[:2]}`"
    assert saved_path.exists(), f"{saved_path.name} is missing: {rebuild}"
    saved = nbformat.read(saved_path, as_version=4).cells
    expected = source_cells(path)
    assert [(c.cell_type, c.source) for c in saved] == [
        (c.cell_type, c.source) for c in expected
    ], f"{saved_path.name} is out of date: {rebuild}"
    assert [c.metadata.get("tags", []) for c in saved] == [
        c.metadata.get("tags", []) for c in expected
    ], f"{saved_path.name} has other cell tags than its source: {rebuild}"


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_every_code_cell_ran_in_order_without_errors(path):
    cells = code_cells(nbformat.read(path.with_suffix(".ipynb"), as_version=4).cells)
    assert cells, "no code cells"
    counts = [cell.execution_count for cell in cells]
    assert counts == list(range(1, len(cells) + 1)), "cells were not run once, top to bottom"
    for cell in cells:
        errors = [out for out in cell.outputs if out.output_type == "error"]
        assert not errors, f"cell {cell.execution_count} saved an error: {errors[0].ename}"


def test_every_claim_has_a_labelled_cell_that_asserts():
    by_notebook = {path.name[:2]: code_cells(source_cells(path)) for path in SOURCES}
    for claim in CLAIMS.values():
        assert claim.verdict in VERDICTS
        cells = by_notebook.get(claim.notebook)
        assert cells is not None, f"{claim.id}: no notebook {claim.notebook}"
        labelled = [cell for cell in cells if f"[{claim.cell}]" in first_line(cell)]
        assert labelled, (
            f"{claim.id}: notebook {claim.notebook} has no cell labelled [{claim.cell}]"
        )
        assert any("assert" in cell.source for cell in labelled), (
            f"{claim.id}: the cells labelled [{claim.cell}] assert nothing"
        )
        assert all(IGNORED not in cell.metadata.get("tags", []) for cell in labelled), (
            f"{claim.id}: a verdict must rest on a cell nbval compares, not on [{claim.cell}] "
            f"tagged {IGNORED}"
        )


MYTH_CALL = re.compile(r"seed_myth\(([^)]*)\)")


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_verdicts_come_only_from_the_registry(path):
    notebook = path.name[:2]
    cells = source_cells(path)
    for cell in cells:
        if cell.cell_type == "markdown":
            header_rows = [line for line in cell.source.splitlines() if line.startswith("|")]
            assert not any("verdict" in row.lower() for row in header_rows), (
                "a hand-written verdict table: render it with verdict_table() from claims.toml"
            )
    shown = [
        claim_id
        for cell in code_cells(cells)
        for call in MYTH_CALL.findall(cell.source)
        for claim_id in re.findall(r'"([A-Z]\d+[a-z]?)"', call)
    ]
    assert len(shown) == len(set(shown)), "a seed claim is shown twice"
    mine = {c.id for c in CLAIMS.values() if c.notebook == notebook}
    assert set(shown) <= set(CLAIMS), f"unknown claims {set(shown) - set(CLAIMS)}"
    assert set(shown) == mine, f"claims judged here but never shown: {mine - set(shown)}"
    if mine:
        assert f'verdict_table("{notebook}")' in cells[-1].source, "no verdict table at the end"


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_saved_verdicts_match_the_registry(path):
    # A saved box or table that was rendered from an older claims.toml is a second, stale place.
    registry = NOTEBOOK_DIR / "claims.toml"
    render = {
        "seed_myth": lambda *ids: seed_myth(*ids, path=registry),
        "verdict_table": lambda *args, **kwargs: verdict_table(*args, **kwargs, path=registry),
    }
    saved = nbformat.read(path.with_suffix(".ipynb"), as_version=4)
    for cell in code_cells(saved.cells):
        if cell.source.startswith(tuple(render)):
            shown = [out.data["text/markdown"] for out in cell.outputs if "data" in out]
            expected = eval(cell.source, {"__builtins__": {}}, render).text
            assert shown == [expected], f"stale verdicts in {cell.source!r}: rebuild {path.name}"


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_cells_nbval_skips_carry_no_verdict_and_timing_cells_are_skipped(path):
    for cell in code_cells(source_cells(path)):
        ignored = IGNORED in cell.metadata.get("tags", []) or IGNORED_COMMENT in cell.source
        if any(call in cell.source for call in TIMING_CALLS):
            assert ignored, f"timing cell not tagged {IGNORED}: {first_line(cell)}"
        if ignored:
            assert "seed_myth" not in cell.source and "verdict_table" not in cell.source


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_cells_are_short(path):
    for cell in source_cells(path):
        lines = len(cell.source.splitlines())
        assert lines <= LONGEST_CELL, f"a {lines}-line cell: {first_line(cell)}"


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_saved_notebook_is_small(path):
    assert path.with_suffix(".ipynb").stat().st_size < 1_000_000


def test_every_seed_box_names_its_article():
    # a reader must be able to find what a box quotes: the seed's file and the article's heading
    for claim in CLAIMS.values():
        box = seed_myth(claim.id, path=NOTEBOOK_DIR / "claims.toml").text
        number = claim.article or {"A": "000", "B": "001", "C": "002", "D": "004"}[claim.id[0]]
        file_name, heading = ARTICLES[number]
        assert re.fullmatch(rf"{number}_[0-9a-f]{{16}}\.txt", file_name), file_name
        assert f"seed {number}, file `{file_name}`, the article's heading “{heading}”" in box
    s_claims = [c for c in CLAIMS.values() if c.id.startswith("S")]
    assert s_claims and all(c.article in ARTICLES for c in s_claims)


@pytest.mark.skipif(not SEEDS_DIR.is_dir(), reason="the seed articles are not on this machine")
def test_every_article_file_holds_its_heading():
    for file_name, heading in ARTICLES.values():
        text = (SEEDS_DIR / file_name).read_text(encoding="utf-8")
        assert heading.replace("：", "") in text.replace("：", ""), file_name


# Words that put a seed passage on a GPU. A paraphrase may drop them (S7's "halves the bandwidth
# use" is about a GPU's L2 cache), so the `device` field is the record, and these only a floor.
GPU_WORDS = re.compile(r"GPU|CUDA|cuda|cuBLAS|cuDNN|A100|RTX|显存|cudaMemcpy")
# Claims whose paraphrase once dropped the word "GPU" and were judged from a CPU run.
GPU_CLAIMS_WITHOUT_THE_WORD = {"S7", "S14", "D3", "D3b", "B23"}
# What a GPU claim judged without a CUDA run may rest on, named in its `why`.
NON_TIMING_BASIS = ("arithmetic", "layout", "allocat", "CPU", "copy ops")


def test_every_claim_about_a_gpu_says_so():
    missing = [
        c.id for c in CLAIMS.values() if GPU_WORDS.search(c.seed + c.why) and c.device != "gpu"
    ]
    assert not missing, f'claims about a GPU without `device = "gpu"`: {missing}'
    assert all(CLAIMS[i].device == "gpu" for i in GPU_CLAIMS_WITHOUT_THE_WORD)


def test_a_gpu_claim_without_a_cuda_run_is_not_measured_or_names_its_basis():
    assert stored_cuda_runs(NOTEBOOK_DIR / "results") == []  # else: judge them on that run
    for claim in CLAIMS.values():
        if claim.device == "gpu" and claim.verdict != "not measured":
            assert any(word in claim.why for word in NON_TIMING_BASIS), claim.id
    for claim_id in GPU_CLAIMS_WITHOUT_THE_WORD - {"B23"}:  # timings and cuBLAS: nothing decides
        assert CLAIMS[claim_id].verdict == "not measured", claim_id


def test_no_cell_nbval_skips_asserts():
    # a skipped cell's output is never compared, so an assert there would be a check nbval hides
    for path in SOURCES:
        for cell in code_cells(source_cells(path)):
            skipped = IGNORED in cell.metadata.get("tags", []) or IGNORED_COMMENT in cell.source
            assert not (skipped and re.search(r"^\s*assert\b", cell.source, re.M)), (
                f"{path.name}: an assert in a cell nbval skips: {first_line(cell)}"
            )
