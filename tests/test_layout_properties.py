"""Layout math checked against brute-force enumeration and against torch itself."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import stridewidget as sw
from stridewidget.layout.layout import DISPLAY_MAX_WORK, UNDECIDED_TEXT, Layout
from stridewidget.layout.overlap import (
    Undecided,
    bounded_knapsack,
    count_touched,
    internal_overlap_witness,
    ranges_overlap,
)

PROPERTY = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
#: For tests whose fixture (a monkeypatched solver path) holds for every generated input.
PROPERTY_WITH_FIXTURE = settings(
    PROPERTY,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


@st.composite
def layouts(draw, max_ndim=5, max_size=5, max_stride=24, negative=False, max_offset=12):
    ndim = draw(st.integers(0, max_ndim))
    shape = tuple(draw(st.integers(0, max_size)) for _ in range(ndim))
    low = -max_stride if negative else 0
    strides = tuple(draw(st.integers(low, max_stride)) for _ in range(ndim))
    offset = draw(st.integers(0, max_offset))
    if negative:  # keep every address non-negative, as in a real buffer
        offset += sum(-s * (n - 1) for n, s in zip(shape, strides) if s < 0 and n > 0)
    return shape, strides, offset


def all_addresses(shape, strides, offset):
    """Brute force: every logical index in row-major order, with its storage address."""
    for index in itertools.product(*(range(n) for n in shape)):
        yield index, offset + sum(i * s for i, s in zip(index, strides))


@PROPERTY
@given(layouts(negative=True))
def test_address_span_touched_overlap_match_enumeration(layout):
    shape, strides, offset = layout
    lay = Layout(shape, strides, offset)
    pairs = list(all_addresses(shape, strides, offset))
    addresses = [a for _, a in pairs]
    for index, expected in pairs:
        assert lay.address(index) == expected
        negative = tuple(i - n for i, n in zip(index, shape))
        assert lay.address(negative) == expected
    assert lay.numel == len(addresses)
    if addresses:
        assert lay.span == (min(addresses), max(addresses))
    else:
        assert lay.span is None
    assert lay.touched_exact
    assert lay.touched == len(set(addresses))
    assert lay.has_overlap == (len(set(addresses)) < len(addresses))
    witness = lay.overlap_witness
    if witness is not None:
        first, second = witness
        assert first != second
        assert lay.address(first) == lay.address(second)


@PROPERTY
@given(layouts(max_ndim=4, max_size=6, negative=True), st.integers(1, 3), st.integers(0, 40))
def test_touched_with_tiny_enumeration_limit_is_exact_or_a_flagged_bound(layout, width, limit):
    shape, strides, offset = layout
    cells = {a + w for _, a in all_addresses(shape, strides, offset) for w in range(width)}
    count, exact = count_touched(shape, strides, width, limit=limit)
    if exact:
        assert count == len(cells)
    else:
        assert count >= len(cells)


@PROPERTY
@given(layouts(negative=True), st.integers(1, 4))
def test_wide_elements_touch_and_overlap_as_cells(layout, width):
    """Elements that cover several cells (byte-misaligned NumPy views) are counted cell by cell."""
    shape, strides, offset = layout
    cells = [a + w for _, a in all_addresses(shape, strides, offset) for w in range(width)]
    count, exact = count_touched(shape, strides, width)
    assert exact and count == len(set(cells))
    numel = math.prod(shape)
    overlaps = len(set(cells)) < numel * width
    assert (internal_overlap_witness(shape, strides, width) is not None) == overlaps


@PROPERTY_WITH_FIXTURE
@given(
    st.lists(st.tuples(st.integers(1, 30), st.integers(0, 4)), min_size=0, max_size=5),
    st.integers(0, 200),
)
def test_bounded_knapsack_matches_brute_force(solver_paths, items, target):
    coefficients = [c for c, _ in items]
    bounds = [u for _, u in items]
    reachable = {
        sum(c * x for c, x in zip(coefficients, xs))
        for xs in itertools.product(*(range(u + 1) for u in bounds))
    }
    solution = bounded_knapsack(coefficients, bounds, target)
    assert (solution is not None) == (target in reachable)
    if solution is not None:
        assert all(0 <= x <= u for x, u in zip(solution, bounds))
        assert sum(c * x for c, x in zip(coefficients, solution)) == target


@PROPERTY
@given(
    layouts(max_ndim=3, negative=True),
    layouts(max_ndim=3, negative=True),
    st.integers(1, 3),
    st.integers(1, 3),
)
def test_ranges_overlap_matches_enumeration(a, b, width_a, width_b):
    cells_a = {x + w for _, x in all_addresses(*a) for w in range(width_a)}
    cells_b = {x + w for _, x in all_addresses(*b) for w in range(width_b)}
    assert ranges_overlap(a[0], a[1], a[2], width_a, b[0], b[1], b[2], width_b) == bool(
        cells_a & cells_b
    )


def _view(shape, strides, offset):
    lay = Layout(shape, strides, offset)
    storage = torch.arange(max(lay.storage_size, 1), dtype=torch.float32)
    return storage, torch.as_strided(storage, shape, strides, offset)


@PROPERTY
@given(layouts(max_ndim=5))
def test_flags_agree_with_torch(layout):
    shape, strides, offset = layout
    _, t = _view(shape, strides, offset)
    lay = sw.inspect(t)
    assert lay.is_contiguous == t.is_contiguous()
    if len(shape) == 4:
        assert lay.is_channels_last == t.is_contiguous(memory_format=torch.channels_last)
    if len(shape) == 5:
        assert lay.is_channels_last == t.is_contiguous(memory_format=torch.channels_last_3d)
    assert lay.is_f_contiguous == t.permute(tuple(reversed(range(t.ndim)))).is_contiguous()
    dense = torch._prims_common._is_non_overlapping_and_dense_or_false(t.shape, t.stride())
    assert lay.is_dense == dense


@PROPERTY
@given(layouts(max_ndim=6, max_size=4, max_stride=30))
def test_internal_overlap_exact_where_torch_gives_up(layout):
    shape, strides, offset = layout
    _, t = _view(shape, strides, offset)
    lay = sw.inspect(t)
    addresses = [a for _, a in all_addresses(shape, strides, offset)]
    assert lay.has_overlap == (len(set(addresses)) < len(addresses))
    # torch: 0 = no, 1 = yes, 2 = too hard. Where it decides, we agree.
    verdict = torch._debug_has_internal_overlap(t)
    if verdict != 2:
        assert lay.has_overlap == (verdict == 1)


@PROPERTY
@given(
    layouts(max_ndim=6, max_size=4, max_stride=30), layouts(max_ndim=6, max_size=4, max_stride=30)
)
def test_pairwise_overlap_matches_enumeration_and_numpy(a, b):
    lay_a, lay_b = Layout(*a), Layout(*b)
    storage = torch.zeros(max(lay_a.storage_size, lay_b.storage_size, 1))
    view_a = torch.as_strided(storage, *a)
    view_b = torch.as_strided(storage, *b)
    cells_a = {x for _, x in all_addresses(*a)}
    cells_b = {x for _, x in all_addresses(*b)}
    expected = bool(cells_a & cells_b)
    assert sw.overlap(view_a, view_b) == expected
    assert sw.overlap(view_a.numpy(), view_b.numpy()) == expected
    assert np.shares_memory(view_a.numpy(), view_b.numpy(), max_work=None) == expected


@PROPERTY
@given(layouts(max_ndim=4, max_size=5, max_stride=8, max_offset=30), st.integers(0, 40))
def test_checked_as_strided_bounds_first_index_and_values(layout, storage_size):
    shape, strides, offset = layout
    base = torch.arange(float(storage_size))
    lay = Layout(shape, strides, offset, storage_size=storage_size)
    pairs = list(all_addresses(shape, strides, offset))
    outside = [index for index, a in pairs if a >= storage_size]
    if outside:
        with pytest.raises(sw.LayoutError) as error:
            sw.as_strided(base, shape, strides, offset, allow_overlap=True)
        assert f"index {outside[0]}" in str(error.value)
        assert f"only {storage_size} elements" in str(error.value)
        assert not lay.in_bounds
        return
    view = sw.as_strided(base, shape, strides, offset, allow_overlap=True)
    assert torch.equal(view, torch.as_strided(base, shape, strides, offset))
    assert sw.same_storage(view, base)
    expected = torch.tensor([float(a) for _, a in pairs]).reshape(shape)
    assert torch.equal(view, expected)


def test_as_strided_keeps_input_offset_and_refuses_bad_arguments():
    x = torch.arange(10.0)
    tail = x[4:]
    assert torch.equal(sw.as_strided(tail, (3,), (1,)), x[4:7])
    # torch 2.x does the same (checked, not assumed): an omitted offset means the input's own.
    assert torch.equal(torch.as_strided(tail, (3,), (1,)), x[4:7])
    assert torch.equal(sw.as_strided(tail, (3,), (1,), storage_offset=0), x[0:3])
    with pytest.raises(sw.LayoutError, match="negative"):
        sw.as_strided(x, (2,), (-1,))
    with pytest.raises(sw.LayoutError, match="2 dims"):
        sw.as_strided(x, (2, 2), (1,))
    with pytest.raises(TypeError, match=r"torch\.Tensor"):
        sw.as_strided(np.arange(3), (2,), (1,))
    with pytest.warns(sw.OverlapWarning, match=r"indices \(0, 1\) and \(1, 0\)"):
        sw.as_strided(x, (3, 2), (1, 1))
    with pytest.raises(sw.LayoutError, match="overlaps itself"):
        sw.as_strided(x, (3, 2), (1, 1), allow_overlap=False)


def test_huge_views_stay_exact_without_enumeration():
    meta = torch.empty(10**12, device="meta")
    lay = sw.inspect(meta.view(10**6, 10**6).t())
    assert (lay.touched, lay.touched_exact, lay.has_overlap) == (10**12, True, False)
    storage = torch.empty(10**9, device="meta")
    windows = sw.inspect(torch.as_strided(storage, (10**9 - 9, 10), (1, 1)))
    assert windows.has_overlap and windows.numel > 10**9
    assert (windows.touched, windows.touched_exact) == (10**9, True)  # runs merged, not enumerated
    cube = sw.inspect(torch.as_strided(storage, (10**4, 10**4, 10**4), (3, 2, 1)))
    assert cube.has_overlap and not cube.touched_exact  # 1e8 bases: an upper bound, flagged
    assert cube.touched == 6 * (10**4 - 1) + 1  # the whole span: here the bound is attained
    expanded = sw.inspect(torch.empty(10**6, device="meta").expand(10**6, 10**6))
    assert (expanded.touched, expanded.touched_exact) == (10**6, True)


@PROPERTY
@given(layouts(max_ndim=4))
def test_numpy_and_torch_views_of_one_buffer_inspect_alike(layout):
    shape, strides, offset = layout
    assume(math.prod(shape) > 0)
    _, t = _view(shape, strides, offset)
    a = t.numpy()
    from_torch, from_numpy = sw.inspect(t), sw.inspect(a)
    assert from_numpy.shape == from_torch.shape
    assert from_numpy.strides == from_torch.strides
    assert from_numpy.touched == from_torch.touched
    assert from_numpy.has_overlap == from_torch.has_overlap
    assert sw.same_storage(t, a)


# --- regressions (issue 12) and the display budget (issue 11) ----------------------------------


def brute_force_cells(shape, strides, offset=0, width=1):
    """Every storage cell a view covers, with Python ints (no int64 overflow)."""
    return [a + w for _, a in all_addresses(shape, strides, offset) for w in range(width)]


@pytest.mark.parametrize(
    "shape, strides",
    [((3, 3, 2), (2**62, 2**62, 1)), ((5, 2), (2**61, 2**61)), ((4, 3), (2**62 + 1, -(2**61)))],
)
def test_touched_of_huge_strides_is_exact_without_int64_overflow(shape, strides):
    offset = sum(-s * (n - 1) for n, s in zip(shape, strides) if s < 0)
    cells = brute_force_cells(shape, strides, offset)
    lay = Layout(shape, strides, offset)
    assert lay.touched_exact
    assert lay.touched == len(set(cells))
    assert lay.has_overlap == (len(set(cells)) < len(cells))


def test_render_text_and_touch_counts_of_huge_strides_match_brute_force():
    from collections import Counter

    from stridewidget.render import render_text
    from stridewidget.scene.build import build_scene

    lay = Layout((5, 2), (2**61, 2**61))
    assert "A×2" in render_text(lay)  # drew instead of raising OverflowError
    scene = build_scene({"t": lay})
    reads = Counter(brute_force_cells(lay.shape, lay.strides))
    shown = scene["storages"][0]["cells"]["index"]
    assert scene["tensors"][0]["touch"] == [reads[c] for c in shown]


#: Found by a random search over 1-6-D meta layouts: no closed form or count split applies, and the
#: depth-first search and NumPy's solver needed 20-40 s (three huge strides with long dims beside
#: small ones).  The lattice search (``stridewidget/layout/overlap/lattice.py``) decides it in a few hundred steps.
ADVERSARIAL = Layout(
    (2, 100, 10**6, 10**6, 1000),
    (84, 1, 951793374218, 714707845745, 672294410367),
    storage_size=10**19,
)


def test_the_former_adversarial_layout_is_decided_within_the_display_budget():
    lay = Layout(ADVERSARIAL.shape, ADVERSARIAL.strides, storage_size=ADVERSARIAL.storage_size)
    assert lay.quick_has_overlap is True
    assert "overlap not decided" not in str(lay)
    first, second = internal_overlap_witness(lay.shape, lay.strides, max_work=DISPLAY_MAX_WORK)
    assert first != second
    assert all(0 <= i < n for index in (first, second) for i, n in zip(index, lay.shape))
    assert lay.address(first) == lay.address(second)


def test_loading_python_flint_does_not_count_against_the_display_deadline(monkeypatch):
    """The first display in a session that needs the lattice search imports python-flint (about
    0.1 s here, over the 30 ms deadline): that one-time setup must not turn the answer into
    "not decided"."""
    import builtins
    import time

    from stridewidget.layout.overlap import lattice

    real_import = builtins.__import__

    def slow_flint(name, *args, **kwargs):
        if name == "flint":
            time.sleep(0.2)  # a slow disk / a cold start
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(lattice, "_flint", ...)  # not loaded yet in this "session"
    monkeypatch.setattr(builtins, "__import__", slow_flint)
    lay = Layout(ADVERSARIAL.shape, ADVERSARIAL.strides, storage_size=ADVERSARIAL.storage_size)
    assert lay.quick_has_overlap is True


def test_displays_say_plainly_when_the_budget_did_not_decide_overlap(monkeypatch):
    """No layout found by random search still outruns the display budget; a budget of one step
    makes the adversarial layout one that does, to check what every display says then."""
    from stridewidget.layout import layout as _layout
    from stridewidget.render import render_svg, render_text
    from stridewidget.scene.build import build_scene

    monkeypatch.setattr(_layout, "DISPLAY_MAX_WORK", 1)
    lay = Layout(ADVERSARIAL.shape, ADVERSARIAL.strides, storage_size=ADVERSARIAL.storage_size)
    assert lay.quick_has_overlap is None
    assert "overlap not decided" in str(lay)
    assert UNDECIDED_TEXT in lay.explain().replace("Overlap:", "overlap:")
    facts = lay.to_dict()
    assert facts["has_overlap"] is None and facts["touched_exact"] is False
    assert facts["touched"] >= 1
    assert "overlap not decided" in render_text(lay)
    assert build_scene({"t": lay})["tensors"][0]["layout"]["has_overlap"] is None
    # the static picture's facts line says it too, instead of passing it off as "no overlap"
    assert "overlap not decided" in render_svg(lay)
    with pytest.raises(Undecided):
        internal_overlap_witness(lay.shape, lay.strides, max_work=1)


@PROPERTY
@given(layouts(negative=True), st.integers(1, 3))
def test_display_answers_are_exact_whenever_decided(layout, width):
    """Small layouts are always decided within the budget, and then agree with brute force."""
    shape, strides, offset = layout
    cells = brute_force_cells(shape, strides, offset, width)
    lay = Layout(shape, strides, offset, itemsize=width, unit=1)
    assert lay.quick_has_overlap == (len(set(cells)) < len(cells))
    facts = lay.to_dict()
    assert facts["has_overlap"] == lay.has_overlap
    assert facts["touched_exact"] and facts["touched"] == len(set(cells))


@pytest.mark.parametrize("max_work", [0, 1, 10, 100])
def test_budgeted_solver_answers_exactly_or_raises_undecided(max_work):
    rng = np.random.default_rng(7)
    for _ in range(200):
        n = int(rng.integers(3, 7))
        coefficients = [int(c) for c in rng.integers(1, 60, n)]
        bounds = [int(u) for u in rng.integers(0, 5, n)]
        target = int(rng.integers(0, sum(c * u for c, u in zip(coefficients, bounds)) + 2))
        exact = bounded_knapsack(coefficients, bounds, target)
        try:
            budgeted = bounded_knapsack(coefficients, bounds, target, max_work=max_work)
        except Undecided:
            continue
        assert (budgeted is None) == (exact is None)
