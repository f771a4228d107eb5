"""What an in-place index write writes: ``index_copy_``, ``index_put_``, ``scatter_`` and
``index_fill_`` write some of their destination's elements, not all of it.  Read from the graph's
own FakeTensors (sizes may be symbols; none is compared, so nothing guards)."""

from __future__ import annotations

import math
from typing import Any

import torch

from .._compat import op_arguments, op_schema

__all__ = ["fx_value", "index_write"]

#: The writes whose elements are the source's: one per source element.
_BY_SOURCE = frozenset({"index_copy_", "index_add_", "index_reduce_"})
#: The writes of one element per index element.
_BY_INDEX = frozenset({"scatter_", "scatter_add_", "scatter_reduce_"})
#: The writes where the data decides how many elements change.
_MASKED = frozenset({"masked_fill_", "masked_scatter_"})


def _arguments(node: Any) -> dict[str, Any]:
    """The node's arguments by schema name, each node replaced by its FakeTensor."""
    given = {}
    for position, argument in enumerate(op_arguments(node.target)):
        value = node.args[position] if position < len(node.args) else None
        value = node.kwargs.get(argument.name, value)
        given[argument.name] = fx_value(value)
    return given


def fx_value(arg: Any) -> Any:
    """An FX argument as the graph's own values (each node replaced by its ``meta["val"]``)."""
    if hasattr(arg, "meta"):
        return arg.meta.get("val")
    if isinstance(arg, (list, tuple)):
        return type(arg)(fx_value(a) for a in arg)
    if isinstance(arg, dict):
        return {k: fx_value(v) for k, v in arg.items()}
    return arg


def _size(tensor: Any) -> Any:
    return tensor.numel() * tensor.element_size()


def _broadcast(shapes: list[tuple[Any, ...]]) -> tuple[Any, ...] | None:
    """The broadcast of index shapes without comparing a symbol: per dimension the one size
    that is not the int 1 (the same expression in each); ``None`` where that is not so."""
    rank = max(len(s) for s in shapes)
    out = []
    for i in range(1, rank + 1):
        sizes = {str(s[-i]): s[-i] for s in shapes if len(s) >= i}
        sizes.pop("1", None)
        if len(sizes) > 1:
            return None
        out.append(next(iter(sizes.values()), 1))
    return tuple(reversed(out))


def _indexed_numel(dest: Any, indices: list[Any]) -> Any:
    """Elements ``dest[indices]`` has (``None`` where a mask or an unreadable broadcast makes it
    a matter of data)."""
    tensors = [t for t in indices if t is not None]
    if not tensors or any(t.dtype in (torch.bool, torch.uint8) for t in tensors):
        return None
    shape = _broadcast([tuple(t.shape) for t in tensors])
    if shape is None:
        return None
    kept = [n for n, t in zip(dest.shape, [*indices, *[None] * dest.dim()]) if t is None]
    return math.prod(shape, start=1) * math.prod(kept, start=1)


def index_write(node: Any) -> tuple[Any, str] | None:
    """(bytes written, a note) for an in-place index write; ``None`` for any other op.  The note
    is ``""`` where the bytes are exact, and says so where they are an upper bound (a masked
    write: the destination's bytes).

    >>> import torch, stridewidget as sw
    >>> def put(b, x):
    ...     return b.index_copy_(0, torch.tensor([1, 5]), x)
    >>> g = sw.graph(put, torch.zeros(8, 4), torch.ones(2, 4), stage="export")
    >>> [(n.target, n.bytes) for n in g.nodes if n.kind == "in-place"]
    [('aten.index_copy_', 32)]
    """
    name = op_schema(node.target).name.split("::")[-1]
    given = _arguments(node)
    dest = given.get("self")
    if not isinstance(dest, torch.Tensor):
        return None
    itemsize = dest.element_size()
    if name in _BY_SOURCE and isinstance(given.get("source"), torch.Tensor):
        return given["source"].numel() * itemsize, ""
    if name in _BY_INDEX and isinstance(given.get("index"), torch.Tensor):
        return given["index"].numel() * itemsize, ""
    if name == "index_fill_" and isinstance(given.get("index"), torch.Tensor):
        dim = given["dim"] % max(dest.dim(), 1)
        rest = math.prod([n for d, n in enumerate(dest.shape) if d != dim], start=1)
        return given["index"].numel() * rest * itemsize, ""
    if name in ("index_put_", "_index_put_impl_"):
        numel = _indexed_numel(dest, list(given.get("indices") or []))
        if numel is not None:
            return numel * itemsize, ""
        name = "index_put_ (a mask, or indices broadcast over symbols)"
    elif name not in _MASKED:
        return None
    return _size(dest), (
        f"{name} writes where its mask is true: how many elements is data the graph does not "
        "hold; the bytes are the destination's, at most what it writes"
    )
