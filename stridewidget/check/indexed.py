"""Which storage elements an index-driven write (``index_put_``, ``scatter_``, ``masked_scatter_``
...) really writes, read from its index or mask values on CPU.

Such an op writes only the elements its indices name: ``x.index_put_((i,), x[0:1].expand(3),
accumulate=True)`` with ``i = [1, 1, 2]`` reads ``x[0]`` and never writes it, so the order it
writes in cannot change what it reads.  :func:`reads_unwritten` tells the sanitizer so, where the
index tensors are on CPU and small (:data:`LIMIT` elements); otherwise it answers ``False`` and the
overlap stays a hazard (the conservative answer).
"""

from __future__ import annotations

from typing import Any

import torch

__all__ = ["INDEXED_OPS", "LIMIT", "reads_unwritten"]

#: The most positions (written or read) computed for one call; past it the hazard stays.
LIMIT = 10**6

#: In-place ops that write ``self`` only where their index (``dim``, ``index``) or mask says.
_DIM_INDEX = frozenset({"index_add_", "index_copy_", "index_fill_", "index_reduce_"})
_SCATTER = frozenset({"scatter_", "scatter_add_", "scatter_reduce_"})
_PUT = frozenset({"index_put_", "_index_put_impl_"})
INDEXED_OPS = _DIM_INDEX | _SCATTER | _PUT | {"masked_scatter_", "put_"}


def _argument(args: tuple, kwargs: dict, position: int, name: str) -> Any:
    return args[position] if position < len(args) else kwargs.get(name)


def _plain(t: torch.Tensor) -> torch.Tensor:
    """The tensor's values as a plain tensor (a ``__torch_function__`` subclass too)."""
    return t if type(t) is torch.Tensor else t.as_subclass(torch.Tensor)


def _coordinates(shape: torch.Size) -> list[torch.Tensor]:
    """Per dim, each element's index along it, broadcast to ``shape`` without a copy."""
    ndim = len(shape)
    return [
        torch.arange(n).view([-1 if d == e else 1 for d in range(ndim)]).expand(shape)
        for e, n in enumerate(shape)
    ]


def _addresses(target: torch.Tensor, coordinates: list[torch.Tensor]) -> torch.Tensor:
    """Storage elements (from the storage's start) of ``target`` at the given coordinates."""
    address = torch.full(coordinates[0].shape if coordinates else (), target.storage_offset())
    for stride, c in zip(target.stride(), coordinates):
        address = address + stride * c
    return address.reshape(-1)


def _written(packet: str, target: torch.Tensor, args: tuple, kwargs: dict) -> torch.Tensor | None:
    """The storage elements of ``target`` (the call's ``self``) that the call writes, or
    ``None`` where they cannot be found cheaply."""
    shape, ndim = target.shape, target.dim()
    if ndim == 0:
        return None
    coords = _coordinates(shape)
    if packet in _PUT:
        indices = _argument(args, kwargs, 1, "indices")
        tensors = [i for i in indices if i is not None]
        if not tensors or any(i.device.type != "cpu" for i in tensors):
            return None
        covered = sum(i.dim() if i.dtype in (torch.bool, torch.uint8) else 1 for i in tensors)
        indexed = shape[:covered].numel() if covered <= ndim else 0
        if not indexed or max(i.numel() for i in tensors) * (shape.numel() // indexed) > LIMIT:
            return None
        key = tuple(slice(None) if i is None else _plain(i) for i in indices)
        return _addresses(target, [c[key] for c in coords])
    if packet == "masked_scatter_":
        mask = _argument(args, kwargs, 1, "mask")
        if mask.device.type != "cpu" or shape.numel() > LIMIT:
            return None
        mask = _plain(mask).expand(shape)
        return _addresses(target, [c[mask] for c in coords])
    if packet == "put_":
        index = _argument(args, kwargs, 1, "index")
        if index.device.type != "cpu" or index.numel() > LIMIT:
            return None
        flat = _plain(index).reshape(-1) % shape.numel()
        return _addresses(target, list(torch.unravel_index(flat, shape)))
    dim = _argument(args, kwargs, 1, "dim")
    index = _argument(args, kwargs, 2, "index")
    if not isinstance(dim, int) or index.device.type != "cpu":
        return None
    dim %= ndim
    index = _plain(index)
    if packet in _SCATTER:  # self[..., index[p], ...] at each position p of index
        if index.numel() > LIMIT or index.dim() != ndim:
            return None
        at = _coordinates(index.shape)
        at[dim] = index
        return _addresses(target, at)
    if index.numel() * (shape.numel() // max(shape[dim], 1)) > LIMIT:
        return None
    return _addresses(target, [c.index_select(dim, index.reshape(-1)) for c in coords])


def _read(other: torch.Tensor) -> torch.Tensor | None:
    """The storage elements ``other`` reads (a stride-0 dim read once)."""
    sizes = [1 if s == 0 else n for n, s in zip(other.shape, other.stride())]
    if torch.Size(sizes).numel() > LIMIT:
        return None
    return _addresses(other, _coordinates(torch.Size(sizes)))


def reads_unwritten(
    packet: str, written: torch.Tensor, other: torch.Tensor, args: tuple, kwargs: dict
) -> bool:
    """Does ``other`` (read by the call) read no storage element the index-driven write of
    ``written`` (its ``self``) writes?  ``False`` where that is not settled cheaply: another op,
    a device other than CPU, more than :data:`LIMIT` positions, a different element size."""
    if packet not in INDEXED_OPS or written.device.type != "cpu" or other.device.type != "cpu":
        return False
    size = written.element_size()
    if other.element_size() != size:
        return False
    try:
        shift, rest = divmod(
            other.untyped_storage().data_ptr() - written.untyped_storage().data_ptr(), size
        )
        if rest:
            return False
        writes = _written(packet, written, args, kwargs)
        reads = _read(other) if writes is not None else None
    except (RuntimeError, IndexError, TypeError, ValueError):  # torch refuses it: it decides
        return False
    if writes is None or reads is None:
        return False
    return not bool(torch.isin(reads + shift, writes).any())
