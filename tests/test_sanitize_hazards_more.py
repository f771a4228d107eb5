"""sw.sanitize: hazards across storage objects and list entries, and the writes and reads that are
not hazards (views of freed storage, one-value writes).  The oracle is torch's own behaviour (run
plainly) and a brute-force look at the addresses."""

import numpy as np
import pytest
import torch

import stridewidget as sw


def _freed() -> torch.Tensor:
    p = torch.randn(4, 3)
    p.untyped_storage().resize_(0)  # FSDP2 frees a sharded parameter's storage like this
    return p


@pytest.mark.parametrize(
    "op",
    [torch.empty_like, lambda p: p.detach(), lambda p: p.view(-1), lambda p: p.new_zeros(3)],
)
def test_ops_that_read_no_element_of_a_freed_storage_run(op):
    expected = op(_freed()).shape  # torch runs it plainly
    with sw.sanitize() as report:
        assert op(_freed()).shape == expected
    assert report.ok


def test_torchs_own_refusal_of_a_freed_storage_passes_unchanged():
    with pytest.raises(RuntimeError) as plain:
        _freed().t()
    with sw.sanitize(), pytest.raises(RuntimeError) as sanitized:
        _freed().t()
    assert type(sanitized.value) is type(plain.value) and str(sanitized.value) == str(plain.value)


def _share_memory(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Brute force: does any byte of ``a`` lie in ``b``?"""

    def bytes_of(t):
        size, base = t.element_size(), t.untyped_storage().data_ptr()
        count = t.untyped_storage().nbytes() // size
        offsets = torch.arange(count).as_strided(t.shape, t.stride(), t.storage_offset())
        return {base + int(o) * size + k for o in offsets.flatten() for k in range(size)}

    return bool(bytes_of(a) & bytes_of(b))


def _from_numpy_pairs():
    a = np.random.rand(20)
    yield torch.from_numpy(a[1:]), torch.from_numpy(a[:-1])
    yield torch.from_numpy(a[:-2:2]), torch.from_numpy(a[2::2])
    buf = bytearray(80)
    yield (
        torch.frombuffer(buf, dtype=torch.float32, offset=4, count=10),
        torch.frombuffer(buf, dtype=torch.float32, offset=0, count=10),
    )


@pytest.mark.parametrize("pair", range(3))
def test_two_storage_objects_over_one_memory_are_compared_by_address(pair):
    dst, src = list(_from_numpy_pairs())[pair]
    assert dst.untyped_storage()._cdata != src.untyped_storage()._cdata
    assert _share_memory(dst, src)
    before = dst.clone()
    with sw.sanitize(), pytest.raises(sw.LayoutHazard) as caught:
        dst.add_(src)
    assert torch.equal(dst, before) and caught.value.kind == "partial-overlap"


def test_disjoint_memory_in_two_storage_objects_is_no_hazard():
    a = np.random.rand(20)
    dst, src = torch.from_numpy(a[10:]), torch.from_numpy(a[:10])
    assert not _share_memory(dst, src)
    with sw.sanitize() as report:
        dst.add_(src)
    assert report.ok


def _foreach_cases():
    a, b = torch.randn(5), torch.randn(5)
    yield lambda: torch._foreach_add_([a, b], [b, a])
    x, y = torch.randn(5), torch.randn(5)
    yield lambda: torch._foreach_add_([a, a], [x, y])  # one tensor written twice
    base = torch.randn(10)
    yield lambda: torch._foreach_mul_([base[:5], base[5:]], [base[5:], base[:5]])


@pytest.mark.parametrize("case", range(3))
def test_foreach_entries_of_other_positions_are_hazards(case):
    call = list(_foreach_cases())[case]
    with sw.sanitize(), pytest.raises(sw.LayoutHazard) as caught:
        call()
    assert caught.value.kind == "partial-overlap"


def test_foreach_same_position_same_tensor_is_elementwise():
    a, b = torch.randn(5), torch.randn(5)
    with sw.sanitize() as report:
        torch._foreach_add_([a, b], [a, b])
    assert report.ok


def test_two_outputs_of_one_op_over_one_memory_are_a_hazard():
    m = torch.zeros(4)
    with sw.sanitize(), pytest.raises(sw.LayoutHazard) as caught:
        torch.frexp(torch.randn(4), out=(m, m.view(torch.int32)))
    assert caught.value.kind == "partial-overlap"


def _one_value_writes():
    v = torch.zeros(10).as_strided((4, 3), (2, 1))  # rows share elements
    idx = torch.tensor([0, 2])
    yield lambda: v.index_fill_(1, idx, 5.0)
    yield lambda: v.__setitem__(v > -1, 0.0)  # index_put_ with a 0-d value
    yield lambda: v.scatter_(1, torch.zeros(4, 1, dtype=torch.long), 5.0)
    yield lambda: v.copy_(torch.tensor(5.0).expand(4, 3))  # stride 0 everywhere: one value
    yield lambda: v.copy_(v)  # torch skips a copy onto itself


@pytest.mark.parametrize("case", range(5))
def test_writes_of_one_value_are_order_free(case):
    with sw.sanitize() as report:
        list(_one_value_writes())[case]()
    assert report.ok


def test_a_scatter_of_many_values_into_an_overlapping_view_is_still_a_hazard():
    v = torch.zeros(10).as_strided((4, 3), (2, 1))
    with sw.sanitize(), pytest.raises(sw.LayoutHazard, match="one storage element"):
        v.scatter_(1, torch.zeros(4, 1, dtype=torch.long), torch.randn(4, 1))


def test_an_out_that_the_op_resizes_onto_its_input_is_a_hazard():
    x = torch.randn(100)
    plain = x.clone()
    torch.add(plain[:50], 1, out=plain[1:1])  # torch resizes out onto plain[1:51] and runs
    assert not torch.equal(plain[1:51], x[:50] + 1)  # the result read values it overwrote
    before = x.clone()
    with sw.sanitize(), pytest.raises(sw.LayoutHazard, match="resized") as caught:
        torch.add(x[:50], 1, out=x[1:1])
    assert caught.value.kind == "partial-overlap" and torch.equal(x, before)


def test_an_out_resized_into_fresh_memory_is_no_hazard():
    y, out = torch.randn(100), torch.empty(0)
    with sw.sanitize() as report:
        torch.add(y[:50], 1, out=out)
    assert report.ok and torch.equal(out, y[:50] + 1)


def test_memory_shared_only_at_the_same_index_is_no_hazard():
    b = torch.arange(10.0)
    expected = b.clone()
    expected[0:6:2] = expected[0:9:3].clone()  # what any order of writes gives
    with sw.sanitize() as report:
        b[0:6:2].copy_(b[0:9:3])  # written {0,2,4}, read {0,3,6}: 0 is index 0 of both
    assert report.ok and torch.equal(b, expected)


def _cells(t: torch.Tensor) -> dict:
    return {
        i: t.storage_offset() + sum(k * s for k, s in zip(i, t.stride()))
        for i in np.ndindex(*t.shape)
    }


def test_elementwise_partial_overlap_needs_two_different_indices_brute_force():
    rng = np.random.default_rng(0)
    seen = {"torch": 0, "hazard": 0, "ok": 0}
    for _ in range(400):
        base = torch.arange(30.0)
        shape = tuple(int(n) for n in rng.integers(1, 4, size=int(rng.integers(1, 3))))
        views = []
        for _ in range(2):
            strides = tuple(int(s) for s in rng.integers(1, 5, size=len(shape)))
            views.append(base.as_strided(shape, strides, int(rng.integers(0, 6))))
        out, src = views
        out_cells, src_cells = _cells(out), _cells(src)
        if len(set(out_cells.values())) < len(out_cells):
            continue  # internal overlap: another test
        hazard = any(out_cells[i] == src_cells[j] for i in out_cells for j in src_cells if i != j)
        try:
            with sw.sanitize(on_hazard="collect") as report:
                out.copy_(src)
        except RuntimeError:  # torch's own refusal (a dense overlap), passed through
            seen["torch"] += 1
            continue
        seen["hazard" if hazard else "ok"] += 1
        assert report.ok != hazard, (shape, out.stride(), src.stride(), out.storage_offset())
        if hazard:
            first, second, element = report.hazards[0].witness
            assert first != second and out_cells[first] == src_cells[second] == element
    assert seen["hazard"] and seen["ok"], seen
