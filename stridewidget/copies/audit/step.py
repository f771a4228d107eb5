"""One audited step of ``sw.audit``: every copy a training step of a model makes, and where from.

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
  collector with shapes and allocations recorded (:class:`~.profiler.LegacySession`, several
  times cheaper per event; a hidden copy's bytes are its buffer's), else ``torch.profiler`` with
  shapes, dtypes and allocations (:class:`~.profiler.KinetoSession`); both are tested to give the
  same report.  The tracker's op mode, subclassed, notes in each thread which ATen op ran for
  which tracker event, in order, and the profiler's outermost events are paired with them.  What
  moved data into new storage under a non-copy op becomes a copy with ``hidden_in`` naming that
  op (:mod:`~.hidden`): each outermost op of ``COPY_OPS`` that returns new storage (``clone``,
  ``_to_copy``, ``index_select``, ``cat`` ...), and a ``copy_`` filling a buffer its calling op
  allocated from that op's one input (``sort``).  Not counted: reorders a library makes without
  an ATen op (oneDNN's inside a CPU convolution) or with loops of the kernel's own.

The cost is per op, plus one profiler session per step that collects only while an op that can
hide a copy runs (not a view, not a copy op); an event that moved no data and wrote nothing is
recorded without the tracker's aliasing reads (it cannot be a copy).
``benchmarks/bench_audit.py`` measures the cost, and with ``--breakdown`` which layer (Python
interception, the tracker, the audit, the profiler) costs what.
Gradients are accumulated into the parameters' ``.grad`` from ``None``, as a training step's
``loss.backward()`` after ``zero_grad()`` does (``AccumulateGrad`` copies a gradient without its
parameter's layout), and each ``.grad`` is put back as found (:func:`gradients`); everything else runs as ``model(*inputs)`` would, and the model's buffers (a
training-mode BatchNorm's running statistics) and torch's RNG states are put back afterwards
(:mod:`stridewidget.copies.audit.guard`).  A copy made while activation checkpointing re-runs a
forward is reported at the line re-run, marked as a recompute; a copy torch makes for the model
(inside ``nn.Conv2d``) at the model's own line, with torch's line as ``AuditCopy.detail``.

The audited step runs the plain step's kernels, in its order (``tests/test_audit_zoo.py`` checks
the profiler's op lists of both), but for one rule of torch's own: while any dispatch mode is
on, ``at::isTensorSubclassLike`` is true of every tensor, so ATen and autograd take their
subclass-safe branches (:data:`UNDER_A_MODE`): the autograd engine sums two gradients of one
tensor out of place (``add`` for ``add_``), ``reshape`` of a viewable tensor is a ``view``
(not ``_reshape_alias``), and autograd saves an op's own output for backward (``sigmoid``,
``tanh``, an LSTM layer) with a ``detach`` and unpacks it with another.  None moves data.
Two do: ``AccumulateGrad`` clones a sparse gradient under the modes that the plain step
shares, a copy not reported (:data:`SPARSE_ACCUMULATED`); and the gradient of an advanced
index (``IndexBackward0``) is put into its zero buffer by ``index_put`` (a clone of the buffer,
then ``index_put_``) where the plain step runs ``_index_put_impl_`` on the buffer itself: the
clone, of a buffer the step allocated blank, is not reported (``UNDER_A_MODE["expanded"]``).
The backward of ``sort``, ``topk``, ``max(dim)`` and the other value-selecting reductions, of
``masked_select`` and of ``max()`` of all elements copies under the modes where the plain step
writes in place: not reported (:data:`~.recorders.FUNCTIONAL_UNDER_A_MODE`); nor is the
conversion of ``ctc_loss``'s target lengths that only its subclass-safe branch makes
(:func:`~.recorders.without_ctc_conversion`).  The backward of ``prod`` and ``cumprod`` is
another formula under the modes (:data:`~.recorders.OTHER_FORMULA_UNDER_A_MODE`): its copies are
not reported, and the report's note says those nodes were not measured.  One check is the plain
step's alone: ``torch.quantile`` checks its ``q`` lies in [0, 1] only without a mode, and
``q >= 0``, ``q <= 1`` and ``all`` there convert ``q`` and copy a bool (9 B for a float32
input): bytes the audit cannot see.
A user's ``torch.profiler`` open around ``sw.audit`` is left running: the step then runs under
no session of the audit's (torch keeps one per process), and copies inside kernels are not
searched for (:func:`.profiler.profiled`).

Where each event comes from is :mod:`.origins`; the tracker's modes and recorders, subclassed,
are :mod:`.recorders`; the profiler sessions and their pairing :mod:`.profiler`; the report
:mod:`.report`, and the measured fixes :mod:`.suggest`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any

import torch

from ..._compat import (
    disable_torch_function,
    fsdp_parameter_pairs,
    post_accumulate_grad_hooked,
    storage_identity,
)
from ...gcpause import cyclic_gc_paused
from ..format import short_call
from ..log import CopyEvent, CopyLog
from ..ops import COPY_OPS
from ..tracker import CallMode, tracking
from . import profiler
from .found import AuditCopy
from .guard import check_devices, check_model, differentiable, grad_targets
from .origins import NodeOrigins, Timeline, line_text, modules_followed
from .profiler import BACKWARD, Marked
from .recorders import (
    OTHER_FORMULA_UNDER_A_MODE,
    AuditCalls,
    AuditOps,
    AuditRecorder,
    BackwardRecorder,
    without_ctc_conversion,
)

__all__ = [
    "REENTRANT_CHECKPOINT",
    "SPARSE_ACCUMULATED",
    "UNDER_A_MODE",
    "audited_step",
    "gradients",
    "run_step",
]

#: How the audited step's ATen ops differ from the plain step's (see the module docstring):
#: the plain op -> the one run instead, the ops run for one plain op, and the op only the
#: audited step adds.
UNDER_A_MODE = {
    "replaced": {"aten::add_": "aten::add", "aten::_reshape_alias": "aten::view"},
    # the audited ops -> the plain step's op they stand for
    "expanded": {
        (
            "aten::index_put",
            "aten::clone",
            "aten::empty_strided",
            "aten::copy_",
            "aten::index_put_",
            "aten::_index_put_impl_",
        ): "aten::_index_put_impl_"
    },
    "added": "aten::detach",
}


def run_step(
    model: torch.nn.Module,
    inputs: tuple[Any, ...],
    backward: bool,
    loss_fn: Callable[[Any], torch.Tensor] | None,
    kwargs: dict[str, Any] | None = None,
) -> tuple[Any, tuple[torch.Tensor, ...]]:
    """One plain step (forward, and gradients w.r.t. the parameters, or the inputs that require
    grad for a model without trainable ones): what the audit times."""
    output = model(*inputs, **(kwargs or {}))
    if not backward:
        return output, ()
    roots = differentiable(output, loss_fn)
    targets = grad_targets(model, (inputs, kwargs))
    return output, gradients(roots, targets, fsdp_parameter_pairs(model))


def gradients(
    roots: list[torch.Tensor],
    params: list[torch.Tensor],
    stand_ins: Iterable[tuple[torch.Tensor, torch.Tensor]] = (),
) -> tuple[Any, ...]:
    """The gradients of ``params`` as a training step's ``loss.backward()`` leaves them in a
    ``.grad`` that was ``None`` (``zero_grad()``'s default): through each parameter's
    ``AccumulateGrad``, which copies a gradient that does not have its parameter's layout (a
    transposed weight, a channels_last one).  Each ``.grad`` is put back as it was found.  A
    parameter with a post-accumulate-grad hook (an optimizer stepping in backward) gets no
    accumulation, so that the hook does not run: ``torch.autograd.grad`` instead.
    ``stand_ins`` holds ``(parameter, leaf)`` for a parameter the graph does not hold, whose
    gradient autograd accumulates into another leaf: FSDP2's sharded parameter, which a module
    holds between its forward and backward, and the unsharded one forward computed with
    (:func:`~stridewidget._compat.fsdp_parameter_pairs`).  Backward runs to that leaf, as
    ``loss.backward()`` does (asked for the sharded one, autograd finds no path to it and runs
    no node: only the hooks on the output, FSDP2's first re-gather), FSDP2's hooks write the
    sharded ``.grad``, and both are put back.

    >>> import torch
    >>> w = torch.nn.Parameter(torch.randn(3, 2).t())   # a transposed parameter
    >>> (grad,) = gradients([(w * torch.ones(2, 3)).sum()], [w])
    >>> grad.stride() == w.stride(), w.grad is None
    (True, True)
    """
    seeds = [torch.ones_like(r) for r in roots]
    leaf_of = {id(p): leaf for p, leaf in stand_ins}
    inputs = [leaf_of.get(id(p), p) for p in params] if leaf_of else params
    if any(post_accumulate_grad_hooked(p) for p in inputs):
        return torch.autograd.grad(roots, inputs, seeds, allow_unused=True)
    held = list({id(t): t for t in (*params, *inputs)}.values()) if leaf_of else params
    found = [t.grad for t in held]
    try:
        for t in held:
            t.grad = None
        torch.autograd.backward(roots, seeds, inputs=inputs)
        return tuple(p.grad for p in params)
    finally:
        for t, grad in zip(held, found):
            t.grad = grad


@cyclic_gc_paused
def audited_step(
    model: torch.nn.Module,
    inputs: tuple[Any, ...],
    backward: bool,
    loss_fn: Callable[[Any], torch.Tensor] | None,
    kwargs: dict[str, Any] | None = None,
    writes: list[tuple[str, str, int]] | None = None,
    unmeasured: list[str] | None = None,
) -> list[AuditCopy]:
    """Run one step of ``model`` (forward, and backward unless ``backward`` is false) under the
    audit's modes and one profiler session; the copies it made, forward ones first.  What
    :func:`~stridewidget.copies.audit.report.audit` reports and a suggestion re-audits.
    ``writes``, when given, gets the data the step wrote in place into storage that already
    held data (no copy: ``(phase, call or autograd node, bytes)``, see :func:`_in_place_writes`);
    ``unmeasured`` the autograd nodes whose copies are not the plain step's
    (:data:`~.recorders.OTHER_FORMULA_UNDER_A_MODE`)."""
    forward_recorder = AuditRecorder(CopyLog())
    origins = NodeOrigins(forward_recorder.log)
    marked = Marked()
    # One profiler session for the whole step: starting and reading one costs tens of ms.
    with profiler.profiled(check_devices(model, inputs), marked) as profile:
        output = _forward(model, inputs, kwargs or {}, forward_recorder, origins, marked)
        if backward:
            check_model(
                model, backward, (inputs, kwargs)
            )  # before the roots: a frozen model has none
            targets = grad_targets(model, (inputs, kwargs))
            stand_ins = fsdp_parameter_pairs(model)  # made by forward's all-gathers
            backward_recorder = _backward(
                targets, output, loss_fn, forward_recorder, origins, marked, stand_ins
            )
    hidden = profile.hidden_copies(marked)
    if writes is not None:
        writes.extend(_in_place_writes(forward_recorder.log.events, [], "forward"))
        if backward:
            events, nodes = backward_recorder.log.events, backward_recorder.nodes
            writes.extend(_in_place_writes(events, nodes, "backward"))
    forward_modules = origins.timeline.owners()
    copies = _forward_copies(forward_recorder, forward_modules, origins, hidden)
    if backward:
        copies.extend(
            _backward_copies(
                model, backward_recorder, forward_recorder.log, forward_modules, origins, hidden
            )
        )
        if unmeasured is not None:
            unmeasured.extend(backward_recorder.unmeasured)
    return copies


def _in_place_writes(
    events: list[CopyEvent], nodes: list[Any], phase: str
) -> list[tuple[str, str, int]]:
    """The events that moved data in place into storage that already held data (in backward,
    ``CopySlices`` writing the gradient of an in-place op on a view back into its slice of a
    gradient it already wrote): ``(phase, call or autograd node, bytes)``.  They make no new
    storage, so they are no copy in the report's rows; the report's note counts them."""
    found = []
    for position, event in enumerate(events):
        if event.kind == "in-place" and event.bytes_copied:
            node = nodes[position] if position < len(nodes) else None  # as the log: in order
            call = type(node).__name__ if node is not None else short_call(event.call)
            found.append((phase, call, event.bytes_copied))
    return found


def _forward(
    model: torch.nn.Module,
    inputs: tuple[Any, ...],
    kwargs: dict[str, Any],
    recorder: AuditRecorder,
    origins: NodeOrigins,
    marked: Marked,
) -> Any:
    """The model's forward, tracked, with the module running at each event noted in a new
    ``origins.timeline``; its output."""
    with tracking(AuditCalls(recorder, origins), AuditOps(recorder, 0, marked)) as forward_log:
        forward_timeline = origins.timeline = Timeline(forward_log, "")
        with modules_followed(model, forward_timeline):
            try:
                return model(*inputs, **kwargs)
            except Exception as error:
                raise RuntimeError(
                    f"sw.audit: model(*inputs) raised {type(error).__name__}: {error} — "
                    "the audit has nothing to report; call model(*inputs) directly to debug it"
                ) from error


def _backward(
    params: list[torch.Tensor],
    output: Any,
    loss_fn: Callable[[Any], torch.Tensor] | None,
    forward_recorder: AuditRecorder,
    origins: NodeOrigins,
    marked: Marked,
    stand_ins: Iterable[tuple[torch.Tensor, torch.Tensor]] = (),
) -> BackwardRecorder:
    """The gradients of ``params`` (the trainable parameters, else the inputs that require grad:
    :func:`~.guard.grad_targets`), each backward op tracked alone; the recorder holding the
    backward log and each event's autograd node.  ``stand_ins``: as in :func:`gradients`."""
    try:
        roots = differentiable(output, loss_fn)
    except TypeError:
        # torch.cond under a dispatch mode records no gradient for the tensors its branches
        # capture (a closure's weight): the output needs no grad there though it does in the
        # plain step — the model's fault it is not
        if any(e.call.rsplit(".", 1)[-1] == "cond" for e in forward_recorder.log.events):
            raise RuntimeError(COND_BACKWARD.format(torch.__version__.split("+")[0])) from None
        raise
    # else, with no path to a parameter, silently no gradient
    if _in_graph(roots, "CheckpointFunctionBackward"):
        raise RuntimeError(REENTRANT_CHECKPOINT) from None
    origins.resolve(roots)
    backward_recorder = BackwardRecorder(CopyLog(), forward_recorder.blank)
    backward_recorder.outermost = gradients.__code__  # a recompute runs inside it
    # No user-level calls in backward: the tracker's own call mode.  Dense ones as the
    # output gradient: the gradient of sum(), without the stride-0 expand that sum()'s
    # backward would feed the model (an artefact of the loss, not of the model).
    # Torch-function handling is off around the call: else the tracker would see one
    # user-level call (autograd.grad) holding every backward op, instead of each op alone.
    with (
        tracking(CallMode(backward_recorder), AuditOps(backward_recorder, BACKWARD, marked)),
        disable_torch_function(),
    ):
        try:
            grads = gradients(roots, params, stand_ins)
        except Exception as error:
            if str(error).startswith("sw.audit"):  # the audit's own words
                raise
            if _in_graph(roots, "CondAutogradOpBackward"):
                raise RuntimeError(COND_BACKWARD.format(torch.__version__.split("+")[0])) from error
            raise RuntimeError(
                f"sw.audit: backward raised {type(error).__name__}: {error} — the audit has "
                "nothing to report; call loss.backward() on model(*inputs)'s output directly to "
                "debug it"
            ) from error
    backward_recorder.shared_sparse = {  # type: ignore[attr-defined]
        id(p)
        for p, grad in zip(params, grads)
        if grad is not None and grad.layout == torch.sparse_coo
    }
    return backward_recorder


#: Why a sparse gradient's ``AccumulateGrad`` clone is not reported: into a ``.grad`` that is
#: ``None``, the plain step's ``AccumulateGrad`` makes a new COO tensor over the gradient's own
#: indices and values (no copy; torch's "stealable sparse new_grad", when nothing else holds
#: them, as for every sparse gradient torch's backward makes), while under the audit's modes it
#: clones them: the copy is the audit's, not the step's.
SPARSE_ACCUMULATED = (
    "AccumulateGrad of a sparse COO gradient into a .grad that is None shares its indices and "
    "values in the plain step, and clones them only under the audit's modes: not reported"
)

#: The error for a model that uses reentrant activation checkpointing.
REENTRANT_CHECKPOINT = (
    "sw.audit: the model uses torch.utils.checkpoint(..., use_reentrant=True), whose backward "
    "reaches the parameters inside it only through a backward() that writes every .grad (the "
    "audit's backward(inputs=parameters) leaves .grad alone and would get no gradient); pass "
    "use_reentrant=False (torch's recommended setting; the audit then reports each recomputed "
    "copy at its line), or backward=False to audit the forward only"
)


#: cond's backward traces its branches (``materialize_as_graph``), which fails under any
#: dispatch mode (torch 2.13: a bare ``TorchDispatchMode`` gets no rule for cond).
COND_BACKWARD = (
    "sw.audit: the model uses torch.cond, whose backward torch {} cannot run under a dispatch "
    "mode (the audit sees each op through one), so its backward cannot be audited; pass "
    "backward=False to audit the forward only, or audit torch.compile(model), whose compiled "
    "program holds cond's backward"
)


def _in_graph(roots: list[torch.Tensor], name: str) -> bool:
    """Is an autograd node of type ``name`` (a reentrant checkpoint's
    ``CheckpointFunctionBackward``, cond's ``CondAutogradOpBackward``) in the graph of
    ``roots``?"""
    seen: set[int] = set()
    nodes = [r.grad_fn for r in roots if r.grad_fn is not None]
    while nodes:
        node = nodes.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if type(node).__name__ == name:
            return True
        nodes.extend(n for n, _ in node.next_functions if n is not None)
    return False


def _fsdp_owners(model: torch.nn.Module) -> dict[int, str]:
    """FSDP2's storages -> the module whose parameter they hold: each shard (which
    ``fsdp.all_gather_copy_in`` reads) and each unsharded parameter (which
    ``fsdp.split_with_sizes_copy`` writes).  A copy-in FSDP2 prefetches runs in the backward of
    the layer after; it is put at the module whose data it moves.  Both live through the step,
    so no other storage the step made can have had one's identity."""
    names = {id(p): name for name, p in model.named_parameters()}
    owners: dict[int, str] = {}
    for sharded, unsharded in fsdp_parameter_pairs(model):
        name = names.get(id(sharded), names.get(id(unsharded)))
        if name is None:
            continue
        local = sharded.to_local() if hasattr(sharded, "to_local") else sharded
        for tensor in (local, unsharded):
            identity = storage_identity(tensor)
            if identity is not None:
                owners[identity] = name.rpartition(".")[0]
    return owners


def _owner(event: CopyEvent, owners: dict[int, str]) -> str | None:
    """The module whose FSDP2 storages ``event``'s inputs hold (:func:`_fsdp_owners`); the
    innermost module holding them all when they are several modules' (a root-only
    ``fully_shard`` gathers every layer's parameters at once: the model's)."""
    found = {
        owners[extent.cdata]
        for snapshot in event._inputs
        for extent in snapshot.extents
        if extent.cdata in owners
    }
    if not found:
        return None
    paths = [name.split(".") if name else [] for name in found]
    common = []
    for parts in zip(*paths):
        if len(set(parts)) > 1:
            break
        common.append(parts[0])
    return ".".join(common)


def _forward_copies(
    recorder: AuditRecorder,
    forward_modules: list[Any],
    origins: NodeOrigins,
    hidden: dict[int, list[tuple[str, str, int]]],
) -> list[AuditCopy]:
    """The forward events that copied or hid copies in their kernels, as copies."""
    copies = []
    for event in recorder.log.events:
        inside = hidden.get(event.index, ())
        if inside and "aten._ctc_loss" in event.ops:
            inside = without_ctc_conversion(inside)
        if event.kind != "copy" and not inside:
            continue
        module, where = forward_modules[event.index], origins.where(event)
        in_place = event.wrote_input and event.index not in recorder.into_blank
        scalar = event.index in recorder.wrapped_scalars
        found = _copies_of(
            "forward", module, where, event, inside, in_place=in_place, scalar=scalar
        )
        copies.extend(_detailed(found, origins.detail(event)))
    return copies


def _backward_copies(
    model: torch.nn.Module,
    backward_recorder: BackwardRecorder,
    forward_log: CopyLog,
    forward_modules: list[Any],
    origins: NodeOrigins,
    hidden: dict[int, list[tuple[str, str, int]]],
) -> list[AuditCopy]:
    """The backward events that copied or hid copies, each at the forward call whose gradient
    made it (else its autograd node), or at the line an activation checkpoint re-ran; FSDP2's
    copy-in and copy-out in the module whose parameters they move."""
    names = {p: name for name, p in model.named_parameters()}
    modules = {m: name for name, m in model.named_modules()}
    owners = _fsdp_owners(model)
    shared_sparse = getattr(backward_recorder, "shared_sparse", set())
    # the forward event first made at each source line: a recomputed line's module
    forward_at_line: dict[tuple[str, int] | None, int] = {}
    for index, location in origins.location.items():
        forward_at_line.setdefault(location, index)
    # the forward event first made in each module: a recompute of torch's own module has no
    # user frame on its stack, and the user's line is where forward ran that module
    forward_in_module: dict[str, int] = {}
    for index, owner in enumerate(forward_modules):
        forward_in_module.setdefault(owner, index)
    copies = []
    under_a_mode = backward_recorder.under_a_mode
    for event, node in zip(backward_recorder.log.events, backward_recorder.nodes):
        inside = hidden.get(BACKWARD + event.index, ())
        if type(node).__name__ in OTHER_FORMULA_UNDER_A_MODE:  # not the plain step's copies
            if event.kind == "copy" or inside:
                backward_recorder.unmeasured.setdefault(type(node).__name__, None)
            continue
        mode_copy = under_a_mode.get(event.index)
        inside = _plain_steps(inside, mode_copy, node, origins, forward_log)
        if (event.kind != "copy" or mode_copy == "own") and not inside:
            continue
        if (
            shared_sparse
            and event.ops == ("aten.clone",)
            and id(getattr(node, "variable", None)) in shared_sparse
        ):
            continue  # SPARSE_ACCUMULATED: the plain step makes no such copy
        origin = origins.of_node.get(node) if node is not None else None
        if origin is not None:
            forward_event = forward_log.events[origin]
            module, where = forward_modules[origin], origins.where(forward_event)
            detail = origins.detail(forward_event)
            call = f"{type(node).__name__} of {short_call(forward_event.call)}"
        else:
            variable = getattr(node, "variable", None)  # AccumulateGrad: a parameter's gradient
            module = names.get(variable, ".").rpartition(".")[0] if variable is not None else ""
            if node is not None:
                where = call = type(node).__name__
            else:  # no autograd node: a backward hook's own op (FSDP2's reduce-scatter copy-in)
                hook = "a backward hook (no autograd node)"
                where, call = (event.location if event.filename else hook), event.call
            detail = ""
        recomputed = backward_recorder.recomputed.get(event.index)
        if recomputed is not None:  # a forward line re-run by activation checkpointing
            user = (recomputed.filename, recomputed.line)
            where, call = f"{line_text(*user)} (recompute)", f"recompute: {event.call}"
            if recomputed.module is not None:  # the module re-run, as in forward
                module = modules.get(recomputed.module, module)
                if recomputed.line == 0 and module in forward_in_module:  # no user frame
                    ran = forward_log.events[forward_in_module[module]]
                    where = f"{origins.where(ran)} (recompute)"
            elif user in forward_at_line:
                module = forward_modules[forward_at_line[user]]
            detail = line_text(*recomputed.library) if recomputed.library else ""
        if owners and event.call.startswith("fsdp."):  # FSDP2's copy-in and copy-out
            module = _owner(event, owners) or module
        in_place = event.wrote_input and event.index not in backward_recorder.into_blank
        scalar = event.index in backward_recorder.wrapped_scalars
        found = _copies_of("backward", module, where, event, inside, call, in_place, scalar)
        if recomputed is not None:
            found = [replace(item, recompute=True) for item in found]
        copies.extend(_detailed(found, detail))
    return copies


def _plain_steps(
    inside: Any, mode_copy: str | None, node: Any, origins: NodeOrigins, forward_log: CopyLog
) -> Any:
    """The copies found inside a backward event, but those only the audit's modes make."""
    if mode_copy == "bool":  # FUNCTIONAL_UNDER_A_MODE: its bool mask's conversion
        return [item for item in inside if item[1] != "aten._to_copy"]
    if inside and type(node).__name__ == "DivBackward0":
        origin = origins.of_node.get(node)
        if origin is not None and "aten._ctc_loss" in forward_log.events[origin].ops:
            return without_ctc_conversion(inside)
    return inside


def _detailed(found: list[AuditCopy], detail: str) -> list[AuditCopy]:
    return [replace(item, detail=detail) for item in found] if detail else found


def _copies_of(
    phase: str,
    module: str,
    where: str,
    event: CopyEvent,
    inside: Iterable[tuple[str, str, int]],
    call: str = "",
    in_place: bool = False,
    scalar: bool = False,
) -> list[AuditCopy]:
    """The event itself when it copied, and each copy a kernel of it made inside; ``in_place``:
    the call also wrote into an input, ``scalar``: its copy converted a wrapped Python number
    (see :class:`AuditCopy`)."""
    found = [_copy(phase, module, where, event, call, in_place)] if event.kind == "copy" else []
    if scalar and found:
        found[0] = replace(found[0], scalar=True)
    for hidden_in, copy_op, size in inside:
        found.append(
            AuditCopy(
                phase=phase,
                module=module,
                where=where,
                call=call or short_call(event.call),
                ops=(copy_op,),
                bytes=size,
                event=event,
                hidden_in=hidden_in,
                in_place=in_place,
            )
        )
    return found


def _copy(
    phase: str, module: str, where: str, event: CopyEvent, call: str, in_place: bool
) -> AuditCopy:
    return AuditCopy(
        phase=phase,
        module=module,
        where=where,
        call=call or short_call(event.call),
        ops=tuple(op for op in event.ops if op.removeprefix("aten.") in COPY_OPS) or event.ops,
        bytes=event.bytes_copied,
        event=event,
        in_place=in_place,
    )
