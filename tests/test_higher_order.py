"""Higher-order ops (issue 38): ``torch.cond`` / ``while_loop`` programs in ``sw.graph`` (their
subgraphs' nodes are walked), and the ops inside their subgraphs under ``sw.track_copies``,
``sw.sanitize`` and ``Graph.compare_eager``.  Oracles: torch's profiler on the eager branch
(how many ``aten::clone`` it runs), torch's own output strides, and torch's own wrong answer
on a clone."""

from __future__ import annotations

import pytest
import torch
from torch._higher_order_ops import while_loop

import stridewidget as sw


def _copying(x):  # two copies: a contiguous of a transpose, a reshape that cannot view
    return x.t().contiguous() * 2 + x.t().reshape(-1).reshape(x.shape[1], x.shape[0])


def _fresh(x):  # no copy: a new tensor of the same strides
    return torch.zeros(x.shape[1], x.shape[0]) + 1


def _clones(fn, *args) -> int:
    """torch's profiler: how many ``aten::clone`` the eager run of ``fn`` does."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        fn(*args)
    return sum(event.name == "aten::clone" for event in prof.events())


class _Cond(torch.nn.Module):
    def __init__(self, true_fn, false_fn):
        super().__init__()
        self.true_fn, self.false_fn = true_fn, false_fn

    def forward(self, x):
        return torch.cond(x.sum() > 0, self.true_fn, self.false_fn, (x,))


def _body(i, y):
    return i + 1, y.t().contiguous().t().contiguous() + 1


def _loop(x):
    return while_loop(lambda i, y: i < 3, _body, (torch.tensor(0), x))


@pytest.mark.parametrize("stage", ["export", "aten"])
@pytest.mark.parametrize("branches", [(_copying, _fresh), (_fresh, _copying), (_copying, _copying)])
def test_cond_branches_copies_are_counted(stage, branches):
    x = torch.randn(3, 4)
    g = sw.graph(_Cond(*branches), x, stage=stage)
    for attribute, branch in zip(("true_graph_0", "false_graph_0"), branches):
        assert g[attribute].kind == "subgraph"
        inside = [n for n in g.copies if n.name.startswith(attribute + ".")]
        assert len(inside) == _clones(branch, x.clone()), (attribute, g)
    assert len(g.copies) == sum(_clones(b, x.clone()) for b in branches)


def test_while_loop_body_copies_are_counted():
    x = torch.randn(3, 3)
    g = sw.graph(_loop, x, stage="export")
    body = [n for n in g.copies if n.name.startswith("while_loop_body_graph_0.")]
    assert len(body) == _clones(_body, torch.tensor(0), x.clone()) == 2
    assert all(n.bytes == x.numel() * x.element_size() for n in body)


def test_nested_cond_inside_a_loop_body_is_walked():
    def body(i, y):
        return i + 1, torch.cond(y.sum() > 0, lambda y: y.t().contiguous(), lambda y: y * 1, (y,))

    x = torch.randn(3, 3)
    g = sw.graph(lambda x: while_loop(lambda i, y: i < 2, body, (torch.tensor(0), x)), x)
    names = [n.name for n in g.copies]
    assert any(name.count(".") == 2 and name.endswith("clone") for name in names), names


def test_compare_eager_of_a_cond_program_runs_against_torch():
    x = torch.randn(3, 4)
    model = _Cond(_copying, _fresh)
    for stage in ("export", "forward"):
        g = sw.graph(model, x, stage=stage)
        assert g.compare_eager() == []
        assert g["getitem"].layout.strides == model(x.clone()).stride()


def test_track_copies_sees_inside_cond_and_while_loop():
    x = torch.randn(3, 4)
    nbytes = x.numel() * x.element_size()
    with sw.track_copies() as log:
        out = _Cond(_copying, _fresh)(x)
    assert torch.equal(out, _copying(x)) if x.sum() > 0 else torch.equal(out, _fresh(x))
    chosen = _copying if x.sum() > 0 else _fresh
    assert log.total_bytes == _clones(chosen, x.clone()) * nbytes
    square = torch.randn(3, 3)
    with sw.track_copies() as log:
        _, y = _loop(square)
    expected = 3 * _clones(_body, torch.tensor(0), square.clone()) * 36
    assert log.total_bytes == expected and torch.allclose(y, square + 3)


def test_sanitize_flags_a_hazard_inside_a_cond_branch():
    x = torch.rand(3, 4) + 1

    def hazard(x):  # reads its own first column through a broadcast while writing it
        c = x.clone()
        return c.div_(c[:, :1])

    # torch's own answer differs from the out-of-place one: the hazard is real
    assert not torch.allclose(hazard(x), x / x[:, :1])
    with pytest.raises(sw.LayoutHazard), sw.sanitize():
        torch.cond(torch.tensor(True), hazard, lambda x: x * 2, (x,))
    with sw.sanitize() as report:  # a branch without one: no false alarm, torch's own result
        out = torch.cond(torch.tensor(False), hazard, lambda x: x * 2, (x,))
    assert report.ok and torch.equal(out, x * 2)


def test_checkers_leave_eager_higher_order_ops_working():
    # under a dispatch mode dynamo marks cond's own wrapper skipped for good; torch's later eager
    # cond (no mode) then fails: the checkers reset what they caused
    x, square = torch.randn(3, 4), torch.randn(3, 3)
    model = _Cond(_copying, _fresh)
    expected, (_, looped) = model(x.clone()), _loop(square.clone())
    for checker in (sw.track_copies, sw.sanitize):
        with checker():
            model(x)
            _loop(square)
        assert torch.equal(model(x), expected) and torch.equal(_loop(square)[1], looped)


def _flex():
    attention = pytest.importorskip("torch.nn.attention.flex_attention")
    return attention.flex_attention


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_flex_attention_runs_its_score_mod_through_the_checkers():
    flex = _flex()
    q = torch.randn(1, 2, 8, 4)
    k = torch.randn(1, 2, 8, 4).transpose(-1, -2).contiguous().transpose(-1, -2)

    def score(s, b, h, i, j):
        return s * (i - j).abs()

    expected = flex(q, k, k, score_mod=score)  # torch's own answer, no mode
    with sw.track_copies() as log:
        out = flex(q, k, k, score_mod=score)
    assert torch.allclose(out, expected)
    ops = [op for e in log.events if e.call == "flex_attention" for op in e.ops]
    assert {"aten.sub", "aten.abs", "aten.mul"} <= set(ops), ops  # the score_mod's own ops
    with sw.sanitize() as report:
        out = flex(q, k, k, score_mod=score)
    assert report.ok and torch.allclose(out, expected)
    assert torch.allclose(flex(q, k, k, score_mod=score), expected)  # eager flex still works


class _Weighted(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(3, 4))
        self.pick = _Cond(_copying, lambda x: x.t().contiguous() * 3)

    def forward(self, x):
        return self.pick(x * self.w)


def test_backward_stage_of_a_cond_program_compares_with_torchs_gradients():
    torch.manual_seed(0)
    model, x = _Weighted(), torch.randn(3, 4)
    g = sw.graph(model, x, stage="backward")
    assert {n.name.split(".")[0] for n in g.nodes if n.kind == "subgraph"} == {
        "true_graph_1",
        "false_graph_1",
    }
    assert g.compare_eager() == []
    (grad,) = torch.autograd.grad(model(x.clone()).sum(), [model.w])  # torch's own gradient
    output = next(n for n in g.nodes if n.kind == "output" and "." not in n.name)
    produced = [a for a in output.node.args[0] if a is not None]
    assert any(tuple(a.meta["val"].stride()) == grad.stride() for a in produced)
