"""Layouts inside exported and compiled programs: :func:`graph`.

>>> import torch, stridewidget as sw
>>> class Tokens(torch.nn.Module):
...     def forward(self, x):
...         return x.transpose(1, 2).reshape(x.shape[0], -1)
>>> g = sw.graph(Tokens(), torch.zeros(2, 3, 4), stage="export")
>>> [(n.name, n.kind) for n in g.nodes]
[('x', 'input'), ('transpose', 'view'), ('reshape', 'copy'), ('output', 'output')]
>>> g.copies[0].reason, g.copies[0].bytes
('a reshape of a non-viewable input (strides (12, 1, 4))', 96)
"""

from __future__ import annotations

import sys
import types
from typing import Any

from ..unseen import unseen
from .audit import CompiledAudit
from .capture import STAGES, CaptureError
from .capture import capture as _capture
from .compare import Mismatch
from .nodes import KINDS, GraphNode
from .program import Graph

__all__ = [
    "KINDS",
    "STAGES",
    "CaptureError",
    "CompiledAudit",
    "Graph",
    "GraphNode",
    "GraphWidget",
    "Mismatch",
    "graph",
]


def __getattr__(name: str) -> Any:
    # the live widget loads on first use: `sw.graph(...)` never imports anywidget/IPython
    if name == "GraphWidget":
        from .widget import GraphWidget

        return GraphWidget
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def graph(
    model_or_fn: Any,
    *example_inputs: Any,
    model_kwargs: dict[str, Any] | None = None,
    dynamic_shapes: Any = None,
    stage: str = "aten",
) -> Graph:
    """The nodes of an exported or compiled program, each with its layout, kind and line.

    ``model_or_fn``: an ``nn.Module``, a function, either wrapped by ``torch.compile``, or a
    ``torch.export.ExportedProgram``.  ``stage``: ``"export"`` (the graph as traced), ``"aten"``
    (after ``run_decompositions()``), ``"forward"`` / ``"backward"`` (the AOTAutograd graphs
    ``torch.compile`` hands its backend; captured without Inductor).  ``dynamic_shapes`` is
    ``torch.export``'s; for the compiled stages any value compiles with ``dynamic=True``, as does
    a ``torch.compile(..., dynamic=True)`` wrapper (the program the user compiled).

    ``.where`` is the user's line: at the export stages ``torch.export``'s default tracer keeps
    only the frames of functions named ``forward``, so a node made inside a helper that
    ``forward`` calls names the ``forward`` line that called it; ``stage="forward"`` names the
    helper's own line.  ``model_kwargs`` must be a dict (else ``TypeError``, one line).

    Looking never changes the program: symbolic sizes stay symbols and nothing guards.  A model
    that cannot be captured (data-dependent control flow at the export stages, refused
    ``dynamic_shapes``) raises :class:`CaptureError`, one line, with torch's error as its cause;
    example inputs the model's signature cannot take raise ``TypeError`` naming both.

    >>> import torch, stridewidget as sw
    >>> lin = torch.nn.Linear(4, 4)
    >>> g = sw.graph(lin, torch.zeros(3, 4), stage="forward")
    >>> [n.kind for n in g.nodes if n.op == "call_function"]
    ['view', 'compute']
    """
    with unseen():  # the capture's runs are no event of a track_copies() block around it
        return Graph(_capture(model_or_fn, example_inputs, model_kwargs, dynamic_shapes, stage))


class _CallableModule(types.ModuleType):
    """``sw.graph`` is this package (Python's import sets the package attribute to the
    subpackage), so calling the package calls :func:`graph`."""

    def __call__(self, *args: Any, **kwargs: Any) -> Graph:
        return graph(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
