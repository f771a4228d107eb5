"""The lean tracker (issue 41) writes the copy log it wrote before, less the reads of an
attribute a tensor holds (``x.grad``, ``x._base``), checked against oracles written apart from it:
the same code run again under a bare ``TorchFunctionMode`` that records torch's own ``size()``,
``stride()``, ``storage_offset()``, dtype and storage size of every argument and result at call
time, stacked over a bare ``TorchDispatchMode`` that records the ATen ops each call ran (and from
them, with storage identity at call time, its kind and the bytes its data-movement ops wrote)."""

from __future__ import annotations

import os
import sys

import pytest
import torch
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode, resolve_name
from torch.utils._python_dispatch import TorchDispatchMode

import stridewidget as sw

_TORCH_DIR = os.path.dirname(torch.__file__)
_THIS = os.path.abspath(__file__)
#: ATen ops that only move data (into storage of their own, or into ``out=``/``copy_``'s target).
_MOVES = {"clone", "_to_copy", "copy_", "cat", "constant_pad_nd", "flip", "repeat", "index"}
_MOVES |= {
    "select_backward",
    "slice_backward",
}  # the gradient moved into zeros of the input's shape
_STORED = ("grad", "_grad", "_base")


def _kernel_copies(func, args) -> bool:
    """An op whose CPU kernel only copies its input for these arguments: ``pow(x, 1)`` runs
    ``out.copy_(base)`` (torch's ``pow_out``; the profiler shows that ``aten::copy_`` under
    ``aten::pow``: tests/test_copies_scalar_key.py), as the backward of ``x.pow(2)`` calls it."""
    return (
        func is torch.ops.aten.pow.Tensor_Scalar and type(args[1]) in (int, float) and args[1] == 1
    )


_ORACLE_FRAMES = {"_user_line", "__torch_function__", "__torch_dispatch__"}


def _tensors(value, found, depth=0):
    if isinstance(value, torch.Tensor):
        if all(value is not seen for seen in found):
            found.append(value)
    elif isinstance(value, (tuple, list)) and depth < 3:
        for item in value:
            _tensors(item, found, depth + 1)
    elif isinstance(value, dict) and depth < 3:
        for item in value.values():
            _tensors(item, found, depth + 1)
    return found


def _fact(t):
    """What torch says of ``t`` now: its layout and where its storage is."""
    storage = t.untyped_storage()
    layout = (
        tuple(t.size()),
        t.stride(),
        t.storage_offset(),
        t.element_size(),
        storage.nbytes() // t.element_size(),
        str(t.dtype).removeprefix("torch."),
        str(t.device),
    )
    return layout, (storage.data_ptr(), storage.nbytes())


def _user_line():
    frame = sys._getframe(1)
    while frame is not None and (
        frame.f_code.co_filename.startswith(_TORCH_DIR)
        or (frame.f_code.co_filename == _THIS and frame.f_code.co_name in _ORACLE_FRAMES)
    ):
        frame = frame.f_back
    return (frame.f_code.co_filename, frame.f_lineno) if frame else ("<unknown>", 0)


class _Calls(TorchFunctionMode):
    """Each user-level call: its name, its tensors' facts before and after, its ops."""

    def __init__(self):
        super().__init__()
        self.calls, self.current = [], None

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        inputs = _tensors((args, kwargs), [])
        call = {
            "name": resolve_name(func) or func.__name__,
            "func": func,
            "inputs": [_fact(t) for t in inputs],
            "objects": inputs,
            "ops": [],
            "line": _user_line(),
        }
        outer, self.current = self.current, call
        try:
            result = func(*args, **kwargs)
        finally:
            self.current = outer
        outputs = _tensors(result, [])
        call["outputs"] = [_fact(t) for t in outputs]
        call["returned_input"] = any(o is i for o in outputs for i in inputs)
        self.calls.append(call)
        del call["objects"]
        return result


class _Ops(TorchDispatchMode):
    """Each ATen op, given to the call in progress (or an entry of its own); composite ops that
    reach a Python mode whole (with autograd off) run their own decomposition, as they would
    with autograd on."""

    def __init__(self, calls):
        super().__init__()
        self.calls = calls

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        call = self.calls.current
        standalone = call is None
        if standalone:
            inputs = _tensors((args, kwargs), [])
            call = {
                "name": str(func.overloadpacket),
                "func": func,
                "inputs": [_fact(t) for t in inputs],
                "ops": [],
                "line": _user_line(),
            }
        before = {id(t): _fact(t) for t in _tensors((args, kwargs), [])}
        result = NotImplemented
        if torch.is_inference_mode_enabled() and not torch._C._dispatch_has_kernel_for_dispatch_key(
            func.name(), "CPU"
        ):
            with self:
                result = func.decompose(*args, **kwargs)
        decomposed = result is not NotImplemented  # its ops seen one by one, not itself
        if not decomposed:
            result = func(*args, **kwargs)
        name = func.overloadpacket.__name__
        namespace = func.namespace  # an op outside ATen is named by its own namespace
        written = [
            t
            for position, argument in enumerate(func._schema.arguments)
            if argument.alias_info is not None and argument.alias_info.is_write
            for value in [args[position] if position < len(args) else kwargs.get(argument.name)]
            for t in _tensors(value, [])
        ]
        # facts only: a tensor held here would change what autograd does (AccumulateGrad clones
        # a gradient someone else holds)
        if not decomposed:
            call["ops"].append(
                (
                    (namespace, name),
                    [
                        (before[id(t)][1], t.numel() * t.element_size(), _fact(t)[1])
                        for t in written
                    ],
                    [(t.numel() * t.element_size(), _fact(t)[1]) for t in _tensors(result, [])],
                    name in _MOVES or _kernel_copies(func, args),
                )
            )
        del written
        if standalone:
            outputs = _tensors(result, [])
            call["outputs"] = [_fact(t) for t in outputs]
            call["returned_input"] = any(o is i for o in outputs for i in inputs)
            self.calls.calls.append(call)
        return result


def _oracle(script):
    calls = _Calls()
    with calls, _Ops(calls):
        script()
    events = []
    for call in calls.calls:
        if not call["ops"] and not call["outputs"]:
            continue  # x.shape, x.dim(): no event
        if not call["ops"] and getattr(call["func"], "__self__", None) in [
            getattr(torch.Tensor, name) for name in _STORED
        ]:
            continue  # x.grad: no op, a tensor x holds: no event
        events.append(_expected(call))
    return events


def _shares(a, b):
    return a[0] < b[0] + b[1] and b[0] < a[0] + a[1] if a[0] and b[0] else a == b


def _expected(call):
    """The event a call should be, from torch's facts alone (the tracker's precedence: copy >
    in-place > view > compute)."""
    in_storages = [storage for _, storage in call["inputs"]]
    out_storages = [storage for _, storage in call["outputs"]]
    moved = copy = False
    nbytes = 0
    wrote_input = False
    for _, written, results, moves in call["ops"]:
        if moves:
            moved = True
            for nbytes_written, storage in [(n, after) for _, n, after in written] or results:
                nbytes += nbytes_written
                if not any(_shares(storage, s) for s in in_storages):
                    copy = True
        for storage_before, _, _ in written:
            if any(_shares(storage_before, s) for s in in_storages):
                wrote_input = True
    aliased = [any(_shares(o, s) for s in in_storages) for o in out_storages]
    if moved and copy:
        kind = "copy"
    elif wrote_input:
        kind = "in-place"
    elif call["returned_input"] or any(aliased):
        kind = "view"
    else:
        kind = "compute"
    return {
        "call": call["name"],
        "ops": tuple(f"{op[0][0]}.{op[0][1]}" for op in call["ops"]),
        "kind": kind,
        "bytes_copied": nbytes,
        "returned_input": call["returned_input"],
        "inputs": [layout for layout, _ in call["inputs"]],
        "outputs": [layout for layout, _ in call["outputs"]],
        "line": call["line"],
    }


def _layout(layout):
    return (
        layout.shape,
        layout.strides,
        layout.offset,
        layout.itemsize,
        layout.storage_size,
        layout.dtype,
        layout.device,
    )


def _tracked(script):
    with sw.track_copies() as log:
        script()
    return [
        {
            "call": e.call,
            "ops": e.ops,
            "kind": e.kind,
            "bytes_copied": e.bytes_copied,
            "returned_input": e.returned_input,
            "inputs": [_layout(layout) for layout in e.inputs],
            "outputs": [_layout(layout) for layout in e.outputs],
            "line": (e.filename, e.line),
        }
        for e in log.events
    ]


def _step(make):
    """A fresh model and AdamW, stepped once (the optimizer's state made): the next step."""
    torch.manual_seed(0)
    model, x = make()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)

    def step():
        optimizer.zero_grad()
        model(x).pow(2).mean().backward()
        optimizer.step()

    step()
    return step


def _mlp():
    return torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 4)), (
        torch.randn(4, 8)
    )


def _conv():
    net = torch.nn.Sequential(
        torch.nn.Conv2d(3, 4, 3, padding=1),
        torch.nn.BatchNorm2d(4),
        torch.nn.ReLU(),
        torch.nn.AdaptiveAvgPool2d(1),
        torch.nn.Flatten(),
        torch.nn.Linear(4, 2),
    )
    return net, torch.randn(2, 3, 6, 6)


def _transformer():
    layer = torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
    return layer, torch.randn(2, 5, 8)


def _mixed():
    def script():
        x = torch.arange(12.0).reshape(3, 4)
        x.t().reshape(-1)  # copies
        x[:, 1:].flatten()  # copies
        x.view(-1)
        y = torch.zeros(4, 3)
        y.t_()  # its layout rewritten in place
        buffer = torch.empty(6, 4)
        torch.cat([x, x[:1], x[1:2], x[2:]], out=buffer[:6])
        x[1:, :2].mul_(2)  # in place on a view
        F.pad(x, (1, 1))
        x.contiguous()
        with torch.inference_mode():
            z = torch.arange(6.0).reshape(2, 3)
            z.t().reshape(-1)
            z.t().contiguous()

    return script


@pytest.mark.parametrize("make", [_mlp, _conv, _transformer], ids=["mlp", "conv+bn", "transformer"])
def test_training_step_log_is_torchs_own_account(make):
    tracked = _tracked(_step(make))
    expected = _oracle(_step(make))
    assert [e["call"] for e in tracked] == [e["call"] for e in expected]
    for mine, theirs in zip(tracked, expected):
        assert mine == theirs, mine["call"]
    assert not any(e["call"].startswith("torch.Tensor.grad") for e in tracked)


def test_mixed_script_log_is_torchs_own_account():
    tracked = _tracked(_mixed())
    expected = _oracle(_mixed())
    assert [e["call"] for e in tracked] == [e["call"] for e in expected]
    for mine, theirs in zip(tracked, expected):
        assert mine == theirs, mine["call"]
    assert {e["kind"] for e in tracked} == {"copy", "view", "in-place", "compute"}


def test_grad_reads_are_not_events_and_transposes_still_are():
    w = torch.randn(3, 4, requires_grad=True)
    w.sum().backward()
    view = w[1:]
    with sw.track_copies() as log:
        g = w.grad
        base = view._base
        t = w.T
        mt = w.mT
        data = w.data
    assert g is w.grad and base is w
    assert [(e.call, e.kind, e.ops) for e in log.events] == [
        ("torch.Tensor.T.__get__", "view", ("aten.permute",)),
        ("torch.Tensor.mT.__get__", "view", ("aten.transpose",)),
        ("torch.Tensor.data.__get__", "view", ("aten.detach",)),
    ]
    assert (t.shape, mt.shape, data.shape) == ((4, 3), (4, 3), (3, 4))
