"""Issue 36 (Fit), a hostile review's findings (2026-12-04):

* a card's "⋯ N slices not shown" note never broke its "(between NAME[…] and NAME[…])" clause: a
  5-D tensor named like a model's cache was 1,308 px wide at every width, 16 dims of 2 were
  1,196 px at 900;
* a storage read by 300 parameter views of one flat buffer (FSDP's flat parameter) named every
  reader in its legend: 1,950 px tall at 900 px against 1,540 (one card drawn, the rest listed).

Oracles: the width a picture is laid out for, the budget ``limits.py`` names, the count of
tensors given.
"""

from __future__ import annotations

import pytest
import torch
from test_fit_two_large import _texts

from stridewidget.render.picture import draw, height_budget, scene_of

WIDTHS = [876, 900, 1280]


WIDE = {
    "5-D with a cache's name": lambda: {
        "model.layers.0.self_attn.past_key_value": torch.arange(2520.0).reshape(3, 4, 5, 6, 7)
    },
    "16 dims of 2": lambda: {"x": torch.zeros((2,) * 16)},
    "7-D meta": lambda: {"x": torch.empty((10,) * 7, device="meta")},
    "two 8-D with 60-character names": lambda: {
        ("a" * 59) + str(k): torch.zeros((2,) * 8) for k in range(2)
    },
}


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", sorted(WIDE))
def test_a_long_slices_note_wraps_into_the_width(name, width):
    picture = draw(scene_of(**WIDE[name]()), width=width)
    assert picture.width <= width, (name, width, picture.width)


def _flat_parameter(count: int) -> dict[str, torch.Tensor]:
    flat, views, at = torch.zeros(4096), {}, 0
    for i in range(count):
        n = (i % 5 + 1) * 2
        views[f"layers.{i}.weight"] = flat[at : at + n].view(2, n // 2)
        at += n
    return views


@pytest.mark.parametrize("width", WIDTHS)
def test_many_readers_of_one_storage_fit_and_the_legend_counts_the_rest(width):
    views = _flat_parameter(300)
    scene = scene_of(**views)
    picture = draw(scene, width=width)
    assert picture.height <= height_budget(scene, width), (width, picture.height)
    texts = list(_texts(picture.items))
    named = [t for t in texts if " = layers." in t]
    more = [t for t in texts if "more readers" in t]
    assert len(more) == 1, more
    assert f"… and {len(views) - len(named)} more readers" in more[0]
    marks = [t["mark"] for t in scene["tensors"]]
    assert f"marks {marks[len(named)]} to {marks[-1]}" in more[0]
