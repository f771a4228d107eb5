"""A long name in a wide script keeps the picture inside its column (hostile review, issue 36).

A name is cut at 80 characters (``limits.MAX_NAME``), which in ASCII fits any column; in a script
whose letters take two advances (CJK, emoji) or an em (Hebrew, math letters) the card's title and
the legend drew it whole past the 876 px a 900 px notebook column leaves: the picture came out
997-1,105 px wide and was painted scaled down, its cells' texts over each other.  Now the title and
the legend cut such a name to their room (``primitives.fitted``; the hover lines keep it whole).
The room a text takes is ``text_width``, checked against Chromium's own layout in
``tests/e2e/test_text_widths_browser.py``.
"""

from __future__ import annotations

import pytest
import torch

from stridewidget.notebook.picture import laid_out
from stridewidget.render.primitives import Group, Text, text_width
from stridewidget.scene.build import build_scene

NAMES = ["注意力权重矩阵" * 8, "🔥" * 60, "ש" * 150, "𝐖" * 80, "가중치" * 30, "ℵ" * 80]


def _texts(items):
    for item in items:
        if isinstance(item, Group):
            yield from _texts(item.children)
        elif isinstance(item, Text):
            yield item


@pytest.mark.parametrize("width", [876, 1256])
@pytest.mark.parametrize("name", NAMES, ids=lambda n: n[:3])
def test_a_long_name_in_a_wide_script_fits_the_column(name, width):
    x = torch.arange(12.0).reshape(3, 4)
    picture = laid_out(build_scene({name: x, "b": x.t()}), width, None)
    assert picture.width <= width
    for text in _texts(picture.items):
        w = text_width(text.text, text.size)
        left = text.x - (w if text.anchor == "end" else w / 2 if text.anchor == "middle" else 0)
        assert left >= 0 and left + w <= picture.width + 0.5, text.text[:40]
