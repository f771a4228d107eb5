"""Thinned slices (issue #22, §3): the 2-D slices a scene lists plus the ranges its gap markers
name are every slice of the tensor exactly once, checked by brute force over many shapes; the
marker's text is the same ranges as Python indexing (evaluated, not parsed by hand); and every
renderer writes it."""

from __future__ import annotations

import itertools
import math

import pytest
import torch

import stridewidget as sw
from stridewidget.scene.build import build_scene


def _meta(*shape):
    return torch.empty(math.prod(shape), device="meta").view(*shape)


CASES = {
    "2d": lambda: torch.arange(12.0).reshape(3, 4),
    "2d-elided": lambda: torch.zeros(100, 100),
    "3d-few": lambda: torch.arange(24.0).reshape(2, 3, 4),
    "3d-thinned": lambda: torch.arange(120).reshape(10, 3, 4),
    "3d-elided": lambda: torch.zeros(100, 2, 2),
    "3d-permuted": lambda: torch.arange(300.0).reshape(3, 10, 10).permute(2, 0, 1),
    "4d-channels-last": lambda: torch.randn(1, 3, 8, 8).to(memory_format=torch.channels_last),
    "4d-elided": lambda: torch.zeros(100, 100, 2, 2),
    "4d-expanded": lambda: torch.zeros(3, 1, 2, 2).expand(3, 50, 2, 2),
    "5d-issue": lambda: torch.arange(720.0).reshape(2, 3, 4, 5, 6).permute(4, 2, 0, 3, 1),
    "5d-elided": lambda: _meta(40, 3, 50, 2, 2),
    "5d-expanded": lambda: torch.zeros(1, 4, 1, 3, 3).expand(7, 4, 9, 3, 3),
    "6d": lambda: torch.arange(3 * 4 * 5 * 2 * 2 * 2).reshape(3, 4, 5, 2, 2, 2),
    "6d-permuted": lambda: torch.zeros(2, 3, 4, 5, 6, 7).permute(5, 3, 1, 0, 2, 4),
    "6d-meta-elided": lambda: _meta(60, 7, 40, 3, 4, 4),
    "empty": lambda: torch.zeros(0, 3, 4),
}


class _Index:
    """``x[...]`` of this object is the key itself: a marker's text evaluated as Python."""

    def __getitem__(self, key):
        return key if isinstance(key, tuple) else (key,)


def _boxes_of_text(text: str, lead_shape: list[int]) -> list[list[tuple[int, int]]]:
    boxes = []
    for part in text.split(", x["):
        expr = part if part.startswith("x[") else "x[" + part
        key = eval(expr, {"x": _Index()})  # our own scene's text
        box = []
        for d, n in enumerate(lead_shape):
            k = key[d]
            if isinstance(k, slice):
                start, stop, step = k.indices(n)
                assert step == 1
                box.append((start, stop))
            else:
                box.append((k, k + 1))
        assert all(k == slice(None) for k in key[len(lead_shape) :]), text
        boxes.append(box)
    return boxes


def _check(scene: dict) -> None:
    for tensor in scene["tensors"]:
        logical = tensor["logical"]
        shape = logical["shape"]
        lead_shape = shape[: max(len(shape) - 2, 0)]
        everything = set(itertools.product(*(range(n) for n in lead_shape)))
        if math.prod(shape) == 0:
            assert logical["slices"] == []
            continue
        seen: list[tuple[int, ...]] = []
        for item in logical["slices"]:
            if item["kind"] == "slice":
                seen.append(tuple(item["lead"]))
                continue
            box_cells: list[tuple[int, ...]] = []
            for box in item["ranges"]:
                box_cells.extend(itertools.product(*(range(a, b) for a, b in box)))
            assert len(box_cells) == item["count"], item
            assert [list(map(list, b)) for b in _boxes_of_text(item["text"], lead_shape)] == [
                [list(p) for p in box] for box in item["ranges"]
            ]
            seen.extend(box_cells)
        assert len(seen) == len(set(seen)), "a slice is listed or described twice"
        assert set(seen) == everything, "a slice is neither listed nor described"
        assert seen == sorted(seen), "slices and ranges are not in index order"
        listed = [s for s in logical["slices"] if s["kind"] == "slice"]
        assert len(listed) <= scene["limits"]["max_slices"]


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("max_slices", [1, 2, 3, 8, 30])
def test_listed_plus_left_out_is_every_slice_once(name, max_slices):
    x = CASES[name]()
    # renamed to x so the marker text evaluates against _Index
    _check(build_scene({"x": x}, max_slices=max_slices))


@pytest.mark.parametrize("edge_items", [1, 2, 3])
def test_elision_and_thinning_together(edge_items):
    for shape in [(9, 9, 2, 2), (5, 20, 4, 2, 2), (30, 2, 30, 2, 2, 2)]:
        _check(build_scene({"x": _meta(*shape)}, edge_items=edge_items, threshold=16))


def test_random_shapes_and_permutations():
    gen = torch.Generator().manual_seed(22)
    for _ in range(60):
        ndim = int(torch.randint(2, 7, (1,), generator=gen))
        shape = [int(torch.randint(1, 9, (1,), generator=gen)) for _ in range(ndim)]
        perm = torch.randperm(ndim, generator=gen).tolist()
        view = _meta(*shape).permute(*perm)
        max_slices = int(torch.randint(1, 12, (1,), generator=gen))
        _check(build_scene({"x": view}, max_slices=max_slices, threshold=64))


def test_the_issue_view_names_the_missing_panel():
    x = CASES["5d-issue"]()
    gaps = [
        s for s in build_scene({"x": x})["tensors"][0]["logical"]["slices"] if s["kind"] == "gap"
    ]
    assert len(gaps) == 1 and gaps[0]["count"] == 6 * 4 * 2 - 8
    assert gaps[0]["text"].startswith("x[0, 3, 1, :, :]")


def test_every_renderer_writes_what_is_left_out():
    x = CASES["5d-issue"]()
    scene = build_scene({"x": x})
    texts = [s["text"] for s in scene["tensors"][0]["logical"]["slices"] if s["kind"] == "gap"]
    picture = sw.render_text(x=x)
    svg = sw.render_svg(x=x)
    for text in texts:
        assert text in picture
        # the SVG may break the note between ranges: every range is written, in order
        for part in text.split(", x["):
            assert part.removeprefix("x[") in svg
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    fig = sw.plot(x=x)
    drawn = " ".join(t.get_text() for ax in fig.axes for t in ax.texts)
    for text in texts:
        for part in text.split(", x["):
            assert part.removeprefix("x[") in drawn


def _mergeable(a, b) -> bool:
    """Two boxes of leading indices that are one box: equal in every dim but one, and adjacent
    there."""
    differ = [d for d, (p, q) in enumerate(zip(a, b, strict=True)) if p != q]
    return len(differ) == 1 and (
        a[differ[0]][1] == b[differ[0]][0] or b[differ[0]][1] == a[differ[0]][0]
    )


@pytest.mark.parametrize("shape", [(4, 5, 10, 10), (2, 8, 12, 12), (3, 4, 5, 6, 6), (12, 2, 9, 9)])
def test_a_picture_thinned_for_room_names_its_left_out_slices_as_ranges(shape):
    """Issue 36: the slices a picture leaves out for its height are written as ranges (``x[0,
    3:, :, :], x[1:3, :, :, :]``), not one by one; they are exactly the slices no drawn cell
    belongs to (brute force over every leading index, against the cells the picture draws)."""
    from stridewidget.notebook.picture import picture_of

    x = torch.arange(math.prod(shape), dtype=torch.float32).reshape(shape)
    scene = build_scene({"x": x})
    listed = picture_of(scene, 900, None)

    def groups(items):
        for item in items:
            if item[0] == "g":
                yield item
                yield from groups(item[4])

    drawn = {
        tuple(int(i) for i in g[2]["index"].split(","))[: len(shape) - 2]
        for g in groups(listed["items"])
        if g[1] == "sws-lcell"
    }
    lines = [g[4][0][3].strip() for g in groups(listed["items"]) if g[1] == "sws-gap-note"]
    lead_shape = list(shape[:-2])
    everything = set(itertools.product(*(range(n) for n in lead_shape)))
    left_out = everything - drawn
    said: list[list[tuple[int, int]]] = []
    for note in " ".join(lines).split("⋯ ")[1:]:
        ranges = note.split(" not shown: ", 1)[1].split(" (between ")[0].rstrip(",")
        said.extend(_boxes_of_text(ranges.replace(",     x[", ", x["), lead_shape))
    cells = [t for box in said for t in itertools.product(*(range(a, b) for a, b in box))]
    assert sorted(cells) == sorted(left_out) and len(cells) == len(set(cells))
    assert not any(_mergeable(a, b) for a, b in itertools.pairwise(said)), said
