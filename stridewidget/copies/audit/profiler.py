"""Copies a kernel makes inside itself, below every dispatch mode, found with a profiler.

The audit's op mode (:class:`~.recorders.AuditOps`) notes in :class:`Marked`, per thread and in
order, each op that can hide a copy (:func:`profiler_name`) and the tracker event it belongs to,
and turns collection on only while such an op runs (:data:`collect`).  One profiler session per
step (:func:`profiled`): the autograd profiler's legacy collector for a step on the CPU
(:class:`LegacySession`, allocations recorded), else ``torch.profiler`` with shapes
(:class:`KinetoSession`).  Its outermost events are paired with the marked ops, and each
outermost ``clone`` / ``_to_copy`` under one is a hidden copy (:func:`hidden_copies_kineto`,
:func:`hidden_copies_legacy`).
"""

from __future__ import annotations

import os
import platform
import sys
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import torch
from torch.profiler import ProfilerActivity

from ..._compat import (
    disable_profiler_legacy,
    enable_profiler_legacy,
    experimental_config,
    legacy_profiler_available,
    op_returns,
    profiler_running,
    record_function_fast,
    record_function_switch,
    schema_name,
)
from ..ops import COPY_OPS, MISSING, OpCache

__all__ = [
    "BACKWARD",
    "THREAD_MARK",
    "USER_PROFILER_NOTE",
    "KinetoSession",
    "LegacySession",
    "Marked",
    "collect",
    "copy_free_call",
    "hidden_copies_kineto",
    "hidden_copies_legacy",
    "profiled",
    "profiler_name",
]


class Marked(dict):
    """``searching``: a session collects (false while the user's own profiler runs: see
    :func:`profiled`).  Thread ident -> (event index, op name) of each op run with the profiler collecting, in the
    order that thread ran them.  Each is the next outermost event the profiler holds for its
    thread, which a thread's mark (``sw.audit:thread:<ident>``, recorded before its first such op)
    names: a label per op would be a profiler event of its own, a quarter of all events."""

    searching = True

    def first_in_thread(self) -> list[tuple[int, str]]:
        ident = threading.get_ident()
        collect(True)
        with record_function_fast(f"{THREAD_MARK}{ident}"):
            pass
        self[ident] = []
        return self[ident]


_PROFILER_NAMES = OpCache()


#: Ops whose every kernel is known to copy nothing, though their schemas say neither view nor
#: copy: ``_unsafe_view`` is a view that autograd does not track as one (its only kernel,
#: CompositeExplicitAutograd's, is ``view_impl``: it fails rather than copy), and ``empty`` /
#: ``empty_strided`` take no tensor at all (their kernels allocate only).  A fifth of the marked
#: ops of a transformer's step (``linear`` on a 3-d input ends in ``_unsafe_view``).
_COPY_FREE = frozenset(
    {"aten._unsafe_view.default", "aten.empty.memory_format", "aten.empty_strided.default"}
)


#: Ops whose CPU kernels copy no data into new storage (no ``clone`` / ``_to_copy``: what the
#: audit counts as a hidden copy; a ``sum`` of 32,768 or more elements on several threads does
#: ``copy_`` its partial sums into its own small buffers) when each tensor they take is a plain
#: strided CPU tensor, all of one dtype, float32 or float64, none with its conjugate or negative
#: bit, none of their
#: first tensors is given as a Python number and no ``dtype`` is asked for
#: (:func:`copy_free_call`): TensorIterator's loops read any strides as they are, and copy an
#: input only to bring it to another dtype (``add(float, double)``; ``x + 1.0``, whose number
#: the kernel wraps as a double tensor; ``sum`` of int32 or of an expanded bfloat16; ``tanh`` of
#: an integer tensor: each runs ``_to_copy`` inside).  ``mean`` (a sum copied into its result),
#: ``bernoulli_`` (on Intel with MKL, a non-contiguous tensor is filled from an int buffer by
#: ``copy_``) are not here; ``mm``, ``bmm`` and ``addmm`` are when both their matrices are ready
#: for BLAS as they are (:func:`_blas_ready`; ``addmm``'s ``copy_`` of its bias writes into its
#: own new result, no new storage, which the audit never counts),
#: else they clone one, and layer and batch norm when their tensors are laid out as their
#: kernels read them (:data:`_LAYOUT_RULES`), else they copy them.  Three fifths of the ops once marked in a ResNet18's step, seven tenths in a BERT's.
#: Proof: ``tests/test_audit_copy_free_float.py`` runs each over layouts and dtypes under the
#: profiler.
_COPY_FREE_IN_FLOAT = {  # op -> how many tensors it takes first (a Python number there is copied)
    "aten.add.Tensor": 2,
    "aten.add_.Tensor": 2,
    "aten.mul.Tensor": 2,
    "aten.relu.default": 1,
    "aten.relu_.default": 1,
    "aten.threshold_backward.default": 2,
    "aten.gelu.default": 1,
    "aten.gelu_backward.default": 2,
    "aten.tanh.default": 1,
    "aten.tanh_backward.default": 2,
    "aten.sum.dim_IntList": 1,
    "aten.empty_like.default": 1,
    "aten.ones_like.default": 1,
    "aten.mm.default": 2,  # and each operand ready for BLAS as it is (:func:`_blas_ready`)
    "aten.bmm.default": 2,
    "aten.addmm.default": 3,  # its bias, then its two matrices (:func:`_matrices_blas_ready`)
    "aten.native_layer_norm.default": 1,  # and each tensor contiguous (:func:`_contiguous`)
    "aten.native_layer_norm_backward.default": 1,
    "aten.native_batch_norm.default": 1,  # and all in one memory format (:func:`_one_format`)
    "aten.native_batch_norm_backward.default": 1,
}
_FLOATS = (torch.float32, torch.float64)
_PLAIN = (torch.Tensor, torch.nn.Parameter)
# op -> (its _COPY_FREE_IN_FLOAT count, 0 if not in it; the layouts it needs, from _LAYOUT_RULES)
_IN_FLOAT_TENSORS: dict[Any, tuple[int, Any]] = {}
#: oneDNN's and ACL's float32 matmuls (ARM; a lower float32 matmul precision) are other kernels.
_X86 = platform.machine().lower() in ("x86_64", "amd64")
# oneDNN's matmul settings (a torch without them: unknown, so matmuls stay marked)
_MKLDNN_MATMUL = getattr(torch.backends.mkldnn, "matmul", None)


def copy_free_call(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """Whether this call of ``func`` copies nothing inside its kernel: ``func`` is one of
    :data:`_COPY_FREE_IN_FLOAT` and its inputs are as that says (a Python number for a tensor,
    a tensor subclass, another device, layout or dtype, or a ``dtype`` argument: it may copy,
    so it is marked)."""
    listed = _IN_FLOAT_TENSORS.get(func)
    if listed is None:
        name = str(func)
        listed = _IN_FLOAT_TENSORS[func] = (
            _COPY_FREE_IN_FLOAT.get(name, 0),
            _LAYOUT_RULES.get(name),
        )
    tensors, layouts = listed
    if not tensors or len(args) < tensors or kwargs.get("dtype") is not None:
        return False
    for value in args[:tensors]:
        if not isinstance(value, torch.Tensor):  # a Python number: wrapped in a tensor, converted
            return False
    dtype = None
    for value in (*args, *kwargs.values()):
        if isinstance(value, torch.Tensor):
            if (
                type(value) not in _PLAIN
                or value.device.type != "cpu"
                or value.layout != torch.strided
                or value.is_conj()
                or value.is_neg()
            ):
                return False
            if dtype is None:
                if value.dtype not in _FLOATS:
                    return False
                dtype = value.dtype
            elif value.dtype != dtype:
                return False
    return layouts is None or layouts(args)


def _blas_ready(args: tuple[Any, ...], dims: int = 2) -> bool:
    """Does ``mm``'s CPU kernel (``addmm_impl_cpu_``) hand both matrices to BLAS as they are?  It
    does one whose rows (or columns) are contiguous and a leading dimension apart at least their
    length; any other it clones.  ``bmm``'s (``dims`` 3) does so with each matrix of a batch,
    whatever the batch's stride.  Left to the profiler: a size of 1 (its stride may be anything),
    another CPU than x86 (ARM's ACL matmuls) and a float32 matmul precision other than the
    highest (oneDNN's bf16 / tf32 matmuls)."""
    if not _X86 or not _ieee_matmuls():
        return False
    for matrix in args[:2]:
        if matrix.dim() != dims:
            return False
        rows, columns = matrix.shape[-2:]
        row_stride, column_stride = matrix.stride()[-2:]
        if rows < 2 or columns < 2:
            return False
        if not (
            (column_stride == 1 and row_stride >= columns)
            or (row_stride == 1 and column_stride >= rows)
        ):
            return False
    return True


def _ieee_matmuls() -> bool:
    """Are the CPU's float32 matmuls IEEE ones (no oneDNN bf16 / tf32)?  Once oneDNN's own setting
    was set, torch refuses to say the overall precision (a ``RuntimeError``): then not known."""
    try:
        highest = torch.get_float32_matmul_precision() == "highest"
    except RuntimeError:
        return False
    return highest and getattr(_MKLDNN_MATMUL, "fp32_precision", "unknown") in ("none", "ieee")


def _batches_blas_ready(args: tuple[Any, ...]) -> bool:
    """:func:`_blas_ready` for ``bmm``."""
    return _blas_ready(args, 3)


def _matrices_blas_ready(args: tuple[Any, ...]) -> bool:
    """:func:`_blas_ready` for ``addmm``'s two matrices (after its bias)."""
    return _blas_ready(args[1:3])


def _contiguous(args: tuple[Any, ...]) -> bool:
    """Layer norm's CPU kernels (forward and backward) read each tensor as contiguous, and make
    it so (``expect_contiguous``: a ``clone``) where it is not."""
    return all(t.is_contiguous() for t in args if isinstance(t, torch.Tensor))


def _one_format(args: tuple[Any, ...]) -> bool:
    """Batch norm's CPU kernels (forward and backward) run on a tensor contiguous in the input's
    memory format as it is; an input of other strides is copied (a gradient in another format
    than the input's is left to the profiler too).  So: every tensor contiguous, or else every
    one of 2 or more dimensions 4-d and channels-last and the others contiguous."""
    tensors = [t for t in args if isinstance(t, torch.Tensor)]
    if all(t.is_contiguous() for t in tensors):
        return True
    return all(
        t.is_contiguous()
        if t.dim() < 2
        else t.dim() == 4 and t.is_contiguous(memory_format=torch.channels_last)
        for t in tensors
    )


#: The ops of :data:`_COPY_FREE_IN_FLOAT` that also need their tensors in certain layouts.
_LAYOUT_RULES = {
    "aten.mm.default": _blas_ready,
    "aten.bmm.default": _batches_blas_ready,
    "aten.addmm.default": _matrices_blas_ready,
    "aten.native_layer_norm.default": _contiguous,
    "aten.native_layer_norm_backward.default": _contiguous,
    "aten.native_batch_norm.default": _one_format,
    "aten.native_batch_norm_backward.default": _one_format,
}


def profiler_name(func: Any) -> str | None:
    """The profiler's name of ``func`` (``aten::addmm``) when a kernel of it can copy data into
    new storage that no dispatch mode sees, else ``None``: a view (every result aliases an input:
    no kernel runs), a copy op itself (the copy it makes is the tracker's own event) or one of
    :data:`_COPY_FREE`."""
    name = _PROFILER_NAMES.lookup(func)
    if name is not MISSING:
        return name
    returns = op_returns(func)
    is_view = bool(returns) and all(
        r.alias_info is not None and not r.alias_info.is_write for r in returns
    )
    can_hide = (
        not is_view and func.overloadpacket.__name__ not in COPY_OPS and str(func) not in _COPY_FREE
    )
    return _PROFILER_NAMES.store(func, schema_name(func) if can_hide else None)


# Turns this thread's ``RecordFunction`` events, which the profiler collects, on or off: a
# thread-local flag (the profiler's own ``toggle_collection_dynamic`` re-registers its global
# callbacks, which costs ~20-150 µs a call).  The builtin itself: it runs twice per op.
collect = record_function_switch()


THREAD_MARK = "sw.audit:thread:"
BACKWARD = 1 << 40  # added to backward event indices (one profile, two logs)
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


def hidden_copies_kineto(
    events: Iterable[Any], marked: Marked
) -> dict[int, list[tuple[str, str, int]]]:
    """Event index -> (op that hid it, copy op, bytes) for copies made inside a non-copy op, from
    the events of ``torch.profiler`` (:class:`KinetoSession`).

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
        if name in relevant or name.startswith(THREAD_MARK):
            by_thread.setdefault(event.start_thread_id(), []).append(
                (event.start_ns(), -event.end_ns(), name, event)
            )
    found: dict[int, list[tuple[str, str, int]]] = {}
    for thread_events in by_thread.values():
        mark = next((item for item in thread_events if item[2].startswith(THREAD_MARK)), None)
        if mark is None:  # a thread that ran no op that can hide a copy
            continue
        pairing = _Pairing(marked[int(mark[2][len(THREAD_MARK) :])])
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


def hidden_copies_legacy(
    records: list[list[Any]], marked: Marked
) -> dict[int, list[tuple[str, str, int]]]:
    """:func:`hidden_copies_kineto` from the legacy profiler's records (:class:`LegacySession`):
    a list of events per thread in the order they happened, each op a ``push`` and a ``pop``
    (nesting needs no timestamps), each allocation a ``memory_alloc`` with its size.  A hidden
    copy's bytes are those of the first allocation made inside it: its result's buffer, allocated
    before any data is copied into it (``clone`` = ``empty_like`` + ``copy_``)."""
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
                elif name.startswith(THREAD_MARK):  # before it: not the audit's
                    pairing = _Pairing(marked[int(name[len(THREAD_MARK) :])])
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


class KinetoSession:
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

    def hidden_copies(self, marked: Marked) -> dict[int, list[tuple[str, str, int]]]:
        return hidden_copies_kineto(self.profiler.profiler.kineto_results.events(), marked)


class LegacySession:
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
            experimental_config(),
        )
        enable_profiler_legacy(config)

    def stop(self) -> None:
        self.records = disable_profiler_legacy()

    def hidden_copies(self, marked: Marked) -> dict[int, list[tuple[str, str, int]]]:
        return hidden_copies_legacy(self.records, marked)


def _legacy_profiler_usable(devices: set[torch.device]) -> bool:
    """The legacy collector serves a step whose tensors are all on the CPU, while this torch
    still has it (``torch.autograd.profiler_legacy`` is deprecated) and no profiler runs already
    (:func:`profiled` starts none then); else ``torch.profiler``."""
    return (
        all(device.type == "cpu" for device in devices)
        and legacy_profiler_available()
        and not profiler_running()
    )


#: What a report says when the user's own profiler was running (see :func:`profiled`).
USER_PROFILER_NOTE = (
    "a torch.profiler session of yours was running, which a session of the audit's would have "
    "ended: copies made inside kernels (an addmm cloning a gapped operand) were not searched "
    "for, and your profile recorded the audited step's ops; audit outside it for them"
)


class _NoSession:
    """Stands in for a session while the user's own profiler runs: finds no hidden copy."""

    def hidden_copies(self, marked: Marked) -> dict[int, list[tuple[str, str, int]]]:
        return {}


@contextmanager
def profiled(
    devices: set[torch.device], marked: Marked
) -> Iterator[KinetoSession | LegacySession | _NoSession]:
    """One profiler session for a step on ``devices``, collecting only while an op that can hide
    a copy runs: the legacy collector where it serves (:func:`_legacy_profiler_usable`), else
    ``torch.profiler``.  Its ``hidden_copies(marked)`` reads what it found.

    While a profiler of the user's runs, none: torch keeps one profiling session per process,
    so starting one ends the user's and throws their events away.  Then ``marked.searching`` is
    false (the op mode neither marks ops nor switches collection) and nothing is found inside
    kernels, which :data:`USER_PROFILER_NOTE` says."""
    if profiler_running():
        marked.searching = False
        yield _NoSession()
        return
    session = LegacySession() if _legacy_profiler_usable(devices) else KinetoSession()
    session.start()
    collect(False)  # on only while an op that can hide a copy runs (AuditOps)
    try:
        yield session
    finally:
        collect(True)  # the default, which other profilers rely on
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
