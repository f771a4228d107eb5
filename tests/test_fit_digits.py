"""Issue 36 (Fit): a picture taller than its height budget is drawn again with fewer digits after
the point (one), then with its logical grids as colour — at the widths a notebook gives
(a 900 px column: 876 px for the widget, 900 px for the saved fallback) and at 1,280 px.

Oracles: torch's own values (each shown number is the tensor's value rounded to the digits the
picture says it shows), and the heights the budgets name (``limits.py``).  Before this change the
randn attention heads were 2,111 px tall at 876 px and ``randn(10, 10, 10)`` 1,969 px.
"""

from __future__ import annotations

import re

import pytest
import torch

from stridewidget.limits import PICTURE_CONTROLS_HEIGHT, PICTURE_HEIGHT_2D, PICTURE_HEIGHT_ND
from stridewidget.render.picture import draw, height_budget, scene_of
from stridewidget.render.primitives import Group, Text

WIDTHS = [876, 900, 1256]


def _heads():
    return {"h": torch.randn(2, 5, 32).view(2, 5, 4, 8).transpose(1, 2)}


CASES = {
    "randn attention heads": _heads,
    "randn 10x10x10": lambda: {"x": torch.randn(10, 10, 10)},
    "randn channels-last": lambda: {"x": torch.randn(1, 3, 8, 8).to(memory_format=torch.channels_last)},
    "randn 3x40": lambda: {"x": torch.randn(3, 40)},
}  # fmt: skip


def _texts(items, cls=None, inside=None):
    for item in items:
        if isinstance(item, Group):
            mine = cls is not None and item.cls.split()[0] in cls.split("|")
            yield from _texts(item.children, cls, item if mine else inside)
        elif isinstance(item, Text) and (cls is None or inside is not None):
            yield item, inside


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_picture_fits_its_height_budget(name, width):
    torch.manual_seed(0)
    scene = scene_of(**CASES[name]())
    picture = draw(scene, width=width)
    assert picture.height <= height_budget(scene, width), (name, width, picture.height)
    assert picture.width <= width + 10


def test_the_budget_is_the_issues_less_the_widgets_controls():
    """At 1,280 px the controls take one row (a 2-D picture), or two with the slice picker (3
    dims or more); in a 900 px column the status line goes below the buttons."""
    from stridewidget.render.picture import controls_height

    two_d = scene_of(torch.zeros(3, 4), torch.zeros(4, 3))
    many = scene_of(torch.zeros(3, 4), torch.zeros(4, 3), torch.zeros(2, 2))
    assert height_budget(two_d, 1256) == PICTURE_HEIGHT_2D - PICTURE_CONTROLS_HEIGHT
    assert height_budget(many, 1256) == PICTURE_HEIGHT_ND - PICTURE_CONTROLS_HEIGHT
    three_d = scene_of(torch.zeros(2, 3, 4))
    for width in (876, 1256):
        assert height_budget(two_d, width) == PICTURE_HEIGHT_2D - controls_height(width, None)
        assert height_budget(three_d, width) == PICTURE_HEIGHT_ND - controls_height(width, "x")
    assert controls_height(876, None) > controls_height(1256, None)
    assert controls_height(1256, "x") > controls_height(1256, None)


_NUMBER = re.compile(r"^-?\d+\.(\d+)(e[-+]\d+)?$")


@pytest.mark.parametrize("width", [876, 1256])
@pytest.mark.parametrize("name", ["randn attention heads", "randn 10x10x10"])
def test_every_shown_value_is_torchs_value_to_the_digits_the_picture_names(name, width):
    """Each value text of a logical or storage cell is the element's value (torch's, read through
    the cell's storage index) rounded to the digits the strip's legend names."""
    torch.manual_seed(0)
    tensors = CASES[name]()
    (t,) = tensors.values()
    flat = t.untyped_storage()
    base = torch.empty(0, dtype=t.dtype).set_(flat)  # the storage as a 1-D tensor: the oracle
    picture = draw(scene_of(**tensors), width=width)
    words = " ".join(item.text for item, _ in _texts(picture.items))
    said = re.search(r"values to (\d) digits? after the point", words)
    checked = 0
    for item, cell in _texts(picture.items, "sws-lcell|sws-scell"):
        match = _NUMBER.match(item.text)
        if match is None or not cell.data:
            continue
        digits = len(match.group(1))
        if said:
            assert digits == int(said.group(1)), item.text
        true = float(base[int(cell.data.get("addr", cell.data.get("cell")))])
        if match.group(2):  # scientific: the mantissa's last digit is the unit
            exponent = int(match.group(2)[1:])
            unit = 10.0 ** (exponent - digits)
        else:
            unit = 10.0**-digits
        assert abs(float(item.text) - true) <= unit / 2 + 1e-12, (item.text, true)
        checked += 1
    assert checked >= 20


def test_colour_is_the_last_step_and_is_said():
    """randn(10, 10, 10) in a 876 px column: one digit is not enough, so its panels show values
    as colour (with each cell's storage index), and the picture stays within its budget."""
    torch.manual_seed(0)
    scene = scene_of(x=torch.randn(10, 10, 10))
    wide = draw(scene, width=1256)
    narrow = draw(scene, width=876)
    values_in = [i.text for i, _ in _texts(narrow.items, "sws-lcell") if _NUMBER.match(i.text)]
    values_wide = [i.text for i, _ in _texts(wide.items, "sws-lcell") if _NUMBER.match(i.text)]
    assert values_wide and not values_in
    assert narrow.height <= height_budget(scene, 876)


def test_the_colour_key_names_the_scales_ends_as_torch_holds_them():
    """The grid in colour says so on a line with the scale's two ends: each end is a value the
    tensor holds (torch's, to 4 significant digits), and every cell's value lies between them."""
    torch.manual_seed(0)
    x = torch.randn(10, 10, 10)
    picture = draw(scene_of(x=x), width=876)
    texts = [item.text for item, _ in _texts(picture.items)]
    k = texts.index("colour = value, on a scale from")
    lo, hi = float(texts[k + 1]), float(texts[k + 3])
    assert texts[k + 2] == "to"
    held = {f"{v:.4g}" for v in x.reshape(-1).tolist()}
    assert texts[k + 1] in held and texts[k + 3] in held
    addresses = [int(g.data["addr"]) for _, g in _texts(picture.items, "sws-lcell") if g.data]
    shown = x.reshape(-1)[addresses]
    assert lo - 5e-4 <= float(shown.min()) and float(shown.max()) <= hi + 5e-4
    # a picture that shows its values as numbers has no key
    wide = [item.text for item, _ in _texts(draw(scene_of(x=x), width=1256).items)]
    assert "colour = value, on a scale from" not in wide


def _many(n):
    x = torch.arange(12.0).reshape(3, 4)
    return {f"v{i}": x[:, i % 4 :] if i % 2 else x.t() for i in range(n)}


def _randn_rows(n):
    y = torch.randn(64, 64)
    return {f"v{i}": y[i:, :] for i in range(n)}


@pytest.mark.parametrize("width", [876, 1256])
@pytest.mark.parametrize("make, n", [(_many, 12), (_many, 24), (_randn_rows, 8)])
def test_many_tensors_fit_and_each_is_drawn_or_listed_with_torchs_layout(make, n, width):
    """Many tensors at once: the picture stays within its height budget; each tensor is either
    drawn (its card's title, its mark in the strip) or listed in words with the shape, strides and
    offset torch gives it; a listed one's reads are still marked in the strip (in its plain
    colour: no arrows, no card), so that no read cell is drawn as unread (review of issue 36)."""
    torch.manual_seed(0)
    tensors = make(n)
    scene = scene_of(**tensors)
    picture = draw(scene, width=width)
    assert picture.height <= height_budget(scene, width)
    texts = [item.text for item, _ in _texts(picture.items)]
    listed = [t for t in texts if t.startswith("· ")]
    marks = {t["name"]: t["mark"] for t in scene["tensors"]}
    # every mark a strip cell names: alone, or run together in a crowded cell ("AB+22")
    strip_marks = {
        mark
        for item, _ in _texts(picture.items, "sws-scell")
        for mark in re.findall(r"[A-Z]+", item.text.split("+")[0])
        if mark in marks.values()
    } | {
        letters[k : k + 1]
        for item, _ in _texts(picture.items, "sws-scell")
        for letters in re.findall(r"[A-Z]+", item.text.split("+")[0])
        for k in range(len(letters))
    }
    drawn = 0
    for name, t in tensors.items():
        torch_layout = (
            f"({','.join(map(str, t.shape))}):({','.join(map(str, t.stride()))}) "
            f"+{t.storage_offset()}"
        )
        card = f"{marks[name]}  {name}" in texts
        line = next((row for row in listed if row.startswith(f"· {name} over storage ")), None)
        start = next((k for k, row in enumerate(texts) if row.startswith("· and ")), len(texts))
        tail = texts[start : start + 1]
        for row in texts[start + 1 :]:  # its wrapped lines
            if not row.startswith("    "):
                break
            tail.append(row.strip())
        named = " ".join(tail)
        counted = f" {name}," in named + "," or named.rstrip().endswith(f" {name}")
        assert card or line is not None or counted, name
        if card:
            drawn += 1
            assert marks[name] in strip_marks, name
        else:
            if line is not None:
                assert torch_layout in line, (line, torch_layout)
                storage = next(t["storage"] for t in scene["tensors"] if t["name"] == name)
                assert f"over storage {storage}:" in line
    assert drawn >= 1


def test_many_tensors_fallback_fits_64_kb():
    from stridewidget.notebook.widget import StrideWidget

    torch.manual_seed(0)
    for tensors in (_many(24), _randn_rows(8)):
        html = StrideWidget(**tensors)._repr_mimebundle_()[0]["text/html"]
        assert len(html.encode()) <= 64_000


def _complex_specials():
    nan, inf = float("nan"), float("inf")
    return torch.tensor(
        [[complex(nan, 1.5e10), 1e-5 + 2j, complex(inf, -inf)], [3 - 1j, 0j, 2.5 + 0.25j]]
    )


def test_a_complex_grid_in_colour_says_the_colour_is_the_magnitude():
    """A complex tensor's colour scale is |value| (torch.abs gives its ends), and each word that
    says what the colour is says so — the strip's note and the grid's key."""
    z = _complex_specials()
    picture = draw(scene_of(z=z), width=900)
    texts = [item.text for item, _ in _texts(picture.items)]
    assert "colour = |value|, on a scale from" in texts
    assert "colour = value, on a scale from" not in texts
    k = texts.index("colour = |value|, on a scale from")
    magnitudes = z.abs().reshape(-1)
    finite = magnitudes[torch.isfinite(magnitudes)]
    assert float(texts[k + 1]) == pytest.approx(float(finite.min()), abs=5e-4)
    assert float(texts[k + 3]) == pytest.approx(float(finite.max()), rel=5e-4)
    notes = [t for t in texts if t.startswith("values too wide")]
    assert notes and all("colour = |value|" in t for t in notes)


def test_a_special_value_on_a_colour_scale_fits_its_cell():
    """nan and ±inf keep their text on a colour scale: it fits inside the cell's box."""
    from stridewidget.render.primitives import Rect, text_width

    picture = draw(scene_of(z=_complex_specials()), width=900)
    checked = 0
    for group in [g for _, g in _texts(picture.items, "sws-lcell") if g is not None]:
        box = next(c for c in group.children if isinstance(c, Rect))
        for text in (c for c in group.children if isinstance(c, Text) and c.role == "v"):
            assert text_width(text.text, text.size) <= box.w - 2, (text.text, box.w)
            checked += 1
    assert checked >= 2


def test_no_colour_key_where_every_cell_prints_its_value():
    """A grid whose values all fit their (narrowed) cells prints every one: no colour key then
    (the review found a key over 288 cells that all showed numbers)."""
    from stridewidget.render.picture import _laid_out

    # the colour stage as a picture of several tensors takes it for all of its cards
    ones = torch.ones(8, 8, 8, 8)
    picture = _laid_out(scene_of(x=ones), "light", 876, False, 1, True)
    texts = [item.text for item, _ in _texts(picture.items)]
    assert not any(t.startswith("colour = ") for t in texts)
    cells = [g for _, g in _texts(picture.items, "sws-lcell") if g is not None]
    valued = {id(g) for item, g in _texts(picture.items, "sws-lcell") if item.role == "v"}
    assert cells and all(id(g) in valued for g in cells)


def _leads(expression: str, shape: tuple[int, ...], name: str) -> set[tuple[int, ...]]:
    """The lead indices (all dims but the last two) an index expression like ``x[1, 2:5, :, :]``
    names (a brute-force reading of the words, not the package's)."""
    import itertools

    inside = expression[len(name) + 1 : -1]
    parts = [p.strip() for p in inside.split(",")][: len(shape) - 2]
    axes = []
    for part, n in zip(parts, shape):
        if part == ":":
            axes.append(range(n))
        elif ":" in part:
            a, b = part.split(":")
            axes.append(range(int(a) if a else 0, int(b) if b else n))
        else:
            axes.append([int(part)])
    return set(itertools.product(*axes))


@pytest.mark.parametrize("width", [876, 1256])
@pytest.mark.parametrize("shape", [(8, 8, 8, 8), (5, 6, 7, 8), (3, 4, 5, 6, 7), (16, 16, 16)])
def test_fewer_panels_fit_and_every_slice_is_drawn_or_named(shape, width):
    """A tensor too tall even as colour draws fewer panels: the picture fits, and every slice of
    the tensor is either a drawn panel or named by a 'not shown' note (read back from the words,
    against all the lead indices of the shape)."""
    import itertools
    import re

    torch.manual_seed(0)
    x = torch.randn(*shape)
    scene = scene_of(x=x)
    picture = draw(scene, width=width)
    assert picture.height <= height_budget(scene, width)
    texts = [item.text for item, _ in _texts(picture.items)]
    named: set[tuple[int, ...]] = set()
    notes = " ".join(
        texts[k] for k, t in enumerate(texts) if "not shown" in t or t.startswith("    ")
    )
    notes = re.sub(r"\(between [^)]*\)", "", notes)  # where the run was: not a slice it holds
    for expression in re.findall(r"x\[[^\]]*\]", notes):
        named |= _leads(expression, shape, "x")
    drawn = {
        tuple(int(i) for i in t[2:-1].split(",")[: len(shape) - 2])
        for t in texts
        if re.fullmatch(r"x\[[\d, ]+(, :)+\]", t)
    }
    everything = set(itertools.product(*(range(n) for n in shape[:-2])))
    assert drawn and drawn | named == everything
    assert not drawn & named
