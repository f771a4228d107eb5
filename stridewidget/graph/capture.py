"""Capturing the graphs ``sw.graph`` looks at: ``torch.export`` (as traced, and after
``run_decompositions()``) and the AOTAutograd forward and backward graphs ``torch.compile`` hands
its backend (recorded by a backend that runs them as they are: no Inductor).

Each capture keeps the real arguments that run its graphs (``Capture.real_inputs``), so a graph
can be replayed eagerly on real tensors (``Graph.run``), and the eager model for ``compare_eager``.
The user's model comes back as it was: buffers (BatchNorm statistics) are restored after the
compiled run, and gradients are taken with ``torch.autograd.grad`` (no ``.grad`` is touched).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import torch

from .._compat import compiled_original, recording_backend, reset_dynamo, tree_leaves

__all__ = ["STAGES", "Capture", "capture"]

STAGES = ("export", "aten", "forward", "backward")


@dataclass
class Capture:
    """The graph modules of one stage, the real arguments of each, and the eager callable."""

    stage: str
    modules: list[Any]
    real_inputs: list[list[Any]]
    eager: Callable[..., Any] | None
    args: tuple[Any, ...]
    kwargs: dict[str, Any] = field(default_factory=dict)
    program: Any = None


class _Function(torch.nn.Module):
    """A plain function as a module, for ``torch.export``."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        super().__init__()
        self.fn = fn

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(*args, **kwargs)


def _check_stage(stage: Any) -> str:
    if stage not in STAGES:
        raise ValueError(f"stage must be one of {', '.join(map(repr, STAGES))}, got {stage!r}")
    return stage


def capture(
    target: Any,
    args: tuple[Any, ...],
    kwargs: dict[str, Any] | None,
    dynamic_shapes: Any,
    stage: str,
) -> Capture:
    """The graphs of ``target`` (a model, a function, a ``torch.compile`` wrapper of either, or
    an ``ExportedProgram``) at ``stage``."""
    _check_stage(stage)
    kwargs = dict(kwargs or {})
    if isinstance(target, torch.export.ExportedProgram):
        if stage not in ("export", "aten"):
            raise ValueError(
                f"an ExportedProgram has no {stage!r} graph: pass the model itself for "
                "stage='forward'/'backward' (the graphs torch.compile hands its backend)"
            )
        if not args:
            args, kwargs = target.example_inputs or ((), {})
        return _exported(target, target.module(), tuple(args), dict(kwargs), stage)
    model = compiled_original(target) or target
    if not callable(model):
        raise TypeError(
            f"sw.graph takes a model, a function or an ExportedProgram, got {type(model).__name__}"
        )
    if stage in ("export", "aten"):
        module = model if isinstance(model, torch.nn.Module) else _Function(model)
        return _exported(_export(module, args, kwargs, dynamic_shapes), model, args, kwargs, stage)
    return _compiled(model, tuple(args), kwargs, dynamic_shapes is not None, stage)


def _export(module: Any, args: tuple, kwargs: dict, dynamic_shapes: Any) -> Any:
    """``torch.export.export``, strict (traced by dynamo) first: its stack traces keep every
    frame, so ``.where`` finds the user's line inside helpers; the default (non-strict) tracer
    keeps only ``forward``'s frame, and is the fallback for what dynamo cannot trace."""
    options = {"kwargs": kwargs or None, "dynamic_shapes": dynamic_shapes}
    try:
        return torch.export.export(module, tuple(args), strict=True, **options)
    except Exception:  # dynamo could not trace it; a real error is raised again just below
        return torch.export.export(module, tuple(args), strict=False, **options)


def _exported(program: Any, eager: Any, args: tuple, kwargs: dict, stage: str) -> Capture:
    if stage == "aten":
        program = program.run_decompositions()
    leaves = iter(tree_leaves((args, kwargs)))
    constants = getattr(program, "constants", {})
    inputs = []
    for spec in program.graph_signature.input_specs:
        if spec.kind.name == "USER_INPUT":
            inputs.append(next(leaves))
        elif spec.target in program.state_dict:
            inputs.append(program.state_dict[spec.target])
        else:
            inputs.append(constants.get(spec.target))
    return Capture(stage, [program.graph_module], [inputs], eager, args, kwargs, program)


@contextlib.contextmanager
def buffers_kept(model: Any) -> Iterator[None]:
    """Restore the model's buffers (BatchNorm running statistics...) after running it."""
    saved = []
    if isinstance(model, torch.nn.Module):
        saved = [(b, b.detach().clone()) for b in model.buffers()]
    try:
        yield
    finally:
        with torch.no_grad():
            for buffer, value in saved:
                buffer.copy_(value)


def _differentiable(model: Any, args: tuple, kwargs: dict) -> list[Any]:
    params = list(model.parameters()) if isinstance(model, torch.nn.Module) else []
    leaves = [t for t in tree_leaves((args, kwargs)) if isinstance(t, torch.Tensor)]
    return [t for t in params + leaves if t.requires_grad]


def compiled_captures(
    model: Any, args: tuple, kwargs: dict, dynamic: bool, backward: bool, strict: bool = True
) -> dict[str, Capture]:
    """One compiled run (and its backward when ``backward``): a capture per recorded stage.
    Without ``strict``, a model that has nothing to differentiate just has no backward graph."""
    recorded: list[tuple[str, Any, list[Any]]] = []

    def record(graph_stage: str, gm: Any, real: list[Any]) -> None:
        recorded.append((graph_stage, gm, real))

    def run_once() -> None:
        compiled = torch.compile(model, backend=recording_backend(record), dynamic=dynamic or None)
        outputs = [t for t in tree_leaves(compiled(*args, **kwargs)) if isinstance(t, torch.Tensor)]
        wanted = _differentiable(model, args, kwargs)
        differentiable = [t for t in outputs if t.requires_grad]
        if backward and (strict or (wanted and differentiable)):
            if not wanted or not differentiable:
                raise ValueError(
                    "no backward graph: nothing the model computes requires grad "
                    "(give it parameters or inputs with requires_grad=True)"
                )
            grads = [torch.ones_like(t) for t in differentiable]
            torch.autograd.grad(differentiable, wanted, grads, allow_unused=True)

    with buffers_kept(model):
        run_once()
        if not recorded:  # a cached compile ran (this model was captured before): compile afresh
            reset_dynamo()
            run_once()
    captures = {}
    for stage in ("forward", "backward"):
        chosen = [(gm, real) for s, gm, real in recorded if s == stage]
        if chosen:
            modules, inputs = [gm for gm, _ in chosen], [real for _, real in chosen]
            captures[stage] = Capture(stage, modules, inputs, model, args, kwargs)
    return captures


def _compiled(model: Any, args: tuple, kwargs: dict, dynamic: bool, stage: str) -> Capture:
    captures = compiled_captures(model, args, kwargs, dynamic, stage == "backward")
    if stage not in captures:
        raise ValueError(f"torch.compile made no {stage} graph for this model and these inputs")
    return captures[stage]
