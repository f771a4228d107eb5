"""Review of #26 (sw.graph): regressions found by an independent reviewer, each checked against an
oracle the package does not compute (torch's own error, eager strides, the test's own lines,
the WCAG formula of style.contrast_ratio on the colours the page really sets)."""

from __future__ import annotations

import inspect
import re

import pytest
import torch
from torch.export import Dim

import stridewidget as sw
from stridewidget.limits import MAX_GRAPH_PICTURES
from stridewidget.style import contrast_ratio

HERE = __file__.rsplit("/", 1)[-1]


def _mixed(x, idx):
    y = x.t().contiguous()  # copy
    z = x.view(-1)  # view
    z.add_(1)  # in-place
    y[idx] = 0.5
    return y, z


def test_static_table_sets_a_readable_text_colour_on_every_coloured_row():
    page = sw.graph(_mixed, torch.randn(3, 4), torch.tensor([1]), stage="export")._repr_html_()
    styles = re.findall(r'style="([^"]*)"', page)
    coloured = [dict(p.split(":", 1) for p in s.split(";") if p) for s in styles]
    coloured = [s for s in coloured if "background" in s]
    kinds = {k for k in re.findall(r"<td>(copy|view|in-place)</td>", page)}
    assert kinds == {"copy", "view", "in-place"} and coloured
    for style in coloured:
        assert "color" in style, style  # a dark theme's light text would land on the pastel
        assert contrast_ratio(style["background"], style["color"]) >= 4.5, style


class _Branchy(torch.nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            return x.t()
        return x


class _Halves(torch.nn.Module):
    def forward(self, x):
        return x.view(2, -1)


def _torch_first_line(model, x, **options):
    with pytest.raises(Exception) as error:
        torch.export.export(model, (x,), **options)
    return type(error.value), str(error.value).strip().splitlines()[0]


@pytest.mark.parametrize(
    "model, x, shapes",
    [
        (_Branchy(), torch.randn(3, 4), None),
        (_Halves(), torch.randn(4, 4), {"x": {0: Dim("b")}}),
    ],
)
def test_a_failed_capture_is_one_line_and_prints_nothing(capfd, model, x, shapes):
    kind, first = _torch_first_line(model, x, dynamic_shapes=shapes)
    capfd.readouterr()
    with pytest.raises(sw.graph.CaptureError) as caught:
        sw.graph(model, x, dynamic_shapes=shapes, stage="aten")
    message = str(caught.value)
    assert "\n" not in message
    assert type(model).__name__ in message and "'aten'" in message and first in message
    assert isinstance(caught.value.__cause__, kind)  # torch's own error, for the detail
    printed = capfd.readouterr()
    assert printed.out == "" and printed.err == ""  # no GraphModule dumps, no torch warnings


@pytest.mark.parametrize("stage", ["aten", "forward"])
def test_wrong_arity_names_the_model_and_its_arguments(stage):
    with pytest.raises(TypeError) as caught:
        sw.graph(_Halves(), torch.randn(4, 4), torch.randn(2), stage=stage)
    message = str(caught.value)
    assert "_Halves.forward(x)" in message and "given 2 positional arguments" in message
    assert "\n" not in message


def test_where_of_torch_inserted_nodes_is_marked_torch():
    class Split(torch.nn.Module):
        def forward(self, x):
            return x.transpose(0, 1).reshape(x.shape[1], -1)  # the user's line

    line = inspect.getsourcelines(Split.forward)[1] + 1
    shapes = {"x": {0: Dim("b"), 1: Dim("t", max=64)}}
    for stage in ("export", "aten"):
        g = sw.graph(Split(), torch.randn(3, 5), dynamic_shapes=shapes, stage=stage)
        calls = [n for n in g.nodes if n.op == "call_function"]
        assert any(n.target == "aten.sym_size" for n in calls)
        for node in calls:
            mine = node.where == f"{node.where.rsplit(':', 1)[0]}:{line}" and HERE in node.where
            assert mine or node.where.endswith(" (torch)"), (node.name, node.where)
            assert not node.where.startswith("torch/torch/")


def test_line_reads_every_form_of_where():
    g = sw.graph(_mixed, torch.randn(3, 4), torch.tensor([1]), stage="export")
    first = inspect.getsourcelines(_mixed)[1]
    assert g.copies[0].line == first + 1
    forms = {"In[2], line 62": 62, "a/b.py:7": 7, "torch/nn/functional.py:5 (torch)": 5, "": None}
    import dataclasses

    for where, line in forms.items():
        assert dataclasses.replace(g.copies[0], where=where).line == line


class _Tokens(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)

    def forward(self, x):
        return self.lin(x).transpose(1, 2).reshape(len(x), -1)


def test_compiled_audit_reads_like_the_eager_report(tmp_path):
    model, x = _Tokens(), torch.randn(3, 5, 4)
    report = sw.audit(torch.compile(model), x)
    eager = sw.audit(model, x)
    for name in ("to_text", "to_html", "_repr_html_", "note", "total_bytes", "copies", "summary"):
        assert hasattr(eager, name) and hasattr(report, name), name
    forward = sw.graph(model, x, stage="forward").copies
    assert report.total_bytes == sum(n.bytes for n in report.copies) > 0
    assert [n.name for n in report.copies if n.stage == "forward"] == [n.name for n in forward]
    text = report.to_text()
    assert text.splitlines()[0] == report.summary() and repr(report) == text
    assert all(n.name in text for n in report.copies) and report.note in text
    path = tmp_path / "audit.html"
    report.to_html(str(path))
    page = path.read_text()
    assert page.startswith("<!DOCTYPE html>") and report.copies[0].name in page
    # a graph that was not made is said so, not counted as "0 copies, 0 B"
    frozen = _Tokens().requires_grad_(False)
    summary = sw.audit(torch.compile(frozen), x).summary()
    assert "backward: no graph" in summary and "backward: 0 copies" not in summary
    assert "backward: not run" in sw.audit(torch.compile(model), x, backward=False).summary()


@torch.library.custom_op("swreview::tposed", mutates_args=())
def _tposed(x: torch.Tensor) -> torch.Tensor:
    return x.t().contiguous().t()  # really column-major


@_tposed.register_fake
def _(x):
    return torch.empty_like(x, memory_format=torch.contiguous_format)  # claims row-major


def test_compare_eager_finds_a_fake_kernel_lie_that_no_output_shows():
    w = torch.randn(4, 5)

    def hidden(x):
        return _tposed(x) @ w  # the lie is consumed by a matmul: no output, no custom op sees it

    x = torch.randn(3, 4)
    real = x.t().contiguous().t().stride()  # what the kernel returns, by its own code
    for stage in ("export", "forward"):
        (found,) = sw.graph(hidden, x, stage=stage).compare_eager()
        assert found.what == "output 0 of swreview::tposed", stage
        assert found.eager_strides == real and found.compiled_strides == (4, 1)


def test_every_copy_is_drawn_up_to_the_cap_and_the_rest_are_named():
    def copies(n):
        def fn(x):
            return tuple((x + i).t().contiguous() for i in range(n))

        return sw.graph(fn, torch.randn(2, 3), stage="export")

    within = copies(MAX_GRAPH_PICTURES)
    assert within._repr_html_().count("<figure>") == len(within.copies) == MAX_GRAPH_PICTURES
    one_more = copies(MAX_GRAPH_PICTURES + 1)._repr_html_()
    assert "1 more copy is listed" in one_more and "copies are listed" not in one_more


def test_constants_and_flatten_have_their_own_reasons():
    for stage in ("export", "aten", "forward"):
        g = sw.graph(_mixed, torch.randn(3, 4), torch.tensor([1]), stage=stage)
        constant = [c for c in g.copies if "constant" in c.reason]
        assert constant and not any("explicit lift_fresh_copy" in c.reason for c in g.copies)
    seq = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 1), torch.nn.Flatten())
    image = torch.randn(2, 3, 4, 4).to(memory_format=torch.channels_last)
    for stage in ("export", "aten", "forward"):
        (copy,) = sw.graph(seq, image, stage=stage).copies
        assert copy.reason.startswith("a reshape of a non-viewable input"), (stage, copy.reason)


def test_copy_into_a_buffer_is_in_place_and_moves_bytes():
    def fill(x, s):
        y = torch.empty_like(x)
        y.copy_(s)
        return y

    x, s = torch.randn(10, 10), torch.randn(10)
    g = sw.graph(fill, x, s, stage="export")
    (node,) = [n for n in g.nodes if n.target == "aten.copy_"]
    real = g.run()
    assert sw.same_storage(real[node.name], real[node.inputs[0]])  # it wrote into y
    assert node.kind == "in-place" and node.moves and node.bytes == x.numel() * x.element_size()
    assert node.reason.startswith("copy_") and node not in g.copies
    assert f"· {node.bytes} B" in repr(g)


def test_a_name_in_two_graphs_is_refused_and_graph_slash_name_picks_one():
    def broken(x):
        y = x.t().clone()
        torch._dynamo.graph_break()
        return y.t().clone()

    g = sw.graph(broken, torch.randn(3, 4), stage="forward")
    assert [(n.graph, n.name) for n in g.copies] == [(0, "clone"), (1, "clone")]
    with pytest.raises(KeyError, match="0/clone and 1/clone"):
        g["clone"]
    assert g["1/clone"] is g.copies[1] and g["0/clone"] is g.copies[0]
