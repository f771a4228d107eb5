"""Issue 36, truth: a float32 tensor and its int32 view are two strips of one memory, and a hover
said ``storage[3] = 1077936128`` on one and ``storage[3] = 3.`` on the other: which storage?
Each hover over such a strip names it (``storage s1[3]``), and says the value torch reads from
that strip's dtype there."""

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


@pytest.mark.parametrize(
    "make",
    [
        lambda f: {"a": f, "b": f.view(torch.int32)},
        lambda f: {"a": f.view(2, 3), "b": f.view(torch.int32)[1::2]},
    ],
)
def test_a_hover_over_one_of_two_strips_of_one_memory_names_its_strip(make):
    f = torch.arange(6.0) * 1.5
    tensors = make(f)
    scene = scene_of(**tensors)
    by_strip = {t["storage"]: tensors[t["name"]] for t in scene["tensors"]}
    assert len(by_strip) == 2  # two strips: one memory seen as float32 and as int32
    said = 0
    for title in _titles(draw(scene).items):
        for strip, cell, value in re.findall(r"storage (s\d)\[(\d+)\] (?:= |holds )(\S+)", title):
            # torch's own value of that strip's dtype at that storage index
            flat = by_strip[strip].untyped_storage()
            dtype = by_strip[strip].dtype
            truth = torch.tensor([], dtype=dtype).set_(flat)[int(cell)].item()
            assert float(value) == truth, title
            said += 1
        assert not re.search(r"(?<!s\d)storage\[\d+\] (?:=|holds)", title), title  # unnamed
    assert said >= 12


def test_one_strip_alone_keeps_plain_storage_indices():
    x = torch.arange(6.0)
    titles = list(_titles(draw(scene_of(x=x, xt=x.view(2, 3).t())).items))
    assert any(t.startswith("storage[0] = 0.") for t in titles)
    assert not any(re.search(r"storage s\d\[", t) for t in titles)


def test_a_gap_over_one_of_two_strips_of_one_memory_names_its_strip():
    """Hostile review (2026-12-05): the gap markers' hovers said ``storage[8,206] … storage[…]``
    on both strips of one memory; each names its strip now, its range inside that strip."""
    x = torch.arange(10**6, dtype=torch.float32)
    scene = scene_of(a=x[::1000], b=x.view(torch.int32)[3::777], c=x[7::4099])
    sizes = {s["id"]: s["size"] for s in scene["storages"]}
    gaps = [t for t in _titles(draw(scene).items) if " … " in t and "not drawn" in t]
    assert gaps
    for title in gaps:
        found = re.findall(r"storage (s\d)\[([\d,]+)\]", title)
        assert len(found) == 2 and found[0][0] == found[1][0], title
        assert int(found[1][1].replace(",", "")) < sizes[found[0][0]]
