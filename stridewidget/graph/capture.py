"""Capturing the graphs ``sw.graph`` looks at: ``torch.export`` (as traced, and after
``run_decompositions()``) and the AOTAutograd forward and backward graphs ``torch.compile`` hands
its backend (recorded by a backend that runs them as they are: no Inductor).

Each capture keeps copies of the real arguments that run its graphs (``Capture.real_inputs``), so
a graph can be replayed eagerly on real tensors (``Graph.run``), and the eager model for
``compare_eager``.  Looking leaves the user's model, data and dynamo state as they were: the model
runs on copies of the inputs (:func:`cloned`), buffers (BatchNorm statistics) are restored after
the compiled run, gradients are taken with ``torch.autograd.grad`` (no ``.grad`` is touched), and
every capture compiles with one of two process-wide backends (:func:`_backend`), so dynamo's
cache is never reset and a second capture at the same sizes reuses the first one's entry.  Each
new input size still adds an entry for the model's ``forward``, which counts against dynamo's
recompile limit for that code (the user's own ``torch.compile`` of it shares the limit).
"""

from __future__ import annotations

import contextlib
import inspect
import io
import logging
import sys
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import torch

from .._compat import (
    compiled_dynamic,
    compiled_original,
    export_user_error,
    interception_modes_on,
    recording_backend,
    tree_leaves,
    tree_map,
)

__all__ = ["STAGES", "Capture", "CaptureError", "capture"]

STAGES = ("export", "aten", "forward", "backward")


class CaptureError(ValueError):
    """``sw.graph`` could not capture the model at the stage asked for: one line naming the
    model, the stage and torch's own first line; torch's full error is ``__cause__``.

    >>> import torch, stridewidget as sw
    >>> class Branchy(torch.nn.Module):
    ...     def forward(self, x):
    ...         return x.t() if x.sum() > 0 else x
    >>> try:
    ...     sw.graph(Branchy(), torch.ones(2, 3), stage="export")
    ... except sw.graph.CaptureError as error:
    ...     print(str(error).split(":")[0], "|", type(error.__cause__).__name__)
    sw.graph could not capture Branchy at stage 'export' | GuardOnDataDependentSymNode
    """


def _model_name(model: Any) -> str:
    if isinstance(model, _Function):
        model = model.fn
    if isinstance(model, torch.nn.Module):
        return type(model).__name__
    return getattr(model, "__qualname__", None) or type(model).__name__


#: What to try when torch's error is of this kind (matched by class name: no private import).
_HINTS = {
    "GuardOnDataDependentSymNode": (
        "data-dependent control flow (such as `if x.sum() > 0`) cannot be exported: use "
        "torch.cond, or stage='forward', where torch.compile breaks the graph there"
    ),
    "UserError": "torch.export refused these dynamic_shapes or inputs",
}


def _first_line(error: BaseException) -> str:
    """The first line of an error's message; a line that only announces the next one
    (``backend='compiler_fn' raised:``) is joined to it."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    if len(lines) > 1 and lines[0].endswith(":"):
        return f"{lines[0]} {lines[1]}"
    return lines[0] if lines else ""


def _chain(error: BaseException) -> list[BaseException]:
    """The error and what caused it, outermost first: ``__cause__``, dynamo's
    ``inner_exception``, or the exception being handled (even one torch's own error hides with
    ``from None``: dynamo rewraps the real error so)."""
    chain = [error]
    while len(chain) < 20:
        last = chain[-1]
        hidden = last.__suppress_context__ and not type(last).__module__.startswith("torch")
        context = None if hidden else last.__context__
        cause = last.__cause__ or getattr(last, "inner_exception", None) or context
        if not isinstance(cause, BaseException) or cause in chain:
            break
        chain.append(cause)
    return chain


def _capture_error(
    model: Any, stage: str, tool: str, error: BaseException, caller: str = "sw.graph"
) -> CaptureError:
    chain = _chain(error)
    said = f"{type(error).__name__}: {_first_line(error)}"
    inner = next((e for e in reversed(chain[1:]) if _first_line(e)), None)
    if inner is not None and _first_line(inner) not in said:
        said += f", caused by {type(inner).__name__}: {_first_line(inner)}"
    hint = next((_HINTS[type(e).__name__] for e in chain if type(e).__name__ in _HINTS), "")
    hint = f" ({hint})" if hint else ""
    return CaptureError(
        f"{caller} could not capture {_model_name(model)} at stage {stage!r}: {tool} failed"
        f"{hint}: {said} (torch's full error is this one's __cause__)"
    )


def _check_arguments(model: Any, args: tuple, kwargs: dict) -> None:
    """Refuse example inputs the model's signature cannot take, naming both."""
    function = model.forward if isinstance(model, torch.nn.Module) else model
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):  # a builtin, a C function: torch will say
        return
    try:
        signature.bind(*args, **kwargs)
    except TypeError as error:
        given = f"{len(args)} positional argument{'s' if len(args) != 1 else ''}"
        if kwargs:
            given += f" and keywords {', '.join(map(str, kwargs))}"
        suffix = ".forward" if isinstance(model, torch.nn.Module) else ""
        raise TypeError(
            f"sw.graph: {_model_name(model)}{suffix}{signature} cannot take the example inputs: "
            f"given {given} ({error})"
        ) from None


class _HeldRecords(logging.Filter):
    def __init__(self) -> None:
        super().__init__()
        self.records: dict[int, logging.LogRecord] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        self.records.setdefault(id(record), record)
        return False


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """Hold what a capture attempt prints (to stdout, stderr, or torch's log handlers): an
    attempt that fails prints nothing (torch dumps its traced graph with some errors); one that
    succeeds prints what it held, once it is done."""
    held, out, err = _HeldRecords(), io.StringIO(), io.StringIO()
    handlers = {id(h): h for h in logging.getLogger().handlers}
    for name in list(logging.root.manager.loggerDict):
        if name == "torch" or name.startswith("torch."):
            handlers.update({id(h): h for h in getattr(logging.getLogger(name), "handlers", [])})
    for handler in handlers.values():
        handler.addFilter(held)
    failed = False
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            yield
    except BaseException:
        failed = True
        raise
    finally:
        for handler in handlers.values():
            handler.removeFilter(held)
        if not failed:
            sys.stdout.write(out.getvalue())
            sys.stderr.write(err.getvalue())
            for record in held.records.values():
                logging.getLogger(record.name).handle(record)


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
    #: per backward graph, what each output is the gradient of: ``("param", name)``,
    #: ``("input", i)`` (the i-th tensor leaf of the arguments) or ``None``
    grad_of: list[list[Any]] = field(default_factory=list)
    grad_enabled: bool = True  # the grad mode the graphs were traced under (eager reruns use it)
    #: per forward graph, what each argument is: ``("param", name)``, ``("buffer", name)``,
    #: ``("input", i)`` or ``None`` (the writebacks name the buffer they write)
    input_sources: list[list[Any]] = field(default_factory=list)
    #: the gradients the compiled run really produced, by source (``("input", i)``...), of the
    #: inputs an output aliases: its gradient is added outside the backward graph
    compiled_grads: dict[Any, Any] = field(default_factory=dict)


class _Function(torch.nn.Module):
    """A plain function as a module, for ``torch.export``."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        super().__init__()
        self.fn = _named_forward(fn)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(*args, **kwargs)


def _named_forward(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` with its code named ``forward``: the default export tracer keeps only the frames of
    functions named ``forward`` in a node's stack trace, so ``.where`` finds the function's line
    (same file, same lines, same globals and closure)."""
    code = getattr(fn, "__code__", None)
    if not isinstance(fn, types.FunctionType) or code is None:
        return fn
    renamed = types.FunctionType(
        code.replace(co_name="forward"),
        fn.__globals__,
        fn.__name__,
        fn.__defaults__,
        fn.__closure__,
    )
    renamed.__kwdefaults__ = fn.__kwdefaults__
    return renamed


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
    if kwargs is not None and not isinstance(kwargs, dict):
        raise TypeError(
            f"sw.graph: model_kwargs must be a dict of keyword inputs, got "
            f"{type(kwargs).__name__}; pass model_kwargs={{'mask': ...}}"
        )
    # a copy taken now: what the eager reruns start from, whatever the user does to theirs later
    args, kwargs = cloned((tuple(args), dict(kwargs or {})))
    if isinstance(target, torch.export.ExportedProgram):
        if stage not in ("export", "aten"):
            raise ValueError(
                f"an ExportedProgram has no {stage!r} graph: pass the model itself for "
                "stage='forward'/'backward' (the graphs torch.compile hands its backend)"
            )
        if dynamic_shapes is not None:
            raise ValueError(
                "an ExportedProgram's dynamic shapes were fixed when it was exported: pass "
                "dynamic_shapes to torch.export.export, or pass the model to sw.graph"
            )
        if not args:  # else the inputs given are the ones compare_eager and run() use
            args, kwargs = target.example_inputs or ((), {})
        return _exported(target, target.module(), tuple(args), dict(kwargs), stage)
    model = compiled_original(target) or target
    if not callable(model):
        raise TypeError(
            f"sw.graph takes a model, a function or an ExportedProgram, got {type(model).__name__}"
        )
    _check_arguments(model, args, kwargs)
    if stage in ("export", "aten"):
        module = model if isinstance(model, torch.nn.Module) else _Function(model)
        try:
            program = _export(module, args, kwargs, dynamic_shapes)
        except Exception as error:
            raise _capture_error(model, stage, "torch.export", error) from error
        return _exported(program, model, args, kwargs, stage)
    # the compiled stages capture the program the user compiled: dynamic=True as theirs was
    dynamic = dynamic_shapes is not None or compiled_dynamic(target) is True
    return _compiled(model, tuple(args), kwargs, dynamic, stage)


def _export(module: Any, args: tuple, kwargs: dict, dynamic_shapes: Any) -> Any:
    """``torch.export.export`` as the user would call it (non-strict, torch's default): a strict
    (dynamo) trace can add constraints the default refuses, and then rejects other sizes.  Strict
    is the fallback for what the default tracer cannot trace."""
    options = {"kwargs": kwargs or None, "dynamic_shapes": dynamic_shapes}
    try:
        with _quiet():
            return torch.export.export(module, tuple(args), **options)
    except export_user_error():
        raise  # the user's dynamic_shapes are refused: a strict trace would hide it
    except Exception as error:  # the default tracer failed: try dynamo, else raise its error
        try:
            with _quiet():
                return torch.export.export(module, tuple(args), strict=True, **options)
        except Exception:
            raise error from None


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
    captured = Capture(stage, [program.graph_module], [inputs], eager, args, kwargs, program)
    captured.grad_enabled = torch.is_grad_enabled()
    return captured


def _clone(tensor: Any, storages: dict[Any, Any]) -> Any:
    if type(tensor) not in (torch.Tensor, torch.nn.Parameter):
        return tensor  # FakeTensors, subclasses: nothing real to protect or to copy
    if tensor.layout != torch.strided:
        return tensor.clone()  # sparse: no strided storage to share
    key = (tensor.device, tensor.untyped_storage().data_ptr())
    if key not in storages:
        storages[key] = tensor.untyped_storage().clone()
    with torch.no_grad():
        copy = torch.empty(0, dtype=tensor.dtype, device=tensor.device)
        copy.set_(storages[key], tensor.storage_offset(), tensor.size(), tensor.stride())
    return copy.requires_grad_(tensor.requires_grad)


def cloned(tree: Any) -> Any:
    """``tree`` with each tensor replaced by a copy of the same sizes, strides and offset, and
    the same aliasing (each storage is copied once): running a model on it leaves the user's
    tensors as they were, and the model sees the layouts the user's tensors have."""
    storages: dict[Any, Any] = {}
    return tree_map(lambda t: _clone(t, storages) if isinstance(t, torch.Tensor) else t, tree)


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


#: The captures now running, innermost last: the process-wide backends report to the last one.
_RECORDERS: list[Callable[[str, Any, list[Any]], None]] = []
_BACKENDS: dict[bool, Any] = {}


def _report(stage: str, gm: Any, args: list[Any]) -> None:
    if _RECORDERS:
        _RECORDERS[-1](stage, gm, args)


def _backend(dynamic: bool) -> Any:
    """One recording backend per ``dynamic`` setting for the whole process.  Dynamo's cache
    entries match the backend they were compiled with: with the same backend object a second
    capture of a model reuses the first one's entry (its graphs report again) instead of adding
    one; a new backend per capture would use up the model's recompile limit, past which the
    user's own ``torch.compile`` of it silently runs eagerly."""
    if dynamic not in _BACKENDS:
        _BACKENDS[dynamic] = recording_backend(_report)
    return _BACKENDS[dynamic]


class NothingToDifferentiate(ValueError):
    """No backward graph: nothing the model computes requires grad."""


def _cuda_indices(model: Any, args: tuple, kwargs: dict) -> list[int]:
    """The CUDA devices the model's parameters and the inputs are on (their generators kept)."""
    held = list(model.parameters()) if isinstance(model, torch.nn.Module) else []
    tensors = [t for t in tree_leaves((args, kwargs, held)) if isinstance(t, torch.Tensor)]
    return sorted({t.device.index or 0 for t in tensors if t.device.type == "cuda"})


def compiled_captures(
    model: Any,
    args: tuple,
    kwargs: dict,
    dynamic: bool,
    backward: bool,
    strict: bool = True,
    caller: str = "sw.graph",
    stage: str | None = None,
) -> dict[str, Capture]:
    """One compiled run (and its backward when ``backward``) on copies of the inputs: a capture
    per recorded stage.  Without ``strict``, a model that has nothing to differentiate just has no
    backward graph.  What the run prints is held (and dropped if it fails); a run torch cannot
    compile raises :class:`CaptureError`, one line from ``caller`` naming ``stage`` (else the
    graph that failed: ``forward`` or ``backward``)."""
    if interception_modes_on():  # torch.compile would run it eagerly, and that code for good
        raise CaptureError(
            f"{caller}: torch.compile makes no graph while an interception mode is on "
            "(sw.track_copies(), sw.sanitize(), or a TorchFunctionMode / TorchDispatchMode of "
            f"your own): call {caller} outside that block"
        )
    recorded: list[tuple[str, Any, list[Any]]] = []
    seen: set[int] = set()

    def record(graph_stage: str, gm: Any, real: list[Any]) -> None:
        if id(gm) not in seen:  # the first call of each graph (a graph can run in a loop)
            seen.add(id(gm))
            recorded.append((graph_stage, gm, cloned(real)))  # before the run writes to them
            if graph_stage == "forward":  # its effect tokens have no gradient: skipped
                tokens = gm.meta.get("effect_tokens") or 0
                sources.append([names.get(id(t)) for t in real[tokens:]])

    run_args, run_kwargs = cloned((tuple(args), kwargs))
    sources: list[list[Any]] = []  # per forward graph, what each argument is (see grad_of)
    names = {id(t): ("input", i) for i, t in enumerate(tree_leaves((run_args, run_kwargs)))}
    if isinstance(model, torch.nn.Module):
        names.update({id(p): ("param", name) for name, p in model.named_parameters()})
        names.update({id(b): ("buffer", name) for name, b in model.named_buffers()})
    compiled = torch.compile(model, backend=_backend(dynamic), dynamic=dynamic)
    _RECORDERS.append(record)
    phase = "forward"
    devices = _cuda_indices(model, args, kwargs)
    try:  # its random draws (dropout) are the run's own: the caller's generators are kept
        with torch.random.fork_rng(devices=devices), buffers_kept(model), _quiet():
            outputs = compiled(*run_args, **run_kwargs)
            phase = "backward"
            real_grads = _backward(model, run_args, run_kwargs, outputs, backward, strict)
    except NothingToDifferentiate:
        raise
    except Exception as error:
        failed = _capture_error(model, stage or phase, "torch.compile", error, caller)
        raise failed from error
    finally:
        _RECORDERS.remove(record)
    if not recorded:
        raise ValueError(_no_graph(run_args, run_kwargs))
    captures = {}
    for stage in ("forward", "backward"):
        chosen = [(gm, real) for s, gm, real in recorded if s == stage]
        if chosen:
            modules, inputs = [gm for gm, _ in chosen], [real for _, real in chosen]
            captures[stage] = Capture(stage, modules, inputs, model, args, kwargs)
            captures[stage].grad_enabled = torch.is_grad_enabled()
    if "forward" in captures:
        captures["forward"].input_sources = sources
    if "backward" in captures:  # backward graphs run in the reverse order of the forward ones
        captures["backward"].grad_of = sources[::-1]
        captures["backward"].compiled_grads = {
            names[key]: grad for key, grad in real_grads.items() if key in names
        }
    return captures


def _no_graph(args: tuple, kwargs: dict) -> str:
    """Why dynamo made no graph: a sparse (non-strided) input, else what it skips."""
    tensors = [t for t in tree_leaves((args, kwargs)) if isinstance(t, torch.Tensor)]
    unstrided = next((t.layout for t in tensors if t.layout != torch.strided), None)
    if unstrided is not None:
        return (
            f"torch.compile made no graph for these inputs: an input is {unstrided}, and "
            "torch.compile runs a model with a non-strided input eagerly; pass a dense tensor "
            "(t.to_dense())"
        )
    return (
        "torch.compile made no graph for this model and these inputs: dynamo ran it "
        "eagerly (it skips some modules, such as nn.LSTM; or the model's recompile limit, "
        "torch._dynamo.config.recompile_limit, is used up: raise it, or call "
        "torch._dynamo.reset() yourself, and capture again)"
    )


def _backward(
    model: Any, args: tuple, kwargs: dict, outputs: Any, backward: bool, strict: bool
) -> dict[int, Any]:
    """Differentiate the compiled outputs (when ``backward``): each gradient by its tensor's id."""
    tensors = [t for t in tree_leaves(outputs) if isinstance(t, torch.Tensor)]
    wanted = _differentiable(model, args, kwargs)
    differentiable = [t for t in tensors if t.requires_grad]
    if backward and (strict or (wanted and differentiable)):
        if not wanted or not differentiable:
            raise NothingToDifferentiate(
                "no backward graph: nothing the model computes requires grad "
                "(give it parameters or inputs with requires_grad=True)"
            )
        grads = [torch.ones_like(t) for t in differentiable]
        found = torch.autograd.grad(differentiable, wanted, grads, allow_unused=True)
        # only where an output shares an input's storage (is it, or a view of it) does a
        # gradient reach that input outside the backward graph
        shared = {t.untyped_storage().data_ptr() for t in tensors if t.layout == torch.strided}
        return {
            id(t): g
            for t, g in zip(wanted, found)
            if g is not None and t.untyped_storage().data_ptr() in shared
        }
    return {}


def _compiled(model: Any, args: tuple, kwargs: dict, dynamic: bool, stage: str) -> Capture:
    backward = stage == "backward"
    captures = compiled_captures(model, args, kwargs, dynamic, backward, stage=stage)
    if stage not in captures:
        raise ValueError(f"torch.compile made no {stage} graph for this model and these inputs")
    return captures[stage]
