"""A hand-made scene handed to a renderer is checked before anything of it is drawn."""

from __future__ import annotations

import copy

import pytest
import torch

import stridewidget as sw
from stridewidget.scene.build import build_scene

HOSTILE = '"><script>alert(1)</script>'


X = torch.arange(24.0).reshape(2, 3, 4)
TENSORS = {"x": X, "xt": X.transpose(1, 2)[:, ::2]}


def _scene():
    return build_scene(TENSORS)


def _places(scene):
    """Every numeric field a renderer writes into markup, as (description, setter)."""
    tensor = scene["tensors"][1]
    storage = scene["storages"][0]
    slice_ = tensor["logical"]["slices"][0]
    return {
        "addr": lambda v: slice_["addr"][0].__setitem__(0, v),
        "dim": lambda v: tensor["arrows"][0].__setitem__("dim", v),
        "stride": lambda v: tensor["arrows"][0].__setitem__("stride", v),
        "from": lambda v: tensor["arrows"][0].__setitem__("from", v),
        "rows": lambda v: slice_["rows"].__setitem__(0, v),
        "cell index": lambda v: storage["cells"]["index"].__setitem__(0, v),
        "segment start": lambda v: storage["segments"][0].__setitem__("start", v),
        "wrap": lambda v: storage.__setitem__("wrap", v),
        "order": lambda v: tensor.__setitem__("order", v),
        "touch": lambda v: tensor["touch"].__setitem__(0, v),
    }


@pytest.mark.parametrize("render", [sw.render_svg, sw.render_html, sw.render_text])
@pytest.mark.parametrize("place", sorted(_places(_scene())))
@pytest.mark.parametrize("bad", [HOSTILE, 1.5, True, [1]], ids=["markup", "float", "bool", "list"])
def test_a_bad_field_in_a_hand_made_scene_is_refused(render, place, bad):
    scene = _scene()
    _places(scene)[place](bad)
    with pytest.raises(sw.LayoutError, match=r"not a stridewidget scene: .* must be"):
        render(scene)


@pytest.mark.parametrize("render", [sw.render_svg, sw.render_html, sw.render_text])
def test_scenes_from_build_scene_pass(render):
    assert render(copy.deepcopy(_scene())) == render(**TENSORS)


def test_strings_in_a_hand_made_scene_are_escaped():
    scene = _scene()
    scene["tensors"][0]["name"] = HOSTILE
    svg = sw.render_svg(scene)
    assert "<script" not in svg and "&lt;script" in svg


def test_a_scene_with_thinned_slices_passes():
    # more slices than max_slices: one gap with no lead stands for the thinned-out ones
    scene = build_scene({"x": torch.zeros(3, 3, 3, 1, 1)}, max_slices=2)
    gaps = [s for s in scene["tensors"][0]["logical"]["slices"] if s.get("kind") == "gap"]
    assert any(gap["lead"] is None for gap in gaps)
    assert sw.render_svg(scene).startswith("<svg")
