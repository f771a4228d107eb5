"""sw.graph leaves the user's dynamo state, tensors and buffers as they were, and compare_eager
matches the right nodes (mutated inputs, graph breaks, unbacked sizes, gradients, grad mode):
regressions found in review, each against an independent oracle (a counting torch.compile
backend, real eager runs, raw storage)."""

from __future__ import annotations

import pytest
import torch
from torch.export import Dim

import stridewidget as sw


class _Counting:
    """A torch.compile backend that counts its compiles and the runs of what it compiled."""

    def __init__(self):
        self.compiles = self.runs = 0

    def __call__(self, gm, example_inputs):
        self.compiles += 1

        def run(*args):
            self.runs += 1
            return gm.forward(*args)

        return run


class _LinT(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)

    def forward(self, x):
        return self.lin(x).t().contiguous()


def test_captures_leave_the_users_compiles_alone():
    other, other_backend = (lambda x: x.sin() + 1), _Counting()
    other_compiled = torch.compile(other, backend=other_backend)
    other_compiled(torch.randn(3))
    model, x = _LinT(), torch.randn(3, 4)
    for _ in range(20):  # past dynamo's recompile limit (8) if each capture added an entry
        sw.graph(model, x, stage="forward")
    mine = _Counting()
    compiled = torch.compile(model, backend=mine)
    compiled(x), compiled(x)
    assert (mine.compiles, mine.runs) == (1, 2)  # compiled, not silently eager
    other_compiled(torch.randn(3))
    assert (other_backend.compiles, other_backend.runs) == (1, 2)  # no reset, no recompile


def _mutates_then_copies(x):
    x.mul_(2)
    return x.contiguous()


def _breaks(x):
    y = x.t() * 1
    torch._dynamo.graph_break()
    return y.contiguous()


class _Unbacked(torch.nn.Module):
    def forward(self, x):
        return torch.nonzero(x > 0).t().contiguous()


@pytest.mark.parametrize(
    "fn, x, stage",
    [
        (_mutates_then_copies, torch.randn(4, 4).t(), "forward"),  # mutated input, same shape
        (_breaks, torch.randn(4, 4), "forward"),  # the user's output is the last graph's
        (_Unbacked(), torch.tensor([[1.0, -1, 2, 3, -1], [1, 1, -1, 1, 1]]), "export"),
    ],
)
def test_compare_eager_finds_the_users_outputs(fn, x, stage):
    eager = fn(x.clone().t().contiguous().t() if not x.is_contiguous() else x.clone())
    g = sw.graph(fn, x, stage=stage)
    mismatches = g.compare_eager()
    assert eager.is_contiguous() and mismatches == [], (eager.stride(), mismatches)


@torch.library.custom_op("swlooking::transposed", mutates_args=())
def _transposed(x: torch.Tensor) -> torch.Tensor:
    return x.t().contiguous().t() * 1  # really column-major


@_transposed.register_fake
def _(x):
    return torch.empty_like(x, memory_format=torch.contiguous_format)  # claims row-major


_transposed.register_autograd(lambda ctx, grad: _transposed(grad))


def test_compare_eager_compares_gradients_at_the_backward_stage():
    def fn(x):
        return _transposed(x) * 2

    x = torch.randn(4, 5, requires_grad=True)
    (real,) = torch.autograd.grad(fn(x).sum(), x)
    mismatches = sw.graph(fn, x, stage="backward").compare_eager()
    # the backward's custom op, run for real: its input is the gradient eager hands it (laid
    # out as the forward's column-major output), its output the kernel's own column-major
    grad_in = torch.ones_like(_transposed(x.detach()) * 2).stride()
    op_out = _transposed(torch.ones(4, 5)).stride()
    assert [(m.what, m.eager_strides, m.compiled_strides) for m in mismatches] == [
        ("gradient of input 0", real.stride(), (5, 1)),
        ("input 0 of swlooking::transposed", grad_in, (5, 1)),
        ("output 0 of swlooking::transposed", op_out, (5, 1)),
    ]
    assert real.stride() != (5, 1) and x.grad is None


def _adds(x):
    x.add_(1)
    return x.t().contiguous() * 2


@pytest.mark.parametrize("stage", ["export", "forward"])
def test_looking_never_writes_the_users_tensors_or_buffers(stage):
    x = torch.zeros(3, 4)
    g = sw.graph(_adds, x, stage=stage)
    g.compare_eager(), g.run(), g.run()
    assert torch.equal(x, torch.zeros(3, 4))
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4)).train()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    g = sw.graph(model, torch.randn(2, 3, 8, 8), stage=stage)
    g.compare_eager(), g.run()
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())


def test_compare_eager_runs_eager_in_the_traced_grad_mode():
    mha = torch.nn.MultiheadAttention(8, 2, batch_first=True).eval()
    q = torch.randn(2, 5, 8)

    class SelfAttention(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.mha = mha

        def forward(self, q):
            return self.mha(q, q, q, need_weights=False)[0]

    assert sw.graph(SelfAttention(), q, stage="export").compare_eager() == []


def test_export_refuses_what_torch_export_refuses():
    class Halves(torch.nn.Module):
        def forward(self, x):
            b, t, _ = x.shape
            return x.transpose(1, 2).reshape(b, -1), x.permute(2, 0, 1).contiguous()[:, : t // 2]

    shapes = {"x": {0: Dim("b"), 1: Dim("t", max=64)}}
    with pytest.raises(Exception) as torch_error:
        torch.export.export(Halves(), (torch.randn(3, 6, 4),), dynamic_shapes=shapes)
    with pytest.raises(sw.graph.CaptureError) as ours:
        sw.graph(Halves(), torch.randn(3, 6, 4), dynamic_shapes=shapes, stage="export")
    assert type(ours.value.__cause__) is type(torch_error.value)  # not hidden by a strict trace


def _copy_reasons(fn, x):
    return [
        (c.stage, c.reason.split(" (")[0])
        for st in ("export", "aten", "forward")
        for c in sw.graph(fn, x, stage=st).copies
    ]


def test_copy_reasons_name_what_the_user_asked_for():
    x, image = torch.randn(3, 4), torch.randn(2, 3, 4, 5)
    contiguous = _copy_reasons(lambda t: t.t().contiguous().view(-1), x)
    clone = _copy_reasons(lambda t: t.t().clone(memory_format=torch.contiguous_format).view(-1), x)
    channels_last = _copy_reasons(lambda t: t.contiguous(memory_format=torch.channels_last), image)
    stages = ["export", "aten", "forward"]
    assert contiguous == [(s, "a .contiguous() of a non-contiguous input") for s in stages]
    assert clone == [(s, "an explicit clone()") for s in stages]
    assert channels_last == [(s, "a memory-format change to channels_last") for s in stages]


def test_copy_bytes_are_what_the_destination_receives():
    def broadcast(x, s):
        y = torch.empty_like(x)
        y.copy_(s)
        return y

    x, s = torch.randn(100, 100), torch.tensor(2.0)
    written = x.numel() * x.element_size()  # every element of the destination is written
    for stage in ("export", "aten", "forward"):
        (copy,) = [n for n in sw.graph(broadcast, x, s, stage=stage).nodes if n.moves]
        assert copy.bytes == written, stage


def test_html_with_node_names_of_render_parameters_and_big_copies():
    class Named(torch.nn.Module):
        def forward(self, wrap, theme):
            return wrap.clone() * 2, theme.clone()

    page = sw.graph(Named(), torch.randn(3, 4), torch.randn(2, 2), stage="export")._repr_html_()
    assert "<svg" in page and "%wrap" in page

    def three_copies(x):
        return (
            x.transpose(1, 2).contiguous(),
            x.permute(2, 0, 1).contiguous(),
            x.transpose(0, 2).clone(),
        )

    big = sw.graph(three_copies, torch.randn(8, 64, 64), stage="export")
    assert len(big.copies) == 3 and len(big._repr_html_().encode()) <= 150_000


def test_where_of_a_torch_module_called_directly_is_its_line_marked_torch():
    g = sw.graph(torch.nn.Linear(4, 4), torch.randn(3, 4), stage="export")
    (linear,) = [n for n in g.nodes if n.op == "call_function"]
    assert linear.where.startswith("torch/nn/modules/linear.py:")
    assert linear.where.endswith("(torch)")


class _DynamicZoo(torch.nn.Module):
    def forward(self, x):
        tokens = x.permute(0, 2, 1).reshape(x.shape[0], -1)
        return tokens * 2, torch.nonzero(x[0] > 0).t(), x[:, None].expand(-1, 2, -1, -1)


def test_selecting_every_node_in_the_live_view_never_guards():
    """The live table (what `g` shows in a kernel): selecting each node builds its scene from the
    graph's symbolic FakeTensors; the ShapeEnv gains no guard, the scene says the symbols, and
    the program still runs at another batch size afterwards."""
    x = torch.randn(4, 3, 5)
    program = torch.export.export(_DynamicZoo(), (x,), dynamic_shapes={"x": {0: Dim("batch")}})
    fake = next(n.meta["val"] for n in program.graph.nodes if n.op == "placeholder")
    shape_env = fake.fake_mode.shape_env
    guards = list(shape_env.guards)
    g = sw.graph(program, stage="export")
    w = sw.graph.GraphWidget(g)
    texts = []
    for index in range(len(g.nodes)):
        w.selected = index
        texts += [t["layout"]["text"] for t in w.scene["tensors"]]
    assert list(shape_env.guards) == guards
    (batch,) = {str(s) for s in fake.shape[0].node.expr.free_symbols}
    assert any(f"({batch},5,3)" in text and f"drawn at {batch}=4" in text for text in texts)
    assert any(text.startswith("int64 (2,u") for text in texts), texts  # the unbacked nonzero
    out = program.run_decompositions().module()(torch.randn(7, 3, 5))
    assert out[0].shape == (7, 15)
