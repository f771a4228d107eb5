# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 7. Catch the layout bugs that give silent wrong results
#
# The layout bugs that cost most are not the ones a picture shows. They are writes whose result
# depends on the order the kernel visits memory, which PyTorch runs without a word, and kernels
# that assume a layout nobody promised them. Two tools catch them:
#
# * `sw.sanitize()` — a `TorchDispatchMode` that looks at every op that writes, decides *exactly*
#   (with the package's overlap solver) whether the written tensor overlaps itself or an input,
#   and refuses the write **before it runs**;
# * `sw.fuzz_layouts(fn, *inputs)` — runs `fn` again with each input in other layouts (same
#   values) and reports every difference.

# %%
import ctypes
import warnings

import numpy as np
import torch
from IPython.display import display

import stridewidget as sw

torch.manual_seed(0)


def address(t, index):
    """Brute force: the storage element an index of ``t`` reaches."""
    return t.storage_offset() + sum(i * s for i, s in zip(index, t.stride()))


# %% [markdown]
# ## 1. A write torch lets through: overlapping rows multiplied twice
#
# `as_strided((4, 3), (2, 1))` over ten numbers makes rows that share elements: row 0 is
# elements 0–2, row 1 is elements 2–4. PyTorch's own overlap check only decides dense tensors and
# stride-0 dims; for this one it answers "too hard" and runs `mul_`, so a shared element is
# multiplied once per row that holds it.

# %%
x = torch.arange(10.0)
x.as_strided((4, 3), (2, 1)).mul_(2)
print(x)
doubled_twice = [i for i in range(10) if x[i] == 4 * i and i > 0]
assert doubled_twice == [2, 4, 6]  # each shared element was multiplied by four

# %% [markdown]
# Under `sw.sanitize()` the same line raises `sw.LayoutHazard`, and the data is as it was.

# %%
x = torch.arange(10.0)
try:
    with sw.sanitize():
        x.as_strided((4, 3), (2, 1)).mul_(2)
except sw.LayoutHazard as error:
    hazard = error
print(hazard.kind, "|", hazard.op, "|", hazard.witness)
assert torch.equal(x, torch.arange(10.0))  # refused before the write ran

# %% [markdown]
# The witness is two indices of the written tensor that reach one storage element. Checked here
# by brute force, with the address formula:

# %%
view = torch.arange(10.0).as_strided((4, 3), (2, 1))
first, second, element = hazard.witness
print(first, "->", address(view, first), "|", second, "->", address(view, second))
assert first != second and address(view, first) == address(view, second) == element

# %% [markdown]
# In Jupyter a hazard draws the written tensor's layout with the package's static renderer:

# %%
display(hazard)

# %% [markdown]
# ## 2. An `out=` tensor laid over its own input
#
# `torch.add(a, 1, out=c)` with `c` a strided view partly over `a`: the add reads elements it
# has already overwritten. Torch refuses this only when both tensors are dense; here `c` is not.

# %%
a = torch.arange(10.0)
expected = a[:5] + 1
torch.add(a[:5], 1, out=a.as_strided((5,), (2,), 1))
print("got     ", a.as_strided((5,), (2,), 1))
print("expected", expected)
assert not torch.equal(a.as_strided((5,), (2,), 1), expected)

# %% [markdown]
# `on_hazard="collect"` lets the block run and lists every hazard instead of raising:

# %%
a = torch.arange(10.0)
with sw.sanitize(on_hazard="collect") as report:
    torch.add(a[:5], 1, out=a.as_strided((5,), (2,), 1))
print(report)
first, second, element = report.hazards[0].witness
assert address(a.as_strided((5,), (2,), 1), first) == address(a[:5], second) == element

# %%
display(report)

# %% [markdown]
# Where torch refuses a write itself, its own error goes through unchanged: a stride-0
# (expanded) tensor is one torch can decide.

# %%
try:
    with sw.sanitize():
        torch.zeros(3).expand(2, 3).add_(1)
except RuntimeError as error:
    print(type(error).__name__, "(torch's own):", str(error).split(".")[0])
    assert not isinstance(error, sw.LayoutHazard)

# %% [markdown]
# ## 3. No false alarm on ordinary code
#
# Transposes, slices, a strided in-place op over elements that do *not* overlap, and a whole
# training step (forward, backward, Adam) of a transformer layer: nothing to report.

# %%
layer = torch.nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0)
optimizer = torch.optim.Adam(layer.parameters())
with sw.sanitize() as report:
    y = torch.randn(4, 6)
    y[:, ::2].mul_(3)
    y.t().relu_()
    loss = layer(torch.randn(5, 2, 16).transpose(0, 1)).pow(2).mean()
    loss.backward()
    optimizer.step()
print(report)
assert report.ok

# %% [markdown]
# ## 4. A kernel that reads storage as if it were contiguous
#
# A custom op whose "kernel" takes the data pointer and reads `rows × columns` floats from it,
# as C code handed `data_ptr()` does. It is right for a contiguous input and wrong for any other.


# %%
def row_sums_kernel(t):
    pointer = ctypes.cast(t.data_ptr(), ctypes.POINTER(ctypes.c_float))
    flat = np.ctypeslib.as_array(pointer, shape=(t.numel(),))
    return torch.from_numpy(flat.reshape(t.shape).sum(1))


if not hasattr(torch.ops.nb07, "row_sums"):  # defined once per kernel

    @torch.library.custom_op("nb07::row_sums", mutates_args=())
    def _row_sums(t: torch.Tensor) -> torch.Tensor:
        return row_sums_kernel(t)


row_sums = torch.ops.nb07.row_sums

# %% [markdown]
# `sw.fuzz_layouts` runs it with the input in other layouts and compares with the contiguous
# run. The caller's tensor is never passed in: each run gets a fresh copy.

# %%
m = torch.arange(12.0).reshape(3, 4)
fuzz = sw.fuzz_layouts(row_sums, m)
print(fuzz)
assert not fuzz.ok and {f.kind for f in fuzz.findings} == {"values"}
assert "F-contiguous" in {f.name for f in fuzz.findings}
assert torch.equal(m, torch.arange(12.0).reshape(3, 4))

# %%
display(fuzz.findings[0])

# %% [markdown]
# The same bug seen from the other side: under `sw.sanitize()` a custom op receiving a
# non-contiguous input is a `"custom-op-layout"` hazard. It only warns, even in raise mode — the
# layout a custom op accepts is its own contract to state.

# %%
with warnings.catch_warnings(record=True) as caught, sw.sanitize() as report:
    warnings.simplefilter("always")
    wrong = row_sums(m.t())
print([h.kind for h in report.hazards], "| warnings:", len(caught))
print("kernel:", wrong.tolist(), "| right:", m.t().sum(1).tolist())
assert report.hazards[0].kind == "custom-op-layout" and len(caught) == 1

# %% [markdown]
# The fix is one `.contiguous()` where the op hands the tensor to its kernel; the fuzzer then
# finds nothing:

# %%
fixed = sw.fuzz_layouts(lambda t: row_sums_kernel(t.contiguous()), m)
print(fixed)
assert fixed.ok
