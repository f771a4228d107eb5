"""Issue 36, fit: the matplotlib picture keeps every text inside its figure, names in any script.

``sw.plot`` draws the texts Python laid out with matplotlib's DejaVu Sans Mono, letters it lacks
from DejaVu Sans (wider: ``ℵ`` 0.75 em where the layout gave 0.64).  A name of 60 ``ℵ`` ran 90 px
past the figure's right edge.  The oracle: matplotlib's own extent of each drawn text."""

from __future__ import annotations

import warnings

import pytest
import torch

matplotlib = pytest.importorskip("matplotlib")

import stridewidget as sw  # noqa: E402

NAMES = {
    "aleph": "ℵ" * 60,
    "math": "ℵ∑∫∂∇∞≤≥⊗⊕→⟶⟹‱" * 3,
    "digraphs": "ǄǅǆǇǈǉǊǋǌǱǲǳ" * 3,
    "greek-cyrillic": "αβγδεζηθλμπσωΩΣΔ_ЖжШшЩщЫыЮюЯя" * 2,
}


@pytest.mark.parametrize("name", NAMES.values(), ids=NAMES.keys())
def test_every_text_of_the_plot_is_inside_its_figure(name):
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # glyphs DejaVu lacks: matplotlib draws a box, says so
        figure = sw.plot(**{name: torch.arange(12.0).reshape(3, 4)})
        canvas = FigureCanvasAgg(figure)
        canvas.draw()
    renderer = canvas.get_renderer()
    edge = figure.bbox.width
    past = {
        text.get_text()[:20]: text.get_window_extent(renderer).x1 - edge
        for text in figure.axes[0].texts
    }
    assert max(past.values()) <= 0.5, {t: round(p, 1) for t, p in past.items() if p > 0.5}
