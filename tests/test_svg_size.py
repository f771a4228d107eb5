"""The static SVG is small and draws exactly its picture (issue 22 §5).

* Over the lint corpus and the cell-oracle corpus, in both themes, every shape the SVG draws —
  resolved as a browser resolves it (inherited attributes, initial values, pattern and marker
  references) — equals what :func:`~stridewidget.render.picture.draw`'s primitives say to draw,
  in paint order and inside the same groups, with the same tooltips (``tests/svg_resolve.py``).
* The fallback (the widget's ``text/html``) fits its budget: 24 kB for a default view of up to
  2 dims, 48 kB for 4 dims.
"""

from __future__ import annotations

import re

import pytest
import torch
from e2e.lint_corpus import CASES, tensors_of
from oracle_cells import corpus
from saved_fallback import displayed
from svg_resolve import differences, drawn, expected, root_facts

import stridewidget as sw
from stridewidget.render.picture import draw, scene_of

ORACLE = corpus()


def _same_picture(tensors, wrap=None, theme="light"):
    scene = scene_of(tensors, wrap=wrap)
    svg = sw.render_svg(scene, theme=theme)
    found = differences(drawn(svg), expected(draw(scene, theme)))
    assert not found, "\n".join(found)
    facts = root_facts(svg)
    picture = draw(scene, theme)
    assert facts["title"] == picture.title and facts["theme"] == theme
    assert facts["size"][:2] == (str(round(picture.width)), str(round(picture.height)))


@pytest.mark.parametrize("theme", ["light", "dark"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_svg_draws_the_pictures_primitives_over_the_lint_corpus(case, theme):
    _same_picture(tensors_of(case), case.wrap, theme)


@pytest.mark.parametrize("name", sorted(ORACLE))
def test_svg_draws_the_pictures_primitives_over_the_oracle_corpus(name):
    _same_picture(ORACLE[name]())


@pytest.mark.parametrize("case", CASES[:12], ids=lambda c: c.name)
def test_svg_says_each_style_once(case):
    """No shape repeats what it inherits: a text with the picture's usual ink, size or alignment,
    a stroke width of 1 (SVG's initial one) or a ``#rrggbb`` colour that ``#rgb`` says."""
    import re
    import xml.etree.ElementTree as ET

    svg = sw.render_svg(wrap=case.wrap, **tensors_of(case))
    root = ET.fromstring(svg)
    body = next(g for g in root if g.tag.endswith("}g") and g.get("fill"))
    for element in body.iter():
        if element.tag.endswith("}text"):
            assert element.get("fill") != body.get("fill"), ET.tostring(element)
            assert element.get("font-size") != root.get("font-size"), ET.tostring(element)
            assert element.get("text-anchor") != body.get("text-anchor"), ET.tostring(element)
        assert element.get("stroke-width") not in ("1", "1.0"), ET.tostring(element)
    long_colours = re.findall(r'"#([0-9a-fA-F]{6})"', svg.split("</defs>", 1)[1])
    assert not [c for c in long_colours if c[0] == c[1] and c[2] == c[3] and c[4] == c[5]]


def _fallback_bytes(tensor) -> int:
    return len(displayed(tensor)["text/html"].encode())


# Issue 36 (Weight): a default view of <= 2 dims 24 kB, of 4 dims 48 kB, anything 64 kB.  The
# saved fallback is a picture, not an app (no per-cell groups, keys or tooltips) and is written in
# layers of one style (tests/test_fallback_picture.py checks it paints the same).
def _heads():
    return torch.randn(2, 5, 32).view(2, 5, 4, 8).transpose(1, 2)


BUDGETS = [
    pytest.param(lambda: torch.arange(12.0).reshape(3, 4), 24_000, id="3x4"),
    pytest.param(lambda: torch.randn(100, 100), 24_000, id="100x100"),
    pytest.param(lambda: torch.randn(10, 100), 24_000, id="10x100"),
    pytest.param(lambda: torch.empty(10**4, 10**4, device="meta"), 24_000, id="1e8-meta"),
    pytest.param(lambda: torch.randn(2, 3, 4, 5), 48_000, id="2x3x4x5"),
    # a 4-D view of 30 slices: 69.5 kB before its picture was fitted to the height budget (one
    # digit, then colour, then four panels of its eight)
    pytest.param(lambda: torch.randn(5, 6, 7, 8), 48_000, id="5x6x7x8"),
    pytest.param(lambda: torch.randn(8, 8, 8, 8), 48_000, id="8x8x8x8"),
    pytest.param(lambda: torch.randn(3, 4, 5, 6, 7), 64_000, id="3x4x5x6x7"),
    pytest.param(lambda: torch.randn(10, 10, 10), 64_000, id="10x10x10"),
    # 54.5 kB while every cell's box had rounded corners (each box its own <rect>; square boxes
    # are one path of subpaths per style)
    pytest.param(_heads, 48_000, id="attention-heads"),
    pytest.param(lambda: torch.randn(20, 20, dtype=torch.complex64), 24_000, id="complex-20x20"),
    pytest.param(lambda: torch.randint(-(10**12), 10**12, (30, 30)), 24_000, id="int64-30x30-wide"),
    pytest.param(
        lambda: torch.arange(720.0).reshape(2, 3, 4, 5, 6).permute(4, 2, 0, 3, 1),
        64_000,
        id="5d-permuted",
    ),
]


@pytest.mark.parametrize("make, budget", BUDGETS)
def test_fallback_fits_its_budget(make, budget):
    torch.manual_seed(0)
    assert _fallback_bytes(make()) <= budget


def test_three_views_of_one_tensor_fit_the_2d_budget():
    from stridewidget.notebook.widget import StrideWidget

    x = torch.arange(12.0).reshape(3, 4)
    html = StrideWidget(x=x, xt=x.t(), xs=x[:, ::2])._repr_mimebundle_()[0]["text/html"]
    assert len(html.encode()) <= 24_000


@pytest.mark.parametrize("shape", [(16, 16), (12, 20), (8, 32)])
def test_a_grid_drawn_whole_is_one_layer_of_boxes(shape):
    """Two neighbouring cells whose anti-aliasing rooms only meet (to rounding) do not overlap:
    every box of the grid and the strip is in one of four paths (strip and grid, box and band),
    not a run per column (16x16: 19 paths before)."""
    from stridewidget.render.svg import svg_of_picture

    x = torch.arange(float(shape[0] * shape[1])).reshape(shape)
    svg = svg_of_picture(draw(scene_of(x), light=False), keys=False)  # every cell drawn
    boxes = re.findall(r'<path[^>]* d="(M[0-9][^"]*z)"', svg)
    assert len(boxes) == 4, boxes
    cells = sum(d.count("z") for d in boxes)
    assert cells >= 2 * x.numel(), cells  # every grid cell's box and band
