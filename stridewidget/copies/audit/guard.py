"""What ``sw.audit`` checks before a step and restores after it: the model it can audit, clear
errors for one it cannot, the model's buffers and the RNG left as found."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import torch

from ..._compat import compiled_original

COMPILED_NOTE = (
    "the model is torch.compile'd, but a compiled program is audited only without loss_fn and "
    "model_kwargs: the eager model it wraps was audited (the compiled graph did not run), so "
    "copies the compiler removes or adds are not in this report"
)


def eager_model(model: torch.nn.Module) -> tuple[torch.nn.Module, str]:
    """The module to audit and a note for the report: a ``torch.compile``d model's eager
    original (for a step with ``loss_fn`` or ``model_kwargs``, which the compiled audit does not
    take yet), said in the note and in a warning (never silently)."""
    original = compiled_original(model)
    if original is None:
        return model, ""
    warnings.warn(f"sw.audit: {COMPILED_NOTE}", UserWarning, stacklevel=3)
    return original, COMPILED_NOTE


def check_model(model: torch.nn.Module, backward: bool) -> None:
    """Clear errors for a model the step cannot run backward through."""
    if backward and not any(p.requires_grad for p in model.parameters()):
        state = "has no parameters" if next(model.parameters(), None) is None else "is frozen"
        raise ValueError(
            f"sw.audit: the model {state} (no parameter requires grad), so backward computes "
            "no gradient; pass backward=False to audit the forward only, or unfreeze the "
            "parameters to train (model.requires_grad_(True))"
        )


def model_tensors(model: torch.nn.Module) -> Iterator[torch.Tensor]:
    """The model's parameters and buffers (not ``state_dict()``: a quantized module's holds
    packed parameters, and ``get_extra_state`` may hold anything)."""
    yield from model.parameters()
    yield from model.buffers()


@contextmanager
def state_kept(model: torch.nn.Module) -> Iterator[None]:
    """The model's buffers (BatchNorm's running statistics, ``num_batches_tracked``) and torch's
    RNG states as they were before the block, after it: a training-mode step updates the first
    and dropout draws from the second."""
    saved: list[tuple[Any, str, torch.Tensor, torch.Tensor]] = []
    with torch.no_grad():
        for module in model.modules():
            for name, buffer in module._buffers.items():
                if isinstance(buffer, torch.Tensor):
                    saved.append((module, name, buffer, buffer.clone()))
    devices = sorted({t.device.index or 0 for t in model_tensors(model) if t.device.type == "cuda"})
    try:
        with torch.random.fork_rng(devices=devices):
            yield
    finally:
        with torch.no_grad():
            for module, name, buffer, values in saved:
                module._buffers[name] = buffer
                if buffer.shape == values.shape:
                    buffer.copy_(values)
