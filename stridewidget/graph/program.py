"""The :class:`Graph` ``sw.graph`` returns: a captured program's nodes with their layouts."""

from __future__ import annotations

import sys
from typing import Any

import torch

from .capture import Capture, cloned
from .compare import Mismatch, compare_eager
from .html import copies_text, graph_html
from .nested import nested_nodes
from .nodes import GraphNode, describe
from .writeback import writebacks

__all__ = ["Graph"]


class Graph:
    """The nodes of a captured program (``sw.graph``), in graph order.

    ``nodes``: every FX node as a :class:`GraphNode`; ``copies``: the copy nodes, each with its
    ``reason``.  With several graphs (a ``torch.compile`` graph break) the nodes of all of them
    follow one another (``graphs`` lists the FX graphs, each node's ``.graph`` is its index).
    Before each graph's output come its writebacks: the ``copy_`` into each input the program
    mutates (BatchNorm's running statistics), which runs after a functionalized graph
    (:mod:`~stridewidget.graph.writeback`).

    >>> import torch, stridewidget as sw
    >>> class Merge(torch.nn.Module):
    ...     def forward(self, x):
    ...         return x.transpose(1, 2).reshape(len(x), -1)
    >>> g = sw.graph(Merge(), torch.randn(2, 3, 4), stage="aten")
    >>> [(n.name, n.kind) for n in g.copies], g["clone"].layout.strides
    ([('clone', 'copy')], (12, 3, 1))
    >>> real = g.run()   # replayed on real tensors: the copy has its own storage
    >>> sw.same_storage(real["clone"], real["permute"]), g.compare_eager()
    (False, [])
    """

    def __init__(self, captured: Capture) -> None:
        self.stage = captured.stage
        self._captured = captured
        self.graphs = [module.graph for module in captured.modules]
        self._writebacks = [
            writebacks(captured, index, captured.stage) for index in range(len(self.graphs))
        ]
        self.nodes: list[GraphNode] = []
        for index, graph in enumerate(self.graphs):
            for node in graph.nodes:
                if node.op == "output":
                    self.nodes.extend(self._writebacks[index])
                self.nodes.append(describe(node, captured.stage, index))
                # a higher-order op's subgraph (a cond branch, a loop body): its nodes follow
                self.nodes.extend(nested_nodes(node, captured.stage, index))

    @property
    def copies(self) -> list[GraphNode]:
        """The copy nodes (``kind == "copy"``), each with its ``reason``."""
        return [n for n in self.nodes if n.kind == "copy"]

    @property
    def program(self) -> Any:
        """The ``ExportedProgram`` (stages ``"export"`` / ``"aten"``), else ``None``."""
        return self._captured.program

    def __getitem__(self, name: str) -> GraphNode:
        """The node named ``name``; after a graph break, where two graphs have a node of that
        name, ``"GRAPH/name"`` (``g["1/clone"]``: the ``clone`` of graph 1).  Graphs are
        numbered in the order they ran: at ``stage="backward"`` that is backward order, so
        backward graph 0 is the backward of the *last* forward graph."""
        graph, _, bare = name.rpartition("/") if isinstance(name, str) else ("", "", name)
        found = [
            node
            for node in self.nodes
            if node.name == bare and (not graph or str(node.graph) == graph)
        ]
        if len(found) > 1:
            both = " and ".join(f"{n.graph}/{n.name}" for n in found)
            raise KeyError(
                f"{name!r} names a node in {len(found)} graphs (a graph break): ask for {both}"
            )
        if not found:
            names = [n.name for n in self.nodes]
            raise KeyError(f"no node named {name!r}; the nodes are {names}")
        return found[0]

    def compare_eager(self) -> list[Mismatch]:
        """Outputs (custom-op inputs, and at the backward stage the gradients) whose strides in
        this graph differ from eager's.  The eager model runs on copies of the captured inputs,
        under the grad mode the graph was traced with (``torch.no_grad()`` can pick other
        kernels), with its buffers restored afterwards."""
        return compare_eager(self._captured)

    def run(self, graph: int = 0) -> dict[str, Any]:
        """Replay one graph (``graph``: its index, for the nodes whose ``.graph`` it is) eagerly
        on copies of the real arguments it was captured with (the user's tensors and buffers are
        not written): every node's real value by name (the oracle the tests check copies
        against).  The writebacks run after the graph, as they do when the program runs: a
        writeback's value is its destination, written."""
        if not 0 <= graph < len(self.graphs):
            raise IndexError(f"graph {graph}: this capture has {len(self.graphs)} graph(s)")
        values: dict[str, Any] = {}
        module = self._captured.modules[graph]
        with torch.no_grad():
            _Recorder(module, values).run(*cloned(self._captured.real_inputs[graph]))
            for written in self._writebacks[graph]:
                dest, source = written.inputs
                values[written.name] = values[dest].copy_(values[source])
        return values

    def __repr__(self) -> str:
        lines = [
            f"sw.graph · stage {self.stage} · {len(self.nodes)} nodes, {copies_text(len(self.copies))}"
        ]
        several = len(self.graphs) > 1
        if several:  # a graph break: each name is GRAPH/name, as g["1/clone"] takes it
            lines[0] += f" · {len(self.graphs)} graphs (a graph break): nodes named GRAPH/name"
        for node in self.nodes:
            layout = "" if node.layout is None else str(node.layout)
            moved = f" · {node.bytes} B" if node.moves else ""
            name = f"{node.graph}/{node.name}" if several else node.name
            lines.append(f"  {node.kind:8} {name} = {node.target} {layout}{moved} {node.where}")
            if node.reason:
                lines.append(f"           ↳ {node.reason}")
        return "\n".join(line.rstrip() for line in lines)

    def _repr_html_(self) -> str:
        return graph_html(self)

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        """In a Jupyter kernel the live table (:class:`~stridewidget.graph.widget.GraphWidget`),
        with the static table as its ``text/html`` fallback; elsewhere the static table."""
        if not _in_kernel():
            return {"text/plain": repr(self), "text/html": graph_html(self)}
        from .widget import GraphWidget

        return GraphWidget(self)._repr_mimebundle_(**kwargs)


def _in_kernel() -> bool:
    """True inside a Jupyter kernel (where a widget has a front end to talk to)."""
    shell = sys.modules.get("IPython")
    get = getattr(shell, "get_ipython", None)
    return get is not None and getattr(get(), "kernel", None) is not None


class _Recorder(torch.fx.Interpreter):
    def __init__(self, module: Any, values: dict[str, Any]) -> None:
        super().__init__(module)
        self.values = values

    def run_node(self, node: Any) -> Any:
        result = super().run_node(node)
        self.values[node.name] = result
        return result
