"""Where each event of an audited step comes from: the module running (:class:`Timeline`,
:func:`modules_followed`), the source line that made the call, also inside torch
(:class:`NodeOrigins`), the forward call each backward node belongs to, and the line an
activation-checkpoint recompute re-runs (:func:`recompute_line`)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple

import torch

from ..._compat import view_base
from ...frames import PACKAGE_DIR, TORCH_DIR, describe_location
from ..log import CopyEvent, CopyLog
from ..ops import MISSING
from .guard import output_tensors

__all__ = [
    "NodeOrigins",
    "Recomputed",
    "Timeline",
    "line_text",
    "modules_followed",
    "recompute_line",
]


class Timeline:
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
def modules_followed(model: torch.nn.Module, timeline: Timeline) -> Iterator[None]:
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
            saved.append((module, module.__dict__.get("forward", MISSING)))
            module.__dict__["forward"] = follow(name, module.forward)
        yield
    finally:
        for module, own in saved:
            if own is MISSING:
                module.__dict__.pop("forward", None)
            else:
                module.__dict__["forward"] = own


_OVERRIDES_FILE = torch.overrides.__file__
#: torch's own dispatch plumbing: never the line that made a call (``torch.ops.fsdp.chunk_cat(...)``
#: is called from FSDP2's code; ``torch/_ops.py``'s ``OpOverloadPacket.__call__`` only passes it on)
_DISPATCH_FILES = frozenset(
    {_OVERRIDES_FILE, os.path.join(os.path.dirname(torch.__file__), "_ops.py")}
)


def _calling_frame(func: Any) -> tuple[str, int] | None:
    """File and line of the frame that made a user-level call, also when it is inside torch
    (``nn.Transformer``'s own modules): the tracker's line is the innermost line outside torch,
    which for a torch module is the line that called the model.  Only read here; the text is
    made by :func:`line_text` for the few calls a report shows."""
    callee = getattr(func, "__code__", None)
    frame = sys._getframe(2)
    # A Python-level torch function that dispatches to the modes (F.multi_head_attention_forward)
    # is on the stack as the callee, once per mode: skip it too.
    while frame is not None and (
        frame.f_code is callee
        or frame.f_code.co_filename.startswith(PACKAGE_DIR)
        or frame.f_code.co_filename in _DISPATCH_FILES
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


def line_text(filename: str, line: int) -> str:
    """``torch/nn/modules/transformer.py:12`` for library code (the path people know), else the
    tracker's ``file.py:12`` or ``In[3], line 2``."""
    marker = filename.rfind("site-packages" + os.sep)
    if marker >= 0:
        return f"{filename[marker + len('site-packages') + 1 :]}:{line}"
    return describe_location(filename, line)


class NodeOrigins:
    """Maps each autograd node of the forward graph to the forward event that created it."""

    def __init__(self, log: CopyLog) -> None:
        self.log = log
        self.of_node: dict[Any, int] = {}
        # event index -> file and line that made the call (None: no frame outside the package)
        self.location: dict[int, tuple[str, int] | None] = {}
        # event index -> the model's own line, for a call made inside torch (see _model_frame)
        self.model_location: dict[int, tuple[str, int]] = {}
        self.timeline: Timeline | None = None  # its root_frame bounds the model's frames

    def note_call(self, func: Any, result: Any, args: tuple[Any, ...] = ()) -> None:
        """Called as each user-level call returns, once the tracker recorded its event: the last
        one in the log.  A call that wrote in place also owns the node it gave the tensor it wrote
        and that tensor's base: ``h[:, :2].mul_(w)`` and ``h[:, :2] = v`` make ``h``'s grad_fn a
        ``CopySlices`` (``h[:, :2] = v`` returns nothing), whose backward copies the gradient."""
        index = len(self.log.events) - 1
        frame = self.location[index] = _calling_frame(func)
        if frame is not None and frame[0].startswith(TORCH_DIR) and self.timeline is not None:
            model_frame = _model_frame(self.timeline.root_frame)
            if model_frame is not None:
                self.model_location[index] = model_frame
        for tensor in output_tensors(result):
            if tensor.grad_fn is not None:
                self.of_node.setdefault(tensor.grad_fn, index)
        if args and self.log.events[index].wrote_input:
            for tensor in output_tensors((result, args[0])):
                base = view_base(tensor)
                for written in (tensor, base) if base is not None else (tensor,):
                    if written.grad_fn is not None:
                        self.of_node.setdefault(written.grad_fn, index)

    def where(self, event: CopyEvent) -> str:
        """The forward line of a call event: the model's own line when torch made the call for
        it; the tracker's for loose ATen ops."""
        if event.index in self.model_location:
            return line_text(*self.model_location[event.index])
        return self.library_line(event)

    def library_line(self, event: CopyEvent) -> str:
        """The line that made the call, also inside torch (``torch/nn/modules/conv.py:560``)."""
        if event.index not in self.location:
            return event.location
        frame = self.location[event.index]
        return "<unknown>" if frame is None else line_text(*frame)

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


_CHECKPOINT_FILE = os.path.join(os.path.dirname(torch.__file__), "utils", "checkpoint.py")


class Recomputed(NamedTuple):
    """What an activation-checkpoint recompute is re-running: the user's line (``filename``,
    ``line``), the innermost module whose ``forward`` is on the stack (``module``; ``None`` when
    none is: a call the checkpointed function makes itself), and that ``forward``'s line when it
    is torch's, below the user's line (``library``: ``torch/nn/modules/dropout.py:73`` for a
    ``Dropout``, as the forward's :meth:`NodeOrigins.detail` says it; else ``None``)."""

    filename: str
    line: int
    library: tuple[str, int] | None = None
    module: torch.nn.Module | None = None


def recompute_line(outermost: Any = None) -> Recomputed | None:
    """During backward: when ``torch.utils.checkpoint`` is re-running a forward, what it re-runs
    (:class:`Recomputed`), else ``None``.  Backward has no Python frames of its own, so the stack
    is short up to the frame that started it: a recompute runs inside that frame's backward call,
    so the walk stops at a frame of the code ``outermost`` (the audit's
    :func:`~.step.gradients`), and the caller's stack above it (pytest's, a notebook's: tens of
    frames) is not walked for each backward op.

    >>> recompute_line() is None
    True
    """
    frame = sys._getframe(1)
    frames = []
    while frame is not None:
        code = frame.f_code
        if code.co_filename == _CHECKPOINT_FILE:
            return _recomputed(frames)
        if code is outermost:
            return None
        frames.append(frame)
        frame = frame.f_back
    return None


def _recomputed(frames: list[Any]) -> Recomputed:
    """The :class:`Recomputed` of the stack below the checkpoint's frame, innermost first.  The
    ops a recompute runs reach the audit's dispatch mode through torch's own wrappers and the
    Python torch function that ran them (``F.dropout``), so the library line is taken from the
    module's ``forward``, the frame the forward's call was made in."""
    user = library = module = None
    for frame in frames:
        filename = frame.f_code.co_filename
        if filename.startswith(PACKAGE_DIR):
            continue
        if module is None and frame.f_code.co_name == "forward":
            owner = frame.f_locals.get("self")
            if isinstance(owner, torch.nn.Module):
                module = owner
                if user is None and filename.startswith(TORCH_DIR):
                    library = (filename, frame.f_lineno)
        if user is None and not filename.startswith(TORCH_DIR):
            user = (filename, frame.f_lineno)
        if user is not None and module is not None:
            break
    filename, line = user or ("<unknown>", 0)
    return Recomputed(filename, line, library, module)
