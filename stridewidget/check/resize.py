"""An ``out=`` tensor the op will resize: where it will lie once resized, and what it then meets.

``torch.add(x[:50], 1, out=x[1:1])`` resizes the empty ``out`` to 50 elements from its storage
offset, onto ``x[1:51]``, over its own input: its current (empty) extent overlaps nothing.  The
op's result shape comes from its meta kernel, run on shape-only copies of the arguments; a resized
``out`` is contiguous from its storage offset, and that range is compared with each input exactly.
"""

from __future__ import annotations

import math
from typing import Any

import torch

from .._compat import tree_map
from ..layout.overlap import ranges_overlap_witness
from ..limits import META_RUN_CACHE_LIMIT
from .geometry import Witness, byte_span, unwrapped

__all__ = ["after_meta_run", "resized_overlaps"]


#: (op, :func:`_layout_key` of a call) -> the shapes its meta run left its distinct tensors, in
#: the order they first appear (``None``: it refused).  A meta run reads only the sizes, strides
#: and dtypes of its tensors, which are the same tensor where, and the other arguments: those
#: decide it, and a call alike in all of them gets the same shapes.
_META_RUNS: dict[tuple[Any, tuple], tuple[torch.Size, ...] | None] = {}
_UNSEEN = object()
#: The argument values a layout key holds as they are (hashable, compared by value and type).
_KEY_LEAVES = frozenset(
    {
        int,
        float,
        bool,
        str,
        type(None),
        torch.dtype,
        torch.device,
        torch.layout,
        torch.memory_format,
    }
)


def _layout_key(value: Any, tensors: dict[int, int]) -> Any:
    """What a meta run of a call sees of ``value``, or ``None`` where it holds anything else (a
    subclass, a SymInt, an object): not kept.  A plain tensor is its sizes, strides, dtype and
    the place it first appears in the call (``tensors``: ``id`` -> that place); tuples, lists
    and dicts are walked as :func:`tree_map` walks them."""
    kind = type(value)
    if kind is float:  # by its bits: -0.0 is not 0.0 here, a nan is itself
        return (kind, value.hex())
    if kind in _KEY_LEAVES:
        return (kind, value)
    if kind is torch.Tensor or kind is torch.nn.Parameter:
        if value.layout is not torch.strided or value.is_nested:
            return None
        first = tensors.setdefault(id(value), len(tensors))
        return (first, value.shape, value.stride(), value.dtype)
    if kind is tuple or kind is list:  # a fused optimizer's lists: their tensors inline
        items = []
        for item in value:
            if type(item) is torch.Tensor or type(item) is torch.nn.Parameter:
                if item.layout is not torch.strided or item.is_nested:
                    return None
                first = tensors.setdefault(id(item), len(tensors))
                items.append((first, item.shape, item.stride(), item.dtype))
            else:
                items.append(_layout_key(item, tensors))
    elif kind is dict and all(type(key) is str for key in value):
        items = [(key, _layout_key(item, tensors)) for key, item in value.items()]
        if any(item[1] is None for item in items):
            return None
    else:
        return None
    return None if None in items else (kind, tuple(items))


def after_meta_run(func: Any, args: tuple, kwargs: dict) -> dict[int, torch.Size] | None:
    """The shape each tensor argument has after the op, run on meta tensors (``id`` of the
    argument -> shape), or ``None`` where the op has no meta kernel or refuses.  Kept per op and
    call layout (:data:`_META_RUNS`).

    >>> x, out = torch.arange(6.0), torch.empty(0)
    >>> after_meta_run(torch.ops.aten.add.out, (x, 1.0), {"out": out})[id(out)]
    torch.Size([6])
    """
    tensors: dict[int, int] = {}
    layout = _layout_key((args, kwargs), tensors)
    if layout is None:
        return _meta_run(func, args, kwargs)
    key = (func, layout)
    shapes = _META_RUNS.get(key, _UNSEEN)  # one lookup: another thread may clear it meanwhile
    if shapes is not _UNSEEN:
        return None if shapes is None else dict(zip(tensors, shapes))
    found = _meta_run(func, args, kwargs)
    if len(_META_RUNS) >= META_RUN_CACHE_LIMIT:
        _META_RUNS.clear()
    _META_RUNS[key] = None if found is None else tuple(found[id_] for id_ in tensors)
    return found


def _meta_run(func: Any, args: tuple, kwargs: dict) -> dict[int, torch.Size] | None:
    """:func:`after_meta_run`, run."""
    metas: dict[int, torch.Tensor] = {}

    def meta(value: Any) -> Any:
        plain = unwrapped(value)  # a subclass too: never run on the user's tensors
        if plain is None or plain.layout is not torch.strided:
            return value
        if id(value) not in metas:
            metas[id(value)] = torch.empty_strided(
                plain.shape, plain.stride(), dtype=plain.dtype, device="meta"
            )
        return metas[id(value)]

    meta_args, meta_kwargs = tree_map(meta, (args, kwargs))
    try:
        with torch.no_grad():
            func(*meta_args, **meta_kwargs)
    except Exception:  # no meta kernel, or torch refuses: the real call decides
        return None
    return {key: t.shape for key, t in metas.items()}


def resized_overlaps(
    func: Any, args: tuple, kwargs: dict, written: list, read: list
) -> list[tuple[Witness, torch.Tensor, torch.Tensor, str]]:
    """``(witness, out, other, words)`` for each ``out=`` (of ``written``, each with ``.tensor``,
    ``.name`` and ``.given``, the subclass tensor it unwraps, if any) that the op resizes onto an
    input (of ``read``) or onto another ``out=`` (as that one is, or as the op resizes it too:
    ``torch.max(x, 0, out=(buf[0:0], buf.view(torch.int64)[1:1]))``)."""
    outs = [a for a in written if a.name != "self"]
    if not outs:
        return []
    shapes = after_meta_run(func, args, kwargs)
    if shapes is None:
        return []
    resized = []
    for out in outs:
        shape = shapes.get(id(out.tensor if out.given is None else out.given))
        resized.append(None if shape is None or shape == out.tensor.shape else shape)
    found = []
    for k, (out, shape) in enumerate(zip(outs, resized)):
        if shape is None:
            continue
        others = [(other, None) for other in read]
        others += [
            (other, new)
            for j, (other, new) in enumerate(zip(outs, resized))
            if j != k and (new is None or j > k)  # two resized: the pair once
        ]
        for other, new in others:
            witness = _resized_witness(out.tensor, shape, other.tensor, new)
            if witness is not None:
                also = "" if new is None else f" (resized by the op to {tuple(new)})"
                what = (
                    f"argument '{out.name}' (resized by the op to {tuple(shape)}) and "
                    f"argument '{other.name}'{also}"
                )
                found.append((witness, out.tensor, other.tensor, what))
    return found


def _resized_witness(
    out: torch.Tensor, shape: torch.Size, other: torch.Tensor, other_shape: Any = None
) -> Witness | None:
    """An index of ``out`` resized to ``shape`` (contiguous from its storage offset) and one of
    ``other`` (resized to ``other_shape`` too, unless None) sharing a byte, by address."""
    numel = math.prod(shape)
    if numel == 0 or (other.numel() == 0 and other_shape is None):
        return None
    if out.device != other.device or out.device.type == "meta":
        return None
    size, other_size = out.element_size(), other.element_size()
    base = out.untyped_storage().data_ptr()
    start = base + out.storage_offset() * size
    if other_shape is None:
        other_start = other.untyped_storage().data_ptr() + byte_span(other)[0]
        geometry = (tuple(other.shape), [s * other_size for s in other.stride()], other_start)
    else:
        if math.prod(other_shape) == 0:
            return None
        other_start = other.untyped_storage().data_ptr() + other.storage_offset() * other_size
        geometry = ((math.prod(other_shape),), (other_size,), other_start)
    found = ranges_overlap_witness((numel,), (size,), start, size, *geometry, other_size)
    if found is None:
        return None
    index = tuple(int(i) for i in torch.unravel_index(torch.tensor(found[0][0]), tuple(shape)))
    second = found[1]
    if other_shape is not None:
        flat = torch.tensor(second[0])
        second = tuple(int(i) for i in torch.unravel_index(flat, tuple(other_shape)))
    return Witness(index, second, (found[2] - base) // size)
