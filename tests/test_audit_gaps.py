"""sw.audit's gaps from issue #23, each against an oracle it did not write: the profiler of the
plain step (a training step's ``loss.backward()``), the source file's own line numbers, and a
fake clock for the timing verdicts."""

from __future__ import annotations

import inspect
import random

import torch
from torch.profiler import ProfilerActivity, profile

import stridewidget as sw
from stridewidget.copies.audit import timing
from stridewidget.copies.audit.found import (
    IN_PLACE_MARK,
    SCALARS_ROW,
    counted_op,
    op_names,
    row_ops_parts,
)


def _line_of(cls: type, text: str) -> str:
    """``file.py:N`` of the line of ``cls``'s source holding ``text`` (the file's own numbers)."""
    lines, first = inspect.getsourcelines(cls)
    (offset,) = [i for i, line in enumerate(lines) if text in line]
    return f"{inspect.getsourcefile(cls).rsplit('/', 1)[-1]}:{first + offset}"


def _node_allocations(run, node: str) -> int:
    """The profiler's bytes allocated directly under autograd node ``node`` by the ops that make
    new storage for a copy (a clone, or the empty buffer a ``copy_`` then fills)."""
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        run()
    return sum(
        max(event.cpu_memory_usage, 0)
        for event in prof.events()
        if event.cpu_parent is not None
        and event.cpu_parent.name.endswith(node)
        and event.name in ("aten::clone", "aten::new_empty_strided")
    )


class _SliceInPlace(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.w = torch.nn.Parameter(torch.randn(2))

    def forward(self, x):
        h = self.lin(x)
        h[:, :2].mul_(self.w)  # CopySlices
        h[1:, 2:] = x[1:, 2:] * self.w  # CopySlices again, from a call that returns nothing
        return h


def test_copy_slices_points_at_the_in_place_line_and_counts_the_profilers_bytes():
    model, x = _SliceInPlace(), torch.randn(3, 4)
    report = sw.audit(model, x)
    backward = [c for c in report.copies if c.phase == "backward" and "CopySlices" in c.call]
    assert backward
    wheres = {c.where.rsplit("/", 1)[-1] for c in backward}
    assert wheres == {_line_of(_SliceInPlace, ".mul_("), _line_of(_SliceInPlace, "h[1:, 2:] =")}
    assert {c.call for c in backward} == {
        "CopySlices of Tensor.mul_",
        "CopySlices of Tensor.__setitem__",
    }

    def plain():
        model.lin.weight.grad = model.w.grad = model.lin.bias.grad = None
        model(x).sum().backward()

    assert sum(c.bytes for c in backward) == _node_allocations(plain, "CopySlices")


class _Transposed(torch.nn.Module):
    """A parameter made by a transpose: its gradient (of an elementwise op, contiguous) does not
    have its layout, and ``AccumulateGrad`` copies it into one that has."""

    def __init__(self) -> None:
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(8, 16).t())
        self.b = torch.nn.Parameter(torch.randn(16, 8))

    def forward(self, x):
        h = x * self.w
        return h + self.b


def test_accumulate_grad_copies_are_at_the_users_line_and_the_profilers_size():
    model, x = _Transposed(), torch.randn(16, 8)
    kept = torch.full((16, 8), 7.0)
    model.b.grad = kept  # the user's .grad: left as found
    report = sw.audit(model, x)
    accumulated = [c for c in report.copies if c.call.startswith("AccumulateGrad")]
    # w's at its line; b's too (the output gradient, still referenced, is not stolen)
    assert {c.where.rsplit("/", 1)[-1] for c in accumulated} == {
        _line_of(_Transposed, "x * self.w"),
        _line_of(_Transposed, "h + self.b"),
    }
    assert model.w.grad is None and model.b.grad is kept and bool((kept == 7).all())

    def plain():  # a training step's backward, from the audit's dense output gradient
        model.w.grad = model.b.grad = None
        out = model(x)
        out.backward(torch.ones_like(out))

    oracle = _node_allocations(plain, "AccumulateGrad")
    assert oracle == 2 * 16 * 8 * 4 == sum(c.bytes for c in accumulated)


class _Scalars(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.register_buffer("t", torch.tensor(3.0))

    def forward(self, x):
        h = self.lin(x) * 0.5  # a Python float: wrapped, converted to float32 (4 B)
        d = h.double() * 2  # a Python int: wrapped, converted to float64 (8 B)
        c = h.to(torch.complex64) * 1j  # a Python complex (8 B as complex64)
        s = self.t.to(torch.float64)  # the user's own 0-dim tensor: a real copy
        return d.sum() + c.real.sum() + s


def test_wrapped_scalars_group_by_what_they_are_and_a_users_0_dim_copy_shows(tmp_path):
    report = sw.audit(_Scalars(), torch.randn(3, 4))
    users = _line_of(_Scalars, "self.t.to(")
    (own,) = [c for c in report.copies if c.where.endswith(users)]
    assert own.bytes == 8 and not own.wrapped_scalar
    scalars = [c for c in report.copies if c.wrapped_scalar]
    assert {c.bytes for c in scalars} >= {4, 8}  # not decided by 4 bytes alone
    assert all(c.ops == ("aten._to_copy",) for c in scalars)
    rows = report.by_line()
    assert any(row.key.endswith(users) and row.count == 1 for row in rows)
    assert users in report.to_text(max_rows=50)
    report.to_html(str(tmp_path / "r.html"))
    assert users in (tmp_path / "r.html").read_text()
    assert SCALARS_ROW in report.to_text(max_rows=50)


def test_a_row_lists_each_op_once_when_some_of_its_copies_were_in_place():
    class Mixed(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.w = torch.nn.Parameter(torch.randn(4))

        def forward(self, x):
            a = x.clone()  # a plain clone
            b = torch.nn.functional.silu(x * 1.0, inplace=True)  # clones under autograd
            return a.sum() + b.mul_(self.w).sum()

    report = sw.audit(Mixed(), torch.randn(3, 4, requires_grad=True), backward=False)
    (row,) = [r for r in report.by_module() if r.phase == "forward" and "aten.clone" in r.ops[0]]
    clones = [op for op in row.ops if op.startswith("aten.clone")]
    assert len(clones) == 1, row.ops
    in_place = sum(c.in_place for c in report.copies if c.ops == ("aten.clone",))
    total = sum(1 for c in report.copies if c.ops == ("aten.clone",))
    assert 0 < in_place < total
    assert clones == [f"aten.clone ({in_place} of {total} in-place calls)"]
    assert f"aten.clone{IN_PLACE_MARK} aten.clone" not in report.to_text()


def test_the_text_table_shows_every_op_kind_of_a_row_with_its_count_uncut():
    # issue 40: self_attn's backward row was cut at 60 characters, after the kernel's clone, and
    # hid the 7 view-backward clones and 3 select_backwards; the oracle is the copies themselves
    layer = torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0)
    report = sw.audit(layer, torch.randn(5, 2, 8), backward=True)
    text = report.to_text()
    for row in report.by_module() + report.by_line():
        ran: dict[str, int] = {}
        for copy in report.copies:
            if copy.phase == row.phase and row.key in (copy.module, copy.where):
                for op in op_names(copy):
                    ran[op] = ran.get(op, 0) + 1
        assert dict(zip(row.ops, row.op_counts)) == ran, row
        for op, n in ran.items():
            assert counted_op(op, n) in text, op
    assert "aten.select_backward×3" in text and "aten.clone×7" in text


class _Transpose(torch.nn.Module):
    def forward(self, x):
        return x.t().contiguous()


class _LongNames(torch.nn.Module):
    """Two module paths longer than 60 characters that differ only before their last 40."""

    def __init__(self) -> None:
        super().__init__()
        stage = torch.nn.Module()
        stage.blocks = torch.nn.ModuleList(
            torch.nn.ModuleDict({"the_transposing_projection_of_this_block": _Transpose()})
            for _ in range(2)
        )
        self.a_stage_with_a_long_descriptive_name = stage

    def forward(self, x):
        for block in self.a_stage_with_a_long_descriptive_name.blocks:
            x = block["the_transposing_projection_of_this_block"](x)
        return x


def test_a_long_key_is_never_cut_silently_and_two_keys_never_read_the_same():
    # issue 40 review: keys were cut at 60 characters with no mark, so blocks.0's and blocks.1's
    # rows printed identically
    report = sw.audit(_LongNames(), torch.randn(3, 4, requires_grad=True), backward=False)
    keys = [row.key for row in report.by_module()]
    assert len(keys) == 2 and all(len(key) > 60 for key in keys)
    section = report.to_text().split("by module:")[1].splitlines()[2:4]
    shown = [line.split("  ")[0] for line in section]
    assert len(set(shown)) == 2, section
    for key, cell in zip(keys, shown):
        head, mark, tail = cell.partition("…")
        assert cell == key or (mark and key.startswith(head) and key.endswith(tail)), (key, cell)


class _Patches(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 16, stride=16)

    def forward(self, x):
        return (self.conv(x) + self.conv(2 * x) + self.conv(3 * x)).sum()


def test_a_count_goes_on_the_copy_op_not_on_the_op_it_ran_inside():
    # issue 40 review: "aten.clone in aten.convolution_backward×3" read as three runs of the
    # convolution's backward; it is three clones, each inside one
    report = sw.audit(_Patches(), torch.randn(2, 3, 32, 32))
    (row,) = [r for r in report.by_module() if r.key == "conv" and r.phase == "backward"]
    hidden = [c for c in report.copies if c.module == "conv" and c.hidden_in]
    assert row.ops == ("aten.clone in aten.convolution_backward",) and len(hidden) == 3
    text, page = report.to_text(), report._repr_html_()
    for shown in (text, page):
        assert "aten.clone×3 in aten.convolution_backward" in shown
        assert "convolution_backward×" not in shown
    assert counted_op("aten.clone (in-place call)", 2) == "aten.clone×2 (in-place call)"


def test_op_kinds_of_a_row_are_separated_by_a_mark_not_a_space():
    # a kind has spaces of its own ("aten.clone in aten.addmm"): kinds are joined by " · "
    from stridewidget.copies.audit.found import Row
    from stridewidget.copies.audit.html import _summary_table
    from stridewidget.copies.audit.report import _wrapped

    row = Row("k", "forward", 3, 8, ("aten.clone in aten.mm", "aten.cat"), (2, 1))
    assert _wrapped(row_ops_parts(row), 60) == ["aten.clone×2 in aten.mm · aten.cat"]
    assert "aten.clone×2 in aten.mm · aten.cat" in _summary_table("module", [row])


class _Clock:
    """A fake ``time.perf_counter``: each step call advances it by the step's cost times noise
    (jitter of a few per cent, and bursts of load that make a few calls several times slower)."""

    def __init__(self, seed: int) -> None:
        self.now = 0.0
        self.random = random.Random(seed)

    def __call__(self) -> float:
        return self.now

    def step(self, cost: float) -> None:
        noise = self.random.lognormvariate(0.0, 0.05)
        if self.random.random() < 0.05:  # a burst of load
            noise *= self.random.uniform(2.0, 4.0)
        self.now += cost * noise


def test_the_same_step_timed_against_itself_is_no_measurable_change_20_of_20(monkeypatch):
    verdicts = []
    for seed in range(20):
        clock = _Clock(seed)
        monkeypatch.setattr(timing.time, "perf_counter", clock)
        same = timing.interleaved(
            {"before": lambda c=clock: c.step(1e-3), "after": lambda c=clock: c.step(1e-3)}
        )
        verdicts.append(timing.verdict(same["before"], same["after"]))
    assert verdicts == ["no measurable change"] * 20


def test_a_real_change_is_seen_through_the_same_noise(monkeypatch):
    for seed in range(20):
        clock = _Clock(seed)
        monkeypatch.setattr(timing.time, "perf_counter", clock)
        timed = timing.interleaved(
            {"before": lambda c=clock: c.step(1e-3), "after": lambda c=clock: c.step(0.7e-3)}
        )
        assert timing.verdict(timed["before"], timed["after"]) == "faster"
        assert timing.verdict(timed["after"], timed["before"]) == "slower"


def test_the_verdict_rule_iqrs_apart_and_medians_5_percent_apart():
    t = timing.Timing
    base = t(1.0, 0.999, 1.001)
    # IQRs apart, medians 5 % apart: a change; 4.9 %: none
    assert timing.verdict(base, t(0.95, 0.949, 0.951)) == "faster"
    assert timing.verdict(base, t(0.951, 0.95, 0.952)) == "no measurable change"
    assert timing.verdict(base, t(1.05, 1.049, 1.051)) == "slower"
    assert timing.verdict(base, t(1.049, 1.048, 1.05)) == "no measurable change"
    # medians 30 % apart but IQRs overlap: none
    assert timing.verdict(t(1.0, 0.6, 1.4), t(0.7, 0.5, 0.9)) == "no measurable change"
    assert timing.verdict(t(0.7, 0.5, 0.9), t(1.0, 0.6, 1.4)) == "no measurable change"
