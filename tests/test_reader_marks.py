"""A storage cell read by many tensors still names every reader on its strip (issue 22 §4): the
marks run together ("AB×2CD") when they do not fit their pieces, or the first ones plus "+N".

The oracle is torch: which storage offsets each tensor reads, found by brute force over its
indices (``data_ptr``), never the scene's own touch counts.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest
import torch

import stridewidget as sw
from stridewidget.render.primitives import G, text_width

SVG = "{http://www.w3.org/2000/svg}"
#: One strip text: marks (a capital, its digits, ×count or ?) run together, then maybe "+N".
STRIP_TEXT = re.compile(r"((?:[A-Z]\d*(?:×\d+|\?)?)+)?(\+\d+)?")
MARK = re.compile(r"[A-Z]\d*(?:×\d+|\?)?")


def crowd(n: int) -> dict[str, torch.Tensor]:
    """The first ``n`` of six views over one storage: storage[4] is read by all of them (b twice)."""
    x = torch.arange(32.0)  # 32 cells to a row: the narrowest cells the picture draws
    views = {
        "a": x,
        "b": x.expand(2, 32),
        "c": x[1::3],
        "d": x.view(4, 8).t(),
        "e": x[2:8],
        "f": x.view(2, 16)[:, 1:],
    }
    return dict(list(views.items())[:n])


def reads(t: torch.Tensor) -> dict[int, int]:
    """Oracle: storage offset → how many of ``t``'s indices torch puts there."""
    base, size = t.untyped_storage().data_ptr(), t.element_size()
    counts: dict[int, int] = {}
    for index in np.ndindex(*t.shape):
        offset = (t[index].data_ptr() - base) // size
        counts[offset] = counts.get(offset, 0) + 1
    return counts


def expected_marks(views: dict[str, torch.Tensor], cell: int) -> list[str]:
    """The marks of the tensors that read ``cell``, in the order they were given (A, B, ...)."""
    marks = []
    for letter, t in zip("ABCDEF", views.values()):
        n = reads(t).get(cell, 0)
        if n:
            marks.append(letter + (f"×{n}" if n > 1 else ""))
    return marks


def strip_texts(g: ET.Element) -> list[ET.Element]:
    """The cell's texts drawn in its reader strip (above the value and the index)."""
    top = float(g.find(f"{SVG}rect").get("y"))
    return [t for t in g.iter(f"{SVG}text") if float(t.get("y")) <= top + G["strip_h"]]


def named_readers(texts: list[str]) -> tuple[list[str], int]:
    """(the marks written, the count of readers left to "+N")."""
    marks, rest = [], 0
    for text in texts:
        match = STRIP_TEXT.fullmatch(text)
        assert match and text, f"not a strip text: {text!r}"
        marks += MARK.findall(match.group(1) or "")
        rest += int(match.group(2)[1:]) if match.group(2) else 0
    return marks, rest


@pytest.mark.parametrize("n", [4, 5, 6])
def test_every_reader_of_a_crowded_cell_is_named_on_its_strip(n):
    views = crowd(n)
    root = ET.fromstring(sw.render_svg(**views))
    cells = [g for g in root.iter(f"{SVG}g") if "sws-scell" in g.get("class", "").split()]
    crowded = 0
    for g in cells:
        cell = int(g.get("data-cell"))
        want = expected_marks(views, cell)
        marks, rest = named_readers([t.text for t in strip_texts(g)])
        if not want:
            assert (marks, rest) == ([], 0), cell
            continue
        # the first readers by name, in order, the others counted: all of them, never nothing
        assert marks == want[: len(marks)] and len(marks) + rest == len(want), (cell, marks, want)
        assert marks, cell
        crowded += len(want) >= 4
        width = float(g.find(f"{SVG}rect").get("width"))
        # named in the cell, not by widening it: no wider than the widest values get (2 cells)
        assert width <= 2 * G["cell_w"], (cell, width)
        for t in strip_texts(g):  # inside its own cell: never over a neighbour's marks
            size = float(t.get("font-size", root.get("font-size")))
            assert size >= G["strip_letter_min_px"]
            assert text_width(t.text, size) <= width, (cell, t.text)
        # the tooltip keeps the full list, with the counts torch gives
        title = g.find(f"{SVG}title").text
        for name, t in views.items():
            k = reads(t).get(cell, 0)
            assert (f"· {name} reads it {k}×" in title) == (k > 0), (cell, name, title)
    assert crowded >= 1  # storage[4] at least: the case is the one under test
