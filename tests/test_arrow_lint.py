"""Issue 36 "Arrows": no two stride arrows run on top of each other, and no arrow runs through a
text (its own label included), over the visual-lint corpus and the issue's cases at 900 and
1,280 px.  The lint (``tests/arrow_lint.py``) is checked first on pictures made to break it."""

from __future__ import annotations

import pytest
import torch
from arrow_lint import lint
from e2e.lint_corpus import CASES, tensors_of

from stridewidget.render.picture import draw, scene_of
from stridewidget.render.primitives import Group, Path, Picture, Text


def _heads():
    q = torch.randn(2, 5, 32)
    return {"q": q, "h": q.view(2, 5, 4, 8).transpose(1, 2)}


ISSUE_CASES = {
    "5-d permuted": lambda: {
        "p": torch.arange(720.0).reshape(2, 3, 4, 5, 6).permute(4, 2, 0, 3, 1)
    },
    "expand of a 2-d": lambda: {"e": torch.arange(6.0).reshape(2, 3).expand(4, 2, 3)},
    "4-d": lambda: {"x": torch.arange(120.0).reshape(2, 3, 4, 5)},
    "4-d channels-last": lambda: {
        "c": torch.arange(120.0).reshape(2, 3, 4, 5).contiguous(memory_format=torch.channels_last)
    },
    "attention heads": _heads,
    # a held-out fuzz case (review): re-wrapped for its lanes, the strip had more rows, so more
    # arrows changed rows than the lanes left of it had room for: one ran through a row label
    "6-d transposed pair": lambda: (lambda x: {"x": x, "xt": x.transpose(0, -1)})(
        torch.arange(96.0).reshape(3, 1, 2, 4, 1, 4)
    ),
    # held-out fuzz (2026-12-04): three 5-D tensors over one storage start 15 arrows in its first
    # cell; their legs were spread 1.8 px apart over the cell's width (on top of each other)
    "5-d three views": lambda: (lambda x: {"x": x, "a": x[...], "b": x[...]})(
        torch.arange(32).reshape(2, 2, 2, 2, 2)
    ),
    "6-d diagonal and permuted": lambda: (
        lambda x: {"x": x, "d": x.diagonal(dim1=-2, dim2=-1), "p": x.permute(5, 1, 2, 3, 4, 0)}
    )(torch.arange(2800, dtype=torch.int32).reshape(7, 5, 5, 8, 2, 1)),
    # hostile review (2026-12-05): x[:, 1:]'s arrows start in x's next cell, where the label of
    # x's d1 +1 could not sit; it was set 150 px away, beside the slice's d0 arrowhead
    "a slice beside its base": lambda: (lambda x: {"x": x, "s": x[:, 1:]})(
        torch.arange(6.0).reshape(2, 3)
    ),
    "two expands of one row": lambda: (
        lambda x: {"x": x, "e": x.expand(4, 3), "f": x.expand(2, 3)}
    )(torch.arange(3.0)),
    # held-out fuzz (2026-12-05): no height of its label clear of every other channel, a
    # cross-row label's dotted line ran along another arrow's channel 1 px from it
    "four views, cross-row labels crowded": lambda: (
        lambda x: {
            "x": x,
            "w": x.flatten()[:10].as_strided((2, 3), (2, 0)),
            "e": x.unsqueeze(0).expand(3, 12, 7, 8),
            "t": x.transpose(0, 1),
        }
    )(torch.randn(12, 7, 8, generator=torch.Generator().manual_seed(0))),
    "a strided slice beside a broadcast": lambda: (
        lambda x: {"x": x, "s": x[:, ::3], "b": x.expand(3, 5, 100)}
    )(torch.arange(500.0).reshape(5, 100)),
}
PICTURES = [(f"corpus {c.name}", lambda c=c: (tensors_of(c), c.wrap)) for c in CASES] + [
    (f"issue {name}", lambda make=make: (make(), None)) for name, make in ISSUE_CASES.items()
]


def _picture(*items) -> Picture:
    return Picture(400, 200, "light", list(items), "t", [])


def _arrow(commands) -> Group:
    return Group("sws-arrow", [Path(commands, "#000")], {"tensor": "t0", "dim": "0"})


def test_the_lint_finds_arrows_on_top_of_each_other_and_through_text():
    one = _arrow([("M", 10, 100), ("L", 10, 50), ("L", 200, 50)])
    near = _arrow([("M", 300, 51), ("L", 100, 51), ("L", 100, 90)])  # 1 px under, parallel
    apart = _arrow([("M", 10, 120), ("L", 200, 120)])
    found = lint(_picture(one, near, apart))
    assert found.counts() == (1, 0, 0)
    label = Text(150, 54, "d0 +1", 11, "#000", anchor="middle")
    assert lint(_picture(one, label)).counts() == (0, 0, 1)
    assert lint(_picture(apart, label)).counts() == (0, 0, 0)
    curve = _arrow([("M", 10, 100), ("C", 10, 60, 40, 60, 40, 100)])
    assert (
        lint(_picture(curve, _arrow([("M", 10, 100), ("C", 10, 68, 40, 68, 40, 100)]))).counts()[0]
        == 1
    )


@pytest.mark.parametrize("width", [860, 900, 1280])
@pytest.mark.parametrize("name, make", PICTURES, ids=[name for name, _ in PICTURES])
def test_no_arrow_runs_on_another_or_through_a_text(name, make, width):
    tensors, wrap = make()
    found = lint(draw(scene_of(tensors, wrap=wrap), width=width))
    assert found.overlaps == [] and found.label_overlaps == [] and found.crossings == []
    assert found.strays == []


@pytest.mark.parametrize("seed", range(3))
def test_a_crowded_cross_row_labels_line_keeps_off_the_other_channels(seed):
    """Held-out fuzz (2026-12-05): windows of a 5-D tensor at 1,256 px; the dotted line of a
    cross-row label found no height 3 px clear of every other channel in its label's middle
    4 px and ran 1.5 px along one (it now tries the label's whole height)."""
    x = torch.randn(3, 1, 12, 6, 12, generator=torch.Generator().manual_seed(seed))
    views = {"x": x, "w0": x.unfold(-1, 3, 1), "view_" + "n" * 25 + "1": x.unfold(-1, 3, 1)}
    found = lint(draw(scene_of({**views, "v2": x}), width=1256))
    assert found.overlaps == [] and found.strays == []
