"""Right-to-left names in left-to-right lines: each right-to-left run set apart (isolated).

A name in Hebrew or Arabic before an index (``وزن[0, 2, 0, 1]``) takes the index into its own
right-to-left run under the Unicode bidirectional algorithm (digits after an Arabic letter are
Arabic numbers; the brackets and commas between them follow): the browser then shows
``[1 ,0 ,2 ,0]وزن``, another cell's index read from left to right.  Each run of right-to-left
letters in a text the picture writes is wrapped in a first-strong isolate (U+2068 … U+2069), so
what follows it keeps the line's own direction.  Both surfaces that paint texts write them so:
the static SVG (:mod:`.svg_writer`) and the display list (:mod:`.listing`).
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["isolated"]

_FSI, _PDI = "\u2068", "\u2069"
#: the blocks that hold every right-to-left letter (Hebrew .. Arabic Extended, their
#: presentation forms, the historic scripts of the supplementary planes): a text with none of
#: them is written as it is, without a lookup per character
_RTL_BLOCKS = re.compile(
    "[\u0590-\u08ff\u200f\ufb1d-\ufdff\ufe70-\ufeff\U00010800-\U00010fff\U0001e800-\U0001efff]"
)
_STRONG = frozenset({"R", "AL"})
#: what may sit inside one run between its right-to-left letters (marks, spaces)
_INSIDE = frozenset({"R", "AL", "NSM", "WS", "BN"})


def isolated(text: str) -> str:
    """``text`` with each run of right-to-left letters isolated (ASCII text as it is).

    >>> isolated("x[0, 1]")
    'x[0, 1]'
    >>> isolated("וזן[1, 2] → storage[5]") == "\\u2068וזן\\u2069[1, 2] → storage[5]"
    True
    """
    if text.isascii() or not _RTL_BLOCKS.search(text):
        return text
    kinds = [unicodedata.bidirectional(c) for c in text]
    if not _STRONG.intersection(kinds):
        return text
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        if kinds[i] not in _STRONG:
            out.append(text[i])
            i += 1
            continue
        end = j = i + 1
        while j < n and kinds[j] in _INSIDE:
            j += 1
            if kinds[j - 1] in _STRONG or kinds[j - 1] == "NSM":
                end = j
        out.append(_FSI + text[i:end] + _PDI)
        i = end
    return "".join(out)
