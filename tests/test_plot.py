"""sw.plot: the matplotlib picture, checked against torch as the oracle and measured with Agg."""

from __future__ import annotations

import io
import itertools

import matplotlib

matplotlib.use("Agg")

import pytest
import torch
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import to_hex
from matplotlib.figure import Figure

import stridewidget as sw
from stridewidget.style import STYLE


def storage_address(t: torch.Tensor, index: tuple[int, ...]) -> int:
    element = t[index] if index else t
    return (element.data_ptr() - t.untyped_storage().data_ptr()) // t.element_size()


def patches_by_gid(fig: Figure, prefix: str) -> dict[str, list]:
    found: dict[str, list] = {}
    for patch in fig.axes[0].patches:
        if (patch.get_gid() or "").startswith(prefix):
            found.setdefault(patch.get_gid(), []).append(patch)
    return found


def texts(fig: Figure) -> list[str]:
    return [t.get_text() for t in fig.axes[0].texts]


def test_logical_cells_point_at_torchs_addresses():
    t = torch.arange(20.0).reshape(4, 5)[1:, ::2].t()
    cells = patches_by_gid(sw.plot(x=t), "sws-lcell:")
    assert len(cells) == t.numel()
    for gid in cells:
        _, _, index, address = gid.split(":")
        assert int(address) == storage_address(t, tuple(int(i) for i in index.split(",")))


def test_untouched_storage_cells_are_grey_and_dashed():
    t = torch.arange(20.0).reshape(4, 5)[1:, ::2]
    read = {storage_address(t, (i, j)) for i in range(t.shape[0]) for j in range(t.shape[1])}
    cells = patches_by_gid(sw.plot(x=t), "sws-scell:")
    assert len(cells) == 20
    grey = STYLE["themes"]["light"]["untouched_bg"]
    for gid, (background, *_) in cells.items():
        cell = int(gid.split(":")[2])
        assert (to_hex(background.get_facecolor()) == grey) == (cell not in read), cell
        assert (background.get_linestyle() != "-") == (cell not in read)


def test_arrow_labels_are_torch_strides_and_repeat_counts_show():
    e = torch.arange(3.0).expand(4, 3)
    fig = sw.plot(e=e)
    labels = {s for s in texts(fig) if s.startswith("d")}
    assert labels == {f"d0 ×{e.stride(0)}", f"d1 +{e.stride(1)}"}
    assert texts(fig).count("A×4") == 3  # each storage cell is read 4 times


def test_tensors_differ_by_hatch_and_mark_not_only_colour():
    x = torch.arange(6.0)
    fig = sw.plot(a=x, b=x[::2])
    hatches: dict[str, set] = {"A": set(), "B": set()}
    for gid, patches in patches_by_gid(fig, "sws-scell:").items():
        strips = [p for p in patches if p.get_hatch() is not None or p.get_height() < 20]
        colours = {to_hex(p.get_facecolor()): p.get_hatch() for p in strips[1:]}
        cell = int(gid.split(":")[2])
        # b reads every other cell of a's storage: its strip sits exactly there
        assert (STYLE["tensor_colours"][1].lower() in colours) == (cell % 2 == 0)
        hatches["A"].add(colours.get(STYLE["tensor_colours"][0].lower()))
        hatches["B"].add(colours.get(STYLE["tensor_colours"][1].lower()))
    hatches["B"].discard(None)
    assert len(hatches["A"]) == len(hatches["B"]) == 1 and hatches["A"] != hatches["B"]
    assert {"A", "B"} <= set(texts(fig))


def test_names_are_plain_text_not_mathtext():
    fig = sw.plot(**{"$x^2$ <b>": torch.zeros(2)})
    title = next(t for t in fig.axes[0].texts if "$x^2$ <b>" in t.get_text())
    assert not title.get_parse_math()
    fig.savefig(io.BytesIO(), format="png")  # renders without a mathtext error


def test_draws_into_a_given_axes_and_saves():
    fig = Figure()
    ax = fig.add_subplot()
    assert sw.plot(torch.arange(4.0), ax=ax) is fig
    assert ax.patches
    for fmt in ("png", "svg", "pdf"):
        buffer = io.BytesIO()
        fig.savefig(buffer, format=fmt)
        assert buffer.getvalue()


def test_meta_and_huge_tensors_draw_addresses_and_stay_bounded():
    fig = sw.plot(m=torch.empty(10**9, device="meta"))
    assert len(fig.axes[0].patches) < 5000
    assert any(s.startswith("@") for s in texts(fig))


def test_bad_input():
    with pytest.raises(TypeError, match="nothing to draw"):
        sw.plot()
    with pytest.raises(ValueError, match="theme"):
        sw.plot(torch.zeros(2), theme="sepia")


# A spread of the lint corpus: wrapped strips, panels, many views, huge indices, presets.
PLOTTED = [
    "transpose", "unfold-step-1", "checkerboard-and-source", "nchw-wrap-20", "5d", "six-views",
    "crowded-readers", "meta-1e12", "random-values", "numpy-negative-strides", "long-name", "preset-seed-checkerboard",
]  # fmt: skip


@pytest.mark.parametrize("name", PLOTTED)
def test_no_text_sits_on_another_measured_by_agg(name):
    from e2e.lint_corpus import case_named, tensors_of

    case = case_named(name)
    fig = sw.plot(**tensors_of(case), wrap=case.wrap)
    renderer = FigureCanvasAgg(fig).get_renderer()  # Agg measures the glyphs it draws
    boxes = []
    for text in fig.axes[0].texts:
        extent = text.get_window_extent(renderer)
        size = text.get_fontsize() * fig.dpi / 72  # px: compare em boxes, as the browser lint
        middle = (extent.y0 + extent.y1) / 2
        boxes.append((text.get_text(), extent.x0, extent.x1, middle - size / 2, middle + size / 2))
    assert len(boxes) > 20
    overlapping = [
        (a[0], b[0])
        for a, b in itertools.combinations(boxes, 2)
        if min(a[2], b[2]) - max(a[1], b[1]) > 1 and min(a[4], b[4]) - max(a[3], b[3]) > 1
    ]
    assert overlapping == []
    width, height = fig.get_size_inches() * fig.dpi
    cut = [
        b[0]
        for b in boxes
        if b[1] < -0.5 or b[2] > width + 0.5 or b[3] < -0.5 or b[4] > height + 0.5
    ]
    assert cut == []
