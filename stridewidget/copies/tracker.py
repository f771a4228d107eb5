"""Copy tracker: which call in a block of code copied data, which made a view, which computed.

``track_copies()`` stacks two of PyTorch's own interception modes for the length of a ``with`` block
(no monkey-patching):

* a :class:`torch.overrides.TorchFunctionMode` sees each *user-level* call (``Tensor.reshape``,
  ``torch.cat``, ``torch.nn.functional.linear`` ...).  PyTorch pops a mode while its handler runs, so
  the torch calls made *inside* a call (the dozens inside ``F.multi_head_attention_forward``) are
  not seen at this level: they belong to the outermost call, which is what the user wrote.
* a :class:`torch.utils._python_dispatch.TorchDispatchMode` sees every ATen op those calls run
  (below autograd, after decomposition): ``reshape`` on a non-viewable input shows up as
  ``aten.clone`` + ``aten._unsafe_view``, ``contiguous()`` on a contiguous input as no op at all.

Each call becomes a :class:`CopyEvent`, classified from what its ATen ops did and from storage
identity (not from the call's name):

``copy``      it moved existing data into storage it allocated: a data-movement op ran
              (``clone``, ``_to_copy``, ``copy_`` into a fresh buffer, ``repeat``, ``flip``,
              ``cat``, advanced indexing ... see :data:`~.ops.COPY_OPS`), or an op whose reference
              decomposition moves its inputs' data without arithmetic (``F.pad`` in every mode,
              ``pixel_shuffle``, ``F.unfold``, ``diag_embed``; see :func:`~.ops.moves_data`).
              A call that both computed and copied (an attention forward calling ``.contiguous()``
              inside) counts as a copy: the point is to find every copy.  So does an in-place
              call that cloned its input first (``F.silu(x, inplace=True)``, ``x.mul_(w)``
              under autograd): precedence copy > in-place > view > compute, and its
              ``wrote_input`` says it also wrote in place.
``in-place``  it wrote into an input's existing storage and returned that storage (or nothing):
              ``x.add_(1)``, ``x.copy_(y)``, ``x[0] = y``, ``torch.cat(xs, out=buf)``.
``view``      the result shares an input's storage and nothing was written: ``view``, ``t()``,
              ``x[:, 1:]``, ``detach()``, ``.numpy()``, and calls that return their input itself
              (``contiguous()`` on a contiguous tensor, ``.to(same dtype)``; ``returned_input``).
``compute``   everything else: new values in new storage (``x + 1``, ``x.T @ y``, ``torch.zeros``).

Calls that return no tensor or array and ran no ATen op (``x.shape``, ``x.dim()``) are not events.
Nor are reads of an attribute that holds a tensor already (``x.grad``, ``x._grad``, ``x._base``;
see :data:`STORED_ATTRIBUTES`) when they run no ATen op: they move no data and make no view (an
optimizer step reads each parameter's ``.grad``: a fifth of a training step's calls).  Attribute
reads that run ATen ops stay events: ``.T``, ``.mT``, ``.H``, ``.mH``, ``.real``, ``.imag`` make
views, and ``.data`` runs ``aten.detach``.
Every ATen op run in the block belongs to exactly one event: an op that no user-level call
accounts for becomes an event of its own, named after the op.  ``torch.from_numpy`` is such a case:
PyTorch does not route it through ``__torch_function__``, so it appears as ``aten.lift_fresh``, a
``view`` of memory the tensor already shares with the array.

Cost is paid only inside the block, per call and per ATen op (``benchmarks/bench_copies.py`` and
``benchmarks/bench_checkers.py`` measure it beside PyTorch's bare modes).  The hooks record raw
data only: each call appends one tuple to ``CopyLog.recorded`` (its snapshots, what its ops did,
its user's line), and the events are built and classified when ``log.events`` is read;
layouts are captured as a few fields and built into :class:`~stridewidget.Layout` objects only
when read, a tensor seen again with its storage unchanged reuses its earlier snapshot, an op's
data-movement verdict is worked out once per op, and tensors are held by weak reference only.
Note that any active ``TorchFunctionMode`` makes ``has_torch_function`` true, so fused fast paths
that check it (``nn.TransformerEncoderLayer`` in eval mode) take their plain path while tracked.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import torch
from torch.overrides import TorchFunctionMode, resolve_name

from .._compat import (
    dispatch_mode_base,
    dispatch_unwrapped,
    functional_mutation_count,
    functorch_stack_reader,
    functorch_transforms,
    is_higher_order,
    run_composite_implicit,
    run_higher_order,
    stored_tensor_attributes,
)
from ..adapters.aten import ARRAY_TYPES
from ..frames import user_line_cached
from ..unseen import THREAD as _THREAD
from ..unseen import Hushed, opened
from .log import CopyEvent, CopyLog, _recorded_event, classify
from .ops import (
    NO_SNAPSHOTS,
    OP_ENTRIES,
    PLAIN_OPS,
    WRITES_SELF,
    Pending,
    argument_value,
    call_key,
    moves_data_answers,
    note_op,
    op_entry,
)
from .snapshot import (
    _NOT_ARRAYS,
    _PLAIN_TENSOR_TYPES,
    Snapshot,
    arrays_in,
    call_snapshots,
    distinct,
    has_array,
    snapshots_of,
    storage_extents,
)

__all__ = ["STORED_ATTRIBUTES", "CallMode", "OpMode", "Recorder", "track_copies", "tracking"]


#: The attributes whose read returns a tensor the tensor already holds, running no ATen op: such a
#: read is not an event (it moves no data and makes no view).  ``.T``, ``.real``, ``.data`` ... are
#: not here: they run ops that make views (``.real`` of a real tensor returns it itself, a view
#: event as ``contiguous()`` of a contiguous one is).
STORED_ATTRIBUTES = stored_tensor_attributes()
#: The keyword arguments of a call torch passes none to (most calls): one dict, never written
#: (each handler only reads its arguments; ``func(**kwargs)`` copies it), not one per call.
_NO_KWARGS: dict[str, Any] = {}
_INTERPRETERS = functorch_stack_reader()
_METHOD_WRAPPER = type(torch.Tensor.grad.__get__)
#: The attributes whose setting leaves the tensor's own layout and storage as they were: an
#: optimizer's ``zero_grad`` sets each parameter's ``grad`` to ``None``, and forgetting the
#: parameter's snapshot then would snapshot it afresh in the next forward.  Any other setter
#: (``.data =`` above all) forgets the tensor's snapshot.
_LAYOUT_KEEPING_SETTERS = frozenset({torch.Tensor.grad, torch.Tensor.requires_grad})
#: The attributes whose read on a plain tensor (outside functorch transforms) runs no ATen op and
#: is no event: it returns a tensor the tensor holds (:data:`STORED_ATTRIBUTES`) or a
#: description that is not an array.  The call mode returns such a read at once, before any of
#: its bookkeeping.
_QUIET_GETTERS = STORED_ATTRIBUTES | {
    getattr(torch.Tensor, name)
    for name in ("device", "dtype", "shape", "is_sparse", "requires_grad", "is_leaf", "ndim",
                 "layout", "is_cuda", "grad_fn")
}  # fmt: skip
#: Calls that read a plain tensor's field (outside functorch transforms): no ATen op, no array
#: returned, no event; returned at once as :data:`_QUIET_GETTERS`.
_QUIET_CALLS = {
    id(call): call
    for call in (torch.is_complex, torch.is_floating_point, torch.Tensor.is_complex,
                 torch.Tensor.is_floating_point, torch.Tensor.dim)
}  # fmt: skip
_getframe = sys._getframe  # how __torch_function__ gets an attribute read

# The fields an unread event (see Recorder.unread) shares with every other one.
_UNREAD_FIELDS = {
    "kind": "",
    "aliases_input": False,
    "allocated": False,
    "returned_input": False,
    "wrote_input": False,
    "bytes_copied": 0,
    "_outputs": (),
}


class Recorder:
    """Turns what the modes saw of one call (its :class:`~.ops.Pending`) into the log's next
    :class:`~.log.CopyEvent`.  The audit subclasses it: its class attributes and :meth:`unread`,
    :meth:`record_unread` and :meth:`record` are the points it changes."""

    #: Every event's layouts are read (what the tracker promises).  The audit's subclass reads
    #: them only for the events its report can show: copies, and calls whose ``keep_layouts`` its
    #: op mode set (they ran an op that can hide a copy).  Reading a layout is most of a
    #: snapshot's cost, and calls that only made views are nearly half of a step's events.
    every_layout = True

    #: Record each call as its snapshots and what its ops did (``CopyLog.recorded``), made into
    #: an event, its kind and aliasing decided (:func:`~.log.classify`), when the log's events
    #: are read: half of the tracker's Python per call was building and deciding them.  The audit's
    #: subclass decides at once: its :meth:`record` reads state that later calls change.
    lazy = True

    #: The user's source line is read for each event (the audit's backward recorder has no
    #: use for it: backward ops have no Python frames of their own).
    user_lines = True

    def __init__(self, log: CopyLog) -> None:
        self.log = log
        self.pending: Pending | None = None
        # id -> the last snapshot of that plain tensor, lent to its next call (call_snapshots)
        self.seen: dict[int, Snapshot] = {}
        # user_line_cached's [frame, filename, line]: emptied when the block ends
        self.line_cache: list[Any] = [None, "", 0]

    def add(self, call: str, arguments: Any, result: Any, pending: Pending) -> None:
        """Record the event of one call (or loose op) that returned ``result``: in full, or as
        :meth:`record_unread` when :meth:`unread` says nothing will read its kind.  Called by the
        modes' handlers, so that :func:`~stridewidget.frames.user_line` starts its walk in this
        package."""
        if self.lazy:  # every event recorded, decided when read
            filename, line = user_line_cached(self.line_cache) if self.user_lines else ("", 0)
            inputs, outputs, returned_input = call_snapshots(
                *arguments, result, pending.before, self.seen
            )
            self.log.recorded.append(
                (call, pending, inputs, outputs, returned_input, filename, line)
            )
        elif self.unread(pending):
            lines = self.user_lines and pending.keep_layouts
            filename, line = user_line_cached(self.line_cache) if lines else ("", 0)
            self.record_unread(call, pending, arguments, filename, line)
        else:
            filename, line = user_line_cached(self.line_cache) if self.user_lines else ("", 0)
            input_snapshots = snapshots_of(arguments, pending.before, self.every_layout)
            self.record(call, input_snapshots, result, pending, filename, line)

    def unread(self, pending: Pending) -> bool:
        """Is this an event whose kind nothing will read, so that it is recorded by
        :meth:`record_unread`?  Never for the tracker; the audit's subclass says yes to events
        that moved no data and wrote nothing (they cannot be copies)."""
        return False

    def record_unread(
        self, call: str, pending: Pending, arguments: Any, filename: str, line: int
    ) -> None:
        """Add an event :meth:`unread` chose: its kind ``""`` (not decided: no aliasing read), no
        outputs; its inputs' snapshots only when ``pending.keep_layouts`` (it ran an op that can
        hide a copy, whose source the audit may draw)."""
        inputs = (
            tuple([Snapshot.for_drawing(obj) for obj in distinct(arrays_in(arguments, []))])
            if pending.keep_layouts
            else ()
        )
        event = object.__new__(CopyEvent)  # as CopyEvent._recorded, from a template
        fields = event.__dict__
        fields.update(_UNREAD_FIELDS)
        fields["index"] = len(self.log.events)
        fields["call"], fields["ops"], fields["_inputs"] = call, tuple(pending.ops), inputs
        fields["filename"], fields["line"] = filename, line
        self.log.events.append(event)

    def record(
        self,
        call: str,
        input_snapshots: tuple[Snapshot, ...],
        result: Any,
        pending: Pending,
        filename: str,
        line: int,
    ) -> None:
        """Add the event of one call; ``input_snapshots`` show the inputs as they were when it
        was called (an in-place metadata op such as ``t_`` or ``resize_`` changes them)."""
        output_snapshots = snapshots_of(result, layout=self.every_layout)
        returned_input = any(
            out.ref() is snapshot.ref() for out in output_snapshots for snapshot in input_snapshots
        )
        fields = classify(input_snapshots, output_snapshots, pending, returned_input)
        if not self.every_layout and (fields["kind"] == "copy" or pending.keep_layouts):
            for snapshot in (*input_snapshots, *output_snapshots):
                snapshot.read_layout()
        self.log.events.append(
            _recorded_event(len(self.log.events), call, pending, returned_input, fields, filename,
                           line, input_snapshots, output_snapshots)
        )  # fmt: skip


_CALL_NAMES: dict[Any, str] = {}


def _call_name(func: Any) -> str:
    """``torch.Tensor.reshape``, ``torch.nn.functional.linear``: torch's own names, cached."""
    name = _CALL_NAMES.get(func)
    if name is None:
        name = _CALL_NAMES[func] = resolve_name(func) or getattr(func, "__name__", repr(func))
    return name


class CallMode(TorchFunctionMode):
    """Sees user-level calls; PyTorch pops it while a call runs, so inner calls are not seen."""

    #: > 0 while hushed (:func:`stridewidget.unseen.unseen`): every call passes through
    quiet = 0

    def __init__(self, recorder: Recorder) -> None:
        super().__init__()
        self.recorder = recorder
        # recorded() not overridden (the tracker's own mode): no call to make per event
        self.plain_recorded = type(self).recorded is CallMode.recorded
        # the tracker's own recorder: its add() is inlined in the handler (a frame per call)
        self.inline_add = (
            type(recorder).add is Recorder.add and recorder.lazy and recorder.user_lines
        )

    def __torch_function__(
        self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: dict | None = None
    ) -> Any:
        if kwargs is None:
            kwargs = _NO_KWARGS
        depth = _THREAD.depth
        if depth.in_dispatch or self.quiet:  # a handler's own call, or this package's work
            return func(*args, **kwargs)
        interpreters = _INTERPRETERS()  # a functorch transform runs (one C call, falsy outside)
        if len(args) == 1 and type(args[0]) in _PLAIN_TENSOR_TYPES and not interpreters:
            # x.grad, x.device, x.is_sparse, x.dim(), torch.is_complex(x) of a plain tensor: C
            # reads of fields it holds, never an ATen op, never an event (an AdamW step reads
            # each parameter's grad 4 times and asks is_complex of it twice)
            if (
                type(func) is _METHOD_WRAPPER
                and func.__self__ in _QUIET_GETTERS
                and func.__name__ == "__get__"
            ):
                return func(*args)
            if _QUIET_CALLS.get(id(func)) is func:
                return func(*args, **kwargs)
        recorder = self.recorder
        outer = recorder.pending
        pending = recorder.pending = Pending()
        mutations: Any = ()
        if interpreters:
            transforms = pending.transforms = functorch_transforms()
            if "functionalize" in transforms:
                mutations = _functional_mutations(args, kwargs)
        try:
            result = func(*args, **kwargs)
        finally:
            recorder.pending = outer
        for tensor, count in mutations:
            # functionalization ran the in-place op out of place and swapped the result into
            # the wrapper: no op wrote an argument, but the wrapper's mutation count moved
            if functional_mutation_count(tensor) != count:
                pending.written += storage_extents(tensor)
        if pending.ops or (
            type(result) not in _NOT_ARRAYS  # a bool, an int, None: no array, at one lookup
            and (isinstance(result, ARRAY_TYPES) or has_array(result))
            # x.grad, x._base: a tensor x holds, no op run: not an event
            and not (type(func) is _METHOD_WRAPPER and func.__self__ in STORED_ATTRIBUTES)
        ):
            name = _CALL_NAMES.get(func) or _call_name(func)
            if self.inline_add:  # Recorder.add's lazy path, without its frame
                # user_line's walk starts at this handler's caller, as it would from add; the
                # frame user_line_cached kept (an AdamW step's loop) is tested here, without a call
                line_cache = recorder.line_cache
                if _getframe(1) is line_cache[0]:
                    filename, line = line_cache[1], line_cache[2]
                else:
                    filename, line = user_line_cached(line_cache)
                inputs, outputs, returned_input = call_snapshots(
                    args, kwargs, result, pending.before, recorder.seen
                )
                recorder.log.recorded.append(
                    (name, pending, inputs, outputs, returned_input, filename, line)
                )
            else:
                recorder.add(name, (args, kwargs), result, pending)
            if not self.plain_recorded:
                self.recorded(func, result, args)
        elif (
            getattr(func, "__name__", "") == "__set__"
            and args
            and getattr(func, "__self__", None) not in _LAYOUT_KEEPING_SETTERS
        ):
            # ``x.data = y`` gives x y's layout without an ATen op: x's snapshot no longer holds
            recorder.seen.pop(id(args[0]), None)
        return result

    def recorded(self, func: Any, result: Any, args: tuple[Any, ...]) -> None:
        """Called when a call's event (the log's last) is recorded: the audit's subclass notes the
        call's source line there, instead of a third mode seeing every call again."""


def _functional_mutations(args: tuple[Any, ...], kwargs: dict) -> list[tuple[Any, int]]:
    """``(tensor, mutation count)`` of the arguments that are ``functionalize`` wrappers."""
    counted = []
    for tensor in arrays_in((args, kwargs), []):
        if isinstance(tensor, torch.Tensor):
            count = functional_mutation_count(tensor)
            if count is not None:
                counted.append((tensor, count))
    return counted


class OpMode(dispatch_mode_base()):
    """Sees every ATen op and notes what it wrote into the call in progress; a higher-order op
    (``torch.cond``, ``while_loop``, ``flex_attention``) runs its subgraphs through it."""

    supports_higher_order_operators = True
    #: > 0 while hushed (:func:`stridewidget.unseen.unseen`): every call passes through
    quiet = 0

    def __init__(self, recorder: Recorder) -> None:
        super().__init__()
        self.recorder = recorder
        # run() not overridden (the tracker's own mode): each op is called directly
        self.plain_run = type(self).run is OpMode.run

    def __torch_dispatch__(
        self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: dict | None = None
    ) -> Any:
        if not _dynamo_quiet():  # a torch.compile frame hook is set: off while this runs
            return _dynamo_wrapped(self, func, types, args, kwargs)
        if self.quiet:  # this package's own work (stridewidget.unseen)
            return func(*args, **kwargs) if kwargs else func(*args)
        thread = _THREAD.depth
        key = id(func)
        fast = _FAST_OPS.get(key)  # an op noted from its entry alone (see _FAST_OPS)
        if fast is not None and fast[0] is func and self.plain_run:
            pending = self.recorder.pending
            mode = fast[3]
            if pending is not None and (
                mode is not _SELF or (args and type(args[0]) in _PLAIN_TENSOR_TYPES)
            ):
                thread.in_dispatch += 1
                try:
                    result = fast[1](*args, **kwargs) if kwargs else fast[1](*args)
                finally:
                    thread.in_dispatch -= 1
                # _DTYPED: moves_data's verdict for this call, under moves_data's own key
                if mode is _DTYPED and fast[5].get(call_key(args, kwargs)) is not False:
                    note_op(func, fast[4], args, kwargs or {}, result, pending)
                    return result
                pending.ops.append(fast[2])
                if mode is _SELF:  # in-place arithmetic on a plain tensor (WRITES_SELF)
                    pending.written += storage_extents(args[0])
                return result
        if kwargs is None:
            kwargs = {}
        entry = OP_ENTRIES.get(key)  # an op seen before is an OpOverload, not higher-order
        if entry is None or entry[0] is not func:
            if is_higher_order(func):  # its subgraphs' ops come back here, one by one
                return run_higher_order(self, func, args, kwargs, "sw.track_copies")
            entry = op_entry(func)
        info = entry[1]
        recorder = self.recorder
        pending = recorder.pending
        standalone = pending is None
        thread.in_dispatch += 1
        try:
            if standalone:  # an op no user-level call accounts for: an event of its own
                pending = recorder.pending = Pending()
            if entry[2]:  # t_, resize_, set_, out=: the layout before
                _relaid(entry[2], args, kwargs, pending, recorder.seen)
            try:
                if info.decomposes and info.runs_decomposition(args, kwargs):
                    # Only with autograd off (torch.inference_mode()) do CompositeImplicitAutograd
                    # ops (contiguous, reshape, flatten, pad ...) reach this mode whole; run their
                    # decomposition through this mode, so the ops that do the work are seen
                    # exactly as with autograd on.  An op with a kernel of its own on this device
                    # (silu_backward) runs that kernel, as it does outside the mode.
                    with self:
                        result = run_composite_implicit(func, *args, **kwargs)
                else:
                    result = (
                        entry[3](*args, **kwargs)
                        if self.plain_run
                        else self.run(func, args, kwargs)
                    )
                    if key in PLAIN_OPS:  # known to move and write nothing: its name only
                        pending.ops.append(info.name)
                    elif key in WRITES_SELF and args and type(args[0]) in _PLAIN_TENSOR_TYPES:
                        # in-place arithmetic on a plain tensor: note_op's first case, inlined
                        pending.ops.append(info.name)
                        pending.written += storage_extents(args[0])
                    else:
                        note_op(func, info, args, kwargs, result, pending)
                    if not info.decomposes and not entry[2] and key not in _FAST_OPS:
                        _note_fast(func, entry, key)
            finally:
                if standalone:
                    recorder.pending = None
            if standalone:
                recorder.add(info.name, (args, kwargs), result, pending)
        finally:
            thread.in_dispatch -= 1
        return result

    def run(self, func: Any, args: tuple[Any, ...], kwargs: dict) -> Any:
        """Run one ATen op that is not decomposed here: the audit's subclass marks the ops whose
        kernels can hide a copy for the profiler, instead of a second mode seeing every op."""
        return func(*args, **kwargs)


# torch's dynamo-disable wrapper taken off the handler, run only when it would do something
_dynamo_quiet, _dynamo_wrapped = dispatch_unwrapped(OpMode)

#: id(op) -> ``(op, run, name, mode, info, answers)`` for the ops
#: :meth:`OpMode.__torch_dispatch__` notes from this entry, without :func:`~.ops.note_op`: never
#: decomposed here, no layout to keep before they run, and either known to move and write nothing
#: (``_PLAIN``: :data:`~.ops.PLAIN_OPS`), in-place arithmetic on ``self`` (``_SELF``:
#: :data:`~.ops.WRITES_SELF`, its storage noted as written when ``self`` is a plain tensor), or
#: compute ops whose verdict :func:`~.ops.moves_data` keeps per :func:`~.ops.call_key` (input
#: dtypes and the scalars a decomposition may branch on; ``_DTYPED``: ``answers``, that verdict's
#: own dict; a call whose key it has not seen moving nothing goes to ``note_op``).
_FAST_OPS: dict[int, tuple[Any, Any, str, int, Any, dict]] = {}
_PLAIN, _SELF, _DTYPED = 0, 1, 2


def _note_fast(func: Any, entry: tuple[Any, ...], key: int) -> None:
    """Add ``func`` to :data:`_FAST_OPS` once its noting is known to depend on its entry only."""
    info = entry[1]
    if key in PLAIN_OPS:
        mode, answers = _PLAIN, {}
    elif key in WRITES_SELF:
        mode, answers = _SELF, {}
    elif not info.written and not info.is_copy and not func.is_view:
        mode, answers = _DTYPED, moves_data_answers(func)
    else:
        return
    _FAST_OPS[key] = (func, entry[3], info.name, mode, info, answers)


def _relaid(
    relaid: tuple[tuple[int, str], ...],
    args: tuple[Any, ...],
    kwargs: dict,
    pending: Pending,
    seen: dict[int, Snapshot],
) -> None:
    """Before an op that may rewrite the layout of the arguments ``relaid`` names (``t_``,
    ``resize_``, ``set_``, ``out=``) runs: their snapshots as they are (the call's inputs as it
    was called), and their earlier snapshots forgotten."""
    for position, name in relaid:
        for tensor in arrays_in(argument_value(args, kwargs, position, name), []):
            seen.pop(id(tensor), None)
            if pending.before is NO_SNAPSHOTS:
                pending.before = {}
            if id(tensor) not in pending.before:
                pending.before[id(tensor)] = Snapshot(tensor)


@contextmanager
def track_copies() -> Iterator[CopyLog]:
    """Record every tensor-producing call in the block: copy, in-place, view or compute.

    Re-entrant (nested blocks each get every event), safe with autograd, ``torch.no_grad()`` and
    ``torch.inference_mode()``, sees through wrapper subclasses to the tensors they wrap,
    device-agnostic (reads metadata only: never values, never a device sync).  When the block ends,
    normally or by an exception, both modes are gone and torch runs at full speed again.

    >>> import torch, stridewidget as sw
    >>> x = torch.arange(12.0).reshape(3, 4)
    >>> with sw.track_copies() as log:
    ...     y = x.t().reshape(-1)    # not viewable: reshape copies
    ...     c = x.contiguous()       # already contiguous: returns x itself
    >>> [(e.call, e.kind, e.bytes_copied) for e in log.events]
    [('torch.Tensor.t', 'view', 0), ('torch.Tensor.reshape', 'copy', 48), ('torch.Tensor.contiguous', 'view', 0)]
    >>> log.events[-1].returned_input, log.total_bytes
    (True, 48)

    Only the thread that opened the block is tracked: PyTorch's interception modes are per
    thread, so calls in a worker thread started inside the block are not recorded.  Track a
    worker with its own ``track_copies()`` inside the worker:

    >>> import threading
    >>> worker_logs = []
    >>> def worker(t):
    ...     with sw.track_copies() as worker_log:
    ...         t.t().contiguous()
    ...     worker_logs.append(worker_log)
    >>> with sw.track_copies() as main_log:
    ...     thread = threading.Thread(target=worker, args=(x,))
    ...     thread.start()
    ...     thread.join()
    >>> len(main_log.events), [e.kind for e in worker_logs[0].events]
    (0, ['view', 'copy'])

    A higher-order op (``torch.cond``, ``while_loop``, ``flex_attention``) is one event holding
    the ops its subgraphs ran (its eager kernel's own ops outside them are not seen); torch
    (2.13) cannot differentiate a ``torch.cond`` under any dispatch mode: run its backward
    outside the block.

    Under ``torch.func`` transforms (``vmap``, ``grad``, ``functionalize``) each event notes them
    in ``transforms``, and its layouts and bytes are those of the physical tensors.

    This package's own torch work in the block is not recorded (:mod:`stridewidget.unseen`):
    ``sw.audit`` (its kept state, its step, its report), a picture's reads of the values it
    draws, ``log.show``'s views.

    ``torch.utils.swap_tensors`` refuses a tensor a weak reference points to: inside the block
    (the log's), so ``module.to()`` with parameter swapping on fails there; a finished log holds
    none (:meth:`CopyLog.let_go`).
    """
    recorder = Recorder(CopyLog())
    with tracking(CallMode(recorder), OpMode(recorder)) as log:
        yield log


@contextmanager
def tracking(call_mode: CallMode, op_mode: OpMode) -> Iterator[CopyLog]:
    """Both modes on for the block (the audit passes its subclasses); the log they record into
    says it stopped recording when the block ends."""
    log = op_mode.recorder.log
    try:
        # hushed by stridewidget.unseen; woken, it forgets every snapshot kept for reuse: the
        # hushed work may have changed a layout unseen (t_, set_, .data =)
        woken = (call_mode.recorder.seen.clear, op_mode.recorder.seen.clear)
        with opened(Hushed((call_mode, op_mode), woken)), call_mode, op_mode:
            yield log
    finally:
        log.active = False
        log.let_go()  # torch.utils.swap_tensors refuses a tensor with a weak reference
        op_mode.recorder.line_cache[:] = [None, "", 0]  # no frame kept past the block
