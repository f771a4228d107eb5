"""``sw.audit`` of a ``torch.compile``d model: the copies of the compiled program (its
AOTAutograd forward and backward graphs, through :func:`stridewidget.graph`), not the eager
model's.  :class:`CompiledAudit` reads like the eager ``AuditReport`` (``copies``,
``total_bytes``, ``note``, ``summary``, ``by_line``, ``to_text``, ``to_html``, Jupyter's HTML)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from html import escape
from typing import Any

from .._compat import compiled_backend, compiled_dynamic, compiled_original
from .capture import Capture, compiled_captures
from .html import copies_text
from .nodes import GraphNode
from .program import Graph

__all__ = ["CompiledAudit", "CompiledRow", "audit_compiled", "backend_note"]

#: What every compiled audit is about (and is not), said with it.
NOTE = (
    "the AOTAutograd graphs torch.compile would hand an AOT backend such as Inductor "
    "(Inductor's own further choices not included); copies made outside the graphs are not "
    "counted: AccumulateGrad's copy of a gradient into its parameter's layout, and copies a "
    "kernel makes inside itself (the eager sw.audit counts both)"
)


def backend_note(backend: str | None) -> str:
    """:data:`NOTE`, with the backend the model was compiled with.

    >>> backend_note("eager")  # doctest: +ELLIPSIS
    "compiled with backend='eager', which runs neither AOTAutograd nor Inductor; audited: the ..."
    """
    if backend is None:
        return f"compiled with a backend not known here; audited: {NOTE}"
    runs = ", which runs neither AOTAutograd nor Inductor" if backend == "eager" else ""
    return f"compiled with backend={backend!r}{runs}; audited: {NOTE}"


@dataclass(frozen=True)
class CompiledRow:
    """One row of :meth:`CompiledAudit.by_line`: a source line (or module) and stage, the
    copies there, the bytes they move and their ops (as the eager report's rows)."""

    key: str
    phase: str
    count: int
    bytes: Any
    ops: tuple[str, ...]


class CompiledAudit:
    """What :func:`stridewidget.audit` reports for a compiled model: each copy node of the
    forward and backward graphs ``torch.compile`` hands its backend (``.stage`` says which).
    A graph that was not made is said so, with why (``missing``), never counted as 0 copies.

    >>> import torch, stridewidget as sw
    >>> class Merge(torch.nn.Module):
    ...     def forward(self, x):
    ...         return x.transpose(1, 2).reshape(len(x), -1)
    >>> x = torch.randn(2, 3, 4, requires_grad=True)
    >>> report = sw.audit(torch.compile(Merge()), x)
    >>> [(c.stage, c.name, c.bytes) for c in report.copies], report.total_bytes
    ([('forward', 'clone', 96)], 96)
    >>> print(report.summary())  # doctest: +ELLIPSIS
    sw.audit of the compiled program: 1 copy, 96 B (forward: 1 copy, 96 B; backward: 0 copies, 0 B) (compiled with backend='inductor'; ...)
    >>> print(sw.audit(torch.compile(Merge()), x.detach()).summary())  # doctest: +ELLIPSIS
    sw.audit of the compiled program: 1 copy, 96 B (forward: 1 copy, 96 B; backward: no graph (nothing ...)) ...
    """

    def __init__(self, graphs: dict[str, Graph], missing: dict[str, str] | None = None) -> None:
        self.graphs = graphs
        #: stage → why it has no graph (``backward=False``; nothing requires grad)
        self.missing = dict(missing or {})
        self.backward = "backward" in graphs or "requires grad" in self.missing.get("backward", "")
        #: what the report is about (the compiled program, not the eager model), said with it
        self.note = NOTE

    @property
    def copies(self) -> list[GraphNode]:
        """The copy nodes of every graph, forward first."""
        return [node for graph in self.graphs.values() for node in graph.copies]

    @property
    def total_bytes(self) -> Any:
        """Bytes the copies move (symbolic for dynamic shapes)."""
        return sum((node.bytes for node in self.copies), 0)

    def _group(self, key: Callable[[GraphNode], str]) -> list[CompiledRow]:
        groups: dict[tuple[str, str], list[GraphNode]] = {}
        for node in self.copies:
            groups.setdefault((key(node), node.stage), []).append(node)
        rows = [
            CompiledRow(
                name,
                stage,
                len(nodes),
                sum((n.bytes for n in nodes), 0),
                tuple(dict.fromkeys(n.target for n in nodes)),
            )
            for (name, stage), nodes in groups.items()
        ]
        return sorted(rows, key=lambda row: (-row.count, row.phase, row.key))

    def by_line(self) -> list[CompiledRow]:
        """Source line → count, bytes, ops; forward and backward apart, most copies first."""
        return self._group(lambda node: node.where or "(no line recorded)")

    def summary(self) -> str:
        """One line: copies and bytes, per graph (or why a graph is missing), and the note."""
        parts = [
            f"{stage}: {copies_text(len(g.copies))}, {sum((n.bytes for n in g.copies), 0)} B"
            for stage, g in self.graphs.items()
        ]
        parts += [f"{stage}: {why}" for stage, why in self.missing.items()]
        return (
            f"sw.audit of the compiled program: {copies_text(len(self.copies))}, {self.total_bytes} B"
            f" ({'; '.join(parts)}) ({self.note})"
        )

    def to_text(self, max_rows: int = 15) -> str:
        """The summary and one line per copy (the first ``max_rows``) as plain text."""
        lines = [self.summary()]
        for node in self.copies[:max_rows]:
            lines.append(
                f"  {node.stage:8} {node.name} {node.bytes} B {node.where} · {node.reason}"
            )
        if len(self.copies) > max_rows:
            lines.append(f"  ... {len(self.copies) - max_rows} more copies")
        return "\n".join(line.rstrip() for line in lines)

    def __repr__(self) -> str:
        return self.to_text()

    def _repr_html_(self) -> str:
        head = f"<p><b>{escape(self.summary())}</b></p>"
        return head + "".join(graph._repr_html_() for graph in self.graphs.values())

    def to_html(self, path: str) -> None:
        """Write the report as one standalone page (the graphs' static tables, no script)."""
        page = (
            "<!DOCTYPE html><html><head><meta charset='utf-8'><title>stridewidget audit</title>"
            f"</head><body>{self._repr_html_()}</body></html>"
        )
        with open(path, "w", encoding="utf-8") as file:
            file.write(page)


def audit_compiled(compiled: Any, inputs: tuple[Any, ...], backward: bool) -> CompiledAudit:
    """Capture and report the compiled program of ``compiled`` (a ``torch.compile`` wrapper)."""
    # dynamic=True as the user compiled it: symbolic sizes and bytes, as their program has
    dynamic = compiled_dynamic(compiled) is True
    model = compiled_original(compiled)
    captures: dict[str, Capture] = compiled_captures(
        model, tuple(inputs), {}, dynamic, backward, strict=False, caller="sw.audit"
    )
    missing = {}
    if not backward:
        missing["backward"] = "not run (backward=False)"
    elif "backward" not in captures:
        missing["backward"] = "no graph (nothing the model computes requires grad)"
    report = CompiledAudit({stage: Graph(c) for stage, c in captures.items()}, missing)
    report.note = backend_note(compiled_backend(compiled))
    return report
