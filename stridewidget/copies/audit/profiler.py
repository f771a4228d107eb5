"""Copies a kernel makes inside itself, below every dispatch mode, found with a profiler.

The audit's op mode (:class:`~.recorders.AuditOps`) notes in :class:`Marked`, per thread and in
order, each op that can hide a copy (:func:`profiler_name`) and the tracker event it belongs to,
and turns collection on only while such an op runs (:data:`collect`).  One profiler session per
step (:func:`profiled`): the autograd profiler's legacy collector for a step on the CPU
(:class:`LegacySession`, shapes and allocations recorded), else ``torch.profiler`` with shapes,
dtypes and allocations (:class:`KinetoSession`).  Its outermost events are paired with the marked
ops, and what moved data into new storage under one is a hidden copy (``hidden.py``:
:func:`hidden_copies_kineto`, :func:`hidden_copies_legacy`).
"""

from __future__ import annotations

import os
import platform
import sys
import threading
from collections.abc import Iterator
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
from .hidden import (  # noqa: F401  (_SCALAR_TYPE_ITEMSIZE: read by the tests from here)
    _SCALAR_TYPE_ITEMSIZE,
    THREAD_MARK,
    hidden_copies_kineto,
    hidden_copies_legacy,
)

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

    def first_in_thread(self) -> list[tuple[Any, ...]]:
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


BACKWARD = 1 << 40  # added to backward event indices (one profile, two logs)


class KinetoSession:
    """``torch.profiler`` (CPU activity, shapes, dtypes and allocations recorded): a hidden
    ``clone`` / ``_to_copy``'s bytes are its shape times its dtype's size, on any device; another
    copy's, its buffer's allocation (exact on the CPU; CUDA's caching allocator reports its
    rounded block sizes).  ~12 µs per recorded event here."""

    def __init__(self) -> None:
        from torch.profiler import profile

        self.profiler = profile(
            activities=[ProfilerActivity.CPU], record_shapes=True, profile_memory=True
        )

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
    ``torch.autograd.profiler_legacy`` wraps), shapes and allocations recorded: per collected op
    several times cheaper than ``torch.profiler`` with shapes (``benchmarks/bench_profilers.py``).
    It records no dtypes; a hidden copy's bytes are the size of the buffer it allocated, which the CPU
    allocator reports exactly (CUDA's caching allocator reports its rounded block sizes), so it
    serves steps that run on the CPU only."""

    records: list[list[Any]]

    def start(self) -> None:
        config = torch.autograd.ProfilerConfig(
            torch.autograd.ProfilerState.CPU,
            True,  # shapes
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
