"""The static Jupyter table of a :class:`~stridewidget.graph.Graph`: one row per node, and
beside each copy the picture of its layout next to its inputs' (the package's own static SVG
renderer; a big or symbolic storage is shown as its layout's text, so the fragment stays small).
Everything a graph supplies (names, targets, reasons, paths) is escaped."""

from __future__ import annotations

from html import escape
from typing import Any

from ..limits import MAX_GRAPH_DRAWN_ELEMENTS as MAX_DRAWN_ELEMENTS
from ..limits import MAX_GRAPH_PICTURES as MAX_PICTURES
from ..render import render_svg
from .nodes import tensor_values

__all__ = ["KIND_COLOURS", "copies_text", "graph_html"]

#: (background, text) of the rows of each kind: the text colour is set with the pale background,
#: so a dark theme's light text never lands on it (each pair reads at >= 4.5:1, WCAG AA).
KIND_COLOURS = {
    "copy": ("#fde2e1", "#5c1210"),
    "in-place": ("#fff1c2", "#4a3500"),
    "view": ("#e3f1e4", "#173d1b"),
}


def copies_text(count: int) -> str:
    """``1 copy``, ``3 copies``.

    >>> copies_text(1), copies_text(2)
    ('1 copy', '2 copies')
    """
    return f"{count} {'copy' if count == 1 else 'copies'}"


def _drawable(tensor: Any) -> bool:
    size = tensor.untyped_storage().nbytes()
    return isinstance(size, int) and size // max(1, tensor.element_size()) <= MAX_DRAWN_ELEMENTS


def _picture(graph: Any, node: Any) -> str:
    # the node's inputs are in its own graph: after a graph break a name can be in several
    by_name = {n.name: n for n in graph.nodes if n.graph == node.graph}
    tensors = {}
    for name in (node.name, *node.inputs):
        values = tensor_values(by_name[name].node.meta.get("val")) if name in by_name else []
        if values:
            # FX's own %name: never one of render_svg's parameters (wrap, theme)
            tensors[f"%{name}"] = values[0]
    if tensors and all(_drawable(t) for t in tensors.values()):
        return render_svg(**tensors)
    lines = [f"{name} {by_name[name[1:]].layout}" for name in tensors]
    return f"<pre>{escape(chr(10).join(lines))}</pre>" if lines else ""


def _row(node: Any, several: bool) -> str:
    moved = str(node.bytes) if node.moves else ""
    cells = [str(node.graph)] if several else []
    cells += [node.name, node.kind, node.target, "" if node.layout is None else str(node.layout)]
    cells += [moved, node.where, node.reason]
    colours = KIND_COLOURS.get(node.kind)
    style = f' style="background:{colours[0]};color:{colours[1]}"' if colours else ""
    return f"<tr{style}>" + "".join(f"<td>{escape(c)}</td>" for c in cells) + "</tr>"


def graph_html(graph: Any) -> str:
    """The table (and the copies' pictures) as one HTML fragment, no JavaScript."""
    several = len({node.graph for node in graph.nodes}) > 1  # a graph break: say which graph
    head = ("node", "kind", "op", "layout", "bytes moved", "where", "why it copies")
    head = ("graph", *head) if several else head
    rows = [_row(node, several) for node in graph.nodes]
    pictures = []
    for node in graph.copies[:MAX_PICTURES]:
        title = f"{node.name} ({node.reason}) beside its inputs"
        title = f"graph {node.graph}: {title}" if several else title
        pictures.append(
            f"<figure><figcaption>{escape(title)}</figcaption>{_picture(graph, node)}</figure>"
        )
    left = len(graph.copies) - MAX_PICTURES
    if left > 0:
        drawn = ", ".join(node.name for node in graph.copies[:MAX_PICTURES])
        more = "1 more copy is" if left == 1 else f"{left} more copies are"
        pictures.append(
            f"<p>{escape(f'The first {MAX_PICTURES} copies are drawn ({drawn}); {more} listed in the table, not drawn.')}</p>"
        )
    summary = f"sw.graph · stage {graph.stage} · {len(graph.nodes)} nodes, {copies_text(len(graph.copies))}"
    return (
        '<div class="stridewidget-graph">'
        f"<p><b>{escape(summary)}</b></p>"
        '<table style="font-family:monospace;font-size:12px;border-collapse:collapse">'
        "<thead><tr>" + "".join(f"<th>{escape(h)}</th>" for h in head) + "</tr></thead>"
        "<tbody>" + "".join(rows) + "</tbody></table>" + "".join(pictures) + "</div>"
    )
