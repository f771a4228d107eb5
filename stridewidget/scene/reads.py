"""What a lazily transformed tensor reads from its storage: conj / neg views and quantized tensors.

The storage strip shows what memory holds (:func:`stridewidget.adapters.inspect.read_cells` with
``as_stored=True``); a conj view reads those values conjugated, a neg view negated, a quantized
tensor dequantized.  :func:`tensor_reads` gives, per shown storage cell, what *this* tensor reads
there, so its logical cells (and its hover line) show ``t[idx]`` while the strip shows raw memory.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from ..adapters.numbers import value_texts
from ..adapters.printed import printed_values
from .index import logical_index

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
    stored: Sequence[str] | None = None,
    touch: Sequence[int | None] | None = None,
) -> dict[str, Any] | None:
    """Per shown storage cell, what ``obj`` reads there, in ``obj``'s own print format; ``None``
    where that is what the storage strip already says.

    ``raw`` holds the stored values of ``cells`` (a NumPy array, or ``None`` without values);
    ``slices`` are the tensor's logical slices (a per-channel quantized tensor's reads depend on
    the channel, so only cells read by a shown logical element get one).  ``stored`` are the
    strip's texts of ``cells`` and ``touch`` how often ``obj`` reads each (0: never).  Entries
    are ``None`` where the tensor's read is not known or it reads no such cell.

    The strip's format is decided over the strip's cells (raw memory, shared); the tensor's over
    the values its own ``repr`` prints (:func:`printed_values`), so ``x[1:]`` of
    ``[1e-5, 1., 2.]`` reads ``1.`` and ``2.`` as ``print(x[1:])`` does.

    >>> import torch
    >>> from stridewidget.adapters.inspect import read_cells
    >>> v = torch.tensor([1 + 2j, 3 - 4j]).conj()
    >>> raw = read_cells(v, [0, 1], as_stored=True)
    >>> reads = tensor_reads(v, ["conj"], [0, 1], raw, [])
    >>> reads["text"], reads["notes"]  # doctest: +NORMALIZE_WHITESPACE
    (['1.-2.j', '3.+4.j'], ['is_conj: storage holds unconjugated values; this view reads them conjugated'])
    """
    lazy = [note for note in ("conj", "neg", "quantized") if note in notes]
    result: dict[str, Any] = {"notes": [READ_NOTES[note] for note in lazy], "text": None}
    if raw is None:
        return result if lazy else None
    if "quantized" in lazy:
        read = _dequantized(obj, cells, raw, slices)
    else:
        read = raw.conj() if "conj" in lazy else raw
        read = -read if "neg" in lazy else read
        read = list(read.tolist())
    if touch is not None:  # a cell this tensor never reads gets no text of its format
        read = [None if count == 0 else item for item, count in zip(read, touch)]
    known = [i for i, item in enumerate(read) if item is not None]
    printed = printed_values(obj) or []
    # the printed values choose the format (as repr prints them); texts only of the read ones
    texts, values = value_texts(printed + [read[i] for i in known], _read_dtype(obj), len(printed))
    if not lazy and stored is not None and all(stored[i] == t for i, t in zip(known, texts)):
        return None  # the strip already says it in this tensor's format
    result["text"] = [None] * len(read)
    result["value"] = [None] * len(read)
    for i, text, value in zip(known, texts, values):
        result["text"][i], result["value"][i] = text, value
    finite = [v for v in result["value"] if v is not None]
    result["value_range"] = [min(finite), max(finite)] if finite else None
    return result


def _read_dtype(obj: Any) -> Any:
    """The dtype whose printer formats what ``obj`` reads (dequantized values are float32)."""
    if getattr(obj, "is_quantized", False):
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
