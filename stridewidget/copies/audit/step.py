"""``sw.audit``: every copy one training step of a model makes, where it comes from, and measured fixes.

Built on the copy tracker (:func:`~stridewidget.track_copies`), which classifies each user-level
call and each loose ATen op by what it did.  The audit adds *where*, and what the tracker cannot
see:

* **module path** — each submodule's ``forward`` is wrapped for the step (an instance attribute,
  taken back afterwards; forward hooks cost ~3x as much per module call) to note how many tracker
  events existed when each module was entered and left, so each event gets the innermost module
  that was running when it was recorded.
* **source line** — in forward, the line that made the call, also inside torch's own modules
  (``torch/nn/modules/activation.py:1494``, ``torchvision/models/resnet.py:96``): the tracker's
  call mode, subclassed, reads each recorded call's frame and result.  Backward has no Python
  frames of its own: as each backward op is recorded, the autograd engine's own record of the
  node it is running (``torch._C._current_autograd_node()``) is noted, and each node is traced
  to the forward call that created it (its output's ``grad_fn``, or, for nodes made *inside*
  one call such as ``F.multi_head_attention_forward``, the call whose output the node feeds).
  A backward op with no forward call keeps its autograd node's name.
* **copies inside an op** — a kernel that clones an operand (``addmm`` with a gapped one,
  ``convolution_backward`` making a gradient contiguous) does so below every dispatch mode.  The
  step runs under a profiler session: for a step on the CPU, the autograd profiler's legacy
  collector with allocations recorded (:class:`_LegacySession`, several times cheaper per event;
  a hidden copy's bytes are its buffer's), else ``torch.profiler`` with shapes and dtypes
  (:class:`_KinetoSession`); both are tested to give the same report.  The tracker's op mode,
  subclassed, notes in each thread which ATen op ran for which tracker event, in order, and the
  profiler's outermost events are paired with them.  Each outermost ``clone`` / ``_to_copy``
  under a non-copy op becomes a copy with ``hidden_in`` naming that op.  Reorders a library
  makes without an ATen op (oneDNN's inside a CPU convolution) stay invisible.

The cost is per op, plus one profiler session per step that collects only while an op that can
hide a copy runs (not a view, not a copy op); an event that moved no data and wrote nothing is
recorded without the tracker's aliasing reads (it cannot be a copy).
``benchmarks/bench_audit.py`` measures the cost, and with ``--breakdown`` which layer (Python
interception, the tracker, the audit, the profiler) costs what.
Gradients are computed with :func:`torch.autograd.grad`, so the parameters' ``.grad`` are left as
they were; everything else runs as ``model(*inputs)`` would, and the model's buffers (a
training-mode BatchNorm's running statistics) and torch's RNG states are put back afterwards
(:mod:`stridewidget.copies.audit.guard`).  Suggestions (:class:`Suggestion`) are never guessed: each
candidate fix is applied to deep copies of the model and inputs, re-audited, timed beside the
unchanged copy in interleaved rounds (:mod:`stridewidget.copies.audit.timing`: median, IQR and a
verdict that needs the difference to exceed the spread), and its outputs and gradients are
compared with the unchanged ones in float64.  They are computed on first access to
``report.suggestions``.  The candidates: channels-last for a convolution stack; a reused
non-contiguous input made contiguous; a parameter whose permuted view the step copies stored in
that layout; an input whose ``permute`` + ``reshape`` copies stored so that the reshape is a view.
The same ``permute`` + ``reshape`` on a tensor made inside the model, and a non-contiguous tensor
the model makes and feeds to ``Linear`` / ``LayerNorm`` (a patch embedding), can only be fixed
by editing the model's source, so they are reported unapplied (``Suggestion.applied`` false),
never faked.  A copy made while activation checkpointing re-runs a forward is reported at the
line re-run, marked as a recompute; a copy torch makes for the model (inside ``nn.Conv2d``) at
the model's own line, with torch's line as ``AuditCopy.detail``.
"""

from __future__ import annotations

import copy
import gc
import os
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from functools import cached_property, partial, wraps
from typing import Any

import torch
from torch._C._profiler import _RecordFunctionFast
from torch.profiler import ProfilerActivity

from ..._compat import compiled_original, storage_identity
from ...errors import LayoutError
from ...frames import PACKAGE_DIR, TORCH_DIR, describe_location
from ...layout.layout import Layout
from ..format import format_bytes as _format_bytes
from ..format import ops_text as _ops_text
from ..format import short_call as _short_call
from ..log import CopyEvent, CopyLog
from ..ops import COPY_OPS
from ..ops import MISSING as _MISSING
from ..ops import OpCache as _OpCache
from ..ops import Pending as _Pending
from ..tracker import CallMode as _CallMode
from ..tracker import OpMode as _OpMode
from ..tracker import Recorder as _Recorder
from ..tracker import tracking as _tracking
from .guard import check_model, eager_model, model_tensors, state_kept
from .timing import Timing, interleaved, verdict

__all__ = ["AuditCopy", "AuditReport", "Suggestion", "audit"]

_TOP = "(model)"  # how the root module (named "" by named_modules()) is shown
_SCALAR_BYTES = 16  # a complex128 scalar, the largest
SCALARS_ROW = "(Python scalars wrapped as 0-dim tensors)"  # the row they are grouped on


@dataclass(frozen=True, eq=False)
class AuditCopy:
    """One event of the audited step that moved data into new storage.

    ``module`` is a name from ``model.named_modules()`` (``""`` for the model itself); ``ops`` are
    the data-movement ATen ops (``event.ops`` has every op the call ran); ``where``
    is the source line (``resnet.py:96``) — for a backward copy, the forward line whose gradient
    made it — or the autograd node's name when no line exists; ``call`` is the user-level call
    (forward) or the autograd node (backward) whose ATen ``ops`` hid the copy.  A copy made
    *inside* a kernel (``addmm`` cloning a gapped operand), seen by the profiler but by no
    dispatch mode, has ``hidden_in`` set to that op; its ``result`` is empty (the buffer never
    reaches Python) and ``source`` holds the call's inputs.
    """

    phase: str  # "forward" or "backward"
    module: str
    where: str
    call: str
    ops: tuple[str, ...]
    bytes: int
    event: CopyEvent
    hidden_in: str = ""  # the ATen op whose kernel made this copy internally ("aten.addmm")
    # made while activation checkpointing re-ran a forward line in backward (``where`` is it)
    recompute: bool = False
    # the library line under ``where`` (``torch/nn/modules/conv.py:560``) when ``where`` is the
    # model's own line that called into it; else ""
    detail: str = ""

    # The layouts are read from the event when asked for: the tracker builds them lazily, and
    # building them for every copy of every audited step is a large part of the audit's cost.
    @property
    def source(self) -> tuple[Layout | None, ...]:
        """The layouts of the call's inputs."""
        return self.event.inputs

    @property
    def result(self) -> tuple[Layout | None, ...]:
        """The layouts of the call's results; empty for a copy hidden in a kernel."""
        return () if self.hidden_in else self.event.outputs

    @property
    def wrapped_scalar(self) -> bool:
        """A Python scalar made a 0-dim tensor (``x * 0.5``: a ``_to_copy`` of a few bytes).
        Kept in ``report.copies``; summaries and tables show all of them as one row."""
        return self.ops == ("aten._to_copy",) and self.bytes <= _SCALAR_BYTES


@dataclass(frozen=True)
class Measured:
    """Copies, bytes copied and step time of one variant of the step: the median (``seconds``)
    and quartiles (``q1``, ``q3``) of rounds interleaved with the other variant's."""

    copies: int
    bytes: int
    seconds: float
    q1: float = 0.0
    q3: float = 0.0

    @property
    def timing(self) -> Timing:
        return Timing(self.seconds, self.q1 or self.seconds, self.q3 or self.seconds)

    def __str__(self) -> str:
        spread = f" (IQR {self.q1 * 1e3:.2f}-{self.q3 * 1e3:.2f})" if self.q3 else ""
        return (
            f"{self.copies} copies, {_format_bytes(self.bytes)}, "
            f"{self.seconds * 1e3:.2f} ms{spread}"
        )


@dataclass(frozen=True)
class Suggestion:
    """A candidate fix, applied to copies of the model and inputs and measured.

    ``where`` says what it applies to, ``what`` what it changes, ``fix`` the code to apply, and
    ``measured`` maps ``"before"`` / ``"after"`` to :class:`Measured`; ``outputs_match`` is the
    result of comparing the step's outputs and gradients before and after.  A fix that needs the
    model's source rewritten (a ``permute`` + ``reshape`` on a tensor made inside the model) is
    not applied: ``applied`` is false, ``what`` says why, ``measured`` has ``"before"`` only and
    ``outputs_match`` is false (nothing was compared).
    """

    where: str
    what: str
    fix: str
    measured: dict[str, Measured]
    outputs_match: bool
    applied: bool = True

    @property
    def speed(self) -> str:
        """``"faster"``, ``"slower"`` or ``"no measurable change"`` (see
        :func:`stridewidget.copies.audit.timing.verdict`); ``""`` when not applied."""
        if not self.applied:
            return ""
        return verdict(self.measured["before"].timing, self.measured["after"].timing)

    @property
    def helps(self) -> bool:
        """Applied with the outputs unchanged, and fewer bytes copied and not slower, or faster."""
        if not (self.applied and self.outputs_match):
            return False
        fewer = self.measured["after"].bytes < self.measured["before"].bytes
        return (fewer and self.speed != "slower") or self.speed == "faster"

    def __str__(self) -> str:
        text = f"{self.where}: {self.what}\n  fix: {self.fix}\n  before: {self.measured['before']}"
        if self.applied:
            text += f"\n  after:  {self.measured['after']} — {self.speed}"
        return text


# --- running one audited step ---------------------------------------------------------------------


def _tensors(value: Any) -> Iterator[torch.Tensor]:
    """Tensors in a model output: a tensor, tuple/list, dict or ``ModelOutput``-like object."""
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _tensors(item)
    elif isinstance(value, (tuple, list)):
        for item in value:
            yield from _tensors(item)


def _differentiable(
    output: Any, loss_fn: Callable[[Any], torch.Tensor] | None
) -> list[torch.Tensor]:
    """What backward starts from: ``loss_fn(output)``, a ``loss`` entry, or every output tensor
    that requires grad."""
    if loss_fn is not None:
        loss = loss_fn(output)
        if not isinstance(loss, torch.Tensor):
            raise TypeError(f"sw.audit: loss_fn returned {type(loss).__name__}, expected a tensor")
        return [loss]
    loss = output.get("loss") if isinstance(output, dict) else None
    if isinstance(loss, torch.Tensor) and loss.requires_grad:
        return [loss]
    found = [t for t in _tensors(output) if t.requires_grad]
    if not found:
        raise TypeError(
            f"sw.audit: the model returned {type(output).__name__} with no tensor that requires "
            "grad, so there is nothing to run backward from; pass loss_fn=lambda out: ... "
            "returning a tensor, or backward=False"
        )
    return found


def _check_devices(model: torch.nn.Module, inputs: tuple[Any, ...]) -> set[torch.device]:
    """The devices of the model's parameters and buffers and of the input tensors; an input on a
    device the model has no tensor on is an error."""
    model_devices = {t.device for t in model_tensors(model)}
    devices = set(model_devices)
    for position, value in enumerate(inputs):
        for tensor in _tensors(value):
            if model_devices and tensor.device not in model_devices:
                raise LayoutError(
                    f"sw.audit: input {position} is on {tensor.device} but the model's parameters "
                    f"are on {', '.join(sorted(map(str, model_devices)))}; move one of them "
                    "(inputs[i].to(device) or model.to(device)) before auditing"
                )
            devices.add(tensor.device)
    return devices


class _Timeline:
    """Which module was running when each forward tracker event was recorded.

    ``marks`` is a list of (number of events so far, what runs from now on); an event with index
    ``i`` belongs to the last mark whose count is ``<= i``.
    """

    def __init__(self, log: CopyLog, initial: Any) -> None:
        self.log = log
        self.marks: list[tuple[int, Any]] = [(0, initial)]
        self.root_frame: Any = None  # the frame of the wrapper of the model's own forward

    def mark(self, value: Any) -> None:
        self.marks.append((len(self.log.events), value))

    def owners(self) -> list[Any]:
        result: list[Any] = []
        marks = self.marks
        position = 0
        for index in range(len(self.log.events)):
            while position + 1 < len(marks) and marks[position + 1][0] <= index:
                position += 1
            result.append(marks[position][1])
        return result


@contextmanager
def _modules_followed(model: torch.nn.Module, timeline: _Timeline) -> Iterator[None]:
    """Keep ``timeline`` on the innermost running submodule of ``model`` meanwhile: each one's
    ``forward`` is wrapped by an instance attribute, restored afterwards.  Forward hooks would do
    the same at ~3x the cost per module call (a module with hooks leaves ``Module.__call__``'s
    fast path: ``benchmarks/bench_audit.py --modules``)."""
    stack: list[str] = []
    saved: list[tuple[torch.nn.Module, Any]] = []

    def follow(name: str, forward: Callable[..., Any]) -> Callable[..., Any]:
        def followed(*args: Any, **kwargs: Any) -> Any:
            if not stack:
                timeline.root_frame = sys._getframe()
            stack.append(name)
            timeline.mark(name)
            try:
                return forward(*args, **kwargs)
            finally:
                stack.pop()
                timeline.mark(stack[-1] if stack else "")

        followed.__wrapped__ = forward  # type: ignore[attr-defined]  # inspect.signature
        return followed

    try:
        for name, module in model.named_modules():
            # an instance's own forward (torch.compile's OptimizedModule sets one) comes back too
            saved.append((module, module.__dict__.get("forward", _MISSING)))
            module.__dict__["forward"] = follow(name, module.forward)
        yield
    finally:
        for module, own in saved:
            if own is _MISSING:
                module.__dict__.pop("forward", None)
            else:
                module.__dict__["forward"] = own


_OVERRIDES_FILE = torch.overrides.__file__


def _calling_frame(func: Any) -> tuple[str, int] | None:
    """File and line of the frame that made a user-level call, also when it is inside torch
    (``nn.Transformer``'s own modules): the tracker's line is the innermost line outside torch,
    which for a torch module is the line that called the model.  Only read here; the text is
    made by :func:`_line_text` for the few calls a report shows."""
    callee = getattr(func, "__code__", None)
    frame = sys._getframe(2)
    # A Python-level torch function that dispatches to the modes (F.multi_head_attention_forward)
    # is on the stack as the callee, once per mode: skip it too.
    while frame is not None and (
        frame.f_code is callee
        or frame.f_code.co_filename.startswith(PACKAGE_DIR)
        or frame.f_code.co_filename == _OVERRIDES_FILE
    ):
        frame = frame.f_back
    return None if frame is None else (frame.f_code.co_filename, frame.f_lineno)


def _model_frame(root: Any) -> tuple[str, int] | None:
    """File and line of the innermost frame outside torch and this package that is still inside
    the model's forward (below ``root``, the frame of the audit's wrapper of the model): the
    model's own line (``efficientnet.py:164``) for a call torch made for it (``conv.py:560``).
    ``None`` when the call is torch's all the way up to the model (a torch module audited)."""
    frame = sys._getframe(3)
    while frame is not None and frame is not root:
        filename = frame.f_code.co_filename
        if not filename.startswith((TORCH_DIR, PACKAGE_DIR)):
            return filename, frame.f_lineno
        frame = frame.f_back
    return None


def _line_text(filename: str, line: int) -> str:
    """``torch/nn/modules/transformer.py:12`` for library code (the path people know), else the
    tracker's ``file.py:12`` or ``In[3], line 2``."""
    marker = filename.rfind("site-packages" + os.sep)
    if marker >= 0:
        return f"{filename[marker + len('site-packages') + 1 :]}:{line}"
    return describe_location(filename, line)


class _NodeOrigins:
    """Maps each autograd node of the forward graph to the forward event that created it."""

    def __init__(self, log: CopyLog) -> None:
        self.log = log
        self.of_node: dict[Any, int] = {}
        # event index -> file and line that made the call (None: no frame outside the package)
        self.location: dict[int, tuple[str, int] | None] = {}
        # event index -> the model's own line, for a call made inside torch (see _model_frame)
        self.model_location: dict[int, tuple[str, int]] = {}
        self.timeline: _Timeline | None = None  # its root_frame bounds the model's frames

    def note_call(self, func: Any, result: Any) -> None:
        """Called as each user-level call returns, once the tracker recorded its event: the last
        one in the log."""
        index = len(self.log.events) - 1
        frame = self.location[index] = _calling_frame(func)
        if frame is not None and frame[0].startswith(TORCH_DIR) and self.timeline is not None:
            model_frame = _model_frame(self.timeline.root_frame)
            if model_frame is not None:
                self.model_location[index] = model_frame
        for tensor in _tensors(result):
            if tensor.grad_fn is not None:
                self.of_node.setdefault(tensor.grad_fn, index)

    def where(self, event: CopyEvent) -> str:
        """The forward line of a call event: the model's own line when torch made the call for
        it; the tracker's for loose ATen ops."""
        if event.index in self.model_location:
            return _line_text(*self.model_location[event.index])
        return self.library_line(event)

    def library_line(self, event: CopyEvent) -> str:
        """The line that made the call, also inside torch (``torch/nn/modules/conv.py:560``)."""
        if event.index not in self.location:
            return event.location
        frame = self.location[event.index]
        return "<unknown>" if frame is None else _line_text(*frame)

    def detail(self, event: CopyEvent) -> str:
        """The library line under the model's line, when they differ; else ``""``."""
        return self.library_line(event) if event.index in self.model_location else ""

    def resolve(self, roots: list[torch.Tensor]) -> None:
        """Nodes made inside a call (no call returned them) take the owner of the nearest owned
        node above them: the call whose output they feed."""
        pending = [(t.grad_fn, None) for t in roots if t.grad_fn is not None]
        visited = set()
        while pending:
            node, inherited = pending.pop()
            if node is None or node in visited:
                continue
            visited.add(node)
            owner = self.of_node.setdefault(node, inherited)
            for next_node, _ in node.next_functions:
                pending.append((next_node, owner))


class _AuditRecorder(_Recorder):
    """Reads layouts only for the events a report can show (see ``_Recorder.every_layout``), and
    decides no kind for an event that moved no data and wrote nothing: it is not a copy, and the
    report draws only the inputs of a call that hid one (whose result never reaches Python).  Such
    an event keeps its place in the log (module timeline, autograd nodes), its call and ops, and
    its inputs' snapshots when it ran an op that can hide a copy; its kind stays ``""``."""

    every_layout = False

    def __init__(self, log: CopyLog, blank: dict[int, int] | None = None) -> None:
        super().__init__(log)
        # storage -> bytes of it no copy has written yet, for the storages allocated in the step
        # by calls that put no data in them (empty, zeros ...)
        self.blank = {} if blank is None else blank

    def unread(self, pending: _Pending) -> bool:
        return not (pending.fresh_copy or pending.written)

    def add(self, call: str, arguments: Any, result: Any, pending: _Pending) -> None:
        if pending.ops and _ALLOCATIONS.issuperset(pending.ops):
            for tensor in _tensors(result):
                self.blank[storage_identity(tensor)] = tensor.untyped_storage().nbytes()
        super().add(call, arguments, result, pending)

    def record(
        self,
        call: str,
        input_snapshots: tuple[Any, ...],
        result: Any,
        pending: Any,
        filename: str,
        line: int,
    ) -> None:
        # A copy op writing into a buffer the step allocated blank (out = torch.empty(...);
        # out[:n] = a; out[n:] = b; empty_like(x).copy_(x)) moved data into new storage: a copy,
        # until copies have filled the buffer once.  Writing into storage that holds data (an
        # input, a parameter, a clone, a filled buffer) stays in-place; so does a fill
        # (masked_fill_, x[mask] = 0).
        if pending.copied_into and not _FILLS.issuperset(pending.ops):
            for extent in pending.copied_into:
                left = self.blank.get(extent.cdata)
                if left is not None:
                    pending.fresh_copy = True
                    if left <= pending.bytes_copied:
                        del self.blank[extent.cdata]
                    else:
                        self.blank[extent.cdata] = left - pending.bytes_copied
                    break
        super().record(call, input_snapshots, result, pending, filename, line)


# Copy ops that may write a constant into a tensor, and the ops around them in such a call.
_FILLS = frozenset(
    {"aten.masked_fill", "aten.index_put", "aten._index_put_impl", "aten.where", "aten.fill"}
) | {"aten.lift_fresh", "aten.scalar_tensor", "aten.select", "aten.slice", "aten.view"}


# The ops of a call that allocates storage without putting data in it.
_ALLOCATIONS = frozenset(
    f"aten.{name}"
    for name in (
        "empty",
        "empty_like",
        "empty_strided",
        "empty_permuted",
        "new_empty",
        "new_empty_strided",
        "zeros",
        "zeros_like",
        "new_zeros",
        "zero_",
        "ones",
        "ones_like",
        "new_ones",
        "full",
        "full_like",
        "new_full",
        "fill_",
    )
)


class _BackwardRecorder(_AuditRecorder):
    """Notes, for each event, the autograd node the engine was running in this thread (``None``
    between nodes: the engine summing two gradients of one tensor).  One call per op, instead of
    a pre and a post hook registered on every node of the graph and run around it."""

    user_lines = False  # a backward copy's line is its forward call's (or its node's name)

    def __init__(self, log: CopyLog, blank: dict[int, int] | None = None) -> None:
        super().__init__(log, blank)
        self.nodes: list[Any] = []
        # event index -> the user's line re-run, for events of an activation-checkpoint recompute
        self.recomputed: dict[int, tuple[str, int]] = {}

    def record_unread(
        self, call: str, pending: _Pending, arguments: Any, filename: str, line: int
    ) -> None:
        # Nothing reads a backward event that is not a copy and ran no op that can hide one (the
        # views and transposes of backward formulas: half of its ops), so it is not kept.  The
        # next event takes its index, as the op marked for the profiler was told.
        if pending.keep_layouts:
            self.note_node()
            super().record_unread(call, pending, arguments, filename, line)

    def record(self, *arguments: Any) -> None:  # as _Recorder.record
        self.note_node()
        super().record(*arguments)

    def note_node(self) -> None:
        self.nodes.append(torch._C._current_autograd_node())
        line = _recompute_line()
        if line is not None:
            self.recomputed[len(self.log.events)] = line


_CHECKPOINT_FILE = os.path.join(os.path.dirname(torch.__file__), "utils", "checkpoint.py")


def _recompute_line() -> tuple[str, int] | None:
    """During backward: when ``torch.utils.checkpoint`` is re-running a forward, the user's line
    being re-run (the innermost frame outside torch and this package), else ``None``.  Backward
    has no Python frames of its own, so the stack is short."""
    frame = sys._getframe(1)
    user = None
    while frame is not None:
        filename = frame.f_code.co_filename
        if filename == _CHECKPOINT_FILE:
            return user or ("<unknown>", 0)
        if user is None and not filename.startswith((TORCH_DIR, PACKAGE_DIR)):
            user = (filename, frame.f_lineno)
        frame = frame.f_back
    return None


class _AuditCalls(_CallMode):
    """The tracker's call mode, noting each recorded call's source line and autograd nodes."""

    def __init__(self, recorder: _Recorder, origins: _NodeOrigins) -> None:
        super().__init__(recorder)
        self.origins = origins

    def recorded(self, func: Any, result: Any) -> None:
        self.origins.note_call(func, result)


class _AuditOps(_OpMode):
    """The tracker's op mode, noting each ATen op that can hide a copy, in the order its thread
    runs them, with the tracker event it belongs to (the next one recorded), so that copies a
    kernel makes inside itself — visible to the profiler, not to dispatch modes — can be traced
    to their call.  The profiler collects only while such an op runs: the other ops' events would
    only be recorded, stored and read to be skipped (most of the profiler's cost per step)."""

    def __init__(self, recorder: _Recorder, offset: int, marked: _Marked) -> None:
        super().__init__(recorder)
        self.offset = offset  # _BACKWARD for the backward log
        self.marked = marked

    def run(self, func: Any, args: tuple[Any, ...], kwargs: dict) -> Any:
        name = _profiler_name(func)
        if name is None:
            return func(*args, **kwargs)
        ops = self.marked.get(threading.get_ident())
        if ops is None:
            ops = self.marked.first_in_thread()
        ops.append((self.offset + len(self.recorder.log.events), name))
        self.recorder.pending.keep_layouts = True
        _collect(True)
        try:
            return func(*args, **kwargs)
        finally:
            _collect(False)


class _Marked(dict):
    """Thread ident -> (event index, op name) of each op run with the profiler collecting, in the
    order that thread ran them.  Each is the next outermost event the profiler holds for its
    thread, which a thread's mark (``sw.audit:thread:<ident>``, recorded before its first such op)
    names: a label per op would be a profiler event of its own, a quarter of all events."""

    def first_in_thread(self) -> list[tuple[int, str]]:
        ident = threading.get_ident()
        _collect(True)
        with _RecordFunctionFast(f"{_THREAD_MARK}{ident}"):
            pass
        self[ident] = []
        return self[ident]


_PROFILER_NAMES = _OpCache()


def _profiler_name(func: Any) -> str | None:
    """The profiler's name of ``func`` (``aten::addmm``) when a kernel of it can copy data into
    new storage that no dispatch mode sees, else ``None``: a view (every result aliases an input:
    no kernel runs) or a copy op itself (the copy it makes is the tracker's own event)."""
    name = _PROFILER_NAMES.lookup(func)
    if name is not _MISSING:
        return name
    returns = func._schema.returns
    is_view = bool(returns) and all(
        r.alias_info is not None and not r.alias_info.is_write for r in returns
    )
    can_hide = not is_view and func.overloadpacket.__name__ not in COPY_OPS
    return _PROFILER_NAMES.store(func, func._schema.name if can_hide else None)


# Turns this thread's ``RecordFunction`` events, which the profiler collects, on or off: a
# thread-local flag (the profiler's own ``toggle_collection_dynamic`` re-registers its global
# callbacks, which costs ~20-150 µs a call).  The builtin itself: it runs twice per op.
_collect = torch._C._autograd._enable_record_function


_THREAD_MARK = "sw.audit:thread:"
_BACKWARD = 1 << 40  # added to backward event indices (one profile, two logs)
# Ops that always put existing values into new storage; the outermost one under a kernel is
# counted (``clone`` runs ``copy_`` into its own buffer).  ``contiguous`` is not one: recorded,
# it may have found nothing to do; when it copies, a ``clone`` under it is counted.
_NEW_STORAGE_COPIES = frozenset({"aten::clone", "aten::_to_copy"})
# The profiler names dtypes by their C++ types.
_CPP_ITEMSIZE = {
    "float": 4,
    "double": 8,
    "c10::Half": 2,
    "c10::BFloat16": 2,
    "long int": 8,
    "int": 4,
    "short int": 2,
    "signed char": 1,
    "unsigned char": 1,
    "bool": 1,
    "c10::complex<float>": 8,
    "c10::complex<double>": 16,
}


# ``c10::ScalarType`` numbers, as the profiler records a ``dtype`` argument, and their sizes.
_SCALAR_TYPE_ITEMSIZE = {
    0: 1,
    1: 1,
    2: 2,
    3: 4,
    4: 8,
    5: 2,
    6: 4,
    7: 8,
    8: 4,
    9: 8,
    10: 16,
    11: 1,
    15: 2,
}


def _hidden_copies(events: Iterable[Any], marked: _Marked) -> dict[int, list[tuple[str, str, int]]]:
    """Event index -> (op that hid it, copy op, bytes) for copies made inside a non-copy op, from
    the events of ``torch.profiler`` (:class:`_KinetoSession`).

    Nests the raw events by time per thread: building the profiler's own event tree
    (``profile.events()``) costs many times the audited step.  After a thread's mark, each
    outermost event is the next op of ``marked`` for that thread.  One of another name means that
    ops before it recorded no event (the dispatcher lets an operator opt out of observation):
    those are passed over; an event that names no op still to come is not one of the audit's and
    is left out, so one stray event cannot shift every later pairing.
    """
    # Only the events that can pair with an op or be a copy are read further: leaving out one
    # nested in an op changes neither which op a copy is in nor whether it is inside another copy.
    relevant = {name for ops in marked.values() for _, name in ops} | _NEW_STORAGE_COPIES
    # (start, -end, name, event) per thread: each native accessor is called once per event
    by_thread: dict[int, list[tuple[int, int, str, Any]]] = {}
    for event in events:
        name = event.name()
        if name in relevant or name.startswith(_THREAD_MARK):
            by_thread.setdefault(event.start_thread_id(), []).append(
                (event.start_ns(), -event.end_ns(), name, event)
            )
    found: dict[int, list[tuple[str, str, int]]] = {}
    for thread_events in by_thread.values():
        mark = next((item for item in thread_events if item[2].startswith(_THREAD_MARK)), None)
        if mark is None:  # a thread that ran no op that can hide a copy
            continue
        pairing = _Pairing(marked[int(mark[2][len(_THREAD_MARK) :])])
        after = -mark[1]  # events before the mark are not the audit's (collection on by default)
        thread_events.sort(key=lambda item: item[:2])
        # each open event: (end, event index, the outermost op, inside a copy)
        stack: list[tuple[int, int, str, bool]] = []
        for start, negative_end, name, event in thread_events:
            if start < after or event is mark[3]:
                continue
            while stack and stack[-1][0] <= start:
                stack.pop()
            if stack:
                index, hiding, inside_copy = stack[-1][1:]
            else:  # an op that can hide a copy (never a copy op)
                index, hiding, inside_copy = pairing.next(name), name, False
            if index >= 0 and not inside_copy and stack and name in _NEW_STORAGE_COPIES:
                inside_copy = True
                shapes, dtypes = event.shapes(), event.dtypes()
                numel = 1
                for size in shapes[0] if shapes else ():
                    numel *= size
                itemsize = _CPP_ITEMSIZE.get(dtypes[0] if dtypes else "", 0)
                if name == "aten::_to_copy":  # its result's dtype: the argument, if one is given
                    inputs = event.concrete_inputs()
                    if len(inputs) > 1 and inputs[1] is not None:
                        itemsize = _SCALAR_TYPE_ITEMSIZE.get(inputs[1], 0)
                found.setdefault(index, []).append(
                    (hiding.replace("::", "."), name.replace("::", "."), numel * itemsize)
                )
            stack.append((-negative_end, index, hiding, inside_copy))
    return found


class _Pairing:
    """Pairs a thread's outermost profiler events with the ops ``marked`` noted for it, in order."""

    def __init__(self, ops: list[tuple[int, str]]) -> None:
        self.ops = ops
        self.position = 0  # of the next op not paired yet

    def next(self, name: str) -> int:
        """The tracker event index of the next op named ``name`` (ops before it recorded no
        event), or -1 when no op still to come has that name (an event not of the audit's)."""
        ops = self.ops
        for position in range(self.position, len(ops)):
            if ops[position][1] == name:
                self.position = position + 1
                return ops[position][0]
        return -1


def _hidden_copies_legacy(
    records: list[list[Any]], marked: _Marked
) -> dict[int, list[tuple[str, str, int]]]:
    """:func:`_hidden_copies` from the legacy profiler's records (:class:`_LegacySession`): a list
    of events per thread in the order they happened, each op a ``push`` and a ``pop`` (nesting
    needs no timestamps), each allocation a ``memory_alloc`` with its size.  A hidden copy's bytes
    are those of the first allocation made inside it: its result's buffer, allocated before any
    data is copied into it (``clone`` = ``empty_like`` + ``copy_``)."""
    found: dict[int, list[tuple[str, str, int]]] = {}
    # Tens of records per op that can hide a copy, nearly all read only to keep the nesting: each
    # record's accessors are native calls, so each is called at most once, and a pop is matched
    # with the innermost open op first (always, unless records were left out).
    for events in records:
        pairing: _Pairing | None = None
        # each open op: (handle, event index, the outermost op, the copy it is in or None)
        stack: list[tuple[int, int, str, list | None]] = []
        for event in events:
            kind = event.kind()
            if kind == "pop":
                if stack:
                    handle = event.handle()
                    if stack[-1][0] == handle:
                        stack.pop()
                    else:
                        for depth in range(len(stack) - 2, -1, -1):
                            if stack[depth][0] == handle:
                                del stack[depth:]
                                break
            elif kind == "push":
                name = event.name()
                if stack:
                    _, index, hiding, inside = stack[-1]
                    if inside is None and index >= 0 and name in _NEW_STORAGE_COPIES:
                        # [op that hid it, copy op, bytes, bytes known]
                        inside = [hiding.replace("::", "."), name.replace("::", "."), 0, False]
                        found.setdefault(index, []).append(inside)
                    stack.append((event.handle(), index, hiding, inside))
                elif pairing is not None:  # an op that can hide a copy (never a copy op)
                    stack.append((event.handle(), pairing.next(name), name, None))
                elif name.startswith(_THREAD_MARK):  # before it: not the audit's
                    pairing = _Pairing(marked[int(name[len(_THREAD_MARK) :])])
            elif stack and kind == "memory_alloc":
                inside = stack[-1][3]
                if inside is not None and not inside[3]:
                    size = event.cpu_memory_usage()
                    if size > 0:
                        inside[2], inside[3] = size, True
    return {
        index: [(hiding, name, size) for hiding, name, size, _ in copies]
        for index, copies in found.items()
    }


class _KinetoSession:
    """``torch.profiler`` (CPU activity, shapes and dtypes recorded): a hidden copy's bytes are
    its shape times its dtype's size, on any device.  ~12 µs per recorded event here."""

    def __init__(self) -> None:
        from torch.profiler import profile

        self.profiler = profile(activities=[ProfilerActivity.CPU], record_shapes=True)

    def start(self) -> None:
        with _quiet_native_stderr():
            self.profiler.start()

    def stop(self) -> None:
        with _quiet_native_stderr():
            self.profiler.stop()

    def hidden_copies(self, marked: _Marked) -> dict[int, list[tuple[str, str, int]]]:
        return _hidden_copies(self.profiler.profiler.kineto_results.events(), marked)


class _LegacySession:
    """The autograd profiler's legacy collector (``torch.autograd._enable_profiler_legacy``, which
    ``torch.autograd.profiler_legacy`` wraps), allocations recorded: per collected op ~5× cheaper
    than ``torch.profiler`` with shapes (``benchmarks/bench_profilers.py``).  It records no
    dtypes; a hidden copy's bytes are the size of the buffer it allocated, which the CPU
    allocator reports exactly (CUDA's caching allocator reports its rounded block sizes), so it
    serves steps that run on the CPU only."""

    records: list[list[Any]]

    def start(self) -> None:
        config = torch.autograd.ProfilerConfig(
            torch.autograd.ProfilerState.CPU,
            False,  # shapes
            True,  # memory
            False,  # stack
            False,  # flops
            False,  # modules
            torch._C._profiler._ExperimentalConfig(),
        )
        torch.autograd._enable_profiler_legacy(config)

    def stop(self) -> None:
        self.records = torch.autograd._disable_profiler_legacy()

    def hidden_copies(self, marked: _Marked) -> dict[int, list[tuple[str, str, int]]]:
        return _hidden_copies_legacy(self.records, marked)


def _legacy_profiler_usable(devices: set[torch.device]) -> bool:
    """The legacy collector serves a step whose tensors are all on the CPU, while this torch
    still has it (``torch.autograd.profiler_legacy`` is deprecated) and no profiler runs already
    (the user's own ``torch.profiler`` around the audit: the legacy one cannot start inside it,
    ``torch.profiler`` can); else ``torch.profiler``."""
    return (
        all(device.type == "cpu" for device in devices)
        and hasattr(torch.autograd, "_enable_profiler_legacy")
        and not torch.autograd._profiler_enabled()
    )


@contextmanager
def _profiled(legacy: bool) -> Iterator[_KinetoSession | _LegacySession]:
    session = _LegacySession() if legacy else _KinetoSession()
    session.start()
    _collect(False)  # on only while an op that can hide a copy runs (_AuditOps)
    try:
        yield session
    finally:
        _collect(True)  # the default, which other profilers rely on
        session.stop()


@contextmanager
def _quiet_native_stderr() -> Iterator[None]:
    """Drop what native code writes to file descriptor 2 meanwhile: the profiler's backend
    (kineto) logs each start and stop there, whatever its log level, which would land in every
    notebook cell that audits."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def _run_step(
    model: torch.nn.Module,
    inputs: tuple[Any, ...],
    backward: bool,
    loss_fn: Callable[[Any], torch.Tensor] | None,
    kwargs: dict[str, Any] | None = None,
) -> tuple[Any, tuple[torch.Tensor, ...]]:
    """One plain step (forward, and gradients w.r.t. the parameters): what the audit times."""
    output = model(*inputs, **(kwargs or {}))
    if not backward:
        return output, ()
    roots = _differentiable(output, loss_fn)
    params = [p for p in model.parameters() if p.requires_grad]
    grads = torch.autograd.grad(
        roots, params, [torch.ones_like(r) for r in roots], allow_unused=True
    )
    return output, grads


def _cyclic_gc_paused(function: Callable[..., Any]) -> Callable[..., Any]:
    """``function`` with Python's cyclic garbage collector off while it runs, as ``timeit`` does:
    the tracker's records (thousands of small objects a step, nearly all kept in the report or
    freed by reference counting) trigger collections, and each full one walks every object of the
    process — with a ``transformers`` model loaded, the largest single cost of a toy step.  A
    plain wrapper, not ``contextlib``'s: its frame is this package's, which the tracker's search
    for the user's line passes over."""

    @wraps(function)
    def paused(*args: Any, **kwargs: Any) -> Any:
        was_enabled = gc.isenabled()
        gc.disable()
        try:
            return function(*args, **kwargs)
        finally:
            if was_enabled:
                gc.enable()

    return paused


@_cyclic_gc_paused
def _audited_step(
    model: torch.nn.Module,
    inputs: tuple[Any, ...],
    backward: bool,
    loss_fn: Callable[[Any], torch.Tensor] | None,
    kwargs: dict[str, Any] | None = None,
) -> list[AuditCopy]:
    kwargs = kwargs or {}
    forward_recorder = _AuditRecorder(CopyLog())
    origins = _NodeOrigins(forward_recorder.log)
    marked = _Marked()
    # One profiler session for the whole step: starting and reading one costs tens of ms.
    with _profiled(_legacy_profiler_usable(_check_devices(model, inputs))) as profile:
        with _tracking(
            _AuditCalls(forward_recorder, origins), _AuditOps(forward_recorder, 0, marked)
        ) as forward_log:
            forward_timeline = origins.timeline = _Timeline(forward_log, "")
            with _modules_followed(model, forward_timeline):
                try:
                    output = model(*inputs, **kwargs)
                except Exception as error:
                    raise RuntimeError(
                        f"sw.audit: model(*inputs) raised {type(error).__name__}: {error} — "
                        "the audit has nothing to report; call model(*inputs) directly to debug it"
                    ) from error
        if backward:
            check_model(model, backward)  # before the roots: a frozen model has none
            roots = _differentiable(output, loss_fn)
            origins.resolve(roots)
            params = [p for p in model.parameters() if p.requires_grad]
            backward_recorder = _BackwardRecorder(CopyLog(), forward_recorder.blank)
            # No user-level calls in backward: the tracker's own call mode.  Dense ones as the
            # output gradient: the gradient of sum(), without the stride-0 expand that sum()'s
            # backward would feed the model (an artefact of the loss, not of the model).
            # Torch-function handling is off around the call: else the tracker would see one
            # user-level call (autograd.grad) holding every backward op, instead of each op alone.
            with (
                _tracking(
                    _CallMode(backward_recorder), _AuditOps(backward_recorder, _BACKWARD, marked)
                ) as backward_log,
                torch._C.DisableTorchFunction(),
            ):
                torch.autograd.grad(
                    roots, params, [torch.ones_like(r) for r in roots], allow_unused=True
                )
    hidden = profile.hidden_copies(marked)
    forward_modules = forward_timeline.owners()
    copies = []
    for event in forward_log.events:
        inside = hidden.get(event.index, ())
        if event.kind != "copy" and not inside:
            continue
        module, where = forward_modules[event.index], origins.where(event)
        found = _copies_of("forward", module, where, event, inside)
        copies.extend(_detailed(found, origins.detail(event)))
    if not backward:
        return copies

    names = {p: name for name, p in model.named_parameters()}
    # the forward event first made at each source line: a recomputed line's module
    forward_at_line: dict[tuple[str, int] | None, int] = {}
    for index, location in origins.location.items():
        forward_at_line.setdefault(location, index)
    for event, node in zip(backward_log.events, backward_recorder.nodes):
        inside = hidden.get(_BACKWARD + event.index, ())
        if event.kind != "copy" and not inside:
            continue
        origin = origins.of_node.get(node) if node is not None else None
        if origin is not None:
            forward_event = forward_log.events[origin]
            module, where = forward_modules[origin], origins.where(forward_event)
            detail = origins.detail(forward_event)
            call = f"{type(node).__name__} of {_short_call(forward_event.call)}"
        else:
            variable = getattr(node, "variable", None)  # AccumulateGrad: a parameter's gradient
            module = names.get(variable, ".").rpartition(".")[0] if variable is not None else ""
            where = type(node).__name__ if node is not None else event.call
            call, detail = where, ""
        recomputed = backward_recorder.recomputed.get(event.index)
        if recomputed is not None:  # a forward line re-run by activation checkpointing
            where, call = f"{_line_text(*recomputed)} (recompute)", f"recompute: {event.call}"
            module = (
                forward_modules[forward_at_line[recomputed]]
                if recomputed in forward_at_line
                else module
            )
        found = _copies_of("backward", module, where, event, inside, call)
        if recomputed is not None:
            found = [replace(item, recompute=True) for item in found]
        copies.extend(_detailed(found, detail))
    return copies


def _detailed(found: list[AuditCopy], detail: str) -> list[AuditCopy]:
    return [replace(item, detail=detail) for item in found] if detail else found


def _copies_of(
    phase: str,
    module: str,
    where: str,
    event: CopyEvent,
    inside: Iterable[tuple[str, str, int]],
    call: str = "",
) -> list[AuditCopy]:
    """The event itself when it copied, and each copy a kernel of it made inside."""
    found = [_copy(phase, module, where, event, call)] if event.kind == "copy" else []
    for hidden_in, copy_op, size in inside:
        found.append(
            AuditCopy(
                phase=phase,
                module=module,
                where=where,
                call=call or _short_call(event.call),
                ops=(copy_op,),
                bytes=size,
                event=event,
                hidden_in=hidden_in,
            )
        )
    return found


def _copy(phase: str, module: str, where: str, event: CopyEvent, call: str = "") -> AuditCopy:
    return AuditCopy(
        phase=phase,
        module=module,
        where=where,
        call=call or _short_call(event.call),
        ops=tuple(op for op in event.ops if op.removeprefix("aten.") in COPY_OPS) or event.ops,
        bytes=event.bytes_copied,
        event=event,
    )


# --- the report -----------------------------------------------------------------------------------


def _op_names(item: AuditCopy) -> tuple[str, ...]:
    """``aten.clone``, or ``aten.clone in aten.addmm`` for a copy a kernel hid."""
    if item.hidden_in:
        return tuple(f"{op} in {item.hidden_in}" for op in item.ops)
    return item.ops


@dataclass(frozen=True)
class Row:
    """One line of :meth:`AuditReport.by_line` / :meth:`AuditReport.by_module`."""

    key: str
    phase: str
    count: int
    bytes: int
    ops: tuple[str, ...]


class AuditReport:
    """What :func:`audit` found: ``copies``, ``total_bytes``, tables and measured suggestions.

    Displays as a table in a terminal (``repr``) and in Jupyter (rows sort on a header click; the
    biggest copies' ▸ opens their source and result layouts); :meth:`to_html` writes the same as a
    page.

    >>> import torch, stridewidget as sw
    >>> layer = torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0)
    >>> report = sw.audit(layer, torch.randn(2, 5, 8).transpose(0, 1))  # a transposed batch
    >>> print(report.summary())  # doctest: +ELLIPSIS
    sw.audit: ... copies, ... KiB (forward: ... copies, ...; backward: ... copies, ...)
    >>> sorted({row.key for row in report.by_module()})   # module paths
    ['norm1', 'self_attn']
    >>> [row.ops for row in report.by_line()   # F.multi_head_attention_forward's line
    ...  if row.phase == "forward" and row.key.startswith("torch/nn/modules/activation.py:")]
    [('aten.clone',)]
    >>> (suggestion,) = report.suggestions   # measured on copies: takes a moment
    >>> suggestion.fix, suggestion.outputs_match
    ('inputs[0] = inputs[0].contiguous()', True)
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "audit.html")
    >>> report.to_html(path)
    >>> open(path).read().startswith("<!DOCTYPE html>")
    True
    """

    def __init__(
        self,
        copies: list[AuditCopy],
        model: torch.nn.Module,
        inputs: tuple[Any, ...],
        backward: bool,
        loss_fn: Callable[[Any], torch.Tensor] | None,
        kwargs: dict[str, Any] | None = None,
        note: str = "",
    ) -> None:
        self.copies = copies
        self.backward = backward
        #: what the report is not about, said with it (a compiled model's eager one was audited)
        self.note = note
        self._model = model
        self._inputs = inputs
        self._loss_fn = loss_fn
        self._kwargs = kwargs or {}

    @property
    def total_bytes(self) -> int:
        """Bytes copied in the audited step: the sum over :attr:`copies`."""
        return sum(c.bytes for c in self.copies)

    def _group(self, key: Callable[[AuditCopy], str]) -> list[Row]:
        groups: dict[tuple[str, str], list[AuditCopy]] = {}
        for item in self.copies:
            name = SCALARS_ROW if item.wrapped_scalar else key(item)
            groups.setdefault((name, item.phase), []).append(item)
        rows = []
        for (name, phase), items in groups.items():
            ops = tuple(dict.fromkeys(op for item in items for op in _op_names(item)))
            rows.append(Row(name, phase, len(items), sum(i.bytes for i in items), ops))
        return sorted(rows, key=lambda row: (-row.bytes, -row.count, row.key))

    def by_line(self) -> list[Row]:
        """Source line → count, bytes, ATen ops; forward and backward apart, most bytes first."""
        return self._group(lambda item: item.where)

    def by_module(self) -> list[Row]:
        """Module path → count, bytes, ATen ops; forward and backward apart, most bytes first."""
        return self._group(lambda item: item.module or _TOP)

    @cached_property
    def suggestions(self) -> list[Suggestion]:
        """Candidate fixes that apply to this model, each applied to copies and measured."""
        with state_kept(self._model):
            return _suggestions(
                self._model, self._inputs, self.backward, self._loss_fn, self.copies, self._kwargs
            )

    def summary(self) -> str:
        """One line: how many copies and how many bytes, forward and backward (and the note)."""
        note = f" ({self.note})" if self.note else ""
        if not self.copies:
            return f"sw.audit: no copies — the audited step moved no data into new storage{note}"
        parts = []
        for phase in ("forward", "backward"):
            items = [c for c in self.copies if c.phase == phase]
            if items:
                size = _format_bytes(sum(c.bytes for c in items))
                parts.append(f"{phase}: {len(items)} copies, {size}")
        scalars = [c for c in self.copies if c.wrapped_scalar]
        if scalars:
            size = _format_bytes(sum(c.bytes for c in scalars))
            parts.append(f"of all, {len(scalars)} Python scalars wrapped as tensors, {size}")
        return (
            f"sw.audit: {len(self.copies)} copies, {_format_bytes(self.total_bytes)} "
            f"({'; '.join(parts)}){note}"
        )

    def to_text(self, max_rows: int = 15) -> str:
        """The summary and the top rows of both tables as plain text."""
        lines = [self.summary()]
        for title, rows in (("by line", self.by_line()), ("by module", self.by_module())):
            if not rows:
                continue
            lines.append(f"\n{title}:")
            table = [(title.split()[1], "phase", "count", "bytes", "ATen ops")]
            for row in rows[:max_rows]:
                table.append(
                    (
                        row.key,
                        row.phase,
                        str(row.count),
                        _format_bytes(row.bytes),
                        _ops_text(row.ops),
                    )
                )
            widths = [min(60, max(len(r[c]) for r in table)) for c in range(5)]
            for row in table:
                lines.append("  ".join(cell[:w].ljust(w) for cell, w in zip(row, widths)).rstrip())
            if len(rows) > max_rows:
                lines.append(f"... {len(rows) - max_rows} more rows")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.to_text()

    def _repr_html_(self) -> str:
        from .html import report_html

        return report_html(self, standalone=False)

    def to_html(self, path: str) -> None:
        """Write the report as one standalone page (inline SVG, CSS and a small sort script)."""
        from .html import report_html

        with open(path, "w", encoding="utf-8") as file:
            file.write(report_html(self, standalone=True))


def audit(
    model: torch.nn.Module,
    *example_inputs: Any,
    backward: bool = True,
    loss_fn: Callable[[Any], torch.Tensor] | None = None,
    model_kwargs: dict[str, Any] | None = None,
) -> AuditReport:
    """Run one step of ``model`` (``model(*example_inputs, **model_kwargs)``, and backward unless
    ``backward=False``) and report every copy it made.

    Backward starts from ``loss_fn(output)`` when given, else from ``output["loss"]`` when the
    model returns one, else from every output tensor that requires grad (as the backward of
    their sum).  Parameters' ``.grad`` are not touched; buffers (BatchNorm's running
    statistics) and torch's RNG states are put back as they were.  A ``torch.compile``d model
    is audited as the eager model it wraps, which a warning and ``report.note`` say.

    >>> import torch, stridewidget as sw
    >>> class Flatten(torch.nn.Module):
    ...     def forward(self, x):
    ...         return x.permute(0, 2, 3, 1).reshape(len(x), -1)   # permute, then reshape: copies
    >>> model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 1), Flatten())
    >>> report = sw.audit(model, torch.randn(2, 3, 4, 4))
    >>> [(c.phase, c.module, c.call, c.bytes) for c in report.copies][:1]
    [('forward', '1', 'Tensor.reshape', 512)]
    >>> report.total_bytes == sum(c.bytes for c in report.copies)
    True
    """
    if compiled_original(model) is not None and loss_fn is None and model_kwargs is None:
        from ...graph.audit import audit_compiled  # torch.compile'd: its compiled program's copies

        return audit_compiled(model, example_inputs, backward)  # type: ignore[return-value]
    if not isinstance(model, torch.nn.Module):
        raise TypeError(
            f"sw.audit: expected a torch.nn.Module, got {type(model).__name__}; pass the model "
            "object itself (sw.audit(model, x)), not its output"
        )
    if model_kwargs is not None and not isinstance(model_kwargs, dict):
        raise TypeError(
            f"sw.audit: model_kwargs must be a dict of keyword inputs, got "
            f"{type(model_kwargs).__name__}; pass model_kwargs={{'input_ids': ...}}"
        )
    model, note = eager_model(model)
    with state_kept(model):
        copies = _audited_step(model, example_inputs, backward, loss_fn, model_kwargs)
    return AuditReport(copies, model, example_inputs, backward, loss_fn, model_kwargs, note)


# --- suggestions ----------------------------------------------------------------------------------


def _suggestions(
    model: torch.nn.Module,
    inputs: tuple[Any, ...],
    backward: bool,
    loss_fn: Callable[[Any], torch.Tensor] | None,
    copies: list[AuditCopy],
    kwargs: dict[str, Any] | None = None,
) -> list[Suggestion]:
    candidates = []
    if any(isinstance(m, torch.nn.Conv2d) for m in model.modules()) and any(
        t.dim() == 4 for value in inputs for t in _tensors(value)
    ):
        candidates.append(
            (
                "the convolution stack",
                "keep activations and weights channels-last (NHWC) instead of NCHW",
                "model = model.to(memory_format=torch.channels_last); "
                "x = x.contiguous(memory_format=torch.channels_last)",
                _channels_last,
            )
        )
    for position, value in enumerate(inputs):
        if isinstance(value, torch.Tensor) and not value.is_contiguous():
            candidates.append(
                (
                    f"input {position} {tuple(value.shape)} with strides {value.stride()}",
                    "make the reused non-contiguous input contiguous once, before the model",
                    f"inputs[{position}] = inputs[{position}].contiguous()",
                    partial(_contiguous_input, position),
                )
            )
    candidates.extend(_transposed_weight_candidates(model, copies))
    unapplied = []
    for where, what, fix, order, position in _permute_reshape_candidates(inputs, copies):
        if position is None:
            unapplied.append((where, what, fix))
        else:
            candidates.append((where, what, fix, partial(_input_stored_for, position, order)))
    found = [
        _measure(model, inputs, backward, loss_fn, where, what, fix, apply, kwargs)
        for where, what, fix, apply in candidates
    ]
    # An edit that builds on channels-last is proposed only when channels-last measured helps:
    # never a fix that needs another fix which was measured not to pay.
    channels_last = any(s.helps for s in found if s.fix.startswith("model = model.to("))
    unapplied.extend(_made_non_contiguous_candidates(model, inputs, copies, channels_last))
    if unapplied:
        unchanged = copy.deepcopy((model, inputs, kwargs))
        timing = interleaved(
            {"before": lambda: _run_step(*unchanged[:2], backward, loss_fn, unchanged[2])}
        )
        as_audited = Measured(
            len(copies), sum(c.bytes for c in copies), *_timing_fields(timing["before"])
        )
        found.extend(
            Suggestion(where, what, fix, {"before": as_audited}, False, applied=False)
            for where, what, fix in unapplied
        )
    return found


def _view_order(
    view: Layout, shape: tuple[int, ...], strides: tuple[int, ...], offset: int
) -> tuple[int, ...] | None:
    """``order`` with ``view == base.permute(order)`` for a base tensor of ``shape``, ``strides``
    and ``offset`` in the same storage, or ``None`` when the view is not a permutation of it.

    >>> _view_order(Layout((3, 2), (1, 3)), (2, 3), (3, 1), 0)
    (1, 0)
    >>> _view_order(Layout((3, 2), (1, 3)), (2, 3), (3, 1), 1) is None   # another offset
    True
    """
    if view.offset != offset or len(view.shape) != len(shape):
        return None
    order: list[int] = []
    for size, stride in zip(view.shape, view.strides):
        # a dim of size 1 is never stepped along, so its stride does not have to match
        match = next(
            (
                dim
                for dim in range(len(shape))
                if dim not in order and shape[dim] == size and (size == 1 or strides[dim] == stride)
            ),
            None,
        )
        if match is None:
            return None
        order.append(match)
    return tuple(order)


def _inverse(order: tuple[int, ...]) -> tuple[int, ...]:
    inverse = [0] * len(order)
    for position, dim in enumerate(order):
        inverse[dim] = position
    return tuple(inverse)


def _laid_out_for(tensor: torch.Tensor, order: tuple[int, ...]) -> torch.Tensor:
    """``tensor``'s values and shape, stored so that ``tensor.permute(order)`` is contiguous."""
    return tensor.permute(order).contiguous().permute(_inverse(order))


def _layout_code(order: tuple[int, ...]) -> str:
    if order == tuple(range(len(order))):
        return ".contiguous()"
    if len(order) == 2:
        return ".t().contiguous().t()"
    return f".permute{order}.contiguous().permute{_inverse(order)}"


def _forward_copies_from(
    copies: list[AuditCopy],
) -> Iterator[tuple[AuditCopy, Layout]]:
    """Each forward copy the tracker saw (not hidden in a kernel) with each of its sources, when
    every result it made is contiguous: the layout the copy was for."""
    for item in copies:
        if item.phase != "forward" or item.hidden_in or item.event.kind != "copy":
            continue
        if not item.result or not all(r is not None and r.is_contiguous for r in item.result):
            continue
        for source in item.source:
            if source is not None and source.storage_address and not source.is_contiguous:
                yield item, source


def _transposed_weight_candidates(
    model: torch.nn.Module, copies: list[AuditCopy]
) -> list[tuple[str, str, str, Callable[..., tuple[torch.nn.Module, tuple[Any, ...]]]]]:
    """A parameter whose permuted view (``weight.t()``) is copied to a contiguous one in the
    step: store the parameter so that the view it is used as is contiguous (once, outside the
    step — a parameter outlives the step, as with channels-last)."""
    parameters = {p.untyped_storage().data_ptr(): (name, p) for name, p in model.named_parameters()}
    found: dict[str, tuple[tuple[int, ...], str]] = {}  # name -> (order, where it is copied)
    for item, source in _forward_copies_from(copies):
        name, parameter = parameters.get(source.storage_address, (None, None))
        if parameter is None or name in found:
            continue
        order = _view_order(
            source, tuple(parameter.shape), parameter.stride(), parameter.storage_offset()
        )
        if order is not None:
            found[name] = (order, item.where)
    candidates = []
    for name, (order, where) in found.items():
        parameter = model.get_parameter(name)
        candidates.append(
            (
                f"parameter {name} {tuple(parameter.shape)} with strides {parameter.stride()}, "
                f"copied at {where}",
                "keep the weight in the layout it is used in, so that the view the step copies "
                "is already contiguous",
                f'with torch.no_grad(): model.get_parameter("{name}").data = '
                f'model.get_parameter("{name}").data{_layout_code(order)}',
                partial(_relaid_parameter, name, order),
            )
        )
    return candidates


_RESHAPES = ("Tensor.reshape", "torch.reshape", "Tensor.flatten", "torch.flatten")
# calls whose kernels copy a non-contiguous operand to a contiguous one first
_NEEDS_CONTIGUOUS = ("F.linear", "F.layer_norm")


def _made_non_contiguous_candidates(
    model: torch.nn.Module,
    inputs: tuple[Any, ...],
    copies: list[AuditCopy],
    channels_last_helps: bool,
) -> list[tuple[str, str, str]]:
    """A non-contiguous tensor made inside the model (``flatten(2).transpose(1, 2)`` of a patch
    embedding) that ``Linear`` / ``LayerNorm`` copy inside their kernels each step.  Only the
    model's source can change where it is made: ``(where, what, fix)``, reported unapplied.
    The channels-last route is offered only when channels-last was measured to help."""
    outside = {t.untyped_storage().data_ptr() for t in model_tensors(model)}
    outside.update(t.untyped_storage().data_ptr() for t in _tensors(inputs))
    found, seen = [], set()
    for item in copies:
        if item.phase != "forward" or not item.hidden_in or item.call not in _NEEDS_CONTIGUOUS:
            continue
        if item.where.startswith("torch/"):  # made inside torch's own modules: not the model's
            continue
        source = next((s for s in item.source if s is not None), None)
        if source is None or source.is_contiguous or source.storage_address in outside:
            continue
        if item.where in seen:
            continue
        seen.add(item.where)
        found.append(
            (
                f"{item.call} at {item.where} of {source.shape} with strides {source.strides}",
                f"not applied automatically: a non-contiguous tensor made inside the model is fed "
                f"to {item.call}, whose kernel copies it (and its gradient in backward) every "
                "step; make its producer write the layout the consumer reads",
                f"edit {item.where}: "
                + (
                    "run the patch convolution channels-last (measured to help above), so that "
                    "flatten(2).transpose(1, 2) is already contiguous"
                    if channels_last_helps
                    else ".contiguous() once where the tensor is made, if several layers read "
                    "it (channels-last, which would make it contiguous, did not help here)"
                ),
            )
        )
    return found


def _permute_reshape_candidates(
    inputs: tuple[Any, ...], copies: list[AuditCopy]
) -> list[tuple[str, str, str, tuple[int, ...], int | None]]:
    """A ``reshape`` / ``flatten`` that copied because its source is a permuted dense tensor.

    Such a reshape merges dims that are not adjacent in memory, so no reordering of the same two
    calls on the same tensor is a view: the tensor has to be *stored* in the permuted order.  When
    it is a model input, that is applied (inside the step, so the relayout's own copy counts):
    ``(where, what, fix, order, input position)``.  When it is made inside the model, only the
    model's source can change (make the producer write it permuted, or let the consumer take the
    unmerged dims): reported with position ``None``, not applied.
    """
    by_storage = {
        value.untyped_storage().data_ptr(): (position, value)
        for position, value in enumerate(inputs)
        if isinstance(value, torch.Tensor) and value.numel()
    }
    found = []
    seen = set()
    for item, source in _forward_copies_from(copies):
        if item.call not in _RESHAPES or not source.is_dense:
            continue
        position, value = by_storage.get(source.storage_address, (None, None))
        order = None
        if value is not None:
            order = _view_order(source, tuple(value.shape), value.stride(), value.storage_offset())
            position = position if order is not None else None
        if (item.where, position) in seen:
            continue
        seen.add((item.where, position))
        where = f"{item.call} at {item.where} of {source.shape} with strides {source.strides}"
        if position is None:
            what = (
                "not applied automatically: the permuted tensor is made inside the model, and "
                "a reshape that merges dims not adjacent in memory copies in any order of the "
                "calls; rewrite the code so the producer writes the permuted order, or the "
                "consumer takes the unmerged dims"
            )
            fix = f"edit {item.where}"
            found.append((where, what, fix, (), None))
        else:
            what = (
                f"store input {position} in the order its permute reads it, so that the "
                "reshape stays a view (measured with the input made so where it is made, outside "
                "the step, as for channels-last)"
            )
            fix = f"inputs[{position}] = inputs[{position}]{_layout_code(order)}"
            found.append((where, what, fix, order, position))
    return found


def _channels_last(
    model: torch.nn.Module, inputs: tuple[Any, ...]
) -> tuple[torch.nn.Module, tuple[Any, ...]]:
    return model.to(memory_format=torch.channels_last), tuple(
        value.contiguous(memory_format=torch.channels_last)
        if isinstance(value, torch.Tensor) and value.dim() == 4
        else value
        for value in inputs
    )


def _relaid_parameter(
    name: str, order: tuple[int, ...], model: torch.nn.Module, inputs: tuple[Any, ...]
) -> tuple[torch.nn.Module, tuple[Any, ...]]:
    parameter = model.get_parameter(name)
    with torch.no_grad():
        parameter.data = _laid_out_for(parameter.data, order)
    return model, inputs


def _input_stored_for(
    position: int, order: tuple[int, ...], model: torch.nn.Module, inputs: tuple[Any, ...]
) -> tuple[torch.nn.Module, tuple[Any, ...]]:
    stored = list(inputs)
    stored[position] = _laid_out_for(stored[position], order)
    return model, tuple(stored)


class _ContiguousInput(torch.nn.Module):
    """The model, with one input made contiguous inside the step (so that the fix's own copy is
    audited and timed with it)."""

    def __init__(self, model: torch.nn.Module, position: int) -> None:
        super().__init__()
        self.model = model
        self.position = position

    def forward(self, *inputs: Any) -> Any:
        return self.model(
            *(x.contiguous() if i == self.position else x for i, x in enumerate(inputs))
        )


def _contiguous_input(
    position: int, model: torch.nn.Module, inputs: tuple[Any, ...]
) -> tuple[torch.nn.Module, tuple[Any, ...]]:
    return _ContiguousInput(model, position), inputs


def _timing_fields(timing: Timing) -> tuple[float, float, float]:
    return timing.median, timing.q1, timing.q3


def _measure(
    model: torch.nn.Module,
    inputs: tuple[Any, ...],
    backward: bool,
    loss_fn: Callable[[Any], torch.Tensor] | None,
    where: str,
    what: str,
    fix: str,
    apply: Callable[..., tuple[torch.nn.Module, tuple[Any, ...]]],
    kwargs: dict[str, Any] | None = None,
    round_seconds: float = 0.02,
) -> Suggestion:
    # Both variants run on deep copies, so that the user's model is untouched; they are timed
    # in interleaved rounds (A B B A ...), so that a burst of load lands on both.
    variants = _variants(model, inputs, apply)
    kwargs = kwargs or {}
    audited = {
        label: _audited_step(m, x, backward, loss_fn, copy.deepcopy(kwargs))
        for label, (m, x) in variants.items()
    }
    timings = interleaved(
        {
            label: partial(_run_step, m, x, backward, loss_fn, copy.deepcopy(kwargs))
            for label, (m, x) in variants.items()
        },
        round_seconds=round_seconds,
    )
    measured = {
        label: Measured(len(copies), sum(c.bytes for c in copies), *_timing_fields(timings[label]))
        for label, copies in audited.items()
    }
    # The outputs are compared in float64 from one state and one seed: in float32 a layout change
    # reorders sums, and an ill-conditioned gradient (BatchNorm over a few values) turns that
    # rounding into percent-size differences that would hide or fake a real one.
    results = {}
    double_model = copy.deepcopy(model).double()
    double_inputs = tuple(
        value.double() if isinstance(value, torch.Tensor) and value.is_floating_point() else value
        for value in inputs
    )
    for label, (variant_model, variant_inputs) in _variants(
        double_model, double_inputs, apply
    ).items():
        torch.manual_seed(0)
        results[label] = _run_step(variant_model, variant_inputs, backward, loss_fn, kwargs)
    return Suggestion(where, what, fix, measured, _same(results["before"], results["after"]))


def _variants(
    model: torch.nn.Module,
    inputs: tuple[Any, ...],
    apply: Callable[..., tuple[torch.nn.Module, tuple[Any, ...]]],
) -> dict[str, tuple[torch.nn.Module, tuple[Any, ...]]]:
    """Deep copies of the model and inputs, as they are and with the fix applied."""
    return {
        "before": (copy.deepcopy(model), copy.deepcopy(inputs)),
        "after": apply(copy.deepcopy(model), copy.deepcopy(inputs)),
    }


def _scale(tensors: list[torch.Tensor]) -> float:
    floating = [t for t in tensors if t.numel() and t.is_floating_point()]
    return max((float(t.detach().abs().max()) for t in floating), default=1.0)


def _same(before: tuple[Any, tuple], after: tuple[Any, tuple]) -> bool:
    """Outputs and gradients of two float64 variants of a step agree up to rounding.

    Tensors are compared relative to a scale: each output its own, gradients the largest
    gradient's, because a gradient that is zero in exact arithmetic (a bias just before
    BatchNorm) is rounding noise whose value depends on the summation order.
    """
    for part_before, part_after, shared in (
        (before[0], after[0], False),
        (before[1], after[1], True),
    ):
        flat_before = [t for t in _tensors(part_before)]
        flat_after = [t for t in _tensors(part_after)]
        if len(flat_before) != len(flat_after):
            return False
        common = _scale(flat_before) if shared else None
        for a, b in zip(flat_before, flat_after):
            scale = common if common is not None else _scale([a])
            try:
                torch.testing.assert_close(a, b, rtol=1e-6, atol=1e-7 * max(scale, 1e-12))
            except AssertionError:
                return False
    return True
