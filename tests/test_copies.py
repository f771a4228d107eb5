"""Copy tracker: each case's classification is what PyTorch does on this version, checked twice.

The expected kind and ATen ops of every case were read off a plain pass-through TorchDispatchMode
(no stridewidget) on torch 2.13, and each test re-checks the fact behind the kind on the real
result, independently of the tracker: a ``view`` shares the input's storage, a ``copy`` does not,
an ``in-place`` call changed the input's values, ``bytes_copied`` is numel x itemsize of what was
written.
"""

from __future__ import annotations

import html
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch
from torch.overrides import _get_current_function_mode_stack
from torch.utils._python_dispatch import TorchDispatchMode, _get_current_dispatch_mode_stack

import stridewidget as sw
from stridewidget.copies.log import CopyEvent, CopyLog


def no_mode_active() -> bool:
    return not _get_current_function_mode_stack() and not _get_current_dispatch_mode_stack()


def base() -> torch.Tensor:
    return torch.arange(12.0).reshape(3, 4)


def nbytes(t: torch.Tensor) -> int:
    return t.numel() * t.element_size()


def only_event(log: CopyLog) -> CopyEvent:
    assert len(log.events) == 1, [(e.call, e.kind) for e in log.events]
    return log.events[0]


# (id, fn(x) -> result, call, kind, ATen ops).  x = arange(12.).reshape(3, 4), contiguous.
SINGLE_CALL_CASES = [
    ("view", lambda x: x.view(-1), "torch.Tensor.view", "view", ("aten.view",)),
    ("reshape viewable", lambda x: x.reshape(2, 6), "torch.Tensor.reshape", "view", ("aten.view",)),
    ("flatten contiguous", lambda x: x.flatten(), "torch.Tensor.flatten", "view", ("aten.view",)),
    ("torch.flatten", lambda x: torch.flatten(x), "torch.flatten", "view", ("aten.view",)),
    # contiguous() on a contiguous tensor returns the tensor itself: no ATen op at all.
    ("contiguous noop", lambda x: x.contiguous(), "torch.Tensor.contiguous", "view", ()),
    ("clone", lambda x: x.clone(), "torch.Tensor.clone", "copy", ("aten.clone",)),
    ("detach", lambda x: x.detach(), "torch.Tensor.detach", "view", ("aten.detach",)),
    ("t", lambda x: x.t(), "torch.Tensor.t", "view", ("aten.t",)),
    ("permute", lambda x: x.permute(1, 0), "torch.Tensor.permute", "view", ("aten.permute",)),
    ("expand", lambda x: x.expand(2, 3, 4), "torch.Tensor.expand", "view", ("aten.expand",)),
    ("repeat", lambda x: x.repeat(2, 1), "torch.Tensor.repeat", "copy", ("aten.repeat",)),
    ("narrow", lambda x: x.narrow(0, 1, 2), "torch.Tensor.narrow", "view", ("aten.slice",)),
    ("slice", lambda x: x[:, 1:], "torch.Tensor.__getitem__", "view", ("aten.slice",)),
    ("step slice", lambda x: x[::2], "torch.Tensor.__getitem__", "view", ("aten.slice",)),
    ("select", lambda x: x[1], "torch.Tensor.__getitem__", "view", ("aten.select",)),
    (
        "fancy index",
        lambda x: x[[0, 2]],
        "torch.Tensor.__getitem__",
        "copy",
        ("aten.lift_fresh", "aten.index"),
    ),
    ("flip", lambda x: x.flip(0), "torch.Tensor.flip", "copy", ("aten.flip",)),
    ("to float64", lambda x: x.to(torch.float64), "torch.Tensor.to", "copy", ("aten._to_copy",)),
    # .to() with the dtype and device it already has returns the tensor itself.
    ("to same dtype", lambda x: x.to(torch.float32), "torch.Tensor.to", "view", ()),
    ("x + 1", lambda x: x + 1, "torch.Tensor.add", "compute", ("aten.add",)),
    ("cat", lambda x: torch.cat([x, x]), "torch.cat", "copy", ("aten.cat",)),
    ("sum", lambda x: x.sum(0), "torch.Tensor.sum", "compute", ("aten.sum",)),
]


@pytest.mark.parametrize(
    ("fn", "call", "kind", "ops"),
    [case[1:] for case in SINGLE_CALL_CASES],
    ids=[case[0] for case in SINGLE_CALL_CASES],
)
def test_single_call_is_classified_by_what_torch_did(fn, call, kind, ops):
    x = base()
    with sw.track_copies() as log:
        result = fn(x)
    event = only_event(log)
    assert (event.call, event.kind, event.ops) == (call, kind, ops)
    # The fact behind the kind, on the real result, independent of the tracker.
    shares = sw.same_storage(result, x)
    assert event.aliases_input == shares
    assert event.allocated == (not shares)
    assert event.returned_input == (result is x)
    assert event.bytes_copied == (nbytes(result) if kind == "copy" else 0)
    assert kind != "view" or shares
    assert kind != "copy" or not shares
    assert event.inputs[0] == sw.inspect(x)
    assert event.outputs[0] == sw.inspect(result)
    assert log.total_bytes == event.bytes_copied
    assert log.copies == ([event] if kind == "copy" else [])


@pytest.mark.parametrize(
    ("fn", "call", "ops"),
    [
        (lambda x: x.t().reshape(-1), "torch.Tensor.reshape", ("aten.clone", "aten._unsafe_view")),
        (lambda x: x[:, 1:].flatten(), "torch.Tensor.flatten", ("aten.clone", "aten._unsafe_view")),
        (lambda x: x.t().contiguous(), "torch.Tensor.contiguous", ("aten.clone",)),
        (lambda x: x.mT.reshape(12), "torch.Tensor.reshape", ("aten.clone", "aten._unsafe_view")),
    ],
    ids=["t().reshape", "slice.flatten", "t().contiguous", "mT.reshape"],
)
def test_non_viewable_input_makes_reshape_flatten_contiguous_copy(fn, call, ops):
    x = base()
    with sw.track_copies() as log:
        result = fn(x)
    first, second = log.events  # the view that makes x non-viewable, then the copying call
    assert first.kind == "view" and first.ops and not first.bytes_copied
    assert (second.call, second.kind, second.ops) == (call, "copy", ops)
    assert not sw.same_storage(result, x)
    assert second.bytes_copied == nbytes(result) == log.total_bytes
    assert log.copies == [second]
    assert not second.inputs[0].is_contiguous and second.outputs[0].is_contiguous


def test_view_on_non_viewable_input_raises_and_records_nothing():
    x = base()
    with sw.track_copies() as log:
        transposed = x.t()
        with pytest.raises(RuntimeError, match="view size is not compatible"):
            transposed.view(-1)
    assert [e.call for e in log.events] == ["torch.Tensor.t"]


def test_matmul_of_transposed_input_computes_without_a_hidden_copy():
    x, y = base(), torch.randn(3, 5, generator=torch.Generator().manual_seed(0))
    with sw.track_copies() as log:
        result = x.T @ y
    transpose, product = log.events
    assert (transpose.call, transpose.kind, transpose.ops) == (
        "torch.Tensor.T.__get__",
        "view",
        ("aten.permute",),
    )
    assert (product.call, product.kind, product.ops) == (
        "torch.Tensor.matmul",
        "compute",
        ("aten.mm",),
    )
    assert log.total_bytes == 0 and not log.copies
    # float32 sums in another order: an entry near 0 needs an absolute tolerance too
    np.testing.assert_allclose(result.numpy(), x.numpy().T @ y.numpy(), rtol=1e-5, atol=1e-5)


def test_elementwise_on_non_contiguous_input_computes_in_its_layout():
    x = base()
    transposed = x.t()
    with sw.track_copies() as log:
        result = transposed + 1
    event = only_event(log)
    assert (event.kind, event.ops, event.bytes_copied) == ("compute", ("aten.add",), 0)
    # TensorIterator keeps the input's memory order: no contiguous copy was made first.
    assert result.stride() == transposed.stride() == (1, 4)
    assert event.outputs[0].strides == (1, 4)


def test_numpy_shares_memory_and_is_a_view():
    x = base()
    with sw.track_copies() as log:
        array = x.numpy()
    event = only_event(log)
    assert (event.call, event.kind, event.ops) == ("torch.Tensor.numpy", "view", ("aten.detach",))
    assert np.shares_memory(array, x.numpy())
    assert event.outputs[0] == sw.inspect(array)


def test_from_numpy_is_seen_only_as_its_aten_op_and_is_a_view():
    array = np.arange(6.0)
    with sw.track_copies() as log:
        tensor = torch.from_numpy(array)
    # torch.from_numpy does not go through __torch_function__: only the op it runs is seen.
    event = only_event(log)
    assert (event.call, event.kind, event.ops) == ("aten.lift_fresh", "view", ("aten.lift_fresh",))
    assert event.returned_input
    assert np.shares_memory(tensor.numpy(), array) and sw.same_storage(tensor, array)


def test_in_place_ops():
    x = base()
    y = torch.full((3, 5), -1.0)
    buffer = torch.zeros(24)
    before = x.clone()
    with sw.track_copies() as log:
        x.add_(1)
        x[0] = 5
        x[1] = y[0, :4]
        x.copy_(before)
        torch.cat([x, x], out=buffer.view(6, 4))
    calls = [(e.call, e.kind, e.ops) for e in log.events]
    assert calls == [
        ("torch.Tensor.add_", "in-place", ("aten.add_",)),
        ("torch.Tensor.__setitem__", "in-place", ("aten.lift_fresh", "aten.select", "aten.fill_")),
        ("torch.Tensor.__getitem__", "view", ("aten.select", "aten.slice")),
        ("torch.Tensor.__setitem__", "in-place", ("aten.select", "aten.copy_")),
        ("torch.Tensor.copy_", "in-place", ("aten.copy_",)),
        ("torch.Tensor.view", "view", ("aten.view",)),
        ("torch.cat", "in-place", ("aten.cat",)),
    ]
    add, fill, _, row_copy, full_copy, _, cat = log.events
    assert add.returned_input and add.wrote_input and not add.allocated
    assert fill.wrote_input and not fill.outputs and fill.bytes_copied == 0
    assert row_copy.bytes_copied == 4 * 4 and full_copy.bytes_copied == nbytes(x)
    assert cat.bytes_copied == nbytes(buffer)
    assert log.copies == []  # nothing moved into *new* storage
    assert log.total_bytes == 16 + nbytes(x) + nbytes(buffer)
    torch.testing.assert_close(x, before)
    torch.testing.assert_close(buffer, torch.cat([before, before]).view(-1))


def test_copy_into_a_buffer_the_call_allocated_is_a_copy():
    x = base()
    with sw.track_copies() as log:
        out = torch.empty_like(x.t()).copy_(x.t())
    assert [e.kind for e in log.events] == ["view", "compute", "view", "in-place"]
    assert log.events[-1].bytes_copied == nbytes(out)


def test_writes_are_known_from_the_aten_schema():
    x = base()
    bn = torch.nn.BatchNorm1d(4)
    running_mean = bn.running_mean.clone()
    with sw.track_copies() as log:
        result = bn(x)
    assert [(e.call, e.kind, e.ops) for e in log.events] == [
        ("torch.Tensor.add_", "in-place", ("aten.add_",)),  # num_batches_tracked += 1
        ("torch.nn.functional.batch_norm", "compute", ("aten.empty", "aten.native_batch_norm")),
    ]
    assert not sw.same_storage(result, x)
    # native_batch_norm does update the running stats, but its schema does not mark them as
    # written (`Tensor? running_mean`, no `(a!)`); the schema is all the tracker reads.
    assert not torch.equal(bn.running_mean, running_mean)
    assert not log.events[1].wrote_input


@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("grad_mode", ["enabled", "no_grad"])
def test_autograd_and_no_grad_do_not_change_the_classification(requires_grad, grad_mode):
    x = base().requires_grad_(requires_grad)
    context = torch.no_grad() if grad_mode == "no_grad" else torch.enable_grad()
    with context, sw.track_copies() as log:
        y = x.t().reshape(-1)
        v = x.view(-1)
        c = x.contiguous()
    assert [(e.call, e.kind) for e in log.events] == [
        ("torch.Tensor.t", "view"),
        ("torch.Tensor.reshape", "copy"),
        ("torch.Tensor.view", "view"),
        ("torch.Tensor.contiguous", "view"),
    ]
    assert not sw.same_storage(y, x) and sw.same_storage(v, x) and c is x
    assert y.requires_grad == (requires_grad and grad_mode == "enabled")


def test_backward_inside_the_block_is_one_event_and_gradients_are_right():
    x = base().requires_grad_(True)
    with sw.track_copies() as log:
        loss = (x.t().reshape(-1) * 2).sum()
        loss.backward()
    assert [e.call for e in log.events] == [
        "torch.Tensor.t",
        "torch.Tensor.reshape",
        "torch.Tensor.mul",
        "torch.Tensor.sum",
        "torch.Tensor.backward",
    ]
    assert len(log.events[-1].ops) > 0
    torch.testing.assert_close(x.grad, torch.full((3, 4), 2.0))


def test_only_the_outermost_call_is_recorded():
    query = torch.randn(5, 2, 8)
    attention = torch.nn.MultiheadAttention(8, 2)
    with sw.track_copies() as log:
        attention(query, query, query)
    # nn.MultiheadAttention.forward is plain Python; F.multi_head_attention_forward is the one
    # torch call it makes, and the dozens of torch calls inside that belong to it.
    assert [e.call for e in log.events] == ["torch.nn.functional.multi_head_attention_forward"]
    assert len(log.events[0].ops) > 10


class _CountOps(TorchDispatchMode):
    def __init__(self) -> None:
        super().__init__()
        self.ops: list[str] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.append(f"aten.{func.overloadpacket.__name__}")
        return func(*args, **(kwargs or {}))


def test_every_aten_op_belongs_to_exactly_one_event():
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True)
    src = torch.randn(2, 5, 16)
    array = np.ones(3)

    def snippet() -> None:
        layer.zero_grad(set_to_none=True)  # both runs create .grad (not accumulate into it)
        layer(src).sum().backward()
        torch.from_numpy(array).add(1)

    with _CountOps() as counter:
        snippet()
    with sw.track_copies() as log:
        snippet()
    assert [op for event in log.events for op in event.ops] == counter.ops


def test_source_line_is_the_users_line():
    x = base()
    with sw.track_copies() as log:
        line = sys._getframe().f_lineno + 1
        torch.nn.functional.relu(x.t())
    assert {(e.filename, e.line) for e in log.events} == {(__file__, line)}
    assert log.events[0].location.endswith(f"test_copies.py:{line}")


def test_source_line_in_a_notebook_cell_names_the_cell():
    code = textwrap.dedent(
        """
        from IPython.core.interactiveshell import InteractiveShell
        shell = InteractiveShell.instance()
        shell.run_cell("import torch, stridewidget as sw", store_history=True)
        shell.run_cell(
            "x = torch.ones(2, 3)\\nwith sw.track_copies() as log:\\n    y = x.t().contiguous()",
            store_history=True,
        )
        print([e.location for e in shell.user_ns["log"].events])
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "['In[2], line 3', 'In[2], line 3']"


def test_nested_blocks_each_see_every_call():
    x = base()
    with sw.track_copies() as outer:
        x.clone()
        with sw.track_copies() as inner:
            x.t().reshape(-1)
        x.view(-1)
    assert [(e.call, e.kind, e.ops) for e in inner.events] == [
        ("torch.Tensor.t", "view", ("aten.t",)),
        ("torch.Tensor.reshape", "copy", ("aten.clone", "aten._unsafe_view")),
    ]
    assert [(e.call, e.kind, e.ops) for e in outer.events] == [
        ("torch.Tensor.clone", "copy", ("aten.clone",)),
        *[(e.call, e.kind, e.ops) for e in inner.events],
        ("torch.Tensor.view", "view", ("aten.view",)),
    ]
    assert outer.total_bytes == 2 * nbytes(x) and inner.total_bytes == nbytes(x)
    assert no_mode_active()


def test_no_mode_is_left_active_even_when_the_block_raises():
    x = base()
    assert no_mode_active()
    with pytest.raises(ZeroDivisionError), sw.track_copies() as log:
        x.clone()
        assert not no_mode_active() and log.active
        1 / 0  # noqa: B018
    assert no_mode_active() and not log.active
    assert not torch.overrides.has_torch_function((x,))
    assert len(log.events) == 1
    x.clone()  # after the block: not recorded
    assert len(log.events) == 1


def test_a_failing_torch_call_inside_the_block_is_not_recorded_and_tracking_continues():
    x = base()
    with sw.track_copies() as log:
        with pytest.raises(RuntimeError):
            x.view(5)
        x.clone()
    assert [e.call for e in log.events] == ["torch.Tensor.clone"]


def test_meta_tensors_device_agnostic_path():
    # Meta tensors have storages without memory (data_ptr 0), like nothing on CPU: aliasing must
    # come from storage identity, and nothing may read values.
    x = torch.empty(1000, 3000, device="meta")
    with sw.track_copies() as log:
        y = x.t().reshape(-1)
        z = x.view(-1)
        w = x[:, ::2].to(torch.float16)
    assert [(e.call, e.kind) for e in log.events] == [
        ("torch.Tensor.t", "view"),
        ("torch.Tensor.reshape", "copy"),
        ("torch.Tensor.view", "view"),
        ("torch.Tensor.__getitem__", "view"),
        ("torch.Tensor.to", "copy"),
    ]
    assert log.total_bytes == nbytes(y) + nbytes(w)
    assert log.events[1].outputs[0].device == "meta" and z.device.type == "meta"


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_cuda_tensors():
    x = torch.arange(12.0, device="cuda").reshape(3, 4)
    with sw.track_copies() as log:
        y = x.t().reshape(-1)
        v = x.view(-1)
        h = x.to("cpu")
    assert [(e.call, e.kind) for e in log.events] == [
        ("torch.Tensor.t", "view"),
        ("torch.Tensor.reshape", "copy"),
        ("torch.Tensor.view", "view"),
        ("torch.Tensor.to", "copy"),
    ]
    assert log.total_bytes == nbytes(y) + nbytes(h) and sw.same_storage(v, x)
    assert log.events[1].outputs[0].device == "cuda:0"


def test_log_keeps_no_tensor_alive():
    import gc
    import weakref

    with sw.track_copies() as log:
        big = torch.zeros(1000).clone()
    ref = weakref.ref(big)
    del big
    gc.collect()
    assert ref() is None
    assert log.events[0].outputs[0].numel == 1000  # the layout was recorded, not the tensor


def test_table_text_and_html_escape_every_string():
    x = base()
    code = compile("y = x.t().reshape(-1)", "<img src=x onerror=alert(1)>", "exec")
    with sw.track_copies() as log:
        exec(code, {"x": x})
    text = repr(log)
    assert "2 events" in text and "1 copy" in text and "48 B copied" in text
    assert "Tensor.reshape" in text and "aten.clone aten._unsafe_view" in text
    rendered = log._repr_html_()
    assert "<img" not in rendered
    assert html.escape("<img src=x onerror=alert(1)>:1") in rendered
    assert rendered.count("<tr") == 3  # header + two events


def _over_its_storage(drawn, tensor) -> bool:
    """``drawn`` is a view of ``tensor``'s storage in its layout, with its values."""
    return (
        drawn is not tensor
        and sw.inspect(drawn) == sw.inspect(tensor)
        and torch.equal(drawn, tensor)
        and drawn.untyped_storage().data_ptr() == tensor.untyped_storage().data_ptr()
    )


def test_show_draws_the_chosen_events_source_and_result(monkeypatch):
    drawn = {}
    monkeypatch.setattr(
        "stridewidget.notebook.widget.show",
        lambda *args, **kwargs: drawn.update(kwargs) or "widget",
    )
    x = base()
    with sw.track_copies() as log:
        y = x.t().reshape(-1)
    assert log.show(1) == "widget"
    # the source was the temporary x.t(), freed since: its recorded layout (no values) is drawn;
    # the log holds no tensor after the block (swap_tensors), so y is drawn over its storage
    assert drawn["src"] == sw.inspect(x.t()) and _over_its_storage(drawn["dst"], y)
    assert log.show(-2) == "widget"
    assert _over_its_storage(drawn["src"], x) and drawn["dst"] == sw.inspect(x.t())
    with pytest.raises(IndexError, match="no event 5; this log has 2 events"):
        log.show(5)


def test_show_with_the_widget_puts_a_copy_on_its_own_storage():
    x = base()
    with sw.track_copies() as log:
        transposed = x.t()
        flat = transposed.reshape(-1)
    view_widget, copy_widget = log.show(0), log.show(1)
    assert isinstance(copy_widget, sw.StrideWidget)
    assert copy_widget.names == view_widget.names == ["src", "dst"]
    storages = [[t["storage"] for t in w.scene["tensors"]] for w in (view_widget, copy_widget)]
    assert storages[0][0] == storages[0][1]  # x.t() draws on x's storage
    assert storages[1][0] != storages[1][1]  # the reshape's result has a storage of its own
    assert sw.same_storage(transposed, x) and not sw.same_storage(flat, x)


@pytest.mark.filterwarnings("ignore::UserWarning")  # torch's own sparse/nested prototype warnings
def test_tensors_without_strides_are_recorded_without_a_layout():
    indices, values = torch.tensor([[0, 1], [1, 0]]), torch.tensor([3.0, 4.0])
    with sw.track_copies() as log:
        sparse = torch.sparse_coo_tensor(indices, values, (2, 2))
        dense = sparse.to_dense()
        nested = torch.nested.nested_tensor([torch.ones(2), torch.ones(3)])
    calls = {e.call: e for e in log.events}
    assert calls["torch.sparse_coo_tensor"].outputs == (None,)
    assert calls["torch.Tensor.to_dense"].inputs == (None,)
    assert calls["torch.Tensor.to_dense"].outputs[0] == sw.inspect(dense)
    assert nested.is_nested and "(no strides)" in repr(log)


# Property: whatever chain of layout-changing calls runs, each event's kind agrees with storage
# identity and with the ATen ops torch actually ran (seen by an independent counting mode).
CHAIN_STEPS = {
    "t": lambda t: t.t() if t.dim() == 2 else t.transpose(0, -1),
    "flip": lambda t: t.flip(0),
    "slice": lambda t: t[::2],
    "narrow": lambda t: t.narrow(-1, 0, max(1, t.shape[-1] // 2)),
    "reshape": lambda t: t.reshape(-1),
    "flatten": lambda t: t.flatten(),
    "contiguous": lambda t: t.contiguous(),
    "clone": lambda t: t.clone(),
    "unsqueeze": lambda t: t.unsqueeze(0),
    "expand": lambda t: t.unsqueeze(0).expand(2, *t.shape),
    "to64": lambda t: t.to(torch.float64),
    "add": lambda t: t + 1,
    "pad": lambda t: torch.nn.functional.pad(t, (1, 0)),
    "reflect pad": lambda t: (
        torch.nn.functional.pad(t, (1, 1), mode="reflect")
        if t.dim() in (2, 3) and t.shape[-1] > 1
        else t.flip(0)
    ),
}


def layout_twin(t: torch.Tensor) -> torch.Tensor:
    """A tensor with ``t``'s layout (shape, strides, offset, storage size), made with autograd on:
    inference tensors skip autograd, and with it the decomposition of composite ops."""
    storage = torch.zeros(t.untyped_storage().nbytes() // t.element_size(), dtype=t.dtype)
    return storage.as_strided(t.shape, t.stride(), t.storage_offset())


@pytest.mark.parametrize("seed", range(40))
def test_random_chains_kind_matches_storage_identity(seed):
    generator = torch.Generator().manual_seed(seed)
    names = list(CHAIN_STEPS)
    picks = torch.randint(len(names), (6,), generator=generator).tolist()
    current = torch.arange(24.0).reshape(2, 3, 4) if seed % 2 else torch.arange(24.0).reshape(4, 6)
    for pick in picks:
        step = CHAIN_STEPS[names[pick]]
        # every third chain runs with autograd off: the tracker must see the same ops
        with torch.inference_mode(seed % 3 == 0), sw.track_copies() as log:
            after = step(current)
        twin = layout_twin(current)
        with _CountOps() as counter:  # on a twin made outside inference mode, autograd on
            step(twin)
        assert [op for e in log.events for op in e.ops] == counter.ops, names[pick]
        event = log.events[-1]  # the call that returned `after` (expand is unsqueeze + expand)
        assert event.outputs[0] == sw.inspect(after)
        shares = sw.same_storage(after, current)
        copied = any(op in COPYING for op in counter.ops)
        if event.kind == "view":
            assert shares and not copied, names[pick]
        elif event.kind == "copy":
            assert copied and not shares, names[pick]
            assert log.total_bytes == nbytes(after)
        else:
            assert event.kind == "compute" and not copied and not shares, names[pick]
        current = after


COPYING = {
    "aten.clone",
    "aten.flip",
    "aten._to_copy",
    "aten.constant_pad_nd",
    "aten.reflection_pad1d",
    "aten.reflection_pad2d",
}


# --- issue 12: inference mode, in-place metadata ops, wrapper subclasses, bounded caches ----------


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: x.t().contiguous(),
        lambda x: x.t().reshape(-1),
        lambda x: x[:, 1:].flatten(),
        lambda x: x.contiguous(),
        lambda x: x.reshape(2, 6),
    ],
    ids=["t().contiguous", "t().reshape", "slice.flatten", "contiguous noop", "reshape viewable"],
)
def test_inference_mode_sees_the_ops_that_do_the_work(fn):
    # With autograd off, CompositeImplicitAutograd ops (contiguous, reshape, flatten) reach the
    # dispatch mode undecomposed; the tracker must still see the clone inside them.
    x = base()
    with _CountOps() as counter:  # the reference: the ops torch runs with autograd on
        expected = fn(x)
    with torch.inference_mode():
        x = base()
        with sw.track_copies() as log:
            result = fn(x)
    event = log.events[-1]
    assert [op for e in log.events for op in e.ops] == counter.ops
    copied = "aten.clone" in counter.ops
    assert event.kind == ("copy" if copied else "view")
    assert event.bytes_copied == (nbytes(result) if copied else 0) == log.total_bytes
    assert sw.same_storage(result, x) == (not copied)
    torch.testing.assert_close(result, expected)


def test_inference_mode_op_outside_any_call_is_one_event():
    # torch.from_numpy runs aten.lift_fresh outside __torch_function__: one event, as without it.
    with torch.inference_mode(), sw.track_copies() as log:
        tensor = torch.from_numpy(np.arange(3.0))
    assert [(e.call, e.kind) for e in log.events] == [("aten.lift_fresh", "view")]
    assert tensor.is_inference()


@pytest.mark.parametrize(
    ("call", "step"),
    [
        ("torch.Tensor.t_", lambda t: t.t_()),
        ("torch.Tensor.unsqueeze_", lambda t: t.unsqueeze_(0)),
        ("torch.Tensor.squeeze_", lambda t: t.squeeze_()),
        ("torch.Tensor.transpose_", lambda t: t.transpose_(0, 1)),
        ("torch.Tensor.resize_", lambda t: t.resize_(10)),
        ("torch.Tensor.as_strided_", lambda t: t.as_strided_((2,), (2,))),
    ],
)
def test_in_place_metadata_ops_record_the_input_as_it_was(call, step):
    x = torch.zeros(2, 4)[:1, 1:]
    before = sw.inspect(x)
    with sw.track_copies() as log:
        step(x)
    event = only_event(log)
    assert (event.call, event.kind, event.returned_input) == (call, "in-place", True)
    assert event.inputs[0] == before != sw.inspect(x)
    assert event.outputs[0] == sw.inspect(x)


def test_wrapper_subclass_is_classified_by_the_tensors_it_wraps():
    from torch.testing._internal.two_tensor import TwoTensor

    x = TwoTensor(base(), base() * 2)
    with sw.track_copies() as log:
        transposed = x.t()
        x.add_(1)
        added = x + 1
        cloned = x.clone()
    assert [(e.call, e.kind) for e in log.events] == [
        ("torch.Tensor.t", "view"),
        ("torch.Tensor.add_", "in-place"),
        ("torch.Tensor.add", "compute"),
        ("torch.Tensor.clone", "copy"),
    ]
    # the facts, on the wrapped tensors themselves
    assert sw.same_storage(transposed.a, x.a) and sw.same_storage(transposed.b, x.b)
    for result in (added, cloned):
        assert not sw.same_storage(result.a, x.a) and not sw.same_storage(result.b, x.b)
    assert log.events[-1].bytes_copied == nbytes(cloned.a) + nbytes(cloned.b)
    torch.testing.assert_close(x.a, base() + 1)


def test_the_tracker_keeps_no_code_object_of_the_users():
    import gc
    import weakref

    x = base()
    code_refs = []
    with sw.track_copies() as log:
        for i in range(2000):
            namespace: dict = {}
            exec(compile("def f(t):\n    return t.t()", f"<generated {i}>", "exec"), namespace)
            namespace["f"](x)
            code_refs.append(weakref.ref(namespace["f"].__code__))
            del namespace
    gc.collect()
    assert len(log.events) == 2000 and log.events[-1].filename == "<generated 1999>"
    assert sum(ref() is not None for ref in code_refs) == 0


def _quantized() -> torch.Tensor:
    with __import__("warnings").catch_warnings():
        __import__("warnings").simplefilter("ignore", UserWarning)  # torch's deprecation notice
        return torch.quantize_per_tensor(torch.ones(6), 0.1, 0, torch.quint8)


@pytest.mark.parametrize(
    "make",
    [
        lambda: torch.tensor([1 + 2j, 3j]).conj(),
        lambda: torch._neg_view(torch.tensor([1.5, -2.0])),
        _quantized,
        lambda: torch.empty(3, 4, device="meta").t(),
        lambda: base()[:, 1::2],
    ],
    ids=["conj", "neg", "quantized", "meta", "strided"],
)
def test_recorded_layouts_are_the_inspectors_with_all_its_notes(make):
    x = make()
    with sw.track_copies() as log:
        y = x[1:]
    event = only_event(log)
    assert event.inputs[0] == sw.inspect(x) and event.inputs[0].notes == sw.inspect(x).notes
    assert event.outputs[0] == sw.inspect(y) and event.outputs[0].notes == sw.inspect(y).notes


# --- issue 12: pure data movement is a copy, decided from each op's decomposition ----------------
F = torch.nn.functional
# random values: a sum, product or mean of them is (almost surely) none of them
_VALUES = torch.rand(60, generator=torch.Generator().manual_seed(12), dtype=torch.float64)
IMAGE, MATRIX = _VALUES[:48].reshape(1, 4, 3, 4), _VALUES[48:].reshape(3, 4)

# fn(image, matrix) -> a tensor whose values are the inputs' values, moved (or a constant 0 fill)
DATA_MOVEMENT = {
    "pad constant": lambda x, m: F.pad(x, (1, 2)),
    "pad reflect": lambda x, m: F.pad(x, (1, 1, 1, 1), mode="reflect"),
    "pad replicate": lambda x, m: F.pad(x, (1, 1, 1, 1), mode="replicate"),
    "pad circular": lambda x, m: F.pad(x, (1, 1, 1, 1), mode="circular"),
    "pixel_shuffle": lambda x, m: F.pixel_shuffle(x, 2),
    "pixel_unshuffle": lambda x, m: F.pixel_unshuffle(x[..., :2, :], 2),
    "unfold": lambda x, m: F.unfold(x, 2),
    "diag_embed": lambda x, m: torch.diag_embed(m),
    "tril": lambda x, m: m.tril(),
    "nearest upsample": lambda x, m: F.interpolate(x, scale_factor=2),
    "masked_fill": lambda x, m: m.masked_fill(m > 0.5, 0.0),
    "index_put": lambda x, m: m.index_put(
        (torch.tensor([0, 2]),), torch.zeros(2, 4, dtype=m.dtype)
    ),
    "embedding": lambda x, m: F.embedding(torch.tensor([2, 0]), m),
    "channel_shuffle": lambda x, m: F.channel_shuffle(x, 2),
}
# fn(image, matrix) -> new values computed from the inputs (sums, products, comparisons)
COMPUTE = {
    "fold (sums overlaps)": lambda x, m: F.fold(F.unfold(x, 2).contiguous(), (3, 4), 2),
    "bilinear upsample": lambda x, m: F.interpolate(x, scale_factor=2, mode="bilinear"),
    "index_put accumulate": lambda x, m: m.index_put(
        (torch.tensor([0, 0]),), torch.ones(2, 4, dtype=m.dtype), accumulate=True
    ),
    "softmax": lambda x, m: m.softmax(0),
    "cumsum": lambda x, m: m.cumsum(0),
    "x + 1": lambda x, m: m + 1,
    "relu (compares values)": lambda x, m: F.relu(m - 0.5),
    "max_pool (compares values)": lambda x, m: F.max_pool2d(x, 2),
    "zeros_like (no input value)": lambda x, m: torch.zeros_like(m),
}


def only_moved_values(result: torch.Tensor) -> bool:
    """Brute force: is every value of ``result`` one of the inputs' values, or the fill 0?"""
    allowed = set(IMAGE.flatten().tolist()) | set(MATRIX.flatten().tolist()) | {0.0}
    return set(result.flatten().tolist()) <= allowed


@pytest.mark.parametrize("inference", [False, True], ids=["autograd", "inference_mode"])
@pytest.mark.parametrize("fn", DATA_MOVEMENT.values(), ids=DATA_MOVEMENT.keys())
def test_pure_data_movement_is_a_copy(fn, inference):
    with _CountOps() as counter:
        fn(IMAGE, MATRIX)
    with torch.inference_mode(inference), sw.track_copies() as log:
        result = fn(IMAGE, MATRIX)
    event = log.events[-1]
    assert only_moved_values(result)  # the reference: nothing but moved values in the result
    assert (event.kind, event.allocated) == ("copy", True)
    assert not sw.same_storage(result, IMAGE) and not sw.same_storage(result, MATRIX)
    assert event.bytes_copied >= nbytes(result)  # circular pad writes its corners twice
    if len(event.ops) == 1:  # one ATen op wrote the result once
        assert event.bytes_copied == nbytes(result)
    if not inference:  # deciding from the decomposition runs nothing the user can see
        assert [op for e in log.events for op in e.ops] == counter.ops


def test_a_data_movement_verdict_does_not_depend_on_an_earlier_call():
    # tril's decomposition branches on dtype: a bool mask first must not decide it for floats
    with sw.track_copies():
        torch.ones(3, 4, dtype=torch.bool).tril()
    with sw.track_copies() as log:
        result = MATRIX.tril()
    assert only_moved_values(result) and log.events[-1].kind == "copy"


@pytest.mark.parametrize("fn", COMPUTE.values(), ids=COMPUTE.keys())
def test_arithmetic_on_the_data_is_compute(fn):
    with sw.track_copies() as log:
        result = fn(IMAGE, MATRIX)
    event = log.events[-1]
    assert (event.kind, event.bytes_copied) == ("compute", 0)
    assert not sw.same_storage(result, IMAGE) and not sw.same_storage(result, MATRIX)


def test_the_reference_tells_moved_values_from_computed_ones():
    # the brute-force check above is not vacuous: arithmetic makes values the inputs never had
    assert only_moved_values(F.pad(MATRIX, (1, 1)))
    for name in ("fold (sums overlaps)", "bilinear upsample", "softmax", "cumsum", "x + 1"):
        assert not only_moved_values(COMPUTE[name](IMAGE, MATRIX)), name


def test_fake_tensors_inside_the_block_are_tracked_without_data():
    from torch._subclasses.fake_tensor import FakeTensorMode

    # FakeTensorMode sends ops that are not in the dispatcher (prim::device) through the mode
    with sw.track_copies() as log, FakeTensorMode():
        fake = torch.empty(3, 4)
        padded = torch.nn.functional.pad(fake, (1, 1), mode="reflect")
        transposed = fake.t()
        copied = transposed.contiguous()
    assert [(e.call, e.kind) for e in log.events] == [
        ("torch.empty", "compute"),
        ("torch.nn.functional.pad", "copy"),
        ("torch.Tensor.t", "view"),
        ("torch.Tensor.contiguous", "copy"),
    ]
    assert log.events[1].bytes_copied == nbytes(padded) and log.events[3].bytes_copied == nbytes(
        copied
    )


def test_functionalized_views_alias_by_storage_identity():
    # inside torch.func.functionalize tensors have a storage without a data pointer: its identity
    # still says that t() is a view
    x = base()
    with sw.track_copies() as log:
        torch.func.functionalize(lambda t: t.t().contiguous())(x)
    assert [(e.call, e.kind) for e in log.events][:2] == [
        ("torch.Tensor.t", "view"),
        ("torch.Tensor.contiguous", "copy"),
    ]


_BASE = torch.arange(24.0).reshape(2, 3, 4)


@pytest.mark.parametrize(
    "make",
    [
        lambda: _BASE,
        lambda: _BASE.transpose(0, 2)[1:, ::2],
        lambda: _BASE[1, :, 1:].clone().t(),
        lambda: torch.nn.Parameter(_BASE.clone()),
        lambda: _BASE.expand(5, 2, 3, 4),
        lambda: torch.empty(0, 3),
        lambda: torch.ones(3, dtype=torch.bool)[::2],
        lambda: torch.arange(10, dtype=torch.int8)[3:],
        lambda: torch.ones(2, 2, dtype=torch.complex64).conj(),
        lambda: torch._neg_view(_BASE),
        lambda: torch.ones(2, 3, device="meta").t(),
        lambda: torch.ones(4, dtype=torch.float8_e4m3fn),
        lambda: torch.quantize_per_tensor(torch.ones(4), 0.1, 0, torch.quint8),
    ],
)
@pytest.mark.filterwarnings("ignore:torch.quantize_per_tensor:UserWarning")  # deprecated, still one
def test_recorded_layout_is_the_adapters(make) -> None:
    """The tracker reads a plain tensor's raw fields itself, and any other through the adapter:
    either way an event's layout is the one ``sw.inspect`` gives for the tensor."""
    tensor = make()
    with sw.track_copies() as log:
        torch.Tensor.view_as(tensor, tensor)
    assert log.events[0].inputs == (sw.inspect(tensor),)


def test_recorded_event_has_every_field() -> None:
    """The tracker fills its events without the dataclass ``__init__``: each field is set, and to
    what the call did."""
    import dataclasses

    x = torch.arange(6.0).reshape(2, 3)
    with sw.track_copies() as log:
        x.t().reshape(-1)
    event = log.events[-1]
    assert set(vars(event)) == {field.name for field in dataclasses.fields(CopyEvent)}
    assert (event.index, event.kind, event.bytes_copied) == (1, "copy", x.numel() * 4)
