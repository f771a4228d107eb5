# %% [markdown]
# # 01 · Storage, strides and views
#
# A PyTorch tensor is three things: a **storage** (one flat, 1-d block of elements), a **layout**
# (shape, strides in *elements*, and a storage offset) and the **view** you index. Two tensors can
# share one storage with different layouts; that is what `transpose`, slicing, `view` and `expand`
# produce. This notebook checks the model on torch itself, cell by cell, and tests the seed
# articles' claims on the way. Claims are tagged like **[B2]**; the table at the end gives each a
# verdict and names the cell that shows it. Every claim made here is an `assert` in its cell.

# %%
import ast
import importlib.util
import itertools
import warnings
from pathlib import Path

import torch
from lessons import (
    allocated,
    copy_ops,
    seed_myth,
    shares_storage,
    storage_values,
    verdict_table,
)

import stridewidget as sw

torch.manual_seed(0)
torch.set_printoptions(precision=4)

# %% [markdown]
# ## 1. One storage, two layouts
#
# A tensor is a flat **storage** plus a **layout**: shape, strides (counted in elements) and a
# storage offset. `transpose` swaps two strides and moves no data.

# %%
matrix = torch.arange(6).reshape(2, 3)
assert shares_storage(matrix, matrix.t()) and storage_values(matrix.t()).numel() == matrix.numel()
sw.show(matrix, transposed=matrix.t())

# %% [markdown]
# In the picture the matrix and its transpose read the same storage elements, in a different
# order. Below, the same on a 3-d tensor: `a.transpose(0, 1)` swaps two entries of the shape and
# of the strides, and moves nothing.

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

# %%
seed_myth("B3", "D2")

# %% [markdown]
# ## 2. The address formula
#
# Element `[i, j]` is `storage[offset + i*stride[0] + j*stride[1]]`; a slice only changes the
# offset and the strides.

# %%
matrix = torch.arange(12).reshape(3, 4)
sw.show(matrix, rows_from_1_even_columns=matrix[1:, ::2])

# %% [markdown]
# Element `[i, j, k]` of any strided tensor is `storage[offset + i*stride[0] + j*stride[1] + k*stride[2]]`.
# Checked below for *every* element of an offset, gapped view, against the raw storage.
# The largest address touched is `offset + sum((size - 1) * stride)`; a view is in bounds when
# that is below the storage size.

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
print(f"shape {tuple(v.shape)}, stride {v.stride()}, offset {v.storage_offset()}")
print(f"largest address {largest}, storage size {flat.numel()}")

# %%
seed_myth("B1", "B21")

# %% [markdown]
# ## 3. `data_ptr()` already includes the offset
#
# `data_ptr()` is the address of the view's first element: the storage's address plus
# `storage_offset() * element_size()` bytes.

# %%
numbers = torch.arange(6.0)
sw.show(numbers, from_2=numbers[2:])

# %% [markdown]
# The seed says `tensor.data_ptr()` is the storage's start and that the data starts at
# `data_ptr() + storage_offset()`. Measured: `data_ptr()` is the address of the view's *first
# element*, i.e. the storage's pointer plus `storage_offset() * element_size()` bytes. Adding the
# offset again adds a count of *elements* as that many *bytes*: it points into the middle of
# `t[0]`, at no element.

# %%
# [B2] data_ptr() vs the storage's data_ptr()
t = torch.arange(10, dtype=torch.float32)[3:]
storage_pointer = t.untyped_storage().data_ptr()
print("storage_offset():", t.storage_offset(), "elements")
print("t.data_ptr() - storage.data_ptr():", t.data_ptr() - storage_pointer, "bytes")
assert t.data_ptr() == storage_pointer + t.storage_offset() * t.element_size()
seed_data_start = t.data_ptr() + t.storage_offset()
assert 0 < seed_data_start - t.data_ptr() < t.element_size()  # 3 bytes into t[0]: no element
# the seed reads the storage pointer through the old TypedStorage API (deprecated: torch warns
# once per process, so this cell does not rely on seeing the warning); it gives the same pointer
with warnings.catch_warnings():
    warnings.simplefilter("ignore", UserWarning)
    typed_pointer = t.storage().data_ptr()
assert typed_pointer == storage_pointer

# %%
seed_myth("B2")

# %% [markdown]
# ## 4. What is contiguous?
#
# A tensor is contiguous when its elements, read in row-major order, sit at consecutive storage
# addresses: a step-1 slice of whole rows is, a slice of columns is not, and neither is a slice
# of rows taken with a step (`x[::2]` skips every other row).

# %%
matrix = torch.arange(12).reshape(3, 4)
sw.show(matrix, rows=matrix[1:], columns=matrix[:, 1:3])

# %% [markdown]
# Step-1 slices along dim 0 keep the elements consecutive (a step of 2 does not); slicing a later dim
# (`narrow(1, ...)`) leaves gaps unless the dims before it have size 1 or the slice is the whole dim;
# transposes that only move size-1 dims change nothing that matters (a size-1 dim's stride is never
# used); channels-last is contiguous only in its own memory format. `sw.inspect` agrees with torch
# on each case.

# %%
# [B5] [D4] [B14] contiguity of common views
x = torch.arange(24.0).reshape(4, 6)
image = torch.randn(2, 3, 4, 5)
cases = {
    "x[1:3]": (x[1:3], True),
    "x[::2]": (x[::2], False),
    "x.narrow(0, 1, 2)": (x.narrow(0, 1, 2), True),
    "x.narrow(0, 0, 2)": (x.narrow(0, 0, 2), True),
    "x.narrow(1, 1, 3)": (x.narrow(1, 1, 3), False),
    "x.narrow(1, 0, 6)": (x.narrow(1, 0, 6), True),
    "x[:, ::2]": (x[:, ::2], False),
    "x.t()": (x.t(), False),
    "x[:1].t()": (x[:1].t(), True),
    "zeros(4,1,6).transpose(0,1)": (torch.zeros(4, 1, 6).transpose(0, 1), True),
    "zeros(1,3,1,5).permute(2,0,1,3)": (torch.zeros(1, 3, 1, 5).permute(2, 0, 1, 3), True),
    "image.permute(2, 0, 1, 3)": (image.permute(2, 0, 1, 3), False),
    "image channels_last": (image.contiguous(memory_format=torch.channels_last), False),
    "x[:1].expand(4, 6)": (x[:1].expand(4, 6), False),
}
print(f"{'view':34} {'shape':14} {'stride':16} {'offset':>6}  contiguous")
for name, (view, expected) in cases.items():
    assert view.is_contiguous() == expected == sw.inspect(view).is_contiguous, name
    print(
        f"{name:34} {tuple(view.shape)!s:14} {view.stride()!s:16} {view.storage_offset():>6}  {expected}"
    )

# %% [markdown]
# Two details of the table: `narrow` moves the offset only when it starts past 0, and
# channels-last is contiguous in its *own* memory format. `flip` is not a view at all (a torch
# view cannot step backwards): it copies into new memory. A contiguous input gives a contiguous
# result; a dense but non-contiguous one keeps its strides (`x.t().flip(0)`: stride (1, 6), not
# contiguous); a gapped one is compacted, keeping only the order of its dims in memory.

# %%
# [B5] [D4] [B14] offsets, channels-last, and flip's copy: its layout for each kind of input
assert x.narrow(0, 1, 2).storage_offset() == 6 and x.narrow(0, 0, 2).storage_offset() == 0
channels_last = cases["image channels_last"][0]
assert channels_last.is_contiguous(memory_format=torch.channels_last)
assert sw.inspect(channels_last).is_channels_last
for name, source, expected_stride in [
    ("x", x, x.stride()),  # contiguous in, contiguous out
    ("x.t()", x.t(), (1, 6)),  # dense, not contiguous: its strides are kept
    ("x[:, ::2]", x[:, ::2], (3, 1)),  # gapped: compacted, contiguous
    ("x[:, ::2].t()", x[:, ::2].t(), (1, 3)),  # gapped: compacted, its dims' order kept
]:
    for flipped in (source.flip(0), torch.fliplr(source)):
        assert not shares_storage(flipped, x) and flipped.stride() == expected_stride
    assert source.flip(0).is_contiguous() or not source.is_contiguous()  # never breaks it
    print(f"{name + '.flip(0)':20} input stride {source.stride()!s:8} result {expected_stride}")
try:  # a view with a negative step, which flip would need, does not exist
    x[::-1]
    raise AssertionError("the line above should raise")
except ValueError as error:
    print("x[::-1]:", error)

# %%
# [B5] every narrow of a contiguous tensor: contiguous exactly along dim 0, or when the narrowed
# dim stays whole, or when every dim before it has size 1
for shape in [(4, 6), (1, 6), (3, 1, 4), (2, 3, 4)]:
    whole = torch.zeros(shape)
    for dim, size in enumerate(shape):
        for start in range(size):
            for length in range(1, size - start + 1):
                rule = dim == 0 or length == size or all(s == 1 for s in shape[:dim])
                assert whole.narrow(dim, start, length).is_contiguous() == rule, (shape, dim)
assert x[:1].narrow(1, 1, 3).is_contiguous() and not x.narrow(1, 1, 3).is_contiguous()
print("every narrow of (4, 6), (1, 6), (3, 1, 4) and (2, 3, 4) follows the rule")

# %%
# [B14] fliplr flips dim 1 (H of a (C, H, W) image); torchvision's hflip is img.flip(-1)
chw = torch.arange(24.0).reshape(2, 3, 4)
assert torch.equal(torch.fliplr(chw), chw.flip(1)) and not torch.equal(chw.flip(1), chw.flip(-1))
# read torchvision's source without importing it (its C++ ops are not built on this machine)
spec = importlib.util.find_spec("torchvision")
tv_source = Path(spec.submodule_search_locations[0], "transforms", "_functional_tensor.py")
hflip = next(
    node
    for node in ast.parse(tv_source.read_text()).body
    if isinstance(node, ast.FunctionDef) and node.name == "hflip"
)
assert "img.flip(-1)" in ast.unparse(hflip) and "fliplr" not in ast.unparse(hflip)
print("torchvision hflip returns:", ast.unparse(hflip.body[-1]))

# %%
# [B5d] the seed's table row `x.narrow(0,0,10)`: same stride, offset 0, contiguous, no copy
rows = torch.randn(20, 6)
first_ten, new_bytes = allocated(lambda: rows.narrow(0, 0, 10))
assert first_ten.stride() == rows.stride() and first_ten.storage_offset() == 0
assert first_ten.is_contiguous() and shares_storage(first_ten, rows) and new_bytes == 0
assert copy_ops(lambda: rows.narrow(0, 0, 10)) == []
print(f"narrow(0, 0, 10) of {tuple(rows.shape)}: stride {first_ten.stride()}, offset 0, a view")

# %%
seed_myth("B5", "B5b", "B5d", "B5c", "D4", "B14")

# %% [markdown]
# ## 5. `view` vs `reshape` vs `flatten`
#
# `view` never copies: it returns a view or raises. `reshape` and `flatten` return a view when one
# exists and silently copy otherwise.

# %%
transposed = torch.arange(6).reshape(2, 3).t()
sw.show(transposed, reshaped=transposed.reshape(-1))

# %% [markdown]
# In the picture the transposed tensor cannot be read as one evenly spaced run, so `reshape(-1)`
# made new storage. `contiguous()` is the third of the family: it returns the tensor itself when
# it is already contiguous, and a copy otherwise. Below, each is run on five inputs; "copy" means new storage, measured with
# `stridewidget.tricks.PeakMemory` (bytes of tensor storage allocated during the call).


# %%
def outcome(t, fn):
    # ("view" or "copy N B" or "raises", result) of fn(t); a copy is new storage, counted
    try:
        result, new_bytes = allocated(lambda: fn(t))
    except RuntimeError:
        return "raises", None
    kind = "view" if shares_storage(result, t) else f"copy {new_bytes} B"
    assert (kind == "view") == (new_bytes == 0)
    return kind, result


# %%
# [B22] [D12] [B17] view / reshape / flatten / contiguous: which ones copy
inputs = {
    "contiguous": x,
    "dim-0 slice": x[1:3],
    "transposed": x.t(),
    "column slice": x[:, 1:4],
    "expanded": x[:1].expand(4, 6),
}
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

# %%
# [B17] flatten is not "automatically contiguous": flattening one dim returns the input itself
y = torch.randn(4, 3).t()
assert torch.flatten(y, 1) is y and not torch.flatten(y, 1).is_contiguous()

# %%
seed_myth("B22", "D12", "B17")

# %% [markdown]
# When `view` refuses, the reason is that the merged elements are not evenly spaced in storage.
# `sw.tricks.merge_dims` is a view-only flatten that says so; the fixes are an explicit copy
# (`contiguous()` then `view`, or `reshape`), and they give the transposed order.

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

# %%
seed_myth("D8")

# %% [markdown]
# ## 6. `view` on a non-contiguous tensor
#
# `view` needs each new dim to be a run of old dims that are evenly spaced in storage: splitting a
# dim always works, merging works when the strides chain.

# %%
transposed = torch.arange(8).reshape(2, 4).t()
sw.show(transposed, split=transposed.view(2, 2, 2))

# %% [markdown]
# `view` does not need a contiguous input: the picture splits the stride-1 dim of a transposed
# tensor. Merging dims works when their strides chain (`stride[i] == size[i+1] * stride[i+1]`). Each case below is checked against `reshape`, and
# shares the input's storage.

# %%
# [views] view on non-contiguous inputs: the cases that work, and why one does not
x = torch.arange(24.0).reshape(4, 6)
works = {
    "x.t().view(3, 2, 4)": (x.t(), (3, 2, 4)),  # splits dim 0 (stride 1)
    "x.t().view(6, 2, 2)": (x.t(), (6, 2, 2)),  # splits dim 1 (stride 6)
    "x[:, ::2].view(2, 2, 3)": (x[:, ::2], (2, 2, 3)),  # splits the gapped rows
    "x[:, ::2].view(4, 3, 1)": (x[:, ::2], (4, 3, 1)),  # adds a size-1 dim
    # merges dims 1 and 2 of the permuted view: their strides chain (12 == 3 * 4)
    "x.view(2, 3, 4).permute(2, 0, 1).view(4, 6)": (x.view(2, 3, 4).permute(2, 0, 1), (4, 6)),
}
for name, (t, shape) in works.items():
    viewed = t.view(shape)
    assert not t.is_contiguous() and shares_storage(viewed, x)
    assert torch.equal(viewed, t.reshape(shape))
    print(f"{name:46} stride {t.stride()!s:12} -> {viewed.stride()}")
try:  # merging dims whose strides do not chain: the elements are not evenly spaced
    x.t().view(24)
    raise AssertionError("the line above should raise")
except RuntimeError as error:
    print("x.t().view(24):", str(error).split(".")[0])

# %% [markdown]
# ## Seed claims checked in this notebook
#
# Rendered from `claims.toml`, the one place a verdict is written.

# %%
verdict_table("01")
