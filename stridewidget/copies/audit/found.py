"""What the audit found: :class:`AuditCopy` per copy, the :class:`Row` they are grouped into, and
the names rows are shown by (:data:`TOP`, :data:`SCALARS_ROW`, :func:`op_names`): shared by the
report and its HTML."""

from __future__ import annotations

from dataclasses import dataclass, field

from ...layout.layout import Layout
from ..format import format_bytes
from ..log import CopyEvent

__all__ = [
    "COUNTS_NOTE",
    "IN_PLACE_MARK",
    "OPS_SEPARATOR",
    "SCALARS_ROW",
    "TOP",
    "AuditCopy",
    "Row",
    "counted_op",
    "in_place_note",
    "op_names",
    "ops_cell",
    "row_op_counts",
    "row_ops",
    "row_ops_parts",
    "unmeasured_note",
]

#: How the root module (named ``""`` by ``named_modules()``) is shown.
TOP = "(model)"
_SCALAR_BYTES = 16  # a complex128 scalar, the largest
#: The one row that all Python scalars wrapped as 0-dim tensors are grouped on.
SCALARS_ROW = "(Python scalars wrapped as 0-dim tensors)"
#: Shown after the ATen op of a copy whose call also wrote in place (:attr:`AuditCopy.in_place`).
IN_PLACE_MARK = " (in-place call)"


@dataclass(frozen=True, eq=False)
class AuditCopy:
    """One event of the audited step that moved data into new storage.

    ``module`` is a name from ``model.named_modules()`` (``""`` for the model itself); ``ops`` are
    the data-movement ATen ops (``event.ops`` has every op the call ran); ``where``
    is the source line (``resnet.py:96``) — for a backward copy, the forward line whose gradient
    made it — or the autograd node's name when no line exists; ``call`` is the user-level call
    (forward) or the autograd node (backward) whose ATen ``ops`` hid the copy.  A copy made
    *inside* a kernel (``addmm`` cloning a gapped operand), seen by the profiler but by no
    dispatch mode, has ``hidden_in`` set to that op; its ``result`` is empty (the buffer never
    reaches Python) and ``source`` holds the call's inputs.  ``in_place`` says the call that
    copied also wrote into an input's storage (``F.silu(h, inplace=True)`` or ``h.mul_(w)``,
    which autograd makes clone ``h`` first): precedence copy > in-place, so it is a copy, with
    this flag.  A copy into a buffer the step allocated blank (``out[:n] = a``) is not flagged:
    writing that buffer is the copy.
    """

    phase: str  # "forward" or "backward"
    module: str
    where: str
    call: str
    ops: tuple[str, ...]
    bytes: int
    event: CopyEvent
    hidden_in: str = ""  # the ATen op whose kernel made this copy internally ("aten.addmm")
    # made while activation checkpointing re-ran a forward line in backward (``where`` is it)
    recompute: bool = False
    # the library line under ``where`` (``torch/nn/modules/conv.py:560``) when ``where`` is the
    # model's own line that called into it; else ""
    detail: str = ""
    # the call also wrote in place (an in-place call that cloned its input first)
    in_place: bool = False

    # The layouts are read from the event when asked for: the tracker builds them lazily, and
    # building them for every copy of every audited step is a large part of the audit's cost.
    @property
    def source(self) -> tuple[Layout | None, ...]:
        """The layouts of the call's inputs."""
        return self.event.inputs

    @property
    def result(self) -> tuple[Layout | None, ...]:
        """The layouts of the call's results; empty for a copy hidden in a kernel."""
        return () if self.hidden_in else self.event.outputs

    # a Python number that torch wrapped as a 0-dim tensor and converted (``x * 0.5``)
    scalar: bool = False

    @property
    def wrapped_scalar(self) -> bool:
        """A Python scalar made a 0-dim tensor and converted (``x * 0.5``: a ``_to_copy`` of one
        element, 1 to 16 bytes by dtype); never a 0-dim tensor the user converted
        (``t.to(torch.float64)``).  A copy hidden in a kernel has no Python source to tell: one
        ``_to_copy`` of a single element (:data:`_SCALAR_BYTES` at most) is taken for one.  Kept
        in ``report.copies``; summaries and tables show all of them as one row."""
        if self.hidden_in:
            return self.ops == ("aten._to_copy",) and self.bytes <= _SCALAR_BYTES
        return self.scalar


def op_names(item: AuditCopy) -> tuple[str, ...]:
    """``aten.clone``, or ``aten.clone in aten.addmm`` for a copy a kernel hid, and
    :data:`IN_PLACE_MARK` after each when the call also wrote in place (``in_place``).

    The ATen ops a table shows for a copy (:class:`Row` ``.ops``, the HTML's column).
    """
    names = _names(item)
    return tuple(f"{name}{IN_PLACE_MARK}" for name in names) if item.in_place else names


def _names(item: AuditCopy) -> tuple[str, ...]:
    return tuple(f"{op} in {item.hidden_in}" for op in item.ops) if item.hidden_in else item.ops


def _tally(items: list[AuditCopy]) -> dict[str, list[int]]:
    # each op name of the row's copies -> [how many times it ran, how many of those wrote in place]
    seen: dict[str, list[int]] = {}
    for item in items:
        for name in _names(item):
            counts = seen.setdefault(name, [0, 0])
            counts[0] += 1
            counts[1] += item.in_place
    return seen


def row_ops(items: list[AuditCopy]) -> tuple[str, ...]:
    """The ATen ops of a table row's copies, each once: with :data:`IN_PLACE_MARK` when every
    copy of it came from a call that also wrote in place, ``(2 of 3 in-place calls)`` when some
    did, bare when none did."""
    return tuple(
        name
        + (
            IN_PLACE_MARK
            if in_place == total
            else f" ({in_place} of {total} in-place calls)"
            if in_place
            else ""
        )
        for name, (total, in_place) in _tally(items).items()
    )


def row_op_counts(items: list[AuditCopy]) -> tuple[int, ...]:
    """How many times each op of :func:`row_ops` ran in the row's copies, in the same order."""
    return tuple(total for total, _ in _tally(items).values())


def counted_op(op: str, n: int) -> str:
    """``op`` as a table shows it when it ran ``n`` times: the count goes on the copy op itself,
    before what it ran inside (``aten.clone×3 in aten.convolution_backward``: three clones in
    convolution backwards, not three convolution backwards); bare when it ran once, or when its
    in-place note already says how many times.

    >>> counted_op("aten.clone in aten.convolution_backward", 3)
    'aten.clone×3 in aten.convolution_backward'
    >>> counted_op("aten.clone (in-place call)", 2), counted_op("aten.cat", 1)
    ('aten.clone×2 (in-place call)', 'aten.cat')
    """
    if n == 1 or "in-place calls)" in op:
        return op
    first, _, rest = op.partition(" ")
    return f"{first}×{n}" + (f" {rest}" if rest else "")


#: Between the op kinds of one table cell (a kind has spaces of its own: ``aten.clone in aten.mm``).
OPS_SEPARATOR = " · "


def in_place_note(writes: list[tuple[str, str, int]]) -> str:
    """The report's note on data written in place into storage that already held data (no copy,
    so in no row): how many writes, their bytes, and the calls or autograd nodes that wrote;
    ``""`` when there were none.

    >>> print(in_place_note([("backward", "CopySlices", 16384)]))
    not counted as copies: 1 in-place write of 16.0 KiB into storage that already held data, by CopySlices in backward
    >>> in_place_note([])
    ''
    """
    if not writes:
        return ""
    size = format_bytes(sum(size for _, _, size in writes))
    where = " and ".join(
        f"{', '.join(dict.fromkeys(call for p, call, _ in writes if p == phase))} in {phase}"
        for phase in dict.fromkeys(phase for phase, _, _ in writes)
    )
    number = f"{len(writes)} in-place write{'s' if len(writes) != 1 else ''}"
    held = "into storage that already held data"
    return f"not counted as copies: {number} of {size} {held}, by {where}"


def unmeasured_note(nodes: list[str]) -> str:
    """The report's note on autograd nodes whose backward formula is another one under the
    audit's modes (:data:`~.recorders.OTHER_FORMULA_UNDER_A_MODE`): their copies are not
    counted, and the plain step's there are not measured; ``""`` when there were none.

    >>> print(unmeasured_note(["ProdBackward1"]))
    not measured: the copies of ProdBackward1 in backward (under the audit's dispatch modes torch runs another formula there, with other copies than the plain step's)
    >>> unmeasured_note([])
    ''
    """
    if not nodes:
        return ""
    return (
        f"not measured: the copies of {', '.join(nodes)} in backward (under the audit's "
        "dispatch modes torch runs another formula there, with other copies than the plain "
        "step's)"
    )


#: What a table's two counts count, said once under it.
COUNTS_NOTE = (
    "count: the row's copies; ×N after an ATen op: how many times that op ran in them "
    "(a copy can run several)"
)


def ops_cell(names: tuple[str, ...]) -> str:
    """One copy's ATen ops as a table cell: runs of one op counted (:func:`counted_op`), kinds
    separated by :data:`OPS_SEPARATOR`.

    >>> ops_cell(("aten.clone in aten.mm", "aten.clone in aten.mm", "aten.cat")), ops_cell(())
    ('aten.clone×2 in aten.mm · aten.cat', '(no op)')
    """
    runs: list[list] = []
    for name in names:
        if runs and runs[-1][0] == name:
            runs[-1][1] += 1
        else:
            runs.append([name, 1])
    return OPS_SEPARATOR.join(counted_op(name, n) for name, n in runs) or "(no op)"


def row_ops_parts(row: Row) -> list[str]:
    """A row's op kinds as the tables show them, each with its count (:func:`counted_op`).

    >>> row_ops_parts(Row("x", "backward", 4, 64, ("aten.clone", "aten.select_backward"), (3, 1)))
    ['aten.clone×3', 'aten.select_backward']
    """
    counts = row.op_counts or (1,) * len(row.ops)
    return [counted_op(op, n) for op, n in zip(row.ops, counts)]


@dataclass(frozen=True)
class Row:
    """One line of :meth:`AuditReport.by_line` / :meth:`AuditReport.by_module`."""

    key: str
    phase: str
    count: int
    bytes: int
    ops: tuple[str, ...]
    #: how many times each of ``ops`` ran in the row's copies (``ops`` names each kind once)
    op_counts: tuple[int, ...] = field(default=(), repr=False, compare=False)
