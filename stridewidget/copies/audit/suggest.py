"""Candidate fixes for an audited step's copies, each applied to copies and measured.

Suggestions (:class:`Suggestion`) are never guessed: each candidate fix is applied to deep copies of
the model and inputs, re-audited, timed beside the unchanged copy in interleaved rounds
(:mod:`stridewidget.copies.audit.timing`: median, IQR and a verdict that needs the difference to
exceed the spread), and its outputs and gradients are compared with the unchanged ones in float64.
They are computed on first access to ``report.suggestions``. The candidates: channels-last for a
convolution stack; a reused non-contiguous input made contiguous; a parameter whose permuted view
the step copies stored in that layout; an input whose ``permute`` + ``reshape`` copies stored so
that the reshape is a view. The same ``permute`` + ``reshape`` on a tensor made inside the model,
and a non-contiguous tensor the model makes and feeds to ``Linear`` / ``LayerNorm`` (a patch
embedding), can only be fixed by editing the model's source, so they are reported unapplied
(``Suggestion.applied`` false), never faked.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import Any

import torch

from ...layout.layout import Layout
from ..format import counted, format_bytes
from .compare import compared, deep_copied
from .fixes import (
    channels_last_inputs,
    contiguous_if_channels_last,
    contiguous_input,
    input_stored_for,
    layout_code,
    permute_contiguous_if_channels_last,
    relaid_parameter,
    to_channels_last,
    view_order,
)
from .found import AuditCopy
from .guard import model_tensors, output_tensors
from .step import audited_step, run_step
from .timing import Timing, interleaved, noisy, verdict

__all__ = ["Measured", "Suggestion", "measure", "measured_suggestions"]


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
        return f"{counted(self.copies)}, {format_bytes(self.bytes)}, {self.seconds * 1e3:.2f} ms{spread}"


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
    #: why the outputs were not compared (``outputs_match`` is then false): "outputs not checked: ..."
    unchecked: str = ""

    @property
    def speed(self) -> str:
        """``"faster"``, ``"slower"`` or ``"no measurable change"`` (see
        :func:`stridewidget.copies.audit.timing.verdict`), and ``"too noisy to judge"`` instead of
        no measurable change when an IQR is wider than half its median (:func:`noisy`: such a
        spread could hide a real change); ``""`` when not applied."""
        if not self.applied:
            return ""
        before, after = self.measured["before"].timing, self.measured["after"].timing
        said = verdict(before, after)
        if said == "no measurable change" and (noisy(before) or noisy(after)):
            return "too noisy to judge"
        return said

    @property
    def result(self) -> str:
        """What was measured, in words: ``"fewer bytes, no measurable change in time"``; ``""``
        when not applied."""
        if not self.applied:
            return ""
        before, after = self.measured["before"].bytes, self.measured["after"].bytes
        size = "fewer" if after < before else "more" if after > before else "the same"
        time = {
            "no measurable change": "no measurable change in time",
            "too noisy to judge": "the timing too noisy to judge",
        }.get(self.speed, self.speed)
        return f"{size} bytes copied, {time}"

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
            text += f"\n  after:  {self.measured['after']} — {self.result}"
        if self.unchecked:
            text += f"\n  {self.unchecked}"
        return text


def measured_suggestions(
    model: torch.nn.Module,
    inputs: tuple[Any, ...],
    backward: bool,
    loss_fn: Callable[[Any], torch.Tensor] | None,
    copies: list[AuditCopy],
    kwargs: dict[str, Any] | None = None,
    deadline: float | None = None,
    unmeasured: list[str] | None = None,
) -> list[Suggestion]:
    """The candidate fixes for a step that made ``copies``, each measured (:func:`measure`).
    With a ``deadline`` (a ``time.perf_counter()`` value) no candidate is started after it: each
    one left is named (``where: fix``) in ``unmeasured``."""
    kwargs = kwargs or {}
    candidates = []
    permuted = _permute_reshape_candidates(inputs, kwargs, copies)
    four_d = any(t.dim() == 4 for value in inputs for t in output_tensors(value))
    if four_d and any(isinstance(m, torch.nn.Conv2d) for m in model.modules()):
        candidates.append(
            (
                "the convolution stack",
                "keep activations and weights channels-last (NHWC) instead of NCHW",
                "model = model.to(memory_format=torch.channels_last); "
                "x = x.contiguous(memory_format=torch.channels_last)",
                to_channels_last,
            )
        )
    elif four_d and any(p[4] is None and _channels_last_view(p[5]) for p in permuted):
        candidates.append(
            (
                "the 4-d inputs",
                "store the 4-d inputs channels-last (NHWC): the ops that keep their input's "
                "layout write it, and a permute(0, 2, 3, 1) of what they write is contiguous",
                CHANNELS_LAST_INPUTS_FIX,
                channels_last_inputs,
            )
        )
    candidates.extend(_contiguous_input_candidates(inputs, kwargs, copies))
    candidates.extend(_transposed_weight_candidates(model, copies))
    unapplied = []
    for where, what, fix, order, position, _ in permuted:
        if position is None:
            continue
        candidates.append((where, what, fix, partial(input_stored_for, position, order)))
    found = []
    for where, what, fix, apply in candidates:
        if deadline is not None and time.perf_counter() > deadline:
            if unmeasured is not None:
                unmeasured.append(f"{where}: {fix}")
            continue
        found.extend(_measured_or_named(unmeasured, where, fix, measure, model, inputs, backward,
                                        loss_fn, where, what, fix, apply, kwargs))  # fmt: skip
    # An edit that builds on channels-last is proposed only when channels-last measured helps:
    # never a fix that needs another fix which was measured not to pay.
    channels_last = next(
        (s for s in found if s.fix.startswith(("model = model.to(", CHANNELS_LAST_INPUTS_FIX))),
        None,
    )
    unapplied.extend(
        (where, _made_permuted_what(source, channels_last), fix)
        for where, _, fix, _, position, source in permuted
        if position is None
    )
    # the patch-convolution route needs the convolution stack's channels-last, not the inputs'
    convolutions = (
        channels_last if channels_last and channels_last.fix != CHANNELS_LAST_INPUTS_FIX else None
    )
    unapplied.extend(_made_non_contiguous_candidates(model, inputs, kwargs, copies, convolutions))
    if unapplied:
        as_audited = _as_audited(model, inputs, backward, loss_fn, copies, kwargs, found, deadline)
        if as_audited is None:
            if unmeasured is not None:
                unmeasured.extend(f"{where}: {fix}" for where, _, fix in unapplied)
        else:
            found.extend(
                Suggestion(where, what, fix, {"before": as_audited}, False, applied=False)
                for where, what, fix in unapplied
            )
    return found


def _as_audited(
    model: torch.nn.Module,
    inputs: tuple[Any, ...],
    backward: bool,
    loss_fn: Callable[[Any], torch.Tensor] | None,
    copies: list[AuditCopy],
    kwargs: dict[str, Any],
    found: list[Suggestion],
    deadline: float | None,
) -> Measured | None:
    """The unchanged step as an unapplied suggestion shows it: the "before" a measured fix
    already timed (one measurement of the same step, not a second one that a burst of load can
    make read differently), else timed now; ``None`` when past the ``deadline``."""
    if found:
        return found[0].measured["before"]
    if deadline is not None and time.perf_counter() > deadline:
        return None
    unchanged = deep_copied((model, inputs, kwargs))
    timing = interleaved(
        {"before": lambda: run_step(*unchanged[:2], backward, loss_fn, unchanged[2])}
    )
    return Measured(len(copies), sum(c.bytes for c in copies), *_timing_fields(timing["before"]))


def _contiguous_input_candidates(
    inputs: tuple[Any, ...], kwargs: dict[str, Any], copies: list[AuditCopy]
) -> list[tuple[str, str, str, Callable[..., tuple[torch.nn.Module, tuple[Any, ...]]]]]:
    """A non-contiguous input, positional or keyword, that a copy of the step reads: made
    contiguous once, before the model.  An input no copy reads is left alone (``Linear`` reads a
    transposed batch as it is: there is no copy to remove)."""
    read = {s.storage_address for item in copies for s in item.source if s is not None}
    candidates = []
    for key, value in (*enumerate(inputs), *kwargs.items()):
        if not isinstance(value, torch.Tensor) or value.layout != torch.strided:
            continue  # a sparse input has no storage of its own to relay
        if value.is_contiguous() or not value.numel():
            continue
        if value.untyped_storage().data_ptr() not in read:
            continue
        name = f"inputs[{key}]" if isinstance(key, int) else f'model_kwargs["{key}"]'
        label = f"input {key}" if isinstance(key, int) else f"keyword input {key}"
        candidates.append(
            (
                f"{label} {tuple(value.shape)} with strides {value.stride()}",
                "make the reused non-contiguous input contiguous once, before the model",
                f"{name} = {name}.contiguous()",
                partial(contiguous_input, key),
            )
        )
    return candidates


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
        order = view_order(
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
                f'model.get_parameter("{name}").data{layout_code(order)}',
                partial(relaid_parameter, name, order),
            )
        )
    return candidates


_RESHAPES = ("Tensor.reshape", "torch.reshape", "Tensor.flatten", "torch.flatten")
# calls whose kernels copy a non-contiguous operand to a contiguous one first
_NEEDS_CONTIGUOUS = ("F.linear", "F.layer_norm")


def _made_non_contiguous_candidates(
    model: torch.nn.Module,
    inputs: tuple[Any, ...],
    kwargs: dict[str, Any],
    copies: list[AuditCopy],
    channels_last: Suggestion | None,
) -> list[tuple[str, str, str]]:
    """A non-contiguous tensor made inside the model (``flatten(2).transpose(1, 2)`` of a patch
    embedding) that ``Linear`` / ``LayerNorm`` copy inside their kernels each step.  Only the
    model's source can change where it is made: ``(where, what, fix)``, reported unapplied.
    The channels-last route is offered only when channels-last (``channels_last``: its measured
    suggestion, ``None`` when it was not tried) was measured to help; the text says what was
    measured, and names channels-last only when it was tried."""
    outside = {t.untyped_storage().data_ptr() for t in model_tensors(model)}
    outside.update(
        t.untyped_storage().data_ptr()
        for t in output_tensors((inputs, kwargs))
        if t.layout == torch.strided
    )
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
        helps = channels_last is not None and channels_last.helps
        if (
            channels_last is not None
            and helps
            and contiguous_if_channels_last(source.shape, source.strides)
        ):
            edit = (
                f"run the patch convolution channels-last (measured above: "
                f"{channels_last.result}), so that this view of its output is already "
                "contiguous (checked on meta tensors)"
            )
        else:
            edit = ".contiguous() once where the tensor is made, if several layers read it"
            if helps:
                edit += (
                    " (channels-last was measured above to help, but this view of its output "
                    "stays non-contiguous under it: checked on meta tensors)"
                )
            elif channels_last is not None:
                edit += (
                    f" (channels-last was measured above and did not help: {_why(channels_last)})"
                )
        found.append(
            (
                f"{item.call} at {item.where} of {source.shape} with strides {source.strides}",
                f"not applied automatically: a non-contiguous tensor made inside the model is fed "
                f"to {item.call}, whose kernel copies it (and its gradient in backward) every "
                "step; make its producer write the layout the consumer reads",
                f"edit {item.where}: {edit}",
            )
        )
    return found


def _why(suggestion: Suggestion) -> str:
    if suggestion.outputs_match:
        return suggestion.result
    return suggestion.unchecked or "its outputs differed"


def _permute_reshape_candidates(
    inputs: tuple[Any, ...], kwargs: dict[str, Any], copies: list[AuditCopy]
) -> list[tuple[str, str, str, tuple[int, ...], int | None, Layout]]:
    """A ``reshape`` / ``flatten`` that copied because its source is a permuted dense tensor.

    Such a reshape merges dims that are not adjacent in memory, so no reordering of the same two
    calls on the same tensor is a view: the tensor has to be *stored* in the permuted order.  When
    it is a model input, that is applied (inside the step, so the relayout's own copy counts):
    ``(where, what, fix, order, input position)``.  When it is made inside the model, only the
    model's source can change (make the producer write it permuted, or let the consumer take the
    unmerged dims): reported with position ``None``, not applied (its words are
    :func:`_made_permuted_what`'s).  Each comes with the source's layout.
    """
    by_storage = {
        value.untyped_storage().data_ptr(): (position, value)
        for position, value in enumerate(inputs)
        if isinstance(value, torch.Tensor) and value.numel() and value.layout == torch.strided
    }
    # a keyword input is not made inside the model; storing it permuted is not applied (yet)
    keywords = {
        t.untyped_storage().data_ptr()
        for t in output_tensors(kwargs)
        if t.layout == torch.strided  # a sparse input has no storage of its own
    }
    found = []
    seen = set()
    for item, source in _forward_copies_from(copies):
        if item.call not in _RESHAPES or not source.is_dense or source.storage_address in keywords:
            continue
        position, value = by_storage.get(source.storage_address, (None, None))
        order = None
        if value is not None:
            order = view_order(source, tuple(value.shape), value.stride(), value.storage_offset())
            position = position if order is not None else None
        if (item.where, position) in seen:
            continue
        seen.add((item.where, position))
        where = f"{item.call} at {item.where} of {source.shape} with strides {source.strides}"
        if position is None:
            found.append((where, "", f"edit {item.where}", (), None, source))
        else:
            what = (
                f"store input {position} in the order its permute reads it, so that the "
                "reshape stays a view (measured with the input made so where it is made, outside "
                "the step, as for channels-last)"
            )
            fix = f"inputs[{position}] = inputs[{position}]{layout_code(order)}"
            found.append((where, what, fix, order, position, source))
    return found


#: The fix of the channels-last candidate for a model without convolutions.
CHANNELS_LAST_INPUTS_FIX = "x = x.contiguous(memory_format=torch.channels_last)"


def _channels_last_view(source: Layout) -> bool:
    return permute_contiguous_if_channels_last(source.shape, source.strides)


def _made_permuted_what(source: Layout, channels_last: Suggestion | None) -> str:
    """The words of an unapplied permute + reshape of a tensor made inside the model: where the
    permute would be contiguous were its producer channels-last (checked on meta tensors),
    what channels-last (``channels_last``, ``None`` when not tried) was measured to do."""
    if not _channels_last_view(source):
        return (
            "not applied automatically: the permuted tensor is made inside the model, and a "
            "reshape that merges dims not adjacent in memory copies in any order of the calls; "
            "rewrite the code so the producer writes the permuted order, or the consumer takes "
            "the unmerged dims"
        )
    what = (
        "the permuted tensor is made inside the model; were its producer's output channels-last, "
        "this permute would be contiguous and the reshape a view (checked on meta tensors)"
    )
    if channels_last is not None and channels_last.helps:
        return what + f": the channels-last fix above does that (measured: {channels_last.result})"
    if channels_last is not None:
        return (
            what + f", but channels-last was measured above and did not help: {_why(channels_last)}"
        )
    return what + "; channels-last was not measured"


def _measured_or_named(
    unmeasured: list[str] | None, where: str, fix: str, run: Callable[..., Suggestion], *args: Any
) -> list[Suggestion]:
    """``[run(*args)]``; ``[]`` when the model does not run with the fix, named (with the first
    line of why) in ``unmeasured``: the other candidates still count."""
    try:
        return [run(*args)]
    except Exception as error:
        if unmeasured is not None:
            first = str(error).splitlines()[0] if str(error) else type(error).__name__
            unmeasured.append(f"{where}: {fix} (breaks the model: {first[:200]})")
        return []


def _timing_fields(timing: Timing) -> tuple[float, float, float]:
    return timing.median, timing.q1, timing.q3


def measure(
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
        label: audited_step(m, x, backward, loss_fn, deep_copied(kwargs))
        for label, (m, x) in variants.items()
    }
    timings = interleaved(
        {
            label: partial(run_step, m, x, backward, loss_fn, deep_copied(kwargs))
            for label, (m, x) in variants.items()
        },
        round_seconds=round_seconds,
    )
    measured = {
        label: Measured(len(copies), sum(c.bytes for c in copies), *_timing_fields(timings[label]))
        for label, copies in audited.items()
    }
    match, unchecked = compared(
        model, inputs, deep_copied(kwargs), backward, loss_fn, partial(_variants, apply=apply)
    )
    return Suggestion(where, what, fix, measured, match, unchecked=unchecked)


def _variants(
    model: torch.nn.Module,
    inputs: tuple[Any, ...],
    apply: Callable[..., tuple[torch.nn.Module, tuple[Any, ...]]],
) -> dict[str, tuple[torch.nn.Module, tuple[Any, ...]]]:
    """Deep copies of the model and inputs, as they are and with the fix applied."""
    return {
        "before": (deep_copied(model), deep_copied(inputs)),
        "after": apply(deep_copied(model), deep_copied(inputs)),
    }
