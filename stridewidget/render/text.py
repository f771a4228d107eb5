"""The picture as plain text, for terminals, doctests and nbval diffs.

Each tensor's layout line and stride arrows, then the storage as one line of memory — storage
indices over values over readers (``A``, ``B×2``; ``·`` = untouched), wrapped like the SVG strip
— then each tensor's logical grid.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .labels import (
    counted,
    gap_note,
    gap_words,
    group_digits,
    reader_mark,
    same_memory_note,
    storage_words,
)
from .picture import scene_of
from .strip import no_values_reason

__all__ = ["render_text"]


def _storage_lines(storage: Mapping[str, Any], members: list[Mapping[str, Any]]) -> list[str]:
    texts = storage["cells"]["text"]
    cells = storage["cells"]["index"]
    marks = []
    for i in range(len(cells)):
        readers = [reader_mark(t, t["touch"][i]) for t in members if t["touch"][i] != 0]
        marks.append("".join(readers) or "·")
    # an empty storage (a zero-size array) has no cells: one character is as wide as it gets
    width = 1 + max(
        [1, *(len(m) for m in marks), *(len(t) for t in texts or ()), *(len(str(c)) for c in cells)]
    )
    # one line for a short storage (the scene's row is then the whole storage), else its rows
    per_line = max(1, int(storage["wrap"]))
    rows = f" · rows of {per_line}" if per_line < len(cells) else ""
    size, unit = storage["size"], storage.get("unit", storage["itemsize"])
    words = (
        f"{storage['dtype']} · {counted(size, 'element')}"
        if unit == storage["itemsize"]
        else storage_words(size, storage["itemsize"], unit, storage["dtype"], storage["nbytes"])
    )
    lines = [
        f"storage {storage['id']} · {words} · {storage['device']}{rows}"
        + ("" if texts is not None else f" · {no_values_reason(storage)}")
    ]
    if storage.get("same_memory"):  # a float32 tensor and its .view(torch.int32): one memory
        lines.append(f"  {same_memory_note(storage['same_memory'])}")

    def block(positions: list[int]) -> None:
        lines.append("  index |" + "".join(str(cells[p]).rjust(width) for p in positions))
        if texts is not None:
            lines.append("  value |" + "".join(texts[p].rjust(width) for p in positions))
        lines.append("  read  |" + "".join(marks[p].rjust(width) for p in positions))

    position = 0
    for segment in storage["segments"]:
        if segment["kind"] == "gap":
            lines.append(
                f"        ⋯ {gap_words(segment)} "
                f"[{group_digits(segment['start'])} … {group_digits(segment['stop'] - 1)}] ⋯"
            )
            continue
        run = list(range(position, position + segment["stop"] - segment["start"]))
        position += len(run)
        for start in range(0, len(run), per_line):
            block(run[start : start + per_line])
    return lines


def _logical_lines(tensor: Mapping[str, Any], storages: Mapping[str, Any]) -> list[str]:
    storage = storages[tensor["storage"]]
    where = {cell: i for i, cell in enumerate(storage["cells"]["index"])}
    texts = storage["cells"]["text"]
    reads = tensor.get("reads")
    if reads is not None and reads["text"] is not None:
        texts = reads["text"]  # a conj/neg view or quantized tensor reads other values than stored

    def cell_text(address: int | None) -> str:
        if texts is None:
            return f"@{address}"
        i = where.get(address)
        return "?" if i is None or texts[i] is None else texts[i]

    logical = tensor["logical"]
    shown = [
        cell_text(a)
        for s in logical["slices"]
        if s["kind"] == "slice"
        for row in s["addr"]
        for a in row
        if a is not None
    ]
    width = max([1, *(len(t) for t in shown)])
    lines = [] if logical["slices"] else ["  (empty: no elements)"]
    for slice_ in logical["slices"]:
        if slice_["kind"] == "gap":
            lines.append(f"  {gap_note(slice_)}")
            continue
        if logical["ndim"] > 2:
            lines.append(f"  {tensor['name']}{slice_['label']}")
        for r, row in enumerate(slice_["addr"]):
            if slice_["rows"] is not None and slice_["rows"][r] is None:
                lines.append("    ⋮")
                continue
            row_cells = [
                "…".rjust(width)
                if slice_["cols"] is not None and slice_["cols"][c] is None
                else cell_text(a).rjust(width)
                for c, a in enumerate(row)
            ]
            lines.append("    [" + "  ".join(row_cells) + "]")
    return lines


def render_text(*tensors: Any, wrap: int | None = None, **named: Any) -> str:
    """A terminal picture: each tensor's layout line (CuTe-like ``shape:strides``), its stride
    arrows, the storage as one line of memory (index, value and readers of each cell: ``A``,
    ``B×2``; ``·`` = untouched) and the logical grid(s).

    >>> import torch, stridewidget as sw
    >>> print(sw.render_text(e=torch.arange(3.0).expand(2, 3)))
    A e: float32 (2,3):(0,1) +0 · storage 3 · overlapping
      arrows: d0 ×0 (storage[0] → storage[0]), d1 +1 (storage[0] → storage[1])
    storage s0 · float32 · 3 elements · cpu
      index |   0   1   2
      value |  0.  1.  2.
      read  | A×2 A×2 A×2
    logical e (2, 3):
        [0.  1.  2.]
        [0.  1.  2.]
    """
    scene = scene_of(*tensors, wrap=wrap, **named)
    storages = {s["id"]: s for s in scene.get("storages", [])}
    lines: list[str] = []
    for tensor in scene.get("tensors", []):
        lines.append(f"{tensor['mark']} {tensor['name']}: {tensor['layout']['text']}")
        arrows = ", ".join(
            f"{a['label']} (storage[{a['from']}] → storage[{a['to']}])" for a in tensor["arrows"]
        )
        if arrows:
            lines.append(f"  arrows: {arrows}")
        lines.extend(f"  {note}" for note in (tensor.get("reads") or {}).get("notes", ()))
    for storage in storages.values():
        members = [t for t in scene.get("tensors", []) if t["storage"] == storage["id"]]
        lines.extend(_storage_lines(storage, members))
    for tensor in scene.get("tensors", []):
        lines.append(f"logical {tensor['name']} {tuple(tensor['logical']['shape'])}:")
        lines.extend(_logical_lines(tensor, storages))
    for name in scene.get("released", []):
        lines.append(f"{name}: snapshot — the tensor was freed; this shows its layout when drawn")
    return "\n".join(line.rstrip() for line in lines)
