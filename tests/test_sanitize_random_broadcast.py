"""sw.sanitize against torch, on random in-place elementwise writes with broadcast operands over
one storage (#38's held-out class).  Two oracles the sanitizer does not share: torch's own
in-place result on a clone, compared with the out-of-place result written back (a wrong result
must be refused: no miss), and brute force over every pair of indices (a refusal must name a
real overlap: an element written at one index and read, after broadcasting, at another)."""

import itertools
import random

import torch

import stridewidget as sw

SIZE = 24
OPS = {
    "add": torch.add,
    "sub": torch.sub,
    "mul": torch.mul,
    "div": torch.div,
    "copy": lambda a, b: b.expand(a.shape),  # the bits it reads: a broadcast read is exact
}


def _addresses(t: torch.Tensor) -> dict[tuple[int, ...], int]:
    return {
        i: t.storage_offset() + sum(a * s for a, s in zip(i, t.stride()))
        for i in itertools.product(*map(range, t.shape))
    }


def _view(rng: random.Random, base: torch.Tensor, shape: tuple[int, ...], zero_ok: bool):
    """A view of ``base`` with ``shape`` and random strides (0 among them where ``zero_ok``)
    that fits in the storage, or ``None``."""
    strides = tuple(
        rng.choice([0, 1, 1, 2, 3, 4, 5] if zero_ok else [1, 2, 3, 4, 5, 6]) for _ in shape
    )
    reach = sum((n - 1) * s for n, s in zip(shape, strides))
    if reach >= SIZE:
        return None
    return base.as_strided(shape, strides, rng.randrange(SIZE - reach))


def _case(rng: random.Random, base: torch.Tensor):
    """(written, other, first operand) views: ``other`` broadcast to ``written``'s shape (size 1,
    stride 0 or leading dims dropped), ``written`` with no element twice."""
    while True:
        shape = tuple(rng.randint(1, 4) for _ in range(rng.randint(1, 3)))
        written = _view(rng, base, shape, zero_ok=False)
        if written is None or len(set(_addresses(written).values())) < written.numel():
            continue
        lead = rng.randint(0, len(shape) - 1)
        other_shape = tuple(rng.choice([n, 1]) for n in shape[lead:])
        other = _view(rng, base, other_shape, zero_ok=True)
        if other is not None and rng.random() < 0.3:
            other = other.expand(shape)  # an explicit expand: stride 0 at the caller's hand
        first = written if rng.random() < 0.6 else _view(rng, base, shape, zero_ok=True)
        if other is not None and first is not None:
            return written, other, first


def _reads_elsewhere(written: torch.Tensor, read: torch.Tensor) -> bool:
    """Brute force: an element written at index ``i`` and read (``read`` broadcast to
    ``written``'s shape) at an index ``j != i``."""
    read_at: dict[int, set] = {}
    for j, a in _addresses(read.expand(written.shape)).items():
        read_at.setdefault(a, set()).add(j)
    return any(read_at.get(a, set()) - {i} for i, a in _addresses(written).items())


def _rewrites_what_is_read(written: torch.Tensor, read: torch.Tensor) -> bool:
    """Brute force, for a copy (each element written with the bits read at its index): an
    element written at ``i`` with another element's bits, and read (broadcast) somewhere."""
    own = _addresses(read.expand(written.shape))
    read_anywhere = set(own.values())
    return any(a in read_anywhere and own[i] != a for i, a in _addresses(written).items())


def _call(style: str, op: str, written, other, first) -> None:
    if style == "method":
        getattr(written, op + "_")(other)
    elif style == "out":
        OPS[op](first, other, out=written)
    else:
        getattr(torch, f"_foreach_{op}_")([written], [other])


def test_random_broadcast_writes_against_torch_and_brute_force():
    rng = random.Random(38)
    seen = {"torch wrong, refused": 0, "torch right, refused": 0, "ran": 0, "torch refused": 0}
    for _ in range(600):
        values = (
            torch.randperm(SIZE, generator=torch.Generator().manual_seed(rng.randrange(10**6)))
            + 2.0
        ) * 1.25
        written, other, first = _case(rng, values.clone())
        op = rng.choice(sorted(OPS))
        style = rng.choice(["method", "foreach"] if op == "copy" else ["method", "out", "foreach"])
        if style != "out":
            first = written  # an in-place op reads its own elements as its first operand

        def on(storage, t):
            return storage.as_strided(t.shape, t.stride(), t.storage_offset())

        reference = values.clone()
        on(reference, written).copy_(OPS[op](on(values, first).clone(), on(values, other).clone()))
        plain = values.clone()
        try:
            _call(style, op, on(plain, written), on(plain, other), on(plain, first))
            torch_wrong = not torch.equal(plain, reference)
        except RuntimeError:  # torch refuses it itself: no wrong result
            torch_wrong = None
        reads = {id(other): other, id(first): first}.values()
        overlap = any(_reads_elsewhere(written, r) for r in reads)
        hazard = _rewrites_what_is_read(written, other) if op == "copy" else overlap
        x = values.clone()
        try:
            with sw.sanitize():
                _call(style, op, on(x, written), on(x, other), on(x, first))
            outcome = "ran"
        except sw.LayoutHazard as hazard:
            outcome = "refused"
            address = _addresses(written)[hazard.witness.first]
            assert address == hazard.witness.address
            assert torch.equal(x, values)  # refused before it wrote
        except RuntimeError:
            outcome = "torch refused"
        where = (style, op, tuple(written.shape), written.stride(), written.storage_offset(),
                 tuple(other.shape), other.stride(), other.storage_offset(),
                 tuple(first.shape), first.stride(), first.storage_offset())  # fmt: skip
        if torch_wrong is None:
            assert outcome == "torch refused", where
            seen["torch refused"] += 1
            continue
        assert outcome != "torch refused", where
        if torch_wrong:  # no miss: every wrong result of torch is refused
            assert outcome == "refused", where
        if outcome == "refused":  # no false alarm without a real overlap
            assert overlap, where
            seen["torch wrong, refused" if torch_wrong else "torch right, refused"] += 1
        else:  # exact: an overlap torch happened to get right is refused too
            assert not hazard, where
            assert torch.equal(x, reference), where
            seen["ran"] += 1
    assert seen["torch wrong, refused"] >= 50 and seen["ran"] >= 50, seen
    assert seen["torch right, refused"] <= seen["torch wrong, refused"], seen


def _meets(a: torch.Tensor, b: torch.Tensor) -> bool:
    return bool(set(_addresses(a).values()) & set(_addresses(b).values()))


def test_random_two_entry_foreach_writes_against_torch_and_brute_force():
    """``_foreach_<op>_([w0, w1], [o0, o1])`` and ``_foreach_<op>_([w0, w1], s)`` (``s`` one
    element read by both entries): a hazard is a write one entry makes to memory another entry
    reads (any overlap), or a different-index read within an entry, or ``s`` written at all
    (``mul``, ``div``: torch gives ``add``/``sub`` a 0-d tensor as a number, read once first)."""
    rng = random.Random(3838)
    seen = {"torch wrong, refused": 0, "torch right, refused": 0, "ran": 0, "torch refused": 0}
    for _ in range(300):
        values = (
            torch.randperm(SIZE, generator=torch.Generator().manual_seed(rng.randrange(10**6)))
            + 2.0
        ) * 1.25
        (w0, o0, _), (w1, o1, _) = _case(rng, values), _case(rng, values)
        if _meets(w0, w1):
            continue  # two entries writing one element: no out-of-place reference
        op = rng.choice(sorted(set(OPS) - {"copy"}))
        shared = values[rng.randrange(SIZE)] if rng.random() < 0.4 else None
        others = [shared, shared] if shared is not None else [o0, o1]
        ws = [w0, w1]

        def on(storage, t):
            return storage.as_strided(t.shape, t.stride(), t.storage_offset())

        def call(storage, ws=ws, shared=shared, others=others, op=op):
            written = [on(storage, w) for w in ws]
            if shared is not None:
                getattr(torch, f"_foreach_{op}_")(written, on(storage, shared))
            else:
                getattr(torch, f"_foreach_{op}_")(written, [on(storage, o) for o in others])

        reference = values.clone()
        for w, o in zip(ws, others):
            on(reference, w).copy_(OPS[op](on(values, w).clone(), on(values, o).clone()))
        plain = values.clone()
        try:
            call(plain)
            torch_wrong = not torch.equal(plain, reference)
        except RuntimeError:
            torch_wrong = None
        if shared is not None and op in ("add", "sub"):
            overlap = False  # torch passes a 0-d tensor to these as a number, read before any write
        else:
            overlap = any(
                (_meets(w, o) if k != entry or shared is not None else _reads_elsewhere(w, o))
                for k, w in enumerate(ws)
                for entry, o in enumerate(others)
            )
        x = values.clone()
        try:
            with sw.sanitize():
                call(x)
            outcome = "ran"
        except sw.LayoutHazard:
            outcome = "refused"
            assert torch.equal(x, values)
        except RuntimeError:
            outcome = "torch refused"
        where = (
            op,
            shared is not None,
            [(tuple(t.shape), t.stride(), t.storage_offset()) for t in ws + others],
        )
        if torch_wrong is None:
            assert outcome == "torch refused", where
            seen["torch refused"] += 1
            continue
        if torch_wrong:
            assert outcome == "refused", where
        if outcome == "refused":
            assert overlap, where
            seen["torch wrong, refused" if torch_wrong else "torch right, refused"] += 1
        else:
            assert outcome == "ran" and not overlap, where
            assert torch.equal(x, reference), where
            seen["ran"] += 1
    assert seen["torch wrong, refused"] >= 20 and seen["ran"] >= 20, seen
