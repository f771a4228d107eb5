"""sw.plot: the matplotlib picture, checked against torch as the oracle."""

from __future__ import annotations

import io

import matplotlib

matplotlib.use("Agg")

import pytest
import torch
from matplotlib.colors import to_hex
from matplotlib.figure import Figure

import stridewidget as sw


def storage_address(t: torch.Tensor, index: tuple[int, ...]) -> int:
    element = t[index] if index else t
    return (element.data_ptr() - t.untyped_storage().data_ptr()) // t.element_size()


def cells_by_gid(fig: Figure, prefix: str) -> dict[str, object]:
    ax = fig.axes[0]
    return {p.get_gid(): p for p in ax.patches if (p.get_gid() or "").startswith(prefix)}


def texts(fig: Figure) -> list[str]:
    return [t.get_text() for t in fig.axes[0].texts]


def test_logical_cells_point_at_torchs_addresses():
    t = torch.arange(20.0).reshape(4, 5)[1:, ::2].t()
    fig = sw.plot(x=t)
    cells = cells_by_gid(fig, "lcell:")
    assert len(cells) == t.numel()
    for gid in cells:
        _, _, index, address = gid.split(":")
        assert int(address) == storage_address(t, tuple(int(i) for i in index.split(",")))


def test_untouched_storage_cells_are_grey_and_dashed():
    t = torch.arange(20.0).reshape(4, 5)[1:, ::2]
    read = {storage_address(t, (i, j)) for i in range(t.shape[0]) for j in range(t.shape[1])}
    cells = cells_by_gid(sw.plot(x=t), "scell:")
    assert len(cells) == 20
    for gid, patch in cells.items():
        cell = int(gid.split(":")[2])
        grey = to_hex(patch.get_facecolor()) == "#e4e4e4"
        assert grey == (cell not in read), cell
        assert (patch.get_linestyle() == "--") == (cell not in read)


def test_arrow_labels_are_torch_strides_and_repeat_counts_show():
    e = torch.arange(3.0).expand(4, 3)
    fig = sw.plot(e=e)
    labels = {s for s in texts(fig) if s.startswith("dim ")}
    assert labels == {f"dim {d}: +{e.stride(d)}" for d in range(e.ndim)}
    assert texts(fig).count("A×4") == 3  # each storage cell is read 4 times


def test_tensors_differ_by_hatch_and_mark_not_only_colour():
    x = torch.arange(6.0)
    fig = sw.plot(a=x, b=x[::2])
    strips = cells_by_gid(fig, "strip:")
    hatches = {
        gid.split(":")[1]: {
            p.get_hatch() for g, p in strips.items() if g.split(":")[1] == gid.split(":")[1]
        }
        for gid in strips
    }
    assert len(hatches["t0"]) == len(hatches["t1"]) == 1 and hatches["t0"] != hatches["t1"]
    # b reads every other cell of a's storage: its strips sit exactly there
    assert {int(g.split(":")[2]) for g in strips if g.split(":")[1] == "t1"} == {0, 2, 4}
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
