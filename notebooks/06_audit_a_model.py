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
# # 6. Audit a whole model: every copy, where it comes from, and a measured fix
#
# `sw.track_copies()` answers "which call in this block copied?".  `sw.audit(model, *inputs)`
# asks it of a whole training step — forward and backward — and answers per **source line** and
# per **module**, with each copy's source and result layouts.  Backward copies are traced to the
# forward line whose gradient made them.
#
# Then it tries the fixes that apply (channels-last for a convolution stack, one `.contiguous()`
# before a reused non-contiguous input, a weight stored in the transposed layout it is used in,
# an input stored so that its `permute` + `reshape` stays a view), each on a *copy* of the model
# and inputs: it re-audits,
# times both with `torch.utils.benchmark`, and checks that the outputs and gradients match.
# Nothing here is guessed.
#
# A copy is a data-movement op (`clone`, `cat`, `_to_copy`, ...) that a call ran — seen by the
# copy tracker — or one that a kernel ran *inside* another op (`addmm` cloning a gapped
# operand, a convolution's backward making its gradient contiguous, an `EmbeddingBag`'s backward
# gathering with `index_select`), seen by PyTorch's profiler and named
# "`aten.clone in aten.convolution_backward`".  Reorders a library
# does without any ATen op (oneDNN's, inside a CPU convolution) are invisible to both.

# %%
import copy
import sys
import types

import torch
from IPython.display import SVG, display

import stridewidget as sw

# PyPI's Linux torchvision wheel is built against CUDA torch; its models are pure Python, so with
# the CPU torch used here we skip the registrations of its compiled ops, which fail to load.
for name in ("torchvision._meta_registrations", "torchvision._autograd_registrations"):
    sys.modules.setdefault(name, types.ModuleType(name))
import torchvision

torch.manual_seed(0)
torch.set_num_threads(1)

# %% [markdown]
# ## A transformer: `nn.TransformerEncoderLayer` fed a transposed batch
#
# The layer is `batch_first=False`, and the data arrive as `(batch, seq, features)`, so the
# caller hands it `x.transpose(0, 1)`: a `(seq, batch, features)` view whose sequence dimension
# steps one row of features and whose batch dimension steps a whole sequence (the strides are
# printed below).

# %%
# tiny sizes keep the saved pictures small; which copies the layer makes depends on the shape
# (batch 2, sequence 5, 2 heads here): other shapes are measured below
layer = torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0)
batch = torch.randn(2, 5, 8)
x = batch.transpose(0, 1)
assert x.stride() == (batch.stride(1), batch.stride(0), 1)  # seq: one row; batch: a sequence
print(sw.inspect(x))
report = sw.audit(layer, x)
display(report)

# %% [markdown]
# The table sorts on a header click, and a row's ▸ draws the copy's source and result.  The same
# in a terminal is `print(report)`, or `python -m stridewidget.audit "torch.nn.TransformerEncoderLayer(8, 2, 16)" --input "torch.randn(2, 5, 8).transpose(0, 1)"`.
# The ATen-ops column names each kind of op in a row once, with how many times it ran in the
# row's copies (`aten.clone×7`; a copy can run several, as `self_attn`'s one forward copy runs
# `aten.clone×2`), kinds separated by ` · ` and wrapped between them; the count column counts copies.
# Most copies sit inside `self_attn`, on the line of its one call `F.multi_head_attention_forward`
# (`activation.py`), and most of those are in its backward.  Only one of the backward copies is
# the attention kernel's (`aten.clone in aten._scaled_dot_product_flash_attention_for_cpu_backward`);
# the others are autograd's backward of the function's own views: a `view`'s backward reshapes
# the gradient to the view's input shape, and that copies when the gradient is not laid out for
# it — the head split (`q.view(...)`, `k.view(...)`, `v.view(...)`) and the `unflatten` of the
# packed q/k/v projection — and `select_backward` writes the gradient of each of `proj[0]`,
# `proj[1]`, `proj[2]` into a zero buffer the size of the whole projection.  The cells after the
# report count them by autograd node, and tell a copy's origin by the shape of what it copies.
# A layer norm copies the transposed input inside its kernel (which of the
# layer's norms is printed below the report).

# %%
print(report)
assert report.total_bytes == sum(c.bytes for c in report.copies)
rows = {(r.key, r.phase): r for r in report.by_module()}  # ×N counts op runs, count copies:
assert rows["self_attn", "forward"].count == 1 and rows["self_attn", "forward"].op_counts == (2,)
backward_row = rows["self_attn", "backward"]
assert dict(zip(backward_row.ops, backward_row.op_counts))["aten.clone"] == 7
modules = dict(layer.named_modules())
assert all(c.module in modules for c in report.copies)
norms = sorted(
    {c.module for c in report.copies if isinstance(modules[c.module], torch.nn.LayerNorm)}
)
assert norms  # at least one layer norm copies the transposed input
print(
    "layer norms that copy:",
    ", ".join(norms),
    "of",
    ", ".join(name for name, m in modules.items() if isinstance(m, torch.nn.LayerNorm)),
)


# %%
# where a copy of an attention module comes from, told by what it copies: its autograd node,
# and for a view's backward the shape of the gradient it copies, which is that view's shape
def origin(c, mha, seq, batch):
    node = c.call.split(" of ")[0]  # "ViewBackward0 of F.multi_head_attention_forward"
    if c.phase == "forward":
        return f"forward: {c.ops[0]}"
    if c.hidden_in:
        return f"in the kernel's backward: {c.hidden_in}"
    if node == "SelectBackward0":
        return f"{node} of proj[0], proj[1], proj[2]"
    embed, heads = mha.embed_dim, mha.num_heads
    views = {
        (seq, batch, 3, embed): "the unflatten of the packed q/k/v projection",
        (seq, batch * heads, embed // heads): "the head split",  # q.view(S, B*H, E/H)
        (batch, heads, seq, embed // heads): "the head split",  # q.view(B, H, S, E/H)
        (seq, batch, embed): "the output's view(S, B, E)",
    }
    return f"{node} of {views.get(c.source[0].shape, 'another view')}"


# %%
def origins(copies, mha, seq, batch):
    """{origin: (copies, bytes)} in the order first seen."""
    found = {}
    for c in copies:
        count, moved = found.get(origin(c, mha, seq, batch), (0, 0))
        found[origin(c, mha, seq, batch)] = (count + 1, moved + c.bytes)
    return found


# %%
# [attention-backward] self_attn's backward copies by origin: 1 kernel, 6 head split, 1 unflatten, 3 select
in_attention = [c for c in report.copies if c.module == "self_attn"]
backward = [c for c in in_attention if c.phase == "backward"]
total = sum(c.bytes for c in backward)
seq, batch_size = x.shape[:2]
by_origin = origins(backward, layer.self_attn, seq, batch_size)
for name, (count, moved) in by_origin.items():
    print(
        f"{count:2} {'copy  ' if count == 1 else 'copies'} {moved:5} B ({moved / total:3.0%})  {name}"
    )
print(f"{len(backward):2} copies {total:5} B  self_attn's backward, in all")
assert 2 * len(in_attention) > len(report.copies) and 2 * len(backward) > len(in_attention)
assert {name: n for name, (n, _) in by_origin.items()} == {
    "in the kernel's backward: aten._scaled_dot_product_flash_attention_for_cpu_backward": 1,
    "ViewBackward0 of the head split": 6,  # each one's gradient has a head-split view's shape
    "ViewBackward0 of the unflatten of the packed q/k/v projection": 1,
    "SelectBackward0 of proj[0], proj[1], proj[2]": 3,
}
for c in backward:  # a view's backward copies a gradient not laid out for it; a select's fills proj
    if c.call.startswith("ViewBackward0"):
        assert not c.source[0].is_contiguous and c.result[0].is_contiguous
    elif c.call.startswith("SelectBackward0"):
        assert c.result[0].shape == (3, *c.source[0].shape)


# %% [markdown]
# These counts are this shape's.  At batch 1, or with a sequence of one, neither the attention
# kernel's backward nor the head split's view backwards copy; with one head the head split's
# do not; a `batch_first=True` layer fed the batch as it comes makes one more, the view backward of
# the attention output's `view(S, B, E)`: the layer hands that output back transposed to batch-first
# order, so its gradient arrives transposed.  Measured, beside the table above:


# %%
def backward_counts(module, inputs):
    seq, batch = inputs.shape[1::-1] if module.self_attn.batch_first else inputs.shape[:2]
    audited = sw.audit(module, inputs)
    mine = [c for c in audited.copies if c.module == "self_attn" and c.phase == "backward"]
    return {name: n for name, (n, _) in origins(mine, module.self_attn, seq, batch).items()}


def layer_of(heads=2, batch_first=False):
    return torch.nn.TransformerEncoderLayer(8, heads, 16, dropout=0.0, batch_first=batch_first)


# %%
# [other-shapes] other shapes, other copies: batch 1, sequence 1, one head, batch_first
here = {name: n for name, (n, _) in by_origin.items()}
kernel = next(name for name in here if name.startswith("in the kernel's backward"))
split = "ViewBackward0 of the head split"
variants = {
    "batch 1": backward_counts(layer, torch.randn(1, 5, 8).transpose(0, 1)),
    "sequence 1": backward_counts(layer, torch.randn(2, 1, 8).transpose(0, 1)),
    "1 head": backward_counts(layer_of(heads=1), x),
    "batch_first": backward_counts(layer_of(batch_first=True), batch),
}
for name, counts in variants.items():
    changed = {
        k: f"{here.get(k, 0)} → {counts.get(k, 0)}"
        for k in here | counts
        if here.get(k, 0) != counts.get(k, 0)
    }
    print(f"{name:11}", changed)
no_kernel_no_split = {k: n for k, n in here.items() if k not in (kernel, split)}
assert variants["batch 1"] == variants["sequence 1"] == no_kernel_no_split
assert variants["1 head"] == {k: n for k, n in here.items() if k != split}
assert variants["batch_first"] == {**here, "ViewBackward0 of the output's view(S, B, E)": 1}


# %% [markdown]
# The biggest forward copy, drawn: the source is a strided view of the input, the result a fresh
# contiguous buffer.

# %%
top = max((c for c in report.copies if c.phase == "forward"), key=lambda c: c.bytes)
print(top.call, top.ops, top.where, top.bytes, "bytes")
print(top.source[0], "→", top.result[0])

# %%
SVG(sw.render_svg(source=top.source[0], result=top.result[0]))

# %% [markdown]
# ### The measured suggestion
#
# `report.suggestions` applies each candidate fix to a copy of the layer and inputs.  Here the
# candidate is "make the input contiguous once, before the model".  The times are medians and
# IQRs of rounds that alternate the two variants on this machine (the copies and bytes do not
# depend on it); `suggestion.speed` says "faster" or "slower" only when the IQRs do not overlap
# and the medians differ enough, else "no measurable change".

# %%
# NBVAL_IGNORE_OUTPUT
for suggestion in report.suggestions:
    print(suggestion, "\n  outputs match:", suggestion.outputs_match)

# %%
for suggestion in report.suggestions:
    assert suggestion.outputs_match
    before, after = suggestion.measured["before"], suggestion.measured["after"]
    assert (before.copies, before.bytes) == (len(report.copies), report.total_bytes)
    print(f"{suggestion.fix}: {before.bytes} → {after.bytes} bytes copied")

# %% [markdown]
# The fix is applied *inside* the measured step, so its own `.contiguous()` copy counts.  Some
# clones in `F.multi_head_attention_forward` come from its packed q/k/v projection and its head
# split, and one of them copies the transposed input itself; a contiguous input saves that clone
# and the layer norm's hidden copy — the table above says whether that beats the copy it costs.
# The attention's forward copies, on the transposed input and on a contiguous one:

# %%
contiguous_report = sw.audit(layer, x.contiguous())


def attention_forward(audit_report):
    return [c for c in audit_report.copies if c.module == "self_attn" and c.phase == "forward"]


for label, audited in [("transposed", report), ("contiguous", contiguous_report)]:
    print(
        f"{label} input: self_attn forward copies {[c.bytes for c in attention_forward(audited)]} B"
    )
sources = [layout.strides for c in attention_forward(report) for layout in c.source]
assert x.stride() in sources  # one clone's source is the transposed input itself
assert sum(c.bytes for c in attention_forward(contiguous_report)) < sum(
    c.bytes for c in attention_forward(report)
)

# %% [markdown]
# ## A vision transformer (torchvision, random weights)

# %%
vit = torchvision.models.VisionTransformer(
    image_size=32, patch_size=16, num_layers=2, num_heads=2, hidden_dim=32, mlp_dim=64
)
images = torch.randn(2, 3, 32, 32)
vit_report = sw.audit(vit, images)
print(vit_report)
assert all(c.module in dict(vit.named_modules()) for c in vit_report.copies)

# %% [markdown]
# The class token is joined to the patch embeddings with `torch.cat` in `vision_transformer.py`:
# a copy of the whole sequence per step.  Most of the other copies are attention: each block's
# attention makes the layer's copies above and one more in backward, the view backward of the
# attention output's `view(S, B, E)`, for the reason a `batch_first=True` layer makes it
# (torchvision's attention is batch-first).  These counts are for this batch (2 images of
# 5 tokens).  Not all the other copies are attention: the layer norms copy too, and so do
# autograd's backward of the class-token `select` (`x[:, 0]` before the head) and the patch
# convolution's backward.  Each block's attention, then the copies by part of the model:


# %%
# [vit-attention] each block's attention makes the layer's copies and one more: the output view's
layer_counts = {
    name: n for name, (n, _) in origins(in_attention, layer.self_attn, *x.shape[:2]).items()
}
tokens, embed = vit.seq_length, vit.hidden_dim
for name, m in vit.named_modules():
    if isinstance(m, torch.nn.MultiheadAttention):
        mine = [c for c in vit_report.copies if c.module == name]
        counts = {k: n for k, (n, _) in origins(mine, m, tokens, len(images)).items()}
        more = {k: counts.get(k, 0) - layer_counts.get(k, 0) for k in counts | layer_counts}
        print(
            f"{name}: {len(mine)} copies, beyond the layer's:", {k: n for k, n in more.items() if n}
        )
        assert {k: n for k, n in more.items() if n} == {
            "ViewBackward0 of the output's view(S, B, E)": 1
        }
        (extra,) = [c for c in mine if origin(c, m, tokens, len(images)).endswith("view(S, B, E)")]
        assert extra.phase == "backward" and extra.source[0].strides == (embed, tokens * embed, 1)


# %%
# [vit-parts] the ViT's copies by part of the model: attention, layer norms, and three others
def part(c):
    name = c.module.rsplit(".", 1)[-1]
    if name in ("self_attention", "ln", "ln_1", "ln_2"):
        return "attention" if name == "self_attention" else "layer norms"
    return f"{c.module or '(model)'}: {c.ops[0]}" + (f" in {c.hidden_in}" if c.hidden_in else "")


parts = {}
for c in vit_report.copies:
    count, moved = parts.get(part(c), (0, 0))
    parts[part(c)] = (count + 1, moved + c.bytes)
for name, (count, moved) in sorted(parts.items(), key=lambda item: -item[1][0]):
    print(f"{count:2} {'copy  ' if count == 1 else 'copies'} {moved:6} B  {name}")
assert set(parts) == {
    "attention",
    "layer norms",
    "(model): aten.cat",
    "(model): aten.select_backward",
    "conv_proj: aten.clone in aten.convolution_backward",
}

# %% [markdown]
# Why the layer norms copy: torchvision's `EncoderBlock` runs a batch-first
# `nn.MultiheadAttention`, which works in `(seq, batch, features)` order and hands its output back
# transposed; the residual `x + input` keeps those strides, so the next layer norm reads a
# transposed input (its kernel copies it in forward, and the saved input again in backward), and
# the gradient that reaches a layer norm can be transposed too.  Recorded with hooks on a copy of
# the model, norm by norm, that accounts for every one of their copies:

# %%
# [vit-norms] a layer norm copies each transposed input (forward, backward) and transposed gradient
probe, seen = copy.deepcopy(vit), {}
for name, m in probe.named_modules():
    if isinstance(m, torch.nn.LayerNorm):
        m.register_forward_pre_hook(
            lambda m, args, name=name: seen.update({(name, "input"): args[0]})
        )
        m.register_full_backward_pre_hook(
            lambda m, g, name=name: seen.update({(name, "grad"): g[0]})
        )
    if isinstance(m, torch.nn.MultiheadAttention):
        m.register_forward_hook(
            lambda m, args, out, name=name: seen.update({(name, "out"): out[0]})
        )
probe(images).sum().backward()
attention_out = seen["encoder.layers.encoder_layer_0.self_attention", "out"]
print("attention output", tuple(attention_out.shape), attention_out.stride())
for name in sorted({name for name, what in seen if what != "out"}):
    x_in, grad = seen[name, "input"], seen[name, "grad"]
    made = [c.phase for c in vit_report.copies if c.module == name]
    print(f"{name:36} input {x_in.stride()}, gradient {grad.stride()}: copies {made}")
    transposed = [not t.is_contiguous() for t in (x_in, x_in, grad)]  # forward; backward twice
    assert made.count("forward") == transposed[0] and made.count("backward") == sum(transposed[1:])
    assert all(t.stride() == attention_out.stride() for t in (x_in, grad) if not t.is_contiguous())
assert not attention_out.is_contiguous()

# %% [markdown]
# ## A ResNet (torchvision, random weights)

# %%
resnet = torchvision.models.resnet18(weights=None)
pictures = torch.randn(2, 3, 64, 64)
resnet_report = sw.audit(resnet, pictures)
print(resnet_report)

# %% [markdown]
# On the CPU in NCHW the forward makes almost no copy; the backward of the strided
# convolutions (`layer2.0.conv1`, the downsample branches ...) copies inside
# `aten.convolution_backward`.  The audit tries channels-last, the fix usually recommended for
# convolution stacks, and measures it:

# %%
# NBVAL_IGNORE_OUTPUT
(channels_last,) = resnet_report.suggestions
print(channels_last)

# %%
assert channels_last.outputs_match
before, after = channels_last.measured["before"], channels_last.measured["after"]
print(f"copies {before.copies} → {after.copies}, bytes {before.bytes} → {after.bytes}")

# %% [markdown]
# Whether channels-last pays is a measurement, not a rule: the timing above is this machine's
# (1 thread), and a CUDA run with tensor cores is a different case.  A suggestion whose
# `helps` is false is reported all the same, so that a fix people recommend can be seen not to
# pay here.
#
# ## Before → after, all three models, with the verdict on the bytes copied
#
# (The ViT's patch embedding is a convolution, so channels-last is a candidate there too.)

# %%
# every suggestion of the three audits gave the model's own outputs (the table below times them)
audits = {"layer": report, "vit": vit_report, "resnet18": resnet_report}
assert all(s.outputs_match for audited in audits.values() for s in audited.suggestions if s.applied)

# %%
# NBVAL_IGNORE_OUTPUT
rows = [("model", "fix", "copies", "bytes", "ms", "verdict (bytes copied)", "speed")]
for name, audited in audits.items():
    for suggestion in audited.suggestions:
        if not suggestion.applied:  # an edit to the model's source: no "after" to show
            continue
        b, a = suggestion.measured["before"], suggestion.measured["after"]
        rows.append(
            (
                name,
                suggestion.fix[:48],
                f"{b.copies} → {a.copies}",
                f"{b.bytes} → {a.bytes}",
                f"{b.seconds * 1e3:.2f} → {a.seconds * 1e3:.2f}",
                "fewer" if a.bytes < b.bytes else "more" if a.bytes > b.bytes else "same",
                suggestion.speed,
            )
        )
widths = [max(len(row[i]) for row in rows) for i in range(7)]
for row in rows:
    print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)))

# %% [markdown]
# ## A weight kept transposed, and `permute` + `reshape`
#
# Two more kinds of fix, on a small module made to need them.  `weight.t().contiguous()` copies
# the weight every step: the fix stores the parameter so that `weight.t()` is already
# contiguous.  `x.permute(0, 2, 1).reshape(-1, 4)` copies because the reshape merges dims that
# are not adjacent in memory — no order of the two calls avoids it; the tensor has to be
# *stored* in the permuted order.  For the input that is a fix the audit can apply (measured with
# the input made so where it is made, as for channels-last); for a tensor the model makes itself
# it is only a change to the model's source, so the audit reports it with `applied` false and
# no "after" rather than pretend.


# %%
class Projection(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(4, 4))  # (out, in)

    def forward(self, x):  # x: (batch, 4 channels, length)
        rows = x.permute(0, 2, 1).reshape(-1, 4) @ self.weight.t().contiguous()
        return rows.view(len(x), -1, 4).permute(0, 2, 1).reshape(len(x), -1)


torch.manual_seed(0)
projection_report = sw.audit(Projection(), torch.randn(2, 4, 3))
print(projection_report.summary())  # (the cell's line numbers are in the report's by-line table)
for row in projection_report.by_module():
    print(row)

# %%
# NBVAL_IGNORE_OUTPUT
for suggestion in projection_report.suggestions:
    print(
        suggestion, "\n  applied:", suggestion.applied, "outputs match:", suggestion.outputs_match
    )

# %%
for suggestion in projection_report.suggestions:
    before = suggestion.measured["before"]
    if not suggestion.applied:
        print(f"{suggestion.what.split(':')[0]}: {suggestion.where.split(' at ')[0]}")
        continue
    after = suggestion.measured["after"]
    assert suggestion.outputs_match and after.bytes < before.bytes
    print(
        f"{suggestion.fix}\n  copies {before.copies} → {after.copies}, bytes {before.bytes} → {after.bytes}"
    )
