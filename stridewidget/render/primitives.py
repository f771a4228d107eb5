"""The drawing primitives of the static picture, in px, that every backend draws.

:mod:`.svg` writes them as SVG and :mod:`.mpl` draws them with matplotlib, so both show the same
picture.  Besides the primitives: the picture's px budget (``MAX_WIDTH``, ``PAD``), the width of a
text (:func:`text_width`: the monospace advance ``char_em`` a character, more for one the browser
draws from a wider fallback font; every text gets room of its own, so no two overlap and none is
cut), and :func:`translated`, which moves primitives built at (0, 0) into place.
"""

from __future__ import annotations

import textwrap
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from ..style import STYLE

__all__ = [
    "MAX_WIDTH",
    "PAD",
    "Group",
    "Path",
    "Picture",
    "Rect",
    "Text",
    "fitting",
    "path_data",
    "px",
    "text_width",
    "translated",
    "wrapped",
]

G = STYLE["geometry"]
LIMITS = STYLE["limits"]
#: The static picture's width budget in px: a 900 px notebook column (issue 35), margins included.
#: The widget lays out for the width its column reports; a narrower page scales the static SVG
#: down by its ``viewBox``, so nothing scrolls sideways.
MAX_WIDTH = 900
PAD = G["pad"]


@dataclass(slots=True)
class Rect:
    x: float
    y: float
    w: float
    h: float
    fill: Any  # a colour, ("pattern", order) or None
    stroke: str | None = None
    stroke_width: float = 1.0
    dash: str | None = None
    rx: float = 0.0


@dataclass(slots=True)
class Text:
    x: float
    y: float  # the baseline
    text: str
    size: float
    fill: str
    anchor: str = "start"  # start | middle | end
    bold: bool = False
    halo: str | None = None  # a stroke painted under the glyphs
    role: str | None = None  # "v": a cell's value, "i": its storage index, "l": the words on them


@dataclass(slots=True)
class Path:
    commands: list[tuple]  # ("M", x, y) | ("L", x, y) | ("C", x1, y1, x2, y2, x, y)
    stroke: str
    width: float = 1.6
    dash: str | None = None
    arrow: bool = True  # an arrowhead at the end
    fill: str | None = None


@dataclass(slots=True)
class Group:
    """Primitives that belong together (one cell, one arrow) with the ids tests select on."""

    cls: str
    children: list = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)
    title: str | None = None


@dataclass
class Picture:
    width: float
    height: float
    theme: str
    items: list
    title: str
    tensors: list[Mapping[str, Any]]
    #: laid out again to fit its weight budget (its cells' addresses in one line, a grid cut...):
    #: the live widget lays it out again without (nothing it paints is saved)
    lightened: bool = False
    #: grid slices that continue below in blocks of columns (too wide for their card)
    split_grids: int = field(default=0, compare=False)
    #: the saved fallback's SVG once written (by the weight check; see ``picture.draw``)
    written: str | None = field(default=None, repr=False, compare=False)


def px(value: Any) -> str:
    """A coordinate as every painter writes it: rounded to 0.1 px, no trailing ``.0``.

    >>> px(3.25), px(4.0), px(7)
    ('3.2', '4', '7')
    """
    if isinstance(value, float):
        text = f"{value:.1f}"
        return text[:-2] if text.endswith(".0") else text
    return str(value)


def path_data(commands: list[tuple]) -> str:
    """A :class:`Path`'s commands as SVG path data (the same text for every painter).

    >>> path_data([("M", 0, 1.25), ("L", 3.0, 4)])
    'M 0 1.2 L 3 4'
    """
    return " ".join(f"{op} " + " ".join(px(float(v)) for v in values) for op, *values in commands)


#: Advance of a character no monospace font in the stack draws (em): the browser takes it from a
#: proportional fallback font (DejaVu Sans: ℵ 0.75 em, Ѩ 1.16), an em for each letter it stands
#: for (a digraph or ligature: Ǆ 1.42 em, its NFKD ``DŽ``: two).  A few single glyphs are wider
#: still (‱ 1.74, ⟶ 1.43); the measured texts holding them stay inside their room.
_FALLBACK_EM = 1.0
#: What every monospace font of the stack draws at one advance (the WGL4 set's letters): ASCII,
#: Latin-1 and Latin Extended-A up to U+017F, and the Greek and Cyrillic alphabets.
_MONOSPACED, _GREEK, _CYRILLIC = "\u017f", ("\u0384", "\u03ce"), ("\u0400", "\u045f")
#: The marks the picture writes itself besides those (dashes, ellipses, arrows, ``≈ ∞``): the
#: monospace fonts draw them, one advance each (so no picture of ASCII names changes).
_OWN_MARKS = frozenset("—–…→←↑↓−≈∞≤≥▸↳✗⋯")


@lru_cache(maxsize=4096)
def _advances(char: str) -> float:
    """The room of one character (a code point) in monospace advances (``char_em``): one for what
    the monospace fonts draw and for marks drawn over their letter (combining marks, joiners),
    two for an East Asian wide or fullwidth character (CJK, Hangul, kana, emoji: about an em,
    emoji up to 1.25 em), an em a letter it stands for for anything else."""
    if (
        char <= _MONOSPACED
        or _GREEK[0] <= char <= _GREEK[1]
        or _CYRILLIC[0] <= char <= _CYRILLIC[1]
        or char in _OWN_MARKS
        or unicodedata.category(char) in ("Mn", "Me", "Cf")
    ):
        return 1.0
    if unicodedata.east_asian_width(char) in ("W", "F"):
        return 2.0
    letters = sum(1 for c in unicodedata.normalize("NFKD", char) if not unicodedata.combining(c))
    return max(1, letters) * _FALLBACK_EM / G["char_em"]


def text_width(text: str, size: float) -> float:
    """The room ``text`` takes at ``size`` px: never less than what the browser paints.  ASCII
    (and Latin-1) text: one monospace advance (``char_em``) a character; a character drawn from a
    wider fallback font more (CJK and emoji two advances, other scripts and symbols an em).

    >>> text_width("abc", 10) == 3 * G["char_em"] * 10
    True
    >>> text_width("注意", 10) == 4 * G["char_em"] * 10, text_width("ℵ", 10)
    (True, 10.0)
    """
    if text.isascii() or max(text) <= _MONOSPACED:  # one advance each (Latin-1 and on)
        return len(text) * G["char_em"] * size
    return sum(map(_advances, text)) * G["char_em"] * size


def fitting(text: str, room: float, size: float) -> int:
    """How many of ``text``'s first characters fit ``room`` px at ``size`` px.

    >>> fitting("abcdef", 3.5 * G["char_em"] * 10, 10), fitting("注意力", 5 * G["char_em"] * 10, 10)
    (3, 2)
    """
    em = G["char_em"] * size
    if text.isascii():
        return min(len(text), max(0, int(room // em)))
    used = 0.0
    for count, char in enumerate(text):
        used += _advances(char) * em
        if used > room + 1e-9:  # to rounding: a sum of advances that meets the room fits it
            return count
    return len(text)


def fitted(text: str, room: float, size: float) -> str:
    """``text``, or its first characters and "…" where it takes more than ``room`` px at
    ``size`` px (a name in a wide script: each letter may take two advances).

    >>> fitted("abc", 100, 10), fitted("注意力权重矩阵", 6 * G["char_em"] * 10, 10)
    ('abc', '注意…')
    """
    if text_width(text, size) <= room:
        return text
    return text[: fitting(text, room - text_width("…", size), size)] + "…"


def wrapped(text: str, room: float, size: float) -> list[str]:
    """``text`` in lines of at most ``room`` px at ``size`` px, broken at spaces (a word longer
    than a line is broken inside it); a continued line is indented.

    >>> wrapped("shape (1, 1, 1) · strides (1, 1, 1)", 20 * G["char_em"] * 10, 10)
    ['shape (1, 1, 1) ·', '    strides (1, 1,', '    1)']
    >>> wrapped("名前 注意力权重矩阵", 10 * G["char_em"] * 10, 10)
    ['名前', '    注意力', '    权重矩', '    阵']
    """
    chars = max(8, int(room / (G["char_em"] * size)))
    if text.isascii() or all(_advances(char) == 1.0 for char in text):  # one advance a character
        if len(text) <= chars:
            return [text]
        return textwrap.wrap(text, chars, subsequent_indent="    ", break_on_hyphens=False) or [
            text
        ]
    lines: list[str] = []
    line = ""
    for word in text.split():
        lead = "    " if lines else ""
        candidate = f"{line} {word}" if line else lead + word
        if text_width(candidate, size) <= room:
            line = candidate
            continue
        if line:
            lines.append(line)
            lead = "    "
        while text_width(lead + word, size) > room:  # a word longer than a line: broken inside
            count = max(1, fitting(word, room - text_width(lead, size), size))
            lines.append(lead + word[:count])
            word, lead = word[count:], "    "
        line = lead + word
    return [*lines, line] if line else lines or [text]


def translated(items: list, dx: float, dy: float) -> list:
    """``items`` moved by (dx, dy) (in place: the items were built for this one use).

    >>> [(r.x, r.y) for r in translated([Rect(1, 2, 3, 4, None)], 10, 20)]
    [(11, 22)]
    """
    for item in items:
        kind = type(item)
        if kind is Rect or kind is Text:  # the most of them: the fast path
            item.x += dx
            item.y += dy
        elif isinstance(item, Group):  # a cell: its shapes inline, no call
            for child in item.children:
                if type(child) is Rect or type(child) is Text:
                    child.x += dx
                    child.y += dy
                else:
                    translated([child], dx, dy)
        elif isinstance(item, Path):
            item.commands = [
                (op, *[v + (dx if i % 2 == 0 else dy) for i, v in enumerate(values)])
                for op, *values in item.commands
            ]
        else:
            item.x += dx
            item.y += dy
    return items
