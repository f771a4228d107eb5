"""#26, fifth round: node kinds, bytes and reasons of sw.graph checked against oracles the package
does not compute: the eager sw.audit of the same step (its tracker's own verdicts), the graph run
eagerly on real tensors (storages, values), torch's own view rule (``Tensor.view`` on meta
tensors), and the running statistics a real run writes."""

from __future__ import annotations

import itertools

import torch
from torch import nn

import stridewidget as sw
from stridewidget.graph.audit import backend_note
from stridewidget.layout.strides import view_strides


class Moves(nn.Module):
    def __init__(self):
        super().__init__()
        self.l = nn.Linear(8, 8)

    def forward(self, x):
        h = self.l(x)
        return torch.cat([h, h.roll(1, 0), h.flip(0)], 1).repeat(2, 1)


def _storage(value):
    return value.untyped_storage().data_ptr()


def test_data_moving_ops_are_copies_as_the_eager_audit_counts_them():
    torch.manual_seed(0)
    model, x = Moves(), torch.randn(8, 8)
    eager = sw.audit(model, x)
    compiled = sw.audit(torch.compile(model, backend="aot_eager"), x)
    # the eager tracker's own count of the same step (forward and backward) is the oracle
    assert compiled.total_bytes == eager.total_bytes > 0
    assert len(compiled.copies) == len(eager.copies)
    for stage in ("forward", "backward"):
        g = sw.graph(model, x.requires_grad_(), stage=stage)
        real = g.run()
        values = {n.name: v for n, v in ((n, real.get(n.name)) for n in g.nodes)}
        for node in g.copies:
            out = values[node.name]
            given = [values[name] for name in node.inputs if isinstance(values[name], torch.Tensor)]
            # a new storage, holding only values its inputs hold (moved, not computed)
            assert all(_storage(out) != _storage(t) for t in given)
            pool = torch.cat([t.flatten() for t in given])
            assert torch.isin(out.flatten(), pool).all(), node.name
            assert node.bytes == out.numel() * out.element_size()
            assert "moves data" in node.reason
        assert {n.target for n in g.copies} >= ({"aten.roll"} if stage == "backward" else set())


def test_the_note_names_the_backend_compiled_with():
    x = torch.randn(8, 8)
    for backend in ("eager", "aot_eager", "inductor"):
        note = sw.audit(torch.compile(Moves(), backend=backend), x).note
        assert f"backend={backend!r}" in note and "would hand" in note
        assert ("neither AOTAutograd nor Inductor" in note) == (backend == "eager")
    assert "not known" in backend_note(None)


def test_view_strides_is_torchs_view_rule():
    shapes = [(), (1,), (0,), (2, 3), (3, 1, 4), (2, 0, 3), (2, 3, 4), (4, 1, 2, 3)]
    targets = [
        t for k in range(4) for t in itertools.product([1, 2, 3, 4, 6, 12, 24, -1], repeat=k)
    ]
    checked = 0
    for shape in shapes:
        for order in itertools.permutations(range(len(shape))):
            dense = torch.empty([shape[i] for i in order], device="meta")
            x = dense.permute([order.index(i) for i in range(len(shape))])
            for t in targets:
                if t.count(-1) > 1:
                    continue
                try:
                    want = tuple(x.view(t).stride())
                except RuntimeError:
                    want = None
                if want is None and -1 in t and 0 in x.shape:
                    continue  # torch refuses to infer -1 of an empty tensor
                assert view_strides(x.shape, x.stride(), t) == want, (x.shape, x.stride(), t)
                checked += 1
    assert checked > 10000


class Tokens(nn.Module):
    def __init__(self):
        super().__init__()
        self.l = nn.Linear(4, 4)

    def forward(self, x):
        return self.l(x.transpose(1, 2)).reshape(x.shape[0], -1)


def test_a_loaded_program_keeps_its_views(tmp_path):
    x = torch.randn(3, 4, 4)
    ep = torch.export.export(Tokens(), (x,))
    torch.export.save(ep, tmp_path / "ep.pt2")
    loaded = torch.export.load(tmp_path / "ep.pt2")
    for stage in ("export", "aten"):
        ours = sw.graph(loaded, x, stage=stage)
        # the oracle: the same graph, run on real tensors
        real = ours.run()
        for node in ours.nodes:
            if node.op != "call_function" or not isinstance(real.get(node.name), torch.Tensor):
                continue
            inputs = [real[n] for n in node.inputs if isinstance(real.get(n), torch.Tensor)]
            shares = any(_storage(real[node.name]) == _storage(t) for t in inputs)
            if node.kind == "view":
                assert shares, (stage, node.name)
            elif node.kind in ("copy", "compute"):
                assert not shares, (stage, node.name)
        assert not ours.copies, [(n.name, n.kind) for n in ours.copies]


class Writes(nn.Module):
    def forward(self, x, src):
        y = x * 1
        y.t().mul_(2)
        y[0] = src[0]
        return y


def test_backward_clones_say_autograd_made_them():
    x, src = torch.randn(3, 4, requires_grad=True), torch.randn(1, 4, requires_grad=True)
    g = sw.graph(Writes(), x, src, stage="backward")
    clones = [n for n in g.copies if n.target == "aten.clone"]
    assert len(clones) == 2  # one per in-place op on a view (the user wrote no clone())
    for node in clones:
        assert "explicit" not in node.reason and "CopySlices" in node.reason
    real = g.run()
    for node in (n for n in g.copies if n.target == "aten.copy"):
        # functional copy: a new tensor, not a write into an existing one
        assert all(_storage(real[node.name]) != _storage(real[i]) for i in node.inputs)
        assert "existing tensor" not in node.reason and "functional form" in node.reason


def test_detach_in_place_writes_no_data():
    def detaches(x):
        y = x * 2
        y.detach_()
        return y + 1

    x = torch.randn(3, 4)
    g = sw.graph(detaches, x, stage="export")
    (node,) = [n for n in g.nodes if n.target == "aten.detach_"]
    real = g.run()
    y = real[node.inputs[0]]
    assert _storage(real[node.name]) == _storage(y) and torch.equal(y, x * 2)
    assert node.kind == "view" and node.bytes == 0 and not node.moves


@torch.library.custom_op("swkinds2::halve_", mutates_args=("x",))
def halve_(x: torch.Tensor) -> None:
    x.mul_(0.5)


@halve_.register_fake
def _(x):
    return None


def test_in_place_nodes_at_export_carry_the_bytes_they_write():
    model = nn.BatchNorm1d(3)
    x = torch.randn(4, 3)
    g = sw.graph(model, x, stage="export")
    real = g.run()
    before = dict(model.named_buffers())
    norm = next(n for n in g.nodes if n.target == "aten.batch_norm")
    # the oracle: the graph run on real tensors writes the running statistics
    for name in ("b_running_mean", "b_running_var"):
        assert not torch.equal(real[name], before[name.removeprefix("b_")])
    stats = before["running_mean"].nbytes + before["running_var"].nbytes
    assert norm.kind == "in-place" and norm.bytes == stats and "running" in norm.reason
    (add,) = [n for n in g.nodes if n.target == "aten.add_"]
    assert add.bytes == before["num_batches_tracked"].nbytes and add.moves

    def halves(x):
        y = x * 2
        halve_(y)
        return y

    g = sw.graph(halves, x, stage="export")
    (node,) = [n for n in g.nodes if n.target.startswith("swkinds2")]
    assert node.kind == "in-place" and node.bytes == x.nbytes
