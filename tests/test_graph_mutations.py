"""#26, third round: what sw.graph says about mutations and multi-output ops, each checked
against an oracle the package does not compute: the graph run eagerly on real tensors (their
storages, their values), the eager model, torch's own FakeTensor storages and graph signature."""

from __future__ import annotations

import copy

import torch

import stridewidget as sw
from stridewidget.graph.nodes import describe


@torch.library.custom_op("swmut::scale_", mutates_args=("x",))
def scale_(x: torch.Tensor, s: float) -> None:
    x.mul_(s)


@scale_.register_fake
def _(x, s):
    return None


def _scales_a_temporary(x):
    y = x * 2
    scale_(y, 3.0)
    return y + 1


def _scales_a_slice(x):
    y = x * 2
    scale_(y[1:], 3.0)  # the op writes a view: the base (all of y) is what a clone copies
    return y + 1


def _scales_its_input(x):
    scale_(x, 3.0)
    return x + 1


def _ptrs(value):
    if isinstance(value, torch.Tensor):
        return {value.untyped_storage().data_ptr()}
    if isinstance(value, (tuple, list)):
        return {p for v in value for p in _ptrs(v)}
    return set()


def _run_recorded(module, *args):
    """Every node's real value, by name, of ``module`` run eagerly on ``args``."""
    real = {}

    class Recorder(torch.fx.Interpreter):
        def run_node(self, n):
            real[n.name] = super().run_node(n)
            return real[n.name]

    Recorder(module).run(*args)
    return real


def _functionalized(g):
    found = [n for n in g.nodes if n.target.startswith("auto_functionalized")]
    assert found, "no auto_functionalized node: torch no longer functionalizes this op"
    return found


def _written_by_hand(fn, x):
    """(the base as the graph hands it over, the base after the op wrote it), in eager torch."""
    if fn is _scales_its_input:
        return x, x * 3
    y = x * 2
    after = y.clone()
    (after[1:] if fn is _scales_a_slice else after).mul_(3)
    return y, after


def _check_against_the_eager_run(g, fn, x):
    for node in _functionalized(g):
        real = g.run()
        given = {p for a in node.node.all_input_nodes for p in _ptrs(real[a.name])}
        made = [t for t in real[node.name] if isinstance(t, torch.Tensor)]
        # the truth of the graph as it runs: the new values sit in storages of their own (a
        # clone) and the clone holds the op's result
        assert made and not _ptrs(made) & given
        (base,) = [a for a in node.node.all_input_nodes]
        before, after = _written_by_hand(fn, x)
        assert torch.equal(made[0], after)
        # a temporary keeps its values; an input is written back after the graph, as eager does
        kept = after if base.op == "placeholder" else before
        assert torch.equal(real[base.name], kept)
        assert node.kind == "copy" and node in g.copies and node.moves
        # what the clone copies: torch's own allocation for it
        assert node.bytes == sum(t.untyped_storage().nbytes() for t in made)
        assert "swmut::scale_" in node.reason and "in place" in node.reason
        assert f"clones {base.name}" in node.reason


def test_auto_functionalized_is_the_copy_it_makes_when_run():
    x = torch.randn(3, 4)
    for fn in (_scales_a_temporary, _scales_a_slice, _scales_its_input):
        for stage in ("aten", "forward"):
            _check_against_the_eager_run(sw.graph(fn, x, stage=stage), fn, x)


def test_auto_functionalized_v1_is_the_copy_it_makes_when_run(monkeypatch):
    import torch._inductor.config as inductor_config

    monkeypatch.setattr(inductor_config, "enable_auto_functionalized_v2", False)
    x = torch.randn(5, 4)  # a size of its own: a fresh dynamo entry, traced with v1
    g = sw.graph(_scales_a_temporary, x, stage="forward")
    assert [n.target for n in _functionalized(g)] == ["auto_functionalized"]
    _check_against_the_eager_run(g, _scales_a_temporary, x)


def test_auto_functionalized_told_not_to_clone_writes_in_place():
    # Inductor's reinplacing leaves bases out of `_only_clone_these_bases`: the node then writes
    # them in place.  The oracle: a copy of the graph with that argument, run on real tensors.
    x = torch.randn(3, 4)
    g = sw.graph(_scales_a_temporary, x, stage="aten")
    gm = g.program.graph_module
    copied = torch.fx.Graph()
    out = copied.graph_copy(gm.graph, {})
    copied.output(out)
    (node,) = [n for n in copied.nodes if str(n.target).endswith("auto_functionalized_v2")]
    node.kwargs = {**node.kwargs, "_only_clone_these_bases": ()}
    real = _run_recorded(torch.fx.GraphModule(gm, copied), x.clone())
    (base,) = node.all_input_nodes
    assert _ptrs(real[node.name]) & _ptrs(real[base.name])  # written where it was
    assert torch.equal(real[base.name], x * 6)
    described = describe(node, "aten")
    assert described.kind == "in-place" and described.moves
    assert described.bytes == x.numel() * x.element_size()
    assert f"writes {base.name} in place" in described.reason


class _MultiOutput(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3)
        self.bn = torch.nn.BatchNorm2d(4)
        self.pool = torch.nn.MaxPool2d(2, return_indices=True)
        self.ln = torch.nn.LayerNorm(3)

    def forward(self, x):
        y, idx = self.pool(self.bn(self.conv(x)))
        a, b = y.split(2, dim=1)
        c = torch.unbind(b, 1)[0]
        d = y.chunk(2, dim=1)[1]
        return self.ln(a[..., :3]), idx, c, d


def test_an_item_of_a_tuple_is_the_output_itself_and_of_a_split_a_view():
    x = torch.randn(2, 3, 8, 8, requires_grad=True)
    producers = {"aten": set(), "forward": set(), "backward": set()}
    for stage in producers:
        g = sw.graph(_MultiOutput(), x, stage=stage)
        real = g.run()
        for node in g.nodes:
            if node.op != "call_function" or node.target != "getitem":
                continue
            producer = node.node.args[0]
            producers[stage].add(str(producer.target).split(".")[-2])
            # the oracle: the real item against the real inputs of the op that made it
            given = {p for a in producer.all_input_nodes for p in _ptrs(real[a.name])}
            expected = "view" if _ptrs(real[node.name]) & given else "compute"
            assert node.kind == expected, (stage, node.name, producer.target)
    assert {"_native_batch_norm_legit_functional", "max_pool2d_with_indices"} <= producers["aten"]
    assert {"split", "unbind", "native_layer_norm"} <= producers["forward"]
    assert {"convolution_backward", "native_batch_norm_backward"} <= producers["backward"]


def _bn():
    bn = torch.nn.BatchNorm2d(3).train()
    with torch.no_grad():  # statistics of their own, so each buffer's new value is its own
        bn.running_mean.copy_(torch.randn(3))
        bn.running_var.copy_(torch.rand(3) + 0.5)
        bn.num_batches_tracked.fill_(7)
    return bn


def _eager_writes(model, *args):
    """Each buffer's value after one eager step: torch's own answer (the model is left alone)."""
    twin = copy.deepcopy(model)
    twin(*args)
    return dict(twin.named_buffers())


def _check_writebacks(g, expected, expect_in_place_ptr=True):
    real = g.run()
    written = [n for n in g.nodes if n.kind == "in-place" and n.target == "aten.copy_"]
    matched = set()
    for node in written:
        dest, source = node.inputs
        value = real[node.name]
        # in place: the written tensor is the destination's storage, the new value another's
        assert _ptrs(value) == _ptrs(real[dest]) and not _ptrs(value) & _ptrs(real[source])
        found = [k for k, v in expected.items() if v.dtype == value.dtype and torch.equal(v, value)]
        assert len(found) == 1, (node.name, found)
        matched.add(found[0])
        assert node.bytes == value.numel() * value.element_size() and node.moves
        assert "writeback" in node.reason and source in node.reason
    assert matched == set(expected)
    # the writebacks run after the graph: just before its output
    names = [n.name for n in g.nodes]
    assert names[-1 - len(written) : -1] == [n.name for n in written]


def test_batchnorm_training_writes_its_running_statistics_in_place():
    x = torch.randn(2, 3, 4, 4)
    bn = _bn()
    expected = _eager_writes(bn, x)
    before = {k: v.clone() for k, v in bn.named_buffers()}
    for stage in ("aten", "forward"):
        g = sw.graph(bn, x, stage=stage)
        _check_writebacks(g, expected)
        if stage == "forward":
            assert all(f"(buffer {k})" in " ".join(n.reason for n in g.nodes) for k in expected)
        else:  # torch's own unlifted module copies into the same buffers
            copied = {
                n.args[0].target
                for n in g.program.module().graph.nodes
                if n.target is torch.ops.aten.copy_.default
            }
            assert copied == set(expected)
    # the compiled program itself (aot_eager: AOTAutograd, no Inductor) writes them in place
    ptrs = {k: v.data_ptr() for k, v in bn.named_buffers()}
    torch.compile(bn, backend="aot_eager")(x)
    for name, buffer in bn.named_buffers():
        assert buffer.data_ptr() == ptrs[name] and torch.equal(buffer, expected[name])
        assert not torch.equal(buffer, before[name])


def test_a_custom_op_that_writes_its_input_is_written_back_in_place():
    x = torch.randn(3, 4)
    eager = x.clone()
    _scales_its_input(eager)
    for stage in ("aten", "forward"):
        _check_writebacks(sw.graph(_scales_its_input, x, stage=stage), {"x": eager})


@torch.library.custom_op("swmut::turned", mutates_args=())
def turned(x: torch.Tensor) -> torch.Tensor:
    return x.t().contiguous()


@turned.register_fake
def _(x):
    return x.new_empty(x.shape)  # the lie: the real op returns the other shape


def test_compare_eager_says_a_shape_differs_rather_than_its_strides():
    x = torch.randn(3, 4)
    eager = turned(x)  # torch's own answer: (4, 3)
    for stage in ("export", "forward"):
        g = sw.graph(turned, x, stage=stage)
        found = g.compare_eager()
        fake = next(n.node.meta["val"] for n in g.nodes if n.target == "swmut.turned")
        assert [m.what for m in found] == [
            "output 0 (shape differs)",
            "output 0 of swmut::turned (shape differs)",
        ]
        assert all(m.shape_differs for m in found)
        for m in found:
            assert m.eager_shape == tuple(eager.shape) and m.shape == tuple(fake.shape)
            assert m.eager_strides == eager.stride()


class _Merges(torch.nn.Module):
    def forward(self, x):
        b, t, c = x.shape
        y = x[:, 1:].transpose(1, 2)  # t - 1 rows: a clone whose strides carry Max(1, t - 1)
        return y.reshape(b, -1), x.view(b, t, 2, c // 2).transpose(1, 2).contiguous()


def test_symbolic_storage_text_is_simplified_without_a_guard():
    import sympy
    from torch.export import Dim

    x = torch.randn(4, 5, 8)
    shapes = {"x": {0: Dim("b"), 1: Dim("t", min=3)}}
    g = sw.graph(_Merges(), x, dynamic_shapes=shapes, stage="aten")
    fakes = {n.name: n.node.meta["val"] for n in g.nodes if n.layout is not None}
    shape_env = fakes["x"].fake_mode.shape_env
    guards = list(shape_env.guards)
    texts = {name: str(g[name].layout).split(" · storage ")[1].split(" · ")[0] for name in fakes}
    assert list(shape_env.guards) == guards  # printing decided nothing
    # the oracle: the program run for real at other sizes; each storage's size in elements
    # against the printed expression at those sizes (symbols bound from the real input)
    (b, t) = (str(s.node.expr) for s in fakes["x"].shape[:2])
    for sizes in ((3, 7), (6, 3)):
        ran = _run_recorded(g.program.graph_module, torch.randn(*sizes, 8))
        for name, text in texts.items():
            value = ran[name]
            size = value.untyped_storage().nbytes() // value.element_size()
            expr = sympy.sympify(text, locals={"Max": sympy.Max})
            assert int(expr.subs({b: sizes[0], t: sizes[1]})) == size, (name, text)
            # simplified: as short as its own expansion, and no Max that t >= 3 decides
            assert len(text) <= len(str(sympy.expand(expr))) and "Max" not in text, text
