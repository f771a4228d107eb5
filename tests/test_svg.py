"""Static renderers (SVG, HTML fallback, text) checked against torch / NumPy as the oracle."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest
import torch
from svg_resolve import colour, drawn

import stridewidget as sw
from stridewidget.render.picture import scene_of
from stridewidget.scene.build import build_scene
from stridewidget.style import STYLE

SVG = "{http://www.w3.org/2000/svg}"
EVIL = '<img src=x onerror=alert(1)>"&'


def parse(svg: str) -> ET.Element:
    return ET.fromstring(svg)  # raises on anything that is not well-formed XML


def groups(root: ET.Element, cls: str) -> list[ET.Element]:
    return [g for g in root.iter(f"{SVG}g") if cls in g.get("class", "").split()]


def texts_in(element: ET.Element) -> list[str]:
    return [e.text for e in element.iter(f"{SVG}text") if e.text]


def marks_in(element: ET.Element) -> set[str]:
    """The readers' letters on a storage cell's strip: A, B×2, C?"""
    return {t for t in texts_in(element) if re.fullmatch(r"[A-Z]\d*(×\d+|\?)?", t)}


def arrow_labels(root: ET.Element) -> set[str]:
    return {t for g in groups(root, "sws-arrow-label") for t in texts_in(g)}


def expected_labels(strides, shape, signs="+") -> set[str]:
    """Oracle: one label per distinct stride over the dims of size > 1 (equal strides merged)."""
    dims: dict[int, list[int]] = {}
    for d, (n, stride) in enumerate(zip(shape, strides)):
        if n > 1:
            dims.setdefault(stride, []).append(d)
    return {
        ",".join(f"d{d}" for d in ds) + (" ×0" if s == 0 else f" +{s}" if s > 0 else f" −{-s}")
        for s, ds in dims.items()
    }


def first_rect_x(g: ET.Element) -> float:
    return float(g.find(f"{SVG}rect").get("x"))


def storage_address(t: torch.Tensor, index: tuple[int, ...]) -> int:
    """Oracle: where torch itself puts t[index], in elements from the storage start."""
    element = t[index] if index else t
    return (element.data_ptr() - t.untyped_storage().data_ptr()) // t.element_size()


def brute_touch(t: torch.Tensor) -> dict[int, int]:
    counts: dict[int, int] = {}
    for index in np.ndindex(*t.shape):
        a = storage_address(t, index)
        counts[a] = counts.get(a, 0) + 1
    return counts


CASES = {
    "scalar": lambda: torch.tensor(3.5),
    "vector": lambda: torch.arange(5),
    "transpose": lambda: torch.arange(12.0).reshape(3, 4).t(),
    "gapped": lambda: torch.arange(20.0).reshape(4, 5)[1:, ::2],
    "expand": lambda: torch.arange(3.0).expand(4, 3),
    "3d": lambda: torch.arange(60).reshape(3, 4, 5).permute(2, 0, 1),
    "bool": lambda: torch.tensor([True, False, True]),
    "complex": lambda: torch.tensor([1 + 2j, -3j]),
    "empty": lambda: torch.zeros(0, 3),
    "offset": lambda: torch.arange(10.0)[3:7],
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_svg_is_well_formed_and_addresses_match_torch(case):
    t = CASES[case]()
    root = parse(sw.render_svg(x=t))
    cells = groups(root, "sws-lcell")
    assert len(cells) == (t.numel() if t.numel() <= 256 else len(cells))
    for g in cells:
        title = g.find(f"{SVG}title").text
        match = re.fullmatch(r"x\[([-\d, ]*)\] → storage\[(\d+)\]( = .*)?", title)
        assert match, title
        index = tuple(int(i) for i in match.group(1).split(",") if i.strip())
        assert int(match.group(2)) == storage_address(t, index)
        assert int(g.get("data-addr")) == storage_address(t, index)


@pytest.mark.parametrize("case", ["gapped", "expand", "transpose", "offset"])
def test_storage_cells_untouched_and_repeat_counts_match_brute_force(case):
    t = CASES[case]()
    counts = brute_touch(t)
    root = parse(sw.render_svg(x=t))
    storage_cells = groups(root, "sws-scell")
    assert storage_cells, "no storage cells drawn"
    for g in storage_cells:
        cell = int(g.get("data-cell"))
        untouched = "sws-untouched" in g.get("class")
        assert untouched == (cell not in counts), cell
        marks = marks_in(g)
        assert marks == (
            set()
            if cell not in counts
            else {"A" + (f"×{counts[cell]}" if counts[cell] > 1 else "")}
        )


@pytest.mark.parametrize(
    "make",
    [
        lambda: torch.arange(3.0).expand(4, 3),
        lambda: torch.arange(10.0).unfold(0, 4, 1),  # two dims of stride 1: one merged arrow
        lambda: torch.arange(11.0).unfold(0, 4, 2),
        lambda: torch.arange(24.0).reshape(2, 3, 4).permute(2, 0, 1),
    ],
)
def test_arrow_labels_are_torch_strides_merged_when_equal(make):
    t = make()
    root = parse(sw.render_svg(e=t))
    assert arrow_labels(root) == expected_labels(t.stride(), t.shape)
    assert len(groups(root, "sws-arrow")) == len(expected_labels(t.stride(), t.shape))


def test_stride_zero_is_a_loop_on_one_cell():
    root = parse(sw.render_svg(e=torch.arange(3.0).expand(4, 3)))
    loop = next(g for g in groups(root, "sws-arrow") if g.get("data-dim") == "0")
    numbers = [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?", loop.find(f"{SVG}path").get("d"))]
    assert numbers[1] == numbers[-1]  # it starts and ends on the cell's top edge ...
    assert abs(numbers[0] - numbers[-2]) < STYLE["geometry"]["cell_w"]  # ... of one cell


def test_negative_strides_from_numpy_are_labelled_with_a_minus():
    a = np.arange(12.0).reshape(3, 4)[::-1, ::-2]
    root = parse(sw.render_svg(a=a))
    strides = [s // a.itemsize for s in a.strides]
    assert arrow_labels(root) == expected_labels(strides, a.shape)
    assert all("−" in label for label in arrow_labels(root))


def test_names_and_values_are_escaped_in_svg_html_and_text():
    t = torch.zeros(2)
    svg = sw.render_svg(**{EVIL: t})
    root = parse(svg)  # the name did not break the markup ...
    assert not list(root.iter("img")) and not list(root.iter(f"{SVG}img"))
    assert any(EVIL in (e.text or "") for e in root.iter())  # ... and is shown as text
    page = sw.render_html(**{EVIL: t})
    assert "<img" not in page and "onerror=alert(1)>" not in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page
    assert "<script" not in page
    assert EVIL in sw.render_text(**{EVIL: t})


def test_several_tensors_over_one_storage_differ_by_pattern_and_mark_not_only_hue():
    x = torch.arange(12.0).reshape(3, 4)
    named = {"a": x, "b": x.t(), "c": x[:, ::2], "d": x.clone()}
    svg = sw.render_svg(**named)
    root = parse(svg)
    patterns = {p.get("id"): p for p in root.iter(f"{SVG}pattern")}
    assert len(patterns) == 4
    # each tensor: its own texture (not only its own colour) and its own letter mark
    assert len({STYLE["patterns"][i] for i in range(4)}) == 4
    assert len({STYLE["tensor_colours"][i] for i in range(4)}) == 4
    strip_marks = set().union(*(marks_in(g) for g in groups(root, "sws-scell")))
    assert {"A", "B", "C", "D"} <= strip_marks
    # a, b, c share one storage grid; the clone gets its own
    titles = [e.text for e in root.iter(f"{SVG}text") if (e.text or "").startswith("storage s")]
    assert len(titles) == 2


def test_cells_read_by_two_tensors_carry_both_marks():
    x = torch.arange(6.0)
    root = parse(sw.render_svg(a=x, b=x[::2]))
    for g in groups(root, "sws-scell"):
        cell = int(g.get("data-cell"))
        assert marks_in(g) == ({"A", "B"} if cell % 2 == 0 else {"A"})


def test_payload_is_bounded_for_a_billion_elements():
    small = sw.render_svg(x=torch.empty(100, device="meta"))
    huge = sw.render_svg(x=torch.empty(10**9, device="meta"))
    huge_3d = sw.render_svg(x=torch.empty(1000, 1000, 1000, device="meta").transpose(0, 2))
    assert len(huge) < 20 * len(small)
    assert len(huge_3d) < 2_000_000
    parse(huge_3d)


def test_scene_widget_and_tensors_give_the_same_picture():
    x = torch.arange(6.0).reshape(2, 3)
    scene = build_scene({"x": x})
    assert sw.render_svg(scene) == sw.render_svg(x=x)
    widget = sw.StrideWidget(x=x)
    assert sw.render_text(widget) == sw.render_text(x=x)
    widget.close()


def test_bad_input_says_what_to_do():
    with pytest.raises(TypeError, match="nothing to draw"):
        sw.render_svg()
    with pytest.raises(TypeError):
        sw.render_svg(object())
    with pytest.raises(TypeError, match="both positionally and as keywords"):
        scene_of(torch.zeros(1), t0=torch.zeros(1))


def test_text_layout_line_grid_and_markers():
    x = torch.arange(20.0).reshape(4, 5)[1:, ::2]
    text = sw.render_text(x=x)
    lines = text.splitlines()
    assert lines[0] == f"A x: {sw.inspect(x)}"
    # the logical grid rows are torch's values
    grid = lines[lines.index(f"logical x {tuple(x.shape)}:") + 1 :]
    values = [[float(v) for v in row.strip()[1:-1].split()] for row in grid]
    assert values == x.tolist()

    # storage is one line: every index in order, each cell's value and its reader mark
    def row(name: str) -> list[str]:
        return [
            v
            for line in lines
            if line.startswith(f"  {name:<5} |")
            for v in line.split("|", 1)[1].split()
        ]

    shown = x.untyped_storage().nbytes() // x.element_size()
    assert row("index") == [str(c) for c in range(shown)]
    assert row("value") == [f"{float(c):.0f}." for c in range(shown)]
    touched = brute_touch(x)
    assert row("read") == ["A" if c in touched else "·" for c in range(shown)]


def test_text_meta_tensor_shows_addresses_not_values():
    m = torch.empty(2, 3, device="meta").t()
    text = sw.render_text(m=m)
    assert "no values" in text
    assert f"@{storage_address(torch.empty(2, 3).t(), (2, 1))}" in text


def test_html_fallback_has_facts_and_explain():
    x = torch.arange(12.0).reshape(3, 4).t()
    page = sw.render_html(x=x)
    layout = sw.inspect(x)
    import html

    assert html.escape(layout.explain().splitlines()[0]) in page
    assert "F-contiguous" in page
    assert page.startswith('<div class="stridewidget-fallback"')


def test_wrap_sets_the_storage_row_width_for_tensors_scenes_and_widgets():
    x = torch.arange(12.0).reshape(3, 4)

    def row_starts(svg: str) -> set[int]:
        cells = [
            (first_rect_x(g), int(g.get("data-cell"))) for g in groups(parse(svg), "sws-scell")
        ]
        left = min(x for x, _ in cells)
        return {cell for x, cell in cells if x == left}

    assert row_starts(sw.render_svg(x=x)) == {0}  # a short storage is one strip of memory
    assert row_starts(sw.render_svg(x=x, wrap=6)) == {0, 6}
    assert row_starts(sw.render_svg(build_scene({"x": x}), wrap=3)) == {0, 3, 6, 9}
    widget = sw.StrideWidget(x=x, wrap=2)
    assert row_starts(sw.render_svg(widget)) == set(range(0, 12, 2))
    widget.close()
    assert "rows of 6" in sw.render_text(x=x, wrap=6)
    with pytest.raises(ValueError, match="positive int"):
        sw.render_svg(x=x, wrap=0)


def test_styling_survives_sanitizers_that_drop_style_elements():
    """No <style> sheet: every filled shape carries its own fill (a sanitized rect is not black)."""
    x = torch.arange(20.0).reshape(4, 5)[1:, ::2]
    root = parse(sw.render_svg(x=x, e=torch.arange(3.0).expand(2, 3)))
    assert not list(root.iter(f"{SVG}style"))
    rects = list(root.iter(f"{SVG}rect"))
    assert rects and all(r.get("fill") for r in rects)
    untouched = [g for g in groups(root, "sws-scell") if "sws-untouched" in g.get("class")]
    fill = STYLE["themes"]["light"]["untouched_bg"]
    assert untouched and all(g.find(f"{SVG}rect").get("fill") == fill for g in untouched)


def test_values_too_wide_for_cells_get_fewer_digits_and_a_legend():
    torch.manual_seed(0)
    z = torch.randn(2, 2, dtype=torch.complex128)  # texts like "-0.2050+0.7652j"
    root = parse(sw.render_svg(z=z))
    legend = [e.text for e in root.iter(f"{SVG}text") if "digits after the point" in (e.text or "")]
    assert legend and not [e for e in root.iter(f"{SVG}text") if "colour = value" in (e.text or "")]
    # the exact value is still there, in the hover line
    titles = [g.find(f"{SVG}title").text for g in groups(root, "sws-lcell")]
    scene = build_scene({"z": z})
    assert all(title.split(" = ")[1] in scene["storages"][0]["cells"]["text"] for title in titles)


def test_values_no_shorter_form_fits_get_a_colour_scale_and_a_legend():
    big = torch.tensor([-12345678901234, 23456789012345, 34567890123456, 4])  # no digits to drop
    root = parse(sw.render_svg(big=big))
    fills = {g.find(f"{SVG}rect").get("fill") for g in groups(root, "sws-scell")}
    assert len(fills) == 4  # four different values, four colours
    legend = [e.text for e in root.iter(f"{SVG}text") if "colour = value" in (e.text or "")]
    assert legend
    titles = [g.find(f"{SVG}title").text for g in groups(root, "sws-scell")]
    assert [t.split("= ")[1].split(" ")[0] for t in titles] == [str(v) for v in big.tolist()]


def test_arrow_labels_fit_inside_the_picture():
    x = torch.arange(12.0).reshape(3, 4)
    for named in ({"x": x[:, 2:]}, {"a": x, "b": x.t(), "c": x[:, ::2]}):
        root = parse(sw.render_svg(**named))
        width = float(root.get("width"))
        for g in groups(root, "sws-arrow-label"):
            box = g.find(f"{SVG}rect")
            assert (
                float(box.get("x")) >= 0 and float(box.get("x")) + float(box.get("width")) <= width
            )


def test_storage_is_one_line_with_each_cells_index_under_it():
    x = torch.arange(24.0).reshape(4, 6)
    root = parse(sw.render_svg(x=x, xt=x.t()))
    cells = groups(root, "sws-scell")
    assert [int(g.get("data-cell")) for g in cells] == list(range(24))
    tops = {float(g.find(f"{SVG}rect").get("y")) for g in cells}
    assert len(tops) == 1  # one row
    xs = [first_rect_x(g) for g in cells]
    assert xs == sorted(xs)  # in storage order, left to right
    for g in cells:  # the index under the cell is the cell's own storage index
        assert g.get("data-cell") in texts_in(g)


def test_a_long_storage_wraps_at_its_natural_row_with_column_offsets_and_row_labels():
    x = torch.arange(120.0).reshape(2, 3, 4, 5)
    scene = build_scene({"nchw": x})
    wrap = scene["storages"][0]["wrap"]
    root = parse(sw.render_svg(scene))
    cells = {int(g.get("data-cell")): g for g in groups(root, "sws-scell")}
    by_row: dict[float, list[int]] = {}
    for cell, g in cells.items():
        by_row.setdefault(float(g.find(f"{SVG}rect").get("y")), []).append(cell)
    starts = sorted(min(row) for row in by_row.values())
    assert starts == list(range(0, 120, wrap))  # rows of the storage's own width
    texts = texts_in(root)
    assert all(f"+{k}" in texts for k in range(wrap))  # the column-offset header
    assert all(f"{start:,}" in texts for start in starts)  # full row labels


def test_huge_storage_labels_keep_every_digit():
    huge = torch.empty(10**6, 10**6, device="meta")
    root = parse(sw.render_svg(tail=huge[-2:, -3:]))
    texts = texts_in(root)
    last = 10**12 - 1
    assert f"{last:,}" in texts  # the last storage cell's index, grouped, uncut
    elided = (" cells", " unread", " not shown")
    assert any(t.startswith("⋯ ") and t.endswith(elided) for t in texts)  # explicit elision


def test_a_4d_tensor_is_a_grid_of_panels_rows_n_columns_c():
    x = torch.arange(120.0).reshape(2, 3, 4, 5)
    root = parse(sw.render_svg(x=x))
    corner: dict[tuple[int, int], tuple[float, float]] = {}
    for g in groups(root, "sws-lcell"):
        n, c, h, w = map(int, g.get("data-index").split(","))
        assert int(g.get("data-addr")) == storage_address(x, (n, c, h, w))
        if h == w == 0:
            rect = g.find(f"{SVG}rect")
            corner[(n, c)] = (float(rect.get("x")), float(rect.get("y")))
    assert len(corner) == 6
    for n in range(2):  # a panel row per n, a panel column per c
        assert len({corner[(n, c)][1] for c in range(3)}) == 1
    for c in range(3):
        assert len({corner[(n, c)][0] for n in range(2)}) == 1
    assert corner[(0, 0)][0] < corner[(0, 1)][0] < corner[(0, 2)][0]
    assert corner[(0, 0)][1] < corner[(1, 0)][1]


def test_facts_line_shows_only_the_flags_that_matter_for_the_ndim():
    root = parse(sw.render_svg(a=torch.arange(6.0).reshape(2, 3)))
    facts = [t for g in groups(root, "sws-facts") for t in texts_in(g)]
    assert facts == ["shape (2, 3) · strides (3, 1) · offset 0 · float32 · contiguous"]
    x = torch.zeros(2, 3, 4, 5).contiguous(memory_format=torch.channels_last)
    facts = [t for g in groups(parse(sw.render_svg(x=x)), "sws-facts") for t in texts_in(g)]
    assert facts[0].endswith("· channels-last") and "contiguous" not in facts[0]
    title = groups(parse(sw.render_svg(x=x)), "sws-facts")[0].find(f"{SVG}title").text
    assert sw.inspect(x).to_dict()["text"] in title and "offset" in title  # notation explained


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_themes_draw_with_their_own_colours(theme):
    colours = STYLE["themes"][theme]
    root = parse(sw.render_svg(x=torch.arange(4.0), theme=theme))
    assert root.find(f"{SVG}rect").get("fill") == colours["background"]
    # the fill each text is painted with, inherited ones included (svg_resolve: as a browser does)
    svg = sw.render_svg(x=torch.arange(4.0), theme=theme)
    fills = {shape["fill"] for shape in drawn(svg) if shape["tag"] == "text"}
    assert colour(colours["text"]) in fills and fills <= {
        colour(colours[key]) for key in ("text", "text_muted", "untouched_text", "strip_text")
    }
    with pytest.raises(ValueError, match="theme"):
        sw.render_svg(x=torch.arange(4.0), theme="sepia")
    assert colours["background"] in sw.render_html(x=torch.arange(4.0), theme=theme)


def test_every_reader_and_its_count_is_written_on_the_cells_strip():
    x = torch.arange(24).view(4, 6)
    views = {"x": x, "b": x[:, 0:1].expand(4, 6), "w": x.view(-1).unfold(0, 3, 1)}
    root = parse(sw.render_svg(**views))
    counts = {name: brute_touch(t) for name, t in views.items()}
    for g in groups(root, "sws-scell"):
        cell = int(g.get("data-cell"))
        expected = set()
        for mark, name in zip("ABC", views):
            n = counts[name].get(cell, 0)
            if n:
                expected.add(mark + (f"×{n}" if n > 1 else ""))
        assert marks_in(g) == expected, cell
