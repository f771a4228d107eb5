"""Issue 36, fit: a tensor of many dims kept a storage-strip row for each stride arrow's two ends
(an 18-D tensor 2,481 px at 900 px, budget 1,540).  Over its height budget, the picture now draws
the arrows of each tensor's smallest strides (the nearest ends) and names the others; each check
against torch's own strides."""

from __future__ import annotations

import re

import pytest
import torch

from stridewidget.render.picture import draw, height_budget, scene_of
from stridewidget.render.primitives import Group, Text

#: shapes of the random 3-18-D draws that were furthest over budget (one, and with a transpose)
SHAPES = [
    [7, 1, 5, 50, 3, 4, 2, 2, 50, 4, 7, 50, 2, 3, 2, 50, 4, 7],
    [50, 7, 5, 2, 4, 2, 2, 2, 2, 7, 5, 50, 50, 4, 4, 50, 4],
    [4, 3, 5, 5, 7, 50, 2, 5, 50, 2, 2, 4, 2, 2, 2, 2, 3, 7],
]


def _walk(items):
    for item in items:
        yield item
        if isinstance(item, Group):
            yield from _walk(item.children)


def _drawn_dims(picture) -> set[int]:
    """The dims whose stride arrows the picture draws (each arrow's group says its dims)."""
    found = set()
    for item in _walk(picture.items):
        if isinstance(item, Group) and item.cls == "sws-arrow":
            found.update(int(d) for d in str(item.data["dim"]).split(","))
    return found


def _named_dims(picture) -> set[int]:
    """The dims the picture says it draws no arrow for."""
    words = " ".join(i.text for i in _walk(picture.items) if isinstance(i, Text))
    said = re.search(r"the stride arrows? of ([d\d, ]+?) (?:is|are) not drawn", words)
    return set() if said is None else {int(d) for d in re.findall(r"d(\d+)", said.group(1))}


@pytest.mark.parametrize("width", [900, 1280])
@pytest.mark.parametrize("shape", SHAPES)
def test_a_tensor_of_many_dims_fits_and_names_the_arrows_it_leaves_out(shape, width):
    x = torch.empty(shape, device="meta")
    scene = scene_of(x=x)
    picture = draw(scene, width=width)
    assert picture.height <= height_budget(scene)
    drawn, named = _drawn_dims(picture), _named_dims(picture)
    # torch's own strides: every dim of size > 1 has an arrow, drawn or named, never both
    dims = {d for d, n in enumerate(x.shape) if n > 1}
    assert drawn | named == dims and not drawn & named
    assert named or width > 900  # at 900 px each was over its budget with every arrow
    if named:  # the arrows drawn are those of the smallest strides (the ends nearest the start)
        assert max(x.stride(d) for d in drawn) < min(x.stride(d) for d in named)


def test_a_tensor_of_few_dims_keeps_every_arrow():
    """A 4-D tensor whose picture fits draws every arrow and says nothing is left out."""
    x = torch.arange(120.0).reshape(2, 3, 4, 5).permute(0, 2, 3, 1)
    picture = draw(scene_of(x=x), width=900)
    assert _drawn_dims(picture) == {0, 1, 2, 3} and not _named_dims(picture)


def test_tensors_listed_in_words_give_their_room_back_to_the_arrows():
    """Hostile review (2026-12-05): the ladder took arrows before it listed a tensor in words,
    and kept them taken: two 10-D tensors drew four arrows each (1,186 px at 1,280 px) where,
    the third tensor listed, every arrow fits (1,404 px, budget 1,540)."""

    def meta(*shape):
        return torch.empty(10**7, device="meta")[: torch.Size(shape).numel()].view(*shape)

    shape = (2, 3, 2, 3, 2, 3, 2, 3, 2, 3)
    a, b = meta(*shape), meta(*shape).transpose(0, 9)
    scene = scene_of(a=a, b=b, c=meta(5, 5, 5, 5, 5, 5))
    picture = draw(scene, width=1280)
    assert [t["name"] for t in picture.tensors] == ["a", "b"]  # c listed in words
    assert picture.height <= height_budget(scene)
    assert _drawn_dims(picture) == set(range(10)) and not _named_dims(picture)


def test_a_grid_of_wide_cells_fits_with_fewer_of_its_ends():
    """Issue 36, fit: two 17-D meta tensors at a 900 px column (876 px laid out) were 1,925 px
    with the toolbar (budget 1,600): the card's grid of 13-digit addresses wrapped in two blocks
    of columns.  The ladder's last step keeps two rows and columns at each end; every address a
    cell says is torch's own storage offset of the element its row and column name."""
    x = torch.empty(2, 3, 2, 7, 50, 50, 2, 7, 3, 50, 4, 1, 50, 50, 7, 50, device="meta")
    scene = scene_of(x=x, y=x.transpose(3, 11))
    picture = draw(scene, width=876)
    assert picture.height <= height_budget(scene) and picture.split_grids == 0
    cells = [i for i in _walk(picture.items) if isinstance(i, Group) and i.cls == "sws-lcell"]
    assert cells and {c.data["r"] for c in cells} == {0, 1, 3, 4}  # rows 0, 1, ⋮, 5, 6
    tensors = {"x": x, "y": x.transpose(3, 11)}
    ids = {t["id"]: tensors[t["name"]] for t in scene["tensors"]}
    for cell in cells:
        index = tuple(int(i) for i in cell.data["index"].split(","))
        assert cell.data["addr"] == ids[cell.data["tensor"]][index].storage_offset()
