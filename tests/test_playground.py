"""The as_strided playground's Python side, and the shared table its browser math is tested on."""

from __future__ import annotations

import itertools
import json
import pathlib
import re
import sys

import numpy as np
import pytest
import torch

import stridewidget as sw
from stridewidget.errors import LayoutError
from stridewidget.notebook.playground import Playground
from stridewidget.render.primitives import MAX_WIDTH

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import make_playground_cases


@pytest.fixture(scope="module")
def cases():
    return make_playground_cases.build_cases()


def test_committed_case_table_is_what_python_computes_now(cases):
    """js/playground/cases.json must be regenerated whenever the inspector's answers change."""
    committed = json.loads(make_playground_cases.OUTPUT.read_text())
    assert committed == cases, (
        "js/playground/cases.json is stale: run `.venv/bin/python tests/make_playground_cases.py`"
    )


def test_case_table_covers_refusals_overlaps_and_every_trick(cases):
    layouts = [layout for base in cases["bases"] for layout in base["layouts"]]
    assert sum(1 for layout in layouts if layout["refusal"]) >= 40
    assert sum(1 for layout in layouts if not layout["refusal"] and layout["has_overlap"]) >= 20
    presets = cases["bases"][0]["presets"]
    for name in ("broadcast", "sliding", "transpose", "merge", "checkerboard", "blocks"):
        assert presets[name]["refusal"] is None
    assert "maps to storage element 24" in presets["seed-merge"]["refusal"]
    assert presets["seed-checkerboard"]["has_overlap"]  # the seed's checkerboard is no checkerboard


def test_every_name_the_browser_gives_is_the_op_torch_builds(cases):
    """Node runs the page's recogniser on every valid setting; torch evaluates each name."""
    named = [
        case
        for base in cases["bases"]
        for case in [*base["layouts"], *base["ops"], *base["presets"].values()]
        if "names" in case
    ]
    assert sum(len(case["names"]) for case in named) >= 150
    assert [case["wrong_names"] for case in named if case["wrong_names"]] == []
    assert all(case["expr"] in case["names"] for base in cases["bases"] for case in base["ops"])


def test_default_playground_is_a_small_arange_and_its_own_view():
    pg = sw.playground()
    assert (pg.base_shape, pg.base_strides, pg.storage_size) == ([4, 6], [6, 1], 24)
    assert _shown_values(pg) == {i: str(i) for i in range(24)}  # arange: value = storage index
    assert torch.equal(pg.view, torch.arange(24).view(4, 6))
    assert pg.error == ""


@pytest.mark.parametrize(
    ("size", "stride", "reference"),
    [
        ((6, 4), (1, 6), lambda x: x.t()),
        ((4, 6), (6, 0), lambda x: x[:, 0:1].expand(4, 6)),
        ((4, 4, 3), (6, 1, 1), lambda x: x.unfold(1, 3, 1)),
        ((2, 2, 2, 3), (6, 1, 12, 2), sw.tricks.checkerboard),
    ],
)
def test_view_and_code_build_the_same_tensor(size, stride, reference):
    x = torch.arange(24.0).view(4, 6)
    pg = sw.playground(x, size=size, stride=stride, storage_offset=0)
    expected = reference(x)
    assert torch.equal(pg.view, expected)
    assert sw.same_storage(pg.view, x)
    from_code = eval(pg.code, {"torch": torch, "x": x})
    assert torch.equal(from_code, expected) and from_code.stride() == expected.stride()


def test_edits_from_either_side_update_the_verdict():
    x = torch.arange(24).view(4, 6)
    pg = sw.playground(x)
    pg.set_state({"stride": [6, 2]})  # what a front-end edit does
    assert pg.stride == [6, 2]
    assert pg.view is None
    assert pg.error.startswith("as_strided: index (3, 3) maps to storage element 24")
    pg.size = [4, 3]
    assert pg.error == "" and torch.equal(pg.view, x[:, ::2])


def test_invalid_settings_never_reach_torch_as_strided(monkeypatch):
    calls = []
    real = torch.as_strided

    def spy(*args, **kwargs):
        calls.append(args[1:])
        return real(*args, **kwargs)

    monkeypatch.setattr(torch, "as_strided", spy)
    pg = sw.playground(
        torch.arange(24).view(4, 6), size=(96, 224, 224), stride=(150528, 50176, 224)
    )
    assert pg.view is None
    assert "but the storage has only 24 elements" in pg.error
    pg.stride = [-1, 1, 1]
    assert pg.view is None and "stride (-1, 1, 1) has a negative entry" in pg.error
    pg.stride, pg.offset = [1, 1, 1], -3
    assert pg.view is None and "storage_offset -3 is negative" in pg.error
    pg.size, pg.stride, pg.offset = [2], [1], 0
    assert pg.view.tolist() == [0, 1]
    assert ((2,), (1,), 0) in calls
    storage_size = 24
    for size, stride, offset in calls:  # every setting torch saw was in bounds
        assert offset >= 0 and min(stride, default=0) >= 0
        assert offset + sum((n - 1) * s for n, s in zip(size, stride)) < storage_size


def test_numpy_base_gives_numpy_views_of_the_whole_buffer():
    owner = np.arange(12.0)
    a = owner.reshape(3, 4)[1:]  # offset 4 into a 12-element buffer
    pg = sw.playground(a, size=(3,), stride=(4,), storage_offset=1)
    assert pg.storage_size == 12 and pg.base_offset == 4
    view = pg.view
    assert isinstance(view, np.ndarray) and view.tolist() == [1.0, 5.0, 9.0]
    assert np.shares_memory(view, owner)
    view[0] = -1.0  # a view, not a copy
    assert owner[1] == -1.0


def test_read_only_numpy_base_gives_read_only_views():
    a = np.arange(6.0)
    a.flags.writeable = False
    view = sw.playground(a, size=(2, 3), stride=(1, 2)).view
    assert view.tolist() == [[0.0, 2.0, 4.0], [1.0, 3.0, 5.0]]
    assert not view.flags.writeable


def _shown_values(pg: Playground) -> dict[int, str]:
    """Storage index -> the value text the playground's picture shows for it."""
    cells = pg.scene["storages"][0]["cells"]
    texts = cells["text"] or [None] * len(cells["index"])
    return dict(zip(cells["index"], texts, strict=True))


def test_big_storage_draws_a_bounded_picture_of_what_the_view_reads():
    x = torch.arange(10**6)
    pg = sw.playground(x, size=(3, 3), stride=(10, 1))
    assert pg.storage_size == 10**6
    assert pg.view.tolist() == [[0, 1, 2], [10, 11, 12], [20, 21, 22]]
    assert len(json.dumps(pg.picture)) < 200_000
    shown = _shown_values(pg)
    read = {int(v) for v in pg.view.flatten()}
    assert read <= set(shown) and all(shown[i] == str(x[i].item()) for i in read)


def test_the_picture_shows_x_where_it_lives_in_a_big_storage():
    big = torch.arange(10**6)
    x = big[500_000:500_024].view(4, 6)
    pg = sw.playground(x)
    shown = _shown_values(pg)
    assert all(shown[i] == str(i) for i in range(500_000, 500_024))
    tail = sw.playground(big[-3:])
    assert _shown_values(tail)[10**6 - 1] == "999999"


def test_meta_tensor_has_no_values_but_a_layout():
    pg = sw.playground(torch.empty(4, 6, device="meta"), size=(6, 4), stride=(1, 6))
    assert set(_shown_values(pg).values()) == {None} and pg.error == ""
    assert pg.view.shape == (6, 4)


def test_an_edit_lays_the_picture_out_again_and_says_which_setting_it_shows():
    x = torch.arange(24).view(4, 6)
    pg = sw.playground(x)
    pg.stride = [1, 4]
    assert pg.drawn == {"size": [4, 6], "stride": [1, 4], "offset": 0}
    view = pg.picture["tensors"][1]
    assert view["walk"]["strides"] == [1, 4]
    # two refused settings draw x alone (equal scenes) but not the same cells past the end
    pg.stride = [7, 1]
    first = json.dumps(pg.picture)
    pg.stride = [8, 1]
    assert json.dumps(pg.picture) != first and pg.drawn["stride"] == [8, 1]
    escaping = sorted({8 * i + j for i in range(4) for j in range(6)} - set(range(24)))
    drawn = re.findall(r'"sws-phantom", \{"cell": (\d+)\}', json.dumps(pg.picture))
    assert [int(c) for c in drawn] == escaping[:16]


def test_not_a_tensor_is_a_clear_type_error():
    with pytest.raises(
        TypeError, match=r"takes a torch\.Tensor or numpy\.ndarray, got builtins\.list"
    ):
        sw.playground([1, 2, 3])


def test_static_fallback_and_text_say_what_the_setting_is():
    pg = sw.playground(torch.arange(24).view(4, 6), size=(4, 6), stride=(6, 0))
    data, _ = pg._repr_mimebundle_()
    assert "torch.as_strided(x, size=(4, 6), stride=(6, 0), storage_offset=0)" in data["text/plain"]
    assert "overlapping" in data["text/plain"]
    assert "<svg" in data["text/html"]
    assert data["application/vnd.jupyter.widget-view+json"]["model_id"] == pg.model_id
    pg.stride = [7, 1]
    data, _ = pg._repr_mimebundle_()
    assert "refused: as_strided: index (3, 3)" in data["text/plain"]
    # the refusal text stays; the static picture is the phantom strip alone, no view drawn
    assert "refused: as_strided: index (3, 3)" in data["text/html"]
    assert "past the end of the storage" in data["text/html"]
    keyed = _keyed(pg)  # the fallback's picture, with the keys the saved fallback leaves out
    assert 'class="sws-phantom"' in keyed and "sws-tensor" not in keyed


def _keyed(pg) -> str:
    """The SVG of the picture the playground's fallback draws, each cell's group and key kept."""
    from stridewidget.render.primitives import MAX_WIDTH
    from stridewidget.render.svg import svg_of_picture

    return svg_of_picture(pg._draw(pg.scene, MAX_WIDTH, None))


def _escapes_by_brute_force(size, stride, offset, storage_size):
    """Every storage position >= storage_size the setting reads -> the first index reading it."""
    first: dict[int, tuple[int, ...]] = {}
    for index in itertools.product(*(range(n) for n in size)):
        position = offset + sum(i * s for i, s in zip(index, stride, strict=True))
        if position >= storage_size:
            first.setdefault(position, index)
    return dict(sorted(first.items()))


@pytest.mark.parametrize(
    ("size", "stride", "offset"),
    [((4, 6), (7, 1), 0), ((3, 5), (1, 9), 2), ((40,), (3,), 5), ((2, 3, 4), (12, 4, 1), 1)],
)
def test_static_fallback_draws_the_escaping_cells_torch_would_read(size, stride, offset):
    pg = sw.playground(torch.arange(24).view(4, 6), size=size, stride=stride, storage_offset=offset)
    assert pg.view is None
    fallback = pg._repr_mimebundle_()[0]["text/html"]
    assert "data-cell" not in fallback  # a picture, not an app: its keys are checked on `html`
    html = _keyed(pg)
    want = _escapes_by_brute_force(size, stride, offset, 24)
    drawn = [int(cell) for cell in re.findall(r'class="sws-phantom" data-cell="(\d+)"', html)]
    assert drawn == list(want)[:16]
    titles = re.findall(r"storage\[(\d+)\] does not exist: view\[([\d,]*)\]", html)
    assert titles == [(str(c), ",".join(map(str, i))) for c, i in list(want.items())[:16]]
    if len(want) > 16:
        assert f"(the first 16 of {len(want)})" in html
    assert 'class="sws-last" data-cell="23"' in html
    # a long run of escapes wraps within the picture's width budget instead of running off
    (width,) = re.findall(r'<svg xmlns="[^"]+" class="sws-svg" role="img" width="(\d+)"', html)
    assert int(width) <= MAX_WIDTH


def test_playground_class_is_an_anywidget_with_its_bundle():
    import anywidget

    assert issubclass(Playground, anywidget.AnyWidget)
    pg = sw.playground()
    assert "export" in pg._esm and len(pg._esm) > 1000  # the built bundle, not a path


def test_numpy_base_stepping_backwards_is_one_honest_line():
    a = np.arange(12.0)[::-1]
    assert a.strides == (-a.itemsize,)  # NumPy's own: the view steps backwards
    with pytest.raises(LayoutError) as refused:
        sw.playground(a)
    message = str(refused.value)
    assert "\n" not in message and "torch" not in message
    assert "stride (-1,) steps backwards" in message and "non-negative strides only" in message
    pg = sw.playground(a.base)  # what the line says to do
    assert pg.error == "" and np.array_equal(pg.view, a.base) and np.shares_memory(pg.view, a)
    pg.stride = [-1]  # an edit that steps backwards: the same line, no torch advice
    assert pg.view is None and pg.error == message
    pg.stride, pg.offset, pg.size = [2], 1, [3]
    assert pg.view.tolist() == a.base[1::2][:3].tolist()
