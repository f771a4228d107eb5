"""Issue 22 §3 (it fits): the collapse rule of the storage window, against brute force.

In a storage longer than one strip, a run of at least ``COLLAPSE_RUN`` storage cells that no shown
tensor reads is one gap segment ("⋯ 36 unread") instead of rows of cells.  The oracle is the layout
itself, enumerated element by element (``torch.as_strided`` over ``arange``: the storage index
each element reads), never the scene's own touch counts.
"""

from __future__ import annotations

import random

import pytest
import torch

import stridewidget as sw
from stridewidget.scene.build import build_scene
from stridewidget.scene.storage import COLLAPSE_RUN, MAX_STRIP_CELLS


def _read_cells(t: torch.Tensor) -> set[int]:
    """Every storage index ``t`` reads (brute force through a tensor of indices)."""
    size = t.untyped_storage().nbytes() // t.element_size()
    index = torch.arange(size)
    view = torch.as_strided(index, t.shape, t.stride(), t.storage_offset())
    return set(view.reshape(-1).tolist())


def _random_views(seed: int) -> list[torch.Tensor]:
    rng = random.Random(seed)
    views = []
    for _ in range(40):
        size = rng.randrange(33, 3000)
        base = torch.arange(float(size))
        ndim = rng.randrange(1, 4)
        shape = [rng.randrange(1, 6) for _ in range(ndim)]
        strides = [rng.choice([0, 1, 2, 3, 7, 37, 101]) for _ in range(ndim)]
        reach = sum((n - 1) * s for n, s in zip(shape, strides))
        if reach >= size:
            continue
        offset = rng.randrange(0, size - reach)
        views.append(base.as_strided(shape, strides, offset))
    return views


ISSUE_CASES = {
    "step-37": lambda: {"v": torch.arange(1000.0)[::37]},
    "5-d permuted": lambda: {
        "p": torch.arange(720.0).reshape(2, 3, 4, 5, 6).permute(4, 2, 0, 3, 1)
    },
    "two views": lambda: (lambda x: {"a": x[::9], "b": x[5::50]})(torch.arange(2000.0)),
}


def _check(tensors: dict[str, torch.Tensor]) -> None:
    scene = build_scene(tensors)
    for storage in scene["storages"]:
        members = [t for t in scene["tensors"] if t["storage"] == storage["id"]]
        objects = [tensors[t["name"]] for t in members]
        read = set().union(*(_read_cells(t) for t in objects))
        shown = storage["cells"]["index"]
        # the segments cover the storage once, in order; a gap stands for exactly its cells
        position = 0
        drawn: list[int] = []
        for segment in storage["segments"]:
            assert segment["start"] == position and segment["stop"] > segment["start"]
            if segment["kind"] == "cells":
                drawn.extend(range(segment["start"], segment["stop"]))
            position = segment["stop"]
        assert position == storage["size"] and drawn == shown
        # every storage cell a shown logical cell reads is drawn (a read cell is never collapsed)
        for t in members:
            for slice_ in t["logical"]["slices"]:
                for row in slice_.get("addr", []):
                    assert all(a in set(shown) for a in row if a is not None)
        if not any(t["logical"]["elided"] for t in members):
            assert read <= set(shown), sorted(read - set(shown))[:5]
        if storage["size"] <= MAX_STRIP_CELLS:
            continue
        # no run of COLLAPSE_RUN drawn cells that nothing reads is left standing
        streak = 0
        previous = None
        for cell in shown:
            unread = cell not in read
            streak = streak + 1 if unread and previous == cell - 1 and streak else int(unread)
            assert streak < COLLAPSE_RUN, f"cells up to {cell}: {streak} unread cells drawn"
            previous = cell
        # each gap is the number of cells it stands for: its cells are neither drawn nor lost
        gaps = [s for s in storage["segments"] if s["kind"] == "gap"]
        assert sum(s["stop"] - s["start"] for s in gaps) == storage["size"] - len(shown)


@pytest.mark.parametrize("name", ISSUE_CASES)
def test_issue_cases_collapse_unread_runs_and_keep_every_read_cell(name):
    _check(ISSUE_CASES[name]())


def test_step_37_draws_one_marked_cell_per_unread_run():
    scene = build_scene({"v": torch.arange(1000.0)[::37]})
    storage = scene["storages"][0]
    gaps = [s for s in storage["segments"] if s["kind"] == "gap"]
    assert storage["cells"]["index"] == list(range(0, 1000, 37))
    assert [s["stop"] - s["start"] for s in gaps] == [36] * 27  # 28 read cells, 0 … 999


@pytest.mark.parametrize("seed", range(4))
def test_random_views_collapse_exactly(seed):
    for view in _random_views(seed):
        _check({"v": view})


def test_a_short_storage_is_drawn_whole():
    x = torch.arange(20.0).reshape(4, 5)[1:, ::2]
    storage = build_scene({"x": x})["storages"][0]
    assert storage["cells"]["index"] == list(range(20))


def test_static_picture_marks_the_collapsed_runs():
    svg = sw.render_svg(v=torch.arange(1000.0)[::37])
    assert svg.count("⋯ 36 unread") == 27  # every run between two reads: unread, and said so
