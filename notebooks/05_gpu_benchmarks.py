# %% [markdown]
# # 05 · Benchmarks: what layout costs, measured
#
# The seed articles quote timing and memory tables ("a 1 GB clone() in 0.02 ms", "expand using
# 96 B", "an LRN rewrite 3–5× faster"…). Seed 004 ships a timing script and seed 002 runnable
# snippets. Seed 001 times its copies on an A100 and seed 002 its `expand`/`repeat` table on an
# RTX 3090 (the cells below print those claims from the registry); no GPU run is stored here, and
# some of the numbers need more memory bandwidth than the GPU they name has. This notebook
# replaces quoted numbers with the `stridewidget.bench` harness: every variant is first checked
# against a reference result, its new memory is counted, then it is timed
# (`torch.utils.benchmark`, or `triton.testing.do_bench` on CUDA). A large contiguous copy,
# measured first, is the run's bandwidth ceiling.
#
# * **Live:** the `--quick` sizes run below on whatever device this kernel has, and section 1
#   prints which. Their numbers are shown, never judged: a quick run on a shared machine moves
#   between runs.
# * **Stored:** the verdicts rest on the full-size runs stored in `notebooks/results/`, with a
#   margin (`TIMING_MARGIN`, printed below). Only CPU runs are stored (section 2 prints each one's
#   machine); **no CUDA run is stored yet**, so a GPU *timing* reads "not measured". A GPU claim that arithmetic or
#   CPU facts decide (bandwidth physics, strides, bytes allocated) is judged on them, and its box
#   says on what. A CUDA run is added only by running `benchmarks/run_on_gpu.sh` on a CUDA
#   machine; the GPU cells below then fail on purpose until their claims are judged on it.
# * **Cited:** claims that notebooks 01–04 already judge are not judged again here; section 3
#   lists them, rendered from the same registry.

# %%
import io
from pathlib import Path

import torch
from IPython.display import Image, display
from lessons import (
    STORED_RUN,
    TIMING_MARGIN,
    allocated,
    load_claims,
    seed_myth,
    verdict_table,
)

import stridewidget as sw
from stridewidget import bench
from stridewidget.bench import find_variant, time_ratio

RESULTS_DIR = Path("results")
print(f"timing margin: {TIMING_MARGIN}x")


# %%
# the claims about a GPU (their `device` field, set even where the paraphrase omits the word)
claims = load_claims()
on_gpu = [c for c in claims.values() if c.device == "gpu"]
assert any("A100" in c.seed for c in on_gpu) and any("RTX 3090" in c.seed for c in on_gpu)
assert {"S7", "S14", "D3", "D3b", "B23"} <= {c.id for c in on_gpu}
for claim in on_gpu:
    print(f"{claim.id:5} {claim.verdict:13} {claim.seed[:70]}")
    # judged without a CUDA run only on arithmetic or CPU facts, which its box names
    basis = ("arithmetic", "peak", "layout", "allocat", "CPU")
    assert claim.verdict == "not measured" or any(w in claim.why for w in basis), claim.id


# %%
def ratios_text(case, slower, faster):
    # Time of `slower` / time of `faster`, each pair timed side by side within one stored run.
    parts = []
    for name, run in stored.items():
        ratio = time_ratio(run, case, slower, faster)
        parts.append(f"{name} x{ratio:.2f}" if ratio is not None else f"{name} (not run)")
    return ", ".join(parts)


def show_png(figure, dpi=65):
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=dpi)
    display(Image(data=buffer.getvalue()))


# %% [markdown]
# ## 1. The quick run, live
#
# A variant is timed only after it gave its reference's answer. The run's ceiling is the plainest
# copy there is: a contiguous tensor into a contiguous buffer allocated before the timing, both
# read and written in storage order (a fresh buffer per copy costs more: printed below).

# %%
source = torch.arange(6.0).reshape(2, 3)
ceiling_copy = torch.empty_like(source)  # preallocated, as in the ceiling case
ceiling_copy.copy_(source)
assert not sw.same_storage(ceiling_copy, source) and ceiling_copy.stride() == source.stride()
ceiling_case = bench.CASES["ceiling"](bench.BenchContext(torch.device("cpu"), True, 64))
(ceiling_variant,) = ceiling_case.variants
assert ceiling_variant.writes  # it writes into a preallocated output (`dst`), not a new one
stored_run = bench.load_results(STORED_RUN)
fresh = time_ratio(stored_run, "copy", "x.clone()", "preallocated.copy_(x)")
print(f"stored run: x.clone() (a fresh buffer) takes {fresh:.1f}x preallocated.copy_(x)")
sw.show(source, ceiling_copy=ceiling_copy)

# %% [markdown]
# `bench.run("auto", quick=True, num_threads=1)` is `python -m stridewidget.bench --quick
# --threads 1` in-process: the code path a CUDA run takes. One thread, because on a shared machine
# with few cores a 2-thread region waits for a core someone else holds: the stored 2-thread run's
# sums take longer than the 1-thread run's (printed below).

# %%
sums = {}
for threads in ("1thread", "2threads"):
    run_n = bench.load_results(RESULTS_DIR / f"cpu-full-{threads}.json")
    sums[threads] = find_variant(run_n, "layout", "sum x (contiguous)")["median_s"]
print(f"stored sum of x: 1 thread {sums['1thread'] * 1e3:.1f} ms, 2 threads", end=" ")
print(f"{sums['2threads'] * 1e3:.1f} ms")
assert sums["2threads"] > sums["1thread"]

# %%
device = "cuda" if torch.cuda.is_available() else "cpu"
print(f"this kernel runs on: {device}")
if device == "cpu":
    print("no GPU here: the live numbers below are CPU numbers, not GPU ones")

# %% tags=["nbval-ignore-output"]
results = bench.run("auto", quick=True, progress=False, num_threads=1)
print(bench.format_table(results))

# %%
# Every variant gave its reference's answer before it was timed, and every one was timed.
wrong = [
    f"{case['name']}: {v['name']}"
    for case in results["cases"]
    for v in case["variants"]
    if not v["matches_reference"] or v["median_s"] is None
]
assert wrong == [], wrong
assert [case["name"] for case in results["cases"]] == list(bench.CASES)
count = sum(len(case["variants"]) for case in results["cases"])
print(f"{count} variants in {len(results['cases'])} cases, all equal to their reference and timed")

# %% [markdown]
# One figure per case: bandwidth cases show achieved GB/s with the run's ceiling dashed; the
# others median time (log scale) with the interquartile range.

# %% tags=["nbval-ignore-output"]
subtitle = f"{results['device_name']}, {results['threading']}, quick run"
for case in results["cases"]:
    show_png(bench.plot_case(case, results["peak_gbps"], subtitle=subtitle))

# %% [markdown]
# ## 2. Stored results
#
# A verdict rests on a stored full-size run, with the margin, never on the live quick run. The
# stored `layout` case times sums and adds over a contiguous `x`, its transpose and gapped views,
# here at toy size: all three read one storage.

# %%
x = torch.arange(12.0).reshape(3, 4)
assert x.t().stride() == (1, 4) and x[:, ::2].stride() == (4, 2)
assert sw.same_storage(x.t(), x) and sw.same_storage(x[:, ::2], x)
sw.show(x, transposed=x.t(), gapped=x[:, ::2])

# %% [markdown]
# Every results file in `notebooks/results/`: `cpu-full-1thread.json` and `cpu-full-2threads.json`
# are full-size CPU runs (`python -m stridewidget.bench --device cpu --threads N --json …`), each
# printed with its machine, its core count where the run recorded one, and the load average at its
# start and end (other jobs shared the machine); the verdicts use the single-threaded one
# (`STORED_RUN`). `cuda-*.json` files can only come from `benchmarks/run_on_gpu.sh`, which refuses
# to run without CUDA.

# %%
stored = {path.stem: bench.load_results(path) for path in sorted(RESULTS_DIR.glob("*.json"))}
verdict_run = bench.load_results(STORED_RUN)
gpu_runs = {name: run for name, run in stored.items() if run["device"].startswith("cuda")}
for name, run in stored.items():
    print(
        f"{name}: {run['device_name']}, {run['threading']}, torch {run['torch_version']}, "
        f"{'quick' if run['quick'] else 'full'} sizes, ceiling {run['peak_gbps']:.1f} GB/s"
    )
    cores = run.get("cpus_available", "not recorded (an older run)")
    load = f"{run['load_average_start']:.2f} at start, {run['load_average_end']:.2f} at end"
    print(f"  cores available: {cores}; load average {load}")
assert not verdict_run["quick"] and verdict_run["device"] == "cpu"
print("CUDA runs stored:", ", ".join(gpu_runs) or "none")

# %% [markdown]
# ## 3. Claims judged in notebooks 01–04
#
# Time and memory follow from the layout: a view shares its tensor's storage and moves nothing; a
# copy (here an index list) gets a new storage of its full size.

# %%
grid = torch.arange(6.0).reshape(2, 3)
sliced, indexed = grid[:, 1:], grid[:, [1, 2]]
assert sw.same_storage(sliced, grid) and allocated(lambda: grid[:, 1:])[1] == 0
assert not sw.same_storage(indexed, grid) and torch.equal(indexed, sliced)
sw.show(grid, sliced_view=sliced, indexed_copy=indexed)

# %% [markdown]
# These seed claims about time and memory are judged where their topic is taught, with the same
# stored run and margin; they are listed here, not judged twice.

# %%
verdict_table(ids=["A4", "A4c", "A5b", "A14b", "A14c", "C2", "C2b", "C4", "C7", "B9", "B10"])

# %%
verdict_table(ids=["B10b", "B10c", "B19", "D11", "D3b", "D9"])

# %% [markdown]
# ## 4. Claims only this notebook judges
#
# ### §S7 · Summing a transposed tensor "halves bandwidth use" (seed 001, §2.1, a GPU's L2 cache)
#
# The claim is about a GPU, and no CUDA run is stored: the CPU numbers below are context. On the
# CPU, a full reduction visits the elements in storage order whatever the strides (TensorIterator
# sorts the dimensions by stride), so `x.t().sum()` reads memory exactly like `x.sum()`.

# %%
matrix = torch.arange(6.0).reshape(2, 3)
assert sw.same_storage(matrix.t(), matrix) and matrix.t().stride() == (1, 3)
assert torch.equal(matrix.t().sum(), matrix.sum())  # same elements, same storage
sw.show(matrix, matrix_t=matrix.t())

# %%
# [S7] x.t().sum() vs x.sum(), from the stored full-size run
ratio = time_ratio(verdict_run, "layout", "sum x.t()", "sum x (contiguous)")
print(f"CPU, for context: x.t().sum() / x.sum(): {ratio:.2f} (all stored runs: ", end="")
print(ratios_text("layout", "sum x.t()", "sum x (contiguous)") + ")")
# a claim about a GPU's L2 cache: judged only from a stored CUDA run, and none is stored
assert not gpu_runs, "a CUDA run is stored: judge the GPU claims on it in claims.toml"

# %%
seed_myth("S7")

# %% [markdown]
# ### §S8 · Non-unit strides "lower the cache hit rate" (seed 000, §1)
#
# A gapped view `x[:, ::16]` of float32 holds 1/16 of the elements, but its elements sit 16 floats
# apart, at least one cache line apart (this machine's line size is printed below), so every line
# of the array still comes from memory. At toy size, every fourth element:

# %%
row_pair = torch.arange(16.0).reshape(2, 8)
every_fourth = row_pair[:, ::4]
assert every_fourth.stride() == (8, 4) and sw.same_storage(every_fourth, row_pair)
line_file = Path("/sys/devices/system/cpu/cpu0/cache/index0/coherency_line_size")  # Linux
line_bytes = int(line_file.read_text()) if line_file.exists() else 0
print("L1 data cache line:", f"{line_bytes} B" if line_bytes > 0 else "not reported by the OS")
assert line_bytes <= 0 or 16 * torch.float32.itemsize >= line_bytes  # one element per line
sw.show(row_pair, every_fourth=every_fourth)

# %%
# [S8] x[:, ::16].sum() vs x.sum(), from the stored full-size run
ratio = time_ratio(verdict_run, "layout", "sum x[:, ::16]", "sum x (contiguous)")
dense = find_variant(verdict_run, "layout", "sum x (contiguous)")["gbps"]
gapped = find_variant(verdict_run, "layout", "sum x[:, ::16]")["gbps"]
print(f"1/16 of the elements take {ratio:.2f}x the time of all of them")
print(f"useful bandwidth: {gapped:.1f} GB/s gapped vs {dense:.1f} GB/s dense")
assert ratio > TIMING_MARGIN / 16  # far more than 1/16 of the time: whole lines are fetched

# %%
seed_myth("S8")

# %% [markdown]
# ### §S9 · ResNet-50 conv1 on a transposed input: "128 → 76 img/s" (seed 001, §2.2, a GPU)
#
# The harness runs a ResNet stem on NCHW, channels-last and H/W-transposed inputs, all checked
# equal. The claim is about a GPU; the CPU ratios are shown for context only. The three input
# layouts, for one 3-channel 2×2 image:

# %%
image = torch.arange(12.0).reshape(1, 3, 2, 2)
channels_last = image.contiguous(memory_format=torch.channels_last)
hw_transposed = image.transpose(2, 3)
assert channels_last.stride() == (12, 1, 6, 3)
assert channels_last.is_contiguous(memory_format=torch.channels_last)
assert hw_transposed.stride() == (12, 4, 1, 2) and not hw_transposed.is_contiguous()
sw.show(nchw=image, channels_last=channels_last, hw_transposed=hw_transposed)

# %%
# [S9] a GPU claim: judged only from a stored CUDA run, and none is stored
print("H/W-transposed / NCHW:", ratios_text("conv", "H/W-transposed input (non", "NCHW contiguous"))
print(
    "NCHW / channels_last:",
    ratios_text("conv", "NCHW contiguous", "channels_last input + channels_last"),
)
# fails once benchmarks/run_on_gpu.sh stores a CUDA run: then judge S9 and S16 on it
assert not gpu_runs, "a CUDA run is stored: judge the GPU claims on it in claims.toml"

# %%
seed_myth("S9")

# %% [markdown]
# ### §S13 · `.contiguous()` returns the tensor itself when it is contiguous, a copy otherwise (seed 004)
#
# `.contiguous()` of a contiguous tensor is that tensor; of a transpose, a new row-major storage.

# %%
square = torch.arange(4.0).reshape(2, 2)
assert square.contiguous() is square
made_contiguous = square.t().contiguous()
assert made_contiguous.stride() == (2, 1) and not sw.same_storage(made_contiguous, square)
sw.show(square, transposed=square.t(), made_contiguous=made_contiguous)

# %%
# [S13] .contiguous() is free on a contiguous tensor and a full copy otherwise
x = torch.randn(256, 256)
assert x.contiguous() is x and allocated(x.contiguous)[1] == 0
copied, copy_bytes = allocated(x.t().contiguous)
assert copy_bytes == x.nbytes and not sw.same_storage(copied, x)
print(f"x.contiguous() is x: 0 new bytes; x.t().contiguous(): {copy_bytes // 1024} KiB")

# %%
seed_myth("S13")

# %% [markdown]
# ### §S14 · `y.contiguous() + 1` vs `y + 1` for a transposed `y`: "the timings may be close" (seed 004)
#
# An elementwise op keeps its input's layout: `y + 1` of a transposed `y` is itself transposed,
# so it reads and writes in storage order and needs no copy; `y.contiguous()` adds one.

# %%
y = torch.arange(6.0).reshape(3, 2).t()
assert (y + 1).stride() == y.stride() == (1, 2)
assert y.contiguous().stride() == (3, 1)
sw.show(y, y_plus_1=y + 1, y_contiguous=y.contiguous())

# %% [markdown]
# The seed's snippet also calls `torch.cuda.synchronize()` unconditionally, although it picks
# `device = "cpu"` when there is no GPU.

# %%
# [S14] y.contiguous() + 1 vs y + 1: memory measured here, time from the stored run
y = torch.randn(512, 512).t()
assert allocated(lambda: y + 1)[1] == y.nbytes
assert allocated(lambda: y.contiguous() + 1)[1] == 2 * y.nbytes
ratio = time_ratio(verdict_run, "contiguity", "y.contiguous() + 1", "y + 1")
print(f"y.contiguous() + 1 takes {ratio:.2f}x the time of y + 1 and twice the new memory")
assert ratio > TIMING_MARGIN  # on this CPU not close: context only, the claim is about a GPU
assert not gpu_runs, "a CUDA run is stored: judge the GPU claims on it in claims.toml"
if not torch.cuda.is_available():
    failure = None
    try:
        torch.cuda.synchronize()
    except (AssertionError, RuntimeError) as error:  # torch raises AssertionError without CUDA
        failure = error
    assert failure is not None, "torch.cuda.synchronize() worked without CUDA"
    print(f"the seed's snippet fails without CUDA: {type(failure).__name__}")

# %%
seed_myth("S14")

# %% [markdown]
# ### §S16 · Non-contiguous access "can cut performance several times" (seed 004, about GPUs)
#
# On the CPU it depends on the op: a transposing write is slow, a layout-keeping one is not. Writing
# `x.t() + 1` into a contiguous `out` walks one of the two against its storage order; without
# `out` the result keeps `x.t()`'s strides and both sides run in storage order.

# %%
x = torch.arange(6.0).reshape(2, 3)
into_contiguous = torch.add(x.t(), 1, out=torch.empty(3, 2))
kept_layout = x.t() + 1
assert into_contiguous.stride() == (2, 1) and kept_layout.stride() == x.t().stride() == (1, 3)
sw.show(x_t=x.t(), into_contiguous=into_contiguous, kept_layout=kept_layout)

# %%
# [S16] a GPU claim: CPU ratios for context; judged only from a stored CUDA run
print("x.t() + 1 into a contiguous output:", end=" ")
print(ratios_text("layout", "add x.t() + 1 -> contiguous out", "add x + 1 -> contiguous out"))
print("x.t() + 1 keeping x.t()'s layout:", end=" ")
print(ratios_text("layout", "add x.t() + 1 (new output", "add x + 1 (new output)"))
assert not gpu_runs, "a CUDA run is stored: judge the GPU claims on it in claims.toml"

# %%
seed_myth("S16")

# %% [markdown]
# ### §S17 · `expand` "cuts GPU memory use by 30–70 %" (seed 002, end)
#
# No workload is given (model, sizes, what was replaced), so there is nothing to rerun. Per call,
# `expand` allocates nothing where `repeat` allocates the whole result (notebook 03, `[C1]`): a
# stride-0 view of one row against a new storage holding every copy of it.

# %%
bias = torch.arange(4.0)
stretched, tiled = bias.expand(3, 4), bias.repeat(3, 1)
assert stretched.stride() == (0, 1) and sw.same_storage(stretched, bias)
assert tiled.stride() == (4, 1) and not sw.same_storage(tiled, bias)
sw.show(bias, stretched=stretched, tiled=tiled)

# %%
# [S17] per call: expand 0 bytes, repeat the whole result
base = torch.randn(1, 1024)
assert allocated(lambda: base.expand(1024, 1024))[1] == 0
assert allocated(lambda: base.repeat(1024, 1))[1] == 1024 * 1024 * 4

# %%
seed_myth("S17")

# %% [markdown]
# ## Seed claims judged in this notebook
#
# Rendered from `claims.toml`, the one place a verdict is written.

# %%
verdict_table("05")
