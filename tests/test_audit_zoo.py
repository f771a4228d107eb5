"""sw.audit on a zoo of models built from small configs (torchvision, timm, transformers,
diffusers, an LSTM, a patch-embed stack, a channels_last convnet, a transposed weight), each step cross-checked against an independent
``torch.profiler(profile_memory=True)`` run of the plain step.

The oracle: per phase (the forward, then the backward a training step's ``loss.backward()``
runs, into ``.grad``s that were ``None``), the bytes allocated inside
each outermost data-moving ATen op, summed, plus those of each outermost ``aten::copy_`` that
fills the whole output its calling ATen op allocated, from that op's one input tensor (the CPU
``pow(x, 1)`` that ``PowBackward0`` runs for ``x.pow(2)``: ``out.copy_(base)``).  Less the ``triu``/``tril`` of a
mask an op builds inside itself from constants (SDPA's math kernel: ``ones(L, S).tril()``),
which moves no data that existed before the call.  It must equal the report's bytes, except for the one
difference the audit states (``_AuditRecorder.record``): a copy into a buffer the step allocated
blank (``out = torch.empty(...); out[:n] = a``) counts for the audit, while the profiler sees its
bytes allocated by the ``empty``, outside any data-moving op.
"""

from __future__ import annotations

import math

import models
import pytest
import torch
from models import MOVES as _MOVES
from torch._C._profiler import _EventType
from torch.profiler import ProfilerActivity, profile

import stridewidget as sw
from stridewidget.copies.audit.guard import differentiable as _differentiable

# ops in an event that allocate the storage the event copies into: not the in-place ones, which
# write into a tensor they are given (``inv = torch.empty_like(perm); inv[perm] = arange``, the
# index_put_ of transformers' grouped MoE experts, is a copy into a blank buffer)
_IN_PLACE_MOVES = {"copy_", "index_put_", "_index_put_impl_"}
_ALLOCATING = {f"aten.{name}" for name in _MOVES - _IN_PLACE_MOVES} | {"aten.embedding"}


def _moved_bytes(run) -> tuple[object, int]:
    with profile(
        activities=[ProfilerActivity.CPU], profile_memory=True, record_shapes=True
    ) as prof:
        result = run()
    total = sum(max(event.cpu_memory_usage, 0) for event in models.outermost_moves(prof.events()))
    return result, total + _copies_into_their_callers_output(prof) - _masks_made_inside(prof)


def _masks_made_inside(prof) -> int:
    """Bytes of the outermost ``triu``/``tril`` (:data:`models.MASKS`) whose input an ATen op
    made inside itself, before them: a mask built from constants (SDPA's math kernel runs
    ``ones(L, S).tril()``) moves no data that existed before the call, so the tracker counts no
    copy there (its bytes are of data that existed before the call)."""
    total = 0
    for root in prof.profiler.kineto_results.experimental_event_tree():
        top = root if root.tag == _EventType.TorchOp else None
        total += _masks_under(root, top, top is not None and _moving(root))
    return total


def _masks_under(node, top, moving: bool) -> int:
    total = 0
    for child in node.children:
        if child.tag != _EventType.TorchOp:
            continue
        name = child.name.removeprefix("aten::")
        if top is not None and not moving and name in models.MASKS:
            inputs = [v for v in child.extra_fields.inputs if hasattr(v, "storage_data_ptr")]
            made = [
                event.extra_fields.ptr
                for event in _subtree_allocations(top, [])
                if event.start_time_ns <= child.start_time_ns
            ]
            if inputs and inputs[0].storage_data_ptr in made:
                total += max(
                    sum(a.extra_fields.alloc_size for a in _subtree_allocations(child, [])), 0
                )
        total += _masks_under(child, top or child, moving or _moving(child))
    return total


def _subtree_allocations(node, found: list) -> list:
    for child in node.children:
        if child.tag == _EventType.Allocation:
            found.append(child)
        else:
            _subtree_allocations(child, found)
    return found


def _copies_into_their_callers_output(prof) -> int:
    """Bytes of the outermost ``aten::copy_`` calls that fill the output their calling ATen op
    (not a data-moving one) allocated, from that op's one input tensor: ``pow(x, 1)``'s CPU
    kernel runs ``out.copy_(base)``.  The ``copy_`` allocates nothing, so the bytes allocated
    inside data-moving ops miss it; the raw event tree (``record_shapes``) holds each
    allocation's address and each op's input tensors' storage addresses.  ``addmm``'s
    ``result.copy_(bias)`` before its GEMM is no move: the op has three input tensors."""
    total = 0
    for root in prof.profiler.kineto_results.experimental_event_tree():
        total += _nested_copies(root, _moving(root))
    return total


def _moving(node) -> bool:
    return node.tag == _EventType.TorchOp and node.name.removeprefix("aten::") in _MOVES


def _nested_copies(node, moving: bool) -> int:
    total = 0
    for child in node.children:
        if child.tag != _EventType.TorchOp:
            continue
        if child.name == "aten::copy_" and not moving and node.name.startswith("aten::"):
            total += _into_callers_output(node, child)
        total += _nested_copies(child, moving or _moving(child))
    return total


def _into_callers_output(op, copy) -> int:
    destination, source = copy.extra_fields.inputs[:2]
    moved = math.prod(destination.sizes) * destination.dtype.itemsize
    sizes = [  # of the allocations and frees at the destination's address in op, up to the copy
        event.extra_fields.alloc_size
        for event in _allocations(op, [])
        if event.start_time_ns <= copy.start_time_ns
        and event.extra_fields.ptr == destination.storage_data_ptr
    ]
    if sizes and sizes[-1] == moved and _tensors_in(op) == [source.storage_data_ptr]:
        return moved  # all of a buffer op allocated (not freed since), from op's one input
    return 0


def _allocations(node, found: list) -> list:
    """The allocation events in ``node``'s subtree, but those inside data-moving ops."""
    for child in node.children:
        if child.tag == _EventType.Allocation:
            found.append(child)
        elif not _moving(child):
            _allocations(child, found)
    return found


def _tensors_in(op) -> list[int]:
    """Storage addresses of the tensors among a profiled op's inputs (in tensor lists too)."""
    found = []
    for value in op.extra_fields.inputs:
        for item in value if isinstance(value, list) else [value]:
            if hasattr(item, "storage_data_ptr"):
                found.append(item.storage_data_ptr)
    return found


def _oracle(model, inputs, kwargs, loss_fn) -> dict[str, int]:
    output, forward = _moved_bytes(lambda: model(*inputs, **kwargs))
    roots = _differentiable(output, loss_fn)
    params = [p for p in model.parameters() if p.requires_grad]
    seeds = [torch.ones_like(r) for r in roots]  # made outside the profiled phase
    found = [p.grad for p in params]
    for p in params:
        p.grad = None  # zero_grad()'s default: what a training step's backward starts from
    try:
        # loss.backward(): the gradients go through each parameter's AccumulateGrad, which
        # copies one that lacks its parameter's layout
        _, backward = _moved_bytes(lambda: torch.autograd.backward(roots, seeds, inputs=params))
    finally:
        for p, grad in zip(params, found):
            p.grad = grad
    return {"forward": forward, "backward": backward}


def _into_blank_buffer(item) -> bool:
    event = item.event
    return not item.hidden_in and event.wrote_input and not _ALLOCATING.intersection(event.ops)


class _PatchEmbed(torch.nn.Module):
    """A ViT stem: conv patches, ``flatten(2).transpose(1, 2)`` fed to LayerNorm and Linear."""

    def __init__(self) -> None:
        super().__init__()
        self.patches = torch.nn.Conv2d(3, 16, 4, stride=4)
        self.norm = torch.nn.LayerNorm(16)
        self.head = torch.nn.Linear(16, 16)

    def forward(self, x):
        return self.head(self.norm(self.patches(x).flatten(2).transpose(1, 2)))


class _TransposedWeights(torch.nn.Module):
    """A layer whose weight was loaded transposed (``Parameter(w.t())``, as checkpoint converters
    do): ``AccumulateGrad`` copies each gradient into the parameter's layout."""

    def __init__(self) -> None:
        super().__init__()
        self.scale = torch.nn.Parameter(torch.randn(16, 4).t())  # (4, 16), strides (1, 4)
        self.out = torch.nn.Linear(16, 4)

    def forward(self, x):
        return self.out(torch.relu(x * self.scale))


class _Indexed(torch.nn.Module):
    """An advanced index in forward (token gather, window partition): its gradient is put into a
    zero buffer by IndexBackward0."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(8, 8)
        self.register_buffer("rows", torch.tensor([0, 2, 3, 3, 1]))

    def forward(self, x):
        return self.linear(x)[self.rows]


def _collapsed(ops: list[str], expanded: dict[tuple[str, ...], str]) -> list[str]:
    """``ops`` with each run of ops that stands for one plain op replaced by that op."""
    out: list[str] = []
    for op in ops:
        out.append(op)
        for run, plain in expanded.items():
            if tuple(out[-len(run) :]) == run:
                out[-len(run) :] = [plain]
    return out


def _channels_last_convnet():
    net = torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3), torch.nn.BatchNorm2d(8), torch.nn.ReLU(), torch.nn.Conv2d(8, 4, 3)
    )
    return net.to(memory_format=torch.channels_last), (torch.randn(2, 3, 12, 12),), {}


ZOO = {
    "torchvision-efficientnet-b0": lambda: (*models.efficientnet_b0(), {}),
    "torchvision-mobilenet-v3": lambda: (*models.mobilenet_v3_small(), {}),
    "timm-convnext-atto": lambda: (*models.timm_model("convnext_atto"), {}),
    "timm-vit-tiny": lambda: (
        *models.timm_model("vit_tiny_patch16_224", img_size=32, patch_size=8),
        {},
    ),
    "hf-gpt2": models.gpt2_lm,
    "hf-llama": models.llama,
    "hf-t5": models.t5,
    "diffusers-unet2d": lambda: (*models.unet(), {}),
    "lstm": lambda: (torch.nn.LSTM(8, 16, batch_first=True), (torch.randn(2, 5, 8),), {}),
    "patch-embed": lambda: (_PatchEmbed(), (torch.randn(2, 3, 16, 16),), {}),
    "transposed-weights": lambda: (_TransposedWeights(), (torch.randn(4, 16),), {}),
    "channels-last-convnet": _channels_last_convnet,
    "index-backward": lambda: (_Indexed(), (torch.randn(6, 8),), {}),
    # its backward kernel gathers (index_select) and sorts (sort copies its input) inside
    "embedding-bag-mean": lambda: (
        torch.nn.EmbeddingBag(50, 8, mode="mean"),
        (torch.randint(0, 50, (4, 6)),),
        {},
    ),
    # its backward kernel gathers the gradient rows of each bag's maxima (index_select)
    "embedding-bag-max": lambda: (
        torch.nn.EmbeddingBag(50, 8, mode="max"),
        (torch.randint(0, 50, (4, 6)),),
        {},
    ),
}
_LOSS = {"lstm": lambda out: out[0].sum(), "diffusers-unet2d": lambda out: out.sample.sum()}


@pytest.mark.parametrize("name", sorted(ZOO))
def test_the_report_agrees_with_the_profiler(name):
    torch.manual_seed(0)
    model, inputs, kwargs = ZOO[name]()
    loss_fn = _LOSS.get(name)
    report = sw.audit(model, *inputs, loss_fn=loss_fn, model_kwargs=kwargs)
    expected = _oracle(model, inputs, kwargs, loss_fn)
    for phase in ("forward", "backward"):
        items = [c for c in report.copies if c.phase == phase]
        explained = sum(c.bytes for c in items if _into_blank_buffer(c))
        assert sum(c.bytes for c in items) - explained == expected[phase], phase
    assert report.total_bytes > 0


@pytest.mark.parametrize("name", sorted(ZOO))
def test_the_audited_step_runs_the_plain_steps_ops(name):
    """The profiler's op list of the audited step is the plain step's, but for the one rule the
    audit states (``UNDER_A_MODE``: torch's subclass-safe branches while a dispatch mode is
    on, IndexBackward0's ``index_put`` among them).  Under the user's profiler the audit opens no session of its own, so the user's
    profile sees every op the audited step ran."""
    import difflib

    from stridewidget.copies.audit.step import UNDER_A_MODE, audited_step, run_step

    torch.manual_seed(0)
    model, inputs, kwargs = ZOO[name]()
    loss_fn = _LOSS.get(name)
    audited_step(model, inputs, True, loss_fn, kwargs)  # the tracker decides each op once
    plain = models.profiled_op_list(lambda: run_step(model, inputs, True, loss_fn, kwargs))
    audited = models.profiled_op_list(lambda: audited_step(model, inputs, True, loss_fn, kwargs))
    audited = _collapsed(audited, UNDER_A_MODE["expanded"])
    replaced, added = UNDER_A_MODE["replaced"], UNDER_A_MODE["added"]
    matcher = difflib.SequenceMatcher(None, plain, audited, autojunk=False)
    unexplained = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        ours = [op for op in audited[j1:j2] if op != added]
        if [replaced.get(op, op) for op in plain[i1:i2]] != ours:
            unexplained.append((tag, plain[i1:i2], audited[j1:j2]))
    assert not unexplained, unexplained[:5]
    assert len(plain) > 30  # the profiler saw the step (the smallest model runs 46 ops)
