"""The live graph view (``sw.graph.GraphWidget``, what ``g`` shows in a kernel): selecting a node
draws the scene of the graph's own values of that node and its inputs (the oracle: build_scene of
those FakeTensors, read straight from the FX graph here, and the graph replayed on real tensors
for which node shares storage); bad selections are refused; only one scene is ever built."""

from __future__ import annotations

import json
import warnings

import pytest
import torch
import traitlets

import stridewidget as sw
from stridewidget.graph import widget as graph_widget
from stridewidget.scene.build import build_scene


class Tokens(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(3, 3)

    def forward(self, x):
        t = x.permute(0, 2, 1).reshape(x.shape[0], -1, x.shape[1])
        return self.lin(t).transpose(1, 2).contiguous(), x.split(2, dim=2)


def _oracle(fx_node):
    """The node's and its inputs' values, labelled %name (tuples: %name[i]), straight from FX."""
    out = {}
    for node in (fx_node, *fx_node.all_input_nodes):
        value = node.meta.get("val")
        if isinstance(value, torch.Tensor):
            out[f"%{node.name}"] = value
        elif isinstance(value, (tuple, list)):
            for i, v in enumerate(value):
                if isinstance(v, torch.Tensor):
                    out[f"%{node.name}[{i}]"] = v
    return dict(list(out.items())[: graph_widget.MAX_TENSORS_DRAWN])


@pytest.mark.parametrize("stage", ["export", "aten", "forward"])
def test_selecting_a_node_draws_it_beside_its_inputs(stage):
    g = sw.graph(Tokens(), torch.randn(2, 3, 4), stage=stage)
    w = sw.graph.GraphWidget(g)
    assert len(w.rows) == len(g.nodes) and [r["name"] for r in w.rows] == [n.name for n in g.nodes]
    first_copy = next(i for i, n in enumerate(g.nodes) if n.kind == "copy")
    assert w.selected == first_copy == w.drawn  # a reader came for the copies
    drawn_some = 0
    for index, node in enumerate(g.nodes):
        w.selected = index
        expected = build_scene(_oracle(node.node))
        assert w.drawn == index and w.scene == expected, node.name
        drawn_some += bool(expected["tensors"])
    assert drawn_some >= len(g.nodes) - 1  # every node but a tensor-less one draws something


def test_views_share_their_inputs_strip_and_copies_have_their_own():
    g = sw.graph(Tokens(), torch.randn(2, 3, 4), stage="export")
    real = g.run()  # the graph replayed on real tensors: which really share storage
    w = sw.graph.GraphWidget(g)
    checked = 0
    for index, node in enumerate(g.nodes):
        if node.kind not in ("view", "copy") or node.layout is None:
            continue
        w.selected = index
        by_name = {t["name"]: t["storage"] for t in w.scene["tensors"]}
        for given in node.inputs:
            if f"%{given}" in by_name and isinstance(real.get(given), torch.Tensor):
                shares = sw.same_storage(real[node.name], real[given])
                assert (by_name[f"%{node.name}"] == by_name[f"%{given}"]) == shares, node.name
                checked += 1
    assert checked >= 4


@pytest.mark.parametrize("bad", [-1, 10**6, True, 1.5, "1", "__import__('os')", [0], {"i": 0}])
def test_bad_selections_are_refused_and_change_nothing(bad):
    g = sw.graph(Tokens(), torch.randn(2, 3, 4), stage="export")
    w = sw.graph.GraphWidget(g)
    before = (w.selected, w.drawn, json.dumps(w.scene))
    with pytest.raises(traitlets.TraitError, match="selected"):
        w.selected = bad
    with pytest.raises(traitlets.TraitError, match="selected"):
        w.set_state({"selected": bad})  # what a front-end message does
    assert (w.selected, w.drawn, json.dumps(w.scene)) == before
    w.selected = None  # deselect: nothing drawn
    assert w.drawn is None and w.scene["tensors"] == []


def test_a_graph_of_thousands_of_nodes_sends_one_scene(monkeypatch):
    def chain(x):
        for _ in range(600):
            x = x.t() * 1
        return x.contiguous()

    g = sw.graph(chain, torch.zeros(3, 4), stage="export")
    assert len(g.nodes) > 1000
    built = []
    real_build = graph_widget.build_scene
    monkeypatch.setattr(graph_widget, "build_scene", lambda t: built.append(t) or real_build(t))
    w = sw.graph.GraphWidget(g)
    assert len(built) == 1  # the first copy's, nothing for the other nodes
    state = json.dumps({k: v for k, v in w.get_state().items() if not k.startswith("_")})
    per_row = (len(state) - len(json.dumps(w.scene))) / len(g.nodes)
    assert per_row < 400, per_row  # the table is a short text row per node
    w.selected = 700
    assert len(built) == 2 and w.scene == build_scene(_oracle(g.nodes[700].node))


def test_g_in_a_kernel_is_the_widget_with_the_static_table_as_fallback(monkeypatch):
    import IPython

    g = sw.graph(Tokens(), torch.randn(2, 3, 4), stage="export")
    plain = g._repr_mimebundle_()  # no kernel: the static table, no comm opened
    assert set(plain) == {"text/plain", "text/html"} and plain["text/html"] == g._repr_html_()

    class Kernel:
        kernel = object()

    monkeypatch.setattr(IPython, "get_ipython", lambda: Kernel())
    data, _ = g._repr_mimebundle_()
    model = data["application/vnd.jupyter.widget-view+json"]["model_id"]
    with warnings.catch_warnings():  # ipywidgets' registry of live widgets, by model id
        warnings.simplefilter("ignore", DeprecationWarning)
        live = sw.graph.GraphWidget.widgets[model]  # the widget the front end will draw
    assert isinstance(live, sw.graph.GraphWidget) and live.rows[0]["name"] == g.nodes[0].name
    assert data["text/html"] == g._repr_html_() and data["text/plain"] == repr(g)
    live.close()


def test_widget_refuses_what_is_not_a_graph():
    with pytest.raises(TypeError, match=r"sw\.graph"):
        sw.graph.GraphWidget(torch.zeros(3))


def test_the_vitest_graph_fixture_is_what_the_widget_makes_now():
    import importlib.util
    import pathlib

    root = pathlib.Path(__file__).resolve().parents[1]
    spec = importlib.util.spec_from_file_location(
        "make_fixtures", root / "js/fixtures/make_fixtures.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    stored = (root / "js" / "fixtures" / "graph.json").read_text()
    assert module.serialise(module.graph_fixture()) == stored, (
        "js/fixtures/graph.json is stale: run .venv/bin/python js/fixtures/make_fixtures.py"
    )
