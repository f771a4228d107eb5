"""Copies a kernel makes inside itself, read from one profiler session's events.

Each outermost profiler event after a thread's mark is paired with the next op the audit marked
for that thread (:class:`Pairing`); below it, :class:`Search` finds what moved data into new
storage inside that op's kernel, the same data movement the tracker counts (``COPY_OPS``):

* each outermost op of :data:`NEW_STORAGE_COPIES` (``clone``, ``_to_copy``, ``index_select``,
  ``cat`` ... every op of ``COPY_OPS`` that returns new storage), its bytes those of its result's
  buffer;
* each ``copy_`` that fills a buffer its calling op (the marked op itself too, unless the
  tracker counts that op as a copy: then its own event says what it copied) allocated, from that
  op's one input tensor (``sort``'s CPU kernel copies its input into its new values buffer, then
  sorts that in place; ``linalg_qr``, ``linalg_eigh`` and ``linalg_lu_factor_ex`` copy theirs
  into their results, directly under the op).  The profilers record
  no addresses, so this is read from what they do record: the ``copy_``'s source and destination
  have the shape of the op's one input tensor (and, where dtypes are recorded, its dtype), no op
  inside the caller made a tensor before it (so the source is older than the call), and the
  caller allocated, before it, a buffer of the destination's size.

:func:`hidden_copies_kineto` reads ``torch.profiler``'s events (nested by time),
:func:`hidden_copies_legacy` the legacy collector's records (nested by push and pop).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from ..ops import COPY_OPS

__all__ = [
    "NEW_STORAGE_COPIES",
    "THREAD_MARK",
    "Pairing",
    "Search",
    "hidden_copies_kineto",
    "hidden_copies_legacy",
]

THREAD_MARK = "sw.audit:thread:"
#: The ops of ``COPY_OPS`` whose result is new storage filled with existing values; the outermost
#: one under a kernel is counted (``clone`` runs ``copy_`` into its own buffer).  Left out: the
#: ones that write into a tensor they are given (``copy_``, ``_copy_from``,
#: ``_copy_from_and_resize``: see :meth:`Search.filled` for ``copy_``).  ``contiguous`` is not
#: one: recorded, it may have found nothing to do; when it copies, a ``clone`` under it counts.
NEW_STORAGE_COPIES = frozenset(
    f"aten::{name}" for name in COPY_OPS - {"copy_", "_copy_from", "_copy_from_and_resize"}
)
# Whose result has the shape and dtype the event records for its first input (``_to_copy``: or
# the dtype it is given): the bytes ``torch.profiler``'s shapes give exactly on any device; the
# other copies' bytes are their buffer's, from the allocations recorded inside them.
_SHAPED = frozenset({"aten::clone", "aten::_to_copy"})
# Ops that only allocate: a buffer one of them makes inside an op is that op's own.
_ALLOCATING = frozenset(
    {"aten::empty", "aten::empty_like", "aten::empty_strided", "aten::resize_", "aten::new_empty"}
)
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
_ITEMSIZES = (1, 2, 4, 8, 16)
# Where a counted copy's bytes come from: its allocations (none yet, some), or its shapes.
_NONE, _ALLOCATED, _FIXED = 0, 1, 2


class Pairing:
    """Pairs a thread's outermost profiler events with the ops ``marked`` noted for it, in order:
    ``(event index, profiler name)``, with a third item (true) for an op whose call the tracker
    counts as a copy itself (:attr:`moves`)."""

    def __init__(self, ops: list[tuple[Any, ...]]) -> None:
        self.ops = ops
        self.position = 0  # of the next op not paired yet
        self.moves = False  # the op last paired is a copy of the tracker's

    def next(self, name: str) -> int:
        """The tracker event index of the next op named ``name`` (ops before it recorded no
        event), or -1 when no op still to come has that name (an event not of the audit's).

        >>> Pairing([(3, "aten::mm"), (5, "aten::addmm")]).next("aten::addmm")
        5
        """
        ops = self.ops
        for position in range(self.position, len(ops)):
            op = ops[position]
            if op[1] == name:
                self.position = position + 1
                self.moves = len(op) > 2
                return op[0]
        return -1


class _Frame:
    """One open op under a marked one."""

    __slots__ = (
        "allocated",
        "allocs",
        "copy",
        "depth",
        "event",
        "hiding",
        "index",
        "key",
        "made",
        "moves",
    )
    allocating = False

    def __init__(
        self, key: int, index: int, hiding: str, copy: list | None, event: Any, depth: int
    ):
        self.key = key  # the legacy record's handle, or the event's end (ns)
        self.index = index  # the tracker event of the marked op (-1: not the audit's)
        self.hiding = hiding  # the marked op's profiler name
        self.copy = copy  # the counted copy it is in: [hiding, op, bytes, _FIXED ...], or None
        self.event = event
        self.depth = depth  # 0: the marked op
        self.allocs: list[int] = []  # sizes of the buffers it allocated itself, in order
        self.allocated = False  # it, or an op inside it, allocated
        self.made = False  # an op inside it (not one of _ALLOCATING) allocated
        self.moves = False  # the marked op is a copy of the tracker's (see Search.open)


class _Allocating(_Frame):
    __slots__ = ()
    allocating = True


class Search:
    """What moved data into new storage inside the marked ops of one thread's events, fed in
    order: :meth:`open` and :meth:`close` an op, :meth:`alloc` a buffer.  ``dtypes``: the events
    record dtypes (``torch.profiler``), else only shapes (the legacy collector).

    >>> search = Search({}, dtypes=False)
    >>> search.open(1, "aten::mm", None, index=4)
    >>> search.open(2, "aten::index_select", None); search.alloc(96); search.close()
    >>> search.found[4][0][:3]  # (op that hid it, copy op, bytes)
    ['aten.mm', 'aten.index_select', 96]
    """

    def __init__(self, found: dict[int, list[list]], dtypes: bool) -> None:
        self.found = found
        self.dtypes = dtypes
        self.stack: list[_Frame] = []

    def open(self, key: int, name: str, event: Any, index: int = -1, moves: bool = False) -> None:
        """An op starts: a marked one (``index``, its tracker event; ``moves``: the tracker
        counts its call as a copy) when none is open.  Inside a marked op the tracker counts as a
        copy (``embedding``, ``pow(x, 1)``), its kernel's gather or ``copy_`` makes the result
        that copy is: only a ``_to_copy`` (to another dtype) or a ``clone`` of another tensor it
        takes (:meth:`_of_another_input`) is a copy of its own."""
        stack = self.stack
        if not stack:
            frame = _Frame(key, index, name, None, event, 0)
            frame.moves = moves
            stack.append(frame)
            return
        caller = stack[-1]
        copy = caller.copy
        if copy is None and caller.index >= 0:
            if name in NEW_STORAGE_COPIES and (
                not caller.moves
                or name == "aten::_to_copy"
                or (name == "aten::clone" and self._of_another_input(event))
            ):
                copy = self._count(caller, name, _shaped_bytes(name, event) if self.dtypes else -1)
            elif name == "aten::copy_" and not caller.moves:
                size = self.filled(caller, event)
                if size:
                    copy = self._count(caller, name, size)
        frame = (_Allocating if name in _ALLOCATING else _Frame)(
            key, caller.index, caller.hiding, copy, event, caller.depth + 1
        )
        frame.moves = caller.moves
        stack.append(frame)

    def _of_another_input(self, clone: Any) -> bool:
        """Inside a marked op the tracker counts as a copy, is this ``clone`` of a tensor the op
        takes besides the one whose values it moves (``embedding``'s indices, reshaped)?  A clone
        of that first input or of the op's result is how its kernel moves those values: the
        tracker's one copy (``upsample_nearest2d``'s channels-last loop clones its input and
        result, then copies back; ``index_fill`` clones ``self`` and fills the clone), which
        ``torch.profiler`` nets into the op's own allocation."""
        shapes = clone.shapes()
        inputs = self._tensor_inputs(self.stack[0].event)
        if not shapes or not inputs:
            return False
        source = (shapes[0], clone.dtypes()[0]) if self.dtypes else (shapes[0], "")
        return source != inputs[0] and source in inputs[1:]

    def _count(self, caller: _Frame, name: str, size: int) -> list:
        hiding = caller.hiding.replace("::", ".")
        copy = [hiding, name.replace("::", "."), max(size, 0), _FIXED if size >= 0 else _NONE]
        self.found.setdefault(caller.index, []).append(copy)
        return copy

    def close(self) -> None:
        """The innermost open op ends."""
        frame = self.stack.pop()
        if self.stack and frame.allocated:
            caller = self.stack[-1]
            caller.allocated = True
            if not frame.allocating:
                caller.made = True

    def alloc(self, size: int) -> None:
        """A buffer of ``size`` bytes is allocated (a negative size: one is freed)."""
        if not self.stack:
            return
        frame = self.stack[-1]
        copy = frame.copy
        if copy is not None:
            # a copy's bytes: what stays allocated of what it allocated, its result's buffer (an
            # index with a mask allocates the mask's nonzero indices first, then frees them)
            if copy[3] != _FIXED:
                copy[2] += size
                if size > 0:
                    copy[3] = _ALLOCATED
            if size > 0:  # a tensor made inside its caller (a copy_ from it copies no input)
                frame.allocated = True
            return
        if size <= 0:
            return
        frame.allocated = True
        owner = self.stack[-2] if frame.allocating and len(self.stack) > 1 else frame
        owner.allocs.append(size)

    def filled(self, caller: _Frame, copy: Any) -> int:
        """Bytes of a ``copy_`` (event ``copy``) inside ``caller`` that fills a buffer ``caller``
        allocated from ``caller``'s one input tensor, else 0 (see the module's docstring)."""
        if caller.made:  # its source may be a tensor the caller made
            return 0
        shapes = copy.shapes()
        # a 0-d tensor's copy: only where dtypes say it is one (the legacy collector records a
        # number's shape and a 0-d tensor's alike)
        if len(shapes) < 2 or shapes[0] != shapes[1] or not (shapes[0] or self.dtypes):
            return 0
        numel = math.prod(shapes[0])
        inputs = self._tensor_inputs(caller.event)
        if numel == 0 or inputs is None or len(inputs) != 1 or inputs[0][0] != shapes[1]:
            return 0
        if self.dtypes:
            dtypes = copy.dtypes()
            if len(dtypes) < 2 or dtypes[1] != inputs[0][1]:
                return 0
            sizes = [numel * _CPP_ITEMSIZE.get(dtypes[0], 0)]
        else:
            sizes = [numel * itemsize for itemsize in _ITEMSIZES]
        for size in caller.allocs:
            if size in sizes:
                caller.allocs.remove(size)
                return size
        return 0

    def _tensor_inputs(self, event: Any) -> list[tuple[list[int], str]] | None:
        """(shape, dtype) of each tensor ``event``'s op was given; ``None`` for a list of them.
        Without dtypes, an input of no dimensions is taken for a number (the legacy collector
        records a 0-d tensor's shape and a number's alike)."""
        shapes = event.shapes()
        if not self.dtypes:
            return [(shape, "") for shape in shapes if shape]
        found = []
        for shape, dtype in zip(shapes, event.dtypes()):
            if dtype == "TensorList":
                return None
            if dtype in _CPP_ITEMSIZE:
                found.append((shape, dtype))
        return found


def _shaped_bytes(name: str, event: Any) -> int:
    """Bytes of a :data:`_SHAPED` copy's result from its recorded shape and dtype; -1 for
    another copy (its buffer's allocation says)."""
    if name not in _SHAPED:
        return -1
    shapes, dtypes = event.shapes(), event.dtypes()
    numel = math.prod(shapes[0]) if shapes else 1
    itemsize = _CPP_ITEMSIZE.get(dtypes[0] if dtypes else "", 0)
    if name == "aten::_to_copy":  # its result's dtype: the argument, if one is given
        inputs = event.concrete_inputs()
        if len(inputs) > 1 and inputs[1] is not None:
            itemsize = _SCALAR_TYPE_ITEMSIZE.get(inputs[1], 0)
    return numel * itemsize


def _results(found: dict[int, list[list]]) -> dict[int, list[tuple[str, str, int]]]:
    """The copies found, but those that kept nothing allocated: an ``out=`` call of a copy op
    (the profiler names it as the op), which writes into a tensor it was given
    (``_safe_softmax``'s ``where(mask, zero, out, out=out)``)."""
    results: dict[int, list[tuple[str, str, int]]] = {}
    for index, copies in found.items():
        kept = [
            (hiding, name, size)
            for hiding, name, size, state in copies
            if state == _FIXED or (state == _ALLOCATED and size > 0)
        ]
        if kept:
            results[index] = kept
    return results


def hidden_copies_kineto(
    events: Iterable[Any], marked: dict[int, list[tuple[Any, ...]]]
) -> dict[int, list[tuple[str, str, int]]]:
    """Event index -> (op that hid it, copy op, bytes) for copies made inside a non-copy op, from
    the events of ``torch.profiler`` (shapes, dtypes and allocations recorded).

    Nests the raw events by time per thread: building the profiler's own event tree
    (``profile.events()``) costs many times the audited step.  After a thread's mark, each
    outermost event is the next op of ``marked`` for that thread.  One of another name means that
    ops before it recorded no event (the dispatcher lets an operator opt out of observation):
    those are passed over; an event that names no op still to come is not one of the audit's and
    is left out, so one stray event cannot shift every later pairing.

    >>> hidden_copies_kineto([], {})
    {}
    """
    # (start, -end, name, event) per thread: each native accessor is called once per event
    by_thread: dict[int, list[tuple[int, int, str, Any]]] = {}
    for event in events:
        by_thread.setdefault(event.start_thread_id(), []).append(
            (event.start_ns(), -event.end_ns(), event.name(), event)
        )
    found: dict[int, list[list]] = {}
    for thread_events in by_thread.values():
        mark = next((item for item in thread_events if item[2].startswith(THREAD_MARK)), None)
        if mark is None:  # a thread that ran no op that can hide a copy
            continue
        pairing = Pairing(marked[int(mark[2][len(THREAD_MARK) :])])
        after = -mark[1]  # events before the mark are not the audit's (collection on by default)
        thread_events.sort(key=lambda item: item[:2])
        search = Search(found, dtypes=True)
        stack = search.stack
        for start, negative_end, name, event in thread_events:
            if start < after or event is mark[3]:
                continue
            while stack and stack[-1].key <= start:
                search.close()
            if name == "[memory]":
                search.alloc(event.nbytes())
            elif stack:
                search.open(-negative_end, name, event)
            else:  # an op that can hide a copy (never a copy op)
                index = pairing.next(name)
                search.open(-negative_end, name, event, index, pairing.moves)
    return _results(found)


def hidden_copies_legacy(
    records: list[list[Any]], marked: dict[int, list[tuple[Any, ...]]]
) -> dict[int, list[tuple[str, str, int]]]:
    """:func:`hidden_copies_kineto` from the legacy profiler's records (shapes and allocations
    recorded): a list of events per thread in the order they happened, each op a ``push`` and a
    ``pop`` (nesting needs no timestamps), each allocation a ``memory_alloc`` with its size.  A
    copy's bytes are what its allocations inside it leave allocated: its result's buffer
    (``clone`` = ``empty_like`` + ``copy_``; a temporary freed inside it adds nothing).

    >>> hidden_copies_legacy([[]], {})
    {}
    """
    found: dict[int, list[list]] = {}
    # Tens of records per op that can hide a copy, nearly all read only to keep the nesting: each
    # record's accessors are native calls, so each is called at most once, and a pop is matched
    # with the innermost open op first (always, unless records were left out).
    for events in records:
        pairing: Pairing | None = None
        search = Search(found, dtypes=False)
        stack = search.stack
        for event in events:
            kind = event.kind()
            if kind == "pop":
                if stack:
                    handle = event.handle()
                    if stack[-1].key == handle:
                        search.close()
                    else:
                        for depth in range(len(stack) - 2, -1, -1):
                            if stack[depth].key == handle:
                                while len(stack) > depth:
                                    search.close()
                                break
            elif kind == "push":
                name = event.name()
                if stack:
                    search.open(event.handle(), name, event)
                elif pairing is not None:  # an op that can hide a copy (never a copy op)
                    index = pairing.next(name)
                    search.open(event.handle(), name, event, index, pairing.moves)
                elif name.startswith(THREAD_MARK):  # before it: not the audit's
                    pairing = Pairing(marked[int(name[len(THREAD_MARK) :])])
            elif kind == "memory_alloc":
                search.alloc(event.cpu_memory_usage())
    return _results(found)
