"""Nine or more tensors in one picture: no two look alike.  The Okabe-Ito palette has 7 colours
and the textures 7 kinds, taken in step, so the eighth tensor was drawn exactly as the first
(colour and texture), told apart by its letter alone.  Checked on the raw SVG the fallback writes
(each tensor's pattern tile: its fill and its texture's shapes); the widget's painter draws the
same tiles (vitest: js/paint/paint.test.js)."""

from __future__ import annotations

import re

import torch

import stridewidget as sw
from stridewidget.style import STYLE


def _views(n: int) -> dict[str, torch.Tensor]:
    x = torch.arange(2.0)  # small: nine cards fit the height budget, all drawn
    return {f"v{i}": x[i % 2 :] for i in range(n)}


def test_every_tensor_has_its_own_colour_and_texture_in_the_svg():
    n = len(STYLE["tensor_colours"]) + 2  # 9: past the first round of colours
    svg = sw.render_svg(**_views(n))
    tiles = re.findall(r'<pattern id="[^"]*-p(\d+)"[^>]*>(.*?)</pattern>', svg)
    assert sorted(int(order) for order, _ in tiles) == list(range(n))
    assert len({body for _, body in tiles}) == n, "two tensors share a pattern tile"
