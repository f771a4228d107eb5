"""Checking a scene handed to a renderer: a hand-made or edited scene must have the shape
:func:`stridewidget.scene.build.build_scene` gives, so nothing in it reaches a picture unchecked.

Renderers escape every string they draw; the numbers they write into attributes (storage cells,
dims, strides, sizes) are checked here to be ints, so a string in their place is refused rather
than written into the markup.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import LayoutError, safe_repr

__all__ = ["validate_scene"]


def _fail(where: str, expected: str, value: Any) -> None:
    raise LayoutError(
        f"not a stridewidget scene: {where} must be {expected}, got {safe_repr(value)}; "
        "build scenes with stridewidget.scene.build.build_scene"
    )


def _int(value: Any, where: str, optional: bool = False) -> None:
    if optional and value is None:
        return
    if not isinstance(value, int) or isinstance(value, bool):
        _fail(where, "an int" + (" or null" if optional else ""), value)


def _ints(values: Any, where: str, optional_items: bool = False) -> None:
    if not isinstance(values, list):
        _fail(where, "a list of ints", values)
    for i, value in enumerate(values):
        _int(value, f"{where}[{i}]", optional_items)


def _str(value: Any, where: str) -> None:
    if not isinstance(value, str):
        _fail(where, "a string", value)


def _mapping(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        _fail(where, "an object", value)
    return value


def _list(value: Any, where: str) -> list[Any]:
    if not isinstance(value, list):
        _fail(where, "a list", value)
    return value


def validate_scene(scene: Mapping[str, Any]) -> None:
    """Raise :class:`LayoutError` naming the first field of ``scene`` that has the wrong type.

    >>> import torch
    >>> from stridewidget.scene.build import build_scene
    >>> scene = build_scene({"x": torch.zeros(2, 3)})
    >>> validate_scene(scene)
    >>> scene["tensors"][0]["arrows"][0]["dim"] = '"><script>'
    >>> validate_scene(scene)
    Traceback (most recent call last):
      ...
    stridewidget.errors.LayoutError: not a stridewidget scene: tensors[0].arrows[0].dim must be \
an int, got '"><script>'; build scenes with stridewidget.scene.build.build_scene
    """
    for s, storage in enumerate(_list(scene.get("storages"), "storages")):
        where = f"storages[{s}]"
        storage = _mapping(storage, where)
        _str(storage.get("id"), f"{where}.id")
        for key in ("size", "wrap", "text_width"):
            _int(storage.get(key), f"{where}.{key}")
        for g, segment in enumerate(_list(storage.get("segments"), f"{where}.segments")):
            segment = _mapping(segment, f"{where}.segments[{g}]")
            if segment.get("kind") not in ("cells", "gap"):
                _fail(f"{where}.segments[{g}].kind", '"cells" or "gap"', segment.get("kind"))
            _int(segment.get("start"), f"{where}.segments[{g}].start")
            _int(segment.get("stop"), f"{where}.segments[{g}].stop")
        cells = _mapping(storage.get("cells"), f"{where}.cells")
        _ints(cells.get("index"), f"{where}.cells.index")
        texts = cells.get("text")
        if texts is not None:
            for i, text in enumerate(_list(texts, f"{where}.cells.text")):
                _str(text, f"{where}.cells.text[{i}]")
    for t, tensor in enumerate(_list(scene.get("tensors"), "tensors")):
        where = f"tensors[{t}]"
        tensor = _mapping(tensor, where)
        for key in ("id", "name", "storage", "mark"):
            _str(tensor.get(key), f"{where}.{key}")
        _int(tensor.get("order"), f"{where}.order")
        _ints(tensor.get("touch", []), f"{where}.touch", optional_items=True)
        for a, arrow in enumerate(_list(tensor.get("arrows", []), f"{where}.arrows")):
            arrow = _mapping(arrow, f"{where}.arrows[{a}]")
            for key in ("dim", "stride", "from", "to"):
                _int(arrow.get(key), f"{where}.arrows[{a}].{key}")
        logical = _mapping(tensor.get("logical"), f"{where}.logical")
        for i, slice_ in enumerate(_list(logical.get("slices"), f"{where}.logical.slices")):
            here = f"{where}.logical.slices[{i}]"
            slice_ = _mapping(slice_, here)
            if slice_.get("kind") == "gap":  # a thinned-out gap (dim null) has no lead
                _int(slice_.get("dim"), f"{here}.dim", optional=True)
                _int(slice_.get("count"), f"{here}.count")
                if slice_.get("lead") is not None:
                    _ints(slice_["lead"], f"{here}.lead")
                for b, box in enumerate(_list(slice_.get("ranges", []), f"{here}.ranges")):
                    for d, pair in enumerate(_list(box, f"{here}.ranges[{b}]")):
                        _ints(pair, f"{here}.ranges[{b}][{d}]")
                if "text" in slice_:
                    _str(slice_["text"], f"{here}.text")
                continue
            _ints(slice_.get("lead"), f"{here}.lead")
            for key in ("rows", "cols"):
                if slice_.get(key) is not None:
                    _ints(slice_[key], f"{here}.{key}", optional_items=True)
            for r, row in enumerate(_list(slice_.get("addr"), f"{here}.addr")):
                _ints(row, f"{here}.addr[{r}]", optional_items=True)
