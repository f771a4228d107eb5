"""The words of a tensor's facts line: its shape, strides, offset, dtype and the layout flags
that matter for its ndim (``contiguous``, ``F-contiguous``, ``channels-last``, ``dense``,
``overlapping``, ``strided``), and the notation that explains ``shape:strides +offset``.

The card (:mod:`.card`) draws this line and the HTML fallback (:mod:`.html`) writes it; over its
weight budget a card also says every cell's storage address in one line (:func:`address_words`).
"""

from __future__ import annotations

import html
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from .bidi import isolated
from .labels import counted, group_digits, storage_words

__all__ = ["address_words", "facts_html", "facts_of", "layout_summary", "notation"]


def layout_summary(layout: Mapping[str, Any]) -> str:
    """One line of facts: ``shape (3, 4) · strides (4, 1) · offset 0 · float32 · contiguous``,
    with only the flags that matter for the tensor's ndim.

    >>> from stridewidget import Layout
    >>> layout_summary(Layout((3, 4), (1, 3)).to_dict())
    'shape (3, 4) · strides (1, 3) · offset 0 · float32 · F-contiguous'
    """
    if layout.get("symbolic"):  # a symbolic layout drawn at an example: its symbols, not ints
        return layout["symbolic"]
    ndim = len(layout["shape"])
    flags = []
    if layout.get("is_contiguous"):
        flags.append("contiguous")
    elif ndim >= 2 and layout.get("is_f_contiguous"):
        flags.append("F-contiguous")
    if ndim in (4, 5) and layout.get("is_channels_last") and not layout.get("is_contiguous"):
        flags.append("channels-last" if ndim == 4 else "channels-last-3d")  # as Layout.flags
    if not flags and layout.get("is_dense"):
        flags.append("dense")
    if layout.get("has_overlap") is None and "has_overlap" in layout:
        flags.append("overlap not decided")  # the display's time budget ran out
    elif layout.get("has_overlap"):
        flags.append("overlapping")
    if not flags:
        flags.append("strided")
    if layout.get("in_bounds") is False:  # reads past its storage: said where it is seen
        span = layout.get("span")
        past = (
            f": reads up to storage[{_grouped(span[1])}] of {_grouped(layout['storage_size'])} cells"
            if span
            else ""
        )
        flags.append(f"OUT OF BOUNDS{past}")
    return " · ".join(
        [
            f"shape {tuple(layout['shape'])}",
            f"strides {tuple(layout['strides'])}",
            f"offset {_grouped(layout['offset'])}",
            layout["dtype"],
            *flags,
        ]
    )


def _grouped(n: Any) -> str:
    """An int with its digits grouped as the hover lines group them; anything else as it is
    (a symbolic size's name)."""
    return group_digits(n) if type(n) is int else str(n)


def notation(ndim: int) -> str:
    """How to read a layout's summary line, for a tensor of ``ndim`` dims.

    >>> notation(2)
    'shape:strides +offset — element [i, j] lives at storage[offset + i·stride0 + j·stride1]'
    >>> notation(0), notation(1)[-27:]
    ('shape:strides +offset — its one element lives at storage[offset]', 'storage[offset + i·stride0]')
    """
    if ndim == 0:
        return "shape:strides +offset — its one element lives at storage[offset]"
    names = [_INDEX_NAMES[d] if d < len(_INDEX_NAMES) else f"i{d}" for d in range(ndim)]
    steps = " + ".join(f"{n}·stride{d}" for d, n in enumerate(names))
    return (
        f"shape:strides +offset — element [{', '.join(names)}] lives at storage[offset + {steps}]"
    )


#: The names of a cell's indices in :func:`address_words` (``o`` left out: it reads as 0).
_INDEX_NAMES = "ijklmnpqrstuvw"


def address_words(layout: Mapping[str, Any], slices: list) -> str | None:
    """Every drawn cell's storage address in one line, ``cell [i, j] is storage[16·i + j]``
    (its offset, then each dim's stride; a dim of stride 0 adds nothing), when each cell of
    ``slices`` (the scene's) is at that address; else None (a view whose addresses count other
    cells than its elements: the cells keep their own).

    >>> from stridewidget import Layout
    >>> slices = [{"lead": [], "rows": [0, 1], "cols": [0, 1, 2], "addr": [[5, 4, 3], [9, 8, 7]]}]
    >>> address_words(Layout((2, 3), (4, -1), 5, storage_size=12).to_dict(), slices)
    'cell [i, j] is storage[5 + 4·i − j]'
    """
    strides, offset = layout["strides"], layout["offset"]
    if not strides or len(strides) > len(_INDEX_NAMES):
        return None
    for slice_ in slices:
        lead = list(slice_["lead"])
        rows = slice_["rows"] if slice_["rows"] is not None else [None]
        cols = slice_["cols"] if slice_["cols"] is not None else [None]
        for r, row in enumerate(rows):
            for c, col in enumerate(cols):
                address = slice_["addr"][r][c]
                if address is None or (row is None and slice_["rows"] is not None):
                    continue
                if col is None and slice_["cols"] is not None:
                    continue
                at = lead + [i for i in (row, col) if i is not None]
                if address != offset + sum(s * i for s, i in zip(strides, at)):
                    return None
    terms = [str(offset)] if offset else []
    for name, stride in zip(_INDEX_NAMES, strides):
        if stride == 0:
            continue
        size = "" if abs(stride) == 1 else f"{abs(stride)}·"
        sign = ("−" if stride < 0 else "+") if terms else ("−" if stride < 0 else "")
        terms.append(f"{sign} {size}{name}" if terms else f"{sign}{size}{name}")
    names = ", ".join(_INDEX_NAMES[: len(strides)])
    return f"cell [{names}] is storage[{' '.join(terms) or '0'}]"


def facts_html(tensor: Mapping[str, Any]) -> str:
    """The HTML fallback's facts of one scene tensor: its summary line in a ``<details>`` whose
    body holds the notation, strides, dtype, storage, touched cells and ``explain()``, escaped
    (the tensors a picture lists in words are counted in one line: :func:`facts_of`).

    >>> import torch
    >>> from stridewidget.scene.build import build_scene
    >>> tensor = build_scene({"x<": torch.zeros(2)})["tensors"][0]
    >>> facts_html(tensor)[:40]
    '<details style="overflow-wrap:anywhere">'
    """
    layout = tensor["layout"]
    summary = f"{tensor['mark']} {tensor['name']}: {layout_summary(layout)}"

    size, nbytes, unit = layout["storage_size"], layout["storage_nbytes"], layout["unit"]
    if unit == layout["itemsize"]:
        cell, storage = "element", f"{counted(size, 'element')} ({group_digits(nbytes)} B)"
    else:  # a byte-misaligned or record-field view: its storage counts smaller cells
        cell = "cell"
        storage = storage_words(size, layout["itemsize"], unit, layout["dtype"], nbytes)
    rows = [
        ("notation", layout["text"]),
        ("strides", f"{tuple(layout['strides'])} elements = {tuple(layout['byte_strides'])} bytes"),
        ("dtype / device", f"{layout['dtype']} / {layout['device']}"),
        ("storage", storage),
        ("touched", f"{group_digits(layout['touched'])} of {counted(size, 'storage ' + cell)}"),
    ]
    table = "".join(
        f'<tr><th style="text-align:left;padding-right:8px">{html.escape(key)}</th>'
        f"<td>{html.escape(isolated(value))}</td></tr>"
        for key, value in rows
    )
    return (
        # a long name or shape breaks anywhere rather than widen the fallback past its column
        f'<details style="overflow-wrap:anywhere"><summary title="{html.escape(notation(len(layout["shape"])))}">'
        f"{html.escape(isolated(summary))}</summary><table>{table}</table>"
        f'<pre style="white-space:pre-wrap;margin:4px 0">{html.escape(layout["explain"])}</pre>'
        "</details>"
    )


def facts_of(tensors: Sequence[Mapping[str, Any]], drawn: Collection[str] | None) -> str:
    """The facts of every scene tensor the picture draws (its id in ``drawn``; None: every one;
    :func:`facts_html`); those it lists in words instead (their layouts are in its words) are
    counted in one line.

    >>> import torch
    >>> from stridewidget.scene.build import build_scene
    >>> scene = build_scene({f"x{i}": torch.zeros(2) for i in range(15)})
    >>> facts = facts_of(scene["tensors"], ["t0"])
    >>> facts.count("<details"), facts[-53:]
    (1, '<div>14 more: their layouts are in the picture.</div>')
    """
    parts = [facts_html(t) for t in tensors if drawn is None or t["id"] in drawn]
    listed = len(tensors) - len(parts)
    if listed:
        parts.append(f"<div>{listed} more: their layouts are in the picture.</div>")
    return "".join(parts)
