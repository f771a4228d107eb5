"""Run the cases: check each variant against its reference, measure its memory, time it, count bytes.

The result is a plain JSON-able dict (see :data:`SCHEMA_VERSION` and :func:`run`), so a run on one
machine can be stored and compared with a run on another.
"""

from __future__ import annotations

import datetime as _dt
import gc
import os
import platform
import warnings
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import torch

from .._compat import tree_leaves
from ..adapters.as_strided import OverlapWarning
from ..adapters.inspect import inspect, same_storage
from ..copies.tracker import track_copies
from ..limits import QUICK_BUFFER_CAP
from ._base import BenchContext, Case, Variant
from ._cases import CASES
from ._memory import measure_memory
from ._timing import time_interleaved, triton_available

SCHEMA_VERSION = "stridewidget.bench/1"

#: Keys every variant record has (the test suite checks them).
VARIANT_KEYS = (
    "name",
    "note",
    "matches_reference",
    "max_abs_error",
    "median_s",
    "iqr_s",
    "runs",
    "timer",
    "bytes_moved",
    "gbps",
    "fraction_of_peak",
    "peak_extra_bytes",
    "retained_bytes",
    "cuda_peak_extra_bytes",
    "copies",
    "copied_bytes",
)


def resolve_device(device: str) -> torch.device:
    """Turn ``"auto"``, ``"cpu"`` or ``"cuda"`` into a device; ``"cuda"`` without CUDA is an error.

    >>> resolve_device("cpu")
    device(type='cpu')
    """
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    resolved = torch.device(device)
    if resolved.type == "cuda" and not torch.cuda.is_available():
        raise RuntimeError(
            "--device cuda was asked for but torch.cuda.is_available() is False "
            f"(torch {torch.__version__}); use --device cpu or auto"
        )
    if resolved.type not in ("cpu", "cuda"):
        raise ValueError(f"device must be auto, cpu or cuda, got {device!r}")
    return resolved


def last_level_cache_bytes(device: torch.device) -> int:
    """Size of the cache a bandwidth buffer must outgrow: L2 on CUDA, the largest CPU cache here.

    >>> last_level_cache_bytes(torch.device("cpu")) > 0
    True
    """
    if device.type == "cuda":
        # L2_cache_size is missing from older torch builds; 50 MiB is an H100's L2.
        return int(getattr(torch.cuda.get_device_properties(device), "L2_cache_size", 50 * 2**20))
    sizes = []
    for size_file in Path("/sys/devices/system/cpu/cpu0/cache").glob("index*/size"):
        text = size_file.read_text().strip()
        scale = {"K": 2**10, "M": 2**20, "G": 2**30}.get(text[-1:], 1)
        sizes.append(int(text.rstrip("KMG")) * scale)
    # Without sysfs (macOS, Windows) assume a large server L3.
    return max(sizes, default=64 * 2**20)


def device_name(device: torch.device) -> str:
    """A readable name for the device the run used.

    >>> isinstance(device_name(torch.device("cpu")), str)
    True
    """
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def cpus_available() -> int | None:
    """How many CPU cores this process may run on (its affinity mask; else ``os.cpu_count()``).

    >>> cpus_available() >= 1
    True
    """
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count()


def _load_average() -> float | None:
    # 1-minute load average (runnable processes); None where the OS has none (Windows).
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return None


def _tensors(value: Any) -> list[torch.Tensor]:
    return [leaf for leaf in tree_leaves(value) if isinstance(leaf, torch.Tensor)]


def bytes_moved(variant: Variant, result: Any) -> int:
    """Bytes a variant must move at least: each input read once, each output written once.

    Reads count the distinct storage elements a view touches (``sw.inspect(t).touched``), so an
    expanded row counts once, not once per repetition.

    >>> row = torch.ones(1, 256)
    >>> wide = row.expand(1000, 256)            # reads 256 floats, not 256 000
    >>> bytes_moved(Variant("x * 2", lambda: wide * 2, None, reads=[wide]), wide * 2)
    1025024
    """
    read = sum(inspect(t).touched * t.element_size() for t in variant.reads)
    written = sum(t.numel() * t.element_size() for t in variant.writes)
    owners = [*variant.reads, *variant.writes, *variant.view_of]
    for out in _tensors(result):
        if not any(same_storage(out, owner) for owner in owners):
            written += out.numel() * out.element_size()
    return read + written


def _check(result: Any, variant: Variant) -> tuple[bool, float | None]:
    try:
        torch.testing.assert_close(
            result, variant.expected, rtol=variant.rtol, atol=variant.atol, check_stride=False
        )
    except AssertionError:
        matches = False
    else:
        matches = True
    errors = [
        float((got.double() - want.double()).abs().max())
        for got, want in zip(_tensors(result), _tensors(variant.expected))
        if got.shape == want.shape and got.numel() > 0
    ]
    return matches, max(errors) if errors else None


def check_variant(variant: Variant, device: torch.device) -> dict[str, Any]:
    """Run one variant once: compare it with its reference, count its new memory and bytes moved.

    Returns the variant's record with the timing fields still ``None``.

    >>> x = torch.arange(4.0)
    >>> record = check_variant(Variant("clone", x.clone, expected=x, reads=[x]), torch.device("cpu"))
    >>> record["matches_reference"], record["bytes_moved"], record["peak_extra_bytes"], record["copies"]
    (True, 32, 16, ['torch.Tensor.clone'])
    """
    # track_copies (stridewidget's copy tracker) names the calls that copied data, and how much.
    with track_copies() as log:
        memory, result = measure_memory(variant.fn, device)
    matches, max_error = _check(result, variant)
    moved = bytes_moved(variant, result)
    del result
    return {
        "name": variant.name,
        "note": variant.note,
        "matches_reference": matches,
        "max_abs_error": max_error,
        "median_s": None,
        "iqr_s": None,
        "runs": None,
        "timer": None,
        "bytes_moved": moved,
        "gbps": None,
        "fraction_of_peak": None,
        "peak_extra_bytes": memory.peak_bytes,
        "retained_bytes": memory.retained_bytes,
        "cuda_peak_extra_bytes": memory.cuda_peak_bytes,
        "copies": [event.call for event in log.copies],
        "copied_bytes": log.total_bytes,
    }


def measure_variants(
    variants: Sequence[Variant], device: torch.device, *, quick: bool, num_threads: int, label: str
) -> list[dict[str, Any]]:
    """Check every variant, then time the ones that matched their reference, interleaved.

    A wrong answer's speed means nothing: such a variant is reported but not timed.

    >>> x = torch.arange(4.0)
    >>> right = Variant("x + 1", lambda: x + 1, expected=x + 1, reads=[x])
    >>> wrong = Variant("x + 2", lambda: x + 2, expected=x + 1, reads=[x])
    >>> [(r["matches_reference"], r["median_s"] is not None)
    ...  for r in measure_variants([right, wrong], torch.device("cpu"), quick=True, num_threads=1,
    ...                            label="demo")]
    [(True, True), (False, False)]
    """
    records = [check_variant(variant, device) for variant in variants]
    timed = [i for i, record in enumerate(records) if record["matches_reference"]]
    stats = time_interleaved(
        [variants[i].fn for i in timed], device, quick=quick, num_threads=num_threads, label=label
    )
    for i, stat in zip(timed, stats):
        record = records[i]
        record.update(median_s=stat.median_s, iqr_s=stat.iqr_s, runs=stat.runs, timer=stat.method)
        if record["bytes_moved"] > 0:
            record["gbps"] = record["bytes_moved"] / stat.median_s / 1e9
    return records


def _progress(total: int, enabled: bool):
    if not enabled:
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:  # tqdm is optional: without it the run is just quiet
        return None
    return tqdm(total=total, desc="stridewidget.bench", unit="variant", leave=False)


def default_buffer_bytes(cache_bytes: int, *, quick: bool) -> int:
    """Bytes of one bandwidth buffer: 4x the last-level cache (at least 128 MiB), so data comes
    from DRAM/HBM; in a quick run 2x the cache but never more than :data:`QUICK_BUFFER_CAP`.

    >>> default_buffer_bytes(300 * 2**20, quick=False) // 2**20, default_buffer_bytes(300 * 2**20, quick=True) // 2**20
    (1200, 16)
    >>> default_buffer_bytes(2**20, quick=True) // 2**20  # a tiny cache: 2x it
    2
    """
    if quick:
        return min(2 * cache_bytes, QUICK_BUFFER_CAP)
    return max(4 * cache_bytes, 128 * 2**20)


def run(
    device: str = "auto",
    *,
    quick: bool = False,
    cases: Sequence[str] | None = None,
    num_threads: int | None = None,
    progress: bool = True,
    big_bytes: int | None = None,
) -> dict[str, Any]:
    """Run the benchmark cases and return the results as a JSON-able dict.

    The ceiling case (a large contiguous copy) always runs first: its GB/s is ``peak_gbps``, and
    every other variant reports ``fraction_of_peak`` against it. ``big_bytes`` overrides the size of
    the bandwidth buffers (by default :func:`default_buffer_bytes`); smaller buffers fit in cache,
    so only tests that check results, not speed, should set it.

    >>> results = run("cpu", quick=True, cases=["expand_repeat"], progress=False, big_bytes=2**22)
    >>> [case["name"] for case in results["cases"]]
    ['ceiling', 'expand_repeat']
    >>> all(v["matches_reference"] for c in results["cases"] for v in c["variants"])
    True
    """
    torch_device = resolve_device(device)
    wanted = list(CASES) if not cases else ["ceiling", *[c for c in cases if c != "ceiling"]]
    unknown = [name for name in wanted if name not in CASES]
    if unknown:
        raise ValueError(f"unknown case(s) {unknown}; choose from {list(CASES)}")
    previous_threads = torch.get_num_threads()
    if num_threads is not None:
        torch.set_num_threads(num_threads)
    threads = torch.get_num_threads()
    cache = last_level_cache_bytes(torch_device)
    if big_bytes is None:
        big_bytes = default_buffer_bytes(cache, quick=quick)
    context = BenchContext(device=torch_device, quick=quick, big_bytes=big_bytes)
    results = _header(torch_device, quick, threads, cache, big_bytes)
    try:
        _run_cases(wanted, context, results, quick, threads, progress)
    finally:
        torch.set_num_threads(previous_threads)
    return results


def _header(
    torch_device: torch.device, quick: bool, threads: int, cache: int, big_bytes: int
) -> dict[str, Any]:
    """The run's record before any case: the machine, the settings, the load now."""
    return {
        "schema": SCHEMA_VERSION,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "device": str(torch_device),
        "device_name": device_name(torch_device),
        "torch_version": torch.__version__,
        "python_version": platform.python_version(),
        "num_threads": threads,
        "threading": "single-threaded" if threads == 1 else f"multi-threaded ({threads} threads)",
        "quick": quick,
        "timer": "triton.testing.do_bench"
        if torch_device.type == "cuda" and triton_available()
        else "torch.utils.benchmark.Timer",
        # Other processes on the machine skew timings; the load average says how busy it was.
        "load_average_start": _load_average(),
        # How many cores the run could use (a shared machine's load is read against this).
        "cpu_count": os.cpu_count(),
        "cpus_available": cpus_available(),
        "load_average_end": None,
        "last_level_cache_bytes": cache,
        "big_buffer_bytes": big_bytes,
        # A quick run's capped buffers may sit in cache: its GB/s are then cache, not DRAM,
        # figures (ratios against the ceiling, measured at the same size, still compare).
        "buffers_exceed_cache": big_bytes > cache,
        "peak_gbps": None,
        "peak_gbps_end": None,
        "cases": [],
    }


def _run_cases(
    wanted: list[str],
    context: BenchContext,
    results: dict[str, Any],
    quick: bool,
    threads: int,
    progress: bool,
) -> None:
    """Each wanted case in turn, then the ceiling again; appended to ``results``."""
    torch_device = context.device
    bar = _progress(total=len(wanted), enabled=progress)
    try:
        with torch.no_grad(), warnings.catch_warnings():
            # Sliding windows overlap by design; the warning would repeat on every timed call.
            warnings.simplefilter("ignore", OverlapWarning)
            for name in wanted:
                if bar is not None:
                    bar.set_postfix_str(name)
                case = CASES[name](context)
                results["cases"].append(_run_case(case, results, torch_device, quick, threads))
                del case
                gc.collect()
                if torch_device.type == "cuda":
                    torch.cuda.empty_cache()
                if bar is not None:
                    bar.update(1)
            # The ceiling again at the end: on a shared machine the two differ, and by how much
            # says how far to trust absolute numbers (ratios within one case are steadier).
            (recheck,) = measure_variants(
                CASES["ceiling"](context).variants,
                torch_device,
                quick=quick,
                num_threads=threads,
                label="ceiling",
            )
            results["peak_gbps_end"] = recheck["gbps"]
            results["load_average_end"] = _load_average()
    finally:
        if bar is not None:
            bar.close()


def _run_case(
    case: Case, results: dict[str, Any], device: torch.device, quick: bool, threads: int
) -> dict[str, Any]:
    records = measure_variants(
        case.variants, device, quick=quick, num_threads=threads, label=case.name
    )
    if case.name == "ceiling" and records[0]["gbps"] is not None:
        results["peak_gbps"] = records[0]["gbps"]
    peak = results["peak_gbps"]
    for record in records:
        if peak and record["gbps"] is not None:
            record["fraction_of_peak"] = record["gbps"] / peak
    return {
        "name": case.name,
        "title": case.title,
        "metric": case.metric,
        "notes": list(case.notes),
        "variants": records,
    }


def _format_seconds(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def _format_bytes(count: int | None) -> str:
    if count is None:
        return "-"
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if count >= scale:
            return f"{count / scale:.3g} {unit}"
    return f"{count} B"


def format_table(results: dict[str, Any], cases: Iterable[str] | None = None) -> str:
    """The results as a fixed-width text table, one row per variant.

    >>> variant = dict(name="x.clone()", median_s=2e-3, iqr_s=1e-4, bytes_moved=2**27, gbps=67.1,
    ...                fraction_of_peak=0.5, peak_extra_bytes=2**26, copied_bytes=2**26,
    ...                matches_reference=True)
    >>> results = dict(device_name="CPU", device="cpu", threading="single-threaded",
    ...                torch_version="2.x", quick=True, peak_gbps=134.2,
    ...                cases=[dict(name="copy", title="Copy methods", variants=[variant])])
    >>> print(format_table(results))  # doctest: +NORMALIZE_WHITESPACE
    CPU (cpu, single-threaded), torch 2.x, quick run; peak (contiguous copy) 134.2 GB/s
    <BLANKLINE>
    [copy] Copy methods
    variant  median  IQR  moved  GB/s  %peak  new mem copied ok
    x.clone()  2 ms  100 µs  128 MiB  67.1  50%  64 MiB 64 MiB yes
    """
    wanted = set(cases) if cases is not None else None
    peak = results.get("peak_gbps")
    peak_text = f"{peak:.1f} GB/s" if peak else "unknown"
    load = results.get("load_average_start")
    if results.get("peak_gbps_end"):
        peak_text += f" (again at the end: {results['peak_gbps_end']:.1f} GB/s)"
    header = (
        f"{results['device_name']} ({results['device']}, {results['threading']}), torch "
        f"{results['torch_version']}, {'quick' if results['quick'] else 'full'} run; "
        f"peak (contiguous copy) {peak_text}"
        + (f"; load average {load:.1f} at the start" if load is not None else "")
    )
    if results.get("buffers_exceed_cache") is False:
        header += (
            f"\nquick run: buffers of {_format_bytes(results['big_buffer_bytes'])} fit in the "
            f"{_format_bytes(results['last_level_cache_bytes'])} cache, so GB/s are cache figures; "
            "run without --quick for DRAM bandwidth"
        )
    columns = (
        f"{'variant':<48} {'median':>9} {'IQR':>9} {'moved':>9} {'GB/s':>7} {'%peak':>6} "
        f"{'new mem':>9} {'copied':>9} ok"
    )
    lines = [header]
    for case in results["cases"]:
        if wanted is not None and case["name"] not in wanted:
            continue
        lines += ["", f"[{case['name']}] {case['title']}"]
        lines += [f"  note: {note}" for note in case.get("notes", [])]
        lines.append(columns)
        for v in case["variants"]:
            gbps = f"{v['gbps']:.1f}" if v["gbps"] is not None else "-"
            frac = (
                f"{100 * v['fraction_of_peak']:.0f}%" if v["fraction_of_peak"] is not None else "-"
            )
            lines.append(
                f"{v['name'][:48]:<48} {_format_seconds(v['median_s']):>9} {_format_seconds(v['iqr_s']):>9} "
                f"{_format_bytes(v['bytes_moved']):>9} {gbps:>7} {frac:>6} "
                f"{_format_bytes(v['peak_extra_bytes']):>9} {_format_bytes(v.get('copied_bytes')):>9} "
                f"{'yes' if v['matches_reference'] else 'NO'}"
            )
    return "\n".join(lines)


def find_variant(results: dict[str, Any], case: str, name_start: str) -> dict[str, Any]:
    """The one variant record of ``case`` whose name starts with ``name_start``.

    >>> results = {"cases": [{"name": "copy", "variants": [{"name": "x.clone()"}]}]}
    >>> find_variant(results, "copy", "x.clone")["name"]
    'x.clone()'
    """
    found = [
        variant
        for record in results["cases"]
        if record["name"] == case
        for variant in record["variants"]
        if variant["name"].startswith(name_start)
    ]
    if len(found) != 1:
        names = [v["name"] for c in results["cases"] if c["name"] == case for v in c["variants"]]
        raise KeyError(
            f"{len(found)} variants of case {case!r} start with {name_start!r}; its variants: {names}"
        )
    return found[0]


def time_ratio(results: dict[str, Any], case: str, slower: str, faster: str) -> float | None:
    """Median time of variant ``slower`` divided by that of ``faster`` (same case, same run).

    ``None`` when either was not timed (wrong result, or the case was not run).

    >>> results = {"cases": [{"name": "c", "variants": [{"name": "a", "median_s": 3.0},
    ...                                                  {"name": "b", "median_s": 1.5}]}]}
    >>> time_ratio(results, "c", "a", "b")
    2.0
    """
    try:
        numerator = find_variant(results, case, slower)["median_s"]
        denominator = find_variant(results, case, faster)["median_s"]
    except KeyError:
        return None
    if numerator is None or denominator is None:
        return None
    return numerator / denominator
