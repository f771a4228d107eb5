"""torch's profilers from the inside: fast ``RecordFunction`` labels, the thread-local switch
for collecting them, the autograd profiler's legacy collector, and the autograd node running
now."""

from __future__ import annotations

import sys
from typing import Any

__all__ = [
    "current_autograd_node",
    "disable_profiler_legacy",
    "enable_profiler_legacy",
    "experimental_config",
    "legacy_profiler_available",
    "post_accumulate_grad_hooked",
    "profiler_running",
    "record_function_fast",
    "record_function_switch",
]


def record_function_fast(name: str) -> Any:
    """A context manager that records one profiler event named ``name``:
    ``torch._C._profiler._RecordFunctionFast`` (checked on torch 2.13 (the floor); a few µs), else
    the public ``torch.autograd.profiler.record_function`` (the same event name, slower).

    >>> import torch
    >>> with torch.profiler.profile() as prof:
    ...     with record_function_fast("sw.example"):
    ...         pass
    >>> "sw.example" in [event.name for event in prof.events()]
    True
    """
    torch = sys.modules["torch"]
    fast = getattr(getattr(torch._C, "_profiler", None), "_RecordFunctionFast", None)
    if fast is None:
        return torch.autograd.profiler.record_function(name)
    return fast(name)


def _no_switch(enabled: bool) -> None:
    torch = sys.modules["torch"]
    raise RuntimeError(
        "sw.audit's search for copies inside kernels needs "
        f"torch._C._autograd._enable_record_function, which torch {torch.__version__} does not have"
    )


def record_function_switch() -> Any:
    """The function that turns this thread's ``RecordFunction`` events (which profilers collect)
    on or off, ``switch(enabled)``: ``torch._C._autograd._enable_record_function`` (checked on
    torch 2.13 (the floor)), a thread-local flag; the builtin itself, as it runs twice per op.
    torch's public ``toggle_collection_dynamic`` is global, so it cannot stand in: without the
    builtin, a function that raises a ``RuntimeError`` saying so when called.

    >>> switch = record_function_switch()
    >>> switch(True)
    """
    torch = sys.modules["torch"]
    switch = getattr(getattr(torch._C, "_autograd", None), "_enable_record_function", None)
    return _no_switch if switch is None else switch


def legacy_profiler_available() -> bool:
    """Does this torch still have the autograd profiler's legacy collector
    (``torch.autograd._enable_profiler_legacy`` / ``_disable_profiler_legacy`` and
    ``torch._C._profiler._ExperimentalConfig``, checked on torch 2.13 (the floor))?  Where it is gone,
    ``False``: the public ``torch.profiler`` serves instead.

    >>> legacy_profiler_available()
    True
    """
    torch = sys.modules["torch"]
    return (
        hasattr(torch.autograd, "_enable_profiler_legacy")
        and hasattr(torch.autograd, "_disable_profiler_legacy")
        and hasattr(getattr(torch._C, "_profiler", None), "_ExperimentalConfig")
    )


def _no_legacy_profiler() -> RuntimeError:
    version = sys.modules["torch"].__version__
    return RuntimeError(
        f"torch {version} has no legacy autograd profiler (check legacy_profiler_available())"
    )


def experimental_config() -> Any:
    """A default ``torch._C._profiler._ExperimentalConfig()``, the last field of the legacy
    collector's ``ProfilerConfig`` (checked on torch 2.13 (the floor)); a ``RuntimeError`` where it
    is gone (:func:`legacy_profiler_available` is then ``False``).

    >>> type(experimental_config()).__name__
    '_ExperimentalConfig'
    """
    make = getattr(getattr(sys.modules["torch"]._C, "_profiler", None), "_ExperimentalConfig", None)
    if make is None:
        raise _no_legacy_profiler()
    return make()


def enable_profiler_legacy(config: Any) -> None:
    """Start the legacy collector with ``config`` (``torch.autograd._enable_profiler_legacy``,
    checked on torch 2.13 (the floor)); a ``RuntimeError`` where it is gone."""
    enable = getattr(sys.modules["torch"].autograd, "_enable_profiler_legacy", None)
    if enable is None:
        raise _no_legacy_profiler()
    enable(config)


def disable_profiler_legacy() -> Any:
    """Stop the legacy collector and return its records, one list per thread
    (``torch.autograd._disable_profiler_legacy``, checked on torch 2.13 (the floor)); a
    ``RuntimeError`` where it is gone.

    >>> import torch
    >>> enable_profiler_legacy(
    ...     torch.autograd.ProfilerConfig(
    ...         torch.autograd.ProfilerState.CPU, False, False, False, False, False,
    ...         experimental_config(),
    ...     )
    ... )
    >>> _ = torch.zeros(2).clone()
    >>> "aten::clone" in [r.name() for thread in disable_profiler_legacy() for r in thread]
    True
    """
    disable = getattr(sys.modules["torch"].autograd, "_disable_profiler_legacy", None)
    if disable is None:
        raise _no_legacy_profiler()
    return disable()


def profiler_running() -> bool:
    """Is an autograd profiler collecting now (``torch.autograd._profiler_enabled``, checked on
    torch 2.13 (the floor))?  Without it, ``True``: the caller then takes ``torch.profiler``, which
    starts inside another profiler as well as outside one (slower, same copies found).

    >>> import torch
    >>> with torch.profiler.profile():
    ...     inside = profiler_running()
    >>> inside, profiler_running()
    (True, False)
    """
    enabled = getattr(sys.modules["torch"].autograd, "_profiler_enabled", None)
    return True if enabled is None else bool(enabled())


def current_autograd_node() -> Any | None:
    """The autograd node whose backward runs now, ``None`` outside backward:
    ``torch._C._current_autograd_node`` (checked on torch 2.13 (the floor)).  Without it, ``None``
    always: backward copies are then reported without the node (and module) that made them.

    >>> current_autograd_node() is None
    True
    """
    current = getattr(sys.modules["torch"]._C, "_current_autograd_node", None)
    return None if current is None else current()


def post_accumulate_grad_hooked(tensor: Any) -> bool:
    """Has ``tensor`` hooks that run after a gradient is accumulated into its ``.grad``
    (``Tensor.register_post_accumulate_grad_hook``; an optimizer stepping in backward):
    ``Tensor._post_accumulate_grad_hooks``, checked on torch 2.13.  Without the attribute,
    ``True``: the caller then does not accumulate (the safe answer).

    >>> import torch
    >>> p = torch.nn.Parameter(torch.zeros(2))
    >>> post_accumulate_grad_hooked(p)
    False
    >>> _ = p.register_post_accumulate_grad_hook(lambda t: None)
    >>> post_accumulate_grad_hooked(p)
    True
    """
    hooks = getattr(tensor, "_post_accumulate_grad_hooks", _MISSING_HOOKS)
    return hooks is _MISSING_HOOKS or bool(hooks)


_MISSING_HOOKS = object()
