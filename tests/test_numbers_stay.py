"""Numbers stay numbers (issue 35 §4): a value too wide for its cell is printed with fewer digits,
as its library prints it at a lower precision, before any colour scale.

Oracles: the library's own printer at that precision (``torch.set_printoptions(precision=p)`` /
the tensor's values formatted by ``torch``), and the raw memory: each shortened storage text is
the stored value to ``p`` digits after the point; the hover line keeps every digit.
"""

from __future__ import annotations

import re

import pytest
import torch
from e2e.test_one_picture import SCENES
from oracle_cells import parse_number

import stridewidget as sw
from stridewidget.notebook.picture import picture_of
from stridewidget.render.svg import svg_of_scene
from stridewidget.scene.build import build_scene

CELL = 46  # the style's default cell width (style.json geometry.cell_w)


def _texts_and_titles(scene):
    out = []

    def walk(items):
        for item in items:
            if item[0] == "g":
                if item[1].split()[0] == "sws-scell":
                    texts = [c[3] for c in item[4] if c[0] == "t" and c[9] == "v"]
                    out.append((item[2]["cell"], texts, item[3]))
                walk(item[4])

    walk(picture_of(scene, 900, None)["items"])
    return out


@pytest.mark.parametrize("name", sorted(SCENES))
def test_no_value_is_a_colour_where_a_shorter_form_fits_two_cells(name):
    svg = svg_of_scene(SCENES[name], width=876)
    assert "too wide for their cells" not in svg


def test_complex_values_get_fewer_digits_the_hover_line_keeps_them_all():
    z = torch.tensor([[1 + 2j, 3 - 1j, 5 + 2.5j], [-1j, 2.25 + 0j, 7 - 7j]])
    scene = build_scene({"z": z})
    full = scene["storages"][0]["cells"]["text"]
    assert max(map(len, full)) > 12  # torch prints 5.0000+2.5000j: too wide for two cells
    svg = sw.render_svg(scene)
    digits = int(re.search(r"values to (\d) digits? after the point", svg).group(1))
    torch.set_printoptions(precision=digits)  # torch's own printer, with fewer digits
    try:
        printed = repr(z.flatten())
    finally:
        torch.set_printoptions(profile="default")
    for cell, texts, title in _texts_and_titles(scene):
        (text,) = texts
        assert text.replace(" ", "") in printed.replace(" ", ""), (text, printed)
        assert (
            abs(complex(parse_number(text)) - complex(z.flatten()[cell])) <= 0.51 * 10**-digits * 2
        )
        assert title.split("= ")[1].split(" ")[0] == full[cell]  # every digit on hover


def test_nan_and_inf_keep_their_text_on_a_marked_fill_where_values_are_colours():
    """Complex values over a wide range do not fit even with one digit: a colour scale.  A value
    with no place on it (nan, inf) is drawn as its word on the marked fill, never as a plain
    cell that reads like an unread one; the others take scale colours."""
    from stridewidget.style import STYLE

    z = torch.tensor(
        [1 + 3j, -2 + 1e-12j, 1e10 - 4j, complex(float("nan"), 1), complex(0, float("inf")), 0]
    )
    svg = sw.render_svg(z=z)
    assert "too wide for their cells" in svg  # the colour scale is on
    marked = STYLE["themes"]["light"]["phantom_bg"]
    cells = re.findall(r'<g class="sws-scell"[^>]*data-cell="(\d+)"[^>]*>(.*?)</g>', svg)
    special = {int(c) for c, body in cells if f'fill="{marked}"' in body}
    truth = {
        k
        for k, v in enumerate(z.tolist())
        if not (abs(v.real) < float("inf") and abs(v.imag) < float("inf") and v == v)
    }
    assert special == truth == {3, 4}
    for cell, body in cells:
        words = re.findall(r">([^<]*)</text>", body)
        if int(cell) in truth:
            assert any(w in ("nan", "inf", "-inf") or "nan" in w or "inf" in w for w in words), body


def _parts(shown: str) -> tuple[str, str]:
    """The real and imaginary parts a shown complex text states ("…" where it states none)."""
    shown = shown.replace("∞", "inf")
    if not shown.endswith("j"):
        return shown.rstrip("+…") or "…", "…"
    match = re.match(r"^(.*?)([+-][^+-]*)j$", shown)
    return match.group(1) or "…", match.group(2).lstrip("+")


def _same(stated: str, true: float) -> bool:
    if stated == "…":
        return True
    value = float(stated)
    return (
        (value != value and true != true) or value == true or abs(value - true) <= 1e-3 * abs(true)
    )


def test_a_complex_value_with_an_infinite_part_never_reads_as_a_real_one():
    inf = float("inf")
    values = [complex(1, -inf), complex(0, inf), complex(1e30, 1), complex(inf, 5), complex(2, 3)]
    z = torch.tensor(values)
    for cell, texts, _title in _texts_and_titles(build_scene({"z": z})):
        if not texts:
            continue  # a colour-scale cell without text: its hover line says the value
        true = values[cell]
        real, imag = _parts(texts[0])
        assert _same(real, true.real) and _same(imag, true.imag), (texts[0], true)
        # and the special part is said, not hidden
        if true.imag in (inf, -inf):
            assert "inf" in imag, (texts[0], true)


@pytest.mark.parametrize(
    "values",
    [[[-5, 3], [7, 2**62]], [[2**63 - 1, 0], [12, -3]]],
    ids=["int64-one-huge", "int64-max"],
)
def test_on_a_colour_scale_a_value_that_fits_its_cell_is_still_printed(values):
    """One huge value puts the storage on a colour scale; the others fit and stay numbers
    (oracle: the values' own str, which is how torch prints an int64)."""
    t = torch.tensor(values)
    scene = build_scene({"t": t})
    assert "too wide for their cells" in sw.render_svg(scene)
    flat = t.flatten().tolist()
    for cell, texts, _title in _texts_and_titles(scene):
        fits = len(str(flat[cell])) <= 5
        assert (texts == [str(flat[cell])]) if fits else texts == [], (cell, texts)
