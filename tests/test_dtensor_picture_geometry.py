"""The laid-out DTensor picture's geometry (``draw_distributed``'s primitives): everything lies
inside the picture, no two texts overlap, the picture keeps to the width it is laid out for, and
the saved picture says what its cell marks mean.  One CPU process, a fake process group."""

from __future__ import annotations

import itertools
import math
import re

import pytest
import torch
import torch.distributed as dist

from stridewidget.render.primitives import MAX_WIDTH, Group, Path, Rect, Text

if not dist.is_available():
    pytest.skip("torch.distributed is not available in this torch build", allow_module_level=True)

from arrow_lint import _text_box
from torch.distributed._local_tensor import LocalTensorMode
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import DTensor, Partial, Replicate, Shard, distribute_tensor
from torch.testing._internal.distributed.fake_pg import FakeStore

from stridewidget.render.distributed import draw_distributed


@pytest.fixture(scope="module", autouse=True)
def group():
    dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=64)
    yield
    dist.destroy_process_group()


def _make(mesh_shape, placements, source=None, local=None, names=None):
    with LocalTensorMode(math.prod(mesh_shape)):
        mesh = init_device_mesh("cpu", mesh_shape, mesh_dim_names=names)
        if local is not None:
            return DTensor.from_local(local, mesh, placements)
        return distribute_tensor(source, mesh, placements)


def _leaves(items):
    for item in items:
        if isinstance(item, Group):
            yield from _leaves(item.children)
        else:
            yield item


def _box(item):
    """(x0, y0, x1, y1) of a primitive (a text's box estimated as the arrow lint does)."""
    if isinstance(item, Rect):
        return item.x, item.y, item.x + item.w, item.y + item.h
    if isinstance(item, Text):
        return _text_box(item)
    if isinstance(item, Path):
        xs = [v for _, *vs in item.commands for v in vs[0::2]]
        ys = [v for _, *vs in item.commands for v in vs[1::2]]
        return min(xs), min(ys), max(xs), max(ys)
    raise AssertionError(item)


A44 = torch.arange(16.0).reshape(4, 4)
CASES = {
    "partial-shard": ((4, 4), [Partial(), Shard(1)], None, torch.ones(2, 3)),
    "3d-mesh": ((2, 2, 4), [Shard(0), Shard(1), Shard(2)], torch.ones(4, 4, 4), None),
    "0-rows": ((4, 4), [Shard(0), Shard(1)], torch.zeros(0, 4), None),
    "uneven-4d": ((4, 4), [Shard(3), Shard(1)], torch.arange(120.0).reshape(2, 3, 4, 5), None),
    "3-rows-16-ranks": ((16,), [Shard(0)], torch.arange(12.0).reshape(3, 4), None),
    "replicate-shard": ((2, 4), [Replicate(), Shard(1)], A44, None),
    "shard-shard": ((2, 4), [Shard(0), Shard(1)], A44, None),
    "partial-1d": ((4,), [Partial()], None, torch.ones(2, 3)),
    "replicate-8x8": ((8, 8), [Replicate(), Replicate()], A44, None),
    "shard-32": ((32,), [Shard(1)], torch.arange(256.0).reshape(8, 32), None),
    "big": ((2, 4), [Shard(0), Shard(1)], torch.zeros(100, 100), None),
    "1d-tensor": ((4, 4), [Shard(0), Replicate()], torch.arange(7.0), None),
    "partial-in-a-4x4x4-mesh": (
        (4, 4, 4),
        [Shard(0), Partial(), Replicate()],
        None,
        torch.ones(3, 5),
    ),
    "long-mesh-dim-names": ((2, 4), [Shard(0), Shard(1)], A44, None, ("data" * 30, "tp" * 60)),
}


@pytest.fixture(scope="module", params=sorted(CASES))
def picture(request):
    mesh_shape, placements, source, local, *names = CASES[request.param]
    return draw_distributed(_make(mesh_shape, placements, source, local, *names))


def test_every_primitive_lies_inside_the_picture(picture):
    for item in _leaves(picture.items):
        x0, y0, x1, y1 = _box(item)
        what = getattr(item, "text", type(item).__name__)
        assert x0 >= -0.5 and y0 >= -0.5, what
        assert x1 <= picture.width + 0.5 and y1 <= picture.height + 0.5, (what, x1, picture.width)


def test_no_two_texts_overlap(picture):
    texts = [t for t in _leaves(picture.items) if isinstance(t, Text) and t.text.strip()]
    for a, b in itertools.combinations(texts, 2):
        (ax0, ay0, ax1, ay1), (bx0, by0, bx1, by1) = _text_box(a), _text_box(b)
        assert not (ax0 < bx1 and bx0 < ax1 and ay0 < by1 and by0 < ay1), (a.text, b.text)


def test_the_picture_keeps_to_the_width_it_is_laid_out_for(picture):
    assert picture.width <= MAX_WIDTH


def test_the_legend_names_each_kind_of_mark_drawn(picture):
    """The saved picture has no tooltips: a line under the heading says what ``r5``, ``r0,4``,
    ``r0+3`` and ``Σ`` mean, for each kind its cells show (and no other)."""
    marks = [
        t.text
        for g in picture.items
        if isinstance(g, Group) and g.cls == "sws-dcell"
        for t in _leaves(g.children)
        if isinstance(t, Text)
    ]
    kinds = {
        "one": r"r\d+",
        "two": r"r\d+,\d+",
        "more": r"r\d+\+\d+",
    }
    words = " ".join(t.text for t in picture.items if isinstance(t, Text))
    for kind, pattern in kinds.items():
        drawn = any(re.fullmatch(pattern + "Σ?", m) for m in marks)
        assert bool(re.search(rf"(^| ){pattern}: ", words)) == drawn, (kind, words[:300])
    assert ("(marked Σ): " in words) == any(m.endswith("Σ") for m in marks)
