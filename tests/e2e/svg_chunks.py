"""The texts an SVG in the page draws, each text chunk apart: the saved fallback writes the texts on
one baseline as one ``<text>`` whose later ones are ``<tspan x>`` (each anchored alone), so a
``<text>``'s ``textContent`` runs several drawn texts together."""

from __future__ import annotations

import html
import re

_TEXT = re.compile(r"<text\b[^>]*>(.*?)</text>", re.S)


def text_chunks(svg_locator) -> list[str]:
    """Every text ``svg_locator``'s SVG draws, a ``<tspan>`` apart from its ``<text>``'s own."""
    markup = svg_locator.inner_html()  # no page script needed (a page without JavaScript too)
    chunks: list[str] = []
    for body in _TEXT.findall(markup):
        chunks += [html.unescape(part) for part in re.split(r"<[^>]+>", body) if part]
    return chunks
