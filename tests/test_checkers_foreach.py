"""The checkers on foreach / fused optimizer ops (issue 41, F2/F3): the cheap paths that settle a
call of many listed tensors must report exactly what the exact rules report.

Three oracles the fast path does not share: the exact rules themselves (``_reference``: every
list unpacked, every tensor checked for out-of-bounds, every pair of byte ranges that meet
compared, the meta run made afresh), brute force over every element's bytes (a call the fast
path settles must have no two tensors, one written, sharing a byte, none overlapping itself and
none past its storage), and whole AdamW steps (fused and foreach) over deliberately aliased
parameter lists, whose hazards are named here.
"""

import itertools
import random
from unittest import mock

import pytest
import torch

import stridewidget as sw
from stridewidget.check import resize, rules

SIZE = 40


def _reference(rule, args, kwargs, func):
    """The exact rules, without the fast path of list calls and without a kept meta run."""
    written, read = rules._split(rule, args, kwargs)
    found = [
        rules.Finding(
            "out-of-bounds",
            rules.out_of_bounds_witness(a.tensor, a.tensor.untyped_storage().nbytes()),
            (a.tensor,),
            f"argument '{a.name}'",
        )
        for a in (written + read if rule.reads_elements else written)
        if not rules._inside(a.tensor)
    ]
    if found:
        return found
    if not written or rule.order_free or rules._copy_onto_itself(rule, written, read):
        return found
    if rules._one_value_write(rule, args, kwargs, written, read):
        index_reads = [a for a in read if a.name in rules._INDEX_ARGUMENTS]
        found = rules._write_hazards(rule, written, index_reads, False)
        return rules._written_reads(rule, found, args, kwargs)
    found = rules._written_reads(rule, rules._write_hazards(rule, written, read), args, kwargs)
    if rule.has_out:
        with mock.patch.object(resize, "after_meta_run", resize._meta_run):
            found += [
                rules.Finding("partial-overlap", witness, (out, other), what)
                for witness, out, other, what in resize.resized_overlaps(
                    func, args, kwargs, written, read
                )
            ]
    return found


def _seen(findings):
    return [(f.kind, f.witness, tuple(map(id, f.tensors)), f.what) for f in findings]


def _bytes(t: torch.Tensor) -> list[int]:
    """Every byte address of every element of ``t``, brute force (repeats kept)."""
    size = t.element_size()
    base = t.untyped_storage().data_ptr()
    found = []
    for index in itertools.product(*map(range, t.shape)):
        element = t.storage_offset() + sum(i * s for i, s in zip(index, t.stride()))
        found += range(base + element * size, base + (element + 1) * size)
    return found


def _brute_force_apart(rule, args, kwargs) -> bool:
    """No tensor of the call overlaps itself or reaches past its storage, and no written one
    shares a byte with another."""
    tensors = []
    for position, name, written in rule.tensor_arguments:
        value = args[position] if position < len(args) else kwargs.get(name)
        for t in value if isinstance(value, (list, tuple)) else [value]:
            if isinstance(t, torch.Tensor):
                tensors.append((t, written))
    spans = []
    for t, written in tensors:
        addresses = _bytes(t)
        start = t.untyped_storage().data_ptr()
        if len(set(addresses)) != len(addresses):
            return False
        if addresses and max(addresses) >= start + t.untyped_storage().nbytes():
            return False
        spans.append((set(addresses), written))
    return not any((w1 or w2) and a & b for (a, w1), (b, w2) in itertools.combinations(spans, 2))


def _view(rng: random.Random, storage: torch.Tensor, shape: tuple[int, ...]) -> torch.Tensor:
    """A view of ``storage`` (1-D) with ``shape``: mostly contiguous, at a random offset, else
    with random strides (maybe overlapping itself)."""
    if rng.random() < 0.7:
        strides = tuple(itertools.accumulate((1, *shape[:0:-1]), lambda a, n: a * n))[::-1]
    else:
        strides = tuple(rng.choice([0, 1, 2, 3]) for _ in shape)
    reach = sum((n - 1) * s for n, s in zip(shape, strides)) + 1
    return storage.as_strided(shape, strides, rng.randrange(max(SIZE - reach, 0) + 1))


def _lists(rng: random.Random, count: int, shapes: list, storages: list) -> list:
    """``count`` lists of views: the i-th of each list has ``shapes[i]``; each view lies in a
    storage of its own or in one of the few shared ``storages``."""
    out = []
    for _ in range(count):
        views = []
        for shape in shapes:
            if rng.random() < 0.6:
                views.append(torch.randn(shape))  # a storage of its own
            else:
                views.append(_view(rng, rng.choice(storages), shape))
        out.append(views)
    return out


_OPS = {
    "_foreach_add_.List": (torch.ops.aten._foreach_add_.List, 2),
    "_foreach_mul_.Scalar": (torch.ops.aten._foreach_mul_.Scalar, 1),
    "_foreach_addcmul_.Scalar": (torch.ops.aten._foreach_addcmul_.Scalar, 3),
    "_foreach_lerp_.Scalar": (torch.ops.aten._foreach_lerp_.Scalar, 2),
    "_foreach_copy_": (torch.ops.aten._foreach_copy_.default, 2),
    "_foreach_add.List_out": (torch.ops.aten._foreach_add.List_out, 2),
}


def _call(rng, name, lists):
    func, n = _OPS[name]
    if name == "_foreach_mul_.Scalar":
        return func, (lists[0], 0.5), {}
    if name == "_foreach_addcmul_.Scalar":
        return func, (lists[0], lists[1], lists[2], 0.1), {}
    if name == "_foreach_lerp_.Scalar":
        return func, (lists[0], lists[1], 0.9), {}
    if name == "_foreach_add.List_out":  # some outs empty: the op resizes them (onto inputs?)
        outs = [t[:0].view(-1) if rng.random() < 0.3 else t for t in lists[2]]
        return func, (lists[0], lists[1]), {"out": outs}
    return func, tuple(lists[:n]), {}


@pytest.mark.parametrize("name", sorted(_OPS))
def test_random_aliased_foreach_calls_report_what_the_exact_rules_report(name):
    rng = random.Random(hash(name) % 1000)
    settled = 0
    for _ in range(150):
        storages = [torch.zeros(SIZE) for _ in range(2)]
        shapes = [
            tuple(rng.choice([1, 2, 3, 4]) for _ in range(rng.choice([1, 2])))
            for _ in range(rng.randrange(1, 6))
        ]
        func, args, kwargs = _call(rng, name, _lists(rng, 3, shapes, storages))
        if rng.random() < 0.15:  # views made before a resize_ may reach past the storage
            storages[0].untyped_storage().resize_((SIZE - 6) * 4)
        rule = rules.rule_of(func)
        assert _seen(rules.hazards_of(rule, args, kwargs, func)) == _seen(
            _reference(rule, args, kwargs, func)
        )
        if rules._apart(rule, args, kwargs):  # the fast path's claim, by brute force
            assert _brute_force_apart(rule, args, kwargs)
            settled += 1
    assert settled >= 20  # the fast path was taken (and checked) often


def _adamw_lists(rng: random.Random, shared: torch.Tensor, n: int = 4):
    shapes = [(3, 4)] * n
    params, grads, avgs, sqs = _lists(rng, 4, shapes, [shared])
    steps = [torch.tensor(float(rng.randrange(1, 5))) for _ in range(n)]
    return params, grads, avgs, sqs, steps


def test_random_aliased_fused_adamw_calls_report_what_the_exact_rules_report():
    rng = random.Random(41)
    func = torch.ops.aten._fused_adamw_.default
    rule = rules.rule_of(func)
    for _ in range(150):
        shared = torch.zeros(SIZE)
        params, grads, avgs, sqs, steps = _adamw_lists(rng, shared)
        if rng.random() < 0.15:
            shared.untyped_storage().resize_((SIZE - 6) * 4)
        args = (params, grads, avgs, sqs, [], steps)
        kwargs = dict(
            lr=1e-3,
            beta1=0.9,
            beta2=0.999,
            weight_decay=0.01,
            eps=1e-8,
            amsgrad=False,
            maximize=False,
        )
        for _ in range(2):  # the second: the meta run kept
            assert _seen(rules.hazards_of(rule, args, kwargs, func)) == _seen(
                _reference(rule, args, kwargs, func)
            )


def test_a_kept_meta_run_answers_only_a_call_of_the_same_layout():
    func = torch.ops.aten.add.out
    x = torch.arange(60.0)
    resize._META_RUNS.clear()
    for size in (50, 20, 50):  # the out is resized to the input's size: each its own answer
        out = x[1:1]
        shapes = resize.after_meta_run(func, (x[:size], 1.0), {"out": out})
        assert shapes[id(out)] == (size,)
    same = x[:3]  # one tensor twice (a=b): the call's aliasing is part of its layout
    one = resize.after_meta_run(func, (same, same), {"out": x[10:13]})
    two = resize.after_meta_run(func, (x[:3], x[3:6]), {"out": x[10:13]})
    assert list(one.values()) == [(3,), (3,)] and list(two.values()) == [(3,)] * 3
    key = resize._layout_key
    assert key((0.0,), {}) != key((-0.0,), {}) and key((1,), {}) != key((True,), {})


def _adamw_step(how: str, params, grads):
    for p, g in zip(params, grads):
        p.grad = g
    optimizer = torch.optim.AdamW(params, lr=1e-2, **{how: True})
    optimizer.step()  # the state made outside the block
    return optimizer


@pytest.mark.parametrize("how", ["fused", "foreach"])
def test_an_adamw_step_over_disjoint_views_of_one_storage_finds_nothing(how):
    flat = torch.zeros(64, requires_grad=True)
    with torch.no_grad():
        params = [flat[:32].view(4, 8), flat[32:].view(4, 8)]  # one storage, disjoint
    params = [torch.nn.Parameter(p) for p in params]
    optimizer = _adamw_step(how, params, [torch.ones(4, 8), torch.ones(4, 8)])
    before = [p.detach().clone() for p in params]
    with sw.sanitize() as report:
        optimizer.step()
    assert report.ok
    assert all(not torch.equal(b, p) for b, p in zip(before, params))  # it ran


@pytest.mark.parametrize("how", ["fused", "foreach"])
def test_an_adamw_step_over_overlapping_parameters_is_refused_unchanged(how):
    storage = torch.zeros(40)
    a = torch.nn.Parameter(torch.zeros(1))
    b = torch.nn.Parameter(torch.zeros(1))
    a.data = storage.as_strided((4, 8), (8, 1), 0)
    b.data = storage.as_strided((4, 8), (8, 1), 4)  # half of a's rows: overlapping views
    optimizer = _adamw_step(how, [a, b], [torch.ones(4, 8), torch.ones(4, 8)])
    before = storage.clone()
    with pytest.raises(sw.LayoutHazard) as caught, sw.sanitize():
        optimizer.step()
    assert caught.value.kind == "partial-overlap"
    assert "self[0]" in str(caught.value) and "self[1]" in str(caught.value)
    assert torch.equal(storage, before)  # refused before it wrote


@pytest.mark.parametrize("how", ["fused", "foreach"])
def test_a_parameter_that_is_its_own_grad_is_flagged_as_before(how):
    p = torch.nn.Parameter(torch.ones(6))
    q = torch.nn.Parameter(torch.ones(6))
    optimizer = _adamw_step(how, [p, q], [torch.ones(6), torch.ones(6)])
    p.grad = p.detach()[::1]  # the grad is the parameter's own memory
    with sw.sanitize(on_hazard="collect") as report:
        optimizer.step()
    if how == "fused":  # _fused_adamw_ writes grads too: param and grad, one memory
        assert [h.kind for h in report] == ["partial-overlap"]
        assert "'self[0]' and argument 'grads[0]'" in str(report.hazards[0])
    else:  # the foreach ops read the grad at the index they write: exact, nothing flagged
        assert report.ok


@pytest.mark.parametrize("how", ["fused", "foreach"])
def test_sanitize_leaves_the_model_and_state_as_a_bare_step_does(how):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    twin = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    twin.load_state_dict(model.state_dict())
    x = torch.randn(4, 8)
    for m, checked in ((model, True), (twin, False)):
        optimizer = torch.optim.AdamW(m.parameters(), lr=1e-2, **{how: True})
        for _ in range(3):
            optimizer.zero_grad()
            m(x).pow(2).mean().backward()
            if checked:
                with sw.sanitize() as report:
                    optimizer.step()
                assert report.ok
            else:
                optimizer.step()
    for a, b in zip(model.parameters(), twin.parameters()):
        assert torch.equal(a, b)


# --- track_copies: a list op that writes data only takes no snapshot before it runs ----------


def _old_entries(funcs):
    """The op entries as before issue 41: every written list but ``self`` of a pointwise op
    snapshotted before the op runs (and forgotten as seen)."""
    from stridewidget.copies import ops, tracker

    saved = {}
    for func in funcs:
        func_, info, _, run = ops.op_entry(func)
        data_only = torch.Tag.pointwise in func.tags
        relaid = tuple(w for w in info.written if not (data_only and w[1] == "self"))
        saved[id(func)] = ops.OP_ENTRIES[id(func)]
        ops.OP_ENTRIES[id(func)] = (func_, info, relaid, run)
        tracker._FAST_OPS.pop(id(func), None)
    return saved


def _events(log):
    return [
        (e.call, e.ops, e.kind, e.aliases_input, e.allocated, e.returned_input, e.wrote_input,
         e.bytes_copied, e.line, tuple(map(str, e.inputs)), tuple(map(str, e.outputs)))
        for e in log.events
    ]  # fmt: skip


def _tracked(scenario, old: bool):
    from stridewidget.copies import ops, tracker

    names = ("_fused_adamw_", "_foreach_copy_", "_foreach_zero_", "_foreach_add_", "_foreach_mul_",
             "_foreach_lerp_", "_foreach_addcmul_", "_foreach_addcdiv_", "_foreach_div_",
             "_foreach_sqrt_", "_foreach_sub_")  # fmt: skip
    packets = [getattr(torch.ops.aten, name) for name in names]
    funcs = [getattr(packet, overload) for packet in packets for overload in packet.overloads()]
    saved = _old_entries(funcs) if old else {}
    try:
        work = scenario()
        with sw.track_copies() as log:
            work()
        return _events(log)
    finally:
        for key, entry in saved.items():
            ops.OP_ENTRIES[key] = entry
            tracker._FAST_OPS.pop(key, None)


def _optimizer_scenario(how: str, aliased: bool):
    def scenario():
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(6, 6), torch.nn.ReLU(), torch.nn.Linear(6, 3))
        if aliased:  # two parameters over one storage, disjoint
            flat = torch.zeros(6 * 6 + 6)
            model[0].weight.data = flat[:36].view(6, 6)
            model[0].bias.data = flat[36:]
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2, **{how: True})
        x = torch.randn(4, 6)

        def work():
            for _ in range(2):
                optimizer.zero_grad()
                model(x).pow(2).mean().backward()
                optimizer.step()
                torch._foreach_zero_([p.grad for p in model.parameters()])

        return work

    return scenario


@pytest.mark.parametrize("aliased", [False, True])
@pytest.mark.parametrize("how", ["fused", "foreach"])
def test_track_copies_records_an_adamw_step_as_before(how, aliased):
    scenario = _optimizer_scenario(how, aliased)
    new = _tracked(scenario, old=False)
    assert new == _tracked(scenario, old=True)
    assert any("_foreach_" in op or "_fused_" in op for event in new for op in event[1])


def test_track_copies_records_foreach_writes_as_before_and_as_their_loop():
    def scenario():
        base = torch.arange(24.0)
        xs = [base[:6].view(2, 3), base[6:12].view(3, 2).t(), torch.ones(4)]
        ys = [torch.full((2, 3), 2.0), torch.full((2, 3), 3.0), torch.zeros(4)]

        def work():
            torch._foreach_mul_(xs, 2.0)
            torch._foreach_add_(xs, ys)
            torch._foreach_copy_(xs, ys)
            xs.append(xs.pop(0).t())  # a layout changed between two list ops
            torch._foreach_lerp_(xs, [ys[1], ys[2], ys[0].t()], 0.5)

        return work

    new = _tracked(scenario, old=False)
    assert new == _tracked(scenario, old=True)
    assert [(e[0], e[2]) for e in new] == [
        ("_foreach_mul_", "in-place"), ("_foreach_add_", "in-place"),
        ("_foreach_copy_", "in-place"), ("torch.Tensor.t", "view"), ("torch.Tensor.t", "view"),
        ("_foreach_lerp_", "in-place"),
    ]  # fmt: skip


def test_a_foreach_copy_counts_the_bytes_its_loop_of_copies_counts():
    """Found on issue 41, before its changes too: ``_foreach_copy_`` counted no bytes copied
    where a loop of ``copy_`` counts every entry's (torch's nbytes of each entry)."""

    def loop():  # the single-tensor ops, one per entry: the same kinds and bytes in all
        xs = [torch.arange(6.0).view(2, 3), torch.ones(4)]
        ys = [torch.full((2, 3), 2.0), torch.zeros(4)]

        def work():
            for x, y in zip(xs, ys):
                x.copy_(y)

        return work

    def listed():
        xs = [torch.arange(6.0).view(2, 3), torch.ones(4)]
        ys = [torch.full((2, 3), 2.0), torch.zeros(4)]
        return lambda: torch._foreach_copy_(xs, ys)

    looped, one = _tracked(loop, old=False), _tracked(listed, old=False)
    nbytes = sum(y.nelement() * y.element_size() for y in (torch.ones(2, 3), torch.ones(4)))
    assert sum(e[7] for e in looped) == one[0][7] == nbytes
    assert {e[2] for e in looped} == {one[0][2]} == {"in-place"}


def test_a_copy_from_its_own_data_moves_no_bytes():
    """Hostile review (2026-12-05): ``x.copy_(x)`` counted x's bytes as copied, where ATen's copy
    returns at once when its source is its destination's data exactly (same storage, offset,
    sizes, strides, dtype, conj and neg bits: ``Copy.cpp``'s early exit; measured 0.017 ms vs
    24 ms for 120 MB from another tensor); a copy from other data still counts its bytes."""
    x, y = torch.ones(3, 5), torch.zeros(3, 5)
    nbytes = x.nelement() * x.element_size()
    with sw.track_copies() as log:
        x.copy_(x)
        x.copy_(x[:])  # another view object of the same data
        torch._foreach_copy_([x, y], [x, x])  # the second entry moves x into y
        x.copy_(y)
        x[:, 1:].copy_(x[:, :-1].clone())
    copies = [e.bytes_copied for e in log.events if "copy_" in e.call]
    assert copies == [0, 0, nbytes, nbytes, nbytes * 4 // 5]
