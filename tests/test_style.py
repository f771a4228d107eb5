"""The one style source: style.json is current, and every text colour it gives is legible."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from matplotlib import colormaps
from matplotlib.colors import to_hex, to_rgb

from stridewidget import style
from stridewidget.style import STYLE, build_style, contrast_ratio, text_pairs

THEMES = sorted(STYLE["themes"])
colour = st.tuples(*[st.integers(0, 255)] * 3).map(lambda c: "#" + bytes(c).hex())


def test_committed_json_is_what_build_style_gives():
    committed = json.loads(style.STYLE_PATH.read_text(encoding="utf-8"))
    assert committed == build_style(), "style.json is stale: run python -m stridewidget.style"
    assert committed == STYLE


def test_both_themes_name_the_same_colours():
    assert THEMES == ["dark", "light"]
    assert STYLE["themes"]["light"].keys() == STYLE["themes"]["dark"].keys()


@pytest.mark.parametrize("theme", THEMES)
def test_every_text_colour_reaches_4_5_to_1_on_its_background(theme):
    pairs = text_pairs(theme)
    assert len(pairs) >= 10
    weak = [
        (fg, bg, round(contrast_ratio(a, b), 2))
        for fg, bg, a, b in pairs
        if contrast_ratio(a, b) < STYLE["contrast_min"]
    ]
    assert weak == []


@pytest.mark.parametrize("theme", THEMES)
def test_highlight_outline_is_neutral_and_stands_out(theme):
    colours = STYLE["themes"][theme]
    red, green, blue = to_rgb(colours["highlight"])
    assert max(red, green, blue) - min(red, green, blue) < 0.02  # grey: no tensor hue
    assert colours["highlight"].upper() not in STYLE["tensor_colours"]
    # a non-text element needs 3:1 (WCAG 1.4.11) against the cells it outlines
    for background in ("cell_bg", "untouched_bg", "background"):
        assert contrast_ratio(colours["highlight"], colours[background]) >= 3


def test_viridis_stops_are_matplotlibs_and_their_text_colour_reads():
    stops = STYLE["viridis"]["stops"]
    n = len(stops)
    assert stops == [to_hex(colormaps["viridis"](k / (n - 1))) for k in range(n)]
    for stop, ink in zip(stops, STYLE["viridis"]["text"]):
        assert contrast_ratio(ink, stop) >= STYLE["contrast_min"], (stop, ink)


def test_each_tensor_gets_its_own_colour_and_pattern():
    colours, patterns = STYLE["tensor_colours"], STYLE["patterns"]
    assert len(set(colours)) == len(colours) == len(set(patterns)) == len(patterns)
    assert STYLE["limits"]["max_tensors"] <= len(colours)
    assert set(STYLE["pattern_paths"]) == set(patterns)


def test_geometry_leaves_room_for_the_text_it_holds():
    g = STYLE["geometry"]
    char = g["char_em"] * g["font_size"]
    assert g["strip_h"] >= g["strip_letter_min_px"]  # letters of up to 6 tensors stay ≥ 10 px
    assert g["cell_h"] - g["strip_h"] >= g["font_size"]  # the value fits under the strip
    assert g["index_h"] >= g["font_size_small"]
    assert g["logical_h"] >= g["font_size"] + g["font_size_small"]  # value over its address
    assert g["cell_w"] >= 6 * char  # "-1.5e3" reads without a colour scale
    limits = STYLE["limits"]
    assert limits["max_wrap"] <= limits["max_strip_cells"]


@given(colour, colour)
def test_contrast_ratio_is_symmetric_and_bounded(first, second):
    ratio = contrast_ratio(first, second)
    assert ratio == pytest.approx(contrast_ratio(second, first))
    assert 1 <= ratio <= 21
    assert contrast_ratio(first, first) == 1
    assert contrast_ratio("#000000", "#ffffff") == pytest.approx(21)


def test_bad_colour_says_what_is_expected():
    with pytest.raises(ValueError, match="#rrggbb"):
        contrast_ratio("red", "#ffffff")
