"""Second review of #26 (sw.graph): each test checks against an oracle the package does not
compute (torch.compile with the aot_eager backend, eager autograd, the graph's own tensors)."""

from __future__ import annotations

import pytest
import torch

import stridewidget as sw


def _aliased_view(x):
    return x.t(), (x * 2).t().contiguous()


def _aliased_slice(x):
    return x[1:], (x * 2).t().contiguous()


def _aliased_input(x):
    return x, (x * 2).t().contiguous()


def _aliased_last(x):
    return (x * 2).t().contiguous(), x.t()


def _grad_strides(f, compiled):
    x = torch.randn(3, 4, requires_grad=True)
    run = torch.compile(f, backend="aot_eager") if compiled else f
    outs = [o for o in run(x) if o.requires_grad]
    return torch.autograd.grad(outs, [x], [torch.ones_like(o) for o in outs])[0].stride()


@pytest.mark.parametrize("f", [_aliased_view, _aliased_slice, _aliased_input, _aliased_last])
def test_backward_compare_uses_the_gradient_the_compiled_program_produces(f):
    # an output that is the input or a view of it adds its gradient outside the backward graph:
    # the truth is torch.compile(aot_eager)'s gradient against eager's, not the graph's partial one
    torch._dynamo.reset()
    real, eager = _grad_strides(f, True), _grad_strides(f, False)
    mismatches = sw.graph(
        f, torch.randn(3, 4, requires_grad=True), stage="backward"
    ).compare_eager()
    grads = [m for m in mismatches if m.what.startswith("gradient")]
    if real == eager:
        assert grads == []
    else:
        assert [(m.eager_strides, m.compiled_strides) for m in grads] == [(eager, real)]


class _Breaks(torch.nn.Module):
    def forward(self, x):
        y = x.t().contiguous()  # (4, 3), graph 0
        torch._dynamo.graph_break()
        return y[:2].t().contiguous()  # (3, 2), graph 1: its nodes have graph 0's names


def test_after_a_graph_break_each_copy_is_drawn_with_its_own_graphs_inputs():
    from stridewidget.graph.html import _picture
    from stridewidget.render import render_svg

    g = sw.graph(_Breaks(), torch.randn(3, 4), stage="forward")
    copies = g.copies
    assert [c.graph for c in copies] == [0, 1] and copies[0].name == copies[1].name
    for copy in copies:
        # the oracle: the FX node's own arguments, read straight from its graph
        fx = copy.node
        given = {f"%{fx.name}": fx.meta["val"]}
        given.update({f"%{a.name}": a.meta["val"] for a in fx.all_input_nodes})
        assert _picture(g, copy) == render_svg(**given)
    html = g._repr_html_()
    assert "<th>graph</th>" in html
    assert "graph 0: " in html and "graph 1: " in html
