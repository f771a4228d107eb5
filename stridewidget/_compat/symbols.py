"""Symbolic shapes: SymInts and SymBools read and decided without adding guards, and the fake
tensors they are traced on."""

from __future__ import annotations

import sys
from typing import Any

__all__ = [
    "fake_mode_of",
    "is_symbolic",
    "known_false",
    "known_true",
    "simplified_text",
    "symbol_example",
    "symbol_names",
    "symbol_values",
]


def is_symbolic(value: Any) -> bool:
    """A torch ``SymInt`` that is not a constant (a constant one is just an int): public
    ``SymInt.node`` (checked on torch 2.13); ``False`` without torch.
    """
    torch = sys.modules.get("torch")
    if torch is None or not isinstance(value, torch.SymInt):
        return False
    return value.node.maybe_as_int() is None


def simplified_text(value: Any) -> str:
    """A SymInt expression as text, simplified without a guard: the shape environment's own
    ``ShapeEnv.simplify`` (it expands, applies the environment's replacements and drops
    ``Max(1, x)`` where ``x >= 1`` is proven, deciding only what is statically known; reached
    through the public ``SymInt.node.shape_env``, checked on torch 2.13); where that is gone,
    ``sympy.expand``; the text of the expression as it is where neither works.  An int is its
    text.

    >>> simplified_text(12)
    '12'
    """
    if not is_symbolic(value):
        return str(value)
    expr = value.node.expr
    simplify = getattr(getattr(value.node, "shape_env", None), "simplify", None)
    try:
        simpler = simplify(expr) if simplify is not None else expr.expand()
    except Exception:  # a simplification torch cannot do here: the expression as it is
        return str(expr)
    return str(simpler)


def known_true(condition: Any) -> bool:
    """``condition`` (a bool or SymBool) is proven true, without adding a guard.

    ``torch.fx.experimental.symbolic_shapes.statically_known_true`` (public-ish since 2.4, checked
    on torch 2.13); before that nothing symbolic is proven.
    """
    if isinstance(condition, bool):
        return condition
    try:
        from torch.fx.experimental.symbolic_shapes import statically_known_true
    except ImportError:  # torch < 2.4
        return False
    return statically_known_true(condition)


def known_false(condition: Any) -> bool:
    """``condition`` is proven false, without adding a guard (``statically_known_false``, checked
    on torch 2.13); before torch 2.6 nothing symbolic is proven.
    """
    if isinstance(condition, bool):
        return not condition
    try:
        from torch.fx.experimental.symbolic_shapes import statically_known_false
    except ImportError:  # torch < 2.6
        return False
    return statically_known_false(condition)


def symbol_values(value: Any, fallback: int) -> dict[str, int]:
    """Each symbol of a SymInt expression with its example value (the size it was traced at),
    read without a guard; ``{}`` for an int.

    Backed symbols read ``ShapeEnv.backed_var_to_val`` (checked on torch 2.13; ``var_to_val``
    before); unbacked ones (a ``nonzero()`` size), or all where neither is there, get
    ``fallback``, raised to their known lower bound.
    """
    if not is_symbolic(value):
        return {}
    shape_env = value.node.shape_env
    # renamed backed_var_to_val in torch 2.13 (var_to_val still works there, with a warning)
    known = getattr(shape_env, "backed_var_to_val", None)
    if known is None:
        known = getattr(shape_env, "var_to_val", {})
    ranges = getattr(shape_env, "var_to_range", {})
    values = {}
    for symbol in value.node.expr.free_symbols:
        if symbol in known:
            values[str(symbol)] = int(known[symbol])
        else:
            values[str(symbol)] = max(fallback, _lower_bound(ranges.get(symbol), fallback))
    return values


def _lower_bound(value_range: Any, fallback: int) -> int:
    """A symbol's known lower bound as an int; ``fallback`` where there is none (no range, or an
    unbounded one: torch's ``-int_oo`` says ``is_finite`` yet has no int value)."""
    try:
        return int(value_range.lower)
    except (AttributeError, TypeError, ValueError, OverflowError):
        return fallback


def symbol_example(value: Any, fallback: int, bindings: dict[str, int] | None = None) -> int:
    """The example value of a SymInt expression (an int as it is), without a guard; symbols named
    in ``bindings`` take those values (sizes read off real tensors) instead of their hints
    (``SymInt.node.expr``, checked on torch 2.13).
    """
    if not is_symbolic(value):
        return int(value)
    expr = value.node.expr
    values = {**symbol_values(value, fallback), **(bindings or {})}
    return int(expr.xreplace({s: values[str(s)] for s in expr.free_symbols}))


def symbol_names(value: Any) -> frozenset[str]:
    """Names of the symbols in a SymInt expression (``{"s0"}``; ``SymInt.node.expr``, checked on
    torch 2.13); empty for an int.
    """
    if not is_symbolic(value):
        return frozenset()
    return frozenset(str(s) for s in value.node.expr.free_symbols)


def is_fake_tensor(tensor: Any) -> bool:
    """Whether ``tensor`` is a FakeTensor (``torch._subclasses.fake_tensor.FakeTensor``, checked on
    torch 2.13), read only if torch has loaded that module; where it is gone: False.

    >>> import torch
    >>> is_fake_tensor(torch.zeros(2))
    False
    """
    fake_tensor = sys.modules.get("torch._subclasses.fake_tensor")
    return fake_tensor is not None and isinstance(tensor, fake_tensor.FakeTensor)


def fake_mode_of(tensor: Any) -> Any:
    """The ``FakeTensorMode`` of a FakeTensor (``torch._subclasses.fake_tensor``, checked on torch
    2.13), else ``None`` (also where that module is gone: no tensor is taken for a fake one).

    >>> import torch
    >>> fake_mode_of(torch.zeros(2)) is None
    True
    """
    fake_tensor = sys.modules.get("torch._subclasses.fake_tensor")
    if fake_tensor is None or not isinstance(tensor, fake_tensor.FakeTensor):
        return None
    return tensor.fake_mode
