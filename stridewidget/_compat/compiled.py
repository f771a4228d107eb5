"""``torch.compile`` and ``torch.export``: the model behind a compiled wrapper, a backend that
records AOTAutograd's graphs, export's user-error class, and the compiled functions dynamo ran
eagerly while a dispatch mode was on."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = [
    "compiled_backend",
    "compiled_dynamic",
    "compiled_in_place",
    "compiled_original",
    "eagerly",
    "export_user_error",
    "mode_skipped_compiles",
    "recording_backend",
    "traced_by_dynamo",
]


def _torch_version() -> tuple[int, int]:
    torch = sys.modules["torch"]
    major, minor = torch.__version__.split(".")[:2]
    return int(major), int(minor)


def compiled_original(obj: Any) -> Any:
    """The model or function a ``torch.compile`` wrapper compiles, else ``None``.

    ``OptimizedModule._orig_mod`` and ``_torchdynamo_orig_callable`` (torch 2.0 to 2.13); where
    they are gone, ``None``: the wrapper is audited as it is.

    >>> import torch
    >>> compiled_original(torch.nn.Linear(2, 2)) is None
    True
    """
    dynamo = sys.modules.get("torch._dynamo.eval_frame")
    optimized = getattr(dynamo, "OptimizedModule", None)
    if optimized is not None and isinstance(obj, optimized):
        return obj._orig_mod
    return getattr(obj, "_torchdynamo_orig_callable", None)


def compiled_dynamic(obj: Any) -> bool | None:
    """The ``dynamic=`` a ``torch.compile`` wrapper was made with (``True``, ``False``, or
    ``None``: torch's default, static first), else ``None``.

    The wrapper's ``OptimizeContext._dynamic``: an ``OptimizedModule`` keeps it as
    ``dynamo_ctx``, a compiled function in its closure cell ``self`` (torch 2.1 to 2.13).  Where
    it is gone, ``None``: the program is captured static, as torch compiles it first.

    >>> import torch
    >>> compiled_dynamic(torch.compile(torch.nn.Linear(2, 2), dynamic=True))
    True
    >>> compiled_dynamic(torch.compile(lambda x: x, dynamic=True)), compiled_dynamic(abs)
    (True, None)
    """
    context = getattr(obj, "dynamo_ctx", None)
    code = getattr(obj, "__code__", None)
    if context is None and code is not None and "self" in code.co_freevars:
        cell = obj.__closure__[code.co_freevars.index("self")]
        context = cell.cell_contents
    dynamic = getattr(context, "_dynamic", None)
    return dynamic if isinstance(dynamic, bool) else None


def compiled_backend(obj: Any) -> str | None:
    """The name of the backend a ``torch.compile`` wrapper compiles with (``"inductor"``,
    ``"aot_eager"``, ``"eager"``, a function's ``__name__``), else ``None``.

    Read from the wrapper's ``OptimizeContext`` (``OptimizedModule.dynamo_ctx``, or a compiled
    function's closure): its ``callback`` wraps the backend in ``_torchdynamo_orig_backend``
    attributes, innermost last (torch 2.13); where that is gone, ``None``.

    >>> import torch
    >>> compiled_backend(torch.compile(torch.nn.Linear(2, 2), backend="aot_eager"))
    'aot_eager'
    >>> compiled_backend(torch.compile(lambda x: x)), compiled_backend(torch.nn.Linear(2, 2))
    ('inductor', None)
    """
    context = getattr(obj, "dynamo_ctx", None)
    if context is None:
        cells = getattr(obj, "__closure__", None) or ()
        found = [c.cell_contents for c in cells if hasattr(c.cell_contents, "callback")]
        context = found[0] if found else None
    backend = getattr(context, "callback", None)
    for _ in range(8):
        inner = getattr(backend, "_torchdynamo_orig_backend", None)
        if inner is None:
            break
        backend = inner
    if backend is None or compiled_original(obj) is None:
        return None
    name = getattr(backend, "compiler_name", None) or getattr(backend, "__name__", None)
    return name if isinstance(name, str) else type(backend).__name__


def compiled_in_place(module: Any) -> bool:
    """Was ``module`` compiled in place (``module.compile()``, which sets
    ``Module._compiled_call_impl``, torch 2.2 to 2.13)?  Where the attribute is gone, ``False``.

    >>> import torch
    >>> layer = torch.nn.Linear(2, 2)
    >>> compiled_in_place(layer)
    False
    >>> layer.compile()
    >>> compiled_in_place(layer)
    True
    """
    return getattr(module, "_compiled_call_impl", None) is not None


def recording_backend(record: Any) -> Any:
    """A ``torch.compile`` backend built on AOTAutograd that hands ``record(stage, gm, args)``
    every forward and backward graph with the real arguments of each call, and runs the graphs
    as they are (eagerly: no Inductor).  A forward graph's ``gm.meta["user_outputs"]`` is the
    ``(start, count)`` of the user's outputs among the graph's outputs (AOTAutograd returns the
    effect tokens first, then the mutated inputs, and the saved activations last), or ``None``
    where unknown; ``gm.meta["effect_tokens"]`` is how many effect tokens (ops such as
    ``linalg.inv`` that check for errors thread one) come first among its inputs and outputs; its
    ``gm.meta["mutated_inputs"]`` lists, for each of the mutated inputs' outputs in order, the
    index of the input whose data AOTAutograd's runtime copies it into after the graph (``-1``: a
    metadata-only mutation, set by ``as_strided_``, no data written), or is ``None``.

    ``torch._dynamo.backends.common.aot_autograd`` and ``TracingContext.fw_metadata`` (a
    ``ViewAndMutationMeta``: ``num_mutated_inp_runtime_indices``, ``mutated_inp_runtime_indices``,
    ``input_info[i].mutates_data``; torch 2.1 to 2.13).  Without ``aot_autograd`` (or on torch < 2.1) a
    ``RuntimeError`` that says so; without ``fw_metadata`` the window is ``None`` and the outputs
    are matched by their shapes.
    """
    if _torch_version() < (2, 1):  # pragma: no cover
        raise RuntimeError("sw.graph(stage='forward'/'backward') needs torch >= 2.1")
    try:
        from torch._dynamo.backends.common import aot_autograd
    except ImportError:
        raise RuntimeError(
            "sw.graph(stage='forward'/'backward') needs torch._dynamo's aot_autograd, which this "
            "torch does not have"
        ) from None

    def compiler(stage: str) -> Any:
        def compile_graph(gm: Any, example_inputs: Any) -> Any:
            if stage == "forward":
                gm.meta["user_outputs"] = _user_output_window()
                gm.meta["mutated_inputs"] = _mutated_inputs()
                gm.meta["effect_tokens"] = _effect_tokens()

            def run(args: list[Any]) -> Any:
                record(stage, gm, list(args))
                return gm(*args)

            run._boxed_call = True  # AOTAutograd's calling convention: one list of arguments
            return run

        return compile_graph

    return aot_autograd(fw_compiler=compiler("forward"), bw_compiler=compiler("backward"))


def _forward_metadata() -> Any:
    try:
        from torch._guards import TracingContext
    except ImportError:  # moved: compare_eager falls back to the outputs' shapes
        return None
    return getattr(TracingContext.try_get(), "fw_metadata", None)


def _effect_tokens() -> int:
    """How many effect tokens the forward graph takes first and returns first
    (``ViewAndMutationMeta.tokens``, torch 2.3 to 2.13; none before, or where it moved)."""
    return len(getattr(_forward_metadata(), "tokens", None) or ())


def _user_output_window() -> tuple[int, int] | None:
    meta = _forward_metadata()
    try:
        mutated = int(meta.num_mutated_inp_runtime_indices)
        return _effect_tokens() + mutated, len(meta.output_info)
    except AttributeError:  # moved: compare_eager falls back to the outputs' shapes
        return None


def _mutated_inputs() -> list[int] | None:
    """Per mutated-input output of the forward graph being compiled, the input its data is
    copied into (``-1`` where only its metadata changes); ``None`` where unknown."""
    try:
        from torch._guards import TracingContext
    except ImportError:  # moved: no writeback is shown
        return None
    meta = getattr(TracingContext.try_get(), "fw_metadata", None)
    try:
        info = meta.input_info
        return [i if info[i].mutates_data else -1 for i in meta.mutated_inp_runtime_indices]
    except (AttributeError, IndexError, TypeError):  # moved: no writeback is shown
        return None


def export_user_error() -> type:
    """The error ``torch.export`` raises for the user's own mistakes, such as ``dynamic_shapes``
    that its constraints refuse (``torch._dynamo.exc.UserError``, torch 2.1 to 2.13); where it
    moved, an exception class nothing raises, so every export error falls back to strict."""
    try:
        from torch._dynamo.exc import UserError
    except ImportError:  # moved: every export error falls back to strict
        return type("NeverRaised", (Exception,), {})
    return UserError


#: The words of dynamo's reason for a frame it skips because a dispatch mode is on (torch 2.13:
#: "non-infra torch dispatch mode present, this is not supported today in torch.compile").
_MODE_SKIP = "dispatch mode"


@contextmanager
def mode_skipped_compiles() -> Iterator[list[str]]:
    """The frames ``torch.compile`` was asked to run while the block ran and ran eagerly because
    a dispatch mode was on, as ``"name (file:line)"``, each compiled function before the frames it
    called: dynamo skips every frame it sees under a dispatch mode.  Dynamo also marks each
    skipped code to be skipped in every later call (a compiled function first called under the
    audit would run eagerly for good, one compiled before would never recompile): on exit, those
    codes are reset (a function compiled before is compiled again on its next call).

    ``torch._dynamo.eval_frame.dynamo_tls.skip_reasons`` (dynamo's list of skipped frames, kept
    while it is a list), ``torch._dynamo.convert_frame.input_codes`` and
    ``torch._C._dynamo.eval_frame.reset_code`` (checked on torch 2.13).  Where dynamo was never
    imported, ``skip_reasons`` is gone or in use (a ``fullgraph=True`` compile running), the list
    stays empty; without the others, nothing is reset.

    >>> with mode_skipped_compiles() as skipped:
    ...     pass
    >>> skipped
    []
    """
    found: list[str] = []
    eval_frame = sys.modules.get("torch._dynamo.eval_frame")
    tls = getattr(eval_frame, "dynamo_tls", None)
    if tls is None or getattr(tls, "skip_reasons", ()) is not None:
        yield found
        return
    tls.skip_reasons = reasons = []
    try:
        yield found
    finally:
        if tls.skip_reasons is reasons:
            tls.skip_reasons = None
        skipped = [r.partition("): ")[0] + ")" for r in reasons if _MODE_SKIP in r]
        found.extend(dict.fromkeys(skipped))
        if found:
            reset_codes(set(found))


def reset_codes(names: set[str]) -> None:
    """Reset dynamo's state of each code it saw whose ``"name (file:line)"`` is in ``names``
    (``torch._dynamo.convert_frame.input_codes`` and ``torch._C._dynamo.eval_frame.reset_code``,
    checked on torch 2.13; without them nothing is reset).

    >>> reset_codes({"nothing (nowhere.py:1)"})
    """
    convert_frame = sys.modules.get("torch._dynamo.convert_frame")
    seen = getattr(getattr(convert_frame, "input_codes", None), "seen", ())
    try:
        from torch._C._dynamo.eval_frame import reset_code
    except ImportError:  # moved: the codes stay skipped
        return
    for ref in list(seen):
        code = ref()
        if (
            code is not None
            and f"{code.co_name} ({code.co_filename}:{code.co_firstlineno})" in names
        ):
            reset_code(code)


def traced_by_dynamo() -> bool:
    """Is ``torch.compile`` tracing the code that calls this (``torch.compiler.is_compiling``,
    public since torch 2.3; an older torch without it: False, and the caller is traced as
    before)?  False while torch is not imported.

    >>> traced_by_dynamo()
    False
    """
    torch = sys.modules.get("torch")
    if torch is None:
        return False
    compiler = getattr(torch, "compiler", None)
    is_compiling = getattr(compiler, "is_compiling", None)
    return bool(is_compiling()) if is_compiling is not None else False


def eagerly(function: Any) -> Any:
    """``function`` to be run outside dynamo's tracing (``torch.compiler.disable``, public since
    torch 2.1; made once per function): on the real tensors, with no guard on what it reads (a
    traced program breaks its graph there once, and does not recompile for each new size).

    >>> import torch
    >>> eagerly(max)(2, 3)
    3
    """
    found = _EAGER.get(function)
    if found is None:
        found = _EAGER[function] = sys.modules["torch"].compiler.disable(function, recursive=True)
    return found


#: The functions :func:`eagerly` made, by the function they run.
_EAGER: dict[Any, Any] = {}
