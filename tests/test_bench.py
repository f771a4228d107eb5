"""The benchmark harness: schema, reference checks, counted bytes and memory. Never a timing."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import pytest
import torch

from stridewidget import bench
from stridewidget.bench import BenchContext, Case, Variant
from stridewidget.bench._harness import (
    QUICK_BUFFER_CAP,
    default_buffer_bytes,
    format_table,
    last_level_cache_bytes,
    measure_variants,
    run,
)
from stridewidget.bench._memory import measure_memory

CPU = torch.device("cpu")


@pytest.fixture(scope="module")
def quick_results() -> dict:
    """One in-process quick run of every case on CPU.

    Its 8 MiB bandwidth buffers fit in cache: these tests check results and counts, not speed.
    """
    return run("cpu", quick=True, progress=False, big_bytes=8 * 2**20)


def _variant(results: dict, case: str, name_start: str) -> dict:
    (record,) = [
        v
        for c in results["cases"]
        if c["name"] == case
        for v in c["variants"]
        if v["name"].startswith(name_start)
    ]
    return record


def test_every_case_runs_ceiling_first(quick_results: dict) -> None:
    names = [case["name"] for case in quick_results["cases"]]
    assert names[0] == "ceiling"
    assert sorted(names) == sorted(bench.CASES)


def test_schema(quick_results: dict) -> None:
    results = json.loads(json.dumps(quick_results))  # JSON-able, and survives a round trip
    assert results["schema"] == bench.SCHEMA_VERSION
    for key in (
        "device",
        "device_name",
        "torch_version",
        "num_threads",
        "threading",
        "peak_gbps",
        "peak_gbps_end",
    ):
        assert key in results
    # the cores the run could use, from the OS (a shared machine's load average is read against it)
    assert results["cpu_count"] == os.cpu_count()
    expected_cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    assert results["cpus_available"] == (expected_cpus or os.cpu_count())
    assert results["threading"] == (
        "single-threaded"
        if results["num_threads"] == 1
        else f"multi-threaded ({results['num_threads']} threads)"
    )
    for case in results["cases"]:
        assert {"name", "title", "metric", "notes", "variants"} <= set(case)
        assert case["metric"] in ("gbps", "time")
        for variant in case["variants"]:
            assert set(bench.VARIANT_KEYS) <= set(variant), variant["name"]


def test_every_variant_matches_its_reference_and_is_timed(quick_results: dict) -> None:
    wrong = [
        f"{case['name']}: {v['name']} (max error {v['max_abs_error']})"
        for case in quick_results["cases"]
        for v in case["variants"]
        if not v["matches_reference"]
    ]
    assert wrong == []
    for case in quick_results["cases"]:
        for v in case["variants"]:
            assert v["median_s"] > 0 and math.isfinite(v["median_s"]), v["name"]
            assert v["iqr_s"] >= 0, v["name"]


def test_peak_and_fractions_are_consistent(quick_results: dict) -> None:
    ceiling = _variant(quick_results, "ceiling", "dst.copy_")
    assert quick_results["peak_gbps"] == ceiling["gbps"]
    assert quick_results["peak_gbps_end"] > 0
    assert ceiling["fraction_of_peak"] == pytest.approx(1.0)
    for case in quick_results["cases"]:
        for v in case["variants"]:
            if v["bytes_moved"] == 0:
                assert v["gbps"] is None and v["fraction_of_peak"] is None
            else:
                assert v["gbps"] == pytest.approx(v["bytes_moved"] / v["median_s"] / 1e9)
                assert v["fraction_of_peak"] == pytest.approx(
                    v["gbps"] / quick_results["peak_gbps"]
                )


def test_counted_bytes_and_memory_follow_the_shapes(quick_results: dict) -> None:
    big = quick_results["big_buffer_bytes"]
    assert big == 8 * 2**20
    side = math.isqrt(big // 4)
    square = side * side * 4
    # The ceiling copy reads its source once and writes its destination once.
    assert _variant(quick_results, "ceiling", "dst.copy_")["bytes_moved"] == 2 * (big // 4) * 4
    # Views move nothing and allocate nothing; repeat allocates the whole repeated tensor.
    expand = _variant(quick_results, "expand_repeat", "seed002 (1,512).expand")
    repeat = _variant(quick_results, "expand_repeat", "seed002 (1,512).repeat")
    assert (expand["bytes_moved"], expand["peak_extra_bytes"]) == (0, 0)
    assert repeat["peak_extra_bytes"] == 1024 * 512 * 4
    assert repeat["bytes_moved"] == 512 * 4 + 1024 * 512 * 4
    # clone() is a deep copy: it allocates as much as the tensor holds.
    assert _variant(quick_results, "copy", "x.clone()")["peak_extra_bytes"] == square
    assert _variant(quick_results, "copy", "x.contiguous() on contiguous")["peak_extra_bytes"] == 0
    # y.contiguous() + 1 keeps the copy and the sum alive at once: twice y + 1's memory.
    implicit = _variant(quick_results, "contiguity", "y + 1")
    explicit = _variant(quick_results, "contiguity", "y.contiguous() + 1")
    assert implicit["peak_extra_bytes"] == square
    assert explicit["peak_extra_bytes"] == 2 * square


def test_copy_tracker_names_the_copies(quick_results: dict) -> None:
    explicit = _variant(quick_results, "contiguity", "y.contiguous() + 1")
    assert explicit["copies"] == ["torch.Tensor.contiguous"]
    side = math.isqrt(quick_results["big_buffer_bytes"] // 4)
    assert explicit["copied_bytes"] == side * side * 4
    # No hidden copy when matmul gets a transposed operand, nor when expand broadcasts.
    assert _variant(quick_results, "contiguity", "matmul a @ b.t() (")["copies"] == []
    assert _variant(quick_results, "expand_repeat", "seed002 (1,512).expand")["copies"] == []
    repeat = _variant(quick_results, "expand_repeat", "seed002 (1,512).repeat")
    assert repeat["copied_bytes"] == 1024 * 512 * 4


def test_a_wrong_variant_is_reported_and_not_timed() -> None:
    x = torch.arange(6.0)
    wrong = Variant("off by one", lambda: x + 1, expected=x, reads=[x])
    right = Variant("plus one", lambda: x + 1, expected=x + 1, reads=[x])
    record, timed = measure_variants([wrong, right], CPU, quick=True, num_threads=1, label="test")
    assert record["matches_reference"] is False
    assert record["max_abs_error"] == 1.0
    assert record["median_s"] is None and record["gbps"] is None
    assert timed["matches_reference"] is True and timed["median_s"] > 0


def test_bytes_moved_counts_distinct_storage_once() -> None:
    base = torch.ones(1, 100)
    transposed = torch.ones(30, 40).t()
    # An expanded row is read once, not once per repetition; the new result is written once.
    expanded_read = Variant("x", lambda: None, None, reads=[base.expand(50, 100)])
    assert bench.bytes_moved(expanded_read, torch.empty(50, 100)) == 100 * 4 + 50 * 100 * 4
    # A result sharing storage with a read is not counted as written.
    assert (
        bench.bytes_moved(Variant("t", lambda: None, None, reads=[transposed]), transposed)
        == 1200 * 4
    )
    # A view's result is not counted either.
    view = Variant("v", lambda: None, None, view_of=[base])
    assert bench.bytes_moved(view, base.expand(5, 100)) == 0


def test_memory_counts_new_storages_only() -> None:
    x = torch.ones(64, 64)
    stats, result = measure_memory(lambda: (x.t() * 2).sum(), CPU)
    # The product (64*64 float32) is alive while the sum's 4-byte result is made.
    assert stats.peak_bytes == 64 * 64 * 4 + 4
    assert stats.retained_bytes == 4
    assert stats.cuda_peak_bytes is None
    assert result.item() == 2 * 64 * 64


def test_unknown_case_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="unknown case"):
        run("cpu", quick=True, cases=["nope"], progress=False)


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the message shown without CUDA")
def test_cuda_without_cuda_is_a_clear_error() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "stridewidget.bench", "--device", "cuda", "--quick"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert "torch.cuda.is_available() is False" in proc.stderr


def test_cli_writes_json_and_one_figure_per_case(tmp_path) -> None:
    out = tmp_path / "results.json"
    proc = subprocess.run(
        [
            sys.executable, "-m", "stridewidget.bench", "--quick", "--device", "cpu",
            "--cases", "lrn", "--threads", "1",
            "--json", str(out), "--plot", str(tmp_path / "fig.png"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    results = bench.load_results(out)
    assert results["threading"] == "single-threaded"
    assert [c["name"] for c in results["cases"]] == ["ceiling", "lrn"]
    assert all(v["matches_reference"] for c in results["cases"] for v in c["variants"])
    assert "sw.tricks.lrn" in proc.stdout  # the table lists the variants
    for case in ("ceiling", "lrn"):
        png = tmp_path / f"fig-{case}.png"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_load_results_rejects_other_json(tmp_path) -> None:
    path = tmp_path / "other.json"
    path.write_text('{"hello": 1}')
    with pytest.raises(ValueError, match="not a stridewidget benchmark result"):
        bench.load_results(path)


def test_case_builders_size_past_the_cache() -> None:
    context = BenchContext(device=CPU, quick=True, big_bytes=4 * 2**20)
    case = bench.CASES["ceiling"](context)
    assert isinstance(case, Case)
    (copy,) = case.variants
    assert copy.reads[0].nbytes == 4 * 2**20


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_quick_run_on_cuda() -> None:
    results = run("cuda", quick=True, progress=False)
    assert all(v["matches_reference"] for c in results["cases"] for v in c["variants"])
    assert all(
        v["cuda_peak_extra_bytes"] is not None for c in results["cases"] for v in c["variants"]
    )


@pytest.mark.parametrize("cache_mib", [1, 8, 32, 300, 1024])
def test_quick_buffers_are_capped_and_full_ones_outgrow_the_cache(cache_mib: int) -> None:
    cache = cache_mib * 2**20
    quick = default_buffer_bytes(cache, quick=True)
    assert quick == min(2 * cache, QUICK_BUFFER_CAP)  # 2x a 300 MiB cache was 600 MiB before
    full = default_buffer_bytes(cache, quick=False)
    assert full >= 4 * cache and full >= 128 * 2**20


def test_a_quick_run_says_when_its_buffers_fit_in_cache(quick_results: dict) -> None:
    cache = last_level_cache_bytes(CPU)
    assert quick_results["last_level_cache_bytes"] == cache
    assert quick_results["buffers_exceed_cache"] == (cache < 8 * 2**20)
    assert quick_results["peak_gbps"] > 0  # the ceiling is still measured, at the capped size
    note = "fit in the"
    assert (note in format_table(quick_results)) == (not quick_results["buffers_exceed_cache"])
