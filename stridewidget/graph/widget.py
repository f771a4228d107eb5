"""The live view of a :class:`~stridewidget.graph.Graph` in Jupyter: the nodes as a table, and the
selected node's layout drawn beside its inputs' layouts.

Bounded whatever the graph's size: the table is one short row of text per node, and only the
selected node's scene is built and sent, on demand.  The front end (``static/graph.js``, built
from ``js/graph/``) sets ``selected`` to a node's position; nothing it sends is ever executed,
and a position that is not an ``int`` naming a node is refused.  The scene is
:func:`~stridewidget.scene.build.build_scene` of the graph's own values (FakeTensors) of the node
and its inputs: a view shares its input's storage strip, a copy has its own, symbolic layouts are
drawn with their symbols, and selecting never guards.
"""

from __future__ import annotations

from typing import Any

import traitlets

from ..limits import MAX_GRAPH_TENSORS_DRAWN as MAX_TENSORS_DRAWN
from ..notebook.picture import LaidOut, laid_out
from ..notebook.widget import StaticFallbackWidget, bundle
from ..render.primitives import Picture
from ..scene.build import build_scene
from .html import copies_text, graph_html
from .nodes import tensor_values

__all__ = ["MAX_TENSORS_DRAWN", "GraphWidget", "selection_tensors"]


def _labelled(name: str, value: Any) -> list[tuple[str, Any]]:
    if isinstance(value, (tuple, list)):
        values = tensor_values(value)
        return [(f"%{name}[{i}]", v) for i, v in enumerate(value) if any(v is t for t in values)]
    return [(f"%{name}", value)] if tensor_values(value) else []


def selection_tensors(graph: Any, index: int) -> dict[str, Any]:
    """``{"%name": value}``: the graph's own values (FakeTensors) of node number ``index`` and of
    its inputs, node first, at most :data:`MAX_TENSORS_DRAWN` (a tuple-valued node gives
    ``%name[0]``, ...).  Drawn from the tensors, not their layouts alone, so a view is drawn over
    its input's storage and a copy over its own.

    >>> import torch, stridewidget as sw
    >>> def f(x):
    ...     return x.t().contiguous()
    >>> g = sw.graph(f, torch.zeros(2, 3), stage="export")
    >>> [n.name for n in g.nodes]
    ['args_0', 't', 'contiguous', 'output']
    >>> {k: sw.inspect(v).strides for k, v in selection_tensors(g, 2).items()}
    {'%contiguous': (2, 1), '%t': (1, 3)}
    """
    node = graph.nodes[index]
    fx_node = node.node
    labelled = _labelled(node.name, fx_node.meta.get("val"))
    for given in fx_node.all_input_nodes:
        labelled += _labelled(given.name, given.meta.get("val"))
    return dict(labelled[:MAX_TENSORS_DRAWN])


def _row(node: Any) -> dict[str, Any]:
    return {
        "name": node.name,
        "kind": node.kind,
        "op": node.target,
        "layout": "" if node.layout is None else str(node.layout),
        "bytes": str(node.bytes) if node.moves else "",
        "where": node.where,
        "reason": node.reason,
        "inputs": list(node.inputs),
    }


def _first_selection(graph: Any) -> int | None:
    """The first copy (what a reader came for), else the first node with a layout."""
    for wanted in ("copy", None):
        for index, node in enumerate(graph.nodes):
            if (wanted is None or node.kind == wanted) and selection_tensors(graph, index):
                return index
    return None


class GraphWidget(LaidOut, StaticFallbackWidget):
    """The nodes of a :class:`~stridewidget.graph.Graph` as a table; the selected node's layout is
    drawn beside its inputs' (with the tensor widget's picture: storage strips, logical grids,
    stride arrows).  ``g`` at the end of a Jupyter cell shows one; saved notebooks keep the
    static table (``text/html``).

    Synced traits: ``rows`` (list, Python → JS: per node its name, kind, op, layout text, bytes
    moved, line and copy reason); ``selected`` (int or None, both ways: the node's position in
    ``graph.nodes``); ``drawn`` (Python → JS: the position whose ``scene`` is shown); ``scene``,
    ``wrap``, ``hovered``, ``picture``, ``width``: the tensor widget's.

    >>> import torch, stridewidget as sw
    >>> def f(x):
    ...     return x.t().contiguous()
    >>> g = sw.graph(f, torch.zeros(2, 3), stage="export")
    >>> w = sw.graph.GraphWidget(g)
    >>> w.selected, [t["name"] for t in w.scene["tensors"]]
    (2, ['%contiguous', '%t'])
    >>> w.selected = 1
    >>> w.drawn, [t["name"] for t in w.scene["tensors"]]
    (1, ['%t', '%args_0'])
    """

    _esm = bundle("graph.js")
    _css = bundle("graph.css")

    rows = traitlets.List().tag(sync=True)
    selected = traitlets.Int(default_value=None, allow_none=True).tag(sync=True)
    drawn = traitlets.Int(default_value=None, allow_none=True).tag(sync=True)
    scene = traitlets.Dict().tag(sync=True)
    wrap = traitlets.Int(default_value=None, allow_none=True).tag(sync=True)
    hovered = traitlets.Dict(default_value=None, allow_none=True).tag(sync=True)
    title = traitlets.Unicode().tag(sync=True)

    def __init__(self, graph: Any) -> None:
        if not hasattr(graph, "nodes") or not hasattr(graph, "copies"):
            raise TypeError(
                f"GraphWidget takes an sw.graph(...) result, got {type(graph).__name__}"
            )
        super().__init__()
        self._graph = graph
        self.title = f"sw.graph · stage {graph.stage} · {len(graph.nodes)} nodes, {copies_text(len(graph.copies))}"
        self.rows = [_row(node) for node in graph.nodes]
        self.selected = _first_selection(graph)
        if self.selected is None:
            self.scene = build_scene({})

    @traitlets.validate("selected")
    def _valid_selected(self, proposal: Any) -> int | None:
        value = proposal["value"]
        count = len(self._graph.nodes)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < count:
            raise traitlets.TraitError(
                f"selected must be a node's position, an int in [0, {count}), got {value!r}"
            )
        return value

    def _draw(self, scene: dict[str, Any], width: int, wrap: int | None) -> Picture:
        """The node's picture with every tensor drawn: the node and its inputs (at most
        ``MAX_GRAPH_TENSORS_DRAWN``, the rest listed by the table) are what a reader selected."""
        return laid_out(scene, width, wrap, every_tensor=True, light=self._light)

    @traitlets.observe("selected")
    def _draw_selected(self, change: Any) -> None:
        index = change["new"]
        scene = build_scene({} if index is None else selection_tensors(self._graph, index))
        with self.hold_sync():
            self.scene = scene
            self.drawn = index

    def summary(self) -> str:
        """The graph's text (its ``repr``)."""
        return repr(self._graph)

    def _static_html(self) -> str:
        return graph_html(self._graph)
