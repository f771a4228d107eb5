"""The logical grid of one 2-D slice of a tensor: its row and column indices, and a cell per
shown element with its value (or a viridis colour when values are too wide) and its storage
address ``@n``; the ``⋯`` / ``⋮`` of elided rows and columns.  3-D and more: each slice is a
panel, titled with its index (``x[0, :, :]``); :mod:`.card` lays the panels out.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..scene.index import logical_index
from .canvas import Canvas
from .labels import group_digits, special_text, viridis
from .primitives import PAD, G, Group, Rect, text_width, wrapped

__all__ = ["draw_slice", "encodings", "logical_cell_width"]


def logical_cell_width(
    canvas: Canvas, tensor: Mapping[str, Any], storage: Mapping[str, Any] | None, slices: list
) -> tuple[float, bool]:
    """The width of the tensor's logical cells (wide enough for every address and value), and
    whether values are shown as text (else as colour: a value wider than two cells, or a picture
    too tall for its height budget even with one digit, ``canvas.colour_values``)."""
    addresses = [a for s in slices for row in s["addr"] for a in row if a is not None]
    has_values = storage is not None and storage["cells"]["text"] is not None
    # a width grows with a text's length alone: the widest address is the largest (no sign),
    # the widest value the longest
    widest = [max(addresses)] if addresses and min(addresses) >= 0 else addresses
    addr_w = 0.0
    if canvas.cell_addresses or not has_values:  # else said once, on the card
        addr_w = max(
            (text_width(f"@{group_digits(a)}", G["font_size_small"]) for a in widest), default=0
        )
    if not has_values:
        addr_w = max((text_width(f"@{group_digits(a)}", G["font_size"]) for a in widest), default=0)
        return max(G["logical_w"] - 10, addr_w + 8), False
    texts = [t or "?" for t in canvas.lookup.shown_texts(tensor, addresses)]
    value_w = text_width(max(texts, key=len), G["font_size"]) if texts else 0
    show_values = value_w + 8 <= 2 * G["logical_w"] and not canvas.colour_values
    # on a colour scale nan and ±inf keep their text: room for its shortest form (inside the
    # cell's 3 px margin and 8 px padding)
    special_w = max(
        (text_width(special_text(t, 0), G["font_size"]) for t in texts if _special(t)), default=0
    )
    return max(
        G["logical_w"] - 10,
        addr_w + 8,
        value_w + 8 if show_values else special_w + 11,
    ), show_values


def encodings(canvas: Canvas, tensor: Mapping[str, Any], slices: list, cell_w: float) -> set:
    """How the grid's cells show their values when the grid is drawn as colour: ``colour`` for a
    value whose text is too wide for its cell, ``text`` for one whose text fits (printed all the
    same); nan/±inf keep theirs on a marked fill: neither (see :func:`_logical_cell`)."""
    room, found = cell_w - 3 - 8, set()
    for s in slices:
        for row in s["addr"]:
            for a in row:
                text = None if a is None else canvas.lookup.read(tensor, a, "text")
                if text is not None and not _special(text):
                    found.add("colour" if text_width(text, G["font_size"]) > room else "text")
    return found


def _special(text: str) -> bool:
    return "nan" in text or "inf" in text


def draw_slice(
    canvas: Canvas,
    tensor: Mapping[str, Any],
    slice_: Mapping[str, Any],
    s: int,
    cell_w: float,
    show_values: bool,
    panel: bool,
    room: float | None = None,
) -> tuple[list, float, float]:
    """One 2-D slice (the ``s``-th of the tensor's slices) at (0, 0), framed as a panel when
    ``panel``; its items, height and width.  A slice wider than ``room`` px continues below in
    blocks of columns (as torch prints a wide matrix), never past the picture's width."""
    c = canvas.colours
    if room is None:
        room = canvas.card_width - 3 * PAD
    items: list = []
    saved, canvas.items = canvas.items, items
    saved_width, canvas.width = canvas.width, 0.0
    pad = G["panel_pad"] if panel else 0
    y, x = float(pad), 0.0
    blocks = _column_blocks(slice_, cell_w, room - 2 * pad)
    canvas.split_grids += len(blocks) > 1
    for b, block in enumerate(blocks):
        if b:
            y += 8  # between two blocks of one wide slice
        y, left, xs, right = _slice_head(
            canvas, tensor, slice_, cell_w, pad, panel and not b, y, block, room - 2 * pad
        )
        y = _slice_rows(canvas, tensor, slice_, s, left, xs, y, cell_w, show_values, block)
        x = max(x, right)
    width = max(x, canvas.width) + pad
    height = y + pad
    if panel:
        items.insert(0, Rect(0, 0, width, height, c["panel_bg"], c["panel_stroke"], rx=4))
    canvas.items, canvas.width = saved, saved_width
    return items, height, width


def _column_blocks(slice_: Mapping[str, Any], cell_w: float, room: float) -> list[list[int]]:
    """The slice's column positions in blocks that each fit ``room`` px beside the row indices."""
    if slice_["cols"] is None:
        return [[0]]
    left = _row_label_w(slice_)
    blocks: list[list[int]] = [[]]
    x = left
    for k, col in enumerate(slice_["cols"]):
        w = G["ellipsis_w"] if col is None else cell_w
        if blocks[-1] and x + w > room:
            blocks.append([])
            x = left
        blocks[-1].append(k)
        x += w
    return blocks


def _row_label_w(slice_: Mapping[str, Any]) -> float:
    if slice_["rows"] is None:
        return 0.0
    widths = [text_width(str(r), G["font_size"]) for r in slice_["rows"] if r is not None]
    return max([*widths, 0]) + 8


def _slice_head(
    canvas: Canvas,
    tensor: Mapping[str, Any],
    slice_: Mapping[str, Any],
    cell_w: float,
    pad: float,
    panel: bool,
    y: float,
    block: list[int],
    room: float,
) -> tuple[float, float, dict[int, float], float]:
    """The panel's title (``panel``, in lines of ``room`` px) and the column indices of ``block``
    from ``y`` down; the y below them, the left edge of the cells, each column's x and the right
    edge."""
    items = canvas.items
    if panel:
        name = tensor["name"] if len(tensor["name"]) <= 12 else ""
        for line in wrapped(f"{name}{slice_['label']}", room, G["font_size"]):
            y += G["font_size"] + 2
            items.append(canvas.text(pad, y, line, muted=True))
        y += 4
    cols = slice_["cols"] if slice_["cols"] is not None else [None]
    left = pad + _row_label_w(slice_)
    xs: dict[int, float] = {}
    x = left
    for k in block:
        xs[k] = x
        x += G["ellipsis_w"] if (cols[k] is None and slice_["cols"] is not None) else cell_w
    if slice_["cols"] is not None:
        y += G["font_size"] + 2
        for k in block:
            col = cols[k]
            w = cell_w if col is not None else G["ellipsis_w"]
            items.append(
                canvas.text(
                    xs[k] + w / 2,
                    y,
                    "⋯" if col is None else str(col),
                    size=G["font_size"],
                    muted=True,
                    anchor="middle",
                )
            )
        y += 4
    return y, left, xs, x


def _slice_rows(
    canvas: Canvas,
    tensor: Mapping[str, Any],
    slice_: Mapping[str, Any],
    s: int,
    left: float,
    xs: dict[int, float],
    y: float,
    cell_w: float,
    show_values: bool,
    block: list[int],
) -> float:
    """Each row's index and the cells of the columns in ``block`` (``⋮`` for elided rows, ``⋯``
    for elided columns) from ``y`` down; the y below."""
    items = canvas.items
    rows = slice_["rows"] if slice_["rows"] is not None else [None]
    cols = slice_["cols"] if slice_["cols"] is not None else [None]
    basis = _cell_basis(canvas, tensor, slice_, cell_w)
    for r, row in enumerate(rows):
        if slice_["rows"] is not None and row is None:
            items.append(
                canvas.text(left - 6, y + G["ellipsis_h"] - 4, "⋮", muted=True, anchor="end")
            )
            y += G["ellipsis_h"]
            continue
        if slice_["rows"] is not None:
            items.append(
                canvas.text(
                    left - 6,
                    y + G["logical_h"] / 2 + 3,
                    str(row),
                    size=G["font_size"],
                    muted=True,
                    anchor="end",
                )
            )
        for k in block:
            col = cols[k]
            if slice_["cols"] is not None and col is None:
                items.append(
                    canvas.text(
                        xs[k] + G["ellipsis_w"] / 2,
                        y + G["logical_h"] / 2 + 4,
                        "⋯",
                        muted=True,
                        anchor="middle",
                    )
                )
                continue
            if canvas.measure:  # a trial's height: no cell (it lies inside its column)
                continue
            items.append(
                _logical_cell(canvas, tensor, basis, slice_, s, r, k, xs[k], y, show_values)
            )
        y += G["logical_h"]
    return y


def _cell_basis(
    canvas: Canvas, tensor: Mapping[str, Any], slice_: Mapping[str, Any], cell_w: float
) -> tuple:
    """What every cell of one slice's rows shares (looked up once, not per cell): its storage,
    whether it has values, the cell's width and height, the monospace advance (em), the pattern
    stripe's fill, the slice's leading indices as text, and what its hover calls the storage
    (``storage s1`` where two strips are one memory seen as two dtypes)."""
    storage = canvas.lookup.storages.get(tensor["storage"])
    where = f"storage {tensor['storage']}" if storage and storage.get("same_memory") else "storage"
    has_values = storage is not None and storage["cells"]["text"] is not None
    w, h = cell_w - 3, G["logical_h"] - 3
    return (
        storage,
        has_values,
        w,
        h,
        G["char_em"],
        ("pattern", tensor["order"]),
        [str(i) for i in slice_["lead"]],
        where,
    )


def _logical_cell(canvas: Canvas, tensor, basis, slice_, s, r, k, x, y, show_values) -> Group:
    c = canvas.colours
    address = slice_["addr"][r][k]
    storage_id = tensor["storage"]
    text, full = canvas.lookup.shown_and_full(tensor, address)  # as shown; every digit
    storage, has_values, w, h, em, pattern, at, where = basis
    size = G["font_size"]
    # on a colour scale, a value whose own text fits its cell is printed all the same
    show_values = show_values or (
        text is not None
        and (len(text) * em * size if text.isascii() else text_width(text, size)) <= w - 8
    )
    scale = (
        None
        if show_values or not has_values
        else viridis(
            canvas.lookup.read(tensor, address, "value"),
            (tensor.get("reads") or {}).get("value_range") or storage.get("value_range"),
        )
    )
    fill, ink, muted_ink = c["cell_bg"], c["text"], c["text_muted"]
    if scale:
        fill, ink = scale
        muted_ink = ink
    # on a colour scale, a value with no place on it (nan, ±inf) keeps its text on a marked fill
    special = has_values and not show_values and scale is None and text is not None
    stroke = c["cell_stroke"]
    if special:
        fill, ink, stroke = c["phantom_bg"], c["phantom_text"], c["phantom_stroke"]
    body: list = [Rect(x, y, w, h, fill, stroke), Rect(x, y, 4, h, pattern)]
    addr = f"@{address:,}" if address is not None else "@?"  # group_digits
    mid = x + w / 2 + 2
    if not has_values:
        body.append(canvas.middle(mid, y + h / 2 + 4, addr, size, ink, None))
    else:
        if show_values or special:
            shown = special_text(text, w - 8) if special else text
            at_y = y + 12 if canvas.cell_addresses else y + h / 2 + 4
            shown = "?" if shown is None else shown
            body.append(canvas.middle(mid, at_y, shown, size, ink, "v"))
        if canvas.cell_addresses:  # else said once, on the card (a picture over its weight)
            small = G["font_size_small"]
            body.append(canvas.middle(mid, y + h - 4, addr, small, muted_ink, "i"))
    at = [*at, *_row_col(slice_, r, k)]
    index, written = ",".join(at), ", ".join(at)
    cell = f"{address:,}" if address is not None else "?"  # grouped as the @ under the cell
    tip = f"{tensor['name']}[{written}] → {where}[{cell}]"
    reads = tensor.get("reads")
    stored = canvas.lookup.cell(storage_id, address, "full") if reads else None
    if full is not None and reads and stored != full:  # the hover line: every digit
        # a conj/neg view or a quantized tensor reads another value than memory holds: the hover
        # line names storage only with what storage holds
        tip = f"{tensor['name']}[{written}] = {full} · {where}[{cell}] holds {stored}"
    elif full is not None:
        tip += f" = {full}"
    return Group(
        "sws-lcell",
        body,
        {"tensor": tensor["id"], "slice": s, "r": r, "c": k, "addr": address, "index": index},
        tip,
    )


def _row_col(slice_: Mapping[str, Any], r: int, k: int) -> list[str]:
    """The row's and the column's index of cell (``r``, ``k``) as text (those the slice has)."""
    rows, cols = slice_["rows"], slice_["cols"]
    if rows is not None and cols is not None:
        return [str(rows[r]), str(cols[k])]
    return [str(i) for i in logical_index({"lead": (), "rows": rows, "cols": cols}, r, k)]
