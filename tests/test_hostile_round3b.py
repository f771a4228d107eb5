"""Hostile inputs round 3, review follow-ups (issue 24): each test fails on the code before it."""

from __future__ import annotations

import itertools

import pytest
import torch
import traitlets

import stridewidget as sw
from stridewidget.cli import main as cli_main


# --- item 1: wrap is validated in Python, by one rule, on every path -------------------------
@pytest.mark.parametrize("wrap", [0, -3, 10**9, 2.5, True, "4"])
def test_item01_bad_wrap_refused_by_show_and_render_text(wrap):
    x = torch.arange(6.0)
    with pytest.raises((TypeError, ValueError), match="wrap"):
        sw.show(x, wrap=wrap)
    with pytest.raises((TypeError, ValueError), match="wrap"):
        sw.render_text(x, wrap=wrap)


def test_item01_wrap_trait_assignment_is_validated():
    x = torch.arange(6.0)
    widget = sw.show(x)
    with pytest.raises(traitlets.TraitError, match="positive int"):
        widget.wrap = -3
    widget.wrap = 4  # a good value still goes through, and reaches the static picture
    assert widget.wrap == 4
    assert sw.render_text(widget) == sw.render_text(x=x, wrap=4)
    widget.close()


def test_item01_cli_uses_the_same_wrap_rule():
    with pytest.raises(SystemExit, match="up to 1024"):
        cli_main(["--wrap", str(10**9), "torch.zeros(2)"])


# --- item 2: the playground takes ints as as_strided does ----------------------------------
@pytest.mark.parametrize(
    "kwargs",
    [
        {"size": (2.7, 3), "stride": (1, 1)},
        {"size": "34", "stride": (1, 1)},
        {"size": ("3",), "stride": (1,)},
        {"size": (True,), "stride": (1,)},
        {"storage_offset": 1.9},
    ],
)
def test_item02_playground_refuses_what_as_strided_refuses(kwargs):
    x = torch.arange(24.0)
    with pytest.raises(TypeError):  # torch's own answer for these arguments
        torch.as_strided(
            x,
            kwargs.get("size", (24,)),
            kwargs.get("stride", (1,)),
            kwargs.get("storage_offset", 0),
        )
    with pytest.raises(TypeError, match="must be"):
        sw.playground(x, **kwargs)


# --- item 3: sets, bytes-like and bools are no sizes (torch refuses them) -------------------
@pytest.mark.parametrize(
    "size",
    [{4, 3}, bytearray(b"\x03\x04"), torch.tensor([True, True]), (torch.tensor(True), 2)],
    ids=["set", "bytearray", "bool-tensor", "0d-bool-tensor"],
)
def test_item03_unordered_bytes_and_bool_sizes_refused(size):
    x = torch.arange(24.0)
    with pytest.raises((TypeError, RuntimeError)):  # torch refuses each of them
        torch.empty(size)
    with pytest.raises(TypeError, match="must be"):
        sw.as_strided(x, size, (1, 1))
    with pytest.raises(TypeError, match="must be"):
        sw.Layout(size, (1, 1))


def test_item03_endless_iterator_shape_is_bounded():
    with pytest.raises(sw.LayoutError, match="entries"):
        sw.Layout(itertools.repeat(1), (1,))


# --- item 10: options cannot collide with tensor names; bad option values are clear ---------
def test_item10_cli_tensor_named_like_an_option(tmp_path, capsys):
    page = tmp_path / "t.html"
    expr = "{'x': torch.ones(2), 'wrap': torch.ones(3)}"
    assert cli_main([expr, "--html", str(page)]) == 0
    out = capsys.readouterr().out
    assert "wrap: float32 (3):(1)" in out and page.exists()


@pytest.mark.parametrize("threshold", ["5", None, 2.5, -1])
def test_item10_bad_threshold_refused(threshold):
    with pytest.raises((TypeError, ValueError), match="threshold"):
        sw.show(torch.arange(100.0), threshold=threshold)


def test_item10_plot_refuses_a_non_axes():
    pytest.importorskip("matplotlib")
    with pytest.raises(TypeError, match="matplotlib Axes"):
        sw.plot(torch.arange(4.0), ax="a")


# --- item 11: enable() still shows a tensor whose repr raises ---------------------------------
class _ReprRaises(torch.Tensor):
    def __repr__(self, *args, **kwargs):
        raise RuntimeError("repr boom")


@pytest.mark.parametrize(
    "make",
    [lambda: torch.arange(4.0).as_subclass(_ReprRaises), lambda: torch.empty(4, dtype=torch.uint4)],
    ids=["raising-subclass-repr", "uint4"],
)
def test_item11_enable_shows_a_tensor_whose_repr_raises(make):
    from saved_fallback import displayed

    tensor = make()
    with pytest.raises(Exception):  # noqa: B017 - the premise: its own repr raises
        repr(tensor)
    data = displayed(tensor)
    assert "application/vnd.jupyter.widget-view+json" in data
    assert "storage" in data["text/plain"] and "<svg" in data["text/html"]


def test_minor_enable_and_disable_arguments(monkeypatch):
    with pytest.raises(TypeError, match="IPython shell"):
        sw.enable(5)
    with pytest.raises(TypeError, match="True or False"):
        sw.enable(numpy="no")
    monkeypatch.setattr("IPython.get_ipython", lambda: None)  # as in plain Python
    with pytest.raises(RuntimeError, match=r"disable\(\) works inside IPython"):
        sw.disable()


# --- item 12: the bench CLI checks its paths and threads before running ----------------------
@pytest.mark.parametrize(
    "argv",
    [["--json", "{folder}"], ["--plot", "{folder}"], ["--threads", "100000"]],
    ids=["json-folder", "plot-folder", "threads"],
)
def test_item12_bench_cli_refuses_bad_options_before_running(argv, tmp_path, monkeypatch):
    from stridewidget.bench import __main__ as bench_cli

    def must_not_run(*args, **kwargs):
        raise AssertionError("the benchmark ran before its options were checked")

    monkeypatch.setattr(bench_cli, "run", must_not_run)
    with pytest.raises(SystemExit) as exit_info:
        bench_cli.main([a.format(folder=tmp_path) for a in argv])
    assert exit_info.value.code == 2


# --- minor: Layout notes, allow_overlap, transpose of a 0-d tensor ----------------------------
def test_minor_layout_notes_is_a_tuple_of_strings():
    assert sw.Layout((3,), (1,), notes="conj").notes == ("conj",)
    with pytest.raises(TypeError, match="notes"):
        sw.Layout((3,), (1,), notes=None)


@pytest.mark.parametrize("flag", [0, "no", __import__("numpy").False_])
def test_minor_allow_overlap_must_be_a_bool(flag):
    with pytest.raises(TypeError, match="allow_overlap"):
        sw.as_strided(torch.arange(4.0), (2, 2), (1, 1), allow_overlap=flag)


def test_minor_transpose_of_a_0d_tensor_as_torch():
    x = torch.tensor(1.0)
    for dims in [(0, 0), (-1, 0)]:
        assert torch.equal(sw.tricks.transpose(x, *dims), x.transpose(*dims))
    with pytest.raises(sw.LayoutError):
        sw.tricks.transpose(x, 0, 1)
    with pytest.raises(IndexError):  # torch refuses it too
        x.transpose(0, 1)
