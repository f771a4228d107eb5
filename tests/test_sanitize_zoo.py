"""No false alarm: a training step (forward, backward, optimizer) of real models under
sw.sanitize() finds nothing, and gives exactly what the same step gives without it."""

from __future__ import annotations

import copy

import models
import pytest
import torch

import stridewidget as sw

ZOO = {
    "resnet18": models.resnet18,
    "mobilenet_v3_small": models.mobilenet_v3_small,
    "bert": models.bert,
    "gpt2": models.gpt2,
    "lstm": lambda: (torch.nn.LSTM(8, 16, num_layers=2, batch_first=True), (torch.randn(2, 5, 8),)),
    "transformer-encoder-layer": lambda: (
        torch.nn.TransformerEncoderLayer(16, 2, 32),
        (torch.randn(6, 2, 16),),
    ),
}
OPTIMIZERS = {
    "sgd-momentum": lambda params: torch.optim.SGD(params, lr=0.01, momentum=0.9),
    "adam": lambda params: torch.optim.Adam(params, lr=0.01),
}


def _first_tensor(out):
    if isinstance(out, torch.Tensor):
        return out
    if hasattr(out, "last_hidden_state"):
        return out.last_hidden_state
    return _first_tensor(out[0])


def _train_step(model, inputs, optimizer):
    torch.manual_seed(1)  # the same dropout masks with and without the sanitizer
    optimizer.zero_grad()
    loss = _first_tensor(model(*inputs)).float().pow(2).mean()
    loss.backward()
    optimizer.step()
    return loss.detach()


#: SGD's momentum buffers are written in place from the second step on: two SGD steps for the
#: cheap models; the others take one Adam step, whose moments are written in place from the first.
SGD_MODELS = ("lstm", "transformer-encoder-layer")


@pytest.mark.parametrize("name", sorted(ZOO))
def test_a_training_step_finds_nothing_and_changes_nothing(name):
    torch.manual_seed(0)
    model, inputs = ZOO[name]()
    optimizer_name = "sgd-momentum" if name in SGD_MODELS else "adam"
    twin = copy.deepcopy(model)
    optimizers = [OPTIMIZERS[optimizer_name](m.parameters()) for m in (model, twin)]
    for _ in range(2 if name in SGD_MODELS else 1):
        plain = _train_step(twin, inputs, optimizers[1])
        with sw.sanitize() as report:
            sanitized = _train_step(model, inputs, optimizers[0])
        assert report.ok, report
        torch.testing.assert_close(sanitized, plain, rtol=0, atol=0)
    for (key, value), twin_value in zip(model.state_dict().items(), twin.state_dict().values()):
        torch.testing.assert_close(value, twin_value, rtol=0, atol=0, msg=key)
