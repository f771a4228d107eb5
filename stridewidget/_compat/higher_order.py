"""Higher-order ops (``torch.cond``, ``torch._higher_order_ops.while_loop``, ``flex_attention``)
under a dispatch mode: they take functions (their subgraphs) as arguments, and torch hands them
whole to a mode that sets ``supports_higher_order_operators`` (checked on torch 2.13 (the floor)).
:func:`run_higher_order` runs one so that every ATen op inside its subgraphs reaches the mode."""

from __future__ import annotations

import os
import sys
from typing import Any

from .compiled import reset_codes

__all__ = ["is_higher_order", "run_higher_order"]


def is_higher_order(func: Any) -> bool:
    """True for a higher-order op (``torch._ops.HigherOrderOperator``, checked on torch 2.13);
    without that class, ``False`` (no op is taken for one).

    >>> import torch
    >>> is_higher_order(torch.ops.higher_order.cond), is_higher_order(torch.ops.aten.add.Tensor)
    (True, False)
    """
    ops = getattr(sys.modules.get("torch"), "_ops", None)
    kind = getattr(ops, "HigherOrderOperator", None)
    return kind is not None and isinstance(func, kind)


def _through(mode: Any, value: Any) -> Any:
    """``value``, or for a function (a subgraph) the same function run with ``mode`` on."""
    torch = sys.modules["torch"]
    if not callable(value) or isinstance(value, torch.Tensor):
        return value

    def run(*args: Any, **kwargs: Any) -> Any:
        with mode:
            return value(*args, **kwargs)

    return run


def run_higher_order(mode: Any, func: Any, args: tuple, kwargs: dict, caller: str) -> Any:
    """Run the higher-order op ``func`` that reached ``mode`` (popped for the call, as torch does)
    with each function argument (its subgraphs: branches, loop bodies, score mods) run with
    ``mode`` on, so the mode sees the ops inside.  Another mode still on the stack gets the op
    next (it does the same); with none left, the op's eager kernel runs
    (``py_kernels[CompositeExplicitAutograd]``, checked on torch 2.13).  An op with no eager
    kernel raises ``NotImplementedError``, one line naming it and ``caller``.

    >>> import torch
    >>> from torch.utils._python_dispatch import TorchDispatchMode
    >>> class Names(TorchDispatchMode):
    ...     supports_higher_order_operators = True
    ...     seen = []
    ...     def __torch_dispatch__(self, func, types, args=(), kwargs=None):
    ...         if is_higher_order(func):
    ...             return run_higher_order(self, func, args, kwargs or {}, "Names")
    ...         self.seen.append(func.__name__)
    ...         return func(*args, **(kwargs or {}))
    >>> with Names():
    ...     y = torch.cond(torch.tensor(True), lambda x: x.t().clone(), lambda x: x.t() * 1,
    ...                    (torch.ones(2, 3),))
    >>> "clone.default" in Names.seen
    True
    """
    from torch.utils._python_dispatch import _get_current_dispatch_mode

    from .pytree import tree_map

    torch = sys.modules["torch"]
    args, kwargs = tree_map(lambda value: _through(mode, value), (tuple(args), dict(kwargs)))
    _count_as_compiled()
    try:
        if _get_current_dispatch_mode() is not None:
            return func(*args, **kwargs)
        kernels = getattr(func, "py_kernels", {})
        kernel = kernels.get(torch._C.DispatchKey.CompositeExplicitAutograd)
        if kernel is None:
            raise NotImplementedError(
                f"{caller} cannot look inside torch's higher-order op {func.name()}: torch "
                f"{torch.__version__} gives it no eager kernel to run its subgraphs through"
            )
        return kernel(*args, **kwargs)
    finally:
        _unskip_wrappers()


def _count_as_compiled() -> None:
    """An eager ``flex_attention`` runs its op inside ``torch.compile(..., fullgraph=True)``,
    which under a dispatch mode runs the frame eagerly and then raises "found no compiled
    frames" although the op ran.  Running the op eagerly is what the mode asks for: count it as
    the frame that ran (dynamo's ``set_fullgraph_compiled_frame_count``, checked on torch 2.13;
    negative while no fullgraph count is kept, left so).  Without it, torch's error stands."""
    try:
        from torch._C._dynamo.eval_frame import set_fullgraph_compiled_frame_count as count
    except ImportError:
        return
    kept = count(-1)
    count(kept + 1 if kept >= 0 else kept)


def _unskip_wrappers() -> None:
    """An eager higher-order op compiles its own wrapper (``torch.cond``'s ``_cond_op_wrapper``,
    ``flex_attention``'s ``_flex_attention_hop_wrapper``) with ``fullgraph=True``; under a
    dispatch mode dynamo skips that frame and marks its code to be skipped for good, after
    which the op fails in every later eager call, mode or not.  Reset the marks of torch's own
    frames now running (a code dynamo never saw is left alone)."""
    home = os.path.dirname(sys.modules["torch"].__file__) + os.sep
    frame = sys._getframe(1)
    names = set()
    while frame is not None:
        code = frame.f_code
        if code.co_filename.startswith(home):
            names.add(f"{code.co_name} ({code.co_filename}:{code.co_firstlineno})")
        frame = frame.f_back
    if names:
        reset_codes(names)
