"""``render/bidi.py`` skips a text with no character in its right-to-left blocks: every strong
right-to-left code point Unicode knows (bidi class R or AL, as ``unicodedata`` reads it) lies in
those blocks, so no right-to-left name is left unisolated."""

from __future__ import annotations

import unicodedata

from stridewidget.render.bidi import _RTL_BLOCKS, isolated


def test_every_right_to_left_letter_lies_in_the_blocks_searched():
    missing = [
        hex(code)
        for code in range(0x110000)
        if unicodedata.bidirectional(chr(code)) in ("R", "AL") and not _RTL_BLOCKS.search(chr(code))
    ]
    assert missing == []


def test_a_name_in_each_right_to_left_script_is_isolated_before_its_index():
    for name in (
        "וזן",
        "وزن",
        "ܫܠܡ",
        "ހަ",
        "ߒߞߏ",
        "𐤀𐤁",
    ):  # Hebrew, Arabic, Syriac, Thaana, N'Ko, Phoenician
        assert isolated(f"{name}[0, 1]") == f"\u2068{name}\u2069[0, 1]"
