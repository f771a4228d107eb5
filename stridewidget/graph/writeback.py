"""The writebacks of a functionalized graph: the ``copy_`` into each mutated input.

A functionalized graph (stage ``"aten"``, and the AOTAutograd ``"forward"`` graph) never writes
its inputs: it returns each mutated input's new value, and what runs the graph copies it in
afterwards (an exported program's module ends with ``copy_`` nodes, by its signature's
``BUFFER_MUTATION`` / ``USER_INPUT_MUTATION`` outputs; AOTAutograd's runtime by its
``ViewAndMutationMeta``).  BatchNorm's running statistics in training are such writes.  Each one
is shown as an in-place node named ``copy__<input>`` just before the graph's output: its inputs
are the destination and the new value, its bytes what ``copy_`` writes (the destination's).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from ..adapters.inspect import inspect
from .capture import Capture
from .nodes import GraphNode, tensor_values, where

__all__ = ["WritebackNode", "writebacks"]


@dataclass(eq=False)
class WritebackNode:
    """Stands for the FX node of the ``copy_`` that runs after the graph: ``args`` are the
    destination's and the new value's FX nodes, ``meta["val"]`` the destination's value.  It is
    not in the graph (the graph is never changed)."""

    name: str
    dest: Any
    source: Any
    op: str = "call_function"
    target: Any = None

    def __post_init__(self) -> None:
        self.target = torch.ops.aten.copy_.default
        self.args = (self.dest, self.source)
        self.kwargs: dict[str, Any] = {}
        self.users: dict[Any, None] = {}
        self.all_input_nodes = [self.dest, self.source]
        self.meta = {
            "val": self.dest.meta.get("val"),
            "stack_trace": self.source.meta.get("stack_trace"),
        }


def _program_targets(program: Any, module: Any) -> list[tuple[Any, Any, str]]:
    """(destination, new value, words) per mutation an exported program's signature lists."""
    signature = program.graph_signature
    by_name = {node.name: node for node in module.graph.nodes}
    found = []
    for spec in signature.output_specs:
        kind = spec.kind.name
        if not kind.endswith("_MUTATION"):
            continue
        dest = next(
            (
                by_name.get(given.arg.name)
                for given in signature.input_specs
                if spec.target in (given.target, given.arg.name)
            ),
            None,
        )
        source = by_name.get(spec.arg.name)
        if dest is not None and source is not None:
            if kind == "USER_INPUT_MUTATION":
                what = f"input {dest.name}"
            else:  # BUFFER_MUTATION, PARAMETER_MUTATION
                what = f"{kind.split('_')[0].lower()} {spec.target}"
            words = f"the program copies its new value into {dest.name} after the graph"
            found.append((dest, source, f"the writeback of {what}: {words}"))
    return found


def _aot_targets(module: Any, sources: list[Any]) -> list[tuple[Any, Any, str]]:
    """(destination, new value, words) per input AOTAutograd's runtime writes after the graph
    (its first outputs, in order, by the backend's record of the compile's metadata);
    ``sources`` says what each argument is (``("buffer", "running_mean")``)."""
    mutated = module.meta.get("mutated_inputs")
    placeholders = [n for n in module.graph.nodes if n.op == "placeholder"]
    output = next(n for n in module.graph.nodes if n.op == "output")
    results = list(output.args[0]) if isinstance(output.args[0], (tuple, list)) else []
    found = []
    for position, index in enumerate(mutated or ()):
        if index < 0 or index >= len(placeholders) or position >= len(results):
            continue  # a metadata-only mutation, or metadata this graph does not match
        dest, source = placeholders[index], results[position]
        if _same_kind(dest, source):
            known = sources[index] if index < len(sources) else None
            what = f" ({known[0]} {known[1]})" if known else ""
            words = "AOTAutograd's runtime copies its new value into it after the graph"
            found.append((dest, source, f"the writeback of input {dest.name}{what}: {words}"))
    return found


def _same_kind(dest: Any, source: Any) -> bool:
    given, made = (tensor_values(getattr(n, "meta", {}).get("val")) for n in (dest, source))
    return bool(given and made) and (given[0].dtype, given[0].dim()) == (
        made[0].dtype,
        made[0].dim(),
    )


def writebacks(captured: Capture, index: int, stage: str) -> list[GraphNode]:
    """The writeback nodes of graph ``index`` of a capture, in the order they run.

    >>> import torch, stridewidget as sw
    >>> g = sw.graph(torch.nn.BatchNorm1d(2), torch.randn(4, 2), stage="aten")
    >>> [(n.name, n.kind, n.bytes) for n in g.nodes if "writeback" in n.reason][:2]
    [('copy__b_running_mean', 'in-place', 8), ('copy__b_running_var', 'in-place', 8)]
    """
    module = captured.modules[index]
    if captured.program is not None:
        targets = _program_targets(captured.program, module)
    elif stage == "forward":
        sources = captured.input_sources
        targets = _aot_targets(module, sources[index] if index < len(sources) else [])
    else:
        targets = []
    taken = {node.name for node in module.graph.nodes}
    found = []
    for dest, source, words in targets:
        name = f"copy__{dest.name}"
        while name in taken:
            name += "_"
        taken.add(name)
        value = dest.meta["val"]
        found.append(
            GraphNode(
                name=name,
                op="call_function",
                target="aten.copy_",
                layout=inspect(value),
                kind="in-place",
                bytes=value.numel() * value.element_size(),
                where=where(source),
                reason=f"{words} (copy_ from {source.name})",
                inputs=(dest.name, source.name),
                stage=stage,
                node=WritebackNode(name, dest, source),
                graph=index,
            )
        )
    return found
