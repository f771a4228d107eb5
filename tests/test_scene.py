"""The scene: checked against brute force on live tensors, and bounded for huge ones.

Brute-force trick: a view of ``torch.arange(N)`` holds, at every logical index, its own storage
index, so the scene's mapping and touch counts can be compared with the tensor's values.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import jsonschema
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from stridewidget import Layout, LayoutError
from stridewidget.layout.touch import _histogram_counts, _nested_counts, _PreimageCounter
from stridewidget.scene.build import build_scene
from stridewidget.scene.storage import MAX_STRIP_CELLS


def logical_cells(tensor_scene):
    """(logical index, storage address) for every shown cell of one tensor in a scene."""
    logical = tensor_scene["logical"]
    for item in logical["slices"]:
        if item["kind"] != "slice":
            continue
        rows = item["rows"] if item["rows"] is not None else [None]
        cols = item["cols"] if item["cols"] is not None else [None]
        for r, row in enumerate(rows):
            for c, col in enumerate(cols):
                address = item["addr"][r][c]
                if item["rows"] is not None and row is None:
                    assert address is None
                    continue
                if item["cols"] is not None and col is None:
                    assert address is None
                    continue
                index = list(item["lead"])
                if item["rows"] is not None:
                    index.append(row)
                if item["cols"] is not None:
                    index.append(col)
                yield tuple(index), address


@st.composite
def views(draw):
    """A random strided view (non-negative strides, in bounds) of an arange storage."""
    ndim = draw(st.integers(0, 4))
    shape = tuple(draw(st.integers(1, 6)) for _ in range(ndim))
    strides = tuple(draw(st.integers(0, 7)) for _ in range(ndim))
    offset = draw(st.integers(0, 5))
    extent = offset + sum((n - 1) * s for n, s in zip(shape, strides)) + 1
    storage = extent + draw(st.integers(0, 4))
    base = torch.arange(storage)
    return base, torch.as_strided(base, shape, strides, offset)


@settings(max_examples=150, deadline=None)
@given(views())
def test_mapping_and_touch_counts_match_brute_force(case):
    base, view = case
    scene = build_scene({"v": view, "base": base}, threshold=40, edge_items=2)
    assert len(scene["storages"]) == 1
    storage = scene["storages"][0]
    view_scene = scene["tensors"][0]
    for index, address in logical_cells(view_scene):
        assert address == int(view[index])
    # touch counts: every shown cell, exact, from the values of the whole view
    true_counts = np.bincount(view.reshape(-1).numpy(), minlength=base.numel())
    shown = storage["cells"]["index"]
    assert view_scene["touch"] == [int(true_counts[c]) for c in shown]
    assert scene["tensors"][1]["touch"] == [1] * len(shown)
    # shown values are the stored values
    assert storage["cells"]["text"] == [str(c) for c in shown]
    # segments cover the storage in order, cells segments are exactly the shown cells
    position = 0
    covered = []
    for segment in storage["segments"]:
        assert segment["start"] == position < segment["stop"]
        if segment["kind"] == "cells":
            covered.extend(range(segment["start"], segment["stop"]))
        position = segment["stop"]
    assert position == base.numel()
    assert covered == shown


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.integers(1, 7), st.integers(0, 9)), min_size=0, max_size=4),
    st.integers(0, 3),
    st.integers(1, 2),
)
def test_preimage_counter_matches_enumeration(dims, offset, width):
    shape = tuple(n for n, _ in dims)
    strides = tuple(s for _, s in dims)
    layout = Layout(shape, strides, offset=offset, itemsize=4 * width, unit=4)
    addresses = [offset]
    for n, s in dims:
        addresses = [a + i * s for a in addresses for i in range(n)]
    cells = [a + j for a in addresses for j in range(width)]
    counter = _PreimageCounter(layout)
    for cell in range(layout.storage_size + 1):
        assert counter.cell(cell) == cells.count(cell)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.integers(1, 6), st.integers(-30, 30)), min_size=0, max_size=4),
    st.integers(0, 3),
)
def test_nested_counts_match_enumeration_when_they_apply(dims, extra_offset):
    shape = tuple(n for n, _ in dims)
    strides = tuple(s for _, s in dims)
    offset = extra_offset - sum(s * (n - 1) for n, s in dims if s < 0)
    layout = Layout(shape, strides, offset=offset)
    addresses = [offset]
    for n, s in dims:
        addresses = [a + i * s for a in addresses for i in range(n)]
    cells = list(range(layout.storage_size + 2))
    counts = _nested_counts(layout, cells)
    if counts is None:
        return
    assert counts == [addresses.count(c) for c in cells]


def test_nested_counts_apply_to_views_of_contiguous_tensors():
    layout = Layout((5, 4, 3), (6, 30, 2), offset=1)  # a permuted, sliced (4, 5, 6)
    assert _nested_counts(layout, [0, 1, 3]) is not None
    assert _nested_counts(Layout((4, 3), (1, 1)), [0]) is None  # windows: not nested


def _printed(x) -> list[str]:
    """The element texts of ``print(x)``: torch's (or NumPy's) own answer, one format for all."""
    body = repr(x).split("[", 1)[1].rsplit("]", 1)[0].replace("[", " ").replace("]", " ")
    return [text.strip() for text in body.replace("\n", " ").split(",") if text.strip()]


@pytest.mark.parametrize(
    "values",
    [
        [-0.99996, -1.0, 0.5],  # the case: "-1" next to "-1." before
        [994001.0, 1.5e-7, -2.5e10, 123.456, -0.203125, 1234567.0, -0.0, -0.01234],
        [0.0, 1.0, -2.0, 3.0],
        [0.1, 0.25, float("nan"), float("inf")],
    ],
)
def test_values_read_as_the_library_prints_them(values):
    x = torch.tensor(values, dtype=torch.float64)
    assert build_scene({"x": x})["storages"][0]["cells"]["text"] == _printed(x)
    a = np.array(values)
    assert build_scene({"a": a})["storages"][0]["cells"]["text"] == _printed(a)


def test_print_options_are_followed():
    x = torch.tensor([0.123456, 2.0])
    try:
        torch.set_printoptions(precision=2)
        assert build_scene({"x": x})["storages"][0]["cells"]["text"] == ["0.12", "2.00"]
        assert _printed(x) == ["0.12", "2.00"]
    finally:
        torch.set_printoptions(profile="default")


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.integers(1, 6), st.integers(-9, 9)), min_size=0, max_size=4),
    st.integers(1, 3),
)
def test_histogram_counts_match_enumeration(dims, width):
    shape = tuple(n for n, _ in dims)
    strides = tuple(s for _, s in dims)
    offset = -sum(s * (n - 1) for n, s in dims if s < 0)
    layout = Layout(shape, strides, offset=offset, itemsize=4 * width, unit=4)
    addresses = [offset]
    for n, s in dims:
        addresses = [a + i * s for a in addresses for i in range(n)]
    covered = [a + j for a in addresses for j in range(width)]
    cells = list(range(-1, layout.storage_size + 2))
    assert _histogram_counts(layout, cells) == [covered.count(c) for c in cells]


def test_huge_overlapping_views_get_exact_counts_quickly():
    windows = torch.empty(10**6, device="meta").unfold(0, 1000, 1)  # ~1e9 elements
    scene = build_scene({"w": windows})
    shown = scene["storages"][0]["cells"]["index"]
    expected = [min(c + 1, 1000, 10**6 - c) for c in shown]  # windows covering cell c
    assert scene["tensors"][0]["touch"] == expected


def test_numpy_negative_strides_map_to_the_right_cells():
    base = np.arange(20)
    view = base.reshape(4, 5)[::-1, 1::2]
    scene = build_scene({"v": view})
    for index, address in logical_cells(scene["tensors"][0]):
        assert address == view[index]
    arrows = {a["dim"]: a for a in scene["tensors"][0]["arrows"]}
    assert arrows[0]["stride"] == -5 and arrows[0]["to"] - arrows[0]["from"] == -5


def test_one_storage_per_distinct_storage_and_marks_are_distinct():
    x = torch.arange(12.0).reshape(3, 4)
    scene = build_scene({"x": x, "d": x.detach(), "c": x.clone(), "t": x.t()})
    assert [t["storage"] for t in scene["tensors"]] == ["s0", "s0", "s1", "s0"]
    assert scene["storages"][0]["tensors"] == ["t0", "t1", "t3"]
    marks = [t["mark"] for t in scene["tensors"]]
    assert len(set(marks)) == len(marks)


def test_views_with_another_dtype_get_their_own_grid_over_the_same_memory():
    x = torch.arange(4.0)
    scene = build_scene({"x": x, "bits": x.view(torch.int32), "other": torch.zeros(2)})
    assert [s["dtype"] for s in scene["storages"]] == ["float32", "int32", "float32"]
    assert scene["storages"][0]["same_memory"] == ["s1"]
    assert scene["storages"][1]["same_memory"] == ["s0"]
    assert scene["storages"][2]["same_memory"] == []


def test_stride_arrows_and_loop_for_stride_zero():
    x = torch.arange(4.0)
    scene = build_scene({"e": x.expand(3, 4)})
    arrows = scene["tensors"][0]["arrows"]
    assert [(a["dims"], a["stride"], a["label"]) for a in arrows] == [
        ([0], 0, "d0 ×0"),
        ([1], 1, "d1 +1"),
    ]
    assert arrows[0]["from"] == arrows[0]["to"]  # loop
    assert scene["tensors"][0]["touch"] == [3, 3, 3, 3]


@settings(max_examples=100, deadline=None)
@given(views())
def test_arrows_merge_equal_strides_and_never_share_a_lane(case):
    _, view = case
    arrows = build_scene({"v": view})["tensors"][0]["arrows"]
    lanes = [a["lane"] for a in arrows]
    assert sorted(lanes) == list(range(len(arrows)))
    # brute force: each dim of size > 1 is in exactly one arrow, with its stride, and the arrow
    # runs from the first element to its neighbour along that dim
    covered = sorted(d for a in arrows for d in a["dims"])
    assert (
        covered == [d for d, n in enumerate(view.shape) if n > 1] if view.numel() else covered == []
    )
    assert len({a["stride"] for a in arrows}) == len(arrows)
    for arrow in arrows:
        assert all(view.stride(d) == arrow["stride"] for d in arrow["dims"])
        first = view[(0,) * view.dim()] if view.dim() else view
        assert arrow["from"] == int(first)
        assert arrow["to"] == int(view[tuple(arrow["to_index"])])
    # loops sit lowest, then arcs from short to long, so nested arcs never cross
    order = sorted(arrows, key=lambda a: a["lane"])
    assert [abs(a["stride"]) for a in order] == sorted(abs(a["stride"]) for a in arrows)


def test_wrap_is_one_strip_when_short_else_the_natural_row():
    small = torch.zeros(3, 4)
    for view in (small, small.t(), small[:, ::2]):
        assert build_scene({"v": view})["storages"][0]["wrap"] == 12  # one row of memory
    x = torch.zeros(5, 7)
    for view in (x, x.t(), x[:, ::2], x[1:]):
        assert build_scene({"v": view})["storages"][0]["wrap"] == 28  # four rows of 7 per strip row
    nchw = torch.zeros(2, 3, 4, 5)
    assert build_scene({"v": nchw})["storages"][0]["wrap"] == 20  # one H×W plane per row
    channels_last = nchw.to(memory_format=torch.channels_last)
    assert build_scene({"v": channels_last})["storages"][0]["wrap"] == 30  # two W×C pixel rows
    assert build_scene({"v": torch.zeros(1000)})["storages"][0]["wrap"] == 25  # divides the length
    assert build_scene({"v": torch.zeros(1009)})["storages"][0]["wrap"] == MAX_STRIP_CELLS  # prime
    assert build_scene({"v": x}, wrap=5)["storages"][0]["wrap"] == 5
    with pytest.raises(ValueError, match="wrap"):
        build_scene({"v": x}, wrap=0)


@pytest.mark.parametrize(
    ("shape", "panels"),
    [
        ((4,), (None, None, [])),
        ((2, 3, 4), (None, 0, [])),
        ((2, 3, 4, 5), (0, 1, [])),
        ((2, 2, 2, 3, 4), (1, 2, [0])),
        ((2, 1, 2, 1, 2, 3), (2, 3, [0, 1])),
    ],
)
def test_panels_lay_slices_out_by_their_leading_dims(shape, panels):
    logical = build_scene({"v": torch.zeros(shape)})["tensors"][0]["logical"]
    got = logical["panels"]
    assert (got["row_dim"], got["col_dim"], got["select_dims"]) == panels
    # every panel dim is a leading dim, used once
    used = [d for d in (got["row_dim"], got["col_dim"]) if d is not None] + got["select_dims"]
    assert sorted(used) == list(range(max(len(shape) - 2, 0)))


SCHEMA = json.loads(
    (Path(__file__).parent.parent / "stridewidget" / "scene" / "schema.json").read_text(
        encoding="utf-8"
    )
)


@settings(max_examples=60, deadline=None)
@given(views())
def test_random_scenes_match_the_schema(case):
    base, view = case
    jsonschema.validate(build_scene({"base": base, "v": view}), SCHEMA)


@pytest.mark.parametrize(
    "make",
    [
        lambda: {
            "x": torch.arange(12.0).reshape(3, 4),
            "c": torch.zeros(2, 2, dtype=torch.complex64),
        },
        lambda: {"big": torch.empty(10**12, device="meta")},
        lambda: {"b": torch.zeros(3, dtype=torch.bool), "n": np.arange(20).reshape(4, 5)[::-1]},
        lambda: {"nchw": torch.zeros(2, 3, 4, 5), "e": torch.zeros(0, 3)},
        lambda: {
            "six": torch.zeros(2, 1, 2, 1, 2, 3),
            "layout": Layout((3,), (2,), storage_size=6),
        },
    ],
)
def test_edge_scenes_match_the_schema(make):
    scene = build_scene(make())
    jsonschema.validate(scene, SCHEMA)
    with pytest.raises(jsonschema.ValidationError):  # the schema does check: a broken scene fails
        jsonschema.validate({**scene, "version": 1}, SCHEMA)


@pytest.mark.parametrize(
    ("dtype", "values"),
    [
        (torch.bfloat16, [1.5, -2.0]),
        (torch.float16, [0.25, float("nan")]),
        (torch.bool, [True, False]),
        (torch.int8, [-3, 7]),
        (torch.complex64, [1 + 2j, 3 - 4j]),
        (torch.complex128, [0.5 + 2j, complex(3, -0.0)]),
        (torch.float8_e4m3fn, [0.5, 2.0]),
    ],
)
def test_values_are_formatted_per_dtype(dtype, values):
    x = torch.tensor(values).to(dtype)
    storage = build_scene({"x": x})["storages"][0]
    assert storage["cells"]["text"] == _printed(x)
    json.dumps(storage, allow_nan=False)  # nan/inf never reach the JSON numbers


def test_values_without_a_number_are_text_only():
    records = np.array([(1, 2.5)], dtype=[("a", "i4"), ("b", "f8")])
    dates = np.array(["2020-01-02"], dtype="datetime64[D]")
    scene = build_scene({"records": records, "dates": dates})
    assert scene["storages"][0]["cells"]["text"] == [str(records.tolist()[0])]
    assert scene["storages"][1]["cells"]["text"] == ["2020-01-02"]
    assert scene["storages"][1]["cells"]["value"] == [None]
    assert scene["storages"][1]["value_range"] is None


def test_meta_and_pure_layouts_have_no_values():
    scene = build_scene(
        {"m": torch.empty(3, 4, device="meta"), "l": Layout((2, 2), (1, 2), storage_size=4)}
    )
    assert [s["has_values"] for s in scene["storages"]] == [False, False]
    assert scene["storages"][1]["cells"]["index"] == [0, 1, 2, 3]


@pytest.mark.parametrize(
    "make",
    [
        lambda: torch.empty(10**9, device="meta"),
        lambda: torch.empty(10**9, device="meta").view(1000, 1000, 1000).transpose(0, 2),
        lambda: torch.empty(10**9, device="meta").view(*([10] * 9)),
        lambda: torch.empty(10**9, device="meta").view(10**5, 10**4)[:, ::7],
        lambda: torch.empty(10**6, device="meta").unfold(0, 1000, 1),  # ~1e9 overlapping
        lambda: torch.empty(1, device="meta").expand(10**9),
        lambda: torch.empty(2 * 10**9, device="meta")[10**9 :].view(1000, 10**6)[::3, 5::11],
    ],
)
def test_payload_is_bounded_for_huge_tensors(make):
    view = make()
    scene = build_scene({"v": view, "w": view})
    payload = json.dumps(scene, allow_nan=False)
    assert len(payload) < 200_000
    for storage in scene["storages"]:
        assert len(storage["cells"]["index"]) <= 1024
    for tensor in scene["tensors"]:
        shown = sum(1 for _ in logical_cells(tensor))
        assert 0 < shown <= 12 * 7 * 7
        assert tensor["layout"]["numel"] == math.prod(view.shape)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.integers(1, 2000), min_size=1, max_size=6),
    st.randoms(use_true_random=False),
)
def test_payload_is_bounded_for_random_huge_views(sizes, rng):
    while math.prod(sizes) > 10**9:
        sizes[sizes.index(max(sizes))] //= 2
    base = torch.empty(math.prod(sizes), device="meta").view(*sizes)
    order = list(range(len(sizes)))
    rng.shuffle(order)
    view = base.permute(*order)
    view = view[tuple(slice(rng.randint(0, 1), None, rng.randint(1, 3)) for _ in sizes)]
    if rng.random() < 0.3:
        view = view.unsqueeze(0).expand(rng.randint(1, 1000), *view.shape)
    scene = build_scene({"base": base, "view": view})
    assert len(json.dumps(scene, allow_nan=False)) < 300_000
    assert all(len(s["cells"]["index"]) <= 1024 for s in scene["storages"])


def test_only_the_shown_cells_are_read(monkeypatch):
    import stridewidget.scene.values as scene_module

    reads = []
    real = scene_module.read_cells

    def spy(obj, indices, **options):
        reads.append(list(indices))
        return real(obj, indices, **options)

    monkeypatch.setattr(scene_module, "read_cells", spy)
    x = torch.zeros(10**7)
    scene = build_scene({"x": x.view(1000, 10**4), "t": x.view(1000, 10**4).t()})
    assert reads == [scene["storages"][0]["cells"]["index"]]  # one read, of the shown cells
    assert len(reads[0]) <= 1024


def test_large_live_tensor_counts_touches_without_enumerating():
    x = torch.zeros(10**6)
    view = x.view(1000, 1000)[::2, 1::3]
    scene = build_scene({"v": view})
    storage = scene["storages"][0]
    truth = {c: int(((c // 1000) % 2 == 0) and (c % 1000) % 3 == 1) for c in range(10**6)}
    assert scene["tensors"][0]["touch"] == [truth[c] for c in storage["cells"]["index"]]


def test_bad_input_says_what_it_got():
    with pytest.raises(TypeError, match="mapping"):
        build_scene([torch.zeros(2)])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="list"):
        build_scene({"x": [1, 2]})
    with pytest.raises(LayoutError):
        build_scene({"x": torch.zeros(3).to_sparse()})


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.floats(allow_nan=True, allow_infinity=True, width=32),
            st.integers(-1000, 1000).map(float),
            st.floats(-0.0009765625, 0.0009765625, width=32),
        ),
        min_size=1,
        max_size=6,
    ),
    st.sampled_from([torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.complex64]),
)
def test_any_values_read_as_torch_prints_them(values, dtype):
    x = torch.tensor(values).to(dtype)
    assert build_scene({"x": x})["storages"][0]["cells"]["text"] == _printed(x)
