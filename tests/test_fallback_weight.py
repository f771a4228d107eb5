"""The saved fallback fits its weight budget for every shape (issue 36, Weight): 24 kB for
tensors of at most 2 dims, 48 kB up to 4, 64 kB any (``limits.FALLBACK_BYTES*``), measured as
the notebook's ``text/html``.  A heavier picture is laid out again (``picture._lightened``): each
card says its cells' addresses in one line, which must be every element's true storage offset
(torch's, element by element), then grids are cut to their ends.  The live widget, once its
front end reports a width, draws every cell again (nothing it paints is saved)."""

from __future__ import annotations

import re
import sys

import pytest
import torch
from e2e.lint_corpus import CASES, tensors_of
from saved_fallback import displayed

from stridewidget.limits import FALLBACK_BYTES, FALLBACK_BYTES_2D, FALLBACK_BYTES_4D
from stridewidget.render.picture import draw, scene_of
from stridewidget.render.primitives import Group, Text
from stridewidget.render.svg import svg_of_picture
from stridewidget.render.weight import weight


def _fallback_html(tensor) -> str:
    return displayed(tensor)["text/html"]


def _budget(t: torch.Tensor) -> int:
    return (
        FALLBACK_BYTES_2D if t.dim() <= 2 else FALLBACK_BYTES_4D if t.dim() <= 4 else FALLBACK_BYTES
    )


def _make(kind: str, shape: tuple[int, ...]) -> torch.Tensor:
    g = torch.Generator().manual_seed(sum(shape))
    n = 1
    for s in shape:
        n *= s
    if kind == "arange":
        return torch.arange(float(n)).reshape(shape)
    if kind == "randn":
        return torch.randn(shape, generator=g)
    if kind == "int":
        return torch.randint(-999, 999, shape, generator=g)
    if kind == "bool":
        return torch.rand(shape, generator=g) > 0.5
    if kind == "half":
        return torch.randn(shape, generator=g).half()
    return torch.randn(shape, generator=g, dtype=torch.complex64)


SHAPES = [
    (6, 20), (8, 16), (10, 10), (10, 24), (12, 12), (12, 20), (14, 16), (16, 16), (16, 8),
    (20, 12), (24, 24), (8, 32), (64,), (300,), (2, 8, 8), (4, 6, 8), (2, 3, 8, 8), (3, 4, 5, 6, 2),
]  # fmt: skip


@pytest.mark.parametrize("kind", ["arange", "randn", "int", "bool", "half", "complex"])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_the_saved_fallback_fits_its_weight_budget(kind, shape):
    """(16, 16) arange weighed 46.6 kB, (12, 20) 45.0 kB, before the picture was weighed."""
    x = _make(kind, shape)
    assert len(_fallback_html(x).encode()) <= _budget(x)


def test_views_side_by_side_fit_the_2d_budget():
    from stridewidget.notebook.widget import StrideWidget

    x = torch.arange(256.0).reshape(16, 16)
    html = StrideWidget(x=x, xt=x.t(), xs=x[:, ::2])._repr_mimebundle_()[0]["text/html"]
    assert len(html.encode()) <= FALLBACK_BYTES_2D


_TERM = re.compile(r"([+−-]?)\s*(\d+)?·?([a-z])")


def _evaluate(words: str, index: tuple[int, ...]) -> int:
    """``cell [i, j] is storage[5 + 4·i − j]`` at ``index``, read as written."""
    names, body = re.fullmatch(r"cell \[([a-z, ]+)\] is storage\[(.*)\]", words).groups()
    value = {n: i for n, i in zip(names.split(", "), index)}
    body = body.replace(" ", "")
    total = 0
    lead = re.match(r"^-?\d+(?=$|[+−])", body)
    if lead:
        total += int(lead.group())
        body = body[lead.end() :]
    for sign, size, name in _TERM.findall(body):
        total += (-1 if sign in "−-" and sign else 1) * int(size or 1) * value[name]
    return total


def _texts(items):
    for item in items:
        if isinstance(item, Group):
            yield from _texts(item.children)
        elif isinstance(item, Text):
            yield item


VIEWS = {
    "16x16": lambda: torch.arange(256.0).reshape(16, 16),
    "16x16.t": lambda: torch.arange(256.0).reshape(16, 16).t(),
    "flip-offset": lambda: torch.arange(400.0).reshape(20, 20)[2:18, 2:18].flip(1),
    "expand": lambda: torch.arange(16.0).reshape(1, 16).expand(16, 16),
    "int32-view": lambda: torch.arange(256.0).reshape(16, 16).view(torch.int32),
}


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_the_address_line_is_every_elements_storage_offset(name):
    x = VIEWS[name]()
    picture = draw(scene_of(x=x))
    lines = [t.text for t in _texts(picture.items) if t.text.startswith("cell [")]
    assert picture.lightened and len(lines) == 1, lines
    for index in torch.cartesian_prod(*[torch.arange(s) for s in x.shape]).reshape(-1, x.dim()):
        at = tuple(int(i) for i in index)
        assert _evaluate(lines[0], at) == x[at].storage_offset(), (lines[0], at)
    cells = [g for g in _groups(picture.items) if g.cls == "sws-lcell"]
    assert cells and not [c for g in cells for c in g.children if getattr(c, "role", None) == "i"]


def test_the_address_line_reads_as_written():
    """The reader above can fail: a wrong coefficient is caught."""
    assert _evaluate("cell [i, j] is storage[5 + 4·i − j]", (1, 2)) == 7
    assert _evaluate("cell [i, j] is storage[5 + 4·i − j]", (1, 2)) != 5 + 4 + 2


def test_a_light_picture_keeps_its_addresses_where_they_are_not_one_formula():
    """A picture the ladder did not lighten writes each cell's address: small ones."""
    picture = draw(scene_of(x=torch.arange(12.0).reshape(3, 4)))
    assert not picture.lightened
    assert "@11" in svg_of_picture(picture, keys=False)


def test_the_weight_estimate_is_never_below_the_written_size():
    """A picture whose estimate fits its budget is not written to be weighed: the estimate must
    be an upper bound of the SVG's bytes, over the lint corpus and the shapes above."""
    pictures = [draw(scene_of(tensors_of(case), wrap=case.wrap)) for case in CASES]
    pictures += [draw(scene_of(_make("complex", s))) for s in SHAPES[:6]]
    for picture in pictures:
        written = len(svg_of_picture(picture, keys=False).encode())
        fresh = draw_copy = type(picture)(**{**picture.__dict__, "written": None})
        estimate = weight(fresh, sys.maxsize)
        assert draw_copy.written is None and estimate >= written, (picture.title, estimate, written)


def test_the_live_widget_draws_every_cell_once_its_front_end_reports_a_width():
    from stridewidget.notebook.widget import StrideWidget

    x = torch.arange(256.0).reshape(16, 16)
    w = StrideWidget(x=x)
    assert w._laid_picture.lightened  # the saved fallback's layout
    saved = w._repr_mimebundle_()[0]["text/html"]
    assert len(saved.encode()) <= FALLBACK_BYTES_2D
    w.width = 900  # the front end reports its column (the width it was laid out for)
    cells = [i for i in w._laid_picture.items if isinstance(i, Group) and i.cls == "sws-lcell"] + [
        c
        for i in w._laid_picture.items
        if isinstance(i, Group)
        for c in i.children
        if isinstance(c, Group) and c.cls == "sws-lcell"
    ]
    assert not w._laid_picture.lightened and len(cells) == x.numel()
    assert "@255" in str(w.picture)  # every address, for the index view and hover
    again = w._repr_mimebundle_()[0]["text/html"]
    assert len(again.encode()) <= FALLBACK_BYTES_2D  # saved again: light again


def test_a_grid_cut_to_its_ends_keeps_its_digits():
    """randn(12, 20) was too tall with every cell: the ladder took one digit, then (over its
    weight) cut the grid to its ends; cut, it fits with every digit, so it is laid out again
    with them (before: one digit on a cut grid)."""
    from stridewidget.render.picture import height_budget

    x = torch.randn(12, 20, generator=torch.Generator().manual_seed(0))
    scene = scene_of(x=x)
    picture = draw(scene)
    assert picture.height <= height_budget(scene)
    cells = [g for g in _groups(picture.items) if g.cls == "sws-lcell"]
    assert 0 < len(cells) < x.numel()  # cut to its ends
    for g in cells:
        (value,) = [c.text for c in g.children if isinstance(c, Text) and c.role == "v"]
        want = float(x[tuple(int(i) for i in g.data["index"].split(","))])
        assert abs(float(value) - want) <= 1e-4 * max(1.0, abs(want)), (value, want)


def _groups(items):
    for item in items:
        if isinstance(item, Group):
            yield item
            yield from _groups(item.children)


@pytest.mark.parametrize(
    "make",
    [
        lambda: torch.randn(10, 30)[:, 5:25],
        lambda: torch.randn(64, 64)[::4, ::4],
        lambda: torch.arange(256.0).reshape(16, 16),
    ],
)
def test_a_light_fallback_keeps_every_storage_cells_index(make):
    """Review: the saved fallback of a lightened picture left out the storage strip's indices
    with the grid's addresses (both role "i"); the legend still said each cell has one.  Only a
    logical cell's address is said in the card's line: every other text is written."""
    from collections import Counter

    from svg_resolve import drawn

    picture = draw(scene_of(x=make()))
    assert picture.lightened
    outside = Counter(t.text.strip() for t in _texts_outside_cells(picture.items) if t.text.strip())
    written = Counter(
        r["text"].strip() for r in drawn(svg_of_picture(picture, keys=False)) if r["tag"] == "text"
    )
    assert not outside - written, outside - written


def _texts_outside_cells(items):
    for item in items:
        if isinstance(item, Group):
            if item.cls != "sws-lcell":
                yield from _texts_outside_cells(item.children)
        elif isinstance(item, Text):
            yield item
