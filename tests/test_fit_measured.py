"""The height ladder's trial layouts (``_laid_out(..., measure=True)``: no grid cell, no strip cell
or arrow drawn) are exactly as tall as the full layouts of the same settings, and a picture the
ladder chose is the one a full layout of its settings draws (issue 36: display(x) speed)."""

from __future__ import annotations

import itertools

import pytest
import torch

from stridewidget.render.picture import _MEASURED, _laid_out, draw
from stridewidget.scene.build import build_scene


def _scenes() -> dict[str, dict]:
    gen = torch.Generator().manual_seed(0)
    x = torch.arange(120.0).reshape(2, 3, 4, 5)
    return {
        "heads": build_scene(
            {"q": torch.randn(2, 5, 32, generator=gen).view(2, 5, 4, 8).transpose(1, 2)}
        ),
        "5x6x7x8": build_scene({"x": torch.randn(5, 6, 7, 8, generator=gen)}),
        "nchw-wrap": build_scene(
            {"nchw": x, "nhwc": x.contiguous(memory_format=torch.channels_last)}, wrap=20
        ),
        "step": build_scene({"x": torch.arange(48).view(6, 8), "s": torch.arange(48)[::5]}),
        "meta": build_scene({"m": torch.empty(300, 300, device="meta")}),
    }


SETTINGS = {
    "at_most": [None, 1],
    "colour": [False, True],
    "edge": [None, 3],
    "panels": [None, 2],
    "inline_gaps": [False, True],
    "card": [None, 440.0],
}


@pytest.mark.parametrize("name", sorted(_scenes()))
def test_a_trial_is_as_tall_as_its_full_layout(name):
    scene = _scenes()[name]
    for values in itertools.product(*SETTINGS.values()):
        settings = dict(zip(SETTINGS, values))
        full = _laid_out(scene, "light", 900, True, lookups={}, **settings)
        trial = _laid_out(scene, "light", 900, True, lookups={}, measure=True, **settings)
        assert trial.items is _MEASURED and full.items is not _MEASURED
        assert (trial.height, trial.split_grids) == (full.height, full.split_grids), settings


def test_the_chosen_trial_is_laid_out_in_full():
    scene = _scenes()["5x6x7x8"]
    picture = draw(scene, roles=True)
    assert picture.items is not _MEASURED and picture.items
    again = _laid_out(scene, "light", 900, True, at_most=1, panels=4)
    assert (picture.height, picture.items) == (again.height, again.items)
