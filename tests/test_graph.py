"""sw.graph on a module zoo, checked against the graphs' own FakeTensors and against the graphs
replayed eagerly on real tensors (torch.fx.Interpreter); symbolic shapes never guard."""

from __future__ import annotations

import html
import pathlib

import pytest
import torch
from torch.export import Dim

import stridewidget as sw
from stridewidget.adapters.symbolic import SymbolicLayout


def _expr(value):
    return str(value.node.expr) if isinstance(value, torch.SymInt) else int(value)


def _fields(shape, strides, offset):
    return tuple(map(_expr, shape)), tuple(map(_expr, strides)), _expr(offset)


# --- the zoo ------------------------------------------------------------------------------------


class Tokens(torch.nn.Module):
    """(B, C, H, W) feature map -> (B, H*W, C) tokens, a linear layer, back to channels first."""

    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)

    def forward(self, x):
        t = x.permute(0, 2, 3, 1).reshape(x.shape[0], -1, x.shape[1])
        return self.lin(t).transpose(1, 2).contiguous()


class Heads(torch.nn.Module):
    """Attention with a packed q/k/v split by reshape + permute; the head merge's reshape of a
    transposed tensor copies."""

    def __init__(self, dim=8, heads=2):
        super().__init__()
        self.qkv = torch.nn.Linear(dim, 3 * dim)
        self.heads = heads

    def forward(self, x):
        b, n, c = x.shape
        qkv = self.qkv(x).reshape(b, n, 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        weights = (q @ k.transpose(-2, -1) * (c // self.heads) ** -0.5).softmax(-1)
        return (weights @ v).transpose(1, 2).reshape(b, n, c)


class ChannelsLastConv(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(4, 4, 3, padding=1)

    def forward(self, x):
        return self.conv(x).relu().flatten(2)


@torch.library.custom_op("swtest::rowscale", mutates_args=())
def rowscale(x: torch.Tensor) -> torch.Tensor:
    """Needs a row-major input; returns a contiguous result."""
    assert x.is_contiguous(), "swtest::rowscale needs a contiguous input"
    return x * torch.arange(1, x.shape[-1] + 1, dtype=x.dtype)


@rowscale.register_fake
def _(x):
    return torch.empty_like(x)


@torch.library.custom_op("swtest::rowscale_wrong_fake", mutates_args=())
def rowscale_wrong_fake(x: torch.Tensor) -> torch.Tensor:
    return x.t().contiguous().t() * 2  # column-major result ...


@rowscale_wrong_fake.register_fake
def _(x):
    return torch.empty_like(x)  # ... but the fake kernel claims row-major


class CustomOp(torch.nn.Module):
    def forward(self, x):
        return rowscale(x.t().contiguous())


class WrongFake(torch.nn.Module):
    def forward(self, x):
        return rowscale_wrong_fake(x) + 1


class Sdpa(torch.nn.Module):
    """Fused attention: eager's CPU kernel and the decomposed (math) graph give other strides."""

    def forward(self, x):
        b, t, c = x.shape
        q = x.view(b, t, 2, c // 2).transpose(1, 2)
        out = torch.nn.functional.scaled_dot_product_attention(q, q, q)
        return out, out.transpose(1, 2).reshape(b, t, c)


ZOO = {
    "tokens": (Tokens, lambda: (torch.randn(2, 8, 3, 4),)),
    "heads": (Heads, lambda: (torch.randn(2, 5, 8),)),
    "channels_last": (
        lambda: ChannelsLastConv().to(memory_format=torch.channels_last),
        lambda: (torch.randn(2, 4, 5, 5).contiguous(memory_format=torch.channels_last),),
    ),
    "custom_op": (CustomOp, lambda: (torch.randn(3, 4),)),
    "sdpa": (Sdpa, lambda: (torch.randn(2, 5, 8, requires_grad=True),)),
}


def _storages(value):
    if isinstance(value, torch.Tensor):
        return [value.untyped_storage().data_ptr()]
    if isinstance(value, (tuple, list)):
        return [p for v in value for p in _storages(v)]
    return []


def _check_graph(g):
    """Every layout is the graph's FakeTensor; every copy/view is one when replayed for real."""
    assert g.nodes, "an empty graph"
    runs = [g.run(i) for i in range(len(g.graphs))]
    for node in g.nodes:
        real = runs[node.graph]
        val = node.node.meta.get("val")
        if isinstance(val, torch.Tensor):
            lay = node.layout
            assert _fields(lay.shape, lay.strides, lay.offset) == _fields(
                val.shape, val.stride(), val.storage_offset()
            ), node.name
        if node.op != "call_function" or not isinstance(real.get(node.name), torch.Tensor):
            continue
        out = set(_storages(real[node.name]))
        # an item of a tuple is checked against the inputs of the op that made the tuple
        made_by = node.node
        if node.target == "getitem" and made_by.args[0].op == "call_function":
            made_by = made_by.args[0]
        given = {p for a in made_by.all_input_nodes for p in _storages(real.get(a.name))}
        if node.kind == "copy":
            assert not out & given, f"{node.name} is called a copy but shares an input's storage"
            assert node.bytes == real[node.name].numel() * real[node.name].element_size()
            assert node.reason
        elif node.kind == "view":
            assert out & given, f"{node.name} is called a view but has its own storage"
        elif node.kind == "compute":
            assert not out & given, f"{node.name} is called compute but aliases an input"


# swtest::rowscale has no autograd formula, so its model has no backward graph
CASES = [
    (c, s) for c in sorted(ZOO) for s in sw.graph.STAGES if (c, s) != ("custom_op", "backward")
]


@pytest.mark.parametrize(("case", "stage"), CASES)
def test_zoo_layouts_and_copies(case, stage):
    make_model, make_inputs = ZOO[case]
    g = sw.graph(make_model(), *make_inputs(), stage=stage)
    assert g.stage == stage
    _check_graph(g)


@pytest.mark.parametrize("stage", ["aten", "forward"])
def test_dynamic_batch_zoo(stage):
    x = torch.randn(4, 5, 8)
    model = Heads()
    g = sw.graph(model, x, dynamic_shapes={"x": {0: Dim("batch")}}, stage=stage)
    assert any(isinstance(n.layout, SymbolicLayout) for n in g.nodes)
    _check_graph(g)
    if g.program is not None:
        assert g.program.module()(torch.randn(7, 5, 8)).shape == (7, 5, 8)


def test_reasons_and_user_lines():
    g = sw.graph(Tokens(), torch.randn(2, 8, 3, 4), stage="forward")
    reasons = {n.reason for n in g.copies}
    assert any("reshape of a non-viewable input" in r for r in reasons), reasons
    assert any(".contiguous()" in r for r in reasons), reasons
    this_file = __file__.rsplit("/", 1)[-1]
    lines = {n.where for n in g.copies}
    assert all(this_file in w for w in lines), lines
    source = pathlib.Path(__file__).read_text().splitlines()
    contiguous_copy = next(n for n in g.copies if ".contiguous()" in n.reason)
    line = int(contiguous_copy.where.rsplit(":", 1)[1])
    assert ".contiguous()" in source[line - 1]


def test_custom_op_stride_requirement_is_a_copy_before_it():
    g = sw.graph(CustomOp(), torch.randn(3, 4), stage="aten")
    (op_node,) = [n for n in g.nodes if n.target == "swtest.rowscale"]
    (before,) = [n for n in g.nodes if n.name in op_node.inputs]
    assert before.kind == "copy" and before.layout.is_contiguous
    assert not g.compare_eager()


def test_compare_eager_finds_a_wrong_fake_kernel():
    x = torch.randn(3, 4)
    eager = rowscale_wrong_fake(x)
    for stage in ("export", "forward"):
        mismatches = sw.graph(WrongFake(), x, stage=stage).compare_eager()
        # the graph's output, and the custom op's own output (where the lie starts)
        assert [m.what for m in mismatches] == [
            "output 0",
            "output 0 of swtest::rowscale_wrong_fake",
        ]
        # the eager side is torch's own answer; the compiled side the graph's FakeTensor
        (eager_out,) = [(eager + 1).stride()]
        assert mismatches[0].eager_strides == eager_out == (1, 3)
        assert mismatches[1].eager_strides == eager.stride()
        assert mismatches[0].compiled_strides == mismatches[1].compiled_strides == (4, 1)


def _differ(a, b):
    """Strides that differ on some dim longer than 1 (torch ignores the others)."""
    return any(n != 1 and x != y for n, x, y in zip(a.shape, a.stride(), b.stride()))


@pytest.mark.parametrize("stage", ["export", "aten"])
@pytest.mark.parametrize("case", sorted(ZOO))
def test_compare_eager_against_running_the_program(case, stage):
    """The oracle: the exported program run for real on the same inputs, beside eager."""
    make_model, make_inputs = ZOO[case]
    model, inputs = make_model(), make_inputs()
    g = sw.graph(model, *inputs, stage=stage)
    eager = torch.utils._pytree.tree_leaves(model(*inputs))
    ran = torch.utils._pytree.tree_leaves(g.program.module()(*inputs))
    expected = [f"output {i}" for i, (e, r) in enumerate(zip(eager, ran)) if _differ(e, r)]
    assert [m.what for m in g.compare_eager() if m.what.startswith("output")] == expected
    if case == "sdpa" and stage == "aten":
        assert expected, "the decomposed attention no longer differs from eager: pick another case"


def test_compare_eager_is_empty_when_strides_agree():
    assert sw.graph(Heads(), torch.randn(2, 5, 8), stage="aten").compare_eager() == []


def test_model_is_left_as_found():
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.BatchNorm1d(4))
    before = {k: v.clone() for k, v in model.state_dict().items()}
    sw.graph(model, torch.randn(8, 4), stage="backward")
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())
    assert all(p.grad is None for p in model.parameters())


def test_compiled_wrapper_and_exported_program_are_accepted():
    model, (x,) = Tokens(), ZOO["tokens"][1]()
    g = sw.graph(torch.compile(model), x, stage="export")
    # merging H and W of the permuted map is a view (eager says so too); the transpose's
    # .contiguous() is the one copy
    permuted = x.permute(0, 2, 3, 1)
    assert sw.same_storage(permuted, permuted.reshape(2, -1, 8))
    assert [n.name for n in g.copies] == ["contiguous"]
    program = torch.export.export(model, (x,))
    assert [n.name for n in sw.graph(program, stage="export").nodes] == [n.name for n in g.nodes]
    with pytest.raises(ValueError, match="stage must be one of"):
        sw.graph(model, x, stage="inductor")


def test_html_table_escapes_and_draws_copies():
    g = sw.graph(Heads(), torch.randn(2, 5, 8), stage="aten")
    page = g._repr_html_()
    assert page.count("<tr") == len(g.nodes) + 1
    assert page.count("<svg") >= len(g.copies[:3]) and "<script" not in page
    for node in g.copies:
        assert html.escape(node.reason) in page


# --- symbolic shapes: looking never guards --------------------------------------------------------


class Dynamic(torch.nn.Module):
    def forward(self, x):
        tokens = x.permute(0, 2, 1).reshape(x.shape[0], -1)
        gapped = x[:, :, ::2]  # never overlaps, whatever the batch
        return tokens * 2, torch.nonzero(x[0] > 0), x[:, None].expand(-1, 2, -1, -1), gapped


def test_dynamic_batch_is_not_guarded_by_looking():
    x = torch.randn(4, 3, 5)
    program = torch.export.export(Dynamic(), (x,), dynamic_shapes={"x": {0: Dim("batch")}})
    vals = [
        n.meta["val"] for n in program.graph.nodes if isinstance(n.meta.get("val"), torch.Tensor)
    ]
    shape_env = vals[0].fake_mode.shape_env
    guards = list(shape_env.guards)
    for val in vals:
        lay = sw.inspect(val)
        str(lay), lay.explain(), lay.to_dict(), lay.flags, lay.span, lay.in_bounds
        sw.render_text(val), sw.render_svg(val)
    sw.show(*vals).refresh()  # the live widget too
    g = sw.graph(program, stage="export")
    g._repr_html_(), repr(g)
    assert list(shape_env.guards) == guards
    decomposed = program.run_decompositions()
    out = decomposed.module()(torch.randn(7, 3, 5))
    assert out[0].shape == (7, 15)


def test_dynamic_layouts_are_drawn_with_symbols():
    program = torch.export.export(
        Dynamic(), (torch.randn(4, 3, 5),), dynamic_shapes={"x": {0: Dim("batch")}}
    )
    by_name = {n.name: n.meta.get("val") for n in program.graph.nodes}
    permuted = sw.inspect(by_name["permute"])
    assert isinstance(permuted, SymbolicLayout) and isinstance(permuted, sw.Layout)
    (batch,) = permuted.symbols
    assert str(permuted).startswith(f"float32 ({batch},5,3):(15,1,5) +0")
    assert permuted.facts["dense"] is True and permuted.facts["contiguous"] is False
    text = sw.render_text(by_name["permute"])
    assert f"({batch},5,3):(15,1,5)" in text and f"drawn at {batch}=4" in text
    assert f"({batch},5,3)" in sw.render_svg(by_name["permute"])
    nonzero = sw.inspect(by_name["nonzero"])  # an unbacked size: no GuardOnDataDependentSymNode
    (unbacked,) = nonzero.symbols
    assert nonzero.facts["contiguous"] == f"depends on {unbacked}"
    assert nonzero.facts["F-contiguous"] is True  # (u0, 2):(1, u0) whatever u0 is
    assert f"contiguous depends on {unbacked}" in str(nonzero)
    expanded = sw.inspect(by_name["expand"])
    assert expanded.has_overlap and not expanded.is_dense
    gapped = next(v for k, v in by_name.items() if k.startswith("slice") and v.shape[2] == 3)
    assert sw.inspect(gapped).facts["overlapping"] is False
    shape_env = gapped.fake_mode.shape_env
    guards = list(shape_env.guards)
    with pytest.raises(sw.LayoutError, match="symbolic"):
        sw.overlap(gapped, by_name["x"])  # deciding it would guard: refused, clearly
    assert sw.same_storage(gapped, by_name["x"]) and list(shape_env.guards) == guards


def test_symbolic_facts_against_concrete_instances():
    """Each proven fact holds at every size (brute force: the Layout of ints at that size); an
    open one really differs between sizes."""
    program = torch.export.export(
        Dynamic(), (torch.randn(4, 3, 5),), dynamic_shapes={"x": {0: Dim("batch")}}
    )
    attributes = {
        "contiguous": "is_contiguous",
        "F-contiguous": "is_f_contiguous",
        "channels-last": "is_channels_last",
        "dense": "is_dense",
        "overlapping": "has_overlap",
    }
    checked = 0
    for node in program.graph.nodes:
        val = node.meta.get("val")
        lay = sw.inspect(val) if isinstance(val, torch.Tensor) else None
        if not isinstance(lay, SymbolicLayout):
            continue
        for size in (2, 3, 9):  # an exported dynamic dim is at least 2 (torch specializes 0 and 1)
            concrete = sw.Layout(_at(lay.shape, size), _at(lay.strides, size))
            for name, fact in lay.facts.items():
                if isinstance(fact, bool):
                    assert getattr(concrete, attributes[name]) == fact, (node.name, name, size)
                    checked += 1
    assert checked > 100
    nonzero = sw.inspect(next(n for n in program.graph.nodes if n.name == "nonzero").meta["val"])
    answers = {
        sw.Layout(_at(nonzero.shape, u), _at(nonzero.strides, u)).is_contiguous for u in (1, 3)
    }
    assert nonzero.facts["contiguous"].startswith("depends on") and answers == {True, False}


def _at(values, size):
    """The ints of symbolic entries with every symbol set to ``size``."""
    return tuple(
        int(v.node.expr.subs({s: size for s in v.node.expr.free_symbols}))
        if isinstance(v, torch.SymInt)
        else int(v)
        for v in values
    )


def test_audit_of_a_compiled_model_reports_the_compiled_program():
    model, (x,) = Heads(), ZOO["heads"][1]()
    report = sw.audit(torch.compile(model), x)
    assert isinstance(report, sw.graph.CompiledAudit)
    expected = [
        (stage, node.name, node.bytes)
        for stage in ("forward", "backward")
        for node in sw.graph(model, x, stage=stage).copies
    ]
    assert [(c.stage, c.name, c.bytes) for c in report.copies] == expected
    assert report.total_bytes == sum(b for _, _, b in expected) > 0
    assert "compiled program" in report.summary() and all(
        p.grad is None for p in model.parameters()
    )
    with pytest.warns(UserWarning, match="eager model"):  # never silently the eager model
        eager = sw.audit(torch.compile(model), x, loss_fn=lambda out: out.sum())
    assert "compile" in eager.note


def _helper(x):
    return x.t().reshape(-1)  # the copy's line, inside a helper


def test_where_is_the_users_line_inside_helpers_and_across_graph_breaks():
    def fn(x):
        y = x.t().contiguous()
        torch._dynamo.graph_break()
        return _helper(y) + 1

    x = torch.randn(3, 4)
    source = pathlib.Path(__file__).read_text().splitlines()
    for stage in ("export", "forward"):
        target = _helper if stage == "export" else fn
        g = sw.graph(target, x, stage=stage)
        if stage == "forward":
            assert len(g.graphs) == 2
            _check_graph(g)
        lines = [source[int(n.where.rsplit(":", 1)[1]) - 1] for n in g.copies]
        assert lines and any("inside a helper" in line for line in lines), lines


class _Doubles(torch.nn.Module):  # its own forward code object: dynamo's limit is per code object
    def forward(self, x):
        return x.t() * 2


def test_past_dynamo_s_recompile_limit_a_capture_says_so_and_resets_nothing():
    # past the limit dynamo runs the model eagerly, silently: the capture says so, and leaves
    # the user's compiled code in dynamo's cache (no torch._dynamo.reset())
    compiles = []
    model, x = _Doubles(), torch.randn(3, 4)
    users = torch.compile(model, backend=lambda gm, _: compiles.append(gm) or gm.forward)
    with torch._dynamo.config.patch(recompile_limit=1):
        users(x)
        with pytest.raises(ValueError, match="recompile_limit"):
            sw.graph(model, x, stage="forward")
        users(x)
    assert len(compiles) == 1
