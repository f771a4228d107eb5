"""The one style source: colours, patterns, geometry and limits shared by every renderer.

The static SVG, ``sw.plot``, the text renderer and the widget (``js/``, which imports
``stridewidget/style.json`` through esbuild) all read these values, so the four pictures
cannot drift apart.  ``style.json`` is generated from :func:`build_style` and committed; a test
fails when it is stale.  Regenerate it with ``python -m stridewidget.style``.

Why these values:

* Tensor colours are Okabe-Ito (colour-blind safe); each tensor also gets a fill pattern and a
  letter, so colour is never the only cue.
* Every text colour is chosen for a WCAG contrast of at least 4.5:1 against the background it is
  drawn on, in both themes (:func:`text_pairs` lists the pairs; ``tests/test_style.py`` measures
  them with :func:`contrast_ratio`).
* The highlight is neutral (near-black in light, near-white in dark), never a tensor colour.
* The viridis stops come from matplotlib's own colormap; each stop carries the text colour
  (black or white) that reads best on it.

>>> from stridewidget.style import STYLE, contrast_ratio
>>> STYLE["limits"]["max_strip_cells"], STYLE["tensor_colours"][0]
(32, '#E69F00')
>>> light = STYLE["themes"]["light"]
>>> contrast_ratio(light["text_muted"], light["background"]) >= 4.5
True
"""

from __future__ import annotations

import json
import pathlib
import sys
from typing import Any

__all__ = ["STYLE", "build_style", "contrast_ratio", "relative_luminance", "text_pairs"]

STYLE_PATH = pathlib.Path(__file__).with_name("style.json")

#: WCAG AA for normal text: every text the pictures draw must reach it.
MIN_CONTRAST = 4.5

# Okabe-Ito, in the order tensors get them (input order), and one texture per tensor.
_TENSOR_COLOURS = ["#E69F00", "#56B4E9", "#009E73", "#CC79A7", "#0072B2", "#D55E00", "#F0E442"]
_PATTERNS = ["solid", "diagonal", "dots", "vertical", "cross", "horizontal", "antidiagonal"]
# Pattern tiles are 6×6 px; the path is drawn in `pattern_ink` over the tensor colour.
_PATTERN_PATHS = {
    "solid": None,
    "diagonal": "M0,6 L6,0",
    "dots": None,  # a circle, r = 1.3, at the tile's centre
    "vertical": "M3,0 L3,6",
    "cross": "M0,3 L6,3 M3,0 L3,6",
    "horizontal": "M0,3 L6,3",
    "antidiagonal": "M0,0 L6,6",
}

_THEMES = {
    "light": {
        "background": "#ffffff",
        "text": "#1f1f1f",
        "text_muted": "#555555",  # storage indices, row labels, column offsets, notes
        "cell_bg": "#ffffff",
        "cell_stroke": "#8c8c8c",
        "untouched_bg": "#ebebeb",
        "untouched_stroke": "#8c8c8c",
        "untouched_text": "#4a4a4a",
        "gap_bg": "#f2f2f2",
        "gap_stroke": "#8c8c8c",
        "phantom_bg": "#fff0f0",  # cells past the storage's end (playground escapes)
        "phantom_stroke": "#b00020",
        "phantom_text": "#8a0018",
        "label_bg": "#ffffff",  # behind arrow labels
        "strip_text": "#000000",  # tensor letters on the colour strip, over a halo
        "strip_halo": "#ffffff",
        "pattern_ink": "rgba(0,0,0,0.55)",
        "highlight": "#111111",  # the one linked-cell outline: neutral, thick
        "panel_bg": "#fafafa",
        "panel_stroke": "#c8c8c8",
    },
    "dark": {
        "background": "#1e1e1e",
        "text": "#e8e8e8",
        "text_muted": "#b3b3b3",
        "cell_bg": "#2a2a2a",
        "cell_stroke": "#8c8c8c",
        "untouched_bg": "#363636",
        "untouched_stroke": "#8c8c8c",
        "untouched_text": "#c4c4c4",
        "gap_bg": "#2e2e2e",
        "gap_stroke": "#8c8c8c",
        "phantom_bg": "#3a1c20",
        "phantom_stroke": "#ff6b81",
        "phantom_text": "#ffb3bf",
        "label_bg": "#1e1e1e",
        "strip_text": "#000000",
        "strip_halo": "#ffffff",
        "pattern_ink": "rgba(0,0,0,0.55)",
        "highlight": "#f5f5f5",
        "panel_bg": "#242424",
        "panel_stroke": "#555555",
    },
}

# (text colour key, background key) pairs that the pictures actually draw.
_TEXT_PAIRS = [
    ("text", "background"),
    ("text", "cell_bg"),
    ("text", "label_bg"),
    ("text", "gap_bg"),
    ("text", "panel_bg"),
    ("text_muted", "background"),
    ("text_muted", "cell_bg"),
    ("text_muted", "gap_bg"),
    ("text_muted", "panel_bg"),
    ("untouched_text", "untouched_bg"),
    ("phantom_text", "phantom_bg"),
    ("strip_text", "strip_halo"),
]

# Sizes in px.  The storage cell is a colour strip (readers' letters) over the value; the storage
# index sits under the cell.  `char_em`: advance of one monospace character per px of font size.
_GEOMETRY = {
    "font_family": "ui-monospace, SFMono-Regular, Menlo, Consolas, 'DejaVu Sans Mono', monospace",
    "font_size": 11,
    "font_size_small": 9,  # storage indices only (values and labels: font_size, >= 11 px)
    "font_size_title": 13,
    "char_em": 0.64,  # DejaVu Sans Mono advances 0.6 em; Agg hinting rounds 11 px text up to 7 px
    "line_h": 18,
    "pad": 10,
    "cell_w": 46,
    "cell_h": 34,
    "strip_h": 12,
    "index_h": 12,  # the storage index line under each storage cell
    "header_h": 13,  # the column-offset header (+0 … +n) over a wrapped strip
    "row_gap": 4,
    "gap_h": 24,
    "logical_w": 46,
    "logical_h": 28,  # value over its address (@6)
    "ellipsis_w": 20,
    "ellipsis_h": 16,
    "arrow_lane": 15,  # vertical room per arc lane above the strip
    "loop_w": 22,  # width of a stride-0 loop over its cell
    "outline_w": 3,  # the highlight outline
    "dim_opacity": 0.4,  # unlinked cells while something is highlighted
    "panel_gap": 12,
    "panel_pad": 6,
    "strip_letter_min_px": 11,  # tensor letters never smaller than this (labels: >= 11 px)
}

# Shared with the scene and the playground (one value each, so they cannot drift).
_LIMITS = {
    "max_strip_cells": 32,  # one storage row holds at most this many cells before wrapping
    "max_strip_rows": 6,  # a longer strip keeps its first and last rows, the rest one marker
    "max_wrap": 32,  # a wrapped row is never wider
    "max_slices": 8,  # 2-D slices (panels) per tensor before eliding
    "max_panel_columns": 4,  # panels per row in the panel grid of a 3-D/4-D tensor
    "max_tensors": 6,  # tensors per storage that stay legible
}

#: How many viridis stops to ship (the renderers interpolate linearly between them).
_VIRIDIS_STOPS = 9


def _rgb(colour: str) -> tuple[float, float, float]:
    """``#rrggbb`` → channels in [0, 1]."""
    text = colour.lstrip("#")
    if len(text) != 6:
        raise ValueError(f"colour must be '#rrggbb', got {colour!r}")
    return tuple(int(text[i : i + 2], 16) / 255 for i in (0, 2, 4))  # type: ignore[return-value]


def relative_luminance(colour: str | tuple[float, float, float]) -> float:
    """WCAG 2 relative luminance of ``#rrggbb`` or an (r, g, b) triple in [0, 1].

    >>> relative_luminance("#ffffff"), relative_luminance("#000000")
    (1.0, 0.0)
    """
    channels = _rgb(colour) if isinstance(colour, str) else colour
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast_ratio(
    first: str | tuple[float, float, float], second: str | tuple[float, float, float]
) -> float:
    """WCAG 2 contrast ratio (1 … 21) of two colours (``#rrggbb`` or (r, g, b) in [0, 1]).

    >>> round(contrast_ratio("#000000", "#ffffff"), 1), round(contrast_ratio("#777777", "#ffffff"), 2)
    (21.0, 4.48)
    """
    light, dark = sorted((relative_luminance(first), relative_luminance(second)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def _hex(channels: Any) -> str:
    return "#" + "".join(f"{round(float(c) * 255):02x}" for c in channels[:3])


def _viridis() -> dict[str, list]:
    """Evenly spaced stops of matplotlib's viridis, each with the text colour that reads on it."""
    from matplotlib import colormaps

    cmap = colormaps["viridis"]
    stops = [_hex(cmap(k / (_VIRIDIS_STOPS - 1))) for k in range(_VIRIDIS_STOPS)]
    text = [
        max(("#000000", "#ffffff"), key=lambda ink, stop=stop: contrast_ratio(ink, stop))
        for stop in stops
    ]
    return {"stops": stops, "text": text}


def text_pairs(theme: str) -> list[tuple[str, str, str, str]]:
    """(text key, background key, text colour, background colour) of every text the pictures draw
    on a flat background in ``theme`` (tests check each reaches 4.5:1).

    >>> ("text", "background", "#1f1f1f", "#ffffff") in text_pairs("light")
    True
    """
    colours = STYLE["themes"][theme]
    return [(fg, bg, colours[fg], colours[bg]) for fg, bg in _TEXT_PAIRS]


def build_style() -> dict[str, Any]:
    """The style as plain JSON data (what ``style.json`` holds).

    >>> style = build_style()
    >>> sorted(style)[:4], len(style["viridis"]["stops"])
    (['contrast_min', 'generated_by', 'geometry', 'limits'], 9)
    """
    return {
        "generated_by": "python -m stridewidget.style (do not edit by hand)",
        "contrast_min": MIN_CONTRAST,
        "tensor_colours": list(_TENSOR_COLOURS),
        "patterns": list(_PATTERNS),
        "pattern_paths": dict(_PATTERN_PATHS),
        "themes": {name: dict(colours) for name, colours in _THEMES.items()},
        "geometry": dict(_GEOMETRY),
        "limits": dict(_LIMITS),
        "viridis": _viridis(),
    }


def _dump(style: dict[str, Any]) -> str:
    return json.dumps(style, indent=1, ensure_ascii=False) + "\n"


def _load() -> dict[str, Any]:
    return json.loads(STYLE_PATH.read_text(encoding="utf-8"))


#: The committed style (read from ``style.json``, so importing this never imports matplotlib).
STYLE: dict[str, Any] = _load()


def main() -> int:
    """Write ``style.json`` from :func:`build_style` (run after changing a value here)."""
    STYLE_PATH.write_text(_dump(build_style()), encoding="utf-8")
    print(f"wrote {STYLE_PATH}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
