"""sw.audit's search for copies inside kernels (``copies/audit/hidden.py``) on profiler events
and records made up to show each rule: what moves data into new storage under a marked op."""

import pytest
import torch
from test_audit import _FakeEvent, _ProfilerEvent


def _Record(kind, name="", handle=0, usage=0, shapes=()):
    return _FakeEvent(
        kind=kind, name=name, handle=handle, cpu_memory_usage=usage, shapes=list(shapes)
    )


def _call(name, handle, shapes, *inside):
    return [_Record("push", name, handle, shapes=shapes), *inside, _Record("pop", handle=handle)]


def test_legacy_records_count_what_moves_into_new_storage_inside_a_kernel():
    """Inside a marked op: an outermost new-storage op of COPY_OPS (``index_select``), its bytes
    its buffer's (an ``index`` with a mask: not its mask's indices, freed inside it); a ``copy_`` filling a buffer its caller allocated from the caller's one input
    (``sort``; under the marked op itself too), but not one whose source the caller made
    (``arange``), one under a marked op the tracker counts as a copy itself (``pow(x, 1)``) or a
    caller of two tensors; no ``out=`` call (nothing allocated); inside an op the
    tracker counts as a copy (``embedding``), only a ``clone`` of another input than its first
    (its indices; one of its table is how it moves the table's rows)."""
    from stridewidget.copies.audit.profiler import THREAD_MARK as _THREAD_MARK
    from stridewidget.copies.audit.profiler import Marked as _Marked
    from stridewidget.copies.audit.profiler import hidden_copies_legacy as _hidden_copies_legacy

    marked = _Marked(
        {
            7: [
                (2, "aten::_embedding_bag_backward"),
                (3, "aten::embedding", True),
                (4, "aten::pow", True),
                (5, "aten::addmm"),
                (6, "aten::sort"),
            ]
        }
    )
    vector = [[24], [24], []]

    def alloc(size):
        return _Record("memory_alloc", usage=size)

    records = [
        [
            *_call(f"{_THREAD_MARK}7", 1, []),
            *_call(
                "aten::_embedding_bag_backward",
                2,
                [[4, 8], [24]],
                *_call(
                    "aten::sort",
                    3,
                    [[24], [], [], []],
                    alloc(192),  # values
                    alloc(192),  # indices
                    *_call("aten::copy_", 4, vector),  # values = input: counted
                    *_call("aten::arange", 5, [[], []], alloc(192)),
                    *_call("aten::copy_", 6, vector),  # indices = arange: made inside
                    alloc(-192),
                ),
                *_call("aten::index_select", 7, [[24], [], [24]], alloc(192)),
                *_call("aten::where", 8, [[24], [], [24], [24]]),  # out=: allocates nothing
                *_call(
                    "aten::index",
                    17,
                    [[24], []],
                    *_call("aten::nonzero", 18, [[24]], alloc(192)),  # a mask's indices
                    alloc(48),  # the result
                    alloc(-192),
                ),
            ),
            *_call(
                "aten::embedding",
                9,
                [[50, 8], [24]],
                *_call("aten::clone", 10, [[24], []], alloc(192)),  # of its indices: counted
                *_call("aten::clone", 19, [[50, 8], []], alloc(1600)),  # of what it gathers
                *_call("aten::index_select", 11, [[50, 8], [], [24]], alloc(768)),
            ),
            *_call("aten::pow", 12, [[3], []], alloc(12), *_call("aten::copy_", 13, [[3], [3]])),
            *_call(
                "aten::addmm",
                14,
                [[4], [2, 3], [3, 4]],
                *_call(
                    "aten::two_inputs",
                    15,
                    [[4], [4]],
                    alloc(16),
                    *_call("aten::copy_", 16, [[4], [4], []]),
                ),
            ),
            *_call(  # sort.stable: its copy_ of its input directly under it
                "aten::sort",
                20,
                [[24], [], [], []],
                alloc(96),  # values
                alloc(192),  # indices
                *_call("aten::copy_", 21, [[24], [24], []]),
            ),
        ]
    ]
    assert _hidden_copies_legacy(records, marked) == {
        2: [
            ("aten._embedding_bag_backward", "aten.copy_", 192),
            ("aten._embedding_bag_backward", "aten.index_select", 192),
            ("aten._embedding_bag_backward", "aten.index", 48),
        ],
        3: [("aten.embedding", "aten.clone", 192)],
        6: [("aten.sort", "aten.copy_", 96)],
    }


def _Timed(name, start, end, shapes=(), dtypes=(), nbytes=0):
    return _ProfilerEvent(name, start, end, shapes, dtypes, nbytes=nbytes)


def test_profiler_events_count_what_moves_into_new_storage_inside_a_kernel():
    """:func:`test_legacy_records_count_what_moves_into_new_storage_inside_a_kernel` with
    ``torch.profiler``'s events, nested by time, allocations as ``[memory]`` events and dtypes
    recorded: a ``copy_`` of another dtype than its caller's input is not that input."""
    from stridewidget.copies.audit.profiler import THREAD_MARK as _THREAD_MARK
    from stridewidget.copies.audit.profiler import Marked as _Marked
    from stridewidget.copies.audit.profiler import hidden_copies_kineto as _hidden_copies

    marked = _Marked({7: [(2, "aten::_embedding_bag_backward"), (3, "aten::sort")]})
    long, vector = ["long int", "long int", "Scalar"], [[24], [24], []]
    events = [
        _Timed(f"{_THREAD_MARK}7", 0, 1),
        _Timed("aten::_embedding_bag_backward", 10, 100, [[4, 8], [24]], ["float", "long int"]),
        _Timed("aten::sort", 20, 50, [[24], [], [], []], ["long int", "Scalar"]),
        _Timed("[memory]", 21, 21, nbytes=192),
        _Timed("[memory]", 22, 22, nbytes=192),
        _Timed("aten::copy_", 23, 24, vector, long),  # values = input: counted
        _Timed("aten::arange", 25, 28),
        _Timed("[memory]", 26, 26, nbytes=192),
        _Timed("aten::copy_", 29, 30, vector, long),  # indices = arange: made inside
        _Timed("aten::index_select", 60, 70, [[24], [], [24]], ["long int", "Scalar", "long int"]),
        _Timed("[memory]", 61, 61, nbytes=192),
        _Timed("aten::where", 71, 72, [[24], [], [24], [24]]),  # out=: allocates nothing
        _Timed("aten::sort", 110, 150, [[24], [], [], []], ["float", "Scalar"]),
        _Timed("aten::sort", 111, 140, [[24], [], [], []], ["float", "Scalar"]),
        _Timed("[memory]", 112, 112, nbytes=192),
        _Timed("aten::copy_", 113, 114, vector, long),  # not the float input
    ]
    assert _hidden_copies(list(reversed(events)), marked) == {
        2: [
            ("aten._embedding_bag_backward", "aten.copy_", 192),
            ("aten._embedding_bag_backward", "aten.index_select", 192),
        ]
    }


@pytest.mark.parametrize("session", ["legacy collector", "torch.profiler"])
def test_a_hidden_copys_bytes_are_its_results_buffer(session):
    """With each real profiler session, each copy op run inside a marked op (a labelled range
    stands for it) is found with its result's bytes: not a mask's indices that ``x[mask]`` and
    ``masked_select`` allocate and free first, nor the number ``where`` wraps; ``sort``'s
    ``copy_`` of its input with its values' bytes."""
    import threading

    from stridewidget._compat import record_function_fast
    from stridewidget.copies.audit.profiler import (
        THREAD_MARK,
        KinetoSession,
        LegacySession,
        Marked,
        collect,
    )

    torch.manual_seed(0)
    x = torch.randn(64, 64)
    mask, rows = x > 0, torch.tensor([3, 1, 1, 7])
    calls = {
        "aten::index": lambda: x[mask],
        "aten::masked_select": lambda: x.masked_select(mask),
        "aten::where": lambda: torch.where(mask, x, 0.0),
        "aten::index_select": lambda: x.index_select(1, rows),
        "aten::cat": lambda: torch.cat([x, x.t()]),
        "aten::repeat": lambda: x[:4].repeat(2, 3),
    }
    profiler = LegacySession() if session == "legacy collector" else KinetoSession()
    ident = threading.get_ident()
    marked = Marked({ident: [(i, f"sw.test::{i}") for i in range(len(calls) + 1)]})
    results = []
    profiler.start()
    try:
        collect(True)
        with record_function_fast(f"{THREAD_MARK}{ident}"):
            pass
        for i, run in enumerate(calls.values()):
            with record_function_fast(f"sw.test::{i}"):
                results.append(run())
        with record_function_fast(f"sw.test::{len(calls)}"):
            values = torch.sort(x[0]).values  # its indices' buffer is twice as large
    finally:
        profiler.stop()
    found = profiler.hidden_copies(marked)
    for i, (name, result) in enumerate(zip(calls, results)):
        assert found[i] == [(f"sw.test.{i}", name.replace("::", "."), result.nbytes)], name
    assert found[len(calls)] == [(f"sw.test.{len(calls)}", "aten.copy_", values.nbytes)]
