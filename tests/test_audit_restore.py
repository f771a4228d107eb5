"""sw.audit gives back the model's parameters, its inputs and its plain tensor attributes bit for
bit after a step that writes them where no ATen op or version counter sees it: through NumPy
(``.numpy()``), through DLPack (``torch.utils.dlpack.to_dlpack`` read by NumPy's
``from_dlpack``, a C call no dispatch or torch-function mode sees) or through ``x.data``; and
after ATen in-place writes.  The oracle is each tensor's raw bytes before the audit."""

from __future__ import annotations

import ctypes
import warnings

import numpy as np
import pytest
import torch

import stridewidget as sw
from stridewidget.copies.audit.saved import same_bits, saved_values


def _bytes(t: torch.Tensor) -> bytes:
    return t.detach().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes()


class _Capsule:
    """What NumPy's ``from_dlpack`` reads: a capsule ``torch.utils.dlpack.to_dlpack`` made."""

    def __init__(self, tensor: torch.Tensor) -> None:
        self.capsule = torch.utils.dlpack.to_dlpack(tensor.detach())

    def __dlpack__(self, **_: object) -> object:
        return self.capsule

    def __dlpack_device__(self) -> tuple[int, int]:
        return (1, 0)  # kDLCPU


def _write(tensor: torch.Tensor, how: str) -> None:
    """Add 1 to ``tensor``'s first element by ``how`` (an ATen op: to every element)."""
    if how == "numpy":
        tensor.detach().numpy().reshape(-1)[0] += 1
    elif how == "dlpack":  # NumPy's view of a legacy capsule is read-only: write at its address
        read_only = np.from_dlpack(_Capsule(tensor))
        pointer = ctypes.cast(read_only.ctypes.data, ctypes.POINTER(ctypes.c_float))
        np.ctypeslib.as_array(pointer, (read_only.size,))[0] += 1
    elif how == "data":
        tensor.data.view(-1)[0] += 1
    else:  # an ATen in-place op
        with torch.no_grad():
            tensor.add_(1)


class Hooked(torch.nn.Module):
    """A linear layer whose forward pre-hook writes ``what`` (its weight, the input, a plain
    tensor attribute) by ``how``; a hook on the output's gradient writes the bias too."""

    def __init__(self, what: str, how: str) -> None:
        super().__init__()
        self.layer = torch.nn.Linear(4, 3)
        self.cache = torch.arange(5.0)
        self.what, self.how = what, how
        self.layer.register_forward_pre_hook(self._hook)

    def _hook(self, module: torch.nn.Module, args: tuple) -> None:
        target = {"weight": module.weight, "input": args[0], "attribute": self.cache}[self.what]
        _write(target, self.how)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.layer(x)
        if y.requires_grad:
            y.register_hook(lambda grad: _write(self.layer.bias, self.how))
        return y + self.cache.sum()


HOW = ["numpy", "dlpack", "data", "aten"]


@pytest.mark.parametrize("how", HOW)
@pytest.mark.parametrize("what", ["weight", "input", "attribute"])
@pytest.mark.parametrize("grad", [False, True])
def test_writes_outside_torch_are_put_back(what, how, grad):
    torch.manual_seed(0)
    model = Hooked(what, how)
    x = torch.randn(2, 4, requires_grad=grad)
    tensors = {
        "x": x,
        "cache": model.cache,
        **dict(model.named_parameters()),
    }
    before = {name: _bytes(t) for name, t in tensors.items()}
    versions = {name: t._version for name, t in tensors.items()}
    plain = Hooked(what, how)
    plain.load_state_dict(model.state_dict())
    plain.cache = model.cache.clone()
    y = x.detach().clone().requires_grad_(grad)
    plain(y).sum().backward()  # the step really writes (else the test proves nothing)
    assert (_bytes(y), _bytes(plain.cache), _bytes(plain.layer.weight)) != (
        before["x"],
        before["cache"],
        before["layer.weight"],
    )
    sw.audit(model, x)
    after = {name: _bytes(t) for name, t in tensors.items()}
    assert after == before
    assert model.cache is tensors["cache"]
    untouched = {"x": "input", "cache": "attribute"}
    for name, kind in untouched.items():
        if kind != what:  # a tensor left alone keeps its version counter
            assert tensors[name]._version == versions[name], name


def test_saved_values_and_same_bits_are_exact():
    torch.manual_seed(0)
    tensors = [
        torch.randn(1024, 600),  # 2.4 MB: into the huge-page buffer, compared with memcmp
        torch.randn(4, 6).t(),  # not contiguous: cloned with its strides
        torch.arange(7, dtype=torch.int8),
        torch.randn(2, dtype=torch.complex128),
        torch.empty(0),
        torch.tensor([0.0, float("nan")]),
    ]
    values = saved_values(tensors)
    for tensor, value in zip(tensors, values):
        assert (value.shape, value.dtype) == (tensor.shape, tensor.dtype)
        assert _bytes(value) == _bytes(tensor)
        assert same_bits(tensor, value)
    assert values[0].untyped_storage().nbytes() > tensors[0].nbytes  # in the shared buffer
    # one bit apart, -0.0 against 0.0, another NaN payload: all told apart
    flipped = tensors[0].clone()
    flipped.view(torch.int32)[1000, 2] ^= 1
    assert not same_bits(flipped, values[0])
    assert not same_bits(torch.tensor([-0.0, float("nan")]), values[5])
    other_nan = torch.tensor([0.0, float("nan")])
    other_nan.view(torch.int32)[1] ^= 1
    assert not same_bits(other_nan, values[5])
    transposed = tensors[1].clone()
    transposed[0, 0] += 1
    assert not same_bits(transposed, values[1])


def test_inputs_that_cannot_be_compared_as_words_are_kept_as_found():
    """A sparse input (no ``nbytes``) and a quantized one (viewing it as integers crashes
    torch 2.13) are saved and compared without either."""
    from stridewidget.copies.audit.guard import state_kept

    sparse = torch.randn(3, 4).to_sparse()
    with warnings.catch_warnings():  # torch 2.13 deprecates quantized tensors
        warnings.simplefilter("ignore")
        quantized = torch.quantize_per_tensor(torch.randn(4), 0.1, 0, torch.qint8)
    big = torch.randn(256, 256)
    before = _bytes(big)
    with state_kept(torch.nn.Linear(4, 2), (sparse, quantized, big)):
        big.detach().numpy()[0, 0] += 1
    assert _bytes(big) == before
    assert sparse.is_sparse and quantized.is_quantized
