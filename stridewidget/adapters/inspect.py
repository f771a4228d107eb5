"""The public dispatch of the adapters: live object -> :class:`Layout`, storage identity, overlap.

:func:`inspect` hands a tensor to :mod:`.torch` and an array to :mod:`.numpy`;
:func:`same_storage`, :func:`overlap` and :func:`storage_key` compare what those adapters read.
Nothing here reads a tensor's values, synchronizes a device or copies data, except
:func:`read_cells`, which reads exactly the storage cells it is asked for.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any, NamedTuple

from .._compat import (
    eagerly,
    local_tensors_by_rank,
    storage_id,
    traced_by_dynamo,
    wrapped_tensors,
)
from ..errors import LayoutError
from ..layout.distributed import DistributedLayout
from ..layout.layout import Layout
from ..layout.overlap import ranges_overlap
from .distributed import distributed_layout, is_dtensor
from .numpy import (
    _check_numpy,
    _numpy_buffer,
    _numpy_layout,
    arrays_overlap,
    is_ndarray,
    numpy_storage_view,
)
from .objects import _describe, conversion_hint
from .torch import (
    _read_torch_cells,
    _torch_layout,
    is_tensor,
    plain_geometry,
    torch_layout_fields,
)

__all__ = [
    "drawable",
    "inspect",
    "layout_and_cells",
    "overlap",
    "read_cells",
    "same_storage",
    "storage_key",
    "storage_nbytes",
]


def inspect(x: Any) -> Layout | DistributedLayout:
    """The exact memory layout of a live tensor or array, in O(ndim) time.

    Reads only metadata (shape, strides, offset, storage size): never values, never a device sync.

    >>> import torch, stridewidget as sw
    >>> x = torch.arange(12.0).reshape(3, 4)
    >>> print(sw.inspect(x[:, 1::2]))
    float32 (3,2):(4,2) +1 · storage 12 · strided
    >>> sw.inspect(x.expand(2, 3, 4)).has_overlap
    True
    >>> sw.inspect(torch.empty(10**12, device="meta")).numel
    1000000000000

    A ``torch.distributed.tensor.DTensor`` gives a :class:`DistributedLayout`: its global shape,
    mesh and placements, and each rank's real local layout (see its ``explain()``).
    """
    if is_dtensor(x):
        return distributed_layout(x)
    if is_tensor(x):
        if type(x).__name__ == "LocalTensor":  # no plain tensor: the hot path pays one compare
            _refuse_local_tensor(x, None)
        return _torch_layout(x)
    if is_ndarray(x):
        return _numpy_layout(x)
    if isinstance(x, Layout):
        return x
    raise TypeError(
        f"stridewidget.inspect() takes a torch.Tensor or numpy.ndarray, got {_describe(x)}."
        f"{conversion_hint(x)}"
    )


def drawable(x: Any, who: str | None = None) -> Layout:
    """:func:`inspect` for what draws one storage: a DTensor has none of its own (each rank holds
    a local tensor), so it is refused in one line rather than drawn as a storage that is nowhere.

    >>> import torch
    >>> print(drawable(torch.zeros(2)))
    float32 (2):(1) +0 · storage 2 · contiguous
    """
    _refuse_local_tensor(x, who)
    layout = inspect(x)
    if isinstance(layout, DistributedLayout):
        raise LayoutError(
            (f"{who}: " if who else "")
            + "a DTensor is drawn alone, not with other tensors (its global tensor has no "
            "storage of its own): sw.show(d), sw.render_svg(d) or sw.render_html(d) draws it, "
            "print(sw.inspect(d).explain()) says which rank holds what, "
            "and sw.show(d.to_local()) draws this rank's local tensor"
        )
    return layout


def _refuse_local_tensor(x: Any, who: str | None) -> None:
    """One line for a ``LocalTensor``: a wrapper of every rank's local tensor, no one storage."""
    if local_tensors_by_rank(x) is not None:
        raise LayoutError(
            (f"{who}: " if who else "stridewidget: ")
            + "a LocalTensor (LocalTensorMode: every rank's local tensor at once) has no one "
            "storage: sw.inspect(d) / sw.show(d) read the DTensor with each rank's storage, and "
            "sw.show(lt._local_tensors[r]) one rank's local tensor"
        )


def layout_and_cells(x: Any) -> tuple[Layout, Any]:
    """Layout of ``x`` plus a key that is equal exactly when two objects share a storage."""
    layout = drawable(x)
    return layout, _storage_identity(x, layout.storage_address, layout.device)


def _storage_identity(x: Any, storage_address: int | None, device: str) -> Hashable:
    if storage_address is not None:
        return device, storage_address
    if is_tensor(x):
        # Meta and zero-byte storages have no memory address; the StorageImpl is their identity.
        return "torch-storage", storage_id(x.untyped_storage())
    return "empty", id(x)


def storage_key(x: Any) -> Hashable:
    """A hashable identity of the storage under ``x``: equal keys mean the same storage.

    >>> import torch, stridewidget as sw
    >>> from stridewidget.adapters.inspect import storage_key
    >>> x = torch.zeros(4)
    >>> storage_key(x) == storage_key(x[1:].view(3, 1)[2]), storage_key(x) == storage_key(x.clone())
    (True, False)
    """
    return layout_and_cells(x)[1]


class _Extent(NamedTuple):
    """What :func:`overlap` and :func:`same_storage` need of one object, in bytes."""

    shape: tuple[int, ...]
    byte_strides: tuple[int, ...]
    byte_offset: int
    itemsize: int
    storage_address: int | None
    storage_nbytes: int
    device: str
    key: Hashable  # equal exactly when two objects share a storage (see `layout_and_cells`)


def _extent(x: Any) -> _Extent:
    """Byte geometry of ``x``; arrays and tensors skip the :class:`Layout` (cell units, checks of
    fields their adapters already know), most of the time ``sw.overlap`` spent on a typical pair
    (bench_inspect.py)."""
    if is_ndarray(x):
        _check_numpy(x)
        start, nbytes = _numpy_buffer(x)
        return _Extent(
            x.shape,
            x.strides,
            x.__array_interface__["data"][0] - start,
            x.itemsize,
            start or None,
            nbytes,
            "cpu",
            _storage_identity(x, start or None, "cpu"),
        )
    if is_tensor(x):
        fields = torch_layout_fields(x)
        itemsize = fields["itemsize"]
        address = fields["storage_address"]
        return _Extent(
            fields["shape"],
            tuple(s * itemsize for s in fields["strides"]),
            fields["offset"] * itemsize,
            itemsize,
            address,
            # the storage's exact bytes, as the plain path, the copy tracker and NumPy count
            # them (`storage_size` rounds a storage of 7 bytes down to one float32)
            fields["storage_size"] * itemsize if address is None else x.untyped_storage().nbytes(),
            fields["device"],
            _storage_identity(x, fields["storage_address"], fields["device"]),
        )
    layout, key = layout_and_cells(x)
    return _Extent(
        layout.shape,
        layout.byte_strides,
        layout.byte_offset,
        layout.itemsize,
        layout.storage_address,
        layout.storage_nbytes,
        layout.device,
        key,
    )


#: The tensor types with a storage of bytes of their own (not a subclass: a fake, functional or
#: wrapper tensor has none to count).
_PLAIN_TENSORS = frozenset({"torch.Tensor", "torch.nn.parameter.Parameter"})


def storage_nbytes(x: Any) -> int | None:
    """The exact bytes of the storage a plain tensor or a NumPy array is over, or None for
    anything else (a tensor subclass, a symbolic or meta tensor: no storage of bytes to count).
    A layout counts whole elements: 10 bytes under a float32 view are 2 elements, 8 bytes.

    >>> import torch
    >>> storage_nbytes(torch.arange(10, dtype=torch.uint8)[:8].view(torch.float32))
    10
    """
    plain = is_tensor(x) and f"{type(x).__module__}.{type(x).__name__}" in _PLAIN_TENSORS
    if is_ndarray(x) or (plain and x.device.type != "meta"):
        extent = _extent(x)
        return extent.storage_nbytes if extent.storage_address is not None else None
    return None


def _data_parts(x: Any) -> tuple[Any, ...]:
    """The objects whose storages hold ``x``'s data: a wrapper subclass's inner tensors (its own
    storage has no memory), followed down through wrappers of wrappers; else ``x`` itself.  The
    copy tracker sees wrappers the same way, so every part of the package gives one answer."""
    if not is_tensor(x):
        return (x,)
    inner = wrapped_tensors(x)
    if not inner:
        return (x,)
    return tuple(part for tensor in inner for part in _data_parts(tensor))


def _share(a: _Extent, b: _Extent) -> bool:
    if a.key == b.key:
        return True
    if a.storage_address is None or b.storage_address is None or a.device != b.device:
        return False
    return (
        a.storage_address < b.storage_address + b.storage_nbytes
        and b.storage_address < a.storage_address + a.storage_nbytes
    )


def same_storage(a: Any, b: Any) -> bool:
    """Do ``a`` and ``b`` live in the same storage (memory block)?  By identity, not values.

    Works across torch and NumPy (``t.numpy()`` shares ``t``'s storage) and sees through
    ``detach()`` and ``view(dtype)``, which share storage without being ``_is_view()``.  Two
    storage objects over memory that shares a byte (``torch.frombuffer`` of overlapping slices of
    one buffer) are one memory block: a storage's exact bytes count, for tensors and arrays alike.

    >>> import torch, stridewidget as sw
    >>> x = torch.arange(6.0)
    >>> sw.same_storage(x, x.detach()), sw.same_storage(x, x.view(torch.int32))
    (True, True)
    >>> sw.same_storage(x, x.numpy()), sw.same_storage(x, x.clone())
    (True, False)

    A wrapper subclass (``TwoTensor``, ``DTensor``) shares storage with a tensor when any tensor
    it wraps does, as the copy tracker counts it:

    >>> from torch.testing._internal.two_tensor import TwoTensor
    >>> sw.same_storage(TwoTensor(x, x.clone()), x), sw.overlap(TwoTensor(x, x.clone()), x[2:])
    (True, True)
    """
    plain_a = plain_geometry(a)
    if plain_a is not None:
        plain_b = plain_geometry(b)
        if plain_b is not None:  # two plain tensors: one device, storages that share a byte
            address_a, nbytes_a, device_a = plain_a[:3]
            address_b, nbytes_b, device_b = plain_b[:3]
            return device_a == device_b and (
                address_a == address_b
                or (address_a < address_b + nbytes_b and address_b < address_a + nbytes_a)
            )
    return any(_share(_extent(p), _extent(q)) for p in _data_parts(a) for q in _data_parts(b))


def _refuse_symbols(*extents: _Extent) -> None:
    """Overlap of layouts with symbolic sizes (traced FakeTensors) is not decided here: asking
    would add guards to the program."""
    from .symbolic import has_symbols

    for extent in extents:
        if has_symbols(extent.shape, extent.byte_strides, extent.byte_offset):
            raise LayoutError(
                "sw.overlap: these tensors share a storage but have symbolic sizes or strides "
                "(a traced program's FakeTensors); their overlap depends on the symbols and is "
                "not decided (deciding it would add guards): compare them at concrete sizes"
            )


def overlap(a: Any, b: Any) -> bool:
    """Exact: do ``a`` and ``b`` share at least one storage element (byte)?

    Unlike a byte-range check, interleaved views do not overlap:

    >>> import torch, stridewidget as sw
    >>> x = torch.arange(10)
    >>> sw.overlap(x[::2], x[1::2]), sw.overlap(x[::2], x[4:5]), sw.overlap(x, x.clone())
    (False, True, False)

    Called inside a ``torch.compile``-d function, it runs on the real tensors outside the trace
    (one graph break): no guard on their sizes, no recompile for each new size.
    """
    if traced_by_dynamo():
        return eagerly(_overlap)(a, b)
    return _overlap(a, b)


def _overlap(a: Any, b: Any) -> bool:
    plain_a = plain_geometry(a)
    if plain_a is not None:
        plain_b = plain_geometry(b)
        if plain_b is not None:
            return _plain_overlap(plain_a, plain_b)
    elif is_ndarray(a) and is_ndarray(b):
        answer = arrays_overlap(a, b)
        if answer is False:
            return False
        if answer:  # bytes meet; as everywhere else, only in memory blocks that share a byte
            # (an `as_strided` array reaching past its block meets no other block's array)
            return _share(_extent(a), _extent(b))
    return any(
        _extents_overlap(_extent(p), _extent(q)) for p in _data_parts(a) for q in _data_parts(b)
    )


def _plain_overlap(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    """:func:`overlap` of two plain tensors (:func:`.torch.plain_geometry`): the hot path, with
    no symbol check (plain tensors have none) and no solver when the storages or extents differ."""
    address_a, nbytes_a, device_a, shape_a, strides_a, offset_a, itemsize_a = a
    address_b, nbytes_b, device_b, shape_b, strides_b, offset_b, itemsize_b = b
    if device_a != device_b:
        return False
    if address_a == address_b:
        if itemsize_a == itemsize_b:  # one storage, one cell size: count in elements
            return ranges_overlap(shape_a, strides_a, offset_a, 1, shape_b, strides_b, offset_b, 1)
    elif address_a >= address_b + nbytes_b or address_b >= address_a + nbytes_a:
        return False  # storages that share no byte
    return ranges_overlap(
        shape_a,
        tuple(s * itemsize_a for s in strides_a),
        address_a + offset_a * itemsize_a,
        itemsize_a,
        shape_b,
        tuple(s * itemsize_b for s in strides_b),
        address_b + offset_b * itemsize_b,
        itemsize_b,
    )


def _extents_overlap(extent_a: _Extent, extent_b: _Extent) -> bool:
    if not _share(extent_a, extent_b):
        return False
    if extent_a.storage_address is None:  # only storages without memory can carry symbols
        _refuse_symbols(extent_a, extent_b)
    if extent_a.key == extent_b.key or extent_a.storage_address is None:
        base_a = base_b = 0
    else:
        base_a, base_b = extent_a.storage_address, extent_b.storage_address  # type: ignore[assignment]
    return ranges_overlap(
        extent_a.shape,
        extent_a.byte_strides,
        base_a + extent_a.byte_offset,
        extent_a.itemsize,
        extent_b.shape,
        extent_b.byte_strides,
        base_b + extent_b.byte_offset,
        extent_b.itemsize,
    )


def read_cells(x: Any, storage_indices: Sequence[int], *, as_stored: bool = False) -> Any:
    """The raw values stored at the given storage element indices, as a NumPy array.

    Reads those cells only: on CUDA it gathers them on the device and copies just them to the
    host.  Returns ``None`` when there are no values to read: meta and fake tensors, wrapper
    subclasses and functional tensors (their data lives in inner tensors), and dtypes torch cannot
    index (sub-byte ints, bits, float4); the layout's notes say which.  Conj/neg views return the
    values as read through the view (conjugated / negated) unless ``as_stored`` asks for what memory
    holds; quantized tensors return their integer codes.

    >>> import torch
    >>> from stridewidget.adapters.inspect import read_cells
    >>> x = torch.arange(12.0).reshape(3, 4).t()
    >>> read_cells(x, [0, 5, 11]).tolist()
    [0.0, 5.0, 11.0]
    >>> read_cells(torch.tensor([1 + 2j]).conj(), [0]).tolist()
    [(1-2j)]
    >>> read_cells(torch.tensor([1 + 2j]).conj(), [0], as_stored=True).tolist()
    [(1+2j)]
    """
    np = __import__("numpy")
    layout = drawable(x, "read_cells")
    if getattr(layout, "is_symbolic", False):  # a traced (fake) tensor: no values, and no guards
        return None
    indices = np.asarray(storage_indices, dtype=np.int64).reshape(-1)
    if indices.size and (indices.min() < 0 or indices.max() >= layout.storage_size):
        raise LayoutError(
            f"read_cells: storage indices must lie in [0, {layout.storage_size}), "
            f"got {int(indices.min())}..{int(indices.max())}"
        )
    if is_ndarray(x):
        if layout.unit != layout.itemsize:
            raise LayoutError(
                "read_cells: byte-misaligned NumPy views have no element cells to read"
            )
        return numpy_storage_view(x, layout)[indices]
    return _read_torch_cells(x, layout, indices, as_stored)
