"""``sw.sanitize()``: refuse, before they run, the writes whose result depends on memory layout.

PyTorch checks a write for overlap only where that is cheap (a dense tensor, a stride-0 dim) and
answers "too hard" otherwise, then runs it: ``torch.arange(10.).as_strided((4, 3), (2, 1)).mul_(2)``
multiplies shared elements twice without a word.  A :class:`TorchDispatchMode` (as the copy
tracker's) sees every ATen op; for each one that writes, :func:`.rules.hazards_of` decides exactly
whether the written tensor overlaps itself or an input, and every op's tensors are checked against
their storage's current size (a view made before ``resize_`` / ``set_`` may reach past it).

Precedence, in raise mode: a hazard found is first tried on private copies of the storages
involved; where torch itself refuses the write there, the real op is run so that torch's own error
goes through unchanged, and nothing of the user's data has been written either way.  An
out-of-bounds hazard is never tried (the op would touch memory the storage does not own) and is
raised in every mode.  Custom-op hazards only warn.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import torch

from .._compat import (
    dispatch_mode_base,
    dispatch_unwrapped,
    is_higher_order,
    run_higher_order,
    storage_id,
    tree_flatten,
    tree_map,
)
from ..adapters.inspect import inspect
from ..errors import LayoutError
from ..frames import describe_location, user_line
from .hazard import LayoutHazard, LayoutHazardWarning
from .rules import RULES, Finding, hazards_of, rule_of

__all__ = ["SanitizeReport", "sanitize"]

ON_HAZARD = ("raise", "warn", "collect")


class SanitizeReport:
    """The hazards a :func:`sanitize` block met, in the order the ops ran.

    >>> import torch, stridewidget as sw
    >>> with sw.sanitize(on_hazard="collect") as report:
    ...     x = torch.arange(10.0)
    ...     _ = torch.add(x[:5], 1, out=x.as_strided((5,), (2,), 1))
    >>> report.ok, [h.kind for h in report.hazards]
    (False, ['partial-overlap'])
    """

    def __init__(self) -> None:
        self.hazards: list[LayoutHazard] = []

    @property
    def ok(self) -> bool:
        """No hazard was met."""
        return not self.hazards

    def __len__(self) -> int:
        return len(self.hazards)

    def __iter__(self) -> Iterator[LayoutHazard]:
        return iter(self.hazards)

    def __repr__(self) -> str:
        if self.ok:
            return "SanitizeReport: no layout hazard"
        lines = [f"SanitizeReport: {len(self.hazards)} layout hazard(s)"]
        lines += [f"  {h.kind} in {h.op} at {h.where}" for h in self.hazards]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        from .picture import report_html

        return report_html(self)


def _message(finding: Finding, op: str, where: str) -> str:
    w = finding.witness
    at = f"{op} at {where}"
    if finding.kind == "internal-overlap":
        return (
            f"{at} writes a tensor ({finding.what}) whose elements {w.first} and {w.second} are "
            f"one storage element ({w.address}): the result depends on the order the kernel "
            "writes them. Write into a fresh tensor (or a .clone()) and copy the result back."
        )
    if finding.kind == "partial-overlap":
        return (
            f"{at}: {finding.what} share storage element {w.address} (index {w.first} of the "
            f"written tensor, {w.second} of the other), not as the same elements of one "
            "elementwise op: the op may read values it already overwrote. Pass a .clone() of the input, or write into "
            "a fresh tensor."
        )
    if finding.kind == "out-of-bounds":
        return (
            f"{at}: {finding.what} reaches storage element {w.address} (index {w.first}), past "
            "the end of its storage, which was resized or set_ after the view was made. Make "
            "the view again from the tensor as it is now."
        )
    overlap = f"; its elements {w.first} and {w.second} are one storage element" if w else ""
    return (
        f"{at}: custom op receives {finding.what} with a layout it may not expect "
        f"({'overlapping' if w else 'non-contiguous'}{overlap}). A kernel that reads data_ptr() "
        "as contiguous gets wrong values: pass .contiguous(), or check the layout in the op."
    )


def _hazard(finding: Finding, op: str, frame: tuple[str, int]) -> LayoutHazard:
    where = describe_location(*frame)
    return LayoutHazard(
        _message(finding, op, where),
        kind=finding.kind,
        op=op,
        where=where,
        witness=finding.witness,
        layouts=tuple(inspect(t) for t in finding.tensors),
    )


def _copyable(value: Any) -> bool:
    """A tensor the trial can rebuild over a private copy: strided, with a storage, and (a
    subclass too: ``as_subclass``) without a ``__torch_dispatch__`` of its own."""
    return (
        isinstance(value, torch.Tensor)
        and value.layout is torch.strided
        and not value.is_nested
        and getattr(type(value), "__torch_dispatch__", None) is _DEFAULT_DISPATCH
    )


_DEFAULT_DISPATCH = torch.Tensor.__torch_dispatch__


class _Uncopyable(Exception):
    """An argument the trial cannot copy (a wrapper subclass): it is not run at all."""


def _torch_refuses(func: Any, args: tuple, kwargs: dict) -> bool:
    """Does torch itself refuse this call?  Run on private copies of every storage involved, each
    view rebuilt over its copy with the same offset, sizes and strides (aliasing kept), with the
    random state put back after (a refused ``bernoulli_`` draws nothing).  A call with a tensor it
    cannot copy is not tried: the hazard is raised."""
    copies: dict[int, Any] = {}

    def rebuilt(value: Any) -> Any:
        if not isinstance(value, torch.Tensor):
            return value
        if not _copyable(value):
            raise _Uncopyable
        storage = value.untyped_storage()
        copy = copies.get(storage_id(storage))
        if copy is None:
            copy = copies[storage_id(storage)] = storage.clone()
        empty = torch.empty(0, dtype=value.dtype, device=value.device)
        return empty.set_(copy, value.storage_offset(), value.shape, value.stride())

    try:
        trial_args, trial_kwargs = tree_map(rebuilt, (args, kwargs))
    except _Uncopyable:
        return False
    devices = sorted({t.device.index or 0 for t in _tensors(trial_args) if t.is_cuda})
    with torch.no_grad(), torch.random.fork_rng(devices=devices), _checked():
        try:
            func(*trial_args, **trial_kwargs)
        except Exception:  # torch's own check (or any error): the real call shows it unchanged
            return True
    return False


def _tensors(value: Any) -> list[torch.Tensor]:
    return [leaf for leaf in tree_flatten(value)[0] if isinstance(leaf, torch.Tensor)]


#: Per thread: is an op being run by a sanitizer that has checked it already?  Nested blocks:
#: the innermost sanitizer decides (records, raises or warns) and the outer ones pass its ops on.
_STATE = threading.local()


class _SanitizeMode(dispatch_mode_base()):
    supports_higher_order_operators = True  # torch.cond, while_loop: their subgraphs' ops

    def __init__(self, report: SanitizeReport, on_hazard: str) -> None:
        super().__init__()
        self.report = report
        self.on_hazard = on_hazard

    def __torch_dispatch__(
        self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: dict | None = None
    ) -> Any:
        if not _dynamo_quiet():  # a torch.compile frame hook is set: off while this runs
            return _dynamo_wrapped(self, func, types, args, kwargs)
        kwargs = kwargs or {}
        entry = RULES.get(id(func))  # as rule_of, inlined: an op with a rule is no higher-order op
        rule = entry[1] if entry is not None and entry[0] is func else None
        if rule is None and is_higher_order(func):  # its subgraphs' ops come back here
            return run_higher_order(self, func, args, kwargs, "sw.sanitize")
        if getattr(_STATE, "checked", False):  # an inner sanitizer checked it: passed through
            return func(*args, **kwargs)
        if rule is None:
            rule = rule_of(func)
        findings = [] if rule.metadata else hazards_of(rule, args, kwargs, func)
        if not findings:  # as _run_checked, inlined (once per op)
            _STATE.checked = True
            try:
                return func(*args, **kwargs)
            finally:
                _STATE.checked = False
        frame = user_line()
        hazards = [_hazard(finding, rule.name, frame) for finding in findings]
        severe = [h for h in hazards if h.kind != "custom-op-layout"]
        if severe and (self.on_hazard == "raise" or severe[0].kind == "out-of-bounds"):
            if severe[0].kind != "out-of-bounds" and _torch_refuses(func, args, kwargs):
                return _run_checked(func, args, kwargs)  # raises torch's own error
            self._note([h for h in hazards if h not in severe], frame)
            self.report.hazards.append(severe[0])
            raise severe[0]
        result = _run_checked(func, args, kwargs)  # torch's own error, if any, comes first
        self._note(hazards, frame)
        return result

    def _note(self, hazards: list[LayoutHazard], frame: tuple[str, int]) -> None:
        for hazard in hazards:
            self.report.hazards.append(hazard)
            if self.on_hazard == "warn" or (
                hazard.kind == "custom-op-layout" and self.on_hazard == "raise"
            ):
                # at the user's line, so that warning filters can name their module
                warnings.warn_explicit(str(hazard), LayoutHazardWarning, frame[0], frame[1])


# torch's dynamo-disable wrapper taken off the handler, run only when it would do something
_dynamo_quiet, _dynamo_wrapped = dispatch_unwrapped(_SanitizeMode)


def _run_checked(func: Any, args: tuple, kwargs: dict) -> Any:
    """Run an op this sanitizer has checked: outer sanitizers pass it through.  (Once per op:
    the flag is set inline, a context manager costs a generator per op.)"""
    outer = getattr(_STATE, "checked", False)
    _STATE.checked = True
    try:
        return func(*args, **kwargs)
    finally:
        _STATE.checked = outer


@contextmanager
def _checked() -> Iterator[None]:
    outer = getattr(_STATE, "checked", False)
    _STATE.checked = True
    try:
        yield
    finally:
        _STATE.checked = outer


@contextmanager
def sanitize(on_hazard: str = "raise") -> Iterator[SanitizeReport]:
    """Check every write in the block for results that depend on memory layout.

    ``on_hazard="raise"`` (default) raises :class:`~stridewidget.LayoutHazard` at the first
    hazard, before the write runs; ``"warn"`` warns (:class:`~stridewidget.LayoutHazardWarning`)
    and ``"collect"`` only records, both letting the write run.  Either way the yielded
    :class:`SanitizeReport` lists every hazard.  Out-of-bounds hazards raise in every mode;
    custom-op hazards never raise.  Where torch refuses a write itself, its error goes through.

    Nested blocks: the innermost sanitizer decides (its report lists the hazard, its
    ``on_hazard`` says what happens); the outer ones pass its ops through.  A dispatch mode is
    per thread: threads started inside the block are *not* sanitized; call ``sw.sanitize()``
    inside the worker itself.  A higher-order op (``torch.cond``, ``while_loop``,
    ``flex_attention``) runs its subgraphs through the block: the writes inside are checked.
    torch (2.13) cannot differentiate a ``torch.cond`` under any dispatch mode: run its
    backward outside the block.

    >>> import torch, stridewidget as sw
    >>> x = torch.arange(10.0)
    >>> with sw.sanitize():
    ...     x.as_strided((4, 3), (2, 1)).mul_(2)
    Traceback (most recent call last):
    ...
    stridewidget.check.hazard.LayoutHazard: aten.mul_ at ...
    >>> torch.equal(x, torch.arange(10.0))     # refused before it ran
    True
    >>> with sw.sanitize() as report:
    ...     y = torch.zeros(4, 6)
    ...     _ = y[:, ::2].mul_(3), y.t().relu_(), y.fill_(1)
    >>> report.ok
    True
    """
    if on_hazard not in ON_HAZARD:
        raise LayoutError(
            f"sanitize: on_hazard must be one of {', '.join(map(repr, ON_HAZARD))}, "
            f"got {on_hazard!r}"
        )
    report = SanitizeReport()
    with _SanitizeMode(report, on_hazard):
        yield report
