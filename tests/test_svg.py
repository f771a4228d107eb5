"""Static renderers (SVG, HTML fallback, text) checked against torch / NumPy as the oracle."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest
import torch

import stridewidget as sw
from stridewidget._scene import build_scene
from stridewidget._svg import PATTERNS, TENSOR_COLOURS, scene_of

SVG = "{http://www.w3.org/2000/svg}"
EVIL = '<img src=x onerror=alert(1)>"&'


def parse(svg: str) -> ET.Element:
    return ET.fromstring(svg)  # raises on anything that is not well-formed XML


def groups(root: ET.Element, cls: str) -> list[ET.Element]:
    return [g for g in root.iter(f"{SVG}g") if cls in g.get("class", "").split()]


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
        texts = [e.text for e in g.iter(f"{SVG}text")]
        if counts.get(cell, 0) > 1:
            assert f"×{counts[cell]}" in texts
        else:
            assert not any(s and s.startswith("×") for s in texts)


def test_arrow_labels_are_torch_strides_and_stride_zero_is_a_loop():
    t = torch.arange(3.0).expand(4, 3)
    root = parse(sw.render_svg(e=t))
    labels = {e.text for e in root.iter(f"{SVG}text") if e.text and e.text.startswith("dim ")}
    assert labels == {f"dim {d}: +{t.stride(d)}" for d in range(t.ndim)}
    loop = next(g for g in groups(root, "sws-arrow") if g.get("data-dim") == "0")
    path = loop.find(f"{SVG}path").get("d")
    numbers = [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?", path)]
    # a loop starts and ends on the same cell's top edge
    assert numbers[1] == numbers[-1]


def test_negative_strides_from_numpy_are_labelled_with_a_minus():
    a = np.arange(12.0).reshape(3, 4)[::-1, ::-2]
    root = parse(sw.render_svg(a=a))
    labels = {e.text for e in root.iter(f"{SVG}text") if e.text and e.text.startswith("dim ")}
    assert labels == {f"dim {d}: −{abs(s) // a.itemsize}" for d, s in enumerate(a.strides)}


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
    kinds = {PATTERNS[i % len(PATTERNS)] for i in range(4)}
    assert len(kinds) == 4 and len({TENSOR_COLOURS[i] for i in range(4)}) == 4
    strip_marks = {
        e.text for e in root.iter(f"{SVG}text") if "sws-strip-label" in e.get("class", "")
    }
    assert {"A", "B", "C", "D"} <= strip_marks
    # a, b, c share one storage grid; the clone gets its own
    titles = [e.text for e in root.iter(f"{SVG}text") if (e.text or "").startswith("storage s")]
    assert len(titles) == 2


def test_cells_read_by_two_tensors_carry_both_marks():
    x = torch.arange(6.0)
    root = parse(sw.render_svg(a=x, b=x[::2]))
    for g in groups(root, "sws-scell"):
        cell = int(g.get("data-cell"))
        marks = {e.text for e in g.iter(f"{SVG}text") if "sws-strip-label" in e.get("class", "")}
        assert marks == ({"A", "B"} if cell % 2 == 0 else {"A"})


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
    # the storage strip marks exactly the cells the view reads; "·" = untouched
    touched = brute_touch(x)
    marker_rows = [line for line in lines if re.fullmatch(r"\s+\|[\sA·]+", line)]
    marks = "".join(row.split("|", 1)[1] for row in marker_rows).split()
    shown = x.untyped_storage().nbytes() // x.element_size()
    assert marks == ["A" if c in touched else "·" for c in range(shown)]


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
        root = parse(svg)
        cells = [
            (float(g.get("transform").split("(")[1].split(",")[0]), int(g.get("data-cell")))
            for g in groups(root, "sws-scell")
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
    assert untouched and all(g.find(f"{SVG}rect").get("fill") == "#e4e4e4" for g in untouched)


def test_values_too_wide_for_cells_get_a_colour_scale_and_a_legend():
    r = torch.tensor([[0.123456, -7.654321], [3.141593, 100.5]])
    root = parse(sw.render_svg(r=r))
    fills = {g.find(f"{SVG}rect").get("fill") for g in groups(root, "sws-scell")}
    assert len(fills) == 4  # four different values, four colours
    legend = [e.text for e in root.iter(f"{SVG}text") if "colour = value" in (e.text or "")]
    assert legend and "-7.654" in legend[0] and "100.5" in legend[0]
    # the exact value is still there, in the tooltip
    titles = [g.find(f"{SVG}title").text for g in groups(root, "sws-lcell")]
    assert any(t.endswith("= 3.142") for t in titles)


def test_arrow_labels_fit_inside_the_picture():
    x = torch.arange(12.0).reshape(3, 4)
    for named in ({"x": x[:, 2:]}, {"a": x, "b": x.t(), "c": x[:, ::2]}):
        root = parse(sw.render_svg(**named))
        width = float(root.get("width"))
        for g in groups(root, "sws-arrow"):
            box = g.find(f"{SVG}rect")
            assert (
                float(box.get("x")) >= 0 and float(box.get("x")) + float(box.get("width")) <= width
            )
