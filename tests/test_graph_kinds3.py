"""#26, sixth round: "may alias" ops that copy (ravel, resolve_conj, resolve_neg), data-moving ops
under dynamic shapes, and the bytes an in-place index write writes, each checked against the
graph replayed eagerly on real tensors (storages, the elements whose value changed)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

import stridewidget as sw
from stridewidget.graph.nodes import classify


def _storage(value):
    return value.untyped_storage().data_ptr()


class Resolves(nn.Module):
    def forward(self, z):
        return (
            z.conj().imag.resolve_neg(),  # negative bit set: a copy
            z.imag.resolve_neg(),  # no bit: the tensor itself
            torch.ravel(z.real.t()),  # not viewable: a copy
            torch.ravel(z.real),  # strides (4, 2) of floats: not viewable as 1-D, a copy too
            z.conj().resolve_conj(),
            z.resolve_conj(),
        )


def _check_storages(g, targets):
    real = g.run()
    checked = 0
    for node in g.nodes:
        if node.target not in targets:
            continue
        out, given = real[node.name], real[node.inputs[0]]
        copied = _storage(out) != _storage(given)
        assert (node.kind == "copy") == copied, (node.name, node.kind)
        assert node.bytes == (out.numel() * out.element_size() if copied else 0)
        checked += copied
    return checked


def test_ravel_and_resolve_are_copies_where_the_real_run_copies():
    targets = {"aten.ravel", "aten.resolve_conj", "aten.resolve_neg"}
    g = sw.graph(Resolves(), torch.randn(3, 2, dtype=torch.cfloat), stage="export")
    assert _check_storages(g, targets) >= 3
    for x in (torch.randn(2, 3, 4), torch.randn(4, 3, 2).transpose(0, 2)):
        g = sw.graph(lambda x: torch.ravel(x.transpose(1, 2)), x, stage="export")
        assert _check_storages(g, targets) == 1  # both transposes are not viewable as 1-D
    g = sw.graph(lambda x: torch.ravel(x), torch.randn(2, 3, 4), stage="export")
    assert _check_storages(g, targets) == 0


class Moving(nn.Module):
    def forward(self, x):
        return (
            x.tril(),
            torch.diag_embed(x),
            torch.flip(x, [0]),
            x.repeat_interleave(2, dim=0),
            F.interpolate(x[None, None], scale_factor=2, mode="nearest"),
        )


def _shape_env(g):
    for node in g.nodes:
        value = node.node.meta.get("val")
        if isinstance(value, torch.Tensor):
            for n in value.shape:
                if isinstance(n, torch.SymInt):
                    return n.node.shape_env
    raise AssertionError("no symbol in the graph")


def test_dynamic_shapes_find_the_copies_the_static_graph_finds_without_a_guard():
    x = torch.randn(4, 4)
    static = sw.graph(Moving(), x, stage="export")
    dims = {"x": {0: torch.export.Dim("b", min=2, max=64)}}
    dynamic = sw.graph(Moving(), x, stage="export", dynamic_shapes=dims)
    key = [(n.name, n.target) for n in static.copies]
    assert len(key) == 5 and [(n.name, n.target) for n in dynamic.copies] == key
    # the static copies' bytes are what the real run writes; the dynamic ones stay symbolic
    real = static.run()
    for node in static.copies:
        assert node.bytes == real[node.name].numel() * real[node.name].element_size()
    assert all(isinstance(n.bytes, torch.SymInt) for n in dynamic.copies)
    # deciding again reads no symbol: the ShapeEnv's guards do not grow
    env = _shape_env(dynamic)
    before = len(env.guards)
    assert [classify(n.node) for n in dynamic.nodes] == [n.kind for n in dynamic.nodes]
    assert len(env.guards) == before
    # and the program still takes another batch size
    out = dynamic.program.module()(torch.randn(7, 4))
    assert out[0].shape == (7, 4) and out[3].shape == (14, 4)


def _writer(write):
    class Writes(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("b", torch.zeros(8, 4))

        def forward(self, x):
            write(self.b, x, torch.tensor([1, 5]))
            return self.b * 1

    return Writes()


_WRITES = {
    "aten.index_copy_": lambda b, x, idx: b.index_copy_(0, idx, x[:2]),
    "aten.index_add_": lambda b, x, idx: b.index_add_(0, idx, x[1:3]),
    "aten.index_put_": lambda b, x, idx: b.__setitem__(idx, x[2:4]),
    "aten.scatter_": lambda b, x, idx: b.scatter_(0, torch.zeros(1, 4, dtype=torch.long), x[:1]),
    "aten.scatter_add_": lambda b, x, idx: b.scatter_add_(
        0, torch.arange(4)[:, None] * 2, x[:, :2]
    ),
    "aten.index_fill_": lambda b, x, idx: b.index_fill_(0, idx, 1.0),
}


def _changed_bytes(g, node):
    # the buffer starts as zeros and every source is nonzero: each written element changes
    after = g.run()[node.name]
    return int((after != 0).sum()) * after.element_size()


def test_index_writes_report_the_bytes_they_write():
    x = torch.rand(4, 4) + 1
    for target, write in _WRITES.items():
        g = sw.graph(_writer(write), x, stage="export")
        (node,) = [n for n in g.nodes if n.target == target]
        assert node.kind == "in-place" and node.moves
        assert node.bytes == _changed_bytes(g, node) < 128, (target, node.bytes)
        assert node.reason == ""


def test_a_masked_write_reports_the_destination_as_an_upper_bound():
    x = torch.rand(4, 4) + 1
    writes = {
        "aten.masked_fill_": lambda b, x, idx: b.masked_fill_(x[:1] > 1.5, 2.0),
        "aten.index_put_": lambda b, x, idx: b.__setitem__(b < 1, 3.0),
    }
    for target, write in writes.items():
        g = sw.graph(_writer(write), x, stage="export")
        (node,) = [n for n in g.nodes if n.target == target]
        assert _changed_bytes(g, node) <= node.bytes == 128
        assert "at most" in node.reason and "mask" in node.reason


def test_index_write_bytes_stay_symbolic_under_dynamic_shapes():
    class Put(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("b", torch.zeros(64, 4))

        def forward(self, x):
            self.b.index_copy_(0, torch.arange(x.shape[0]), x)
            return self.b * 1

    x = torch.rand(6, 4) + 1
    dims = {"x": {0: torch.export.Dim("b", min=2, max=64)}}
    g = sw.graph(Put(), x, stage="export", dynamic_shapes=dims)
    (node,) = [n for n in g.nodes if n.target == "aten.index_copy_"]
    env = _shape_env(g)
    assert isinstance(node.bytes, torch.SymInt)
    assert env.evaluate_expr(node.bytes.node.expr) == _changed_bytes(g, node) == 6 * 4 * 4
