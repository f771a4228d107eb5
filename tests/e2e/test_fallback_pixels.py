"""The saved fallback paints what the keyed SVG paints (issue 36, Weight): the notebook's
``text/html`` leaves out every cell's group, key and tooltip and writes its shapes in layers of
one style (``render/layers.py``); Chromium's pixels of the two SVGs of one picture are the same,
over the lint corpus and the issue's cases, both themes, at the fallback's width.  "The same":
no channel of any pixel differs by more than 4 of 255 (a square rect written as a subpath of one
path is anti-aliased up to 3 levels apart from the ``<rect>``, its stroke's corners more: see
``_corners``; a shape painted in another order
over another, or one missing, differs by far more — the check below shows it can fail)."""

from __future__ import annotations

import io

import numpy as np
import pytest
import torch
from PIL import Image

from stridewidget.render.picture import draw, scene_of
from stridewidget.render.primitives import Group, Rect
from stridewidget.render.svg import svg_of_picture

from .lint_corpus import CASES, tensors_of


def _issue_cases():
    q = torch.randn(2, 5, 32, generator=torch.Generator().manual_seed(0))
    x = torch.arange(12.0).reshape(3, 4)
    return {
        "heads": {"h": q.view(2, 5, 4, 8).transpose(1, 2)},
        "3x4-three-views": {"x": x, "xt": x.t(), "xs": x[:, ::2]},
        "randn-100x100": {"r": torch.randn(100, 100, generator=torch.Generator().manual_seed(1))},
        "expand": {"e": torch.arange(6.0).reshape(2, 3).expand(4, 2, 3)},
        "conj": {"z": torch.complex(torch.arange(6.0), torch.ones(6)).reshape(2, 3).conj()},
    }


CORPUS = {case.name: (tensors_of(case), case.wrap) for case in CASES}
CORPUS.update({name: (tensors, None) for name, tensors in _issue_cases().items()})


def _pixels(page, svg: str) -> np.ndarray:
    page.set_content(f'<div style="margin:0;padding:0;line-height:0">{svg}</div>')
    png = page.locator("svg").screenshot(animations="disabled")
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(int)


def _corners(picture) -> list[tuple[int, int]]:
    """The corners of every square, stroked rect (the fallback writes those as subpaths of one
    path: Chromium joins a path's stroke at a corner a few pixels apart from a ``<rect>``'s, up
    to 30 of 255 on the 2 px at each corner; a box moved, missing or painted out of order differs
    along its whole edge)."""
    found: list[tuple[int, int]] = []

    def walk(items, dx=0.0, dy=0.0):
        for item in items:
            if isinstance(item, Group):
                walk(item.children, dx, dy)
            elif isinstance(item, Rect) and item.stroke and not item.rx:
                for x in (item.x, item.x + item.w):
                    for y in (item.y, item.y + item.h):
                        found.append((round(x + dx), round(y + dy)))

    walk(picture.items)
    return found


def _same(a: np.ndarray, b: np.ndarray, corners=()) -> bool:
    if a.shape != b.shape:
        return False
    diff = np.abs(a - b).max(axis=2)
    for x, y in corners:  # 2 px each way around a stroked corner
        diff[max(0, y - 2) : y + 2, max(0, x - 2) : x + 2] = 0
    return int(diff.max()) <= 4


@pytest.mark.parametrize("theme", ["light", "dark"])
@pytest.mark.parametrize("name", sorted(CORPUS))
def test_the_keyless_fallback_paints_the_same_pixels(page, name, theme):
    tensors, wrap = CORPUS[name]
    picture = draw(scene_of(tensors, wrap=wrap), theme)
    keyed, keyless = svg_of_picture(picture), svg_of_picture(picture, keys=False)
    assert len(keyless) < len(keyed)
    assert _same(_pixels(page, keyless), _pixels(page, keyed), _corners(picture)), name


def test_the_pixel_check_fails_when_a_layer_is_painted_out_of_order(page):
    picture = draw(scene_of({"x": torch.arange(3.0)}), "light")
    keyless = svg_of_picture(picture, keys=False)
    boxes = keyless[keyless.index('<path fill="#fff" stroke="#8c8c8c"') :]
    boxes = boxes[: boxes.index("/>") + 2]
    moved = keyless.replace(boxes, "").replace("</g></svg>", boxes + "</g></svg>")
    keyed = _pixels(page, svg_of_picture(picture))
    assert _same(_pixels(page, keyless), keyed, _corners(picture))
    assert not _same(_pixels(page, moved), keyed, _corners(picture))
