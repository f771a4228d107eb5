"""The slice picker tells the truth (issue 36, hostile review): a malformed ``picked`` value is
a one-line TraitError naming what was expected, and a picked slice the picture does not draw (the
height ladder dropped it, or its tensor is listed in words) is named in the picture's words.
Oracles: torch (which slices exist, their storage offsets) and the drawn panels of the display
list, never a hard-coded picture."""

from __future__ import annotations

import re

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


def _groups(items, cls):
    """The display list's groups of class ``cls``, anywhere in ``items``."""
    for item in items:
        if item[0] == "g":
            if item[1] == cls:
                yield item
            yield from _groups(item[4], cls)


def _texts(items):
    for item in items:
        if item[0] == "t":
            yield item[3]
        elif item[0] == "g":
            yield from _texts(item[4])


def _drawn_leads(listed, name: str, t: torch.Tensor) -> set[tuple[int, ...]]:
    """The leading indices of the slices the picture draws cells of, each cell's address checked
    against torch's own (storage_offset of the element it names)."""
    tid = next(d["id"] for d in listed["tensors"] if d["name"] == name)
    leads = set()
    for group in _groups(listed["items"], "sws-lcell"):
        data = group[2]
        if data["tensor"] != tid:
            continue
        index = tuple(int(i) for i in data["index"].split(","))
        assert data["addr"] == t[index].storage_offset(), (name, index)
        leads.add(index[: t.dim() - 2])
    return leads


def _said(listed, name: str, ndim: int) -> tuple[set[tuple[int, ...]], int | None]:
    """The slices of ``name`` the picture's words say were picked and not drawn, and how many
    it counts (None: no such words)."""
    words = " ".join(" ".join(_texts(g[4])) for g in _groups(listed["items"], "sws-pick-note"))
    words += " ".join(s for s in _texts(listed["items"]) if s.startswith(f"· {name}: "))
    found = re.search(r"(?:(\d+) of )?your (\d+) picked slices? not drawn", words)
    if not found:
        return set(), None
    dims = ", ".join([r"(\d+)"] * (ndim - 2) + [":", ":"])
    found_names = re.findall(re.escape(name) + r"\[" + dims + r"\]", words)
    named = {tuple(map(int, m if isinstance(m, tuple) else (m,))) for m in found_names}
    return named, int(found.group(1) or found.group(2))


ISSUE = torch.arange(7200.0).reshape(20, 12, 30)
PICKS = {
    "every other": [[i] for i in range(0, 20, 2)],
    "every third, then the first": [[i] for i in range(1, 20, 3)] + [[0]],
    "one": [[7]],
}


@pytest.mark.parametrize("width", [876, 700, 500, 320])
@pytest.mark.parametrize("picks", sorted(PICKS))
def test_the_picked_slices_a_picture_leaves_out_are_named_in_words(picks, width):
    w = sw.StrideWidget(x=ISSUE)
    w.width = width
    w.picked = {"x": PICKS[picks]}
    picked = {tuple(p) for p in PICKS[picks]}
    for p in picked:  # each pick is a slice of x, by torch
        assert ISSUE[p].shape == ISSUE.shape[1:]
    listed = w.picture
    missing = picked - _drawn_leads(listed, "x", ISSUE)
    named, count = _said(listed, "x", 3)
    assert count == (len(missing) or None)
    assert named <= missing and (named == missing or "more slice" in str(listed))
    w.close()


def test_the_issues_picks_name_exactly_the_three_slices_left_out():
    w = sw.StrideWidget(x=ISSUE)
    w.width = 876
    w.picked = {"x": PICKS["every other"]}
    missing = {(i,) for i in range(0, 20, 2)} - _drawn_leads(w.picture, "x", ISSUE)
    assert missing and _said(w.picture, "x", 3) == (missing, len(missing))
    w.close()


def test_a_pick_of_a_tensor_listed_in_words_is_said_there():
    tensors = {f"t{k}": torch.arange(7200.0).reshape(20, 12, 30) + k for k in range(5)}
    w = sw.StrideWidget(tensors)
    w.width = 876
    w.picked = {"t4": [[3], [5]]}
    assert "t4" not in [t["name"] for t in w.picture["tensors"]]  # listed in words, by the ladder
    line = next(s for s in _texts(w.picture["items"]) if s.startswith("· t4: "))
    assert "your 2 picked slices not drawn" in line
    assert re.findall(r"t4\[(\d+), :, :\]", line) == ["3", "5"]
    w.close()


@pytest.mark.parametrize("shape", [(), (5,), (4, 6)])
def test_a_pick_of_a_tensor_drawn_as_one_grid_says_it_has_no_slices(shape):
    w = sw.StrideWidget(t=torch.zeros(shape))
    with pytest.raises(traitlets.TraitError, match=f"t is {len(shape)}-D, drawn as one grid"):
        w.picked = {"t": [[0]]}
    assert w.picked == {}
    w.close()


def test_a_pick_of_a_dtensor_is_refused_in_words(group):
    from torch.distributed.tensor import DeviceMesh, Shard, distribute_tensor

    group(2)
    d = distribute_tensor(
        torch.arange(24.0).reshape(2, 3, 4), DeviceMesh("cpu", [0, 1]), [Shard(0)]
    )
    w = sw.show(d)
    with pytest.raises(traitlets.TraitError, match="a DTensor's picture draws its shards"):
        w.picked = {"d": [[1]]}
    assert w.picked == {}
    w.close()


def test_a_pick_the_tensor_lost_by_an_in_place_resize_is_said_in_its_card():
    t = torch.arange(120).reshape(10, 3, 4)
    w = sw.StrideWidget(t=t)
    w.picked = {"t": [[9], [1]]}
    t.resize_(2, 3, 4)
    w.refresh()
    with pytest.raises(IndexError):  # by torch: t[9] is no slice of t now; t[1] is
        t[9]
    assert t[1].shape == (3, 4)
    words = " ".join(" ".join(_texts(g[4])) for g in _groups(w.picture["items"], "sws-pick-note"))
    assert re.findall(r"t\[(\d+), :, :\]", words) == ["9"]
    assert "not drawn (no slices of t since it was resized to (2, 3, 4)): t[9, :, :]" in words
    assert _drawn_leads(w.picture, "t", t) == {(0,), (1,)}
    w.close()


def test_after_a_resize_the_picker_can_add_a_pick_beside_a_lost_one():
    t = torch.arange(120).reshape(10, 3, 4)
    w = sw.StrideWidget(t=t)
    w.picked = {"t": [[9]]}
    t.resize_(4, 3, 4)
    w.refresh()
    w.picked = {"t": [[9], [2]]}  # as the picker sets it: the list it had, and the new pick
    assert _drawn_leads(w.picture, "t", t) == {(0,), (1,), (2,), (3,)}
    words = " ".join(" ".join(_texts(g[4])) for g in _groups(w.picture["items"], "sws-pick-note"))
    assert re.findall(r"t\[(\d+), :, :\]", words) == ["9"]
    with pytest.raises(traitlets.TraitError, match=r"t\[8, …\] is no slice of t"):
        w.picked = {"t": [[9], [2], [8]]}  # a new pick is still checked
    w.close()
