"""The slice picker tells the truth (issue 36, hostile review): a malformed ``picked`` value is
a one-line TraitError naming what was expected, and a picked slice the picture does not draw (the
height ladder dropped it, or its tensor is listed in words) is named in the picture's words.
Oracles: torch (which slices exist, their storage offsets) and the drawn panels of the display
list, never a hard-coded picture."""

from __future__ import annotations

import pytest
import torch
import traitlets

import stridewidget as sw

MALFORMED = ["7", None, 3, 2.5, {"a": 1}, [[1.0]], [["1"]], [[True]], [None], b"12", [[1, None]]]


@pytest.mark.parametrize("bad", MALFORMED, ids=repr)
def test_a_malformed_pick_is_a_one_line_error_naming_what_was_expected(bad):
    t = torch.arange(120).reshape(10, 3, 4)
    w = sw.StrideWidget(t=t)
    before = w.picture
    with pytest.raises(traitlets.TraitError, match="must be a list of index lists of ints") as info:
        w.picked = {"t": bad}
    assert "\n" not in str(info.value) and "is no slice" not in str(info.value)
    assert w.picture == before and w.picked == {}
    w.close()


def test_a_well_formed_pick_outside_the_tensor_still_says_its_sizes():
    w = sw.StrideWidget(t=torch.zeros(10, 3, 4))
    with pytest.raises(traitlets.TraitError, match=r"t\[-1, …\] is no slice of t"):
        w.picked = {"t": [[-1]]}
    w.picked = {"t": [[9], [2]]}
    assert w.picked == {"t": [[9], [2]]}
    w.close()
