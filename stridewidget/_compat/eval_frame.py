"""Dynamo's frame hook and a dispatch mode's handler: torch wraps every ``TorchDispatchMode``
subclass's ``__torch_dispatch__`` in ``torch._disable_dynamo`` (seven Python frames per ATen op,
a sixth of what a bare mode adds per op), which changes nothing while no ``torch.compile`` frame
hook is set.  :func:`dispatch_unwrapped` lets a handler pay for it only when it would."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

__all__ = ["dispatch_unwrapped"]


def _always() -> bool:
    return True


def dispatch_unwrapped(cls: type) -> tuple[Callable[[], bool], Callable[..., Any]]:
    """``(quiet, wrapped)`` for the dispatch mode ``cls``, whose ``__torch_dispatch__`` torch
    wrapped in ``torch._disable_dynamo`` (``TorchDispatchMode.__init_subclass__``, checked on
    torch 2.13: the wrapper's ``__wrapped__`` is the handler) and which this puts back unwrapped.
    The handler must start with ``if not quiet(): return wrapped(self, func, types, args,
    kwargs)``: ``quiet()`` is true when the wrapper would change nothing (no dynamo frame hook
    set, or the one its stance sets: ``eager_on_recompile``'s run-only ``False``), so the handler
    runs as it would inside it; otherwise ``wrapped`` (torch's wrapper around the same handler)
    turns the hook off and calls it again, quiet then.  The handler's own frame is marked for
    dynamo to skip (``set_code_exec_strategy``, the ``SKIP`` of ``torch._dynamo.skip_code``;
    checked on torch 2.13), and so is ``quiet``'s: the hook never sees them before the handler
    hands over.

    Where torch lacks any of these, the handler stays wrapped, ``quiet()`` is always true and
    ``wrapped`` the wrapped handler (never called).

    >>> from torch.utils._python_dispatch import TorchDispatchMode
    >>> class Mode(TorchDispatchMode):
    ...     def __torch_dispatch__(self, func, types, args=(), kwargs=None):
    ...         return func(*args, **(kwargs or {}))
    >>> quiet, wrapped = dispatch_unwrapped(Mode)
    >>> quiet(), Mode.__dict__["__torch_dispatch__"] is wrapped.__wrapped__
    (True, True)
    """
    wrapped = cls.__dict__["__torch_dispatch__"]
    handler = getattr(wrapped, "__wrapped__", None)
    try:
        from torch._C._dynamo.eval_frame import (
            _FrameAction,
            _FrameExecStrategy,
            get_eval_frame_callback,
            set_code_exec_strategy,
        )

        skip = _FrameExecStrategy(_FrameAction.SKIP, _FrameAction.DEFAULT)
    except (ImportError, AttributeError, TypeError):
        return _always, wrapped
    code = getattr(handler, "__code__", None)
    if code is None or code.co_name != "__torch_dispatch__":
        return _always, wrapped
    set_code_exec_strategy(code, skip)
    cls.__torch_dispatch__ = handler  # type: ignore[attr-defined]
    modules = sys.modules

    def quiet() -> bool:
        callback = get_eval_frame_callback()
        eval_frame = modules.get("torch._dynamo.eval_frame")
        if eval_frame is None:  # dynamo never imported: no hook, default stance
            return callback is None
        # as the wrapper's _callback_from_stance(None): False for eager_on_recompile, else None
        stance = getattr(getattr(eval_frame, "_stance", None), "stance", "default")
        if stance == "eager_on_recompile":
            return callback is False
        return callback is None

    set_code_exec_strategy(quiet.__code__, skip)  # called while the hook may be on, as the handler
    return quiet, wrapped
