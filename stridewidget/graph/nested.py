"""The graphs a higher-order op runs: ``torch.cond``'s branches, ``while_loop``'s condition and
body, ``flex_attention``'s score and mask functions.  In a captured program each is a
``GraphModule`` attribute of the graph that calls it, read by a ``get_attr`` node; its nodes are
described like the program's own, named ``<attribute>.<node>`` (``true_graph_0.clone``), and
the graphs they call in turn are walked too."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import torch

from .nodes import GraphNode, _owned, describe

__all__ = ["nested_nodes", "subgraph_of"]


def subgraph_of(node: Any) -> Any:
    """The ``GraphModule`` a ``get_attr`` node reads, else ``None``.

    >>> import torch, stridewidget as sw
    >>> def pick(x):
    ...     return torch.cond(x.sum() > 0, lambda x: x.t().clone(), lambda x: x.t() * 2, (x,))
    >>> g = sw.graph(pick, torch.ones(2, 3), stage="export")
    >>> isinstance(subgraph_of(g["true_graph_0"].node), torch.fx.GraphModule)
    True
    """
    value = _owned(node) if node.op == "get_attr" else None
    return value if isinstance(value, torch.fx.GraphModule) else None


def nested_nodes(node: Any, stage: str, graph: int, prefix: str = "") -> list[GraphNode]:
    """The nodes of the graph ``node`` reads (none unless it reads one), and of the graphs those
    read, depth first, each named ``<attribute>.<node>`` after its outer node's name.

    >>> import torch, stridewidget as sw
    >>> def pick(x):
    ...     return torch.cond(x.sum() > 0, lambda x: x.t().clone(), lambda x: x.t() * 2, (x,))
    >>> g = sw.graph(pick, torch.ones(2, 3), stage="export")
    >>> [n.name for n in g.copies]
    ['true_graph_0.clone']
    """
    module = subgraph_of(node)
    if module is None:
        return []
    named = f"{prefix}{node.name}."
    found = []
    for inner in module.graph.nodes:
        described = describe(inner, stage, graph)
        inputs = tuple(named + name for name in described.inputs)
        found.append(replace(described, name=named + inner.name, inputs=inputs))
        found.extend(nested_nodes(inner, stage, graph, named))
    return found
