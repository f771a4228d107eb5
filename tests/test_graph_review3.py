"""Third review of #26 (sw.graph, the compiled audit): each test checks against an oracle the
package does not compute (eager runs and their strides, torch's own errors, the graphs
torch.compile hands a backend of the test's own)."""

from __future__ import annotations

import inspect

import pytest
import torch
from torch.export import Dim

import stridewidget as sw


@torch.library.custom_op("swreview3::colmajor", mutates_args=())
def _colmajor(x: torch.Tensor) -> torch.Tensor:
    return torch.empty(x.shape[::-1]).t().copy_(x) * 2  # really column-major


@_colmajor.register_fake
def _(x):
    return torch.empty_like(x, memory_format=torch.contiguous_format)  # claims row-major


_colmajor.register_autograd(lambda ctx, grad: _colmajor(grad))


@torch.library.custom_op("swreview3::no_formula", mutates_args=())
def _no_formula(x: torch.Tensor) -> torch.Tensor:
    return x * 2


@_no_formula.register_fake
def _(x):
    return torch.empty_like(x)


def _inverse(x):
    return torch.linalg.inv(x + 3 * torch.eye(4))  # threads an effect token (its error check)


def _outputs(mismatches):
    return [(m.node, m.what, m.eager_strides) for m in mismatches if " of " not in m.what]


def test_an_effect_token_does_not_shift_the_outputs_compared():
    x = torch.randn(4, 4)
    assert sw.graph(_inverse, x, stage="forward").compare_eager() == []

    def both(x):
        return _inverse(x), _colmajor(x)

    eager = both(x)
    g = sw.graph(both, x, stage="forward")
    tokens = g._captured.modules[-1].meta["effect_tokens"]
    assert tokens == 1  # the graph really has one: this test is about it
    assert eager[1].stride() != (4, 1)  # what the fake kernel claims
    found = _outputs(g.compare_eager())
    assert found == [("colmajor", "output 1", eager[1].stride())]


def test_an_effect_token_does_not_shift_the_gradients_compared():
    def both(x, y):
        return _inverse(y), _colmajor(x) * 2

    x, y = torch.randn(4, 4, requires_grad=True), torch.randn(4, 4, requires_grad=True)
    gx, _ = torch.autograd.grad([t.sum() for t in both(x, y)], [x, y])
    assert gx.stride() != (4, 1)  # eager's, the oracle: not what the fake claims
    g = sw.graph(both, x, y, stage="backward")
    grads = [(m.what, m.eager_strides) for m in g.compare_eager() if "gradient" in m.what]
    assert grads == [("gradient of input 0", gx.stride())]


class _SizeFirst(torch.nn.Module):
    def forward(self, x):
        return x.shape[0], x + 1, _colmajor(x)


class _IntFirst(torch.nn.Module):
    def forward(self, x):
        return 3, _colmajor(x)


class _IntFirstFine(torch.nn.Module):
    def forward(self, x):
        return 3, x.t().contiguous()


@pytest.mark.parametrize("stage", ["export", "aten", "forward"])
def test_a_non_tensor_output_keeps_its_place(stage):
    x = torch.randn(3, 4)
    eager = _SizeFirst()(x)
    assert eager[1].stride() == (4, 1) and eager[2].stride() == (1, 3)
    shapes = {"x": {0: Dim("b", min=2)}} if stage != "forward" else True
    g = sw.graph(_SizeFirst(), x, dynamic_shapes=shapes, stage=stage)
    # the custom op's output (position 2), not the add before it
    assert _outputs(g.compare_eager()) == [("colmajor", "output 2", eager[2].stride())]


@pytest.mark.parametrize("stage", ["export", "aten", "forward"])
def test_an_int_output_is_skipped_not_a_crash(stage):
    x = torch.randn(3, 4)
    assert _IntFirstFine()(x)[1].is_contiguous()
    assert sw.graph(_IntFirstFine(), x, stage=stage).compare_eager() == []
    eager = _IntFirst()(x)[1]
    found = _outputs(sw.graph(_IntFirst(), x, stage=stage).compare_eager())
    assert [(what, strides) for _, what, strides in found] == [("output 1", eager.stride())]


class _Tok(torch.nn.Module):
    def forward(self, x):
        return x.permute(0, 2, 1).reshape(x.shape[0], -1)


def _eager_error(fn, *args):
    with pytest.raises(Exception) as caught:
        fn(*args)
    return str(caught.value).strip().splitlines()[0]


def test_a_compiled_audit_of_bad_input_is_one_quiet_line(capfd):
    # torch's own error for this program: torch.compile with a backend of torch's
    first = _eager_error(torch.compile(_Tok(), backend="aot_eager"), torch.randn(2))
    capfd.readouterr()
    with pytest.raises(sw.graph.CaptureError) as caught:
        sw.audit(torch.compile(_Tok()), torch.randn(2))
    message = str(caught.value)
    assert "\n" not in message and first in message and message.startswith("sw.audit")
    printed = capfd.readouterr()
    assert printed.out == "" and printed.err == ""


def test_a_capture_error_says_the_innermost_message():
    # the shape error torch's meta kernel raises (what the compiled trace runs)
    first = _eager_error(lambda t: t @ t, torch.randn(2, 3, device="meta"))
    with pytest.raises(sw.graph.CaptureError) as caught:
        sw.graph(lambda t: t @ t, torch.randn(2, 3), stage="forward")
    assert "\n" not in str(caught.value) and first in str(caught.value)

    x = torch.randn(3, requires_grad=True)
    first = _eager_error(lambda: _no_formula(x).sum().backward())  # eager autograd's error
    with pytest.raises(sw.graph.CaptureError) as caught:
        sw.graph(lambda t: _no_formula(t) * 1, x, stage="backward")
    assert "\n" not in str(caught.value) and first in str(caught.value)


def _torch_graph_inputs(model, x, dynamic):
    """The example inputs torch.compile hands a backend of the test's own."""
    seen = []

    def backend(gm, example_inputs):
        seen.extend(n.meta.get("example_value") for n in gm.graph.nodes if n.op == "placeholder")
        return gm

    torch.compile(model, backend=backend, dynamic=dynamic)(x)
    return [t for t in seen if isinstance(t, torch.Tensor)]


def test_a_compile_wrappers_dynamic_flag_is_honoured():
    m, x = _Tok(), torch.randn(3, 4, 5)
    (fake,) = _torch_graph_inputs(m, x, dynamic=True)
    assert all(isinstance(n, torch.SymInt) for n in fake.shape)  # torch's own: symbolic
    g = sw.graph(torch.compile(m, dynamic=True), x, stage="forward")
    (shape,) = [n.layout.shape for n in g.nodes if n.op == "placeholder" and n.layout]
    assert [str(n) for n in shape] == [str(n) for n in fake.shape]
    static = sw.graph(torch.compile(m), x, stage="forward")
    assert next(n.layout.shape for n in static.nodes if n.layout) == tuple(x.shape)

    report = sw.audit(torch.compile(m, dynamic=True), x)
    assert isinstance(report.total_bytes, torch.SymInt)
    real = {n.node.expr: size for n, size in zip(fake.shape, x.shape)}
    copied = x.permute(0, 2, 1).reshape(3, -1)  # eager: a copy of all of x
    assert not sw.same_storage(copied, x)
    assert int(report.total_bytes.node.expr.subs(real)) == copied.numel() * copied.element_size()
    assert sw.audit(torch.compile(m), x).total_bytes == copied.numel() * copied.element_size()


def test_model_kwargs_not_a_dict_is_one_line():
    with pytest.raises(TypeError) as caught:
        sw.graph(torch.nn.Linear(4, 4), torch.randn(3, 4), model_kwargs=[1])
    assert "model_kwargs must be a dict" in str(caught.value) and "\n" not in str(caught.value)


def test_a_sparse_input_at_the_forward_stage_names_sparse():
    x = torch.randn(3, 4).to_sparse()
    seen = _torch_graph_inputs(lambda t: t * 2, x, dynamic=None)
    assert seen == []  # torch's own: torch.compile hands its backend no graph for it
    with pytest.raises(ValueError) as caught:
        sw.graph(lambda t: t * 2, x, stage="forward")
    message = str(caught.value)
    assert "sparse" in message and "LSTM" not in message and "\n" not in message


class _Breaks(torch.nn.Module):
    def forward(self, x):
        y = x.t().contiguous()
        torch._dynamo.graph_break()
        return y[:2].t().contiguous()


def test_the_text_after_a_graph_break_says_each_nodes_graph():
    g = sw.graph(_Breaks(), torch.randn(3, 4), stage="forward")
    assert len(g.graphs) == 2
    text = repr(g)
    for index, graph in enumerate(g.graphs):  # torch's own FX graphs: every node, by graph
        for node in graph.nodes:
            assert f" {index}/{node.name} = " in text
    assert g["1/clone"].graph == 1  # the spelling the text uses is the one g[...] takes


def _merge(x):
    return x.transpose(1, 2).reshape(x.shape[0], -1)  # the helper's line


class _CallsHelper(torch.nn.Module):
    def forward(self, x):
        return _merge(x)  # the forward's line


def test_where_in_a_helper_is_the_forward_line_at_export_and_the_helpers_at_forward():
    # the README and sw.graph's docstring say so: export's tracer keeps frames named forward
    helper = inspect.getsourcelines(_merge)[1] + 1
    caller = inspect.getsourcelines(_CallsHelper.forward)[1] + 1
    for stage, line in (("export", caller), ("aten", caller), ("forward", helper)):
        (copy,) = sw.graph(_CallsHelper(), torch.randn(2, 3, 4), stage=stage).copies
        assert copy.where.endswith(f"test_graph_review3.py:{line}"), (stage, copy.where)
