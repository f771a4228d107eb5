"""The saved fallback is a picture, not an app (issue 36, Weight): the notebook's ``text/html``
draws every shape the picture's primitives say to draw, in an order that paints the same, with no
per-cell group, ``data-*`` key or tooltip, and says the layout in words once.

The shapes are read back from the SVG as a browser resolves them (``svg_resolve.drawn``, written
apart from the writer) and compared with the primitives of ``render.picture.draw``.  "Paints the
same": every two shapes whose ink may overlap keep their order; ink boxes here use the font's true
monospace advance (0.6 em), so any pair this test calls overlapping the writer must keep in order.
The browser layer (``tests/e2e/test_fallback_pixels.py``) compares the pixels.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest
import torch
from e2e.lint_corpus import CASES, tensors_of
from oracle_cells import corpus
from svg_resolve import NS, drawn, expected

import stridewidget as sw
from stridewidget.render.picture import draw, scene_of
from stridewidget.render.svg import svg_of_picture

ORACLE = corpus()


def _ink(record: dict) -> tuple[float, float, float, float]:
    """Where a shape's ink can be (x0, y0, x1, y1): a little smaller than the writer's boxes."""
    if record["tag"] == "rect":
        if any(isinstance(v, str) for v in record["box"]):  # the background: all of it
            return (-1e9, -1e9, 1e9, 1e9)
        x, y, w, h = record["box"]
        pad = record.get("stroke-width", 0) / 2
        return (x - pad, y - pad, x + w + pad, y + h + pad)
    if record["tag"] == "text":
        x, y = record["at"]
        size = float(record["font-size"])
        width = len(record["text"]) * 0.6 * size
        x0 = x - {"start": 0, "middle": width / 2, "end": width}[record["text-anchor"]]
        return (x0, y - 0.8 * size, x0 + width, y + 0.2 * size)
    numbers = record["d"][1]
    xs, ys = numbers[0::2], numbers[1::2]
    return (min(xs), min(ys), max(xs), max(ys))


def _key(record: dict) -> str:
    def rounded(value):
        if isinstance(value, float):
            return round(value, 1)
        if isinstance(value, tuple):
            return tuple(rounded(v) for v in value)
        return value

    return repr(sorted((k, rounded(v)) for k, v in record.items() if k != "groups"))


def _same_painting(svg: str, picture) -> None:
    got, want = drawn(svg), expected(picture)
    assert sorted(map(_key, got)) == sorted(map(_key, want)), "not the same shapes"
    # where each expected shape was painted (equal shapes: in order of appearance)
    at: dict[str, list[int]] = {}
    for position, record in enumerate(got):
        at.setdefault(_key(record), []).append(position)
    painted = [at[_key(record)].pop(0) for record in want]
    inks = [_ink(record) for record in want]
    for j in range(len(want)):
        a = inks[j]
        for i in range(j):
            b = inks[i]
            if b[0] < a[2] and a[0] < b[2] and b[1] < a[3] and a[1] < b[3]:
                assert painted[i] < painted[j], (
                    f"{want[i]['tag']} {want[i].get('text')!r} now painted over "
                    f"{want[j]['tag']} {want[j].get('text')!r}"
                )


def _fallback(tensors, wrap=None, theme="light"):
    picture = draw(scene_of(tensors, wrap=wrap), theme)
    return svg_of_picture(picture, keys=False), picture


@pytest.mark.parametrize("theme", ["light", "dark"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_fallback_paints_the_pictures_primitives_over_the_lint_corpus(case, theme):
    svg, picture = _fallback(tensors_of(case), case.wrap, theme)
    _same_painting(svg, picture)


@pytest.mark.parametrize("name", sorted(ORACLE))
def test_fallback_paints_the_pictures_primitives_over_the_oracle_corpus(name):
    svg, picture = _fallback(ORACLE[name]())
    _same_painting(svg, picture)


def test_the_order_check_fails_when_overlapping_shapes_swap():
    """The check above can fail: a value painted under its cell's box is caught."""
    svg, picture = _fallback({"x": torch.arange(3.0)})
    boxes = re.search(r'<path fill="#fff" stroke="#8c8c8c" d="[^"]*"/>', svg).group(0)
    swapped = svg.replace(boxes, "")
    swapped = swapped.replace("</g></svg>", boxes + "</g></svg>")
    with pytest.raises(AssertionError, match="painted over"):
        _same_painting(swapped, picture)


@pytest.mark.parametrize("case", CASES[:16], ids=lambda c: c.name)
def test_fallback_has_no_per_cell_keys_and_says_the_layout_once(case):
    tensors = tensors_of(case)
    html = sw.render_html(wrap=case.wrap, **tensors)
    svg = html[html.index("<svg") : html.index("</svg>") + 6]
    root = ET.fromstring(svg)
    below = [e for e in root.iter() if e is not root]
    assert not [e for e in below if any(k.startswith("data-") for k in e.attrib)]
    assert not [e for e in root.iter(f"{NS}g") if e.get("class")]
    titles = list(root.iter(f"{NS}title"))
    assert len(titles) == 1 and titles[0].text == root.get("aria-label")
    for name, tensor in tensors.items():
        # each tensor's layout in words, as sw.inspect says it
        assert f"{name}: {sw.inspect(tensor)}" in titles[0].text


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_the_widget_fallback_paints_the_pictures_primitives(case):
    """The widget lays its picture out with the theme's role names (``@background``); its saved
    fallback paints every one as the theme's colour, the shapes the static picture draws."""
    tensors = tensors_of(case)
    html = sw.StrideWidget(wrap=case.wrap, **tensors)._repr_mimebundle_()[0]["text/html"]
    svg = html[html.index("<svg") : html.index("</svg>") + 6]
    assert '="@' not in svg
    _same_painting(svg, draw(scene_of(tensors, wrap=case.wrap), "light"))


def test_the_widget_fallback_is_the_keyless_picture():
    x = torch.arange(12.0).reshape(3, 4)
    w = sw.StrideWidget(x=x, xt=x.t())
    html = w._repr_mimebundle_()[0]["text/html"]
    assert "data-cell" not in html and "<g class" not in html
    assert "x: float32 (3,4):(4,1)" in html and "both over storage s0" in html


@pytest.mark.parametrize(
    "make",
    [
        lambda: torch.tensor([1e300, -1e-300, 1.2e17], dtype=torch.float64),  # fewer digits
        lambda: torch.tensor([1 + 2j, -3.5e30j, complex("nan")]),  # too wide: a colour scale
    ],
)
def test_the_saved_picture_promises_hover_only_in_the_live_widget(make):
    """The saved fallback has no tooltips: where the picture says "hover", it says where."""
    html = sw.render_html(x=make())
    words = re.findall(r">([^<]*hover[^<]*)<", html)
    assert words, "the case no longer shortens or colours its values"
    assert all("live widget" in w for w in words), words
