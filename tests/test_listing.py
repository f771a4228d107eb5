"""The display list (``render/listing.py``) is the picture the static SVG draws (issue 35).

Oracles: the schema (``render/listing.schema.json``, checked by ``jsonschema``), and the static SVG
parsed and resolved as a browser would (``tests/svg_resolve.py``, which shares no code with the
listing): every text with its position and ink, every rect, every path of the SVG must be in the
list, in paint order, with the list's role tokens resolved in the SVG's theme.  The same list in
the browser is compared with the SVG in ``tests/e2e/test_one_picture.py``.
"""

from __future__ import annotations

import json
import pathlib
import re

import jsonschema
import pytest
import torch
from e2e.lint_corpus import CASES as LINT_CASES
from e2e.lint_corpus import tensors_of
from oracle_cells import corpus
from svg_resolve import colour, drawn

import stridewidget as sw
from stridewidget.notebook.picture import RELAYOUT_PX, layout_width, picture_of
from stridewidget.render.listing import display_list
from stridewidget.render.picture import draw
from stridewidget.render.svg import svg_of_scene
from stridewidget.scene.build import build_scene
from stridewidget.style import STYLE

SCHEMA = json.loads(
    (pathlib.Path(sw.__file__).parent / "render" / "listing.schema.json").read_text()
)
ORACLE = corpus()


def _scenes():
    for case in LINT_CASES:
        if not case.playground:
            yield f"lint-{case.name}", build_scene(tensors_of(case), wrap=case.wrap)
    for name in sorted(ORACLE):
        yield f"oracle-{name}", build_scene(ORACLE[name]())


SCENES = dict(_scenes())


def _flat(items, out=None):
    out = [] if out is None else out
    for item in items:
        if item[0] == "g":
            _flat(item[4], out)
        else:
            out.append(item)
    return out


def _resolve(value, theme):
    if isinstance(value, str) and value.startswith("@"):
        return colour(STYLE["themes"][theme][value[1:]])
    return colour(value) if isinstance(value, str) else value


@pytest.mark.parametrize("name", sorted(SCENES))
def test_display_list_follows_its_schema_and_is_plain_json(name):
    listed = picture_of(SCENES[name], None, None)
    jsonschema.validate(listed, SCHEMA)
    assert json.loads(json.dumps(listed, allow_nan=False)) == listed


@pytest.mark.parametrize("theme", ["light", "dark"])
@pytest.mark.parametrize("name", sorted(SCENES))
def test_the_list_is_what_the_static_svg_draws(name, theme):
    scene = SCENES[name]
    listed = display_list(draw(scene, roles=True))
    shapes = drawn(svg_of_scene(scene, theme))[1:]  # the background first
    items = _flat(listed["items"])
    assert [s["tag"] for s in shapes] == [
        {"r": "rect", "t": "text", "p": "path"}[i[0]] for i in items
    ]
    for shape, item in zip(shapes, items):
        if item[0] == "t":
            _, x, y, text, _size, fill, *_ = item
            assert shape["text"] == text
            assert shape["at"] == (x, y), (text, shape)
            assert shape["fill"] == _resolve(fill, theme), (text, shape["fill"], fill)
        elif item[0] == "r":
            _, x, y, w, h, fill, stroke, *_ = item
            assert shape["box"] == (x, y, w, h)
            if isinstance(fill, str) and not fill.startswith("p"):
                assert shape["fill"] == _resolve(fill, theme)
            if stroke:
                assert shape["stroke"] == _resolve(stroke, theme)
        else:
            assert shape["stroke"] == _resolve(item[2], theme)
            d = item[1]
            assert shape["d"][1] == tuple(float(v) for v in d.split() if not v.isalpha())


def test_a_role_picture_is_written_with_the_theme_colours():
    scene = SCENES["lint-transpose"]
    for theme in ("light", "dark"):
        from stridewidget.render.svg import svg_of

        svg = svg_of(draw(scene, theme, roles=True), "u")
        assert not re.search(r'="@', svg)
        assert drawn(svg) == drawn(svg_of(draw(scene, theme), "u"))


def test_the_list_is_bounded_whatever_the_size():
    sizes = {}
    for n in (10**4, 10**6, 10**8):
        scene = build_scene({"x": torch.empty(n, device="meta").view(100, n // 100)})
        sizes[n] = len(json.dumps(picture_of(scene, None, None)))
    assert max(sizes[10**6], sizes[10**8]) < 1.1 * sizes[10**4], sizes  # it does not grow with n
    assert max(sizes.values()) < 120_000, sizes


@pytest.mark.parametrize("width", [846, 1240])
def test_every_corpus_picture_fits_the_width_it_is_laid_out_for(width):
    wide = {}
    for name, scene in SCENES.items():
        listed = picture_of(scene, width, None)
        if listed["width"] > width:
            wide[name] = listed["width"]
    assert not wide


#: Pictures whose words are wider than a column: 25-D and 60-D facts lines and panel titles, a
#: long name, a huge meta shape (issue 35: the fallback is laid out for a 900 px column).
WORDY = {
    "25-d": lambda: {"x": torch.zeros([1] * 25)},
    "60-d": lambda: {"x": torch.zeros([1] * 60)},
    "12-d": lambda: {"x": torch.zeros([2] * 12)},
    "long-name": lambda: {"n" * 80: torch.arange(6.0).reshape(2, 3)},
    "meta-shape": lambda: {"m": torch.empty(123456789, 987654321, device="meta")[::7, 3::11]},
}


@pytest.mark.parametrize("name", sorted(WORDY))
def test_the_static_fallback_fits_a_900_px_column(name):
    svg = sw.render_svg(**WORDY[name]())
    width = float(re.search(r'<svg[^>]*? width="([\d.]+)"', svg).group(1))
    assert width <= 900, f"{name}: {width} px"
    assert 'style="max-width:100%;height:auto"' in svg  # and scales down in a narrower one


def test_the_widget_lays_out_again_only_when_its_width_moves_by_a_cell():
    x = torch.arange(40.0).reshape(4, 10)
    w = sw.show(x, xt=x.t())
    assert w.picture == picture_of(w.scene, None, None)
    w.width = 600
    first = w.picture
    assert first["width"] <= 600 and first == picture_of(w.scene, 600, None)
    w.width = 600 + RELAYOUT_PX - 1  # less than a cell: the same picture
    assert w.picture is first
    w.width = 300  # far narrower: laid out again for the narrowest layout width, narrower
    # (its header and facts lines do not break below ~500 px: the painter scales it down)
    assert w.picture == picture_of(w.scene, layout_width(300), None)
    assert w.picture["width"] < first["width"]
    w.wrap = 3  # a new row width lays out again too
    assert w.picture == picture_of(w.scene, 300, 3)
    with pytest.raises(Exception, match="width must be px"):
        w.width = -5
    w.close()


def test_every_surface_says_two_dtypes_are_one_memory():
    """A float32 tensor and its int32 view are one memory (torch's own storage pointers say so):
    the static SVG and the widget's picture both say it, for each strip."""
    f = torch.linspace(-1, 1, 6)
    bits = f.view(torch.int32)
    assert f.untyped_storage().data_ptr() == bits.untyped_storage().data_ptr()
    scene = build_scene({"f": f, "bits": bits})
    ids = [s["id"] for s in scene["storages"]]
    assert len(ids) == 2
    svg = svg_of_scene(scene)
    texts = [i[3] for i in _flat(picture_of(scene, 900, None)["items"]) if i[0] == "t"]
    text = sw.render_text(f=f, bits=bits)
    for _this, other in (ids, ids[::-1]):
        said = f"same memory as {other} (viewed as another dtype)"
        assert said in svg and any(said in t for t in texts) and said in text
    plain = build_scene({"f": f, "g": f.clone().view(torch.int32)})  # another memory: not said
    assert "same memory" not in svg_of_scene(plain)
    assert "same memory" not in sw.render_text(f=f, g=f.clone().view(torch.int32))


def test_a_strip_of_one_memory_counts_its_own_readers_and_says_so():
    """Review: ``c`` (complex64) and ``c.imag`` (float32) are one memory; ``c[0]`` reads the bytes
    of s1's cell 0, yet its hover said "not read by any shown tensor".  A strip of one memory
    with another says its marks and "unread" count its own tensors; its hover says so too."""
    c = torch.tensor([1 + 2j, 3 - 4j, 5 + 6j])
    im = c.imag
    assert c.untyped_storage().data_ptr() == im.untyped_storage().data_ptr()
    scene = build_scene({"c": c, "im": im})
    listed = picture_of(scene, 900, None)["items"]
    tips = [g[3] for g in _groups(listed) if g[1].split()[0] == "sws-scell"]
    assert tips and not any("not read by any shown tensor" in t for t in tips)
    assert any("not read by a tensor over this strip" in t for t in tips)
    texts = [i[3] for i in _flat(listed) if i[0] == "t"]
    assert sum("count this strip's tensors only" in t for t in texts) == 2
    assert sw.render_text(c=c, im=im).count("count this strip's tensors only") == 2


def test_a_hover_line_names_storage_only_with_what_storage_holds():
    """Issue 36: over a conj view, storage[k] is followed by the value memory holds (the raw
    element, read through the base), and the view's own value is said as the view's."""
    from oracle_cells import logical_value, matches, raw_cell

    z = torch.tensor([[1 + 2j, 3 - 1j, 5 + 2.5j], [-1j, 2.25 + 0j, 7 - 7j]])
    zc = z.conj()
    scene = build_scene({"z": z, "zc": zc})
    tips = [
        (g[2], g[3])
        for g in _groups(picture_of(scene, 900, None)["items"])
        if g[1] == "sws-lcell" and g[2]["tensor"] == "t1"
    ]
    assert len(tips) == 6
    for data, tip in tips:
        index = tuple(int(i) for i in data["index"].split(","))
        found = re.fullmatch(r"zc\[[\d, ]+\] = (\S+) · storage\[(\d+)\] holds (\S+)", tip)
        assert found, tip
        view_text, cell, stored_text = found.groups()
        assert int(cell) == data["addr"]
        assert matches(view_text, logical_value(zc, index), 10)
        assert matches(stored_text, raw_cell(z, int(cell)), 10)
        if z[index].imag != 0:  # conj: the two differ, and the line must not mix them up
            assert not matches(stored_text, logical_value(zc, index), 10)


def _groups(items, out=None):
    out = [] if out is None else out
    for item in items:
        if item[0] == "g":
            out.append(item)
            _groups(item[4], out)
    return out


def test_a_bidi_control_in_a_name_is_shown_as_its_escape_never_applied():
    """ "\\u202eevil" must not be drawn as "live": no drawn or listed text holds a character
    Unicode classes as a bidi embedding, override or isolate (oracle: unicodedata)."""
    import unicodedata

    controls = {"LRE", "RLE", "LRO", "RLO", "PDF", "LRI", "RLI", "FSI", "PDI"}
    names = ["\u202eevil", "a\u2067b\u2069c", "\u202bx"]
    scene = build_scene({name: torch.arange(3.0) for name in names})
    listed = json.dumps(picture_of(scene, 900, None), ensure_ascii=False)
    svg = sw.render_svg(scene)
    for text in (listed, svg, sw.render_text(scene)):
        assert not [ch for ch in text if unicodedata.bidirectional(ch) in controls]
    assert "\\\\u202eevil" in listed  # the name as written, its control spelled out


def test_a_widget_told_a_narrower_width_is_laid_out_again_to_paint_at_scale_one():
    """Issue 36: a widget laid out for 900 px and then told the browser has 876 px (less than a
    storage cell narrower) is laid out again, so the painter does not scale it down; the same
    width twice lays out once, and a few px wider keeps the picture as it is."""
    x = torch.arange(24.0).reshape(2, 3, 4)
    w = sw.show(x)
    w.width = 900
    wide = w.picture
    assert wide["width"] > 876  # the picture laid out for 900 would be scaled down in 876 px
    w.width = 876
    assert w.picture["width"] <= 876  # painted at scale 1: min(1, 876 / width) == 1
    assert w.picture == picture_of(w.scene, 876, None)
    narrow = w.picture
    w.width = 876  # the same width again: not laid out again
    assert w.picture is narrow
    w.width = 876 + RELAYOUT_PX - 1  # a little wider: it still fits, kept as it is
    assert w.picture is narrow
    w.close()
