"""A card's facts line says how to read it: "element [i, j] lives at storage[offset + i·stride0 +
j·stride1]".  A hostile review (2026-12-04) found that formula written for two dims on every
card (a 0-d, 1-D or 5-D tensor's too).  Now it names one index per dim; read with the tensor's
own strides and offset, it gives the storage index torch's pointers give for every element.
"""

from __future__ import annotations

import itertools
import re

import pytest
import torch

from stridewidget.render.picture import draw, scene_of
from stridewidget.render.primitives import Group

CASES = {
    "0-d": lambda: torch.tensor(3.0),
    "1-d step slice": lambda: torch.arange(10.0)[1::3],
    "2-d transpose": lambda: torch.arange(12.0).reshape(3, 4).t(),
    "5-d permute": lambda: torch.arange(120.0).reshape(2, 3, 4, 5, 1).permute(4, 2, 0, 3, 1),
}


def _facts_titles(items):
    for item in items:
        if isinstance(item, Group):
            if item.cls == "sws-facts":
                yield item.title
            yield from _facts_titles(item.children)


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_facts_formula_gives_each_elements_storage_index(name):
    x = CASES[name]()
    (title,) = list(_facts_titles(draw(scene_of(x=x)).items))
    if x.dim() == 0:
        assert "its one element lives at storage[offset]" in title
        return
    found = re.search(r"element \[([^\]]*)\] lives at storage\[offset \+ ([^\]]*)\]", title)
    assert found, title
    names = found.group(1).split(", ")
    assert len(names) == x.dim()
    terms = found.group(2).split(" + ")
    base = x.untyped_storage().data_ptr()
    for index in itertools.product(*(range(n) for n in x.shape)):
        values = dict(zip(names, index))
        address = x.storage_offset()
        for term in terms:
            name_, dim = re.fullmatch(r"(\w+)·stride(\d+)", term).groups()
            address += values[name_] * x.stride(int(dim))
        element = x[index].data_ptr() if x.dim() else x.data_ptr()
        assert address == (element - base) // x.element_size()
