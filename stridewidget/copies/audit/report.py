"""``sw.audit`` and what it returns: :func:`audit` runs one audited step
(:mod:`stridewidget.copies.audit.step`) and makes an :class:`AuditReport` of its copies, with
tables, text, HTML and measured suggestions (:mod:`stridewidget.copies.audit.suggest`)."""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from functools import cached_property
from typing import Any

import torch

from ..._compat import compiled_original, mode_skipped_compiles, profiler_running
from ...limits import AUDIT_PAGE_MEASURE_SECONDS as MEASURE_SECONDS
from ...unseen import unseen
from ..format import counted, format_bytes
from .found import (
    COUNTS_NOTE,
    OPS_SEPARATOR,
    SCALARS_ROW,
    TOP,
    AuditCopy,
    Row,
    in_place_note,
    row_op_counts,
    row_ops,
    row_ops_parts,
    unmeasured_note,
)
from .guard import check_materialised, compiled_calls_note, eager_model, state_kept
from .html import report_html
from .profiler import USER_PROFILER_NOTE
from .step import audited_step
from .suggest import Suggestion, measured_suggestions

__all__ = ["AuditReport", "audit"]

OPS_WIDTH = 60  # a text table's ATen-ops column wraps past this, between op kinds
KEY_WIDTH = 60  # a text table's longer keys are shortened in the middle, marked with "…"


def _wrapped(parts: list[str], width: int) -> list[str]:
    """``parts`` joined by :data:`OPS_SEPARATOR` into lines of ``width`` characters at most (a
    longer part has a line of its own, whole).

    >>> _wrapped(["aten.clone×6", "aten.select_backward×3", "aten.clone in aten.addmm"], 40)
    ['aten.clone×6 · aten.select_backward×3', 'aten.clone in aten.addmm']
    >>> _wrapped([], 40)
    ['(no op)']
    """
    lines: list[str] = []
    for part in parts:
        if lines and len(lines[-1]) + len(OPS_SEPARATOR) + len(part) <= width:
            lines[-1] += OPS_SEPARATOR + part
        else:
            lines.append(part)
    return lines or ["(no op)"]


def _shortened(keys: list[str], width: int) -> dict[str, str]:
    """Each key as a text table shows it: whole when it fits ``width``, else its head and its
    longer tail (the line number, the innermost module) joined by "…"; every key whole when
    shortening would make two different keys read the same.

    >>> _shortened(["a.b", "encoder.blocks.0." + "x" * 50], 30)["encoder.blocks.0." + "x" * 50]
    'encoder.b…xxxxxxxxxxxxxxxxxxxx'
    >>> keys = ["encoder.blocks.0." + "x" * 40, "encoder.blocks.1." + "x" * 40]
    >>> _shortened(keys, 30) == {key: key for key in keys}  # the difference would be cut out
    True
    """
    head = (width - 1) // 3

    def short(key: str) -> str:
        return key if len(key) <= width else key[:head] + "…" + key[len(key) - (width - 1 - head) :]

    shown = {key: short(key) for key in keys}
    if len(set(shown.values())) < len(shown):
        return {key: key for key in keys}
    return shown


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
        #: data written in place into storage that already held data, in no row (no new
        #: storage): ``(phase, call or autograd node, bytes)``; the note counts them
        self.in_place_writes: list[tuple[str, str, int]] = []

    @property
    def total_bytes(self) -> int:
        """Bytes copied in the audited step: the sum over :attr:`copies`."""
        return sum(c.bytes for c in self.copies)

    def _group(self, key: Callable[[AuditCopy], str], scalars_apart: bool = True) -> list[Row]:
        groups: dict[tuple[str, str], list[AuditCopy]] = {}
        for item in self.copies:
            name = SCALARS_ROW if scalars_apart and item.wrapped_scalar else key(item)
            groups.setdefault((name, item.phase), []).append(item)
        rows = []
        for (name, phase), items in groups.items():
            total = sum(i.bytes for i in items)
            rows.append(Row(name, phase, len(items), total, row_ops(items), row_op_counts(items)))
        return sorted(rows, key=lambda row: (-row.bytes, -row.count, row.key))

    def by_line(self) -> list[Row]:
        """Source line → count, bytes, ATen ops; forward and backward apart, most bytes first."""
        return self._group(lambda item: item.where)

    def by_module(self, scalars_apart: bool = False) -> list[Row]:
        """Module path → count, bytes, ATen ops; forward and backward apart, most bytes first.

        Each key is a module path (``(model)`` for the model itself): a wrapped Python scalar's
        copy is under the module that made it, unless ``scalars_apart``, which groups them in
        one row as the tables show them.
        """
        return self._group(lambda item: item.module or TOP, scalars_apart)

    @cached_property
    def suggestions(self) -> list[Suggestion]:
        """Candidate fixes that apply to this model, each applied to copies and measured."""
        with unseen(), state_kept(self._model, (self._inputs, self._kwargs)):
            return measured_suggestions(
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
                size = format_bytes(sum(c.bytes for c in items))
                parts.append(f"{phase}: {counted(len(items))}, {size}")
        scalars = [c for c in self.copies if c.wrapped_scalar]
        if scalars:
            size = format_bytes(sum(c.bytes for c in scalars))
            parts.append(f"of all, {len(scalars)} Python scalars wrapped as tensors, {size}")
        return (
            f"sw.audit: {counted(len(self.copies))}, {format_bytes(self.total_bytes)} "
            f"({'; '.join(parts)}){note}"
        )

    def to_text(self, max_rows: int = 15) -> str:
        """The summary and the top rows of both tables as plain text."""
        lines = [self.summary()]
        for title, rows in (("by line", self.by_line()), ("by module", self.by_module(True))):
            if not rows:
                continue
            lines.append(f"\n{title}:")
            table = [(title.split()[1], "phase", "count", "bytes", "ATen ops")]
            ops = [["ATen ops"]]  # each row's op kinds, with their counts: never cut
            keys = _shortened(sorted({row.key for row in rows[:max_rows]}), KEY_WIDTH)
            for row in rows[:max_rows]:
                table.append(
                    (keys[row.key], row.phase, str(row.count), format_bytes(row.bytes), "")
                )
                ops.append(_wrapped(row_ops_parts(row), OPS_WIDTH))
            widths = [max(len(r[c]) for r in table) for c in range(4)]
            for row, op_lines in zip(table, ops):
                cells = [cell.ljust(w) for cell, w in zip(row, widths)]
                lines.append("  ".join([*cells, op_lines[0]]).rstrip())
                indent = " " * (sum(widths) + 2 * len(widths))
                lines.extend(indent + more for more in op_lines[1:])
            if len(rows) > max_rows:
                lines.append(f"... {len(rows) - max_rows} more rows")
        if self.copies:
            lines.append(f"\n{COUNTS_NOTE}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.to_text()

    def _repr_html_(self) -> str:
        # a notebook cell shows the suggestions once they were asked for: it never measures
        return report_html(self, False, self.__dict__.get("suggestions"), [])

    def to_html(self, path: str, budget_s: float | None = MEASURE_SECONDS) -> None:
        """Write the report as one standalone page (inline SVG, CSS and a small sort script).

        The page lists the suggestions.  Those already read (``report.suggestions``) cost
        nothing more; else they are measured now, each candidate fix two audited steps, two
        float64 steps and at least 14 interleaved timed rounds of about 20 ms each (seconds per
        candidate for a small CNN, and some models have several candidates).  No candidate is
        started after ``budget_s`` seconds (:data:`~stridewidget.limits.AUDIT_PAGE_MEASURE_SECONDS`;
        ``None``: no bound, ``0``: measure none): the page names those left unmeasured, and
        ``report.suggestions`` still measures them all when read.
        """
        suggestions, unmeasured = self._suggestions_within(budget_s)
        with open(path, "w", encoding="utf-8") as file:
            file.write(report_html(self, True, suggestions, unmeasured))

    def _suggestions_within(self, budget_s: float | None) -> tuple[list[Suggestion], list[str]]:
        if "suggestions" in self.__dict__ or budget_s is None:
            return self.suggestions, []
        unmeasured: list[str] = []
        with unseen(), state_kept(self._model):
            found = measured_suggestions(
                self._model,
                self._inputs,
                self.backward,
                self._loss_fn,
                self.copies,
                self._kwargs,
                deadline=time.perf_counter() + budget_s,
                unmeasured=unmeasured,
            )
        if not unmeasured:  # all of them: the same as report.suggestions, kept as it
            self.__dict__["suggestions"] = found
        return found, unmeasured


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
    model returns one (a dict's or a dataclass's), else from every output tensor that requires
    grad (in tuples, lists, dicts and dataclasses; as the backward of their sum), to the
    trainable parameters, else (a parameter-free or frozen model) to the inputs that require
    grad.  Parameters' ``.grad`` are not touched; buffers (BatchNorm's running
    statistics), inputs the step wrote in place, attributes it rebound (a call counter), plain
    tensor attributes it wrote in place (``self.cache``), ``torch.Generator`` objects the model
    holds and torch's RNG states are put back as they were.  A ``torch.compile``d model
    is audited as its compiled program: the copies of the AOTAutograd forward and backward
    graphs torch.compile hands its backend (a :class:`~stridewidget.graph.CompiledAudit`, read
    like this report); with ``loss_fn`` or ``model_kwargs`` it is audited as the eager model it
    wraps, which a warning and ``report.note`` say; so is one compiled in place
    (``model.compile()``), with compiled submodules, a compiled ``forward`` or compiled
    functions the step calls (torch.compile runs none under the audit's modes).  Under a
    ``torch.profiler`` session of the user's, the audit starts none of its own (that would end
    the user's): copies inside kernels are not searched for, which a warning and the note say.

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
    with unseen():  # a track_copies() block around the audit records none of it
        if compiled_original(model) is not None and loss_fn is None and model_kwargs is None:
            # torch.compile'd: its compiled program's copies
            from ...graph.audit import audit_compiled

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
        check_materialised(model)
        model, note = eager_model(model)
        notes = [note] if note else []
        if profiler_running():  # the user's own: the audit starts no session of its own
            warnings.warn(f"sw.audit: {USER_PROFILER_NOTE}", UserWarning, stacklevel=2)
            notes.append(USER_PROFILER_NOTE)
        with state_kept(model, (example_inputs, model_kwargs)), mode_skipped_compiles() as skipped:
            writes: list[tuple[str, str, int]] = []
            unmeasured: list[str] = []
            copies = audited_step(
                model, example_inputs, backward, loss_fn, model_kwargs, writes, unmeasured
            )
        notes.append(compiled_calls_note(skipped, said=bool(note)))
        notes.append(in_place_note(writes))
        notes.append(unmeasured_note(unmeasured))
        note = "; ".join(n for n in notes if n)
        report = AuditReport(copies, model, example_inputs, backward, loss_fn, model_kwargs, note)
        report.in_place_writes = writes
        return report
