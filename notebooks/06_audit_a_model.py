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
# copy tracker — or a `clone` / `_to_copy` that a kernel ran *inside* another op (`addmm`
# cloning a gapped operand, a convolution's backward making its gradient contiguous), seen by
# PyTorch's profiler and named "`aten.clone in aten.convolution_backward`".  Reorders a library
# does without any ATen op (oneDNN's, inside a CPU convolution) are invisible to both.

# %%
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
# tiny sizes keep the saved pictures small; the copies are the same at any size
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
# Most copies sit inside `self_attn`, in the one call `F.multi_head_attention_forward`
# (`activation.py`), which runs `aten.clone`s and whose attention kernel's backward makes its
# inputs contiguous; a layer norm copies the transposed input inside its kernel (which of the
# layer's norms is printed below the report).

# %%
print(report)
assert report.total_bytes == sum(c.bytes for c in report.copies)
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
#
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
# a copy of the whole sequence per step.  The rest is attention, as in the layer above.

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
