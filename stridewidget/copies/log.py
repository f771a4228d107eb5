"""What a :func:`~stridewidget.track_copies` block recorded: :class:`CopyEvent` per call, and the
:class:`CopyLog` of them, with its text and HTML tables."""

from __future__ import annotations

import contextlib
import html
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from ..frames import describe_location
from ..layout.layout import Layout
from .format import clip, format_bytes, layout_text, ops_text, short_call
from .snapshot import Snapshot, shares_any

__all__ = ["KINDS", "CopyEvent", "CopyLog", "classify"]

KINDS = ("copy", "in-place", "view", "compute")


@dataclass(frozen=True, eq=False)
class CopyEvent:
    """One user-level call in a :func:`track_copies` block, and what its ATen ops did.

    ``kind`` is one of ``"copy"``, ``"in-place"``, ``"view"``, ``"compute"`` (see the module
    docstring); ``bytes_copied`` counts the bytes data-movement ops wrote (also into an existing
    tensor, as ``x.copy_(y)`` does); ``allocated`` says a result lives in storage none of the inputs
    had; ``inputs`` / ``outputs`` are the layouts at call time.

    >>> import torch, stridewidget as sw
    >>> x = torch.arange(6.0).reshape(2, 3)
    >>> with sw.track_copies() as log:
    ...     y = x.t().reshape(-1)
    >>> event = log.events[-1]
    >>> event.call, event.kind, event.ops, event.bytes_copied
    ('torch.Tensor.reshape', 'copy', ('aten.clone', 'aten._unsafe_view'), 24)
    >>> print(event.inputs[0], "->", event.outputs[0])
    float32 (3,2):(1,3) +0 · storage 6 · F-contiguous -> float32 (6):(1) +0 · storage 6 · contiguous
    """

    index: int
    call: str
    ops: tuple[str, ...]
    kind: str
    aliases_input: bool
    allocated: bool
    returned_input: bool
    wrote_input: bool
    bytes_copied: int
    filename: str
    line: int
    _inputs: tuple[Snapshot, ...] = field(repr=False)
    _outputs: tuple[Snapshot, ...] = field(repr=False)
    #: The functorch transforms the call ran under, outermost first (``("vmap",)``): its inputs
    #: and outputs are then the physical tensors (a BatchedTensor's, batch dims included).
    transforms: tuple[str, ...] = ()

    @classmethod
    def _recorded(cls, **fields: Any) -> CopyEvent:
        """The event the tracker records, its fields set at once: a frozen dataclass's
        ``__init__`` sets each field through ``object.__setattr__`` (1.5 µs for these 13, a
        tenth of the tracker's Python per op).  There is no ``__post_init__`` to run."""
        event = object.__new__(cls)
        event.__dict__.update(fields)
        return event

    @cached_property
    def inputs(self) -> tuple[Layout | None, ...]:
        """Layouts of the call's tensor/array arguments (None for a tensor without strides)."""
        return tuple(snapshot.layout for snapshot in self._inputs)

    @cached_property
    def outputs(self) -> tuple[Layout | None, ...]:
        """Layouts of the tensors/arrays the call returned."""
        return tuple(snapshot.layout for snapshot in self._outputs)

    @property
    def location(self) -> str:
        """The user's source line: ``file.py:12``, or ``In[3], line 2`` in a notebook."""
        return describe_location(self.filename, self.line)


def classify(
    inputs: tuple[Snapshot, ...], outputs: tuple[Snapshot, ...], pending: Any, returned_input: bool
) -> dict[str, Any]:
    """``kind``, ``aliases_input``, ``allocated`` and ``wrote_input`` of one call, from its snapshots (storage extents at
    call time) and what its ops did (``pending``: :class:`~.ops.Pending`): plain data, so it
    runs when the event is read as well as when it is recorded."""
    input_extents = [e for snapshot in inputs for e in snapshot.extents]
    output_extents = [s.extents for s in outputs if s.extents]
    aliased = [shares_any(extents, input_extents) for extents in output_extents]
    written_inputs = [e for e in pending.written if shares_any((e,), input_extents)]
    # copy_ into a buffer the call allocated itself (not an input) is a copy into new storage
    fresh_copy = pending.fresh_copy or (
        bool(pending.copied_into)
        and not all(shares_any((e,), input_extents) for e in pending.copied_into)
    )
    aliases_input = returned_input or any(aliased)
    # copy > in-place > view > compute: an in-place call that cloned first (F.silu(x,
    # inplace=True) or x.mul_(w) under autograd) copied; ``wrote_input`` says it also wrote
    if fresh_copy:
        kind = "copy"
    elif written_inputs and (
        not output_extents or any(shares_any(extents, written_inputs) for extents in output_extents)
    ):
        kind = "in-place"
    elif aliases_input:
        kind = "view"
    else:
        kind = "compute"
    return {
        "kind": kind,
        "aliases_input": aliases_input,
        "allocated": not all(aliased),
        "wrote_input": bool(written_inputs),
    }


def _recorded_event(
    index: int,
    call: str,
    pending: Any,
    returned_input: bool,
    fields: dict[str, Any],
    filename: str,
    line: int,
    inputs: tuple,
    outputs: tuple,
) -> CopyEvent:
    """The event of one recorded call, from its classified ``fields`` (:func:`classify`) and
    what the tracker noted: one constructor for the lazy log and the audit's eager recorder."""
    return CopyEvent._recorded(
        index=index,
        call=call,
        ops=tuple(pending.ops),
        returned_input=returned_input,
        **fields,
        bytes_copied=pending.bytes_copied,
        filename=filename,
        line=line,
        _inputs=inputs,
        _outputs=outputs,
        transforms=pending.transforms,
    )


class CopyLog:
    """The events a :func:`track_copies` block recorded, in call order.

    Displays as a table (text in a terminal, HTML in a notebook); ``show(i)`` draws event ``i``'s
    input and output storages with the widget.

    >>> import torch, stridewidget as sw
    >>> x = torch.arange(12.0).reshape(3, 4)
    >>> with sw.track_copies() as log:
    ...     w = x.view(-1)
    ...     z = x[:, 1:].flatten()
    >>> [(e.call, e.kind) for e in log.events]
    [('torch.Tensor.view', 'view'), ('torch.Tensor.__getitem__', 'view'), ('torch.Tensor.flatten', 'copy')]
    >>> len(log.copies), log.total_bytes
    (1, 36)
    """

    def __init__(self) -> None:
        self._events: list[CopyEvent] = []
        #: What the tracker saw of each call not made an event yet, in call order: ``(call,
        #: pending, inputs, outputs, returned_input, filename, line)``, made into events (and
        #: classified, :func:`classify`) when :attr:`events` is read.  Building and classifying an
        #: event in the dispatch hook was half of the tracker's Python per call.
        self.recorded: list[tuple[Any, ...]] = []
        self.active = True

    @property
    def events(self) -> list[CopyEvent]:
        """The events, in call order."""
        if self.recorded:
            self._build()
        return self._events

    def _build(self) -> None:
        events, recorded = self._events, self.recorded
        self.recorded = []
        for call, pending, inputs, outputs, returned_input, filename, line in recorded:
            fields = classify(inputs, outputs, pending, returned_input)
            events.append(
                _recorded_event(len(events), call, pending, returned_input, fields, filename, line,
                               inputs, outputs)
            )  # fmt: skip

    def let_go(self) -> None:
        """When the block ends: drop the log's weak references to the tensors it saw, which
        ``torch.utils.swap_tensors`` refuses (``module.to()`` of a tensor-subclass parameter, or
        with ``torch.__future__.set_swap_module_params_on_conversion``, swaps each parameter and
        its ``.grad``; ``load_state_dict`` with swapping also the buffers).  Each snapshot's
        layout is read first; :meth:`show` draws a tensor over its storage while that lives."""
        pairs = [(e._inputs, e._outputs) for e in self._events]
        pairs += [(entry[2], entry[3]) for entry in self.recorded]  # not made events yet
        for pair in pairs:
            for snapshots in pair:
                for snapshot in snapshots:
                    ref = snapshot.ref
                    if ref is not None and ref() is not None:
                        snapshot.release()

    @property
    def copies(self) -> list[CopyEvent]:
        """Events that moved existing data into new storage (``kind == "copy"``)."""
        return [event for event in self.events if event.kind == "copy"]

    @property
    def total_bytes(self) -> int:
        """Bytes written by data-movement ops in the whole block (includes ``x.copy_(y)``)."""
        return sum(event.bytes_copied for event in self.events)

    def __len__(self) -> int:
        return len(self.events)

    def __iter__(self) -> Iterator[CopyEvent]:
        return iter(self.events)

    def __getitem__(self, index: int) -> CopyEvent:
        return self.events[index]

    def summary(self) -> str:
        """One line: counts per kind and the bytes copied.

        >>> import torch, stridewidget as sw
        >>> with sw.track_copies() as log:
        ...     y = torch.ones(2, 3).t().contiguous()
        >>> log.summary()
        'CopyLog: 3 events (1 copy, 1 view, 1 compute); 24 B copied'
        """
        counts = {kind: 0 for kind in KINDS}
        for event in self.events:
            counts[event.kind] += 1
        kinds = ", ".join(f"{n} {kind}" for kind, n in counts.items() if n)
        state = " (still recording)" if self.active else ""
        return (
            f"CopyLog: {len(self.events)} events{state} ({kinds or 'none'}); "
            f"{format_bytes(self.total_bytes)} copied"
        )

    def _rows(self, max_rows: int, compact: bool) -> tuple[list[tuple[str, ...]], int]:
        rows = []
        for event in self.events[:max_rows]:
            source = layout_text(event.inputs, compact)
            result = layout_text(event.outputs, compact)
            if event.returned_input:
                result = "(its input itself)"
            transforms = f" [{'·'.join(event.transforms)}]" if event.transforms else ""
            rows.append(
                (
                    str(event.index),
                    short_call(event.call) + transforms,
                    event.kind,
                    format_bytes(event.bytes_copied) if event.bytes_copied else "",
                    ops_text(event.ops),
                    source,
                    result,
                    event.location,
                )
            )
        return rows, max(0, len(self.events) - max_rows)

    _HEADER = ("#", "call", "kind", "copied", "ATen ops", "input", "output", "where")

    def to_text(self, max_rows: int = 50) -> str:
        """The table as plain text (what ``repr`` shows), at most ``max_rows`` events.

        >>> import torch, stridewidget as sw
        >>> with sw.track_copies() as log:
        ...     y = torch.arange(4.0).flip(0)
        >>> print(log.to_text())  # doctest: +NORMALIZE_WHITESPACE +ELLIPSIS
        CopyLog: 2 events (1 copy, 1 compute); 16 B copied
        #  call          kind     copied  ATen ops     input          output         where
        0  torch.arange  compute          aten.arange                 float32 (4):(1)  ...
        1  Tensor.flip   copy     16 B    aten.flip    float32 (4):(1)  float32 (4):(1)  ...
        """
        rows, hidden = self._rows(max_rows, compact=True)
        table = [self._HEADER, *rows]
        widths = [min(48, max(len(row[c]) for row in table)) for c in range(len(self._HEADER))]
        lines = [self.summary()]
        for row in table:
            cells = [clip(cell, width).ljust(width) for cell, width in zip(row, widths)]
            lines.append("  ".join(cells).rstrip())
        if hidden:
            lines.append(f"... {hidden} more events in log.events")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.to_text()

    def _repr_html_(self, max_rows: int = 200) -> str:
        rows, hidden = self._rows(max_rows, compact=False)
        escape = html.escape
        head = "".join(f"<th style='text-align:left'>{escape(h)}</th>" for h in self._HEADER)
        body = []
        for row in rows:
            cells = "".join(
                "<td style='text-align:left;vertical-align:top;font-family:monospace;"
                f"white-space:pre-line'>{escape(cell)}</td>"
                for cell in row
            )
            tint = _KIND_TINT[row[2]]
            body.append(f"<tr style='background:{tint}'>{cells}</tr>")
        more = f"<p>… {hidden} more events in <code>log.events</code></p>" if hidden else ""
        return (
            f"<div><p><b>{escape(self.summary())}</b></p>"
            f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
            f"{more}<p style='font-size:smaller'>Draw one: <code>log.show(i)</code></p></div>"
        )

    def show(self, index: int) -> Any:
        """Draw event ``index``'s first input (``src``) and first output (``dst``) with the widget.

        In the block, the live tensors.  After it the log holds no tensor (see :meth:`let_go`):
        a tensor alive when the block ended is drawn as a view of its storage in the layout
        recorded (its values now) while that storage lives where and as large as it was, and the
        widget holds those views (their storages stay alive while it does); a tensor freed before
        the block ended, or whose storage is gone, is drawn as its recorded layout (no values).
        Returns what ``stridewidget.show`` returns.

        >>> import torch, stridewidget as sw
        >>> x = torch.arange(6.0).reshape(2, 3)
        >>> with sw.track_copies() as log:
        ...     y = x.t().reshape(-1)
        >>> widget = log.show(1)          # the copy: src and dst on two storages
        >>> widget.names, len(widget.scene["storages"])
        (['src', 'dst'], 2)
        """
        if not -len(self.events) <= index < len(self.events):
            raise IndexError(
                f"CopyLog.show: no event {index}; this log has {len(self.events)} events "
                "(numbered in the table's '#' column)"
            )
        event = self.events[index]
        drawn = {}
        for label, snapshots in (("src", event._inputs), ("dst", event._outputs)):
            if snapshots:
                drawn[label] = snapshots[0].drawable()
                if drawn[label] is None:  # sparse, nested ...: no strides were recorded
                    raise ValueError(
                        f"CopyLog.show: event {index}'s {label} ({event.call}) has no strided "
                        "layout to draw"
                    )
        if not drawn:
            raise ValueError(f"CopyLog.show: event {index} ({event.call}) has no tensor to draw")
        from ..notebook.widget import show

        widget = show(**drawn)
        # the views of storages made here: the widget holds them weakly, and nothing else would
        with contextlib.suppress(AttributeError):
            widget._drawn_views = [v for v in drawn.values() if not isinstance(v, Layout)]
        return widget


_KIND_TINT = {
    "copy": "rgba(230,120,40,0.18)",
    "in-place": "rgba(160,90,200,0.15)",
    "view": "rgba(40,150,90,0.12)",
    "compute": "transparent",
}
