"""Issue 39 (FSDP2): a ``fully_shard`` model's step, tracked and audited on one CPU (fake process
group).  Before: ``sw.audit`` crashed restoring a sharded parameter (a DTensor has no storage of
its own), the tracker called FSDP2's all-gather copy-in a *view* of 0 bytes and its copy-out an
in-place write of 0 bytes, and named every non-ATen op ``aten.*``.

Oracles: each parameter's local shard and global size as torch gives them (``to_local()``,
``numel()``), ``nbytes`` of the tensors an op writes, and the shards' raw bits before and after.
"""

from __future__ import annotations

import pytest
import torch

import stridewidget as sw


def _model(world: int):
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard

    mesh = init_device_mesh("cpu", (world,))
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
    for layer in model:
        if isinstance(layer, torch.nn.Linear):
            fully_shard(layer, mesh=mesh)
    fully_shard(model, mesh=mesh)
    return model


def _nbytes(t: torch.Tensor) -> int:
    return t.numel() * t.element_size()


@pytest.mark.parametrize("world", [2, 4])
def test_tracker_counts_fsdp2_copy_in_and_copy_out(group, world):
    group(world)
    model = _model(world)
    layers = [m for m in model if isinstance(m, torch.nn.Linear)]
    local = [sum(_nbytes(p.to_local()) for p in layer.parameters()) for layer in layers]
    whole = [sum(_nbytes(p) for p in layer.parameters()) for layer in layers]  # global sizes
    with sw.track_copies() as log:
        model(torch.randn(2, 8))
    copy_in = [e.bytes_copied for e in log.events if e.call == "fsdp.all_gather_copy_in"]
    copy_out = [e.bytes_copied for e in log.events if e.call == "fsdp.split_with_sizes_copy"]
    assert copy_in == local  # this rank's shards copied into the all-gather buffer
    assert copy_out == whole  # the gathered buffer copied into the unsharded parameters
    named = {op for e in log.events for op in e.ops}
    assert "fsdp.all_gather_copy_in" in named and "aten.all_gather_copy_in" not in named


@pytest.mark.parametrize("world", [2, 4])
def test_tracker_counts_the_backward_re_gather_and_reduce_scatter_copy_in(group, world):
    """Around the user's own backward: both layers are gathered again (copy-in: the shards;
    copy-out: the whole parameters) and each gradient is copied into the reduce-scatter buffer
    (``fsdp.chunk_cat``: the whole, evenly sharded, gradients)."""
    group(world)
    model = _model(world)
    local = sum(_nbytes(p.to_local()) for p in model.parameters())
    whole = sum(_nbytes(p) for p in model.parameters())
    out = model(torch.randn(2, 8))
    with sw.track_copies() as log:
        out.sum().backward()
    (backward,) = [e for e in log.events if e.call == "torch.Tensor.backward"]
    assert backward.ops.count("fsdp.chunk_cat") == 2
    assert backward.bytes_copied == local + whole + whole


def test_split_with_sizes_copy_out_and_chunk_cat_move_data():
    x = torch.arange(10.0)
    a, b = torch.empty(4), torch.empty(6)
    parts = [torch.arange(6.0).reshape(2, 3), torch.arange(4.0).reshape(2, 2)]
    with sw.track_copies() as log:
        torch.split_with_sizes_copy(x, [4, 6], out=[a, b])
        chunked = torch._chunk_cat(parts, dim=1, num_chunks=2)
    split, cat = log.events
    assert split.bytes_copied == _nbytes(a) + _nbytes(b)
    assert cat.kind == "copy" and cat.bytes_copied == _nbytes(chunked)


def test_audit_of_an_fsdp2_model_runs_and_leaves_the_shards_as_found(group):
    group(4)
    model = _model(4)
    shards = {name: p.to_local().clone() for name, p in model.named_parameters()}
    report = sw.audit(model, torch.randn(2, 8))
    calls = {c.call for c in report.copies}
    assert {"fsdp.all_gather_copy_in", "fsdp.split_with_sizes_copy"} <= calls
    # backward runs to the unsharded parameters, as loss.backward() does: FSDP2's reduce-scatter
    # copy-in (run on their .grad) is in it, once a layer
    assert [c.phase for c in report.copies if c.ops == ("fsdp.chunk_cat",)] == ["backward"] * 2
    # the line is FSDP2's own (the code that made the call), never torch's dispatch plumbing
    forward = [c.where for c in report.copies if c.phase == "forward"]
    assert forward and all(w.startswith("torch/distributed/fsdp/") for w in forward), forward
    for name, p in model.named_parameters():
        assert torch.equal(p.to_local(), shards[name]), name
        assert p.grad is None
    out = model(torch.randn(2, 8))  # the model still trains after the audit
    out.sum().backward()
    assert all(p.grad is not None for p in model.parameters())


def test_a_second_audit_counts_the_copy_out_as_an_in_place_write_as_the_readme_says(group):
    group(4)
    model = _model(4)
    first = sw.audit(model, torch.randn(2, 8))
    second = sw.audit(model, torch.randn(2, 8))
    assert "fsdp.split_with_sizes_copy" in {c.call for c in first.copies}
    assert "fsdp.split_with_sizes_copy" not in {c.call for c in second.copies}
    assert "in-place writes" in str(second) and "fsdp.split_with_sizes_copy" in str(second)
    # forward's two and backward's two: the whole parameters, twice
    whole = sum(_nbytes(p) for p in model.parameters())
    writes = [(phase, size) for phase, _, size in second.in_place_writes]
    assert sorted(phase for phase, _ in writes) == ["backward"] * 2 + ["forward"] * 2
    assert sum(size for _, size in writes) == 2 * whole
    copy_outs = [c.bytes for c in first.copies if c.ops == ("fsdp.split_with_sizes_copy",)]
    assert sum(copy_outs) == 2 * whole  # the first audit's: rows


def test_audit_of_a_root_only_fsdp2_model_counts_its_reduce_scatter_copy_in(group):
    """``fully_shard`` on the root only (review 3): its reduce-scatter runs inside the audit's
    backward (the README said it never does), and its copy-in was placed at the line
    ``fsdp.chunk_cat`` (an op name).  Oracle for the bytes: FSDP2 pads each gradient's dim 0 to
    a multiple of the world size (``torch.chunk``'s even split), then concatenates them."""
    import math

    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard

    world = 8
    group(world)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(5, 3), torch.nn.ReLU(), torch.nn.Linear(3, 2))
    fully_shard(model, mesh=init_device_mesh("cpu", (world,)))
    shards = {name: p.to_local().clone() for name, p in model.named_parameters()}
    report = sw.audit(model, torch.randn(4, 5))
    cat = [c for c in report.copies if c.call == "fsdp.chunk_cat"]
    assert [c.phase for c in cat] == ["backward"]
    padded = sum(
        math.ceil(p.shape[0] / world) * world * math.prod(p.shape[1:]) * p.element_size()
        for p in model.parameters()
    )
    assert cat[0].bytes == padded
    assert cat[0].where != "fsdp.chunk_cat" and "backward hook" in cat[0].where
    for name, p in model.named_parameters():  # left as found
        assert torch.equal(p.to_local(), shards[name]) and p.grad is None


def test_the_audits_fsdp2_backward_holds_what_the_tracker_sees_around_loss_backward(group):
    """The audit's backward against the tracker around the plain ``loss.backward()`` (the
    oracle).  Before: the audit asked autograd for the gradients of the sharded parameters, which
    the graph does not hold (forward computes with the unsharded ones), so autograd ran no node —
    only FSDP2's hook on the output (layer 2's re-gather, and its prefetch of layer 0's copy-in):
    layer 0's copy-out and both reduce-scatter copy-ins were in no row.  Bytes: the shards
    (``to_local()``) copied in, the whole parameters copied out, the whole gradients (evenly
    sharded) copied into the reduce-scatter buffer — and their sum is the tracker's."""
    group(4)
    model = _model(4)
    layers = [m for m in model if isinstance(m, torch.nn.Linear)]
    local = [sum(_nbytes(p.to_local()) for p in layer.parameters()) for layer in layers]
    whole = [sum(_nbytes(p) for p in layer.parameters()) for layer in layers]
    report = sw.audit(model, torch.randn(2, 8))
    rows = [c for c in report.copies if c.phase == "backward"]
    x = torch.randn(2, 8)
    with sw.track_copies() as log:
        model(x).sum().backward()
    (backward,) = [e for e in log.events if e.call == "torch.Tensor.backward"]
    for op in ("fsdp.all_gather_copy_in", "fsdp.split_with_sizes_copy", "fsdp.chunk_cat"):
        assert [o for c in rows for o in c.ops].count(op) == backward.ops.count(op) == 2, op
    assert "in-place writes" not in str(report)  # all of them rows: into new storage

    def sizes(op: str) -> list[int]:
        return [c.bytes for c in rows if c.ops == (op,)]

    # layer 2 is gathered first, and prefetches layer 0
    assert sizes("fsdp.all_gather_copy_in") == local[::-1]
    assert sizes("fsdp.split_with_sizes_copy") == whole[::-1]
    assert sizes("fsdp.chunk_cat") == whole[::-1]
    assert sum(c.bytes for c in rows) == backward.bytes_copied
    # each at the layer whose parameters it moves, also layer 0's copy-in, which FSDP2 prefetches
    # while layer 2's backward runs (it was put at layer 2)
    copy_in = {c.module: c.bytes for c in rows if c.ops == ("fsdp.all_gather_copy_in",)}
    copy_out = {c.module: c.bytes for c in rows if c.ops == ("fsdp.split_with_sizes_copy",)}
    assert copy_in == {"2": local[1], "0": local[0]}
    assert copy_out == {"2": whole[1], "0": whole[0]}


def test_a_root_only_group_is_placed_at_the_model(group):
    """``fully_shard`` on the root only gathers every layer's parameters in one copy: its rows
    were placed at module ``0`` (the first parameter's).  Oracle: the copy-out's bytes are the
    whole model's parameters (torch's global sizes), so it is the model's."""
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard

    group(4)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
    fully_shard(model, mesh=init_device_mesh("cpu", (4,)))
    report = sw.audit(model, torch.randn(2, 8))
    out = [c for c in report.copies if c.call == "fsdp.split_with_sizes_copy"]
    assert out and out[0].bytes == sum(_nbytes(p) for p in model.parameters())
    fsdp = [c for c in report.copies if c.call.startswith("fsdp.")]
    assert fsdp and all(c.module == "" for c in fsdp), [(c.call, c.module) for c in fsdp]
