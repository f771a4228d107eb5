# %% [markdown]
# # 03 · `expand` vs `repeat`, and the contiguity pitfalls
#
# `expand` makes a zero-stride **view** (no data moved); `repeat` **allocates** and copies. This
# notebook measures both (memory exactly here, time from the stored full-size benchmark run), shows what in-place writes do
# through an expanded view, and walks through the contiguity pitfalls of the third and fourth seed
# articles: HWC→CHW, `.view` errors and their fixes, and whether `y + 1` on a transposed `y`
# hides a copy.

# %%
from pathlib import Path

import numpy as np
import torch
from lessons import (
    STORED_RUN,
    TIMING_MARGIN,
    allocated,
    copy_ops,
    seed_myth,
    verdict_table,
)

import stridewidget as sw
from stridewidget import bench
from stridewidget.bench import find_variant

torch.manual_seed(0)
torch.set_printoptions(precision=4)

# %% [markdown]
# ## 1. `expand` is a view, `repeat` is a copy
#
# `expand` returns a view with stride 0 along each stretched dim and allocates nothing; `repeat`
# allocates the whole result and copies into it.

# %%
column = torch.arange(3.0).reshape(3, 1)
sw.show(column, expanded=column.expand(3, 4), repeated=column.repeat(1, 4))

# %% [markdown]
# The seed's check `expanded.storage().data_ptr() == base.storage().data_ptr()` is right. Its memory
# tables are not: for `base = randn(1, 1024)`, `repeat(1024, 1)` allocates exactly
# `1024 * 1024 * 4` bytes (printed below; the seed says "+8 MB"), and `expand` allocates nothing
# (the seed's other table: "expand 2.0 MB, repeat 16.0 MB").

# %%
# [C1] [C2] [C7] memory of expand vs repeat, measured as new storage bytes
base = torch.randn(1, 1024)
expanded, expand_bytes = allocated(lambda: base.expand(1024, 1024))
repeated, repeat_bytes = allocated(lambda: base.repeat(1024, 1))
assert sw.same_storage(expanded, base) and expanded.stride() == (0, 1)
assert not sw.same_storage(repeated, base) and torch.equal(expanded, repeated)
assert expand_bytes == 0 and repeat_bytes == 1024 * 1024 * 4 == 4 * 2**20
assert copy_ops(lambda: base.expand(1024, 1024)) == []  # no copy op either
print(f"expand: {expand_bytes} B new | repeat: {repeat_bytes / 2**20:.1f} MiB new")
print(sw.inspect(expanded))
print(sw.inspect(repeated))

# %%
seed_myth("C1", "C2", "C7")

# %%
# [C2] [C4] time, from the stored full-size run: expand vs repeat (verdicts need a 2x margin)
stored = bench.load_results(STORED_RUN)  # full sizes, one thread, side by side in one run
case = "expand_repeat"
expand_s = find_variant(stored, case, "seed002 (1,512).expand")["median_s"]
repeat_s = find_variant(stored, case, "seed002 (1,512).repeat")["median_s"]
batch_repeat_s = find_variant(stored, case, "seed002 batch_augment repeat")["median_s"]
print(f"(1,512) -> (1024,512): expand {expand_s * 1e6:.2f} us, repeat {repeat_s * 1e6:.1f} us")
print(f"batch_augment repeat(256,1,1,1): {batch_repeat_s * 1e3:.1f} ms (the seed: 152 us)")
assert repeat_s > TIMING_MARGIN * expand_s  # repeat is slower: right
assert TIMING_MARGIN * expand_s < 0.12e-3  # but expand is a ~1 us view, not 0.12 ms
repeat_bytes = 256 * 3 * 224 * 224 * 4  # what repeat(256, 1, 1, 1) writes
# the seed timed a CPU tensor: 152 us for those bytes is far above this CPU's copy ceiling
needed_gbps = repeat_bytes / 152e-6 / 1e9
print(f"152 us for {repeat_bytes / 1e6:.0f} MB needs {needed_gbps:.0f} GB/s,", end=" ")
print(
    f"{needed_gbps / stored['peak_gbps']:.0f}x the ceiling {stored['peak_gbps']:.0f} GB/s", end=" "
)
print("of this machine's stored run (the seed timed its own, unnamed machine)")
assert needed_gbps > TIMING_MARGIN * stored["peak_gbps"]
assert batch_repeat_s > TIMING_MARGIN * 152e-6
# the seed's expand/repeat table was timed on an RTX 3090: only a stored CUDA run can judge it
assert not sorted(Path("results").glob("cuda*.json")), "judge C2b on the stored CUDA run"

# %%
seed_myth("C2b", "C4")
# %% [markdown]
# ## 2. Writing through an expanded view
#
# Every row of an expanded view is the same memory: writing one row writes the base, and so every
# row.

# %%
zeros_row = torch.zeros(1, 3)
stretched = zeros_row.expand(2, 3)
stretched[1] = torch.tensor([1.0, 2.0, 3.0])
sw.show(zeros_row, expanded=stretched)

# %% [markdown]
# The seed: an in-place op on an expanded tensor "affects the original". torch refuses in-place
# *arithmetic* on it outright. Writing into one row is allowed — and that row is the base's
# memory, so *every* row and the base change. The seed's fix, `.contiguous()` before writing, is
# right only when the expand actually broadcast something: expanding to the same shape returns a
# contiguous view, `.contiguous()` then returns that same view, and the write lands in the
# original. `clone()` always copies.

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

# %%
seed_myth("C3", "C12")

# %% [markdown]
# ## 3. `expand` errors, `-1`, and autograd
#
# `expand` only stretches size-1 dims (`-1` keeps a size), and its gradient sums over the
# stretched dims.

# %%
column = torch.arange(2.0).reshape(2, 1)
sw.show(column, expanded=column.expand(-1, 3))

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

# %%
seed_myth("C9", "C10", "C11")

# %% [markdown]
# The seed says `expand` gives "a leaner graph" than `repeat`, which "records every copy". Both
# record one backward node, and the gradients are equal: each sums the incoming gradient over the
# broadcast dimension.

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

# %%
seed_myth("C8")

# %% [markdown]
# ## 4. Broadcasting needs neither
#
# Arithmetic broadcasts size-1 dims by itself, as if they were expanded: `x * w` needs neither
# `expand` nor `repeat`.

# %%
row = torch.arange(3.0).reshape(1, 3)
sw.show(row, broadcast_to_2x3=torch.broadcast_to(row, (2, 3)))

# %% [markdown]
# Arithmetic broadcasts by itself: the seed's `WeightedPooling` expands its weights before
# multiplying, "without allocating new memory" as its comment says (true: the expand is a view),
# but `x * weights` gives the same result with the same allocations, so the expand saves nothing.

# %%
# [C6] explicit expand vs plain broadcasting
features = torch.randn(32, 10, 64)
weights = torch.randn(1, 64)
with_expand, expand_peak = allocated(
    lambda: (features * weights.expand(features.size(0), -1).unsqueeze(1)).sum(dim=1)
)
plain, plain_peak = allocated(lambda: (features * weights).sum(dim=1))
assert torch.equal(with_expand, plain) and expand_peak == plain_peak
_, expand_only = allocated(lambda: weights.expand(features.size(0), -1).unsqueeze(1))
assert expand_only == 0  # the seed's comment: the expand itself allocates nothing
print(f"the expand itself allocates {expand_only} B")
print("same result, same bytes allocated:", expand_peak == plain_peak)

# %%
seed_myth("C6")

# %% [markdown]
# ## 5. Does `y + 1` on a transposed `y` hide a copy?
#
# An elementwise op reads a dense, non-contiguous input where it is and gives its output the
# input's layout: no hidden copy.

# %%
transposed = torch.arange(6.0).reshape(2, 3).t()
sw.show(transposed, plus_one=transposed + 1)

# %% [markdown]
# The fourth seed times `y.contiguous() + 1` against `y + 1` for a transposed `y` and calls the
# second an "implicit copy". Measured: `y + 1` allocates only its output, and the output takes
# `y`'s (transposed) layout; `y.contiguous() + 1` copies first, so it allocates twice as much.
# Elementwise kernels read strided inputs directly.

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

# %%
# [D11] time, from the stored full-size run: y + 1 vs y.contiguous() + 1
stored = bench.load_results(STORED_RUN)  # full sizes, one thread, side by side in one run
implicit_s = find_variant(stored, "contiguity", "y + 1")["median_s"]
explicit_s = find_variant(stored, "contiguity", "y.contiguous() + 1")["median_s"]
print(f"y + 1: {implicit_s * 1e3:.1f} ms | y.contiguous() + 1: {explicit_s * 1e3:.1f} ms", end="")
print(f" ({explicit_s / implicit_s:.1f}x)")
assert explicit_s > TIMING_MARGIN * implicit_s  # the explicit copy costs, the implicit one is none

# %%
seed_myth("D11")

# %% [markdown]
# The seed also says matrix multiplication needs contiguous operands ("cuBLAS asserts
# contiguity, or copies internally") and recommends `q.transpose(-2, -1).contiguous()`. That is a
# claim about cuBLAS on a GPU, and no CUDA run is stored, so it is not measured; the CPU cells below
# are context, and they judge the advice only on the CPU. On this CPU, a 2-d `a.t() @ b` allocates only its output: the BLAS call takes the transposed operand as
# is. Batched 4-d operands permuted out of a fused projection are different: `matmul` folds the
# batch dims for `bmm` and copies them itself — and an explicit `.contiguous()` first does not save
# that copy, it only moves it.

# %%
# [D3] [D9] matmul with a transposed operand (CPU)
a = torch.randn(512, 256)
b = torch.randn(512, 64)
product, matmul_bytes = allocated(lambda: a.t() @ b)
assert torch.allclose(product, a.t().contiguous() @ b, rtol=1e-5, atol=1e-5)
assert matmul_bytes == product.nbytes  # no copy of a.t() (which would be 512 KiB)
assert copy_ops(lambda: a.t() @ b) == []  # and no copy op inside the kernel either
print("2-d: bytes allocated by a.t() @ b:", matmul_bytes, "= the output only; no copy op")
assert not sorted(Path("results").glob("cuda*.json")), "judge D3 and D3b on the CUDA run"

# %%
# [D3] [D9] batched 4-d operands permuted out of a fused qkv projection: matmul copies them itself
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

# %%
# [D3] [D9] but when q is used twice, one explicit .contiguous() saves a hidden copy
v = qkv[2]


def attend_twice(q):  # q meets two operands, e.g. scores against k and against a cache
    return q @ k.transpose(-2, -1), q @ v.transpose(-2, -1)


implicit_copies = copy_ops(lambda: attend_twice(q)).count("aten::copy_")
explicit_copies = copy_ops(lambda: attend_twice(q.contiguous())).count("aten::copy_")
print(f"copy_ ops: q used twice as is {implicit_copies}, after q.contiguous() {explicit_copies}")
assert explicit_copies < implicit_copies

# %%
seed_myth("D3", "D3b", "D9")

# %% [markdown]
# ## 6. HWC → CHW
#
# `permute(2, 0, 1)` turns an HWC image into a CHW view without moving data; the view is not
# contiguous.

# %%
hwc_small = torch.arange(12).reshape(2, 2, 3)
sw.show(hwc=hwc_small, chw=hwc_small.permute(2, 0, 1))

# %% [markdown]
# An image from OpenCV/PIL/NumPy is HWC; convolutions want CHW. `permute(2, 0, 1)` is a view with
# non-contiguous strides, so `.view(1, -1)` raises; `.contiguous().view(1, -1)` or
# `.reshape(1, -1)` copy once. But a convolution accepts the permuted view directly and gives the
# same result. In the seed's `collate_fn`, the `.contiguous()` per image is an extra copy:
# `torch.stack` of these permuted images copies into a new contiguous batch anyway (of
# channels-last batches it does not: the last cell below).

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

# %%
# [D10] conv2d takes the permuted image as it is
conv = torch.nn.Conv2d(3, 8, kernel_size=3)
with torch.no_grad():
    torch.testing.assert_close(
        conv(chw.unsqueeze(0)), conv(chw.contiguous().unsqueeze(0)), rtol=1e-5, atol=1e-5
    )


# %%
# [B16] torch.stack copies: contiguous from permuted HWC images, not from channels-last batches
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
channels_last = [torch.randn(2, 3, 8, 8).to(memory_format=torch.channels_last) for _ in range(4)]
stacked_cl = torch.stack(channels_last)
assert stacked_cl.stride() == (384, 192, 1, 24, 3) and not stacked_cl.is_contiguous()
print(
    "stack of 4 channels-last (2, 3, 8, 8) batches: stride", stacked_cl.stride(), "not contiguous"
)

# %%
seed_myth("D10", "B16")

# %% [markdown]
# ## 7. Layers and non-contiguous inputs
#
# Layers take non-contiguous inputs as they are and give the same result; a few copy them inside
# the kernel, which only the op names show.

# %%
features = torch.arange(8.0).reshape(2, 4)
sw.show(features, every_other_column=features[:, ::2])

# %% [markdown]
# The second seed says `x.view(B, -1)` after a convolution whose weights are non-contiguous
# ("loaded from ONNX") leaves `x` non-contiguous and slows the next `nn.Linear`, and makes it a
# golden rule that every input to `nn.Linear` must be contiguous. Measured: a channels-last weight
# does make the convolution's output channels-last — and then `view` *raises*, it does not pass a
# non-contiguous tensor on; `flatten` copies. `nn.Linear` takes a transposed input as it is,
# gives the same result, and allocates only its output; a gapped input is cloned inside `addmm`,
# which the count of new storage misses and the op names show — and calling `.contiguous()`
# first runs the very same copy ops, only outside the kernel (and counted): it does not help.

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

# %%
# [B19] nn.Linear on a transposed input: no copy; on a gapped input: a copy inside addmm
linear = torch.nn.Linear(6, 4)
columns = torch.randn(6, 5).t()  # (5, 6), non-contiguous
with torch.no_grad():
    result, linear_bytes = allocated(lambda: linear(columns))
    torch.testing.assert_close(result, linear(columns.contiguous()), rtol=1e-6, atol=1e-6)
assert linear_bytes == result.nbytes  # the output only: the input was not copied
# addmm copies the bias into its output (a copy_), but it never clones the input
assert "aten::clone" not in copy_ops(lambda: linear(columns))
gapped = torch.randn(5, 12)[:, ::2]  # (5, 6) with stride (12, 2): not a BLAS layout
gapped_bytes = allocated(lambda: linear(gapped))[1]
gapped_ops = copy_ops(lambda: linear(gapped))
assert gapped_bytes == result.nbytes and "aten::clone" in gapped_ops  # copy hidden in the kernel
print("transposed input: allocates", linear_bytes, "B = its output, no clone")
print("gapped input: allocates", gapped_bytes, "B as counted by storage, yet runs", gapped_ops)
made_contiguous_ops = copy_ops(lambda: linear(gapped.contiguous()))
assert sorted(made_contiguous_ops) == sorted(gapped_ops)  # .contiguous() first: the same copies
print("gapped.contiguous() first runs", made_contiguous_ops)

# %%
seed_myth("B18", "B19")

# %% [markdown]
# ## 8. Elementwise ops keep the layout; `flip` copies
#
# Elementwise results follow a dense input's layout and are contiguous for a gapped one; `flip`
# copies into new memory by the same rule (dense: strides kept; gapped: compacted).

# %%
transposed = torch.arange(6.0).reshape(2, 3).t()
sw.show(transposed, times_2=transposed * 2, flipped=transposed.flip(0))

# %% [markdown]
# The seed lists `flip` among operations that break contiguity and says `Normalize`-style
# arithmetic on a non-contiguous input returns a non-contiguous output. `flip` copies (its output
# is contiguous for a contiguous input, notebook 01 `[B5]`); elementwise arithmetic follows the input's layout when
# the input is dense (permuted), and returns a contiguous tensor when the input has gaps.

# %%
# [B15] [D4] layout of elementwise results
mean = torch.tensor([0.5, 0.5, 0.5]).view(3, 1, 1)
dense_permuted = torch.randn(8, 8, 3).permute(2, 0, 1)
gapped = torch.randn(3, 8, 16)[:, :, ::2]
assert (
    (dense_permuted - mean) / 2
).stride() == dense_permuted.stride()  # non-contiguous, like its input
assert ((gapped - mean) / 2).is_contiguous()  # gaps are not kept
assert torch.flip(torch.randn(4, 4), [1]).is_contiguous()  # contiguous in, contiguous out
assert torch.flip(torch.randn(4, 4).t(), [1]).stride() == (1, 4)  # dense: strides kept
assert torch.flip(torch.randn(4, 8)[:, ::2], [1]).is_contiguous()  # gapped: compacted
print(
    "normalized permuted:",
    ((dense_permuted - mean) / 2).stride(),
    "| normalized gapped:",
    ((gapped - mean) / 2).stride(),
)

# %%
seed_myth("B15", "D4b")

# %% [markdown]
# ## Seed claims checked in this notebook
#
# Rendered from `claims.toml`, the one place a verdict is written.

# %%
verdict_table("03")
