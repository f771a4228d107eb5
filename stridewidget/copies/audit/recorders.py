"""The copy tracker's extension points, subclassed for the audit: recorders that read only what a
report can show (:class:`AuditRecorder`) and note each backward op's autograd node
(:class:`BackwardRecorder`), a call mode that notes each call's source line (:class:`AuditCalls`)
and an op mode that marks the ops whose kernels can hide a copy for the profiler
(:class:`AuditOps`)."""

from __future__ import annotations

import threading
from typing import Any

import torch

from ..._compat import current_autograd_node, storage_identity
from ..log import CopyLog
from ..ops import Pending, moves_data, op_info
from ..snapshot import arrays_in
from ..tracker import CallMode, OpMode, Recorder
from .guard import output_tensors
from .origins import NodeOrigins, recompute_line
from .profiler import Marked, collect, copy_free_call, profiler_name

__all__ = [
    "FUNCTIONAL_UNDER_A_MODE",
    "OTHER_FORMULA_UNDER_A_MODE",
    "AuditCalls",
    "AuditOps",
    "AuditRecorder",
    "BackwardRecorder",
    "without_ctc_conversion",
]


class AuditRecorder(Recorder):
    """Reads layouts only for the events a report can show (see ``Recorder.every_layout``), and
    decides no kind for an event that moved no data and wrote nothing: it is not a copy, and the
    report draws only the inputs of a call that hid one (whose result never reaches Python).  Such
    an event keeps its place in the log (module timeline, autograd nodes), its call and ops, and
    its inputs' snapshots when it ran an op that can hide a copy; its kind stays ``""``."""

    every_layout = False
    lazy = False  # record() reads and updates self.blank, in call order

    def __init__(self, log: CopyLog, blank: dict[int, int] | None = None) -> None:
        super().__init__(log)
        # storage -> bytes of it no copy has written yet, for the storages allocated in the step
        # by calls that put no data in them (empty, zeros ...)
        self.blank = {} if blank is None else blank
        # indices of the events whose copy was the write into such a buffer
        self.into_blank: set[int] = set()
        # the 0-dim tensors ``_to_copy`` converted in the call in progress (see AuditOps.run)
        self.zero_dim: list[torch.Tensor] = []
        # indices of the events whose copies were Python scalars wrapped as 0-dim tensors
        self.wrapped_scalars: set[int] = set()

    def unread(self, pending: Pending) -> bool:
        return not (pending.fresh_copy or pending.written)

    def add(self, call: str, arguments: Any, result: Any, pending: Pending) -> None:
        if pending.ops and _ALLOCATIONS.issuperset(pending.ops):
            for tensor in output_tensors(result):
                self.blank[storage_identity(tensor)] = tensor.untyped_storage().nbytes()
        super().add(call, arguments, result, pending)
        if self.zero_dim:
            if _wrapped_scalars(self.zero_dim, arguments):
                self.wrapped_scalars.add(len(self.log.events) - 1)
            self.zero_dim.clear()

    def record(
        self,
        call: str,
        input_snapshots: tuple[Any, ...],
        result: Any,
        pending: Any,
        filename: str,
        line: int,
    ) -> None:
        # Copies into storage the call allocated itself fill at most that storage: F.pad's
        # circular mode copies the wrapped edges into its new buffer, then the corners again
        # over them (640 B copied into 576 B); what the step moved into new storage is the
        # buffer's bytes, as the profiler's allocations say.
        if pending.copied_into and not pending.fresh_copy:
            filled = {extent.cdata: extent.nbytes for extent in pending.copied_into}
            if not any(e.cdata in filled for snapshot in input_snapshots for e in snapshot.extents):
                pending.bytes_copied = min(pending.bytes_copied, sum(filled.values()))
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
                    self.into_blank.add(len(self.log.events))
                    if left <= pending.bytes_copied:
                        del self.blank[extent.cdata]
                    else:
                        self.blank[extent.cdata] = left - pending.bytes_copied
                    break
        super().record(call, input_snapshots, result, pending, filename, line)


def _wrapped_scalars(converted: list[torch.Tensor], arguments: Any) -> bool:
    """Were the 0-dim tensors a call's ``_to_copy`` converted Python numbers (``x * 0.5``,
    ``torch.where(m, x, 0)``), which torch wraps as a CPU tensor of the widest dtype of their
    kind (float64, int64, complex128, bool)?  A tensor the user passed (``t.to(torch.float64)``
    of a 0-dim ``t``) is none: it is one of the call's arguments."""
    passed = {id(t) for t in arrays_in(arguments, [])}
    return all(
        id(t) not in passed and t.dtype in _SCALAR_DTYPES and t.device.type == "cpu"
        for t in converted
    )


# The dtypes torch wraps a Python bool, int, float, complex in.
_SCALAR_DTYPES = frozenset({torch.bool, torch.int64, torch.float64, torch.complex128})


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


#: Backward formulas that take another branch while any dispatch mode is on (torch's
#: ``areAnyTensorSubclassLike``, true of every tensor then), whose copy the plain step does not
#: make: autograd node -> ``(op, what)``.  ``"own"``: the node's functional ``op`` makes a new
#: tensor from a zero buffer the step just allocated (blank: :attr:`AuditRecorder.blank`), where
#: the plain step runs its in-place form on that buffer itself: ``value_selecting_reduction_backward``
#: (``zeros.scatter_(dim, indices, grad)`` in the plain step, ``new_zeros.scatter(...)`` under a
#: mode) and ``masked_select_backward`` (``masked_scatter_`` / ``masked_scatter``); the
#: copy is not reported.  ``"bool"``: the copy the ``op``'s kernel makes inside itself of a bool
#: tensor on the CPU is not reported: ``evenly_distribute_backward`` (``max()`` / ``min()`` of
#: all elements) fills ``new_zeros`` with ``masked_fill_`` in a plain CPU step, while under a mode
#: (and on CUDA, where it is reported) it multiplies its bool mask, converted, by the gradient.
#: ``prod`` and ``cumprod`` are not here: see :data:`OTHER_FORMULA_UNDER_A_MODE`.
FUNCTIONAL_UNDER_A_MODE = {
    **dict.fromkeys(
        (
            "SortBackward0",
            "SortBackward1",
            "TopkBackward0",
            "KthvalueBackward0",
            "MedianBackward1",
            "NanmedianBackward1",
            "ModeBackward0",
            "MaxBackward0",
            "MinBackward0",
        ),
        ("aten.scatter", "own"),
    ),
    "MaskedSelectBackward0": ("aten.masked_scatter", "own"),
    "MaxBackward1": ("aten.mul", "bool"),
    "MinBackward1": ("aten.mul", "bool"),
}


#: Autograd nodes whose backward formula is another one while any dispatch mode is on: the plain
#: step's ``prod`` backward looks for zeros in its input (``nonzero``, a data-dependent branch)
#: and divides; under a mode it runs the zero-safe formula (exclusive cumulative products, padded
#: and concatenated), with other ops and other copies throughout (a ``prod(dim)`` of a (4, 8)
#: input: 496 B of copies where the plain step makes 260).  Their copies are not the plain
#: step's: not reported, and the report's note says the plain step's there are not measured.
OTHER_FORMULA_UNDER_A_MODE = frozenset({"ProdBackward0", "ProdBackward1", "CumprodBackward0"})


def without_ctc_conversion(inside: Any) -> list[Any]:
    """The copies found inside a ``ctc_loss`` call (or inside the ``DivBackward0`` of its
    division), but the one only the audit's modes make.  ``ctc_loss`` given its lengths as
    tensors takes its subclass-safe branch under a mode: its ``"mean"`` reduction divides the
    losses by the int64 target lengths, which ``div`` converts inside itself (and again in that
    division's backward), where the plain step divides by them made in the losses' dtype
    (``at::tensor(target_lengths, res.options())``): no conversion."""
    return [item for item in inside if item[:2] != ("aten.div", "aten._to_copy")]


class BackwardRecorder(AuditRecorder):
    """Notes, for each event, the autograd node the engine was running in this thread (``None``
    between nodes: the engine summing two gradients of one tensor).  One call per op, instead of
    a pre and a post hook registered on every node of the graph and run around it."""

    user_lines = False  # a backward copy's line is its forward call's (or its node's name)

    def __init__(self, log: CopyLog, blank: dict[int, int] | None = None) -> None:
        super().__init__(log, blank)
        self.nodes: list[Any] = []
        # event index -> the user's line re-run, for events of an activation-checkpoint recompute
        self.recomputed: dict[int, tuple[str, int]] = {}
        # the code of the frame that runs backward, where the search for a recompute stops
        self.outermost: Any = None
        # event index -> "own" or "bool": a copy only the audit's modes make
        # (:data:`FUNCTIONAL_UNDER_A_MODE`)
        self.under_a_mode: dict[int, str] = {}
        # autograd node names whose copies are not the plain step's, in the order met
        # (:data:`OTHER_FORMULA_UNDER_A_MODE`)
        self.unmeasured: dict[str, None] = {}

    def add(self, call: str, arguments: Any, result: Any, pending: Pending) -> None:
        count = len(self.log.events)
        super().add(call, arguments, result, pending)
        if len(self.log.events) == count or self.nodes[-1] is None:
            return
        rule = FUNCTIONAL_UNDER_A_MODE.get(type(self.nodes[-1]).__name__)
        if rule is None or pending.ops != [rule[0]]:
            return
        tensors = arrays_in(arguments, [])
        if not tensors or not isinstance(tensors[0], torch.Tensor):
            return
        first = tensors[0]
        if rule[1] == "own":
            if storage_identity(first) in self.blank:
                self.under_a_mode[count] = "own"
        elif first.dtype == torch.bool and first.device.type == "cpu":
            self.under_a_mode[count] = "bool"

    def record_unread(
        self, call: str, pending: Pending, arguments: Any, filename: str, line: int
    ) -> None:
        # Nothing reads a backward event that is not a copy and ran no op that can hide one (the
        # views and transposes of backward formulas: half of its ops), so it is not kept.  The
        # next event takes its index, as the op marked for the profiler was told.
        if pending.keep_layouts:
            self.note_node()
            super().record_unread(call, pending, arguments, filename, line)

    def record(self, *arguments: Any) -> None:  # as Recorder.record
        self.note_node()
        super().record(*arguments)

    def note_node(self) -> None:
        self.nodes.append(current_autograd_node())
        line = recompute_line(self.outermost)
        if line is not None:
            self.recomputed[len(self.log.events)] = line


class AuditCalls(CallMode):
    """The tracker's call mode, noting each recorded call's source line and autograd nodes."""

    def __init__(self, recorder: Recorder, origins: NodeOrigins) -> None:
        super().__init__(recorder)
        self.origins = origins

    def recorded(self, func: Any, result: Any, args: tuple[Any, ...]) -> None:
        self.origins.note_call(func, result, args)


class AuditOps(OpMode):
    """The tracker's op mode, noting each ATen op that can hide a copy, in the order its thread
    runs them, with the tracker event it belongs to (the next one recorded), so that copies a
    kernel makes inside itself — visible to the profiler, not to dispatch modes — can be traced
    to their call.  The profiler collects only while such an op runs: the other ops' events would
    only be recorded, stored and read to be skipped (most of the profiler's cost per step)."""

    def __init__(self, recorder: Recorder, offset: int, marked: Marked) -> None:
        super().__init__(recorder)
        self.offset = offset  # BACKWARD for the backward log
        self.marked = marked

    def run(self, func: Any, args: tuple[Any, ...], kwargs: dict) -> Any:
        if func.__name__ == "_to_copy.default" and args[0].dim() == 0:  # a Python number?
            self.recorder.zero_dim.append(args[0])  # type: ignore[attr-defined]
        name = profiler_name(func)
        if name is None or not self.marked.searching or copy_free_call(func, args, kwargs):
            return func(*args, **kwargs)
        # the tracker counts this call's own movement (embedding's gather): its kernel's gather
        # or copy_ into its result is that copy (see hidden.Search).  Asked before the profiler
        # collects: a first answer runs the op's decomposition (note_op reads it cached).
        moves = not op_info(func).written and moves_data(func, args, kwargs)
        ops = self.marked.get(threading.get_ident())
        if ops is None:
            ops = self.marked.first_in_thread()
        index = self.offset + len(self.recorder.log.events)
        ops.append((index, name, True) if moves else (index, name))
        self.recorder.pending.keep_layouts = True
        collect(True)
        try:
            return func(*args, **kwargs)
        finally:
            collect(False)
