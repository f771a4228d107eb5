"""IPython integration: formatter on/off, %load_ext, after-cell refresh, no strong references."""

from __future__ import annotations

import contextlib
import gc
import warnings
import weakref

import numpy as np
import pytest
import torch
from IPython.core.interactiveshell import InteractiveShell

import stridewidget as sw
from stridewidget.notebook.live import (
    _post_run_cell,
    ensure_refresh_hook,
    live_widgets,
    refresh_live_widgets,
)

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


@pytest.fixture
def ip():
    shell = InteractiveShell.instance()
    yield shell
    sw.disable(shell)


def widget_of(model_id: str):
    return next(w for w in live_widgets() if w.model_id == model_id)


def hooked(ip) -> bool:
    return _post_run_cell in ip.events.callbacks["post_run_cell"]


def test_enable_gives_widget_torch_text_and_svg_then_disable_restores(ip):
    t = torch.arange(6.0).reshape(2, 3).t()
    assert sorted(ip.display_formatter.format(t)[0]) == ["text/plain"]
    sw.enable(ip)
    data, _ = ip.display_formatter.format(t)
    assert set(data) == {WIDGET_MIME, "text/plain", "text/html"}
    assert data["text/plain"] == repr(t)
    assert (
        data["text/html"].startswith('<div class="stridewidget-fallback"')
        and "<svg" in data["text/html"]
    )
    widget = widget_of(data[WIDGET_MIME]["model_id"])
    assert widget.scene["tensors"][0]["layout"]["strides"] == list(t.stride())
    sw.disable(ip)
    assert ip.display_formatter.format(t)[0] == {"text/plain": repr(t)}


def test_enable_twice_and_disable_restore_a_previous_formatter(ip):
    formatter = ip.display_formatter.mimebundle_formatter
    formatter.for_type_by_name("torch", "Tensor", lambda obj: {"text/plain": "mine"})
    try:
        sw.enable(ip)
        sw.enable(ip)  # idempotent: still undone by one disable
        assert WIDGET_MIME in ip.display_formatter.format(torch.zeros(1))[0]
        sw.disable(ip)
        assert ip.display_formatter.format(torch.zeros(1))[0]["text/plain"] == "mine"
    finally:
        formatter.pop("torch.Tensor", None)


def test_load_ext_and_unload_ext(ip):
    ip.run_line_magic("load_ext", "stridewidget")
    assert WIDGET_MIME in ip.display_formatter.format(torch.zeros(2))[0]
    ip.run_line_magic("unload_ext", "stridewidget")
    assert sorted(ip.display_formatter.format(torch.zeros(2))[0]) == ["text/plain"]


def test_numpy_only_when_asked(ip):
    a = np.arange(4.0)
    sw.enable(ip)
    assert WIDGET_MIME not in ip.display_formatter.format(a)[0]
    sw.enable(ip, numpy=True)
    data, _ = ip.display_formatter.format(a)
    assert WIDGET_MIME in data and data["text/plain"] == repr(a)


def test_tensors_without_a_strided_layout_keep_their_plain_repr(ip):
    sw.enable(ip)
    sparse = torch.eye(3).to_sparse()
    data, _ = ip.display_formatter.format(sparse)
    assert data == {"text/plain": repr(sparse)}


def test_widget_is_named_after_the_user_variable(ip):
    sw.enable(ip)
    ip.user_ns["weights"] = w = torch.ones(2)
    data, _ = ip.display_formatter.format(w)
    assert widget_of(data[WIDGET_MIME]["model_id"]).names == ["weights"]
    del ip.user_ns["weights"]


def test_write_through_a_view_refreshes_the_displayed_base_after_the_cell(ip):
    sw.enable(ip)
    ip.run_cell("import torch\nbase = torch.zeros(2, 3)")
    data, _ = ip.display_formatter.format(ip.user_ns["base"])
    widget = widget_of(data[WIDGET_MIME]["model_id"])
    assert widget.scene["storages"][0]["cells"]["text"][:3] == ["0.", "0.", "0."]
    ip.run_cell("base[0].fill_(7.0)")  # in place, through a view; the hook runs after the cell
    assert widget.scene["storages"][0]["cells"]["text"][:3] == ["7.", "7.", "7."]
    # unchanged tensors: no refresh
    assert refresh_live_widgets() == 0
    sw.disable(ip)
    # new tensors get their plain repr back, a widget already on screen keeps following its tensor
    assert sorted(ip.display_formatter.format(ip.user_ns["base"])[0]) == ["text/plain"]
    ip.run_cell("base.fill_(1.0)")
    assert widget.scene["storages"][0]["cells"]["text"][:1] == ["1."]
    widget.close()
    ip.run_cell("base.fill_(2.0)")  # closed: left out of the refresh
    assert widget.scene["storages"][0]["cells"]["text"][:1] == ["1."]
    del ip.user_ns["base"]


def test_enable_then_disable_keeps_refreshing_a_widget_from_show(ip):
    """The issue's case: sw.show(); enable(); disable() used to remove the hook the widget needed."""
    ip.run_cell("import torch, stridewidget as sw\nv = torch.zeros(3)\nw = sw.show(v=v)")
    sw.enable(ip)
    sw.disable(ip)
    assert hooked(ip)
    ip.run_cell("v.fill_(3.0)")
    assert ip.user_ns["w"].scene["storages"][0]["cells"]["text"] == ["3.", "3.", "3."]
    ip.user_ns["w"].close()
    for name in ("v", "w"):
        del ip.user_ns[name]


def test_disable_removes_only_the_hook_enable_added():
    from stridewidget.notebook import live as _live

    shell = InteractiveShell.instance()
    saved = _live._HOOK_REASONS.pop(id(shell), None)  # as if no widget was ever shown here
    with contextlib.suppress(ValueError):
        shell.events.unregister("post_run_cell", _post_run_cell)
    try:
        sw.enable(shell)
        assert hooked(shell)
        sw.disable(shell)
        assert not hooked(shell)  # enable added it, nothing else needs it: gone
        ensure_refresh_hook(shell, reason="widgets")
        sw.enable(shell)
        sw.disable(shell)
        assert hooked(shell)  # widgets need it: stays
    finally:
        if saved is not None:
            _live._HOOK_REASONS[id(shell)] = saved


def test_displayed_tensors_are_not_kept_alive(ip):
    sw.enable(ip)
    t = torch.zeros(1000)
    ref = weakref.ref(t)
    data, _ = ip.display_formatter.format(t)
    assert widget_of(data[WIDGET_MIME]["model_id"]).names == ["tensor"]  # not in user_ns
    del t, data
    gc.collect()
    assert ref() is None


def test_a_failing_widget_does_not_break_the_hook(ip, monkeypatch):
    sw.enable(ip)
    x = torch.zeros(2)
    good = sw.show(x=x)
    bad = sw.show(y=torch.zeros(2))

    def boom() -> bool:
        raise RuntimeError("broken")

    monkeypatch.setattr(bad, "refresh_if_changed", boom)
    x.add_(1)
    with pytest.warns(RuntimeWarning, match="broken"):
        assert refresh_live_widgets() >= 1
    assert good.scene["storages"][0]["cells"]["text"] == ["1.", "1."]
    x.add_(1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # said once: no second warning
        assert refresh_live_widgets() >= 1
    assert good.scene["storages"][0]["cells"]["text"] == ["2.", "2."]
    good.close()
    bad.close()
    assert good not in live_widgets()


def test_enable_outside_ipython_says_what_to_use(monkeypatch):
    import IPython

    monkeypatch.setattr(IPython, "get_ipython", lambda: None)
    with pytest.raises(RuntimeError, match="render_text"):
        sw.enable()


def test_refresh_hook_without_load_ext_for_widgets_shown_with_show(ip):
    ip.run_cell("import torch, stridewidget as sw\nv = torch.zeros(3)\nw = sw.show(v=v)")
    assert hooked(ip)  # sw.show installed it
    ip.run_cell("v[1:].fill_(2.0)")
    assert ip.user_ns["w"].scene["storages"][0]["cells"]["text"] == ["0.", "2.", "2."]
    # the formatter was never enabled: tensors keep their plain repr
    assert sorted(ip.display_formatter.format(ip.user_ns["v"])[0]) == ["text/plain"]
    ip.user_ns["w"].close()
    for name in ("v", "w"):
        del ip.user_ns[name]


def test_refresh_hook_outside_ipython_is_a_no_op(monkeypatch):
    import IPython

    monkeypatch.setattr(IPython, "get_ipython", lambda: None)
    assert ensure_refresh_hook() is False


def test_the_registry_holds_widgets_weakly_and_drops_closed_ones():
    shown = sw.show(x=torch.zeros(2))
    other = sw.show(y=torch.zeros(2))
    assert live_widgets()[-2:] == [shown, other]  # oldest first
    other.close()  # ipywidgets lets go of a closed widget; the registry must not hold it either
    assert other not in live_widgets()
    ref = weakref.ref(other)
    del other
    gc.collect()
    assert ref() is None
    assert shown in live_widgets()
    shown.close()
    assert shown not in live_widgets()


def test_labels_come_from_the_cell_source_in_ipython(ip):
    ip.run_cell(
        "import torch, stridewidget as sw\na = torch.arange(8)\nw = sw.show(a[::2])\n"
        "y = a\nv = sw.show(y)"
    )
    assert ip.user_ns["w"].names == ["a[::2]"]
    assert ip.user_ns["v"].names == ["y"]  # the alias the call uses, not the first one found
    for name in ("w", "v"):
        ip.user_ns[name].close()
    for name in ("a", "y", "w", "v"):
        del ip.user_ns[name]
