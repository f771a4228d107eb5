"""Indices of a scene's cells: which logical index a drawn grid cell stands for."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def logical_index(slice_: Mapping[str, Any], r: int, c: int) -> list[int]:
    """The logical index of cell (``r``, ``c``) of one scene slice (``lead`` + its row and column).

    >>> logical_index({"lead": [1], "rows": [0, 2], "cols": [5, 6]}, 1, 0)
    [1, 2, 5]
    """
    index = list(slice_["lead"])
    if slice_["rows"] is not None:
        index.append(slice_["rows"][r])
    if slice_["cols"] is not None:
        index.append(slice_["cols"][c])
    return index
