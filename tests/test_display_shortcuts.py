"""The shortcuts issue 36's display-cost work took say what the long ways say.

``Lookup.shown_and_full`` (one lookup for a logical cell's shown and full text) against
``Lookup.read`` twice, ``Lookup.shown_texts`` (a grid's texts at once) against ``Lookup.read``
per cell, and ``value_texts(skip=)`` (texts of the values after the ones that only choose the
format) against the texts of all the values, sliced.  Oracles: the long ways, which the picture
used before.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from stridewidget.adapters.numbers import value_texts
from stridewidget.render.canvas import Lookup
from stridewidget.scene.build import build_scene

_GEN = torch.Generator().manual_seed(0)
_Z = torch.complex(torch.randn(6, generator=_GEN), torch.randn(6, generator=_GEN))


@pytest.mark.parametrize(
    "tensors",
    [
        {"x": torch.randn(12, 20, generator=_GEN)},
        {"z": _Z, "zc": _Z.conj()},  # a view that reads other values than storage holds
        {"n": torch._neg_view(torch.arange(6.0).reshape(2, 3))},
        {"a": np.linspace(0, 1, 12).reshape(3, 4)},
        {"m": torch.empty(100, 100, device="meta")},  # no values
    ],
    ids=["floats", "conj", "neg", "numpy", "meta"],
)
@pytest.mark.parametrize("at_most", [None, 1])
def test_shown_and_full_reads_what_read_reads(tensors, at_most):
    scene = build_scene(tensors)
    lookup = Lookup(scene, at_most)
    for tensor in scene["tensors"]:
        cells = [*lookup.position[tensor["storage"]], None, -1]  # and cells not shown
        for cell in cells:
            expected = (lookup.read(tensor, cell, "text"), lookup.read(tensor, cell, "full"))
            assert lookup.shown_and_full(tensor, cell) == expected, (tensor["name"], cell)
        assert lookup.shown_texts(tensor, cells) == [lookup.read(tensor, c, "text") for c in cells]


@pytest.mark.parametrize(
    "items, like",
    [
        ([1e-5, 1.0, 2.0, float("nan")], torch.float32),
        ([3.0, 4.0, -1.0], torch.float64),
        ([1 + 2j, 3e9 - 1j, 0.5j], torch.complex64),
        ([True, False, True], torch.bool),
        ([5, -7, 123456], torch.int64),
        ([0.25, 1e-7, 3.5], np.dtype("float64")),
    ],
)
@pytest.mark.parametrize("skip", [0, 1, 2, 3])
def test_value_texts_skip_is_the_slice_of_all(items, like, skip):
    texts, numbers = value_texts(items, like)
    assert value_texts(items, like, skip) == (texts[skip:], numbers[skip:])
