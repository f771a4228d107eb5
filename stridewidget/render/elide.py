"""A scene's logical grids cut to their first and last rows and columns: the over-budget ladder's
step for grids drawn whole (a tensor of at most ``THRESHOLD`` elements shows every element, so two
16 x 16 tensors took 1,729 px).  The cut rows and columns become one ``⋮`` / ``⋯`` each, as a
long dim's are; the storage strip and every count stay as they were.  Also the ladder's step for
long names (:func:`short_named`: each to its last characters), for the slices a reader picked
(:func:`fewer_picks`: the most recent kept; :func:`picks_not_drawn` says those a picture leaves
out), and the tests that say whether a scene has what a step cuts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = [
    "cut_scene",
    "elided_scene",
    "fewer_picks",
    "has_long_grid",
    "has_long_names",
    "has_panels",
    "most_picks",
    "picks_not_drawn",
    "short_named",
]


def _cut(values: list, edge: int) -> tuple[list, list[int]]:
    """``values`` with the middle beyond ``edge`` at each end as one ``None`` (an existing one
    folds in), and the positions kept (``-1``: the new ``None``)."""
    if len(values) <= 2 * edge + 1:
        return list(values), list(range(len(values)))
    keep = [*range(edge), -1, *range(len(values) - edge, len(values))]
    return [values[k] if k >= 0 else None for k in keep], keep


def elided_scene(scene: Mapping[str, Any], edge: int) -> dict[str, Any]:
    """``scene`` with each slice's rows and columns cut to ``edge`` at each end.

    >>> import torch
    >>> from stridewidget.scene.build import build_scene
    >>> cut = elided_scene(build_scene({"x": torch.zeros(16, 16)}), 3)
    >>> s = cut["tensors"][0]["logical"]["slices"][0]
    >>> s["rows"], s["addr"][3], s["addr"][6]
    ([0, 1, 2, None, 13, 14, 15], [None, None, None, None, None, None, None], [240, 241, 242, None, 253, 254, 255])
    """
    tensors = []
    for tensor in scene.get("tensors", []):
        logical = tensor["logical"]
        slices = []
        for slice_ in logical["slices"]:
            if slice_.get("kind") != "slice" or (slice_["rows"] is None and slice_["cols"] is None):
                slices.append(slice_)
                continue
            rows, row_keep = _cut(slice_["rows"], edge) if slice_["rows"] else (None, [0])
            cols, col_keep = _cut(slice_["cols"], edge) if slice_["cols"] else (None, [0])
            addr = [
                [None if r < 0 or c < 0 else slice_["addr"][r][c] for c in col_keep]
                for r in row_keep
            ]
            slices.append({**slice_, "rows": rows, "cols": cols, "addr": addr})
        tensors.append({**tensor, "logical": {**logical, "slices": slices}})
    return {**scene, "tensors": tensors}


def has_long_names(scene: Mapping[str, Any], most: int) -> bool:
    """Is a name in ``scene`` longer than ``most`` characters?"""
    names = [t["name"] for t in scene.get("tensors", [])] + list(scene.get("released", []))
    return any(len(name) > most for name in names)


def short_named(scene: Mapping[str, Any], most: int) -> dict[str, Any]:
    """``scene`` with each name longer than ``most`` characters written as an ellipsis and its
    last characters (a module path's end tells ``…attention.query.weight`` from
    ``…attention.key.weight``); names that would read alike keep more of their ends, up to whole.

    >>> scene = {"tensors": [{"name": "layer.0.attention.query.weight"},
    ...                      {"name": "layer.0.attention.key.weight"}, {"name": "x"}]}
    >>> [t["name"] for t in short_named(scene, 16)["tensors"]]
    ['…on.query.weight', '…tion.key.weight', 'x']
    >>> scene = {"tensors": [{"name": "layer.0.attention.query.weight"},
    ...                      {"name": "layer.1.attention.query.weight"}]}
    >>> [t["name"] for t in short_named(scene, 16)["tensors"]]
    ['…er.0.attention.query.weight', '…er.1.attention.query.weight']
    """
    names = [t["name"] for t in scene.get("tensors", [])] + list(scene.get("released", []))
    kept = {name: most - 1 for name in names if len(name) > most}  # characters kept from the end

    def short(name: str) -> str:
        return name if name not in kept else "…" + name[len(name) - kept[name] :]

    while True:  # names that read alike keep more of their ends
        readers: dict[str, set[str]] = {}
        for name in names:
            readers.setdefault(short(name), set()).add(name)
        alike = [n for group in readers.values() if len(group) > 1 for n in group if n in kept]
        if not alike:
            break
        for name in alike:
            kept[name] += 4
            if kept[name] >= len(name) - 1:
                del kept[name]
    tensors = [{**t, "name": short(t["name"])} for t in scene.get("tensors", [])]
    return {**scene, "tensors": tensors, "released": [short(n) for n in scene.get("released", [])]}


def has_long_grid(scene: Mapping[str, Any], most: int) -> bool:
    """Does a slice of ``scene`` draw more than ``most`` rows or columns?"""
    return any(
        len(s[key] or ()) > most
        for t in scene.get("tensors", [])
        for s in t["logical"]["slices"]
        if s["kind"] == "slice"
        for key in ("rows", "cols")
    )


def has_panels(scene: Mapping[str, Any], most: int) -> bool:
    """Does a tensor of ``scene`` draw more than ``most`` panels?

    >>> import torch
    >>> from stridewidget.scene.build import build_scene
    >>> scene = build_scene({"x": torch.zeros(5, 2, 2)})
    >>> has_panels(scene, 4), has_panels(scene, 5)
    (True, False)
    """
    return any(
        sum(s["kind"] == "slice" for s in t["logical"]["slices"]) > most
        for t in scene.get("tensors", [])
    )


def most_picks(scene: Mapping[str, Any]) -> int:
    """The most slices a reader picked in one tensor of ``scene`` (marked ``"picked"``: 1 for the
    most recent pick, 2 for the one before, ...).

    >>> import torch
    >>> from stridewidget.scene.build import build_scene
    >>> most_picks(build_scene({"x": torch.zeros(40, 2, 2)}, picked={"x": [[9], [20], [30]]}))
    3
    """
    return max(
        (s.get("picked") or 0 for t in scene.get("tensors", []) for s in t["logical"]["slices"]),
        default=0,
    )


def fewer_picks(scene: Mapping[str, Any], most: int) -> dict[str, Any]:
    """``scene`` with at most the ``most`` most recent picks of each tensor marked ``"picked"``:
    the height ladder's last step (a picture of fewer panels keeps its picked slices, as many as
    fit; the rest are left out with the other slices, marked ``"pick_dropped"``: their card says
    so, :func:`picks_not_drawn`).

    >>> import torch
    >>> from stridewidget.scene.build import build_scene
    >>> scene = build_scene({"x": torch.zeros(40, 2, 2)}, picked={"x": [[9], [20], [30]]})
    >>> slices = fewer_picks(scene, 2)["tensors"][0]["logical"]["slices"]
    >>> [s["lead"] for s in slices if s.get("picked")]
    [[20], [30]]
    """

    def kept(slice_: Mapping[str, Any]) -> Mapping[str, Any]:
        if (slice_.get("picked") or 0) <= most:
            return slice_
        rest = {k: v for k, v in slice_.items() if k != "picked"}
        return {**rest, "pick_dropped": slice_["picked"]}

    tensors = [
        {**t, "logical": {**t["logical"], "slices": [kept(s) for s in t["logical"]["slices"]]}}
        for t in scene.get("tensors", [])
    ]
    return {**scene, "tensors": tensors}


def picks_not_drawn(
    slices: list[Mapping[str, Any]],
    drawn: set[int] | tuple[()],
    name: str,
    why: str = "height budget",
    most: int | None = None,
) -> str | None:
    """The words for the slices a reader picked (marked ``"picked"``, or ``"pick_dropped"`` by
    :func:`fewer_picks`) whose positions in ``slices`` are not among those ``drawn``: how many
    of how many picks, why (the picture's ``why``) and which (the first ``most`` of them, the
    rest counted); None when every pick is drawn.

    >>> sl = [{"kind": "slice", "lead": [i], "label": f"[{i}, :, :]", "picked": i + 1}
    ...       for i in range(3)]
    >>> picks_not_drawn(sl, {0, 2}, "x")
    "1 of your 3 picked slices not drawn (the picture's height budget): x[1, :, :]"
    >>> picks_not_drawn(sl, (), "x", "size budget", most=2)
    "your 3 picked slices not drawn (the picture's size budget): x[0, :, :], x[1, :, :], … and 1 more"
    >>> picks_not_drawn(sl, {0, 1, 2}, "x") is None
    True
    """
    picked = [
        k
        for k, s in enumerate(slices)
        if s.get("kind") == "slice" and (s.get("picked") or s.get("pick_dropped"))
    ]
    missing = [k for k in picked if k not in drawn]
    if not missing:
        return None
    plural = "s" if len(picked) != 1 else ""
    count = "your" if len(missing) == len(picked) else f"{len(missing)} of your"
    names = [f"{name}{slices[k]['label']}" for k in missing[:most]]
    if most is not None and len(missing) > most:
        names.append(f"… and {len(missing) - most} more")
    return (
        f"{count} {len(picked)} picked slice{plural} not drawn (the picture's {why}): "
        + ", ".join(names)
    )


def cut_scene(
    scene: Mapping[str, Any],
    *,
    edge: int | None = None,
    short_names: int | None = None,
    picks: int | None = None,
) -> Mapping[str, Any]:
    """``scene`` with the height ladder's cuts that change the scene: grids to ``edge`` rows and
    columns at each end (:func:`elided_scene`), names to ``short_names`` characters
    (:func:`short_named`), the ``picks`` most recent picks kept (:func:`fewer_picks`); as it is
    where each is None.

    >>> import torch
    >>> from stridewidget.scene.build import build_scene
    >>> scene = build_scene({"a_long_name": torch.zeros(9, 9)})
    >>> cut_scene(scene) is scene, cut_scene(scene, short_names=5)["tensors"][0]["name"]
    (True, '…name')
    """
    if edge is not None:
        scene = elided_scene(scene, edge)
    if short_names is not None:
        scene = short_named(scene, short_names)
    if picks is not None:
        scene = fewer_picks(scene, picks)
    return scene
