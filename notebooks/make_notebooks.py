"""Build, execute and save the tutorial notebooks 01-04 from the cell sources below.

Regenerate all four (each runs in well under two minutes on a CPU-only machine)::

    cd /work/main && .venv/bin/python notebooks/make_notebooks.py
    .venv/bin/python notebooks/make_notebooks.py 02 03     # only some of them

Each notebook's cells are written here in "percent" format: a line ``# %% [markdown]`` starts
a markdown cell, ``# %%`` a code cell, and ``# %% tags=["nbval-ignore-output"]`` a code cell
whose output nbval must not compare (timings). The notebooks are executed with nbclient in
``notebooks/`` and saved with their outputs, so nbval can check that a fresh run reproduces them.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

HERE = Path(__file__).resolve().parent
CELL_TIMEOUT_S = 120

NBVAL_NOTE = """\
*How this notebook is checked:* CI runs it with nbval in **strict** mode
(`pytest --nbval --nbval-current-env --nbval-sanitize-with notebooks/nbval_sanitize.cfg`): every
output must come back identical on a fresh run. Outputs are made stable on purpose (seeded data;
pointers printed only as differences). The sanitize file masks what cannot be stable — memory
addresses, timings, object ids — and the few timing cells are tagged `nbval-ignore-output`.
Widget outputs are compared through their static `text/html` fallback; nbval itself skips the
widget-state MIME type, whose model id is random. Lax mode would only check cells marked by
hand, which would let a wrong printed table pass; strict mode does not.
"""

SETUP = """\
# %%
import gc
import itertools
import warnings
import weakref

import numpy as np
import torch
import torch.nn.functional as F
from torch.utils import benchmark

import stridewidget as sw
from stridewidget.tricks import PeakMemory

torch.manual_seed(0)
torch.set_printoptions(precision=4)


def storage_values(t):
    # The whole flat storage behind `t`, as a 1-d tensor over the same memory (no copy).
    return torch.empty(0, dtype=t.dtype).set_(t.untyped_storage())


def shares_storage(a, b):
    # Checked without stridewidget: two tensors over one allocation.
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


def allocated(fn):
    # Run fn() and return (result, peak bytes of new tensor storage while it ran).
    with PeakMemory() as mem:
        result = fn()
    return result, mem.peak


def median_us(stmt, **names):
    # Median time of stmt in microseconds; torch.utils.benchmark picks the repeat count.
    timer = benchmark.Timer(stmt=stmt, globals=names, num_threads=torch.get_num_threads())
    return timer.blocked_autorange(min_run_time=0.2).median * 1e6
"""

NB01 = r"""
# %% [markdown]
# 01 · Storage, strides and views

A PyTorch tensor is three things: a **storage** (one flat, 1-d block of elements), a **layout**
(shape, strides in *elements*, and a storage offset) and the **view** you index. Two tensors can
share one storage with different layouts; that is what `transpose`, slicing, `view` and `expand`
produce. This notebook checks the model on torch itself, cell by cell, and tests the seed
articles' claims on the way. Claims are tagged like **[B2]**; the table at the end gives each a
verdict and names the cell that shows it. Every claim made here is an `assert` in its cell.

{NBVAL_NOTE}
{SETUP}
# %% [markdown]
## 1. One storage, two layouts

`a.transpose(0, 1)` swaps two entries of the shape and of the strides. Nothing is moved:
both tensors read the same 24 storage elements, in a different order.

# %%
# [B3] [D2] strides of a contiguous tensor and of its transpose; they share one storage
a = torch.arange(24).reshape(2, 3, 4)
b = a.transpose(0, 1)
assert a.stride() == (12, 4, 1) and a.is_contiguous()
assert b.shape == (3, 2, 4) and b.stride() == (4, 12, 1) and not b.is_contiguous()
assert sw.same_storage(a, b) and shares_storage(a, b) and b.data_ptr() == a.data_ptr()
m = torch.randn(3, 4)
assert m.stride() == (4, 1) and m.t().stride() == (1, 4) and not m.t().is_contiguous()
print(sw.inspect(a))
print(sw.inspect(b))
sw.show(a, b=b)

# %% [markdown]
## 2. The address formula

Element `[i, j, k]` of any strided tensor is `storage[offset + i*stride[0] + j*stride[1] + k*stride[2]]`.
Checked below for *every* element of an offset, gapped view, against the raw storage.
The largest address touched is `offset + sum((size - 1) * stride)`; a view is in bounds when
that is below the storage size.

# %%
# [B1] [B21] address formula and the largest address, for every element of an offset, gapped view
v = a[1:, ::2, 1:]
flat = storage_values(v)
layout = sw.inspect(v)
for index in itertools.product(*map(range, v.shape)):
    address = v.storage_offset() + sum(i * s for i, s in zip(index, v.stride()))
    assert v[index] == flat[address] and layout.address(index) == address
largest = v.storage_offset() + sum((n - 1) * s for n, s in zip(v.shape, v.stride()))
assert layout.span == (v.storage_offset(), largest) and largest < flat.numel()
print(
    "shape",
    tuple(v.shape),
    "stride",
    v.stride(),
    "offset",
    v.storage_offset(),
    "largest address",
    largest,
)
sw.show(a, v=v)

# %% [markdown]
## 3. `data_ptr()` already includes the offset

The seed says `tensor.data_ptr()` is the storage's start and that the data starts at
`data_ptr() + storage_offset()`. Measured: `data_ptr()` is the address of the view's *first
element*, i.e. the storage's pointer plus `storage_offset() * element_size()` bytes. Adding the
offset again points past the data (and mixes elements with bytes).

# %%
# [B2] data_ptr() vs the storage's data_ptr()
t = torch.arange(10, dtype=torch.float32)[3:]
storage_pointer = t.untyped_storage().data_ptr()
print("storage_offset():", t.storage_offset(), "elements")
print("t.data_ptr() - storage.data_ptr():", t.data_ptr() - storage_pointer, "bytes")
assert t.data_ptr() == storage_pointer + t.storage_offset() * t.element_size()
seed_data_start = t.data_ptr() + t.storage_offset()
assert seed_data_start != t.data_ptr()  # the seed's recipe does not point at t[0]
# the seed reads the storage pointer through the old TypedStorage API, which now warns
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    typed_pointer = t.storage().data_ptr()
assert typed_pointer == storage_pointer
assert any("TypedStorage is deprecated" in str(w.message) for w in caught)
print("t.storage() warns:", type(caught[0].message).__name__)

# %% [markdown]
## 4. What is contiguous?

`is_contiguous()` means: the elements, read in row-major order, sit at consecutive storage
addresses. Slices along dim 0 keep that; slicing a later dim (`narrow(1, ...)`) leaves gaps;
transposes that only move size-1 dims change nothing that matters (a size-1 dim's stride is never
used); channels-last is contiguous only in its own memory format. `sw.inspect` agrees with torch
on each case.

# %%
# [B5] [D4] [B14] contiguity of common views
x = torch.arange(24.0).reshape(4, 6)
image = torch.randn(2, 3, 4, 5)
cases = {
    "x[1:3]": (x[1:3], True),
    "x.narrow(0, 1, 2)": (x.narrow(0, 1, 2), True),
    "x.narrow(0, 0, 2)": (x.narrow(0, 0, 2), True),
    "x.narrow(1, 1, 3)": (x.narrow(1, 1, 3), False),
    "x[:, ::2]": (x[:, ::2], False),
    "x.t()": (x.t(), False),
    "x[:1].t()": (x[:1].t(), True),
    "zeros(4,1,6).transpose(0,1)": (torch.zeros(4, 1, 6).transpose(0, 1), True),
    "zeros(1,3,1,5).permute(2,0,1,3)": (torch.zeros(1, 3, 1, 5).permute(2, 0, 1, 3), True),
    "image.permute(2, 0, 1, 3)": (image.permute(2, 0, 1, 3), False),
    "image channels_last": (image.contiguous(memory_format=torch.channels_last), False),
    "x[:1].expand(4, 6)": (x[:1].expand(4, 6), False),
    "torch.flip(x, [0])": (torch.flip(x, [0]), True),
    "torch.fliplr(x)": (torch.fliplr(x), True),
}
print(f"{'view':34} {'shape':14} {'stride':16} {'offset':>6}  contiguous")
for name, (view, expected) in cases.items():
    assert view.is_contiguous() == expected == sw.inspect(view).is_contiguous, name
    print(
        f"{name:34} {tuple(view.shape)!s:14} {view.stride()!s:16} {view.storage_offset():>6}  {expected}"
    )
# narrow moves the offset only when it starts past 0
assert x.narrow(0, 1, 2).storage_offset() == 6 and x.narrow(0, 0, 2).storage_offset() == 0
# channels-last is contiguous in its own memory format
channels_last = cases["image channels_last"][0]
assert channels_last.is_contiguous(memory_format=torch.channels_last)
assert sw.inspect(channels_last).is_channels_last
# flip copies (torch views cannot step backwards), so it never shares storage
assert not shares_storage(torch.flip(x, [0]), x) and not shares_storage(torch.fliplr(x), x)
sw.show(x, dim0_slice=x[1:3], narrow_dim1=x.narrow(1, 1, 3))

# %% [markdown]
## 5. `view` vs `reshape` vs `flatten`

* `view` **never copies**: it either returns a view or raises.
* `reshape` and `flatten` return a view when one exists and **silently copy** otherwise.
* `contiguous()` returns the tensor itself when it is already contiguous, and a copy otherwise.

Below, each is run on five inputs; "copy" means new storage, measured with
`stridewidget.tricks.PeakMemory` (bytes of tensor storage allocated during the call).

# %%
# [B22] [D12] [B17] view / reshape / flatten / contiguous: which ones copy
inputs = {
    "contiguous": x,
    "dim-0 slice": x[1:3],
    "transposed": x.t(),
    "column slice": x[:, 1:4],
    "expanded": x[:1].expand(4, 6),
}


def outcome(t, fn):
    try:
        result, new_bytes = allocated(lambda: fn(t))
    except RuntimeError:
        return "raises", None
    kind = "view" if shares_storage(result, t) else f"copy {new_bytes} B"
    assert (kind == "view") == (new_bytes == 0)
    return kind, result


print(f"{'input':13} {'view(-1)':12} {'reshape(-1)':12} {'flatten()':12} {'contiguous()':12}")
for name, t in inputs.items():
    viewed, _ = outcome(t, lambda t: t.view(-1))
    reshaped, _ = outcome(t, lambda t: t.reshape(-1))
    flattened, flat_result = outcome(t, lambda t: t.flatten())
    made_contiguous, _ = outcome(t, lambda t: t.contiguous())
    assert viewed in ("view", "raises")  # view never copies
    assert reshaped == flattened  # flatten is reshape
    assert (reshaped == "view") == (viewed == "view")  # reshape copies exactly when view raises
    assert (made_contiguous == "view") == t.is_contiguous()
    print(f"{name:13} {viewed:12} {reshaped:12} {flattened:12} {made_contiguous:12}")
assert x.contiguous() is x

# flatten is not "automatically contiguous": flattening a single dim returns the input as it is
y = torch.randn(4, 3).t()
assert torch.flatten(y, 1) is y and not torch.flatten(y, 1).is_contiguous()

# %% [markdown]
When `view` refuses, the reason is that the merged elements are not evenly spaced in storage.
`sw.tricks.merge_dims` is a view-only flatten that says so; the fixes are an explicit copy
(`contiguous()` then `view`, or `reshape`), and they give the transposed order.

# %%
# [D8] the classic view error and its fixes
a = torch.arange(6).reshape(2, 3)
b = a.t()
try:
    b.view(6)
    raise AssertionError("view of a transposed tensor should fail")
except RuntimeError as error:
    print("b.view(6):", str(error).split(".")[0])
try:
    sw.tricks.merge_dims(b)
    raise AssertionError("the line above should raise")
except sw.LayoutError as error:
    print(error)
fixed = b.contiguous().view(6)
assert fixed.tolist() == [0, 3, 1, 4, 2, 5] and torch.equal(b.reshape(6), fixed)
assert not shares_storage(fixed, a)
print(fixed)

# %% [markdown]
## Seed claims checked in this notebook

| id | seed claim | verdict | shown in cell |
|---|---|---|---|
| B1 | `a[i,j,k]` is `storage[offset + i*s0 + j*s1 + k*s2]` | right | `[B1]` |
| B21 | largest address is `offset + sum((size-1)*stride)`; out of bounds if not below the storage size | right | `[B1] [B21]` |
| B2 | `data_ptr()` is the storage start; data starts at `data_ptr() + storage_offset()` | wrong: `data_ptr()` already includes the offset (in bytes) | `[B2]` |
| B3 | `arange(24).reshape(2,3,4)` has strides (12,4,1); its `transpose(0,1)` (4,12,1), non-contiguous, same storage | right | `[B3]` |
| D2 | a (3,4) tensor has strides (4,1); `.t()` gives (1,4), non-contiguous | right | `[B3]` |
| B5 | `narrow` of a contiguous tensor stays contiguous | partly: only along dim 0; `narrow(1, …)` is not | `[B5]` |
| B5 | `narrow` increases the storage offset | partly: only when `start > 0` | `[B5]` |
| B5 | `permute` of several dims always breaks contiguity | partly: moving only size-1 dims keeps it | `[B5]` |
| D4 | `flip` breaks contiguity | wrong: `flip` copies and returns a contiguous tensor | `[B5]` |
| B14 | `torch.fliplr` returns a non-contiguous tensor | wrong: it copies; the result is contiguous | `[B5]` |
| B22 | `reshape` falls back to a copy when a view is impossible | right | `[B22]` |
| D12 | `reshape` copies when needed (hidden copy) | right | `[B22]` |
| B17 | `torch.flatten` is "automatically contiguous" | wrong: it returns a view (even a non-contiguous one) when it can | `[B22]` |
| D8 | `b.view(6)` on a transposed tensor raises; `b.contiguous().view(6)` gives `[0,3,1,4,2,5]` | right | `[D8]` |
"""


NB02 = r"""
# %% [markdown]
# 02 · The five `as_strided` tricks, checked

`torch.as_strided(x, size, stride, storage_offset)` builds any view you can describe with
strides. That power is also its danger: wrong strides silently read the wrong elements, and a
missing offset silently reads from the start of the storage. The first seed article gives five
tricks and a local-response-norm "speed-up". Here each trick is drawn, checked against the torch
operation it replaces, and the seed's own code is run beside the fixed version
(`stridewidget.tricks`, which derives every stride from `x.stride()`, keeps
`x.storage_offset()`, and builds the view with the bounds-checked `sw.as_strided`).

{NBVAL_NOTE}
{SETUP}
# %% [markdown]
## 0. Strides count elements, not bytes

The seed says a stride is the number of *bytes* to skip. In PyTorch it is a number of
*elements*; NumPy's `.strides` are bytes.

# %%
# [A1] torch strides are in elements; NumPy strides are in bytes
for dtype in (torch.int8, torch.float32, torch.float64):
    t = torch.zeros(3, 4, dtype=dtype)
    assert t.stride() == (4, 1)
    assert t.numpy().strides == (4 * t.element_size(), t.element_size())
print("torch (3,4) stride:", t.stride(), "| NumPy float64 strides:", t.numpy().strides)

# %% [markdown]
## 1. The seed's opening example: odd columns with `as_strided`

The seed builds `x[:, 1]` of a `(5, 2)` tensor as `as_strided(x, (5,), (2,))`. Without a
storage offset that starts at element 0, so it returns the *even* column.

# %%
# [A3] seed: as_strided(x, (5,), (2,)) for x[:, 1] -- wrong offset
x = torch.arange(10).reshape(5, 2)
seed_odds = torch.as_strided(x, size=(5,), stride=(2,))
print("x[:, 1]      :", x[:, 1].tolist())
print("seed version :", seed_odds.tolist())
assert not torch.equal(seed_odds, x[:, 1]) and torch.equal(seed_odds, x[:, 0])
fixed_odds = sw.as_strided(x, (x.shape[0],), (x.stride(0),), x.storage_offset() + 1 * x.stride(1))
assert (
    torch.equal(fixed_odds, x[:, 1])
    and fixed_odds.storage_offset() == x[:, 1].storage_offset() == 1
)
sw.show(x, seed=seed_odds, fixed=fixed_odds)

# %% [markdown]
## 2. Trick 1 — zero-stride broadcast

A stride of 0 repeats one element along a dimension. The seed's `as_strided(original, (3, 4), (1, 0))`
is right for a contiguous `(3, 1)` input, but the `1` is hard-coded: for a column sliced out of a
wider tensor the row stride is not 1, and the seed reads the wrong elements. The seed also says
`expand` "creates new memory" and quotes 96 B for `expand` vs 48 B for the strided view: both
allocate **nothing** (measured below), and `expand` is itself a zero-stride view.

# %%
# [A4] broadcast: seed strides vs expand vs sw.tricks.broadcast
original = torch.rand(3, 1)
seed_view = torch.as_strided(original, (3, 4), (1, 0))
assert torch.equal(seed_view, original.expand(3, 4))  # right for a contiguous (3, 1) input

column = torch.arange(18.0).reshape(3, 6)[:, 2:3]  # (3, 1) with row stride 6
seed_on_column = torch.as_strided(column, (3, 4), (1, 0))
print("column.stride():", column.stride())
print("seed on a sliced column:", seed_on_column[:, 0].tolist(), "expected:", column[:, 0].tolist())
assert not torch.equal(seed_on_column, column.expand(3, 4))
fixed = sw.tricks.broadcast(column, (3, 4))
assert torch.equal(fixed, column.expand(3, 4)) and fixed.stride() == (6, 0)

expanded, expand_bytes = allocated(lambda: original.expand(3, 4))
strided, strided_bytes = allocated(lambda: torch.as_strided(original, (3, 4), (1, 0)))
print("new storage bytes: expand", expand_bytes, "| as_strided", strided_bytes)
assert expand_bytes == strided_bytes == 0 and expanded.stride() == strided.stride() == (1, 0)
assert sw.same_storage(expanded, original) and sw.same_storage(strided, original)
sw.show(column, seed=seed_on_column, fixed=fixed)

# %% tags=["nbval-ignore-output"]
# [A4] timing: expand vs raw as_strided vs the checked sw.tricks.broadcast (all views)
times = {
    "expand": median_us("o.expand(3, 4)", o=original),
    "torch.as_strided": median_us("torch.as_strided(o, (3, 4), (1, 0))", o=original, torch=torch),
    "sw.tricks.broadcast": median_us("b(o, (3, 4))", o=original, b=sw.tricks.broadcast),
}
for name, us in times.items():
    print(f"{name:20} {us:8.2f} us")
print(
    f"expand / as_strided time ratio: {times['expand'] / times['torch.as_strided']:.2f} (seed: 12.3 / 1.2 = 10.3)"
)

# %% [markdown]
## 3. Trick 2 — sliding windows

The seed's window view `as_strided(x, (n - w + 1, w), (1, 1))` is right for a contiguous 1-d
tensor (and keeps a sliced input's offset, because `torch.as_strided` defaults to the input's
offset), but hard-codes stride 1: on a strided input (`x[::2]`) it is wrong. The seed also says
`unfold` "produces a lot of copies": `Tensor.unfold` is a view (0 bytes); only the im2col
function `F.unfold` copies.

# %%
# [A5] sliding windows: seed vs Tensor.unfold vs NumPy vs sw.tricks.sliding_window
def seed_sliding_window_view(x, window_size):
    return torch.as_strided(x, size=(x.size(0) - window_size + 1, window_size), stride=(1, 1))


signal = torch.arange(12.0)
assert torch.equal(seed_sliding_window_view(signal, 3), signal.unfold(0, 3, 1))
assert torch.equal(seed_sliding_window_view(signal[2:], 3), signal[2:].unfold(0, 3, 1))
every_other = signal[::2]
seed_windows = seed_sliding_window_view(every_other, 3)
print("x[::2] windows, seed :", seed_windows[:2].tolist())
print("x[::2] windows, unfold:", every_other.unfold(0, 3, 1)[:2].tolist())
assert not torch.equal(seed_windows, every_other.unfold(0, 3, 1))
windows = sw.tricks.sliding_window(every_other, 3)
assert torch.equal(windows, every_other.unfold(0, 3, 1))
assert np.array_equal(
    windows.numpy(), np.lib.stride_tricks.sliding_window_view(every_other.numpy(), 3)
)

images = torch.randn(4, 3, 32, 32)
_, unfold_view_bytes = allocated(lambda: images.unfold(2, 3, 1).unfold(3, 3, 1))
_, im2col_bytes = allocated(lambda: F.unfold(images, kernel_size=3))
print(
    f"Tensor.unfold (3x3 windows): {unfold_view_bytes} B new | F.unfold (im2col): {im2col_bytes / images.nbytes:.1f} x the input"
)
assert (
    unfold_view_bytes == 0 and im2col_bytes > 7 * images.nbytes
)  # 9 values per pixel, minus the borders
sw.show(signal, every_other=every_other, windows=windows)

# %% [markdown]
## 4. Trick 3 — transpose by strides

`as_strided(matrix, (6, 4), (1, 6))` equals `matrix.T` for a contiguous `(4, 6)` matrix; on a
matrix sliced out of a wider one its hard-coded `6` is wrong. The seed calls the strided
version "more efficient in chained operations": both are views; the timing cell below measures
the call itself.

# %%
# [A6] transpose: seed strides vs .T vs sw.tricks.transpose
matrix = torch.rand(4, 6)
assert torch.equal(torch.as_strided(matrix, (6, 4), (1, 6)), matrix.T)
sliced = torch.rand(4, 8)[:, 1:7]
seed_t = torch.as_strided(sliced, (6, 4), (1, 6))
assert not torch.equal(seed_t, sliced.T)
fixed_t = sw.tricks.transpose(sliced)
assert torch.equal(fixed_t, sliced.T) and fixed_t.stride() == sliced.T.stride() == (1, 8)
assert sw.same_storage(sliced.T, sliced) and sw.same_storage(seed_t, sliced)  # all views
print("sliced.stride():", sliced.stride(), "| seed stride (1, 6) vs correct", fixed_t.stride())
sw.show(sliced, seed=seed_t, fixed=fixed_t)

# %% tags=["nbval-ignore-output"]
# [A6] timing: .T vs torch.as_strided vs sw.tricks.transpose
for label, stmt in [
    ("matrix.T", "m.T"),
    ("torch.as_strided", "torch.as_strided(m, (6, 4), (1, 6))"),
    ("sw.tricks.transpose", "tr(m)"),
]:
    print(f"{label:20} {median_us(stmt, m=matrix, torch=torch, tr=sw.tricks.transpose):8.2f} us")

# %% [markdown]
## 5. Trick 4 — merging batch dimensions

The seed views a `(32, 3, 224, 224)` batch as `(96, 224, 224)` with strides
`(3*224*224, 224*224, 224)`. The first stride is wrong (merging `32 x 3` steps by one
channel, `224*224`), and the view runs past the end of the storage: torch refuses it.
`sw.as_strided` refuses it too and names the first index that leaves the storage;
`sw.tricks.merge_dims` derives the strides.

# %%
# [A7] merge batch dims: the seed's strides are out of bounds
batch = torch.rand(32, 3, 224, 224)
try:
    torch.as_strided(batch, size=(96, 224, 224), stride=(3 * 224 * 224, 224 * 224, 224))
    raise AssertionError("expected an out-of-bounds error")
except RuntimeError as error:
    print("torch.as_strided:", str(error))
try:
    sw.as_strided(batch, (96, 224, 224), (3 * 224 * 224, 224 * 224, 224))
    raise AssertionError("the line above should raise")
except sw.LayoutError as error:
    print("sw.as_strided   :", error)
merged = sw.tricks.merge_dims(batch, 0, 1)
assert merged.stride() == (224 * 224, 224, 1) and torch.equal(merged, batch.reshape(96, 224, 224))
assert sw.same_storage(merged, batch)
offset_batch = batch[1:]  # an offset input keeps its offset
assert (
    sw.tricks.merge_dims(offset_batch, 0, 1).storage_offset()
    == offset_batch.storage_offset()
    == 3 * 224 * 224
)
del batch, merged, offset_batch
small_batch = torch.arange(24.0).reshape(2, 3, 4)[:, :, 1:]  # offset and gapped
small_merged = sw.tricks.merge_dims(small_batch, 0, 1)
assert torch.equal(small_merged, small_batch.reshape(6, 3)) and small_merged.storage_offset() == 1
sw.show(small_batch, merged=small_merged)

# %% [markdown]
## 6. Trick 5 — checkerboard and blocks

The seed's `checkerboard` uses 3 sizes `(2, H/2, W/2)` with strides `(2W, 2, 2)`: the last two
dims both step two columns, so elements repeat and the rows below are never read. The fixed
view has shape `(2, 2, H/2, W/2)`, strides `(s0, s1, 2*s0, 2*s1)`, and `[a, b]` equals
`x[a::2, b::2]`. `blocks` tiles into non-overlapping `bh x bw` blocks.

# %%
# [A8] checkerboard: seed vs fixed
def seed_checkerboard(x):
    return torch.as_strided(
        x, size=(2, x.size(0) // 2, x.size(1) // 2), stride=(2 * x.size(1), 2, 2)
    )


board_input = torch.arange(16).reshape(4, 4)
seed_board = seed_checkerboard(board_input)
print("seed checkerboard:", seed_board.tolist())
assert sw.inspect(seed_board).has_overlap  # the same element appears twice
assert not any(
    torch.equal(seed_board[i], board_input[a::2, b::2])
    for i in range(2)
    for a in range(2)
    for b in range(2)
)
board = sw.tricks.checkerboard(board_input)
for a_phase, b_phase in itertools.product(range(2), range(2)):
    assert torch.equal(board[a_phase, b_phase], board_input[a_phase::2, b_phase::2])
print("fixed [0, 1] == x[0::2, 1::2]:", board[0, 1].tolist())
tiles = sw.tricks.blocks(board_input, 2, 2)
assert torch.equal(tiles, board_input.reshape(2, 2, 2, 2).permute(0, 2, 1, 3))
assert not sw.inspect(tiles).has_overlap and sw.same_storage(tiles, board_input)
display(sw.show(board_input, seed=seed_board, fixed=board))
sw.show(board_input, tiles=tiles)

# %% [markdown]
## 7. Bounds checking and "safety helpers"

torch already checks a strided view against the storage size (on CPU it raises); the seed's
`safe_as_strided` repeats that check by hand. Its formula is right, but it passes `offset=0` to
`torch.as_strided` by default, so on an offset input it silently reads from the start of the
storage instead of from the input's first element (`torch.as_strided` would have kept the
input's offset). Its `validate_view` compares `storage().data_ptr()` — right as a test of
storage identity, but it uses the deprecated `TypedStorage` API, and it says nothing about which
elements two views share; `sw.same_storage` and `sw.overlap` do.

# %%
# [A11] [A10] seed safety helpers vs sw.as_strided / sw.same_storage / sw.overlap
def seed_safe_as_strided(x, size, stride, offset=0):
    required = sum((s - 1) * st for s, st in zip(size, stride)) + offset
    assert x.untyped_storage().nbytes() // x.element_size() > required, "Out of bounds access"
    return torch.as_strided(x, size, stride, offset)


values = torch.arange(10.0)
tail = values[4:]
seed_read = seed_safe_as_strided(tail, (3,), (1,))
print("tail[:3]:", tail[:3].tolist(), "| seed safe_as_strided:", seed_read.tolist())
assert not torch.equal(seed_read, tail[:3])
assert torch.equal(torch.as_strided(tail, (3,), (1,)), tail[:3])  # torch keeps the offset itself
assert torch.equal(sw.as_strided(tail, (3,), (1,)), tail[:3])
try:
    torch.as_strided(values, (4,), (3,), 1)
    raise AssertionError("the line above should raise")
except RuntimeError as error:
    print("torch:", str(error))
try:
    sw.as_strided(values, (4,), (3,), 1)
    raise AssertionError("the line above should raise")
except sw.LayoutError as error:
    print("sw   :", error)


def seed_validate_view(base_tensor, view):
    base_storage = base_tensor.storage().data_ptr()
    view_storage = view.storage().data_ptr()
    assert base_storage == view_storage, "Invalid view creation"


with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    seed_validate_view(values, values[5:])
assert any("TypedStorage is deprecated" in str(w.message) for w in caught)
assert sw.same_storage(values, values[5:]) and not sw.overlap(values[:5], values[5:])
assert sw.overlap(values[:6], values[5:])

# %% [markdown]
## 8. Writing through overlapping views

`expand` and sliding windows map many indices to one storage element. torch refuses in-place
arithmetic on an `expand`ed tensor, but a sliding window built with `as_strided` is accepted
and **silently adds once per alias**: each storage element gets `+1` as many times as it
appears in a window. Clone first (the seed's advice, right) or write to the base.

# %%
# [A13] in-place ops on overlapping views
row = torch.zeros(1, 4)
try:
    row.expand(3, 4).add_(1)
    raise AssertionError("add_ on an expanded tensor should raise")
except RuntimeError as error:
    print("expand + add_:", str(error).split(".")[0])

signal = torch.zeros(6)
windows = torch.as_strided(signal, (4, 3), (1, 1))
assert sw.inspect(windows).has_overlap
windows.add_(1)  # no error
print("after windows.add_(1), the signal is:", signal.tolist())
assert signal.tolist() == [1.0, 2.0, 3.0, 3.0, 2.0, 1.0]  # +1 per window that contains the element

signal = torch.zeros(6)
safe = torch.as_strided(signal, (4, 3), (1, 1)).clone()
safe.add_(1)
assert torch.equal(signal, torch.zeros(6)) and torch.equal(safe, torch.ones(4, 3))
sw.show(signal, windows=windows)

# %% [markdown]
## 9. Autograd

`torch.as_strided` is differentiable: the gradient of an overlapping view adds up per alias.
The seed's custom `autograd.Function` returns `grad_output.contiguous()` as the input's
gradient, which has the *view's* shape, not the input's: autograd rejects it.

# %%
# [A12] the seed's StridedFunction vs torch.as_strided's own backward
class StridedFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input, size, stride):
        ctx.save_for_backward(input)
        ctx.size = size
        ctx.stride = stride
        return torch.as_strided(input, size, stride)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output.contiguous(), None, None


leaf = torch.arange(6.0, requires_grad=True)
try:
    StridedFunction.apply(leaf, (4, 3), (1, 1)).sum().backward()
    raise AssertionError("expected a gradient shape error")
except RuntimeError as error:
    print("seed:", error)
leaf = torch.arange(6.0, requires_grad=True)
torch.as_strided(leaf, (4, 3), (1, 1)).sum().backward()
assert leaf.grad.tolist() == [1.0, 2.0, 3.0, 3.0, 2.0, 1.0]
print("torch.as_strided gradient (uses per element):", leaf.grad.tolist())

# %% [markdown]
## 10. Local response normalization

The seed's "naive" LRN computes `x / (1 + alpha * sum of squares over 5 channels)`. That is
PyTorch's `F.local_response_norm` with `beta=1` and `alpha` scaled by the window size (the
seed's formula has no `beta`). Its "optimized" `lrn_strided` gives the channel dimension
stride 1 (it should step one channel, `padded.stride(1)`) and then indexes `norm[:, :, radius]`
(a row of the image, not a channel): on most shapes it raises, and where that indexing happens
to broadcast (batch = channels = height) it returns wrong numbers. `sw.tricks.lrn` writes `x**2` once into a zero-padded buffer and reduces a sliding
window view of it.

# %%
# [A14] seed LRN versions vs sw.tricks.lrn vs F.local_response_norm
def lrn_naive(x, radius=2, alpha=1e-4):
    c = x.shape[1]  # the seed unpacks b, c, h, w and uses only c
    out = torch.zeros_like(x)
    for i in range(c):
        start = max(0, i - radius)
        end = min(c, i + radius + 1)
        out[:, i] = x[:, i] / (1 + alpha * (x[:, start:end] ** 2).sum(1))
    return out


def lrn_strided(x, radius=2, alpha=1e-4):
    b, c, h, w = x.shape
    padded = F.pad(x, (0, 0, 0, 0, radius, radius))
    windows = torch.as_strided(
        padded,
        size=(b, c, 2 * radius + 1, h, w),
        stride=(padded.stride(0), 1, padded.stride(1), padded.stride(2), padded.stride(3)),
    )
    norm = 1 + alpha * (windows**2).sum(2)
    return x / norm[:, :, radius]


features = torch.randn(8, 32, 28, 28) * 10
alpha = 1e-3
naive = lrn_naive(features, alpha=alpha)
torch.testing.assert_close(
    naive, F.local_response_norm(features, 5, alpha=5 * alpha, beta=1.0, k=1.0), rtol=1e-5, atol=0
)
assert not torch.allclose(
    naive, F.local_response_norm(features, 5, alpha=alpha), rtol=1e-3
)  # not the standard LRN
try:
    lrn_strided(features, alpha=alpha)
    raise AssertionError("expected a shape error")
except RuntimeError as error:
    print("seed lrn_strided on (8, 32, 28, 28):", error)
square = torch.randn(4, 4, 4, 4)  # the only shapes where its indexing broadcasts
assert lrn_strided(square).shape == square.shape
assert not torch.allclose(lrn_strided(square), lrn_naive(square), rtol=1e-3)
print(
    "seed lrn_strided on (4, 4, 4, 4): runs, max abs error vs its own naive version",
    f"{(lrn_strided(square) - lrn_naive(square)).abs().max().item():.3f}",
)

ours = sw.tricks.lrn(features, 5, alpha=5 * alpha, beta=1.0, k=1.0)
torch.testing.assert_close(ours, naive, rtol=1e-5, atol=0)
torch.testing.assert_close(
    sw.tricks.lrn(features), F.local_response_norm(features, 5), rtol=1e-5, atol=0
)
print("sw.tricks.lrn matches the seed's naive LRN and F.local_response_norm (rtol 1e-5)")

# %% [markdown]
Peak memory (new tensor storage while each runs, as a multiple of the input's size). The
seed says its strided version uses 60% less memory; a window of squares `windows**2` is itself
five inputs large.

# %%
# [A14] peak memory of each LRN version
def window_of_squares(x, radius=2):
    padded = F.pad(x, (0, 0, 0, 0, radius, radius))
    return (padded.unfold(1, 2 * radius + 1, 1) ** 2).sum(-1)


peaks = {}
for label, fn in [
    ("seed naive loop", lambda: lrn_naive(features, alpha=alpha)),
    ("windows**2 (seed idea, fixed strides)", lambda: window_of_squares(features)),
    ("F.local_response_norm", lambda: F.local_response_norm(features, 5)),
    ("sw.tricks.lrn", lambda: sw.tricks.lrn(features)),
]:
    _, peaks[label] = allocated(fn)
    print(f"{label:40} peak {peaks[label] / features.nbytes:5.2f} x input")
assert peaks["windows**2 (seed idea, fixed strides)"] >= 5 * features.nbytes
assert peaks["sw.tricks.lrn"] <= (36 / 32 + 1) * features.nbytes < peaks["F.local_response_norm"]

# %% tags=["nbval-ignore-output"]
# [A14] timing (single run, this machine): seed naive loop vs F.local_response_norm vs sw.tricks.lrn
lrn_times = {
    "seed naive loop": median_us("f(x, alpha=a)", f=lrn_naive, x=features, a=alpha),
    "F.local_response_norm": median_us("F.local_response_norm(x, 5)", F=F, x=features),
    "sw.tricks.lrn": median_us("lrn(x)", lrn=sw.tricks.lrn, x=features),
}
for label, us in lrn_times.items():
    print(f"{label:24} {us / 1000:8.2f} ms")
print(
    f"speed-up of sw.tricks.lrn over the naive loop: {lrn_times['seed naive loop'] / lrn_times['sw.tricks.lrn']:.2f}x (seed: 3-5x on CPU)"
)

# %% [markdown]
## 11. GPU notes

The seed's GPU advice (alignment, kernel fusion, atomics, "use `torch.cuda.empty_cache()` to
clean up invalid views") cannot be measured on this CPU-only machine. One part can be checked
by reading the API: `empty_cache()` only returns *unused* cached blocks to the driver; memory
held by a live view's storage is in use and stays allocated, so it cannot "clean up views".
The GPU benchmark notebook (05) measures what can be measured on a GPU.

# %%
# [A9] on a GPU: empty_cache() leaves a live view's memory allocated (skipped without CUDA)
if torch.cuda.is_available():
    base = torch.randn(1024, 1024, device="cuda")
    view = base[::2]
    del base
    before = torch.cuda.memory_allocated()
    torch.cuda.empty_cache()
    assert torch.cuda.memory_allocated() == before and view.sum().isfinite()
    print("empty_cache() kept the view's", before, "bytes allocated")
else:
    print("no CUDA device here: the GPU notes are not checked in this run")

# %% [markdown]
## 12. Playground: edit size, stride and offset yourself

`sw.playground(x)` opens an editor over `x`'s storage: one number input per dim for size and
stride, the storage offset, add/remove a dim, and one button per trick above — the five tricks
done right (plus the opening "column" example) and the seed article's versions of them (dashed
buttons). On every edit the widget
redraws the storage grid (cells read more than once carry `×n`), the logical grid and the facts,
and says in words which standard op the setting is (`x.t()`, `x.unfold(1, 3, 1)`,
`x[:, 0:1].expand(4, 6)`, ...), which logical indices share a storage element, or why the
setting is refused. All of that runs in the browser, so it also works in a static HTML export of
this notebook, without a kernel. With a kernel, `pg.view` is the checked view for the current
setting and `pg.code` the `torch.as_strided(...)` call to copy.

Below, the playground is left on the seed's checkerboard (`size (2, H//2, W//2)`,
`stride (2*W, 2, 2)`); without JavaScript its output shows the same picture as a static SVG.

# %%
x = torch.arange(24).view(4, 6)
pg = sw.playground(x, size=(2, 2, 3), stride=(2 * 6, 2, 2))  # the seed's checkerboard, H=4, W=6
seed_view = pg.view
assert seed_view is not None and sw.inspect(seed_view).has_overlap  # in bounds, but elements repeat
assert not any(torch.equal(seed_view[0], x[a::2, b::2]) for a in (0, 1) for b in (0, 1))
print(pg.code)
pg

# %% [markdown]
Settings made in Python move the controls too. The right checkerboard is a 4-d view whose phase
dims step one element and whose sub-grid dims step two; `pg.code` rebuilds exactly `pg.view`:

# %%
pg.size, pg.stride = [2, 2, 2, 3], [6, 1, 12, 2]
assert torch.equal(pg.view, sw.tricks.checkerboard(x))
assert all(torch.equal(pg.view[a, b], x[a::2, b::2]) for a in (0, 1) for b in (0, 1))
rebuilt = eval(pg.code)
assert torch.equal(rebuilt, pg.view) and rebuilt.stride() == pg.view.stride()
print(pg.code)

# %% [markdown]
A setting that leaves the storage is refused before `torch.as_strided` sees it — here the seed's
batch merge scaled to `x` (the merged dim given the outer stride 6 instead of 1). `pg.view` is
`None`, `pg.error` names the first bad index, and the widget stays usable:

# %%
pg.size, pg.stride = [24], [6]
assert pg.view is None
print(pg.error)
pg.size, pg.stride = [24], [1]
assert torch.equal(pg.view, x.flatten())

# %% [markdown]
## Seed claims checked in this notebook

| id | seed claim | verdict | shown in cell |
|---|---|---|---|
| A1 | a stride is the number of bytes to skip | wrong: torch strides count elements (NumPy's count bytes) | `[A1]` |
| A3 | `as_strided(x, (5,), (2,))` gives `x[:, 1]` | wrong: no storage offset, it gives `x[:, 0]` | `[A3]` |
| A4 | `expand` allocates new memory (96 B vs 48 B) | wrong: both allocate 0 bytes | `[A4]` |
| A4 | `as_strided(original, (3,4), (1,0))` broadcasts `original` | partly: only for a contiguous input; strides must come from `x.stride()` | `[A4]` |
| A4 | the strided view is ~10x faster than `expand` (1.2 vs 12.3 µs) | wrong: not reproduced here (both are microsecond view constructions; see the timing cell) | `[A4]` timing |
| A5 | `as_strided(x, (n-w+1, w), (1, 1))` is a sliding-window view | partly: only for stride-1 inputs | `[A5]` |
| A5 | `unfold` produces a lot of copies | wrong for `Tensor.unfold` (a view); right for `F.unfold` (im2col) | `[A5]` |
| A6 | `as_strided(matrix, (6,4), (1,6))` is a transpose | partly: only for a contiguous `(4, 6)` input | `[A6]` |
| A6 | the strided transpose is more efficient in chains | wrong: both are views; per call they are within a fraction of a microsecond and the order flips between runs here (timing cell, not asserted); its hard-coded strides are wrong on other inputs | `[A6]` timing |
| A7 | `(32,3,224,224)` as `(96,224,224)` with strides `(3*224*224, 224*224, 224)` | wrong: out of bounds; the first stride is `224*224` | `[A7]` |
| A8 | `as_strided(x, (2,H/2,W/2), (2W,2,2))` is a checkerboard split | wrong: elements repeat, half are never read | `[A8]` |
| A10 | `validate_view` via `storage().data_ptr()` | partly: checks storage identity, with a deprecated API | `[A11] [A10]` |
| A11 | `safe_as_strided` bounds check | partly: formula right, torch already checks; default `offset=0` reads the wrong elements of an offset view | `[A11] [A10]` |
| A13 | clone an overlapping view before modifying it | right: `add_` through a sliding window silently adds per alias | `[A13]` |
| A12 | the custom `StridedFunction` makes `as_strided` autograd-compatible | wrong: its gradient has the wrong shape; `as_strided` is already differentiable | `[A12]` |
| A14 | `lrn_strided` is an optimized LRN | wrong: channel stride 1 and `norm[:, :, radius]` raise or give wrong values | `[A14]` |
| A14 | the strided LRN uses 60% less memory | wrong: `windows**2` is ≥ 5x the input; `sw.tricks.lrn` stays ≈ 2.1x | `[A14]` memory |
| A14 | the strided LRN is 3-5x faster on CPU, 8-12x on GPU | partly: the seed's code raises; a working window LRN (`sw.tricks.lrn`) ran 2.3-4.5x faster than the loop in runs on this CPU (timing cell, not asserted); the GPU figure is GPU-only | `[A14]` timing |
| A9 | GPU alignment/fusion notes; `empty_cache()` cleans up views | GPU-only (not run here); `empty_cache()` frees only unused cached blocks | `[A9]` |
"""

NB03 = r"""
# %% [markdown]
# 03 · Copy semantics: what shares, what allocates, what keeps strides

The second seed article sorts "copies" into three kinds: zero-copy (shared storage), "shallow
copy" (a new tensor header over the *same* storage, copy-on-write) and deep copy. It files
`clone()` under the shallow, copy-on-write kind. This notebook measures, for each common
operation: whether the result is the same Python object, shares the input's storage, starts at
the same `data_ptr()`, which strides it has, and how many bytes of new storage it allocated
(`stridewidget.tricks.PeakMemory`, which counts every storage an ATen op creates).

{NBVAL_NOTE}
{SETUP}
# %% [markdown]
## 1. The measured table

Each row runs one operation on a `(128, 256)` float32 tensor `x` (128 KiB), first contiguous,
then transposed (dense but not contiguous). "new bytes" is the peak of new storage while the
operation ran, in units of `x.nbytes`.

# %%
# [B7] [B10] [B11] [B12] [B13] [D5] copy semantics, measured
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
    }


def print_table(x):
    print(f"input: shape {tuple(x.shape)}, strides {x.stride()}, contiguous {x.is_contiguous()}")
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


x = torch.randn(128, 256)
contiguous_rows = print_table(x)
# expectations: (same object, shares storage, new bytes / x.nbytes)
expected = {
    "x.detach()": (False, True, 0),
    "x.view(-1)": (False, True, 0),
    "x.data": (False, True, 0),
    "x.requires_grad_(False)": (True, True, 0),
    "x.contiguous()": (True, True, 0),
    "x.reshape(-1)": (False, True, 0),
    "x.clone()": (False, False, 1),
    "x.clone(memory_format=contiguous_format)": (False, False, 1),
    "torch.empty_like(x).copy_(x)": (False, False, 1),
    "x.cpu().clone().to(x.device)": (False, False, 1),
    "torch.from_numpy(x.numpy())": (False, True, 0),
    "x.contiguous().clone()": (False, False, 1),
    "empty_like(x.contiguous()).copy_(x.contiguous())": (False, False, 1),
}
for name, (same_object, shares, new) in expected.items():
    row = contiguous_rows[name]
    assert (row["same object"], row["shares storage"], row["new bytes / x.nbytes"]) == (
        same_object,
        shares,
        new,
    ), name
    assert row["contiguous"] and row["same data_ptr"] == shares

# %%
# [B11] [B12] [B13] the same operations on a transposed (dense, non-contiguous) input
xt = torch.randn(256, 128).t()
transposed_rows = print_table(xt)
assert transposed_rows["x.view(-1)"] is None  # view refuses instead of copying
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
`clone()` and `empty_like()` use `memory_format=torch.preserve_format`: a *dense* input keeps its
strides (the transposed rows above), but a gapped input cannot keep gaps in new storage, so the
copy comes out contiguous. The seed says both "inherit the original strides": partly right.

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

# %% [markdown]
## 2. Is `clone()` a shallow, copy-on-write copy?

The seed: after `y = x.clone()`, `x.storage().data_ptr() == y.storage().data_ptr()` is `True`
"initially", and the first write to `y` triggers the real copy. Measured: `clone()` allocates the
full new storage *during the call*, the pointers differ immediately, and the first write
allocates nothing and does not move `y`.

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

# %% [markdown]
The seed's table on an A100 says cloning a 1 GB tensor takes 0.02 ms. A clone reads 1 GB and
writes 1 GB; in 0.02 ms that is 100 TB/s, about 50 times the A100's published peak memory
bandwidth (≈ 2.0 TB/s). The number is impossible, which fits a clone that copies nothing —
but clone does copy. The timing cell below measures the copies on this machine.

# %%
# [B10] the seed's 0.02 ms for a 1 GB clone, as a bandwidth
gigabyte = 1024**3
implied_bandwidth = 2 * gigabyte / 0.02e-3  # bytes read + written per second
a100_peak = 2.039e12  # A100 80GB SXM HBM2e, NVIDIA datasheet
print(
    f"implied: {implied_bandwidth / 1e12:.0f} TB/s = {implied_bandwidth / a100_peak:.0f} x the A100 peak"
)
assert implied_bandwidth > 50 * a100_peak
# on the CPU, .cpu() and .to("cpu") return the tensor itself, so the "host round trip" is one clone
assert x.cpu() is x and x.to("cpu") is x

# %% tags=["nbval-ignore-output"]
# [B10] timing the copy methods on a 64 MiB tensor (this machine, one run)
big = torch.randn(4096, 4096)
big_t = big.t()
for label, stmt, tensor in [
    ("x.clone()", "x.clone()", big),
    ("torch.empty_like(x).copy_(x)", "torch.empty_like(x).copy_(x)", big),
    ("x.cpu().clone().to('cpu')", "x.cpu().clone().to('cpu')", big),
    ("xt.contiguous()", "x.contiguous()", big_t),
    ("xt.contiguous().clone()", "x.contiguous().clone()", big_t),
    ("xt.clone(memory_format=contiguous)", "x.clone(memory_format=torch.contiguous_format)", big_t),
]:
    us = median_us(stmt, x=tensor, torch=torch)
    print(f"{label:38} {us / 1000:8.2f} ms   {2 * tensor.nbytes / us / 1e3:6.2f} GB/s")
del big, big_t

# %% [markdown]
## 3. Zero-copy results and lifetimes

`detach()` shares the storage (right). The seed warns that deleting `x` can free the storage
under `y` ("dangling pointer"). Storages are reference-counted: while `y` exists, its storage
does.

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
`requires_grad_(False)` is not a new tensor header: it changes the flag in place and returns the
same object (and only on leaves). `x.data` is not deprecated — it emits no warning — but it is
unsafe in a different way: writes through it bypass autograd's version counter, so a gradient
can be silently wrong where `detach()` raises.

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

# %% [markdown]
## 4. NumPy interop

On the CPU, `.numpy()` and `torch.from_numpy` are zero-copy both ways and keep strides
(a Fortran-order array becomes a non-contiguous tensor). The seed says `.numpy()` "forces a
synchronous copy to the CPU": not for a CPU tensor (on CUDA, `.numpy()` is refused until you
call `.cpu()`, which copies). Negative NumPy strides are refused by `from_numpy`.

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
if (
    torch.cuda.is_available()
):  # .numpy() refuses CUDA tensors: the copy to the host must be explicit
    try:
        torch.ones(2, device="cuda").numpy()
        raise AssertionError("the line above should raise")
    except TypeError:
        pass
sw.show(from_fortran)

# %% [markdown]
## 5. Where did my copies come from?

`sw.track_copies()` records every tensor-producing call in a block and classifies it as a
copy, in-place write, view or compute, from the ATen ops it ran and storage identity. Two
realistic snippets: an HWC→CHW preprocessing step and a multi-head attention block.

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
`float()` keeps the permuted (channels-last) layout, so the `contiguous()` after it is a second
full copy; calling `contiguous()` on the uint8 view first would copy a quarter of the bytes,
or the model can take channels-last input as it is.

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
The batched `matmul`s copy their permuted operands internally (`aten.clone` while folding the
batch dims for `bmm`), and the final `reshape` copies because `transpose(1, 2)` made the heads
non-viewable. None of these copies is visible in the source; the log finds all three.
"""

NB03_CLAIMS = r"""
# %% [markdown]
## Seed claims checked in this notebook

| id | seed claim | verdict | shown in cell |
|---|---|---|---|
| B7 | `detach()` shares storage (zero copy) | right | `[B7] [B8]`, table `[B7]` |
| B7 | `requires_grad_(False)` is the same as `detach()` (a new header) | partly: it shares storage because it *is* the same object, changed in place; leaves only | `[B7] [B31]` |
| B31 | `x.data` is deprecated since PyTorch 2.0 | wrong: no warning; it is unsafe because writes bypass autograd | `[B7] [B31]` |
| B8 | deleting `x` can free the storage under `y = x.detach()` (dangling pointer) | wrong: storages are reference-counted | `[B7] [B8]` |
| B9 | `clone()` is a shallow copy-on-write: same storage until the first write | wrong: `clone()` allocates and copies during the call; the first write allocates nothing | `[B9] [B26]` |
| B26 | memory grows after `clone()` only when the clone is modified | wrong: it grows at `clone()` | `[B9] [B26]` |
| B10 | `clone()` of 1 GB takes 0.02 ms on an A100 | wrong: that is 100 TB/s, ~50x the A100's peak bandwidth | `[B10]` |
| B10 | `x.cpu().clone().to(x.device)` is a slow host round trip | GPU-only: on the CPU `.cpu()`/`.to()` return `x` itself (one clone) | `[B10]` |
| B10 | `empty_like(x).copy_(x)` is the fastest deep copy | GPU-only: on this CPU it runs at the same speed as `clone()` (timing cell) | `[B10]` timing |
| B11 | `clone()` keeps the original strides | partly: dense inputs keep them, gapped inputs are compacted | `[B11] [B12] [B13]`, `[B11] [B12]` |
| B12 | `empty_like(x)` of a non-contiguous `x` is non-contiguous | partly: same rule as `clone()` | `[B11] [B12]` |
| B13 | a contiguous deep copy needs `x.contiguous().clone()` or `empty_like(x.contiguous()).copy_(x.contiguous())` | partly: works, but copies twice; `x.clone(memory_format=torch.contiguous_format)` copies once | `[B11] [B12] [B13]` |
| D5 | `clone()`, `detach()`, `requires_grad_()` keep contiguity | right for contiguous inputs (they preserve the layout) | table `[B7]` |
| B23 | `.numpy()` forces a synchronous copy to the CPU | wrong on the CPU: zero-copy; GPU-only otherwise (`.numpy()` refuses CUDA tensors) | `[B23] [B28]` |
| D3 | matmul with non-contiguous operands copies internally | partly: batched matmul on permuted operands copies (`aten.clone`); 2-d `a.t() @ b` does not (notebook 04) | `[copies]` |
| B28 | `from_numpy` inherits the array's order (F-order → different strides) | right, and it shares memory; negative strides are refused | `[B23] [B28]` |
"""

NB04 = r"""
# %% [markdown]
# 04 · `expand` vs `repeat`, and the contiguity pitfalls

`expand` makes a zero-stride **view** (no data moved); `repeat` **allocates** and copies. This
notebook measures both (memory exactly, time on this machine), shows what in-place writes do
through an expanded view, and walks through the contiguity pitfalls of the third and fourth seed
articles: HWC→CHW, `.view` errors and their fixes, and whether `y + 1` on a transposed `y`
hides a copy.

{NBVAL_NOTE}
{SETUP}
# %% [markdown]
## 1. `expand` is a view, `repeat` is a copy

The seed's check `expanded.storage().data_ptr() == base.storage().data_ptr()` is right. Its memory
tables are not: for `base = randn(1, 1024)`, `repeat(1024, 1)` allocates exactly
`1024 * 1024 * 4` bytes = 4 MiB (the seed says "+8 MB"), and `expand` allocates nothing (the
seed's other table says 2.0 MB for `expand` and 16.0 MB for `repeat`).

# %%
# [C1] [C2] [C7] memory of expand vs repeat, measured as new storage bytes
base = torch.randn(1, 1024)
expanded, expand_bytes = allocated(lambda: base.expand(1024, 1024))
repeated, repeat_bytes = allocated(lambda: base.repeat(1024, 1))
assert sw.same_storage(expanded, base) and expanded.stride() == (0, 1)
assert not sw.same_storage(repeated, base) and torch.equal(expanded, repeated)
assert expand_bytes == 0 and repeat_bytes == 1024 * 1024 * 4 == 4 * 2**20
print(f"expand: {expand_bytes} B new | repeat: {repeat_bytes / 2**20:.1f} MiB new")
print(sw.inspect(expanded))
print(sw.inspect(repeated))
small = torch.arange(3.0).reshape(3, 1)
sw.show(small, expanded=small.expand(3, 4), repeated=small.repeat(1, 4))

# %% tags=["nbval-ignore-output"]
# [C2] [C4] time: expand vs repeat, and the seed's batch_augment sizes (3, 224, 224) x 256
sample = torch.randn(3, 224, 224)
timings = {
    "base.expand(1024, 1024)": median_us("b.expand(1024, 1024)", b=base),
    "base.repeat(1024, 1)": median_us("b.repeat(1024, 1)", b=base),
    "sample.unsqueeze(0).expand(256, -1, -1, -1)": median_us(
        "s.unsqueeze(0).expand(256, -1, -1, -1)", s=sample
    ),
    "sample.repeat(256, 1, 1, 1)": median_us("s.repeat(256, 1, 1, 1)", s=sample),
}
for label, us in timings.items():
    print(f"{label:46} {us:12.1f} us")
repeat_gb = 256 * sample.nbytes / 1e9
print(
    f"repeat writes {repeat_gb:.3f} GB: the seed's 152 us would need {repeat_gb / 152e-6:.0f} GB/s"
)

# %% [markdown]
## 2. Writing through an expanded view

The seed: an in-place op on an expanded tensor "affects the original". torch refuses in-place
*arithmetic* on it outright. Writing into one row is allowed — and that row is the base's
memory, so *every* row and the base change. The seed's fix, `.contiguous()` before writing, is
right only when the expand actually broadcast something: expanding to the same shape returns a
contiguous view, `.contiguous()` then returns that same view, and the write lands in the
original. `clone()` always copies.

# %%
# [C3] [C12] in-place writes through expand
base = torch.zeros(1, 4)
view = base.expand(3, 4)
try:
    view.add_(1)
    raise AssertionError("expected in-place add_ on an expanded view to raise")
except RuntimeError as error:
    print("view.add_(1):", str(error).split(".")[0])
view[1] = torch.tensor([1.0, 2.0, 3.0, 4.0])  # one row ...
assert base.tolist() == [[1.0, 2.0, 3.0, 4.0]]  # ... is the base
assert all(row.tolist() == [1.0, 2.0, 3.0, 4.0] for row in view)  # ... and every other row

original = torch.zeros(100, 100)
same_shape = original.expand(100, 100)
assert same_shape.is_contiguous() and same_shape.contiguous() is same_shape
same_shape.contiguous()[0] = 7.0
assert original[0].eq(7.0).all()  # the seed's "safe" copy wrote into the original
safe = original.expand(100, 100).clone()
safe[1] = 9.0
assert original[1].eq(0.0).all()
broadcast_copy = torch.zeros(1, 100).expand(100, 100).contiguous()
assert not sw.same_storage(
    broadcast_copy, original
)  # with a real broadcast, contiguous() does copy

# %% [markdown]
## 3. `expand` errors, `-1`, and autograd

# %%
# [C9] [C10] [C11] what expand accepts
try:
    torch.randn(2, 3).expand(4, 3)
    raise AssertionError("the line above should raise")
except RuntimeError as error:
    print("(2, 3).expand(4, 3):", str(error).split(".")[0])
valid = torch.ones(1, 5)
try:
    valid.expand(-1, 10)
    raise AssertionError("expand(-1, 10) of a (1, 5) tensor should raise")
except RuntimeError as error:
    print("(1, 5).expand(-1, 10):", str(error).split(".")[0])
assert valid.expand(2, -1).shape == (2, 5) and valid.expand(-1, 5).shape == (1, 5)
t = torch.randn(1, 3, 224)
assert t.permute(1, 0, 2).expand(3, 256, 224).shape == (3, 256, 224)

# %% [markdown]
The seed says `expand` gives "a leaner graph" than `repeat`, which "records every copy". Both
record one backward node, and the gradients are equal: each sums the incoming gradient over the
broadcast dimension.

# %%
# [C8] autograd through expand and repeat
x = torch.randn(1, requires_grad=True)
expand_out, repeat_out = x.expand(4), x.repeat(4)
assert type(expand_out.grad_fn).__name__ == "ExpandBackward0"
assert type(repeat_out.grad_fn).__name__ == "RepeatBackward0"
assert (
    expand_out.grad_fn.next_functions == repeat_out.grad_fn.next_functions
)  # both lead straight to x
(expand_grad,) = torch.autograd.grad(expand_out.sum(), x)
(repeat_grad,) = torch.autograd.grad(repeat_out.sum(), x)
assert expand_grad.item() == repeat_grad.item() == 4.0
print(
    "grad_fn:",
    type(expand_out.grad_fn).__name__,
    "|",
    type(repeat_out.grad_fn).__name__,
    "| grads",
    expand_grad.item(),
    repeat_grad.item(),
)

# %% [markdown]
## 4. Broadcasting needs neither

Arithmetic broadcasts by itself: the seed's `WeightedPooling` expands its weights before
multiplying, but `x * weights` gives the same result with the same allocations.

# %%
# [C6] explicit expand vs plain broadcasting
features = torch.randn(32, 10, 64)
weights = torch.randn(1, 64)
with_expand, expand_peak = allocated(
    lambda: (features * weights.expand(features.size(0), -1).unsqueeze(1)).sum(dim=1)
)
plain, plain_peak = allocated(lambda: (features * weights).sum(dim=1))
assert torch.equal(with_expand, plain) and expand_peak == plain_peak
print("same result, same bytes allocated:", expand_peak == plain_peak)

# %% [markdown]
## 5. Does `y + 1` on a transposed `y` hide a copy?

The fourth seed times `y.contiguous() + 1` against `y + 1` for a transposed `y` and calls the
second an "implicit copy". Measured: `y + 1` allocates only its output, and the output takes
`y`'s (transposed) layout; `y.contiguous() + 1` copies first, so it allocates twice as much.
Elementwise kernels read strided inputs directly.

# %%
# [D11] implicit vs explicit contiguity
y = torch.randn(1000, 1000).t()
implicit, implicit_bytes = allocated(lambda: y + 1)
explicit, explicit_bytes = allocated(lambda: y.contiguous() + 1)
assert torch.equal(implicit, explicit)
assert implicit_bytes == y.nbytes and explicit_bytes == 2 * y.nbytes
assert implicit.stride() == y.stride() == (1, 1000)  # the output follows the input's layout
print(
    f"y + 1: {implicit_bytes / y.nbytes:.0f}x y.nbytes, strides {implicit.stride()} | y.contiguous() + 1: {explicit_bytes / y.nbytes:.0f}x"
)

# %% tags=["nbval-ignore-output"]
# [D11] timing: y + 1 vs y.contiguous() + 1 (this machine)
print(f"y + 1             : {median_us('y + 1', y=y) / 1000:7.2f} ms")
print(f"y.contiguous() + 1: {median_us('y.contiguous() + 1', y=y) / 1000:7.2f} ms")

# %% [markdown]
The seed also says matrix multiplication needs contiguous operands ("cuBLAS asserts
contiguity, or copies internally") and recommends `q.transpose(-2, -1).contiguous()`. On this
CPU, a 2-d `a.t() @ b` allocates only its output: the BLAS call takes the transposed operand as
is. Batched 4-d operands permuted out of a fused projection are different: `matmul` folds the
batch dims for `bmm` and copies them itself — and an explicit `.contiguous()` first does not save
that copy, it only moves it.

# %%
# [D3] [D9] matmul with a transposed operand (CPU)
a = torch.randn(512, 256)
b = torch.randn(512, 64)
product, matmul_bytes = allocated(lambda: a.t() @ b)
assert torch.allclose(product, a.t().contiguous() @ b, rtol=1e-5, atol=1e-5)
assert matmul_bytes == product.nbytes  # no copy of a.t() (which would be 512 KiB)
print("2-d: bytes allocated by a.t() @ b:", matmul_bytes, "= the output only")

# batched 4-d operands permuted out of a fused qkv projection: matmul copies them itself
qkv = torch.randn(8, 128, 3, 4, 32).permute(2, 0, 3, 1, 4)
q, k = qkv[0], qkv[1]
scores, implicit_bytes = allocated(lambda: q @ k.transpose(-2, -1))
scores_c, explicit_bytes = allocated(lambda: q.contiguous() @ k.transpose(-2, -1).contiguous())
assert torch.allclose(scores, scores_c, rtol=1e-4, atol=1e-4)
assert implicit_bytes > scores.nbytes  # an internal copy of the operands
assert explicit_bytes >= implicit_bytes  # calling .contiguous() first does not avoid it
print(
    f"4-d: q @ k^T allocates {implicit_bytes / scores.nbytes:.2f}x its output; with .contiguous() first {explicit_bytes / scores.nbytes:.2f}x"
)

# %% [markdown]
## 6. HWC → CHW

An image from OpenCV/PIL/NumPy is HWC; convolutions want CHW. `permute(2, 0, 1)` is a view with
non-contiguous strides, so `.view(1, -1)` raises; `.contiguous().view(1, -1)` or
`.reshape(1, -1)` copy once. But a convolution accepts the permuted view directly and gives the
same result. In the seed's `collate_fn`, the `.contiguous()` per image is an extra copy:
`torch.stack` copies into a new contiguous batch anyway.

# %%
# [D10] [B16] HWC -> CHW
hwc = np.random.default_rng(0).random((224, 224, 3), dtype=np.float32)
chw = torch.from_numpy(hwc).permute(2, 0, 1)
assert chw.shape == (3, 224, 224) and chw.stride() == (1, 672, 3) and not chw.is_contiguous()
assert sw.same_storage(chw, torch.from_numpy(hwc))
try:
    chw.view(1, -1)
    raise AssertionError("view of a permuted HWC image should fail")
except RuntimeError as error:
    print("chw.view(1, -1):", str(error).split("(")[0].strip())
flat, flat_bytes = allocated(lambda: chw.contiguous().view(1, -1))
flat2, reshape_bytes = allocated(lambda: chw.reshape(1, -1))
assert torch.equal(flat, flat2) and flat_bytes == reshape_bytes == chw.nbytes

conv = torch.nn.Conv2d(3, 8, kernel_size=3)
with torch.no_grad():
    torch.testing.assert_close(
        conv(chw.unsqueeze(0)), conv(chw.contiguous().unsqueeze(0)), rtol=1e-5, atol=1e-5
    )

images = [
    torch.from_numpy(np.random.default_rng(i).random((32, 32, 3), dtype=np.float32)).permute(
        2, 0, 1
    )
    for i in range(8)
]
stacked, stack_bytes = allocated(lambda: torch.stack(images))
stacked_c, stack_c_bytes = allocated(lambda: torch.stack([img.contiguous() for img in images]))
assert torch.equal(stacked, stacked_c) and stacked.is_contiguous() and stacked_c.is_contiguous()
assert stack_bytes == stacked.nbytes and stack_c_bytes > stack_bytes
print(f"stack: {stack_bytes} B | stack of .contiguous() images: {stack_c_bytes} B")
hwc_small = torch.arange(12.0).reshape(2, 2, 3)
sw.show(hwc=hwc_small, chw=hwc_small.permute(2, 0, 1))

# %% [markdown]
## 7. Layers and non-contiguous inputs

The second seed says `x.view(B, -1)` after a convolution whose weights are non-contiguous
("loaded from ONNX") leaves `x` non-contiguous and slows the next `nn.Linear`, and makes it a
golden rule that every input to `nn.Linear` must be contiguous. Measured: a channels-last weight
does make the convolution's output channels-last — and then `view` *raises*, it does not pass a
non-contiguous tensor on; `flatten` copies. `nn.Linear` takes a non-contiguous input as it is,
gives the same result, and allocates only its output.

# %%
# [B18] [B19] a conv with channels-last weights, and nn.Linear on a non-contiguous input
conv = torch.nn.Conv2d(3, 8, kernel_size=3)
conv_channels_last = torch.nn.Conv2d(3, 8, kernel_size=3)
conv_channels_last.load_state_dict(conv.state_dict())
conv_channels_last = conv_channels_last.to(memory_format=torch.channels_last)
assert not conv_channels_last.weight.is_contiguous()
images = torch.randn(2, 3, 8, 8)
with torch.no_grad():
    out = conv_channels_last(images)
    torch.testing.assert_close(out, conv(images), rtol=1e-5, atol=1e-5)
assert out.is_contiguous(memory_format=torch.channels_last) and not out.is_contiguous()
try:
    out.view(out.size(0), -1)
    raise AssertionError("the line above should raise")
except RuntimeError as error:
    print("out.view(B, -1):", str(error).split("(")[0].strip())
flat, flatten_bytes = allocated(lambda: torch.flatten(out, 1))
assert flat.is_contiguous() and flatten_bytes == out.nbytes  # flatten copied

linear = torch.nn.Linear(6, 4)
columns = torch.randn(6, 5).t()  # (5, 6), non-contiguous
with torch.no_grad():
    result, linear_bytes = allocated(lambda: linear(columns))
    torch.testing.assert_close(result, linear(columns.contiguous()), rtol=1e-6, atol=1e-6)
assert linear_bytes == result.nbytes  # the output only: the input was not copied
print("nn.Linear on a non-contiguous input allocates", linear_bytes, "bytes = its output")

# %% [markdown]
## 8. Elementwise ops keep the layout; `flip` copies

The seed lists `flip` among operations that break contiguity and says `Normalize`-style
arithmetic on a non-contiguous input returns a non-contiguous output. `flip` copies (its output
is contiguous for a contiguous input); elementwise arithmetic follows the input's layout when
the input is dense (permuted), and returns a contiguous tensor when the input has gaps.

# %%
# [B15] [D4] layout of elementwise results
mean = torch.tensor([0.5, 0.5, 0.5]).view(3, 1, 1)
dense_permuted = torch.randn(8, 8, 3).permute(2, 0, 1)
gapped = torch.randn(3, 8, 16)[:, :, ::2]
assert (
    (dense_permuted - mean) / 2
).stride() == dense_permuted.stride()  # non-contiguous, like its input
assert ((gapped - mean) / 2).is_contiguous()  # gaps are not kept
assert torch.flip(torch.randn(4, 4), [1]).is_contiguous()
print(
    "normalized permuted:",
    ((dense_permuted - mean) / 2).stride(),
    "| normalized gapped:",
    ((gapped - mean) / 2).stride(),
)

# %% [markdown]
## Seed claims checked in this notebook

| id | seed claim | verdict | shown in cell |
|---|---|---|---|
| C1 | `expand` is a view: same storage pointer | right | `[C1] [C2] [C7]` |
| C2 | memory: `repeat` 16.0 MB vs `expand` 2.0 MB | wrong: `expand` allocates 0 bytes; `repeat` exactly `numel * itemsize` | `[C1] [C2] [C7]` |
| C7 | `(1,1024).repeat(1024,1)` adds 8 MB (`cuda.memory_allocated`) | wrong: it allocates 4 MiB (float32); `expand` 0 | `[C1] [C2] [C7]` |
| C2 | time: `repeat` 0.45 ms vs `expand` 0.12 ms | partly: `repeat` is slower, but `expand` is a constant-time view construction (about a microsecond here, timing cell) | `[C2] [C4]` timing |
| C4 | `batch_augment` 28.7 µs vs `repeat` 152 µs for 256 × (3,224,224) | wrong: `repeat` writes 154 MB; 152 µs would be ~1 TB/s | `[C2] [C4]` timing |
| C3 | an in-place op on an expanded tensor changes the original | partly: in-place arithmetic raises; writing a row writes the base and every row | `[C3] [C12]` |
| C12 | `original.expand(...).contiguous()` is a safe copy to modify | partly: not when the expand broadcasts nothing; `clone()` always copies | `[C3] [C12]` |
| C9 | expanding a non-singleton dim raises | right | `[C9] [C10] [C11]` |
| C10 | `(1,5).expand(-1, 10)` gives shape (1, 10) | wrong: it raises (`-1` keeps a size, it cannot grow a dim) | `[C9] [C10] [C11]` |
| C11 | `(1,3,224).permute(1,0,2).expand(3,256,224)` has shape (3,256,224) | right | `[C9] [C10] [C11]` |
| C8 | `expand` gives a leaner autograd graph than `repeat` | wrong: one node each, equal gradients | `[C8]` |
| C6 | expand weights before multiplying to save memory | wrong: plain broadcasting gives the same result and allocations | `[C6]` |
| D11 | `y + 1` on a transposed `y` does an implicit copy | wrong: it reads `y` strided, allocates only the output, keeps `y`'s layout | `[D11]` |
| D3 | BLAS needs contiguous matmul operands (else an assertion or an internal copy) | partly: 2-d transposed operands are used as is; batched permuted ones are copied inside `matmul`; cuBLAS GPU-only | `[D3] [D9]` |
| D9 | call `.contiguous()` on a transposed `q` before `matmul` | wrong on the CPU: it never saves a copy (2-d: adds one; 4-d: moves it); GPU-only beyond that | `[D3] [D9]` |
| D10 | HWC→CHW `permute` is non-contiguous; `.view(1,-1)` fails; `.contiguous().view` works | right; `reshape` does the same copy, and `conv2d` takes the view directly | `[D10] [B16]` |
| B16 | `torch.stack` returns a contiguous batch | right; so `.contiguous()` per image before it is a wasted copy | `[D10] [B16]` |
| B18 | `x.view(B, -1)` after a conv with non-contiguous weights leaves `x` non-contiguous | partly: channels-last weights give a channels-last output, and `view` then raises; `flatten` copies | `[B18] [B19]` |
| B19 | every input to `nn.Linear` must be contiguous | wrong: it takes strided input as is, same result, no copy | `[B18] [B19]` |
| B15 | `Normalize` on a non-contiguous input returns a non-contiguous output | partly: for dense (permuted) inputs; gapped inputs give a contiguous output | `[B15] [D4]` |
| D4 | `flip` breaks contiguity | wrong: `flip` copies; the result is contiguous | `[B15] [D4]` |
"""

NOTEBOOKS: dict[str, str] = {
    "01_storage_strides_views": NB01,
    "02_as_strided_tricks": NB02,
    "03_copy_semantics": NB03 + NB03_CLAIMS,
    "04_expand_and_contiguity": NB04,
}

HEADER = re.compile(r"^# %%(?P<markdown> \[markdown\])?(?: tags=(?P<tags>\[.*\]))?\s*$")


def parse_cells(source: str) -> list[nbformat.NotebookNode]:
    """Split percent-format source into notebook cells."""
    cells = []
    kind, tags, lines = None, [], []

    def flush() -> None:
        text = "\n".join(lines).strip("\n")
        if kind is None or not text:
            return
        cell = (nbformat.v4.new_markdown_cell if kind == "markdown" else nbformat.v4.new_code_cell)(
            text
        )
        if tags:
            cell.metadata["tags"] = tags
        cells.append(cell)

    for line in source.splitlines():
        header = HEADER.match(line)
        if header:
            flush()
            kind = "markdown" if header["markdown"] else "code"
            tags = json.loads(header["tags"]) if header["tags"] else []
            lines = []
        else:
            lines.append(line)
    flush()
    return cells


def expand(source: str) -> str:
    """Insert the shared nbval note and setup cell into a notebook's source."""
    return source.replace("{NBVAL_NOTE}", NBVAL_NOTE).replace("{SETUP}", SETUP)


def build(name: str) -> Path:
    notebook = nbformat.v4.new_notebook(cells=parse_cells(expand(NOTEBOOKS[name])))
    return execute_and_save(notebook, HERE / f"{name}.ipynb", CELL_TIMEOUT_S)


def execute_and_save(notebook: nbformat.NotebookNode, path: Path, timeout: int) -> Path:
    """Run every cell with nbclient in ``notebooks/`` and save the notebook with its outputs.

    Shared by this script and ``make_gpu_notebook.py`` (notebook 05).
    """
    notebook.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    notebook.metadata["language_info"] = {"name": "python"}
    NotebookClient(
        notebook,
        timeout=timeout,
        kernel_name="python3",
        resources={"metadata": {"path": str(HERE)}},
    ).execute()
    keep_static_pictures(notebook)
    nbformat.write(notebook, path)
    return path


WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def keep_static_pictures(notebook: nbformat.NotebookNode) -> None:
    """Save each widget output as its static SVG (``text/html``) and text, not as a live view.

    A saved widget view points at a model that only exists while its kernel runs: JupyterLab then
    shows "model not found", and nbconvert/nbviewer draw nothing unless they can fetch the widget
    code from a CDN.  The static picture in the same bundle shows everywhere; running the cell
    again brings the live widget back.  nbval never compares the widget view, so the check of a
    fresh run is unchanged.
    """
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            output.get("data", {}).pop(WIDGET_VIEW, None)
    notebook.metadata.pop("widgets", None)


def main(argv: list[str]) -> None:
    chosen = [
        name for name in NOTEBOOKS if not argv or any(name.startswith(prefix) for prefix in argv)
    ]
    for name in chosen:
        print("built", build(name).relative_to(HERE.parent))


if __name__ == "__main__":
    main(sys.argv[1:])
