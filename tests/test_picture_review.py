"""Issue 36, a hostile user's review: what the drawn picture says (not only its hover titles).

* An out-of-bounds view (a meta tensor's ``as_strided`` past its storage) was drawn with the
  card's words "contiguous" and nothing visible saying it reads past its storage; "OUT OF
  BOUNDS" was only in the ``<title>`` and hover lines.  Oracle: the last element's storage
  offset from torch's own shape, strides and offset against the storage's size.
"""

from __future__ import annotations

import re

import pytest
import torch

import stridewidget as sw


def _drawn_words(svg: str) -> list[str]:
    svg = re.sub(r"<title>.*?</title>", "", svg, flags=re.S)
    return re.findall(r"<text[^>]*>([^<]*)</text>", svg)


@pytest.mark.parametrize(
    "make",
    [
        lambda: torch.empty(10, device="meta").as_strided((5, 5), (5, 1)),
        lambda: torch.empty(6, device="meta").as_strided((3, 2), (1, 3), 2),
        lambda: torch.empty(100, device="meta").as_strided((4, 5, 6), (30, 6, 1)),
    ],
)
def test_an_out_of_bounds_view_says_so_where_it_is_drawn(make):
    y = make()
    last = y.storage_offset() + sum((n - 1) * s for n, s in zip(y.shape, y.stride()))
    cells = y.untyped_storage().nbytes() // y.element_size()
    assert last >= cells  # torch's own numbers: it reads past its storage
    words = _drawn_words(sw.render_svg(y=y))
    assert [w for w in words if "OUT OF BOUNDS" in w]
    said = re.escape(f"OUT OF BOUNDS: reads up to storage[{last}] of {cells} cells")
    assert re.search(said.replace(r"\ ", r"\s+"), " ".join(words))  # a line may wrap


def test_an_in_bounds_view_says_nothing_of_bounds():
    y = torch.empty(30, device="meta").as_strided((5, 5), (5, 1))
    assert not [w for w in _drawn_words(sw.render_svg(y=y)) if "BOUNDS" in w]


def _pairs():
    torch.manual_seed(0)
    x, f = torch.randn(16, 16), torch.randn(16, 16)
    return {
        "x, x.t() 16x16": {"x": x, "xt": x.t()},
        "two randn 16x16": {"a": torch.randn(16, 16), "b": torch.randn(16, 16)},
        "f32 and its int32 view": {"f": f, "i": f.view(torch.int32)},
        "two randn 10x10": {"a": torch.randn(10, 10), "b": torch.randn(10, 10)},
        "bool pair 16x16": {"a": torch.rand(16, 16) > 0.5, "b": torch.rand(16, 16) > 0.5},
    }


def _groups(items):
    for item in items:
        if getattr(item, "cls", None) is not None:
            yield item
            yield from _groups(item.children)


@pytest.mark.parametrize("width", [876, 900, 1256])
@pytest.mark.parametrize("name", sorted(_pairs()))
def test_two_small_2d_tensors_fit_the_2d_budget_with_true_cells(name, width):
    """Two grids drawn whole (256 elements each) were 1,405–1,729 px against 1,040: over the
    budget a grid keeps its first and last rows and columns.  Every drawn cell is still the
    element torch says it is (its storage offset from torch's own strides)."""
    from stridewidget.notebook.picture import laid_out
    from stridewidget.render.picture import height_budget
    from stridewidget.scene.build import build_scene

    tensors = _pairs()[name]
    scene = build_scene(tensors)
    picture = laid_out(scene, width, None)
    assert picture.height <= height_budget(scene, width), picture.height
    by_id = {t["id"]: tensors[t["name"]] for t in scene["tensors"]}
    cells = [g for g in _groups(picture.items) if g.cls == "sws-lcell"]
    assert cells
    for g in cells:
        t = by_id[g.data["tensor"]]
        index = tuple(int(v) for v in g.data["index"].split(","))
        offset = t.storage_offset() + sum(i * s for i, s in zip(index, t.stride()))
        assert g.data["addr"] == offset, (g.data, offset)


@pytest.mark.parametrize(
    "shape, count", [((10, 10), 3), ((16, 16), 2), ((16, 16), 3), ((6, 7, 8), 2), ((6, 7, 8), 3)]
)
def test_a_colour_grid_says_when_it_also_writes_values(shape, count):
    """A grid drawn as colour printed a value whose text fits its cell on the plain fill, and
    the key said only "colour = value": a white cell read as a mask.  The key now says so when
    (and only when) a drawn cell of a coloured grid writes its value."""
    from stridewidget.render.picture import _laid_out
    from stridewidget.render.primitives import Text
    from stridewidget.scene.build import build_scene

    torch.manual_seed(1)
    scene = build_scene({f"t{k}": torch.randn(*shape) for k in range(count)})
    # as colour (the height ladder's step; a grid cut to its ends may then keep its digits)
    picture = _laid_out(scene, "light", 900, True, colour=True)
    texts = [i.text for i in picture.items if isinstance(i, Text)]
    texts += [c.text for g in _groups(picture.items) for c in g.children if isinstance(c, Text)]
    assert any(t.startswith("colour = ") for t in texts)  # these cases draw a grid as colour
    cells = [g for g in _groups(picture.items) if g.cls == "sws-lcell"]
    written = [g for g in cells if any(isinstance(c, Text) and c.role == "v" for c in g.children)]
    said = any("is written instead" in t for t in texts)
    assert said == bool(written), (len(written), said)
