"""What a widget compares after each notebook cell: the bytes its shown storage cells hold.

Writes through ``t.numpy()``, ``t.data`` or NumPy move no version counter, so the post-cell check
re-reads the shown cells and compares them with what was drawn.  Kept cheap (one gather of at
most ``max_storage_cells`` cells per storage, no Layout rebuilt) and host-only: a CUDA storage is
left to its version counter, since reading it would copy to the host and synchronise.
"""

from __future__ import annotations

from typing import Any

from ..adapters.inspect import read_cells
from ..adapters.numpy import is_ndarray
from ..unseen import unseen

__all__ = ["ShownCells"]


class ShownCells:
    """The raw bytes of each shown host storage of a scene, re-readable to see if they changed.

    >>> import torch
    >>> from stridewidget.scene.build import build_scene
    >>> t = torch.zeros(3)
    >>> shown = ShownCells({"t": t}, build_scene({"t": t}))
    >>> shown.changed({"t": t})
    False
    >>> t.numpy()[1] = 2.0  # no version counter moves
    >>> shown.changed({"t": t})
    True
    """

    @unseen()  # its reads are no event of a track_copies() block it is made in
    def __init__(self, live: dict[str, Any], scene: dict[str, Any]) -> None:
        objects = list(live.values())  # the scene's tensors are in this order (names may be cut)
        self._plan: list[tuple[int, Any, list[int]]] = []  # (tensor order, byte index, cells)
        members: dict[str, int] = {}
        for tensor in scene.get("tensors", []):
            members.setdefault(tensor["storage"], tensor["order"])
        for storage in scene.get("storages", []):
            order = members.get(storage["id"])
            if order is None or not storage["has_values"] or storage["device"] != "cpu":
                continue
            cells = storage["cells"]["index"]
            self._plan.append((order, _byte_index(objects[order], cells, storage["unit"]), cells))
        self._bytes = self._read(objects)

    @unseen()
    def changed(self, live: dict[str, Any]) -> bool:
        """Whether a shown cell holds other bytes than when this was made."""
        return self._read(list(live.values())) != self._bytes

    def _read(self, objects: list[Any]) -> list[bytes | None]:
        found: list[bytes | None] = []
        for order, byte_index, cells in self._plan:
            obj = objects[order] if order < len(objects) else None
            if obj is None:
                found.append(None)
            elif byte_index is None:  # NumPy: through its own storage view
                found.append(read_cells(obj, cells, as_stored=True).tobytes())
            else:
                found.append(_gather(obj, byte_index))
        return found


def _byte_index(obj: Any, cells: list[int], unit: int) -> Any:
    """Byte positions of ``cells`` in a torch storage (``None`` for NumPy arrays)."""
    if is_ndarray(obj):
        return None
    import torch

    starts = torch.tensor(cells, dtype=torch.int64) * unit
    return (starts[:, None] + torch.arange(unit)).reshape(-1)


def _gather(t: Any, byte_index: Any) -> bytes | None:
    import torch

    storage = t.untyped_storage()
    if byte_index.numel() and int(byte_index[-1]) >= storage.nbytes():
        return None  # the storage shrank: certainly changed
    flat = torch.empty(0, dtype=torch.uint8).set_(storage, 0, (storage.nbytes(),), (1,))
    return flat[byte_index].numpy().tobytes()
