# %% [markdown]
# # 02 · Copy semantics: what shares, what allocates, what keeps strides
#
# The second seed article sorts "copies" into three kinds: zero-copy (shared storage), "shallow
# copy" (a new tensor header over the *same* storage, copy-on-write) and deep copy. It files
# `clone()` under the shallow, copy-on-write kind. This notebook measures, for each common
# operation: whether the result is the same Python object, shares the input's storage, starts at
# the same `data_ptr()`, which strides it has, and how many bytes of new storage it allocated
# (`stridewidget.tricks.PeakMemory`, which counts the storages ATen ops return). PeakMemory does
# not see scratch memory a kernel allocates and frees inside itself — `F.linear(x[:, ::2], w)`
# clones its input inside `addmm` (notebook 03) — so every "no copy" verdict also checks the
# names of the ops that ran (`copy_ops`, read with `torch.profiler`).

# %%
import gc
import re
import warnings
import weakref

import numpy as np
import torch
from lessons import (
    STORED_RUN,
    TIMING_MARGIN,
    all_reduce_column_view,
    allocated,
    copy_ops,
    seed_myth,
    shares_storage,
    stored_cuda_runs,
    verdict_table,
)

import stridewidget as sw
from stridewidget import bench
from stridewidget.bench import find_variant, time_ratio

torch.manual_seed(0)
torch.set_printoptions(precision=4)

# %% [markdown]
# ## 1. The measured table
#
# An op returns either a **view** (the input's storage, nothing allocated) or a **copy** (new
# storage, filled during the call).

# %%
pair = torch.arange(6.0).reshape(2, 3)
sw.show(pair, detached=pair.detach(), cloned=pair.clone())

# %% [markdown]
# Each row runs one operation on a `(128, 256)` float32 tensor `x`, first contiguous,
# then transposed (dense but not contiguous). "new bytes" is the peak of new storage while the
# operation ran, in units of `x.nbytes`.

# %%
OPERATIONS = {
    "x.detach()": lambda x: x.detach(),
    "x.view(-1)": lambda x: x.view(-1),
    "x.data": lambda x: x.data,
    "x.requires_grad_(False)": lambda x: x.requires_grad_(False),
    "x.contiguous()": lambda x: x.contiguous(),
    "x.reshape(-1)": lambda x: x.reshape(-1),
    "x.clone()": lambda x: x.clone(),
    "x.clone(memory_format=contiguous_format)": lambda x: x.clone(
        memory_format=torch.contiguous_format
    ),
    "torch.empty_like(x).copy_(x)": lambda x: torch.empty_like(x).copy_(x),
    "x.cpu().clone().to(x.device)": lambda x: x.cpu().clone().to(x.device),
    "torch.from_numpy(x.numpy())": lambda x: torch.from_numpy(x.numpy()),
    "x.contiguous().clone()": lambda x: x.contiguous().clone(),
    "empty_like(x.contiguous()).copy_(x.contiguous())": lambda x: torch.empty_like(
        x.contiguous()
    ).copy_(x.contiguous()),
}


# %%
def measure(x, op):
    try:
        result, new_bytes = allocated(lambda: op(x))
    except RuntimeError:
        return None
    return {
        "same object": result is x,
        "shares storage": sw.same_storage(result, x),
        "same data_ptr": result.data_ptr() == x.data_ptr(),
        "strides": result.stride(),
        "contiguous": result.is_contiguous(),
        "new bytes / x.nbytes": new_bytes / x.nbytes,
        "copy ops": len(copy_ops(lambda: op(x))),  # clone / copy_ run, scratch ones included
    }


# %%
def print_table(x):
    print(
        f"input: shape {tuple(x.shape)}, strides {x.stride()}, contiguous {x.is_contiguous()},",
        end=" ",
    )
    print(f"{x.nbytes // 1024} KiB")
    print("columns: same Python object · shares x's storage · same data_ptr · result strides ·")
    print("         contiguous · new storage bytes while it ran, in units of x.nbytes")
    keys = ["same object", "shares storage", "same data_ptr", "strides", "contiguous"]
    labels = ["same obj", "shares", "same ptr", "strides", "contig", "new bytes"]
    widths = [9, 8, 9, 11, 7, 10]
    print(f"{'operation':50}" + "".join(f"{h:>{w}}" for h, w in zip(labels, widths)))

    def cell(value):
        return ("yes" if value else "no") if isinstance(value, bool) else str(value)

    rows = {}
    for name, op in OPERATIONS.items():
        rows[name] = row = measure(x, op)
        if row is None:
            print(f"{name:50}{'raises RuntimeError':>24}")
            continue
        cells = [cell(row[k]) for k in keys] + [f"{row['new bytes / x.nbytes']:.1f}"]
        print(f"{name:50}" + "".join(f"{c:>{w}}" for c, w in zip(cells, widths)))
    return rows


# %%
# [B7] [B11] [B12] [B13] [D5] copy semantics of a contiguous input, measured
x = torch.randn(128, 256)
contiguous_rows = print_table(x)
# what the rows must say: these two return x itself, these share x's storage, the rest copy once
same_object = {"x.requires_grad_(False)", "x.contiguous()"}
sharing = same_object | {"x.detach()", "x.view(-1)", "x.data", "x.reshape(-1)"}
sharing.add("torch.from_numpy(x.numpy())")
for name, row in contiguous_rows.items():
    assert row["same object"] == (name in same_object), name
    assert row["shares storage"] == (name in sharing) == (row["new bytes / x.nbytes"] == 0), name
    assert row["new bytes / x.nbytes"] in (0, 1) and row["contiguous"], name
    assert row["same data_ptr"] == row["shares storage"], name
    assert (row["copy ops"] == 0) == (name in sharing), name  # no copy op hidden in a kernel

# %%
# [B11] [B12] [B13] the same operations on a transposed (dense, non-contiguous) input
xt = torch.randn(256, 128).t()
transposed_rows = print_table(xt)
assert transposed_rows["x.view(-1)"] is None  # view refuses instead of copying
for name, row in transposed_rows.items():  # sharing storage means no copy op ran either
    assert row is None or (row["copy ops"] == 0) == row["shares storage"], name
for name in [
    "x.clone()",
    "torch.empty_like(x).copy_(x)",
    "x.cpu().clone().to(x.device)",
    "torch.from_numpy(x.numpy())",
    "x.detach()",
]:
    assert transposed_rows[name]["strides"] == xt.stride() == (1, 128), name  # layout preserved
for name in ["x.contiguous()", "x.reshape(-1)", "x.clone(memory_format=contiguous_format)"]:
    assert (
        transposed_rows[name]["contiguous"] and transposed_rows[name]["new bytes / x.nbytes"] == 1
    ), name
# the seed's "contiguous deep copy" recipes copy twice; clone(memory_format=contiguous_format) once
assert transposed_rows["x.contiguous().clone()"]["new bytes / x.nbytes"] == 2
assert (
    transposed_rows["empty_like(x.contiguous()).copy_(x.contiguous())"]["new bytes / x.nbytes"] == 2
)

# %% [markdown]
# `clone()` and `empty_like()` use `memory_format=torch.preserve_format`: a *dense* input keeps its
# strides (the transposed rows above), but a gapped input cannot keep gaps in new storage, so the
# copy comes out contiguous. The seed says both "inherit the original strides": partly right.

# %%
# [B11] [B12] preserve_format: dense inputs keep strides, gapped inputs are compacted
gapped = torch.randn(64, 64)[:, ::2]
assert gapped.stride() == (64, 2)
assert gapped.clone().stride() == torch.empty_like(gapped).stride() == (32, 1)
channels_last = torch.randn(2, 3, 4, 5).contiguous(memory_format=torch.channels_last)
assert channels_last.clone().is_contiguous(memory_format=torch.channels_last)
assert channels_last.clone(memory_format=torch.contiguous_format).is_contiguous()
print(
    "gapped",
    gapped.stride(),
    "-> clone",
    gapped.clone().stride(),
    "| channels_last clone",
    channels_last.clone().stride(),
)
small_gapped = torch.arange(16.0).reshape(4, 4)[:, ::2]
sw.show(small_gapped, clone=small_gapped.clone())

# %%
seed_myth("B11", "B12", "B13")

# %% [markdown]
# ## 2. Is `clone()` a shallow, copy-on-write copy?
#
# `clone()` allocates and fills its new storage during the call; a later write to the clone copies
# nothing and leaves the original alone.

# %%
original = torch.tensor([1.0, 2.0, 3.0])
written_clone = original.clone()
written_clone[0] = 999.0
sw.show(original, clone=written_clone)

# %% [markdown]
# The seed: after `y = x.clone()`, `x.storage().data_ptr() == y.storage().data_ptr()` is `True`
# "initially", and the first write to `y` triggers the real copy. Measured: `clone()` allocates the
# full new storage *during the call*, the pointers differ immediately, and the first write
# allocates nothing and does not move `y`.

# %%
# [B9] [B26] clone allocates and copies at once; writes do not copy
x = torch.tensor([1.0, 2.0, 3.0])
y, clone_bytes = allocated(lambda: x.clone())
assert clone_bytes == x.nbytes
assert x.untyped_storage().data_ptr() != y.untyped_storage().data_ptr()  # the seed prints True here
pointer_before_write = y.data_ptr()
_, write_bytes = allocated(lambda: y.__setitem__(0, 999.0))
assert write_bytes == 0 and y.data_ptr() == pointer_before_write
assert x.tolist() == [1.0, 2.0, 3.0] and y.tolist() == [999.0, 2.0, 3.0]
print("bytes allocated by clone():", clone_bytes, "| by the first write:", write_bytes)
print(
    "storages differ right after clone():",
    x.untyped_storage().data_ptr() != y.untyped_storage().data_ptr(),
)

# %%
seed_myth("B9", "B26")

# %% [markdown]
# The seed's table on an A100 ("x为1GB Tensor") gives `x.clone()` "0.02" ms. A clone reads all of
# `x` and writes as many bytes; the cell below turns that time into the bandwidth it needs and
# compares it with the A100's published peak memory bandwidth: it needs many times the peak. The
# number is impossible, which fits a clone that copies nothing — but clone does copy. The seed's
# "0.8" ms for `empty_like(x).copy_(x)` needs more than the peak too, but by less than the margin,
# so arithmetic does not decide it: it is a GPU timing, and no CUDA run is stored.
#
# The cell after it reads the copy timings of the stored full-size run. Read its GB/s with care: every
# method that allocates writes into *fresh* pages, and on a CPU most of its time is the page
# faults of that new buffer, not memory bandwidth; `out.copy_(x)` into a buffer that already
# exists shows what the copy itself costs.

# %%
# [B10] the seed's 1 GB timings on an A100, as bandwidths against the A100's peak
gigabyte = 1024**3
a100_peak = 2.039e12  # bytes/s: A100 80GB SXM HBM2e, NVIDIA datasheet (the fastest A100)
over_peak = {}
for label, seconds in [("clone() in 0.02 ms", 0.02e-3), ("empty_like().copy_() in 0.8 ms", 0.8e-3)]:
    implied = 2 * gigabyte / seconds  # bytes read + written per second
    over_peak[label] = implied / a100_peak
    print(f"{label:32} needs {implied / 1e12:6.1f} TB/s = {over_peak[label]:5.1f} x the A100 peak")
print(f"the A100's peak: {a100_peak / 1e12:.2f} TB/s")
# arithmetic decides the clone (far beyond the peak, past the margin), not the copy_ (within it)
assert over_peak["clone() in 0.02 ms"] > TIMING_MARGIN > over_peak["empty_like().copy_() in 0.8 ms"]
assert stored_cuda_runs() == []  # so the copy_ timing, a GPU timing, is not measured
# on the CPU, .cpu() and .to("cpu") return the tensor itself, so the "host round trip" is one clone
assert x.cpu() is x and x.to("cpu") is x

# %%
# [B10] copy timings from the stored full-size run: a fresh buffer costs more than the copy
stored = bench.load_results(STORED_RUN)  # full sizes, one thread, side by side in one run
for name in [
    "preallocated.copy_(x)",
    "x.clone()",
    "torch.empty_like(x).copy_(x)",
    "1 GiB x.clone()",
]:
    variant = find_variant(stored, "copy", name)
    print(f"{variant['name']:42} {variant['median_s'] * 1e3:8.1f} ms {variant['gbps']:6.1f} GB/s")
fresh = time_ratio(stored, "copy", "x.clone()", "preallocated.copy_(x)")
assert fresh > TIMING_MARGIN  # most of a clone's time is the new buffer's page faults
assert time_ratio(stored, "copy", "torch.empty_like(x).copy_(x)", "x.clone()") < TIMING_MARGIN

# %%
seed_myth("B10", "B10b", "B10c")

# %% [markdown]
# ## 3. Zero-copy results and lifetimes
#
# A storage lives as long as any tensor uses it: a view keeps its whole storage alive, however
# little of it the view shows.

# %%
last_row = torch.arange(6.0).reshape(2, 3)[1]  # the (2, 3) tensor is gone, its storage is not
assert last_row.untyped_storage().nbytes() == 6 * last_row.element_size()  # all six kept
sw.show(last_row)

# %% [markdown]
# `detach()` shares the storage (right). The seed warns that deleting `x` can free the storage
# under `y` ("dangling pointer"). Within one process, storages are reference-counted: while `y`
# exists, its storage does (below, on the CPU). The seed's own example crosses processes with CUDA
# tensors, which this machine cannot run.

# %%
# [B7] [B8] detach shares storage; deleting the original does not free it
original = torch.randn(1000)
y = original.detach()
assert sw.same_storage(original, y) and y.data_ptr() == original.data_ptr() and not y.requires_grad
expected_values = y.clone()
original_alive = weakref.ref(original)
pointer = y.data_ptr()
del original
gc.collect()
assert original_alive() is None  # the tensor object is gone ...
fillers = [torch.randn(1000) for _ in range(20)]  # ... new allocations do not land on y's memory
assert all(f.data_ptr() != pointer for f in fillers)
assert torch.equal(y, expected_values) and y.data_ptr() == pointer
print("y still holds its values after `del original`:", torch.equal(y, expected_values))

# %% [markdown]
# `requires_grad_(False)` does what the seed says, "修改in-place属性": it changes the flag in place and
# returns the same object, not a new header — and, unlike `detach()`, only on leaves. `x.data` is not deprecated — it emits no warning — but it is
# unsafe in a different way: writes through it bypass autograd's version counter, so a gradient
# can be silently wrong where `detach()` raises.

# %%
# [B7] [B31] requires_grad_ and .data
leaf = torch.randn(3, requires_grad=True)
assert leaf.requires_grad_(False) is leaf and not leaf.requires_grad
try:
    (torch.randn(3, requires_grad=True) * 2).requires_grad_(False)
    raise AssertionError("the line above should raise")
except RuntimeError as error:
    print("non-leaf:", str(error).split(".")[0])
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    _ = leaf.data
assert caught == []

# %%
# [B7] [B31] a write through .data bypasses autograd; the same write through detach() is caught
w = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
loss = (w**2).sum()  # saves w for the backward pass
w.data.zero_()  # autograd does not notice
loss.backward()
assert w.grad.tolist() == [0.0, 0.0, 0.0]  # silently wrong: d/dw sum(w^2) at [1, 2, 3] is [2, 4, 6]
w = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
loss = (w**2).sum()
w.detach().zero_()
try:
    loss.backward()
    raise AssertionError("expected autograd to detect the in-place change")
except RuntimeError as error:
    print("detach():", str(error).split(":")[0])

# %%
seed_myth("B7", "B7b", "B31", "B8", "D5")

# %% [markdown]
# ## 4. NumPy interop
#
# On the CPU, `.numpy()` and `torch.from_numpy` share memory and keep the strides.

# %%
sw.show(torch.from_numpy(np.arange(6.0).reshape(2, 3).T))

# %% [markdown]
# On the CPU, `.numpy()` and `torch.from_numpy` are zero-copy both ways and keep strides
# (a Fortran-order array becomes a non-contiguous tensor). The seed says `.numpy()` "forces a
# synchronous copy to the CPU", in a section about CUDA tensors: not for a CPU tensor, where even
# `numpy(force=True)` shares memory. A CUDA tensor is not measured here (no GPU): `.numpy()`
# refuses one, and `force=True` is documented as `.detach().cpu()` first, a copy made on purpose.
# Negative NumPy strides are refused by `from_numpy`.

# %%
# [B23] [B28] .numpy() and from_numpy share memory and keep strides
t = torch.arange(6.0)
array = t.numpy()
array[0] = 100.0
assert t[0] == 100.0  # same memory
try:
    torch.ones(2, requires_grad=True).numpy()
    raise AssertionError("the line above should raise")
except RuntimeError as error:
    print("requires_grad:", error)
graph_leaf = torch.arange(3.0, requires_grad=True)
forced = graph_leaf.numpy(force=True)  # detach().cpu() first: on the CPU, no copy
assert forced.ctypes.data == graph_leaf.data_ptr() and forced.tolist() == [0, 1, 2]

# %%
# [B23] [B28] from_numpy keeps an F-order array's strides; negative strides are refused
fortran = np.zeros((3, 4), order="F")
from_fortran = torch.from_numpy(fortran)
assert from_fortran.stride() == (1, 3) and not from_fortran.is_contiguous()
from_fortran[0, 1] = 5.0
assert fortran[0, 1] == 5.0
try:
    torch.from_numpy(np.arange(5)[::-1])
    raise AssertionError("the line above should raise")
except ValueError as error:
    print("negative strides:", str(error).split(",")[0])
assert torch.equal(
    torch.from_numpy(np.ascontiguousarray(np.arange(5)[::-1])), torch.tensor([4, 3, 2, 1, 0])
)
# .numpy() refuses CUDA tensors: the copy to the host must be explicit
if torch.cuda.is_available():
    try:
        torch.ones(2, device="cuda").numpy()
        raise AssertionError("the line above should raise")
    except TypeError:
        pass

# %%
seed_myth("B23", "B28")

# %% [markdown]
# ## 5. Making tensors from data: `torch.tensor`, `as_tensor`, `.to`
#
# `torch.tensor(data)` always copies, `torch.as_tensor(data)` aliases when it can, and `.to(...)`
# copies only when it converts (or when asked to, `copy=True`).

# %%
source = torch.arange(6.0).reshape(2, 3)
sw.show(source, as_tensor=torch.as_tensor(source), to_copy=source.to(copy=True))

# %% [markdown]
# The picture: one storage shared by `source` and `as_tensor(source)`, a separate one for the
# copy. `torch.tensor(data)` also warns when `data` is already a tensor; `torch.as_tensor` aliases
# a tensor or a NumPy array of the right dtype and device, and copies only when it must convert;
# `.to(dtype)` returns the tensor itself when nothing changes.

# %%
# [making] tensor copies, as_tensor aliases, .to copies only when it converts
x = torch.arange(6.0).reshape(2, 3)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")  # checked on every run, not once per process
    copied = torch.tensor(x)
assert any("copy construct" in str(w.message) for w in caught)
aliased = torch.as_tensor(x)
array = np.arange(6.0)
assert aliased is x and not shares_storage(copied, x)
assert shares_storage(torch.as_tensor(array), torch.from_numpy(array))  # aliases NumPy memory
assert not shares_storage(torch.as_tensor(array, dtype=torch.float32), torch.from_numpy(array))
assert x.to(torch.float32) is x and x.to(torch.float32, copy=True) is not x
assert not shares_storage(x.to(torch.float64), x) and not shares_storage(x.to(copy=True), x)
print("copy warning:", str(caught[0].message).split(",")[0])

# %% [markdown]
# `copy_` writes into a tensor that already exists: it broadcasts the source, converts its dtype,
# and honours the destination's strides — so copying into a non-contiguous view writes through to
# the storage underneath.

# %%
# [copy_] copy_ broadcasts, casts, and writes through a strided destination
grid = torch.zeros(3, 4, dtype=torch.float64)
grid.copy_(torch.tensor([1, 2, 3, 4], dtype=torch.int32))  # (4,) int32 broadcast to (3, 4)
assert torch.equal(grid, torch.tensor([1.0, 2, 3, 4]).expand(3, 4).double())
target = torch.zeros(4, 6)
column_pair = target[:, 1::3]  # (4, 2) with strides (6, 3): gapped
column_pair.copy_(torch.ones(4, 2))
assert target.sum() == 8 and target[:, 1].eq(1).all() and target[:, 4].eq(1).all()
assert allocated(lambda: column_pair.copy_(torch.full((4, 2), 2.0)))[1] == 4 * 2 * 4  # the source
sw.show(target, column_pair=column_pair)

# %% [markdown]
# **A collective on a gapped view, with gloo.** The gloo backend (CPU) hands its all-reduce the
# tensor's first address and its element count, so it needs a *dense* tensor. Below, two real gloo
# processes sum `x[:, ::2]` of the same 3×4 tensor. The right answer doubles columns 0 and 2; what
# comes back has the first 6 storage elements doubled instead — row 0 and half of row 1 — and gloo
# raises no error. Other backends differ: NCCL (GPUs, not run here) checks its input and raises
# "Tensors must be contiguous". Reduce `view.contiguous()` and `copy_` the result back.

# %%
# [collective] all_reduce on a gapped view sums the wrong elements (two gloo processes)
x = torch.arange(12.0).reshape(3, 4)
expected = x.clone()
expected[:, ::2] *= 2  # the sum over two processes holding the same x
as_if_dense = x.clone()
as_if_dense.view(-1)[: x[:, ::2].numel()] *= 2  # numel() elements from the view's first address
from lessons import ALL_REDUCE_BACKEND

assert ALL_REDUCE_BACKEND == "gloo"  # what the paragraph above says is said of gloo only
result = all_reduce_column_view(2)
print(result)
assert not torch.equal(result, expected) and torch.equal(result, as_if_dense)

# %% [markdown]
# `copy.deepcopy` copies the storage; `_base` and `_is_view()` record *autograd's* view
# relation, which misses an alias made another way (below: `from_numpy` over the same memory). Storage identity (`untyped_storage().data_ptr()`, or `sw.same_storage`) is the
# test that always answers "do these share memory?".

# %%
# [identity] deepcopy copies; _base misses aliases that storage identity finds
import copy

base = torch.arange(8.0)
view = base[2:6]
assert view._is_view() and view._base is base
deep = copy.deepcopy(view)
assert not shares_storage(deep, base) and not deep._is_view()
array = base.numpy()  # the same memory, through NumPy
alias = torch.from_numpy(array)
assert not alias._is_view() and alias._base is None  # autograd sees no relation ...
assert shares_storage(alias, base) and sw.same_storage(alias, view)  # ... but it is the same memory
alias[3] = 100.0
assert view[1] == 100.0
print("alias._base:", alias._base, "| shares storage with base:", shares_storage(alias, base))

# %% [markdown]
# ## 6. Where did my copies come from?
#
# `sw.track_copies()` lists each call in a block that made a copy, with the ATen ops it ran.

# %%
with sw.track_copies() as small_log:
    torch.arange(6.0).reshape(2, 3).t().contiguous()
small_log

# %% [markdown]
# `sw.track_copies()` records every tensor-producing call in a block and classifies it as a
# copy, in-place write, view or compute, from the ATen ops it ran and storage identity. Two
# realistic snippets: an HWC→CHW preprocessing step and a multi-head attention block.


# %%
# [copies] HWC -> CHW preprocessing, tracked
def preprocess(hwc_batch):
    images = torch.from_numpy(hwc_batch)  # (B, H, W, C) uint8 from a decoder
    images = images.permute(0, 3, 1, 2)  # NCHW view over NHWC memory
    images = images.float().div(255)  # converts: a copy that keeps the permuted layout
    images = images.contiguous()  # so this copies again
    return images.view(images.size(0), -1)


frames = np.random.default_rng(0).integers(0, 256, (4, 32, 32, 3), dtype=np.uint8)
with sw.track_copies() as log:
    batch = preprocess(frames)
assert [(event.call, event.kind) for event in log.copies] == [
    ("torch.Tensor.float", "copy"),
    ("torch.Tensor.contiguous", "copy"),
]
assert log.total_bytes == frames.size * 4 * 2  # two float32 copies of the batch
log

# %% [markdown]
# `float()` keeps the permuted (channels-last) layout, so the `contiguous()` after it is a second
# full copy; calling `contiguous()` on the uint8 view first copies a quarter of the bytes (checked
# below), or the model can take channels-last input as it is.

# %%
# [copies] contiguous() on the uint8 view first: the layout copy moves 1 byte per value, not 4
with sw.track_copies() as log:
    batch_first = torch.from_numpy(frames).permute(0, 3, 1, 2).contiguous().float().div(255)
assert torch.equal(batch_first.view(batch.shape), batch)
layout_copy, float_copy = (event.bytes_copied for event in log.copies)
assert layout_copy == frames.size and float_copy == 4 * frames.size
print(f"uint8 contiguous(): {layout_copy} B, then float(): {float_copy} B")


# %%
# [copies] an attention block: which steps copy?
def attention(x, w_qkv, heads):
    B, N, C = x.shape
    qkv = (x @ w_qkv).reshape(B, N, 3, heads, C // heads).permute(2, 0, 3, 1, 4)
    q, k, v = qkv.unbind(0)
    weights = (q @ k.transpose(-2, -1)).softmax(-1)
    return (weights @ v).transpose(1, 2).reshape(B, N, C)


tokens = torch.randn(2, 16, 64)
w_qkv = torch.randn(64, 192)
with sw.track_copies() as log:
    out = attention(tokens, w_qkv, heads=4)
copies = [(event.call, event.ops[:2]) for event in log.copies]
print(copies)
assert [call for call, _ in copies] == [
    "torch.Tensor.matmul",
    "torch.Tensor.matmul",
    "torch.Tensor.reshape",
]
assert all("aten.clone" in event.ops for event in log.copies)
log

# %% [markdown]
# On this CPU the batched `matmul`s copy their permuted operands internally (`aten.clone` while
# folding the batch dims for `bmm`), and the final `reshape` copies because `transpose(1, 2)` made
# the heads non-viewable. None of these copies is visible in the source; the log finds all three.
# Notebook 03 `[D3]` compares them with a 2-d matmul, which does not copy, and takes up the
# seed's claim about cuBLAS.

# %% [markdown]
# ## Cheat sheet: view, copy, or raise?
#
# Each op below runs on four inputs — contiguous, transposed, gapped (`x[:, ::2]`) and expanded
# (stride 0) — and its result is classified by storage identity: **view** (shares the input's
# storage, the input itself included, and no copy op ran), **copy** (new storage) or **raises**. An op whose answer
# differs between inputs is **depends**, and its stated condition is checked on every input.

# %%
# ops whose answer is the same on every input: (each op the row names, the kind, where it holds)
SAME_ON_EVERY_INPUT = {
    "t[1:], t.narrow, t.select": (
        (lambda t: t[1:], lambda t: t.narrow(0, 1, 2), lambda t: t.select(0, 1)),
        "view",
        "always",
    ),
    "t.t(), t.transpose, t.permute": (
        (lambda t: t.t(), lambda t: t.transpose(0, 1), lambda t: t.permute(1, 0)),
        "view",
        "always",
    ),
    "t.unsqueeze, t.expand": (
        (lambda t: t.unsqueeze(0), lambda t: t.expand(2, *t.shape)),
        "view",
        "always",
    ),
    "t.unfold(0, 2, 1)": ((lambda t: t.unfold(0, 2, 1),), "view", "always"),
    "t.detach(), torch.as_tensor(t)": ((lambda t: t.detach(), torch.as_tensor), "view", "always"),
    "torch.from_numpy(t.numpy())": ((lambda t: torch.from_numpy(t.numpy()),), "view", "on CPU"),
}

# %%
# more ops whose answer is the same on every input: the copies
SAME_ON_EVERY_INPUT |= {
    "t.clone(), t.flip(0), t + 0": (
        (lambda t: t.clone(), lambda t: t.flip(0), lambda t: t + 0),
        "copy",
        "always",
    ),
    "t.to(torch.float64)": ((lambda t: t.to(torch.float64),), "copy", "a new dtype: always"),
}


def outcome_of(op, t):
    try:
        result = op(t)
    except RuntimeError:
        return "raises"
    if not shares_storage(result, t):
        return "copy"
    assert copy_ops(lambda: op(t)) == []  # a view, with no copy hidden in a kernel either
    return "view"


# %%
# ops whose answer depends on the input: (each op the row names, the rule, the rule as a check)
DEPENDS = {
    "t.view(-1)": (
        (lambda t: t.view(-1),),
        "raises unless the dims merge evenly",
        lambda t, kind: (kind == "raises") == (outcome_of(lambda u: u.reshape(-1), t) == "copy"),
    ),
    "t.reshape(-1), t.flatten()": (
        (lambda t: t.reshape(-1), lambda t: t.flatten()),
        "a view when view() works, else a copy",
        lambda t, kind: (kind == "view") == (outcome_of(lambda u: u.view(-1), t) == "view"),
    ),
    "t.contiguous()": (
        (lambda t: t.contiguous(),),
        "t itself when contiguous, else a copy",
        lambda t, kind: (kind == "view") == t.is_contiguous(),
    ),
}

# %%
# [cheat] the cheat sheet, measured on four inputs and checked against what it states
x = torch.arange(24.0).reshape(4, 6)
inputs = {"contig.": x, "transposed": x.t(), "gapped": x[:, ::2], "expanded": x[:1].expand(4, 6)}
rows = {name: (op, kind, where, None) for name, (op, kind, where) in SAME_ON_EVERY_INPUT.items()}
rows |= {name: (op, "depends", rule, check) for name, (op, rule, check) in DEPENDS.items()}
print(f"{'op':32} {'kind':8}" + "".join(f"{name:>11}" for name in inputs) + "  when")
for name, (ops, stated, condition, check) in rows.items():
    assert len(ops) == len(re.split(r", (?=t[ .\[]|torch)", name)), name  # every op named runs
    per_op = [{label: outcome_of(op, t) for label, t in inputs.items()} for op in ops]
    assert all(outcome == per_op[0] for outcome in per_op), name  # and they all agree
    outcomes = per_op[0]
    kinds = set(outcomes.values())
    assert (kinds.pop() if len(kinds) == 1 else "depends") == stated, name
    if check is not None:
        assert all(check(t, outcomes[label]) for label, t in inputs.items()), name
    cells = "".join(f"{kind:>11}" for kind in outcomes.values())
    print(f"{name:32} {stated:8}{cells}  {condition}")


# %% [markdown]
# ## Seed claims checked in this notebook
#
# Rendered from `claims.toml`, the one place a verdict is written.

# %%
verdict_table("02")
