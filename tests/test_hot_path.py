"""Issue 41: the hot path.  A plain tensor (its own memory, no subclass) takes no symbol check at
all in ``sw.inspect``, ``sw.overlap`` and ``sw.same_storage``; symbolic tensors still get the same
answers as before and never add a guard; the fast answers agree with the careful ones."""

from __future__ import annotations

import itertools
import random
import sys

import numpy as np
import pytest
import torch

import stridewidget as sw
import stridewidget.adapters.symbolic  # loaded, so that its checks are counted
from stridewidget.adapters import inspect as inspect_module
from stridewidget.layout.overlap import ranges_overlap, ranges_overlap_witness

#: Every function that looks for symbols (or decides a symbolic fact), wherever it is imported.
SYMBOL_CHECKS = (
    "is_symbolic",
    "has_symbols",
    "is_symint",
    "known_true",
    "known_false",
    "symbol_names",
    "_refuse_symbols",
    "_tri",
)


@pytest.fixture
def symbol_checks(monkeypatch):
    """Replace each symbol check in every loaded stridewidget module by a counting wrapper;
    yields the list of the names called."""
    calls: list[str] = []

    def counting(name, fn):
        def wrapper(*args, **kwargs):
            calls.append(name)
            return fn(*args, **kwargs)

        return wrapper

    for module_name, module in list(sys.modules.items()):
        if not module_name.startswith("stridewidget") or module is None:
            continue
        for name in SYMBOL_CHECKS:
            fn = module.__dict__.get(name)
            if callable(fn):
                monkeypatch.setattr(module, name, counting(name, fn))
    return calls


def _symbolic_fake(shape=(4, 6)):
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental.symbolic_shapes import (
        DimDynamic,
        ShapeEnv,
        StatelessSymbolicContext,
    )

    mode = FakeTensorMode(shape_env=ShapeEnv())
    dynamic = StatelessSymbolicContext(dynamic_sizes=[DimDynamic.DYNAMIC] * len(shape))
    return mode, mode.from_tensor(torch.zeros(shape), symbolic_context=dynamic)


def test_plain_tensors_take_no_symbol_check(symbol_checks):
    x = torch.arange(24.0).reshape(2, 3, 4)
    views = [x, x.mT, x[:, 1:], x[..., ::2], x.unfold(2, 2, 1), x[0].expand(5, 3, 4), x.view(-1)]
    views.append(torch.nn.Parameter(torch.zeros(3, 3)))
    for v in views:
        lay = sw.inspect(v)
        lay.is_contiguous, lay.has_overlap, lay.touched, lay.span, lay.is_dense, str(lay)
    for a in views:
        for b in views:
            sw.overlap(a, b), sw.same_storage(a, b)
    assert symbol_checks == []


def test_the_counting_sees_symbolic_tensors(symbol_checks):
    """The fixture does count: a tensor with symbolic sizes is looked at for its symbols."""
    _, fake = _symbolic_fake()
    sw.inspect(fake)
    assert "has_symbols" in symbol_checks and "is_symbolic" in symbol_checks


def test_symbolic_answers_unchanged_and_unguarded():
    mode, fake = _symbolic_fake((4, 6))
    guards = list(mode.shape_env.guards)
    lay = sw.inspect(fake.t())
    rows, cols = fake.shape
    assert (
        str(lay) == f"float32 ({cols},{rows}):(1,{cols}) +0 · storage {rows}*{cols} · F-contiguous"
    )
    assert lay.facts["F-contiguous"] is True and lay.facts["contiguous"] is False
    assert not lay.has_overlap and lay.is_dense
    assert sw.same_storage(fake, fake[1:]) and not sw.same_storage(fake, fake.clone())
    assert not sw.overlap(fake, fake.clone())  # different storages: no question of symbols
    with pytest.raises(sw.LayoutError, match="symbolic"):
        sw.overlap(fake[:, ::2], fake[:, 1::2])  # deciding it would guard: refused
    assert list(mode.shape_env.guards) == guards


def test_fake_tensors_without_symbols_answer_as_real_ones():
    from torch._subclasses.fake_tensor import FakeTensorMode

    x = torch.zeros(6, 8)
    pairs = [(x[::2], x[1::2]), (x[:, :4], x[:, 3:]), (x.t(), x[2]), (x[1], x[1, 2:])]
    with FakeTensorMode(allow_non_fake_inputs=True) as mode:
        fake = mode.from_tensor(x)
        fakes = [(fake[::2], fake[1::2]), (fake[:, :4], fake[:, 3:]), (fake.t(), fake[2])]
        fakes.append((fake[1], fake[1, 2:]))
    for (a, b), (fa, fb) in zip(pairs, fakes):
        assert sw.overlap(a, b) == sw.overlap(fa, fb)
        assert sw.inspect(a) == sw.inspect(fa).__class__(**{**_fields(sw.inspect(fa))})


def _fields(lay):
    return {
        name: getattr(lay, name)
        for name in ("shape", "strides", "offset", "itemsize", "storage_size", "dtype", "device")
    } | {"notes": tuple(n for n in lay.notes if n != "fake")}


def test_fast_answers_agree_with_the_careful_path():
    """The plain path (sw.overlap of tensors, arrays) against the careful path (extents of each
    part, the witness solver) and NumPy, on random views of one storage."""
    rng = random.Random(41)
    storage = torch.zeros(3000, dtype=torch.float64)
    for _ in range(400):
        views = []
        for _ in range(2):
            ndim = rng.randint(1, 5)
            size = [rng.randint(0, 5) for _ in range(ndim)]
            stride = [rng.choice([0, 1, 2, rng.randint(1, 60)]) for _ in range(ndim)]
            reach = sum(s * max(n - 1, 0) for n, s in zip(size, stride))
            views.append(torch.as_strided(storage, size, stride, rng.randint(0, 2999 - reach)))
        a, b = views
        careful = inspect_module._extents_overlap(
            inspect_module._extent(a), inspect_module._extent(b)
        )
        numpy_answer = bool(np.shares_memory(a.numpy(), b.numpy(), max_work=None))
        assert sw.overlap(a, b) == careful == numpy_answer, (a.shape, a.stride(), b.stride())
        assert sw.overlap(a.numpy(), b.numpy()) == numpy_answer
        halves = storage.view(torch.int32)  # two cell sizes: b's cells are half of a's
        b32 = halves.as_strided(b.shape, [2 * s for s in b.stride()], 2 * b.storage_offset() + 1)
        assert sw.overlap(a, b32) == bool(np.shares_memory(a.numpy(), b32.numpy(), max_work=None))
        args = (a.shape, a.stride(), a.storage_offset(), 1, b.shape, b.stride())
        witness = ranges_overlap_witness(*args, b.storage_offset(), 1)
        assert ranges_overlap(*args, b.storage_offset(), 1) == (witness is not None)
        lay = sw.inspect(a)
        fresh = sw.Layout(tuple(a.shape), a.stride(), a.storage_offset(), storage_size=3000)
        assert lay.touched == fresh.touched and lay.has_overlap == fresh.has_overlap


def test_layout_from_fields_checks_what_it_is_not_sure_of():
    with pytest.raises(sw.LayoutError, match="negative"):
        sw.Layout.from_fields({"shape": (-1,), "strides": (1,)})
    lay = sw.Layout.from_fields({"shape": [2, 3], "strides": (3, 1), "storage_size": 6})
    assert lay.shape == (2, 3) and lay == sw.Layout((2, 3), (3, 1))


def test_other_devices_and_storages_never_overlap():
    x, y = torch.zeros(4), torch.zeros(4)
    assert not sw.overlap(x, y) and not sw.same_storage(x, y)
    meta = torch.empty(4, device="meta")
    assert not sw.overlap(x, meta) and sw.overlap(meta, meta[1:])
    assert not sw.overlap(x[:2], x[2:]) and sw.overlap(x[:3], x[2:])


def test_sanitize_fast_pass_finds_what_the_exact_rules_find(monkeypatch):
    """``rules._apart`` only clears writes: random in-place writes between views of one storage
    give the same hazards with and without it."""
    from stridewidget.check import rules

    def hazards(seed):
        rng = random.Random(seed)
        base = torch.arange(40.0)
        views = [base[:10], base[5:15], base[::2][:10], base[1::2][:10], base[20:30]]
        views += [base[30:40].view(2, 5).t().reshape(-1), torch.zeros(10)]
        refused = []
        with sw.sanitize(on_hazard="collect") as report:
            for step in range(60):
                out, a, b = (rng.choice(views) for _ in range(3))
                op = rng.randrange(3)
                try:
                    if op == 0:
                        out.add_(a)
                    elif op == 1:
                        out.addcmul_(a, b)
                    else:
                        out.copy_(a)
                except RuntimeError:  # torch's own overlap check
                    refused.append(step)
                out.mul_(0.5)
        return [(h.kind, h.op) for h in report.hazards] + refused, base

    fast, fast_values = hazards(7)
    monkeypatch.setattr(rules, "_apart", lambda rule, args, kwargs: False)
    exact, exact_values = hazards(7)
    assert fast == exact and ("partial-overlap", "aten.add_") in fast
    assert torch.equal(fast_values, exact_values)


def test_same_storage_counts_a_storages_exact_bytes_on_every_path():
    """A 7-byte storage under a float32 shares bytes 5 and 6 with a storage at +5: the plain
    path (two tensors) and the careful path (tensor and array) both say so (review of #41)."""
    buf = bytearray(16)
    u8 = torch.frombuffer(memoryview(buf)[0:7], dtype=torch.uint8)
    a = torch.empty(0).set_(u8.untyped_storage(), 0, (1,), (1,))  # float32 over bytes 0..3
    b = torch.frombuffer(memoryview(buf)[5:8], dtype=torch.uint8)  # its own storage: 5..7
    assert sw.same_storage(a, b) == sw.same_storage(a, b.numpy()) == sw.same_storage(u8, b)
    assert sw.same_storage(a, b) and sw.same_storage(b.numpy(), a)
    assert not sw.overlap(a, b) and not sw.overlap(a, b.numpy())  # the elements do not meet


def test_numpy_pairs_answer_as_mixed_pairs_past_the_buffer():
    """np.shares_memory sees an ``as_strided`` array reaching past its buffer into another's;
    sw.overlap of two arrays answers as sw.same_storage and the tensor-array pair do."""
    buf = bytearray(64)
    A = np.frombuffer(memoryview(buf)[:32], np.uint8)
    B = np.frombuffer(memoryview(buf)[32:], np.uint8)
    wide = np.lib.stride_tricks.as_strided(A, shape=(40,), strides=(1,))  # 8 bytes into B's
    answers = {
        sw.overlap(wide, B),
        sw.overlap(B, wide),
        sw.same_storage(wide, B),
        sw.overlap(wide, torch.from_numpy(B)),
        sw.overlap(torch.from_numpy(B), wide),
    }
    assert answers == {False}
    assert sw.overlap(wide, A[30:]) and not sw.overlap(wide[::2], A[1::2])  # one buffer: exact


def test_layout_from_fields_refuses_unknown_and_missing_keys():
    fields = {"shape": (3,), "strides": (1,), "storage_size": 3}
    with pytest.raises(TypeError, match="unexpected keyword argument 'bogus'"):
        sw.Layout.from_fields(fields | {"bogus": 1})
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'strides'"):
        sw.Layout.from_fields({"shape": (3,), "storage_size": 3})
    with pytest.raises(TypeError, match="'bogus'"):  # one unknown for one missing: still caught
        sw.Layout.from_fields({"shape": (3,), "bogus": (1,), "storage_size": 3})
    assert sw.Layout.from_fields(fields) == sw.Layout(**fields)


def test_sanitize_writes_with_arguments_on_two_devices():
    """Tensors on two devices never alias; their byte ranges are sorted without comparing
    ``torch.device``s (which have no order)."""
    meta = torch.empty(4, device="meta")
    x = torch.arange(8.0)
    with sw.sanitize(on_hazard="collect") as report:
        meta.add_(torch.tensor(1.0))
        meta[::2].add_(torch.tensor(1.0))
        x[::2].add_(torch.tensor(1.0, device="meta"))
        meta[1:].add_(meta[:-1])
    assert [(h.kind, h.op) for h in report.hazards] == [("partial-overlap", "aten.add_")]


@pytest.mark.parametrize("size_dependent", [False, True])
def test_overlap_inside_a_compiled_function_recompiles_for_no_new_size(size_dependent):
    """Review (issue 41): ``sw.overlap`` called inside ``torch.compile(dynamic=True)`` was traced
    into: its solver's branches on the symbolic strides made dynamo compile again for each new
    size (until its recompile limit).  It runs outside the trace now: after the first sizes
    (dynamo's own duck sizing), six more sizes compile nothing, and every answer is brute
    force's (torch's pointers)."""
    from torch._dynamo.utils import counters

    torch._dynamo.reset()

    def f(x):
        if size_dependent:  # their overlap depends on the size: x[:, n:] against x[1]
            return x * 2, sw.overlap(x[:, x.shape[0] :], x[1])
        return x * 2, sw.overlap(x[:, ::2], x[:, 1::2])

    compiled = torch.compile(f, dynamic=True, backend="eager")
    tensors = [torch.randn(n, n + 1) for n in range(4, 16)]
    answers = [compiled(x)[1] for x in tensors[:6]]
    frames = counters["frames"]["total"]
    answers += [compiled(x)[1] for x in tensors[6:]]
    more = counters["frames"]["total"] - frames
    torch._dynamo.reset()
    expected = [
        _brute_overlap(x[:, x.shape[0] :], x[1]) if size_dependent else False for x in tensors
    ]
    assert (more, answers) == (0, expected)


def _brute_overlap(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Do two tensors read a byte in common: every element's bytes, from torch's own pointers."""

    def bytes_of(t: torch.Tensor) -> set[int]:
        base, size, found = t.untyped_storage().data_ptr(), t.element_size(), set()
        for index in itertools.product(*map(range, t.shape)):
            at = (t.storage_offset() + sum(i * s for i, s in zip(index, t.stride()))) * size
            found.update(range(base + at, base + at + size))
        return found

    return bool(bytes_of(a) & bytes_of(b))
