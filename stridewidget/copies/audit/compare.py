"""Does a fix leave the step's values alone?  :func:`compared` runs the step before and after a
fix in float64 from one state and one seed, random draws made in logical order (a layout change
must not change a dropout mask), and says whether outputs and gradients agree; a check that
cannot run says why, in one line."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import torch

from ..._compat import dispatch_mode_base, op_arguments, tree_flatten, tree_map
from .guard import output_tensors
from .step import run_step

__all__ = ["compared", "drawn_in_order"]


def drawn_in_order() -> Any:
    """A dispatch mode under which each random op (torch's ``nondeterministic_seeded`` ops:
    ``bernoulli_``, ``native_dropout``, ``rand_like`` ...) draws in the logical order of its
    tensors, not their memory order, so that the same seed gives the same values in any layout.

    >>> import torch
    >>> x = torch.ones(4, 6)
    >>> torch.manual_seed(0); a = torch.nn.functional.dropout(x, 0.5)  # doctest: +ELLIPSIS
    <...>
    >>> with drawn_in_order():
    ...     _ = torch.manual_seed(0); b = torch.nn.functional.dropout(x.t().contiguous().t(), 0.5)
    >>> torch.equal(a, b)
    True
    """
    return _DrawnInOrder()


class _DrawnInOrder(dispatch_mode_base()):  # type: ignore[misc]
    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        if torch.Tag.nondeterministic_seeded not in func.tags:
            return func(*args, **kwargs)
        given: dict[int, tuple[torch.Tensor, torch.Tensor]] = {}

        def dense(value: Any) -> Any:
            if isinstance(value, torch.Tensor) and not value.is_contiguous():
                made = value.contiguous()
                given[id(made)] = (value, made)
                return made
            return value

        dense_args, dense_kwargs = tree_map(dense, (args, kwargs))
        result = func(*dense_args, **dense_kwargs)
        for position, argument in enumerate(op_arguments(func)):
            if argument.alias_info is None or not argument.alias_info.is_write:
                continue
            made = dense_args[position] if position < len(args) else dense_kwargs.get(argument.name)
            if id(made) in given:  # an in-place draw: into the tensor it was given
                given[id(made)][0].copy_(made)
        return tree_map(lambda v: given[id(v)][0] if id(v) in given else v, result)


_PLAIN = (torch.Tensor, torch.nn.Parameter)


def deep_copied(value: Any) -> Any:
    """``copy.deepcopy(value)``, and a tensor subclass in it that keeps torch's own
    ``__deepcopy__`` and ``__torch_dispatch__`` (one that overrides only ``__torch_function__``,
    whose ``new_empty`` is no instance of it: the default ``__deepcopy__`` raises) copied too: its
    data over a private storage at the same offset, sizes and strides (the layout is what the
    audit measures; views of one storage stay views of one copy), as the same subclass.

    >>> class Tagged(torch.Tensor):
    ...     @classmethod
    ...     def __torch_function__(cls, func, types, args=(), kwargs=None):
    ...         return super().__torch_function__(func, types, args, kwargs or {})
    >>> x = torch.arange(6.0).view(2, 3).t().as_subclass(Tagged)
    >>> y = deep_copied((x,))[0]
    >>> type(y).__name__, y.stride(), torch.equal(y, x), y.data_ptr() != x.data_ptr()
    ('Tagged', (1, 3), True, True)
    """
    memo: dict[int, Any] = {}
    storages: dict[int, Any] = {}
    for leaf in tree_flatten(value)[0]:
        if (
            isinstance(leaf, torch.Tensor)
            and type(leaf) not in _PLAIN
            and type(leaf).__deepcopy__ is torch.Tensor.__deepcopy__
            and type(leaf).__torch_dispatch__ is torch.Tensor.__torch_dispatch__
            and leaf.layout is torch.strided
            and id(leaf) not in memo
        ):
            memo[id(leaf)] = _subclass_copied(leaf, storages, memo)
    return copy.deepcopy(value, memo)


def _subclass_copied(t: torch.Tensor, storages: dict[int, Any], memo: dict[int, Any]) -> Any:
    plain = t.as_subclass(torch.Tensor).detach()
    storage = plain.untyped_storage()
    key = storage.data_ptr()
    if key not in storages:
        storages[key] = storage.clone()
    with torch.no_grad():
        data = torch.empty(0, dtype=plain.dtype, device=plain.device)
        data.set_(storages[key], plain.storage_offset(), plain.shape, plain.stride())
    copied = data.requires_grad_(t.requires_grad).as_subclass(type(t))
    copied.__dict__.update(copy.deepcopy(t.__dict__, memo))
    return copied


def compared(
    model: torch.nn.Module,
    inputs: tuple[Any, ...],
    kwargs: dict[str, Any],
    backward: bool,
    loss_fn: Callable[[Any], torch.Tensor] | None,
    variants: Callable[..., dict[str, tuple[torch.nn.Module, tuple[Any, ...]]]],
) -> tuple[bool, str]:
    """Whether the step's outputs and gradients agree before and after a fix (``variants``
    makes both from a model and inputs), and ``""``, or why they could not be compared.

    In float64: in float32 a layout change reorders sums, and an ill-conditioned gradient
    (BatchNorm over a few values) turns that rounding into percent-size differences that would
    hide or fake a real one.  Each run starts from the same seed (:func:`drawn_in_order`).

    >>> import torch
    >>> model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Dropout(0.5))
    >>> transposed = lambda m, x: {"before": (m, x), "after": (m, (x[0].t().contiguous().t(),))}
    >>> compared(model, (torch.randn(2, 3),), {}, True, None, transposed)
    (True, '')
    """
    results = {}
    double_model = deep_copied(model).double()
    double_inputs, double_kwargs = (tree_map(_double, part) for part in (inputs, kwargs))
    try:
        for label, (variant_model, variant_inputs) in variants(double_model, double_inputs).items():
            torch.manual_seed(0)
            with drawn_in_order():
                results[label] = run_step(
                    variant_model, variant_inputs, backward, loss_fn, deep_copied(double_kwargs)
                )
    except Exception as error:  # the model's own code in float64: a tensor it makes in float32
        first = (str(error).strip().splitlines() or [""])[0]
        return (
            False,
            f"outputs not checked: their float64 step raised {type(error).__name__}: {first}",
        )
    return _same(results["before"], results["after"]), ""


def _double(value: Any) -> Any:
    """``value`` in float64; a leaf stays a leaf (an input that requires grad gets the gradient)."""
    if not isinstance(value, torch.Tensor) or not value.is_floating_point():
        return value
    if value.is_leaf and value.requires_grad and value.dtype != torch.float64:
        return value.detach().double().requires_grad_(True)
    return value.double()


def _scale(tensors: list[torch.Tensor]) -> float:
    floating = [t for t in tensors if t.numel() and t.is_floating_point()]
    return max((float(t.detach().abs().max()) for t in floating), default=1.0)


def _same(before: tuple[Any, tuple], after: tuple[Any, tuple]) -> bool:
    """Outputs and gradients of two float64 variants of a step agree up to rounding.

    Tensors are compared relative to a scale: each output its own, gradients the largest
    gradient's, because a gradient that is zero in exact arithmetic (a bias just before
    BatchNorm) is rounding noise whose value depends on the summation order.
    """
    for part_before, part_after, shared in (
        (before[0], after[0], False),
        (before[1], after[1], True),
    ):
        flat_before = [t for t in output_tensors(part_before)]
        flat_after = [t for t in output_tensors(part_after)]
        if len(flat_before) != len(flat_after):
            return False
        common = _scale(flat_before) if shared else None
        for a, b in zip(flat_before, flat_after):
            scale = common if common is not None else _scale([a])
            try:
                torch.testing.assert_close(a, b, rtol=1e-6, atol=1e-7 * max(scale, 1e-12))
            except AssertionError:
                return False
    return True
