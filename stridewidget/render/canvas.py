"""What the parts of one picture draw onto: the theme's colours, the items drawn so far and the
width they take, and the scene's shown storage cells looked up by storage index.

The strip (:mod:`.strip`), the arrows (:mod:`.arrows`) and the cards (:mod:`.card`, :mod:`.grid`)
each append their primitives to one :class:`Canvas`; :func:`.picture.draw` assembles them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import safe_repr
from ..style import STYLE
from .digits import fewer_digits
from .primitives import MAX_WIDTH, G, Text, text_width

__all__ = ["Canvas", "Lookup"]


def _fits(text: str) -> bool:
    """Whether a value's text fits the widest cell a value may have (two default cells)."""
    return text_width(text, G["font_size"]) + 8 <= 2 * G["cell_w"]


def _shown(
    texts: list[str] | None, at_most: int | None = None
) -> tuple[list[str] | None, int | None]:
    return (None, None) if texts is None else fewer_digits(texts, _fits, at_most)


class Lookup:
    """Storage by id, and each shown storage cell's position among the shown cells.

    ``storages`` hold the texts the picture shows: a storage whose values do not fit two cells'
    width is shown with fewer digits (:func:`.digits.fewer_digits`; ``digits`` says how many,
    per storage), ``"full"`` reads the texts as the scene has them (for hover lines).
    ``at_most`` caps the digits after the point of every value shown (a picture taller than its
    height budget is drawn again with fewer: :func:`.picture.draw`).
    """

    def __init__(self, scene: Mapping[str, Any], at_most: int | None = None) -> None:
        self.at_most = at_most
        self.full = {s["id"]: s for s in scene.get("storages", [])}
        self.storages: dict[str, Mapping[str, Any]] = {}
        self.digits: dict[str, int | None] = {}
        for sid, storage in self.full.items():
            shown, self.digits[sid] = _shown(storage["cells"]["text"], at_most)
            cells = {**storage["cells"], "text": shown}
            self.storages[sid] = {**storage, "cells": cells} if self.digits[sid] else storage
        self.position = {
            s["id"]: {cell: i for i, cell in enumerate(s["cells"]["index"])}
            for s in scene.get("storages", [])
        }
        self._reads: dict[str, list[str] | None] = {}
        #: what a part computed from these cells, kept for the next layout of the same picture
        #: (a storage strip's plan: :func:`.strip.draw_strip`); each entry holds what its key
        #: names by id
        self.kept: dict[tuple, tuple] = {}

    def cell(self, storage_id: str, cell: int | None, what: str) -> Any:
        source = self.full if what == "full" else self.storages
        what = "text" if what == "full" else what
        storage = source.get(storage_id)
        if storage is None or cell is None or storage["cells"][what] is None:
            return None
        i = self.position[storage_id].get(cell)
        return None if i is None else storage["cells"][what][i]

    def shown_and_full(self, tensor: Mapping[str, Any], cell: int | None) -> tuple[Any, Any]:
        """``read(tensor, cell, "text")`` and ``read(tensor, cell, "full")`` together: for a
        tensor that reads what its storage holds, one lookup of the cell (a storage's shown
        texts exist exactly where its full ones do)."""
        reads = tensor.get("reads")
        if reads is not None and reads.get("text") is not None:
            return self.read(tensor, cell, "text"), self.read(tensor, cell, "full")
        storage_id = tensor["storage"]
        storage = self.full.get(storage_id)
        if storage is None or cell is None or storage["cells"]["text"] is None:
            return None, None
        i = self.position[storage_id].get(cell)
        if i is None:
            return None, None
        return self.storages[storage_id]["cells"]["text"][i], storage["cells"]["text"][i]

    def shown_texts(self, tensor: Mapping[str, Any], cells: list[int | None]) -> list[Any]:
        """``read(tensor, cell, "text")`` of each of ``cells`` (a grid's every cell, measured)."""
        reads = tensor.get("reads")
        if reads is not None and reads.get("text") is not None:
            return [self.read(tensor, cell, "text") for cell in cells]
        storage_id = tensor["storage"]
        storage = self.storages.get(storage_id)
        if storage is None or storage["cells"]["text"] is None:
            return [None] * len(cells)
        texts, at = storage["cells"]["text"], self.position[storage_id]
        return [None if cell is None or (i := at.get(cell)) is None else texts[i] for cell in cells]

    def read(self, tensor: Mapping[str, Any], cell: int | None, what: str) -> Any:
        """What ``tensor`` reads at storage ``cell`` (a conj/neg view or a quantized tensor reads
        other values than memory holds: its ``reads``); else the stored value.  ``"text"`` as
        shown (fewer digits where they do not fit), ``"full"`` as the scene has it."""
        reads = tensor.get("reads")
        key = "text" if what == "full" else what
        if reads is None or reads.get(key) is None:
            return self.cell(tensor["storage"], cell, what)
        i = self.position[tensor["storage"]].get(cell) if cell is not None else None
        if i is None:
            return None
        if what == "text":
            if tensor["id"] not in self._reads:
                self._reads[tensor["id"]] = _shown(reads["text"], self.at_most)[0]
            return self._reads[tensor["id"]][i]
        return reads[key][i]


class Canvas:
    """The primitives of one picture so far (``items``), how wide they reach (``width``), the
    px they may take (``max_width``), the theme's colours and the scene's cells (``lookup``).

    With ``roles`` the colours are the theme's role names as tokens (``"@text"``, ``"@cell_bg"``)
    instead of their values: the picture is then laid out once for every theme, and whoever paints
    it (:mod:`.svg`, the widget's painter) resolves each token in the theme it shows.
    """

    def __init__(
        self,
        scene: Mapping[str, Any],
        theme: str,
        max_width: float = MAX_WIDTH,
        roles: bool = False,
        at_most: int | None = None,
        colour_values: bool = False,
        max_panels: int | None = None,
        card_width: float | None = None,
        inline_gaps: bool = False,
        address_line: bool = False,
        max_strip_rows: int | None = None,
        lookup: Lookup | None = None,
        max_arrows: int | None = None,
    ) -> None:
        if theme not in STYLE["themes"]:
            raise ValueError(
                f"theme must be one of {sorted(STYLE['themes'])}, got {safe_repr(theme)}"
            )
        self.scene = scene
        self.theme = theme
        self.max_width = float(max_width)
        theme_colours = STYLE["themes"][theme]
        self.colours = {k: "@" + k for k in theme_colours} if roles else theme_colours
        #: ``lookup``: one made for this scene and ``at_most`` already (one layout of several)
        self.lookup = lookup if lookup is not None else Lookup(scene, at_most)
        #: the logical grids show values as colour (their cells narrow to the addresses' width)
        self.colour_values = colour_values
        #: the panels a card draws at most (a picture too tall for its budget): see card._thinned
        self.max_panels = max_panels
        #: the px a card's words and panels wrap at (less than ``max_width``: cards side by side)
        self.card_width = min(card_width or self.max_width, self.max_width)
        #: a strip's gap markers beside its cells, not on rows of their own (strip_rows)
        self.inline_gaps = inline_gaps
        #: each card says every cell's storage address in one line instead of in each cell (a
        #: picture over its weight budget; a card that cannot say them keeps each cell's ``@n``)
        self.address_line = address_line
        #: the card being drawn writes each logical cell's address ``@n`` (set per card)
        self.cell_addresses = True
        #: the rows a storage strip draws at most (None: ``LIMITS["max_strip_rows"]``; fewer for
        #: a picture over its weight budget)
        self.max_strip_rows = max_strip_rows
        #: the stride arrows a strip draws at most per tensor (None: every one; fewer for a
        #: picture over its height budget: see arrows.fewest_arrows)
        self.max_arrows = max_arrows
        #: ids of tensors a strip marks that the picture lists in words (no pattern of theirs is
        #: defined: their plain colour instead)
        self.unpatterned: set[str] = set()
        #: grid slices drawn in more than one block of columns (too wide for their card)
        self.split_grids = 0
        #: a trial layout whose height alone is read (:func:`.picture.draw`'s ladder): the
        #: logical grids' cells are not drawn (each lies inside its row and column: the height
        #: and width are the same)
        self.measure = False
        self.items: list = []
        self.width = 0.0

    def text(self, x: float, y: float, text: str, *, size: float | None = None, muted: bool = False,
             fill: str | None = None, anchor: str = "start", bold: bool = False,
             halo: str | None = None, role: str | None = None) -> Text:  # fmt: skip
        """A text in the theme's ink (``muted``: the secondary ink); the canvas grows to hold it.
        ``anchor``, ``bold``, ``halo``, ``role``: the :class:`~.primitives.Text`'s."""
        size = size or G["font_size"]
        colour = fill or (self.colours["text_muted"] if muted else self.colours["text"])
        item = Text(x, y, text, size, colour, anchor, bold, halo, role)
        width = (  # text_width, inline for ASCII (a call per text)
            len(text) * G["char_em"] * size if text.isascii() else text_width(text, size)
        )
        left = x - (width if anchor == "end" else 0)
        if anchor == "middle":
            left = x - width / 2
        if left + width > self.width:
            self.width = left + width
        return item

    def middle(self, x: float, y: float, text: str, size: float, fill: str | None,
               role: str | None) -> Text:  # fmt: skip
        """``text(x, y, text, size=size, fill=fill, anchor="middle", role=role)`` without its
        keyword handling (each storage and grid cell writes one or two): the same
        :class:`~.primitives.Text`, the canvas grown alike."""
        item = Text(x, y, text, size, fill or self.colours["text"], "middle", False, None, role)
        width = (  # text_width, inline for ASCII (a call per text)
            len(text) * G["char_em"] * size if text.isascii() else text_width(text, size)
        )
        left = x - width / 2
        if left + width > self.width:
            self.width = left + width
        return item
