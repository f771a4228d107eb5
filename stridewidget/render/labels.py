"""The small shared ways a picture writes and colours what it shows: digit grouping, a tensor's
colour and reader mark, the viridis scale of a value.

The text picture (:mod:`.text`) uses the same digit grouping and marks as the drawn ones.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..style import STYLE

__all__ = [
    "compact_marks",
    "counted",
    "gap_note",
    "gap_words",
    "group_digits",
    "listed",
    "one_memory_words",
    "reader_mark",
    "same_memory_note",
    "signed",
    "special_text",
    "storage_words",
    "tensor_colour",
    "viridis",
]


def group_digits(n: int) -> str:
    """``1234567`` → ``1,234,567``: row labels and counts keep every digit.

    >>> group_digits(1234567)
    '1,234,567'
    """
    return f"{n:,}"


def counted(n: int, word: str) -> str:
    """``n`` and ``word``, plural unless ``n`` is one, digits grouped.

    >>> counted(1, "element"), counted(0, "element"), counted(1234, "cell")
    ('1 element', '0 elements', '1,234 cells')
    """
    return f"{group_digits(n)} {word}{'' if n == 1 else 's'}"


def same_memory_note(others: list[str]) -> str:
    """What a strip says when other strips are the same bytes read as another dtype: its marks,
    counts and "unread" are of the tensors over it alone.

    >>> print(same_memory_note(["s1"]))
    same memory as s1 (viewed as another dtype); marks, "unread" and "untouched" here count this strip's tensors only
    """
    return (
        f"same memory as {', '.join(others)} (viewed as another dtype); "
        'marks, "unread" and "untouched" here count this strip\'s tensors only'
    )


def one_memory_words(storages: Sequence[Mapping[str, Any]]) -> list[str]:
    """Each group of storages that are one memory viewed as several dtypes, in words (the
    picture's title, a widget's summary: every surface says it).

    >>> one_memory_words([{"id": "s0", "dtype": "float32", "same_memory": ["s1"]},
    ...                   {"id": "s1", "dtype": "int32", "same_memory": ["s0"]}])
    ['storages s0 and s1 are one memory, viewed as float32 and int32']
    """
    dtypes = {s["id"]: s["dtype"] for s in storages}
    groups = dict.fromkeys(
        tuple(
            sorted([s["id"], *s["same_memory"]], key=lambda i: int(i[1:]) if i[1:].isdigit() else 0)
        )
        for s in storages
        if s.get("same_memory")
    )

    return [
        f"storages {listed(list(group))} are one memory, viewed as "
        f"{listed([str(dtypes.get(i, '?')) for i in group])}"
        for group in groups
    ]


def listed(items: Sequence[str]) -> str:
    """``items`` as words: ``a``, ``a and b``, ``a, b and c``.

    >>> listed(["a"]), listed(["a", "b"]), listed(["a", "b", "c"])
    ('a', 'a and b', 'a, b and c')
    """
    return " and ".join([", ".join(items[:-1]), items[-1]]) if len(items) > 1 else items[0]


def storage_words(size: int, itemsize: int, unit: int, dtype: str, nbytes: int) -> str:
    """A storage's size as every surface writes it: ``size`` cells of ``unit`` bytes.  Cells are
    the dtype's elements unless a byte-misaligned or record-field view reads them in smaller
    units (NumPy's base bytes, say); then the header counts those cells and names the dtype viewed.

    >>> storage_words(3, 4, 4, "float32", 12)
    'float32 · 3 elements × 4 B = 12 B'
    >>> storage_words(17, 8, 1, "float64", 17)
    '17 cells × 1 B = 17 B (viewed as float64)'
    >>> storage_words(2, 4, 4, "float32", 10)  # 10 bytes under a float32 view
    'float32 · 2 elements × 4 B = 8 B, and 2 B after them: 10 B'
    """
    whole = size * unit
    tail = f", and {group_digits(nbytes - whole)} B after them: {group_digits(nbytes)} B"
    tail = tail if nbytes > whole else ""
    if unit == itemsize:
        return (
            f"{dtype} · {counted(size, 'element')} × {itemsize} B = {group_digits(whole)} B{tail}"
        )
    return f"{counted(size, 'cell')} × {unit} B = {group_digits(whole)} B{tail} (viewed as {dtype})"


def gap_note(gap: Mapping[str, Any]) -> str:
    """What a picture writes for slices the scene left out: how many and which (the scene's
    ``text``; a hand-made scene without it still gets the count).

    >>> gap_note({"kind": "gap", "count": 40, "text": "x[1:5, :, :, :, :]"})
    '⋯ 40 slices not shown: x[1:5, :, :, :, :]'
    """
    count = gap["count"]
    note = f"⋯ {group_digits(count)} slice{'' if count == 1 else 's'} not shown"
    return f"{note}: {gap['text']}" if gap.get("text") else note


def gap_words(segment: Mapping[str, Any]) -> str:
    """What a storage gap holds, as exactly as the scene counted it: read cells left out for room
    are never said like cells no tensor reads.

    >>> [gap_words({"start": 0, "stop": 76, "in_span": True, "read": r}) for r in (76, 5, 0, None)]
    ['76 read cells not drawn', '76 cells not drawn, 5 of them read', '76 cells untouched', '76 cells not shown']
    """
    count = group_digits(segment["stop"] - segment["start"])
    read = segment.get("read")
    if read is None:
        return f"{count} cells not shown" if segment["in_span"] else f"{count} cells untouched"
    if read == 0:
        return f"{count} cells untouched"
    if read == segment["stop"] - segment["start"]:
        return f"{count} read cells not drawn"
    return f"{count} cells not drawn, {group_digits(read)} of them read"


def special_text(text: str, room: float) -> str:
    """A value with no place on a colour scale (nan, ±inf) as text in ``room`` px: as it is
    where it fits, else the special word it holds (the hover line has it whole).  A complex
    value keeps its parts apart (``…`` for a finite one, ``j`` on the imaginary one), so
    ``1-infj`` never reads as a real ``-inf``: the first of its shorter forms that fits.

    >>> special_text("nan", 40), special_text("0.0000e+00+infj", 60), special_text("-inf+1.j", 50)
    ('nan', '…+infj', '-inf+…j')
    >>> special_text("1.0000e+00-infj", 30), special_text("-inf+1.j", 30), special_text("nan+nanj", 60)
    ('…-∞j', '-∞+…', 'nan+nanj')
    """
    from .primitives import G, fitting, text_width

    def fits(candidate: str) -> bool:
        return text_width(candidate, G["font_size"]) <= room

    if fits(text):
        return text
    candidates = _complex_forms(text) if text.endswith("j") else []
    for candidate in candidates:
        if fits(candidate):
            return candidate
    if candidates:
        return candidates[-1]
    for word in ("nan", "-inf", "inf"):
        if word in text:
            return word
    return text[: max(1, fitting(text, room, G["font_size"]) - 1)] + "…"


def _complex_forms(text: str) -> list[str]:
    """Shorter forms of a complex value's text that keep which part is special, longest first."""
    import math

    try:
        z = complex(text)
    except ValueError:
        return []

    def word(part: float, short: bool) -> str:
        if math.isnan(part):
            return "nan"
        if math.isinf(part):
            return ("-" if part < 0 else "") + ("∞" if short else "inf")
        return "…"

    forms = []
    for short in (False, True):
        re_, im = word(z.real, short), word(z.imag, short)
        forms.append(f"{re_}{'' if im.startswith('-') else '+'}{im}j")
    re_, im = word(z.real, True), word(z.imag, True)
    if im == "…":  # only the real part is special
        forms.append(f"{re_}+…")
    elif re_ == "…":  # only the imaginary part
        forms.append(f"…{'' if im.startswith('-') else '+'}{im}j")
    return forms


def signed(stride: int) -> str:
    return f"+{stride}" if stride >= 0 else f"−{-stride}"


def tensor_colour(order: int) -> str:
    colours = STYLE["tensor_colours"]
    return colours[order % len(colours)]


def tensor_pattern(order: int) -> str:
    """The texture of the tensor of ``order``: one step further on each round of the colours,
    so that no two of the first 49 tensors share both colour and texture (the eighth tensor had
    the first one's, told apart by its letter alone).

    >>> n = len(STYLE["tensor_colours"])
    >>> tensor_pattern(0), tensor_pattern(n), tensor_colour(0) == tensor_colour(n)
    ('solid', 'diagonal', True)
    """
    patterns = STYLE["patterns"]
    return patterns[(order + order // len(STYLE["tensor_colours"])) % len(patterns)]


def reader_mark(tensor: Mapping[str, Any], count: int | None) -> str:
    """The tensor's letter with its read count: ``A``, ``A×2``, ``A?`` (count unknown).

    >>> [reader_mark({"mark": "A"}, n) for n in (1, 2, None)]
    ['A', 'A×2', 'A?']
    """
    return tensor["mark"] + ("?" if count is None else f"×{count}" if count > 1 else "")


def compact_marks(marks: Sequence[str], fits: Callable[[str], bool]) -> str:
    """A crowded cell's readers as one text: their marks run together (``AB×2C?D``: a mark is a
    letter, its digits and its count), or the first marks that ``fits`` allows plus how many
    are left (``ABC+3``), or at worst ``+N``: never nothing.

    >>> compact_marks(["A", "B×2", "C?", "D"], lambda t: len(t) <= 8)
    'AB×2C?D'
    >>> compact_marks(list("ABCDEF"), lambda t: len(t) <= 5)
    'ABC+3'
    >>> compact_marks(list("ABCDEF"), lambda t: False)
    '+6'
    """
    n = len(marks)
    for k in range(n, 0, -1):
        text = "".join(marks[:k]) + (f"+{n - k}" if k < n else "")
        if fits(text):
            return text
    return f"+{n}"


def colour_of(dtype: str) -> str:
    """What a cell's colour stands for on the viridis scale: a complex value's magnitude.

    >>> colour_of("float32"), colour_of("complex64")
    ('value', '|value|')
    """
    return "|value|" if str(dtype).startswith("complex") else "value"


#: The viridis stops as (r, g, b) ints and the ink on each, read once (a grid of colours mixes
#: one per cell)
_VIRIDIS_RGB = [
    tuple(int(stop[i : i + 2], 16) for i in (1, 3, 5)) for stop in STYLE["viridis"]["stops"]
]
_VIRIDIS_INK = STYLE["viridis"]["text"]


def viridis(value: float | None, value_range: Any) -> tuple[str, str] | None:
    """(fill, ink) of ``value`` on the shared viridis scale, or None without a value.

    >>> viridis(0.0, (0.0, 1.0)), viridis(1.0, (0.0, 1.0))[0], viridis(3, None)
    (('#440154', '#ffffff'), '#fde725', None)
    """
    if value is None or not value_range:
        return None
    lo, hi = value_range
    t = min(1.0, max(0.0, (value - lo) / (hi - lo))) if hi > lo else 0.5
    stops = _VIRIDIS_RGB
    position = t * (len(stops) - 1)
    k = min(len(stops) - 2, int(position))
    f = position - k
    (r, g, b), (r1, g1, b1) = stops[k], stops[k + 1]
    mix = (
        f"#{round(r + (r1 - r) * f):02x}{round(g + (g1 - g) * f):02x}{round(b + (b1 - b) * f):02x}"
    )
    return mix, _VIRIDIS_INK[round(position)]
