"""Issue 36, truth: a hover line says a storage index with its digits grouped, as the picture does.

A logical cell of a view deep in a large storage said ``storage[999999999999]`` on hover, where the
picture wrote ``@999,999,999,999`` under it; a storage cell's hover alike.  Every ``storage[...]``
a hover line says is checked against torch: the cell the view's element is at (``storage_offset +
sum(i * stride)``), its digits grouped (``f"{n:,}"``)."""

from __future__ import annotations

import re

import pytest
import torch

from stridewidget.render.picture import draw, scene_of
from stridewidget.render.primitives import Group


def _titles(items):
    for item in items:
        if isinstance(item, Group):
            if item.title:
                yield item.title
            yield from _titles(item.children)


def _deep(offset: int) -> torch.Tensor:
    """A 2x3 view whose first element is at ``offset`` of a meta storage (no memory needed)."""
    return torch.empty(offset + 100, device="meta").as_strided((2, 3), (7, 2), offset)


@pytest.mark.parametrize("offset", [999_999_999_990, 12_345, 1_000])
def test_every_storage_index_a_hover_says_is_grouped_and_torchs(offset):
    view = _deep(offset)
    titles = list(_titles(draw(scene_of(v=view)).items))
    said = [t for t in titles if "storage[" in t]
    assert said, titles
    where = {
        ", ".join(map(str, (i, j))): offset + i * view.stride(0) + j * view.stride(1)
        for i in range(2)
        for j in range(3)
    }
    logical = 0
    for title in said:
        for cell in re.findall(r"storage\[([\d,]+)\]", title):
            assert re.fullmatch(r"\d{1,3}(,\d{3})*", cell), title  # grouped as f"{n:,}" groups
        found = re.match(r"v\[([\d, ]+)\] → storage\[([\d,]+)\]", title)
        if found:
            logical += 1
            assert found.group(2) == f"{where[found.group(1)]:,}", title
    assert logical == 6


@pytest.mark.parametrize("offset", [999_999_999_990, 1_234_567])
def test_the_cards_layout_line_groups_the_offsets_digits(offset):
    """The card's layout line said ``offset 999999999990`` beside hovers saying
    ``storage[999,999,999,990]``: its offset is grouped too, and is torch's ``storage_offset``."""
    import stridewidget as sw

    view = _deep(offset)
    said = re.findall(r"offset ([0-9,]+)", sw.render_svg(v=view))
    assert said, "no offset on the card"
    for text in said:
        assert re.fullmatch(r"\d{1,3}(,\d{3})*", text), text
        assert int(text.replace(",", "")) == view.storage_offset()
