"""``sw.audit`` of a ``torch.compile``d model: the copies of the compiled program (its
AOTAutograd forward and backward graphs, through :func:`stridewidget.graph`), not the eager
model's."""

from __future__ import annotations

from typing import Any

from .._compat import compiled_original
from .capture import Capture, compiled_captures
from .nodes import GraphNode
from .program import Graph

__all__ = ["CompiledAudit", "audit_compiled"]


class CompiledAudit:
    """What :func:`stridewidget.audit` reports for a compiled model: each copy node of the
    forward and backward graphs ``torch.compile`` hands its backend (``.stage`` says which).

    >>> import torch, stridewidget as sw
    >>> class Merge(torch.nn.Module):
    ...     def forward(self, x):
    ...         return x.transpose(1, 2).reshape(len(x), -1)
    >>> x = torch.randn(2, 3, 4, requires_grad=True)
    >>> report = sw.audit(torch.compile(Merge()), x)
    >>> [(c.stage, c.name, c.bytes) for c in report.copies]
    [('forward', 'clone', 96)]
    >>> print(report.summary())
    sw.audit of the compiled program: 1 copies, 96 B (forward: 1 copies, 96 B; backward: 0 copies, 0 B)
    """

    def __init__(self, graphs: dict[str, Graph]) -> None:
        self.graphs = graphs

    @property
    def copies(self) -> list[GraphNode]:
        """The copy nodes of every graph, forward first."""
        return [node for graph in self.graphs.values() for node in graph.copies]

    @property
    def total_bytes(self) -> Any:
        """Bytes the copies move (symbolic for dynamic shapes)."""
        return sum((node.bytes for node in self.copies), 0)

    def summary(self) -> str:
        """One line: copies and bytes, per graph."""
        parts = [
            f"{stage}: {len(g.copies)} copies, {sum((n.bytes for n in g.copies), 0)} B"
            for stage, g in self.graphs.items()
        ]
        return (
            f"sw.audit of the compiled program: {len(self.copies)} copies, {self.total_bytes} B"
            f" ({'; '.join(parts)})"
        )

    def __repr__(self) -> str:
        lines = [self.summary()]
        for node in self.copies:
            lines.append(
                f"  {node.stage:8} {node.name} {node.bytes} B {node.where} · {node.reason}"
            )
        return "\n".join(line.rstrip() for line in lines)

    def _repr_html_(self) -> str:
        return "".join(graph._repr_html_() for graph in self.graphs.values())


def audit_compiled(compiled: Any, inputs: tuple[Any, ...], backward: bool) -> CompiledAudit:
    """Capture and report the compiled program of ``compiled`` (a ``torch.compile`` wrapper)."""
    captures: dict[str, Capture] = compiled_captures(
        compiled_original(compiled), tuple(inputs), {}, False, backward, strict=False
    )
    if backward and "backward" not in captures:
        captures["backward"] = Capture("backward", [], [], None, tuple(inputs))
    return CompiledAudit({stage: Graph(c) for stage, c in captures.items()})
