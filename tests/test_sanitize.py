"""sw.sanitize: every hazard kind against brute force (all indices enumerated, their addresses
compared) and against torch's own answer (the same write run without the sanitizer on a copy of
the storage); refused writes leave the data as it was; no false alarm on ordinary code."""

from __future__ import annotations

import inspect as pyinspect
import itertools
import pickle
import random
import warnings

import pytest
import torch

import stridewidget as sw
from stridewidget.check.rules import ORDER_FREE_OPS

THIS_FILE = "test_sanitize.py"


def address(t: torch.Tensor, index: tuple[int, ...]) -> int:
    return t.storage_offset() + sum(i * s for i, s in zip(index, t.stride()))


def _addresses(t: torch.Tensor) -> dict[tuple[int, ...], int]:
    """Brute force: every index of ``t`` and the storage element it reaches."""
    return {index: address(t, index) for index in itertools.product(*(range(n) for n in t.shape))}


def _random_view(rng: random.Random, base: torch.Tensor) -> torch.Tensor:
    """A random in-bounds view of ``base`` (a 1-D storage), strides >= 0."""
    while True:
        ndim = rng.randint(1, 3)
        shape = [rng.randint(1, 4) for _ in range(ndim)]
        strides = [rng.randint(0, 6) for _ in range(ndim)]
        offset = rng.randint(0, 8)
        if offset + sum((n - 1) * s for n, s in zip(shape, strides)) < base.numel():
            return base.as_strided(shape, strides, offset)


def _torch_refuses(write, *views: torch.Tensor) -> bool:
    """Torch's own answer: run the write without the sanitizer on views of a copied storage."""
    storage = views[0].untyped_storage().clone()
    copies = [torch.empty(0).set_(storage, v.storage_offset(), v.shape, v.stride()) for v in views]
    try:
        write(*copies)
    except RuntimeError:
        return True
    return False


def _line_of(source_fragment: str) -> int:
    lines, _ = pyinspect.getsourcelines(pyinspect.getmodule(_line_of))
    return 1 + next(i for i, line in enumerate(lines) if source_fragment in line)


def test_the_issues_internal_overlap_is_refused_before_it_runs():
    x = torch.arange(10.0)
    with pytest.raises(sw.LayoutHazard) as caught, sw.sanitize():
        x.as_strided((4, 3), (2, 1)).mul_(2)  # ISSUE-INTERNAL
    hazard = caught.value
    assert isinstance(hazard, sw.LayoutError)
    assert (hazard.kind, hazard.op) == ("internal-overlap", "aten.mul_")
    assert hazard.where.endswith(f"{THIS_FILE}:{_line_of('# ISSUE-INTERNAL')}")
    assert torch.equal(x, torch.arange(10.0))  # nothing was written
    # without the sanitizer torch runs it, and the shared elements are multiplied twice
    y = torch.arange(10.0)
    y.as_strided((4, 3), (2, 1)).mul_(2)
    assert y[2].item() == 8.0


def test_the_issues_out_argument_over_its_input_is_refused():
    a = torch.arange(10.0)
    with pytest.raises(sw.LayoutHazard) as caught, sw.sanitize():
        torch.add(a[:5], 1, out=a.as_strided((5,), (2,), 1))
    assert caught.value.kind == "partial-overlap"
    assert torch.equal(a, torch.arange(10.0))
    first, second, address = caught.value.witness
    out, source = a.as_strided((5,), (2,), 1), a[:5]
    assert _addresses(out)[first] == _addresses(source)[second] == address


@pytest.mark.parametrize("mode", ["raise", "warn", "collect"])
def test_internal_overlap_against_brute_force_and_torchs_rule(mode):
    rng = random.Random(1)
    for _ in range(150):
        base = torch.arange(40.0)
        view = _random_view(rng, base)
        addresses = _addresses(view)
        overlaps = len(set(addresses.values())) < len(addresses)
        refused = _torch_refuses(lambda v: v.mul_(2), view)
        before = base.clone()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", sw.LayoutHazardWarning)
            try:
                with sw.sanitize(on_hazard=mode) as report:
                    view.mul_(2)
                outcome = "ran"
            except sw.LayoutHazard:
                outcome = "hazard"
            except RuntimeError as error:
                assert "more than one element of the written-to tensor" in str(error)
                outcome = "torch"
        if refused:  # torch's own check came first, its error unchanged, nothing written
            assert outcome == "torch" and torch.equal(base, before)
            continue
        if mode == "raise":
            assert outcome == ("hazard" if overlaps else "ran"), (view.shape, view.stride())
            if overlaps:
                assert torch.equal(base, before)
                hazard = report.hazards[-1]
        else:
            assert outcome == "ran" and len(report.hazards) == overlaps
            hazard = report.hazards[-1] if overlaps else None
        if overlaps:
            first, second, address = hazard.witness
            assert first != second and addresses[first] == addresses[second] == address
            assert hazard.layouts[0] == sw.inspect(view)


def test_partial_overlap_against_brute_force_and_torchs_answer():
    rng = random.Random(2)
    seen = {"hazard": 0, "torch": 0, "ran": 0}
    for _ in range(300):
        base = torch.arange(40.0)
        out, source = _random_view(rng, base), _random_view(rng, base)
        out_cells = _addresses(out)
        if len(set(out_cells.values())) < len(out_cells):
            continue  # internal overlap: the test above
        if source.dim() > out.dim() or any(
            m not in (1, n) for m, n in zip(source.shape[::-1], out.shape[::-1])
        ):
            continue  # not broadcastable to the output
        wide = source.expand(out.shape)
        broadcast = _addresses(wide)
        # an elementwise op reads an element before writing it: only a shared element reached
        # through two DIFFERENT indices is a hazard, a broadcast dim's too (#38: the element read
        # at (i, 0) of m[:, :1] is read at (i, 1) as well)
        dims = range(out.dim())
        by_address = {}
        for j, a in broadcast.items():
            by_address.setdefault(a, []).append(j)
        shared = any(
            any(i[d] != j[d] for d in dims for j in by_address.get(a, ()))
            for i, a in out_cells.items()
        )
        zeros = torch.zeros(out.shape)  # the sum's shape is out's: source is broadcast to it
        refused = _torch_refuses(lambda o, s, zeros=zeros: torch.add(s, zeros, out=o), out, source)
        before = base.clone()
        try:
            with sw.sanitize():
                torch.add(source, zeros, out=out)
            outcome = "ran"
        except sw.LayoutHazard as hazard:
            outcome = "hazard"
            first, second, address = hazard.witness
            assert out_cells[first] == _addresses(source)[second] == address
        except RuntimeError:
            outcome = "torch"
        expected = "torch" if refused else ("hazard" if shared else "ran")
        assert outcome == expected, (out.shape, out.stride(), source.shape, source.stride())
        if outcome != "ran":
            assert torch.equal(base, before)
        seen[outcome] += 1
    assert all(seen.values()), seen  # every branch was met


def test_out_of_bounds_after_the_storage_shrank_against_brute_force():
    rng = random.Random(3)
    found = 0
    for _ in range(80):
        base = torch.arange(40.0)
        view = _random_view(rng, base)
        cells = _addresses(view)
        size = rng.randint(1, 39)
        base.untyped_storage().resize_(size * base.element_size())
        outside = {i: a for i, a in cells.items() if a >= size}
        for mode in ("raise", "collect"):  # out-of-bounds raises in every mode
            try:
                with sw.sanitize(on_hazard=mode):
                    view.sum()
                assert not outside
            except sw.LayoutHazard as hazard:
                assert hazard.kind == "out-of-bounds" and outside
                first, second, address = hazard.witness
                assert first == second and outside[first] == address
                found += 1
    assert found


def test_a_view_set_over_a_storage_that_shrank_after():
    storage = torch.arange(8.0).untyped_storage()
    tail = torch.empty(0).set_(storage, 6, (2,), (1,))  # bounds checked here, by set_
    storage.resize_(4 * tail.element_size())  # what FSDP-style code does to free memory
    before = storage.tolist()
    with (
        pytest.raises(sw.LayoutHazard, match="past the end of its storage") as caught,
        sw.sanitize(),
    ):
        tail.add_(1)
    assert caught.value.witness == ((0,), (0,), 6)
    assert storage.tolist() == before


def test_torchs_own_errors_go_through_unchanged():
    def dense_cases():
        yield lambda: torch.zeros(3).expand(2, 3).add_(1)  # internal overlap, stride 0
        a = torch.arange(10.0)
        yield lambda: torch.add(a[:5], 1, out=a[2:7])  # dense partial overlap
        b = torch.arange(9.0).reshape(3, 3)
        yield lambda: b.add_(b.t())

    for plain, checked in zip(dense_cases(), dense_cases()):
        with pytest.raises(RuntimeError) as bare:
            plain()
        with pytest.raises(RuntimeError) as sanitized, sw.sanitize():
            checked()
        assert type(sanitized.value) is type(bare.value) and not isinstance(
            sanitized.value, sw.LayoutHazard
        )
        assert str(sanitized.value) == str(bare.value)


def _order_free_writes():
    """Writes whose result cannot depend on their order, each on a tensor that overlaps itself
    without a stride-0 dim (so torch's own check lets it through)."""
    return {
        "fill_": lambda v: v.fill_(3.0),
        "zero_": lambda v: v.zero_(),
        "copy_ (one-element source)": lambda v: v.copy_(torch.tensor(2.0)),
        "uniform_": lambda v: v.uniform_(),
        "normal_": lambda v: v.normal_(),
        "random_": lambda v: v.random_(0, 5),
        "exponential_": lambda v: v.exponential_(),
        "geometric_": lambda v: v.geometric_(0.5),
        "log_normal_": lambda v: v.log_normal_(),
        "cauchy_": lambda v: v.cauchy_(),
        "bernoulli_ (scalar p)": lambda v: v.bernoulli_(0.5),
    }


def test_order_independent_writes_are_not_hazards():
    writes = _order_free_writes()
    assert {name.split()[0] for name in writes} == ORDER_FREE_OPS | {"copy_", "bernoulli_"}
    for name, write in writes.items():
        view = torch.zeros(10).as_strided((4, 3), (2, 1))
        with sw.sanitize() as report:
            write(view)
        assert report.ok, name
    # the same overlapping view with an order-dependent write is one
    with pytest.raises(sw.LayoutHazard), sw.sanitize():
        torch.zeros(10).as_strided((4, 3), (2, 1)).copy_(torch.ones(4, 3))


def test_custom_ops_with_unexpected_layouts_only_warn():
    @torch.library.custom_op("swtest::scaled", mutates_args=())
    def scaled(x: torch.Tensor) -> torch.Tensor:
        return x * 2

    torch.library.define("swtest::bump", "(Tensor(a!) x, Tensor y) -> ()")

    @torch.library.impl("swtest::bump", "CompositeExplicitAutograd")
    def bump(x, y):
        x.add_(y.clone())  # reads y before it writes x: right, whatever they share

    x = torch.arange(12.0).reshape(3, 4)
    with (
        pytest.warns(sw.LayoutHazardWarning, match="custom op") as caught,
        sw.sanitize() as report,  # raise mode: still only a warning
    ):
        result = scaled(x.t())
        buffer = torch.arange(10.0)
        torch.ops.swtest.bump(buffer[2:6], buffer[:4])
    assert torch.equal(result, x.t() * 2)
    kinds = [(h.kind, h.op) for h in report.hazards]
    assert kinds == [("custom-op-layout", "swtest.scaled"), ("custom-op-layout", "swtest.bump")]
    assert len(caught) == 2
    first, second, address = report.hazards[1].witness
    assert _addresses(buffer[2:6])[first] == _addresses(buffer[:4])[second] == address
    with sw.sanitize() as report:  # contiguous, separate: nothing to say
        scaled(x)
    assert report.ok


def test_ordinary_code_finds_nothing():
    x = torch.randn(4, 6)
    with sw.sanitize() as report:
        y = x.t().contiguous() + x.t()[1:, ::2].sum()
        x[:, ::2].mul_(3)
        torch.randn(5).relu_()
        x[1:3].transpose(0, 1).add_(1)
        x.add_(x)
        x.t().sub_(x.t())  # the same elements through the same strides: each read before written
        y.copy_(y.clone().t().t())
        z = torch.randn(4, 4)
        torch.where(z > 0, z, torch.zeros(4, 4), out=z)  # elementwise, its overload untagged
        torch.clamp(z, 0, 1, out=z)
        torch.add(z, 1, out=z)
        torch.cumsum(z, 0, out=z)  # torch runs it in place too (cumsum_)
    assert report.ok, report


def test_a_foreach_op_over_many_tensors_compares_only_those_sharing_a_storage():
    params = [torch.zeros(3) for _ in range(300)]
    flat = torch.zeros(20)
    # element 3 is index 1 of the written view and index 0 of its source: a different index
    sources = [torch.ones(3) for _ in range(299)] + [flat.as_strided((3,), (1,), 3)]
    with sw.sanitize(on_hazard="collect") as report:
        torch._foreach_add_(params, [torch.ones(3)] * 300)  # each its own storage: nothing
        torch._foreach_copy_([*params[:299], flat.as_strided((3,), (3,), 0)], sources)
    (hazard,) = report.hazards
    first, second, element = hazard.witness
    assert hazard.kind == "partial-overlap" and element == 3
    assert address(flat.as_strided((3,), (3,), 0), first) == element
    assert address(flat.as_strided((3,), (1,), 3), second) == element


def _mm_in_place_goes_wrong(n: int) -> bool:
    """Whether plain torch computes ``m @ b`` wrongly into ``m`` itself at size n × n (its GEMM
    packs small operands before writing, so whether the hazard shows depends on the size and
    the BLAS build: on torch 2.13's CPU build here 3 × 3 comes out right, 512 × 512 wrong)."""
    m = torch.arange(n * n, dtype=torch.float32).reshape(n, n) / n
    b = m + 1
    right, wrong = m @ b, m.clone()
    torch.mm(wrong, b, out=wrong)  # plain torch: rows read after they were overwritten
    return not torch.equal(wrong, right)


def test_an_out_argument_over_a_non_elementwise_ops_input_is_a_hazard():
    shows = [n for n in (3, 64, 512, 1024) if _mm_in_place_goes_wrong(n)]
    assert shows, "plain torch got every in-place mm right: the hazard is not shown"
    for n in (3, shows[0]):  # refused by geometry, before it runs, whether or not it would show
        m, b = torch.arange(n * n, dtype=torch.float32).reshape(n, n), torch.ones(n, n)
        before = m.clone()
        with pytest.raises(sw.LayoutHazard) as caught, sw.sanitize():
            torch.mm(m, b, out=m)
        assert caught.value.kind == "partial-overlap" and torch.equal(m, before)


@pytest.mark.filterwarnings("ignore:The PyTorch API of nested tensors")
def test_tensors_without_strides_are_left_alone():
    sparse = torch.eye(3).to_sparse()
    nested = torch.nested.nested_tensor([torch.ones(2), torch.ones(3)])
    with sw.sanitize() as report:
        product = torch.sparse.mm(sparse, torch.ones(3, 2))
        sparse.add_(sparse)
        nested.mul_(2)
    assert report.ok and torch.equal(product, torch.ones(3, 2))


def test_warn_mode_warns_and_lets_the_write_run():
    x = torch.arange(10.0)
    with (
        pytest.warns(sw.LayoutHazardWarning, match="one storage element"),
        sw.sanitize(on_hazard="warn") as report,
    ):
        x.as_strided((4, 3), (2, 1)).mul_(2)
    assert x[2].item() == 8.0 and len(report.hazards) == 1


def test_the_report_draws_with_the_static_renderer():
    with sw.sanitize(on_hazard="collect") as report:
        a = torch.arange(10.0)
        torch.add(a[:5], 1, out=a.as_strided((5,), (2,), 1))
    page = report._repr_html_()
    assert "partial-overlap" in page and page.count("<svg") == 1
    assert report.hazards[0]._repr_html_().count("stridewidget-fallback") == 1
    assert "1 layout hazard" in repr(report)


def test_a_hazard_pickles_whole():
    with sw.sanitize(on_hazard="collect") as report:
        torch.arange(10.0).as_strided((4, 3), (2, 1)).mul_(2)
    hazard = pickle.loads(pickle.dumps(report.hazards[0]))
    assert (hazard.kind, hazard.witness, str(hazard)) == (
        "internal-overlap",
        report.hazards[0].witness,
        str(report.hazards[0]),
    )


def test_a_bad_mode_is_a_clear_error():
    with pytest.raises(sw.LayoutError, match="on_hazard must be one of"), sw.sanitize("ignore"):
        pass
