"""Nested containers of tensors (tuples, lists, dicts, model outputs) flattened, mapped and
walked as torch's pytrees do."""

from __future__ import annotations

from typing import Any

__all__ = ["tree_flatten", "tree_leaves", "tree_map"]


def tree_flatten(value: Any) -> tuple[list[Any], Any]:
    """The leaves of nested containers and a structure to compare: ``torch.utils._pytree``'s
    (checked on torch 2.0–2.13: it knows named tuples and model outputs), else tuples, lists and
    dicts walked here.

    >>> tree_flatten({"a": 1, "b": [2, (3,)]})[0]
    [1, 2, 3]
    """
    try:
        from torch.utils._pytree import tree_flatten as flatten
    except ImportError:  # a torch without it
        leaves: list[Any] = []
        return leaves, _walk(value, leaves)
    return flatten(value)


def _walk(value: Any, leaves: list[Any]) -> Any:
    if type(value) in (tuple, list):
        return (type(value), [_walk(item, leaves) for item in value])
    if type(value) is dict:
        return (dict, [(key, _walk(item, leaves)) for key, item in value.items()])
    leaves.append(value)
    return None


def tree_map(fn: Any, value: Any) -> Any:
    """``value`` with ``fn`` applied to each leaf: ``torch.utils._pytree.tree_map`` (checked on
    torch 2.0–2.13), else tuples, lists and dicts rebuilt here.

    >>> tree_map(lambda n: n * 10, ((1, [2]), {"k": 3}))
    ((10, [20]), {'k': 30})
    """
    try:
        from torch.utils._pytree import tree_map as mapped
    except ImportError:  # a torch without it
        if type(value) in (tuple, list):
            return type(value)(tree_map(fn, item) for item in value)
        if type(value) is dict:
            return {key: tree_map(fn, item) for key, item in value.items()}
        return fn(value)
    return mapped(fn, value)


def tree_leaves(tree: Any) -> list[Any]:
    """The leaves of nested tuples/lists/dicts, in torch's order (``torch.utils._pytree``,
    torch 1.11 to 2.13; the flattening ``torch.export`` uses for a program's inputs), else
    tuples, lists and dicts walked here.

    >>> tree_leaves(((1, [2]), {"k": 3}))
    [1, 2, 3]
    """
    try:
        from torch.utils._pytree import tree_leaves as leaves_of
    except ImportError:
        leaves: list[Any] = []
        _walk(tree, leaves)
        return leaves
    return leaves_of(tree)
