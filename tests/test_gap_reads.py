"""A storage gap says whether it holds cells the tensors read (issue 36, "Truth").

Oracle: the storage offsets each tensor reads, enumerated by brute force (``data_ptr`` of every
element) — not the package's touch counts.  Every gap the scene counted must hold exactly that
many read cells; every picture (static SVG, widget picture, text) must say "read" for a gap
that holds read cells and "untouched" only for one that holds none.
"""

from __future__ import annotations

import itertools
import random
import re

import pytest
import torch
from e2e.lint_corpus import CASES, tensors_of

import stridewidget as sw
from stridewidget.notebook.picture import picture_of
from stridewidget.scene.build import build_scene


def _read_offsets(t: torch.Tensor) -> set[int]:
    base, size = t.untyped_storage().data_ptr(), t.element_size()
    return {
        (t[index].data_ptr() - base) // size for index in itertools.product(*map(range, t.shape))
    }


def _random_views(seed: int = 36, count: int = 40) -> list[dict[str, torch.Tensor]]:
    rng = random.Random(seed)
    views = []
    for _ in range(count):
        storage = torch.arange(float(rng.randint(200, 900)))
        ndim = rng.randint(1, 4)
        shape = [rng.randint(1, 4) for _ in range(ndim)]
        strides = [rng.randint(0, 60) for _ in range(ndim)]
        span = sum((n - 1) * s for n, s in zip(shape, strides))
        if span >= storage.numel():
            continue
        offset = rng.randint(0, storage.numel() - 1 - span)
        views.append({"v": storage.as_strided(shape, strides, offset)})
    return views


def _cases():
    for case in CASES:
        if not case.playground:
            tensors = tensors_of(case)
            if all(
                isinstance(t, torch.Tensor) and t.device.type == "cpu" for t in tensors.values()
            ):
                yield case.name, tensors, case.wrap
    for k, tensors in enumerate(_random_views()):
        yield f"random-{k}", tensors, None
    # a review's cases: a dense permuted view whose gaps (over 4,096 cells) are all read cells
    yield "dense-permuted", {"p": torch.arange(60000.0).reshape(10, 20, 300).permute(2, 0, 1)}, None
    yield "sparse-columns", {"c": torch.arange(3000.0).reshape(3, 1000)[:, ::7]}, None


CASES_HERE = list(_cases())


@pytest.mark.parametrize(("name", "tensors", "wrap"), CASES_HERE, ids=[c[0] for c in CASES_HERE])
def test_each_gap_counts_its_read_cells_and_every_picture_says_so(name, tensors, wrap):
    scene = build_scene(tensors, wrap=wrap)
    objects = list(tensors.values())
    svg = sw.render_svg(scene)
    texts = []

    def walk(items):
        for item in items:
            if item[0] == "g":
                if "sws-gap" in item[1].split():
                    texts.append(item[3])
                walk(item[4])

    walk(picture_of(scene, None, None)["items"])  # the layout the saved SVG is (900 px, light)
    text_picture = sw.render_text(scene)
    for storage in scene["storages"]:
        readers = [o for o, t in zip(objects, scene["tensors"]) if t["storage"] == storage["id"]]
        read = set().union(*(_read_offsets(o) for o in readers))
        for gap in (s for s in storage["segments"] if s["kind"] == "gap"):
            truth = sum(1 for c in range(gap["start"], gap["stop"]) if c in read)
            assert gap["read"] is None or gap["read"] == truth, (gap, truth)
            # said by its own marker, or by a longer strip's marker that holds it
            said = [t for t in texts if _holds(t, gap["start"], gap["stop"])]
            assert said, (name, gap["start"], gap["stop"])
            if truth:
                assert not any("untouched" in t for t in said), said
                assert all("read" in t for t in said) or gap["read"] is None, said
                assert any(t in svg for t in said), said
            elif gap["read"] == 0 and all(_range(t) == (gap["start"], gap["stop"]) for t in said):
                assert all("untouched" in t for t in said), said
        # every marker's words against brute force over the range it names
        for text in texts:
            start, stop = _range(text)
            truth = sum(1 for c in range(start, stop) if c in read)
            count = stop - start
            if "untouched" in text:
                assert truth == 0, (text, truth)
            elif text.startswith(f"{count:,} read cells not drawn"):
                assert truth == count, (text, truth)
            elif "of them read" in text:
                (said_read,) = re.findall(r"([\d,]+) of them read", text)
                assert int(said_read.replace(",", "")) == truth, (text, truth)
        if any(s["kind"] == "gap" and s["read"] for s in storage["segments"]):
            assert "read cells not drawn" in text_picture or "of them read" in text_picture


def _range(title: str) -> tuple[int, int]:
    """The storage range a gap marker's title names: ``…: storage[A] … storage[B]`` -> (A, B+1)."""
    first, last = re.findall(r"storage\[([\d,]+)\]", title)[-2:]
    return int(first.replace(",", "")), int(last.replace(",", "")) + 1


def _holds(title: str, start: int, stop: int) -> bool:
    low, high = _range(title)
    return low <= start and stop <= high


def test_the_corpus_has_gaps_of_read_cells_and_of_unread_ones():
    kinds = set()
    for _name, tensors, wrap in CASES_HERE:
        for storage in build_scene(tensors, wrap=wrap)["storages"]:
            for gap in storage["segments"]:
                if gap["kind"] == "gap" and gap["read"] is not None:
                    kinds.add(gap["read"] > 0)
    assert kinds == {True, False}
