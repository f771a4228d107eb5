"""Issue 36: a storage strip's gap marker says in its drawn words which storage cells it stands
for wherever its row has the room (``⋯ 97 unread [3…99]``), not only on hover; every range it
says is checked against torch's own storage offsets (brute force over every index)."""

from __future__ import annotations

import re

import pytest
import torch

from stridewidget.notebook.picture import picture_of
from stridewidget.scene.build import build_scene

CASES = {
    "columns": lambda: torch.arange(10000.0).reshape(100, 100)[:, :3],
    "every-third-row": lambda: torch.arange(3000.0).reshape(30, 100)[::3, 10:14],
    "step-37": lambda: torch.arange(1000.0)[::37],
    "read-run": lambda: torch.arange(10000.0),
}
RANGE = re.compile(r"\[([\d,]+) ?… ?([\d,]+)\]$")


def _groups(items):
    for item in items:
        if item[0] == "g":
            yield item
            yield from _groups(item[4])


def _read_offsets(v: torch.Tensor) -> set[int]:
    """Every storage element ``v`` reads: its offsets as torch computes them."""
    n = v.untyped_storage().nbytes() // v.element_size()
    return set(
        torch.arange(n).as_strided(v.shape, v.stride(), v.storage_offset()).flatten().tolist()
    )


def _markers(v: torch.Tensor):
    listed = picture_of(build_scene({"v": v}), 900, None)
    groups = list(_groups(listed["items"]))
    drawn = {g[2]["cell"] for g in groups if g[1] == "sws-scell"}
    markers = []
    for g in groups:
        if g[1].startswith("sws-gap "):
            words = next(i[3] for i in g[4] if i[0] == "t")
            hover = [int(n.replace(",", "")) for n in re.findall(r"storage\[([\d,]+)\]", g[3])]
            markers.append((words, hover))
    return drawn, markers


@pytest.mark.parametrize("name", list(CASES))
def test_a_gap_marker_says_the_storage_range_it_stands_for(name):
    v = CASES[name]()
    n = v.untyped_storage().nbytes() // v.element_size()
    read = _read_offsets(v)
    drawn, markers = _markers(v)
    assert markers
    covered: list[int] = []
    for words, (first, last) in markers:
        cells = set(range(first, last + 1))
        assert not cells & drawn, words
        covered.extend(cells)
        count = int(words.split()[1].replace(",", ""))
        assert count == len(cells), words
        said = RANGE.search(words)
        if said:  # the drawn range is the one the marker stands for, in torch's offsets
            assert (int(said[1].replace(",", "")), int(said[2].replace(",", ""))) == (first, last)
        if "unread" in words or "untouched" in words:
            assert not cells & read, words
        elif re.match(r"⋯ [\d,]+ read", words):
            assert cells <= read, words
    assert sorted(covered) == sorted(set(range(n)) - drawn)  # each undrawn cell once


@pytest.mark.parametrize("name", ["columns", "every-third-row", "read-run"])
def test_the_first_gap_of_a_strip_with_room_says_its_range_in_words(name):
    """The strip's first collapsed run, found by brute force (the first storage cells no drawn
    cell shows), is written out in the marker's words."""
    v = CASES[name]()
    drawn, markers = _markers(v)
    first = min(set(range(max(drawn))) - drawn)
    last = min(c for c in drawn if c > first) - 1
    said = RANGE.search(markers[0][0])
    assert said, markers[0][0]
    assert (int(said[1].replace(",", "")), int(said[2].replace(",", ""))) == (first, last)
