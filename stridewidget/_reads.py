"""What a lazily transformed tensor reads from its storage: conj / neg views and quantized tensors.

The storage strip shows what memory holds (:func:`stridewidget._inspect.read_cells` with
``as_stored=True``); a conj view reads those values conjugated, a neg view negated, a quantized
tensor dequantized.  :func:`tensor_reads` gives, per shown storage cell, what *this* tensor reads
there, so its logical cells (and its hover line) show ``t[idx]`` while the strip shows raw memory.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from ._numbers import value_texts
from .render.picture import logical_index

__all__ = ["READ_NOTES", "tensor_reads"]

#: One line per lazy transform, said on the tensor's card in every renderer.
READ_NOTES = {
    "conj": "is_conj: storage holds unconjugated values; this view reads them conjugated",
    "neg": "is_neg: storage holds un-negated values; this view reads them negated",
    "quantized": "quantized: storage holds integer codes; this tensor reads (code − zero_point)·scale",
}


def tensor_reads(
    obj: Any,
    notes: Sequence[str],
    cells: Sequence[int],
    raw: Any,
    slices: Sequence[dict[str, Any]],
) -> dict[str, Any] | None:
    """Per shown storage cell, what ``obj`` reads there; ``None`` for a tensor that reads memory as is.

    ``raw`` holds the stored values of ``cells`` (a NumPy array, or ``None`` without values);
    ``slices`` are the tensor's logical slices (a per-channel quantized tensor's reads depend on
    the channel, so only cells read by a shown logical element get one).  Entries are ``None``
    where the tensor's read is not known (a cell no shown element of a per-channel tensor reads).

    >>> import torch
    >>> from stridewidget._inspect import read_cells
    >>> v = torch.tensor([1 + 2j, 3 - 4j]).conj()
    >>> raw = read_cells(v, [0, 1], as_stored=True)
    >>> reads = tensor_reads(v, ["conj"], [0, 1], raw, [])
    >>> reads["text"], reads["notes"]  # doctest: +NORMALIZE_WHITESPACE
    (['1.-2.j', '3.+4.j'], ['is_conj: storage holds unconjugated values; this view reads them conjugated'])
    """
    lazy = [note for note in ("conj", "neg", "quantized") if note in notes]
    if not lazy:
        return None
    result: dict[str, Any] = {"notes": [READ_NOTES[note] for note in lazy], "text": None}
    if raw is None:
        return result
    if "quantized" in lazy:
        read = _dequantized(obj, cells, raw, slices)
    else:
        read = raw.conj() if "conj" in lazy else raw
        read = -read if "neg" in lazy else read
        read = list(read.tolist())
    known = [i for i, item in enumerate(read) if item is not None]
    texts, values = value_texts([read[i] for i in known], _read_dtype(obj))
    result["text"] = [None] * len(read)
    result["value"] = [None] * len(read)
    for i, text, value in zip(known, texts, values):
        result["text"][i], result["value"][i] = text, value
    finite = [v for v in result["value"] if v is not None]
    result["value_range"] = [min(finite), max(finite)] if finite else None
    return result


def _read_dtype(obj: Any) -> Any:
    """The dtype whose printer formats what ``obj`` reads (dequantized values are float32)."""
    if obj.is_quantized:
        return sys.modules["torch"].float32
    return obj.dtype


def _dequantized(
    obj: Any, cells: Sequence[int], raw: Any, slices: Sequence[dict[str, Any]]
) -> list[float | None]:
    """``(code - zero_point) * scale`` per shown cell, in float32 as torch dequantizes."""
    np = __import__("numpy")
    torch = __import__("torch")
    codes = np.asarray(raw, dtype=np.float32)
    if obj.qscheme() in (torch.per_tensor_affine, torch.per_tensor_symmetric):
        scale, zero = np.float32(obj.q_scale()), np.float32(obj.q_zero_point())
        return [float(v) for v in (codes - zero) * scale]
    # per channel: the channel is the index along the quantization axis of an element reading it
    axis = obj.q_per_channel_axis()
    scales = obj.q_per_channel_scales()
    zeros = obj.q_per_channel_zero_points()
    position = {cell: i for i, cell in enumerate(cells)}
    read: list[float | None] = [None] * len(cells)
    for slice_ in slices:
        if slice_["kind"] != "slice":
            continue
        for r, row in enumerate(slice_["addr"]):
            for c, address in enumerate(row):
                i = position.get(address)
                if i is None:
                    continue
                index = logical_index(slice_, r, c)
                channel = index[axis]
                scale = np.float32(scales[channel].item())
                zero = np.float32(zeros[channel].item())
                read[i] = float((codes[i] - zero) * scale)
    return read
