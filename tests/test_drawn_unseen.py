"""A picture drawn inside a user's ``with sw.track_copies() as log:`` block adds nothing to the
user's log (review finding): reading the values it draws recorded a ``torch.Tensor.__getitem__``
copy of the user's, and ``torch.empty`` / ``aten.set_`` / ``torch.arange`` / ``numpy`` events
(22 events for ``sw.show(x.t())`` of a 3x4 tensor, whose own code made one view); so did
``log.show(i)`` of another log and the widget's post-cell check of its cells.

Oracle: the same block without the drawing (its events' calls, kinds and bytes)."""

from __future__ import annotations

import matplotlib
import pytest
import torch

import stridewidget as sw

matplotlib.use("Agg")


def _events(log) -> list[tuple]:
    return [(e.call, e.kind, e.bytes_copied) for e in log.events]


def _block(x: torch.Tensor, draw=None) -> list[tuple]:
    with sw.track_copies() as log:
        y = x.t()
        if draw is not None:
            draw(y)
        y.reshape(-1)  # a copy of the user's, after the drawing
    return _events(log)


def _formatted(y: torch.Tensor) -> None:
    from IPython.core.interactiveshell import InteractiveShell

    ip = InteractiveShell.instance()
    sw.enable(ip)
    try:
        data, _ = ip.display_formatter.format(y)
        assert "text/html" in data
    finally:
        sw.disable(ip)


def _widget_checked(y: torch.Tensor) -> None:
    widget = sw.show(y)
    assert widget.refresh_if_changed() is False  # its cells read again, none changed


def _fuzzed(y: torch.Tensor) -> None:
    assert sw.fuzz_layouts(lambda t: t[0].sum(), y).runs > 0


_LINEAR = torch.nn.Linear(3, 2)  # made outside the blocks: its making is the user's


def _graphed(y: torch.Tensor) -> None:
    assert len(sw.graph(_LINEAR, y).nodes) > 0


DRAWINGS = {
    "show": sw.show,
    "render_svg": sw.render_svg,
    "render_html": sw.render_html,
    "render_text": sw.render_text,
    "plot": sw.plot,
    "display after enable": _formatted,
    "a widget's post-cell check": _widget_checked,
    "playground": sw.playground,
    "fuzz_layouts": _fuzzed,
    "graph": _graphed,
}


@pytest.mark.parametrize("name", DRAWINGS)
def test_a_drawing_inside_a_block_adds_no_event(name):
    x = torch.arange(12.0).reshape(3, 4)
    alone = _block(x)
    assert [kind for _, kind, _ in alone] == ["view", "copy"]
    assert _block(x, DRAWINGS[name]) == alone


def test_a_compiled_capture_inside_a_block_says_so_and_leaves_torch_compile_working():
    """Review: under the block's modes torch.compile made no graph, blamed the recompile limit,
    and ran the model's code eagerly for good: later audits outside failed too."""

    class Transposes(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.linear = torch.nn.Linear(4, 4)

        def forward(self, z):
            return self.linear(z).t().contiguous()

    z, compiled = torch.randn(2, 4), torch.compile(Transposes())
    with sw.track_copies() as log, pytest.raises(ValueError, match="outside that block") as caught:
        sw.audit(compiled, z)
    assert "\n" not in str(caught.value) and log.events == []
    report = sw.audit(torch.compile(Transposes()), z)  # outside: compiled, its copy found
    assert [c.bytes for c in report.copies if c.stage == "forward"] == [z.numel() * 4]


def test_log_show_inside_another_block_adds_no_event():
    x = torch.arange(12.0).reshape(3, 4)
    with sw.track_copies() as first:
        x.t().reshape(-1)
    assert _block(x, lambda y: first.show(1)) == _block(x)
