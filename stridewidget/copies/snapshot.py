"""What the tracker keeps of a tensor it saw: where its storage lives and its layout, cheaply.

An :class:`Extent` says where a tensor's data lives (enough to decide aliasing); a
:class:`Snapshot` holds a tensor's extents and its layout as read at call time, building the
:class:`~stridewidget.Layout` only when read.  :func:`arrays_in` finds the tensors and arrays in
a call's arguments or result.
"""

from __future__ import annotations

import weakref
from typing import Any, NamedTuple

import torch

from .._compat import functorch_unwrapped, storage_id, storage_id_reader, wrapped_tensors
from ..adapters.aten import ARRAY_TYPES, arrays_in, data_nbytes
from ..adapters.inspect import inspect
from ..adapters.torch import device_name, dtype_name, torch_layout_fields
from ..errors import LayoutError
from ..layout.layout import Layout
from ..unseen import unseen

__all__ = [
    "Extent",
    "Snapshot",
    "arrays_in",
    "call_snapshots",
    "data_nbytes",
    "distinct",
    "has_array",
    "shares_any",
    "snapshots_of",
    "storage_extents",
]


class Extent(NamedTuple):
    """Where a tensor's storage lives: enough to decide aliasing, nothing more."""

    cdata: (
        int | None
    )  # StorageImpl identity (shared by views, detach, view(dtype), even at 0 bytes)
    device: Any
    address: int  # first byte of the storage; 0 when it has no memory (empty, meta)
    nbytes: int

    def shares(self, other: Extent) -> bool:
        """Same storage, or overlapping bytes on one device."""
        if self.cdata is not None and self.cdata == other.cdata:
            return True
        if not self.address or not other.address or self.device != other.device:
            return False
        return self.address < other.address + other.nbytes and (
            other.address < self.address + self.nbytes
        )


_CPU = torch.device("cpu")
_storage_id = storage_id_reader()  # storage_id in one C call (a snapshot reads it per tensor)
_new_tuple = tuple.__new__  # an Extent from its four fields without NamedTuple's Python __new__
_CONTAINERS = frozenset({tuple, list, dict})  # as arrays_in looks into


def storage_extents(t: torch.Tensor) -> tuple[Extent, ...]:
    """Where a tensor's data lives: its storage, or for a wrapper subclass (``TwoTensor``, any
    ``_make_wrapper_subclass`` with ``__tensor_flatten__``) the storages of the tensors it wraps,
    whose own storage is a placeholder without memory; for a functorch wrapper without a storage
    (``vmap``'s BatchedTensor, ``grad``'s TensorWrapper) the tensor it wraps.  Empty for sparse
    and other tensors without a storage to alias."""
    plain = type(t) in _PLAIN_TENSOR_TYPES  # not a wrapper; its storage is on its device
    if plain and _PLAIN_DEVICES.get(device := t.device):  # the common case, as below in one go
        try:
            storage = t.untyped_storage()
            extent = (_storage_id(storage), device, storage.data_ptr(), storage.nbytes())
            return (_new_tuple(Extent, extent),)
        except (RuntimeError, NotImplementedError, TypeError):
            pass  # no storage, or no memory: the general path below says which
    inner = None if plain else wrapped_tensors(t)
    if inner is not None:
        return tuple(extent for tensor in inner for extent in storage_extents(tensor))
    try:
        storage = t.untyped_storage()
    except (RuntimeError, NotImplementedError, TypeError):
        unwrapped = functorch_unwrapped(t)
        return () if unwrapped is None else storage_extents(unwrapped)
    address = 0
    device = t.device
    if (plain and _PLAIN_DEVICES.get(device)) or storage.device.type != "meta":
        # meta and FakeTensor storages have no memory
        try:
            address = storage.data_ptr()
        except RuntimeError:  # nor do functionalization's; their identity still tells aliasing
            address = 0
    return (Extent(storage_id(storage), device, address, storage.nbytes()),)


def shares_any(extents: tuple[Extent, ...] | list[Extent], others: list[Extent]) -> bool:
    """Does any of ``extents`` share memory with any of ``others``?"""
    return any(extent.shares(other) for extent in extents for other in others)


#: The dtypes whose layout needs no note (not quantized, every value readable): with a plain
#: tensor of one of them, a snapshot reads the few raw fields both its extent and its layout need.
_PLAIN_DTYPES = frozenset(
    {
        torch.float64,
        torch.float32,
        torch.float16,
        torch.bfloat16,
        torch.int64,
        torch.int32,
        torch.int16,
        torch.int8,
        torch.uint8,
        torch.bool,
        torch.complex64,
        torch.complex128,
    }
)
_COMPLEX_DTYPES = frozenset({torch.complex64, torch.complex128})
_PLAIN_TENSOR_TYPES = frozenset({torch.Tensor, torch.nn.Parameter})
# device -> is it a CPU or CUDA device (``device.type`` costs as much as the rest of a snapshot)
_PLAIN_DEVICES: dict[Any, bool] = {}


class Snapshot:
    """A tensor's layout as read at call time; the :class:`Layout` is built on read.

    Building a ``Layout`` per tensor per call would dominate the tracker's cost.  For a plain
    tensor (a ``Tensor`` or ``Parameter`` of a :data:`_PLAIN_DTYPES` dtype on CPU or CUDA, no
    conj/neg bit, its storage readable) this keeps the raw fields (shape, strides, offset, dtype,
    storage) read once for both the extent and the layout, whose fields are then exactly what the
    torch adapter would read.  Any other tensor gets the adapter's fields
    (:func:`stridewidget.adapters.inspect.torch_layout_fields`), with its notes (conj, neg, quantized,
    meta ...), and builds the object when asked.
    """

    __slots__ = ("_extents", "_fields", "_layout", "_raw", "ref", "storage")

    def __init__(self, obj: Any, layout: bool = True) -> None:
        self.ref = weakref.ref(obj)
        self._layout = self._fields = self._raw = self._extents = None
        if type(obj) in _PLAIN_TENSOR_TYPES:
            self._raw = _plain_fields(obj)
            if self._raw is not None:  # its extent is built from the raw fields when read
                return
        if isinstance(obj, torch.Tensor):
            self._extents = storage_extents(obj)
            if layout:
                self.read_layout()
        else:  # a NumPy array: rare (``.numpy()``), inspect it now
            try:
                self._layout = layout = inspect(obj)
            except LayoutError:  # an object array has no cells to alias
                self._extents = ()
                return
            self._extents = (
                Extent(None, _CPU, layout.storage_address or 0, layout.storage_nbytes),
            )

    @property
    def extents(self) -> tuple[Extent, ...]:
        """Where the tensor's data lived at call time (see :func:`storage_extents`)."""
        extents = self._extents
        if extents is None:
            extents = self._extents = (Extent(*self._raw[4:]),)
        return extents

    def still(self, obj: Any) -> bool:
        """Is this snapshot of a plain tensor still ``obj``'s: its storage where it was, as large?
        Its shape, strides and offset change only by ops the op mode sees (``t_``, ``resize_``,
        ``set_``: it forgets the tensor then); this catches the storage moved or resized under
        it (``untyped_storage().resize_()``, ``.data =``)."""
        storage = obj.untyped_storage()
        raw = self._raw
        return storage.data_ptr() == raw[6] and storage.nbytes() == raw[7]

    @classmethod
    def for_drawing(cls, obj: Any) -> Snapshot:
        """A snapshot whose layout may be drawn but from which no aliasing is decided: a plain
        tensor's raw fields only (no extent, no reference); anything else as ``cls(obj)``."""
        if type(obj) in _PLAIN_TENSOR_TYPES:
            raw = _plain_fields(obj)
            if raw is not None:
                snapshot = object.__new__(cls)
                snapshot._raw, snapshot._layout, snapshot._fields = raw, None, None
                snapshot._extents, snapshot.ref = (), None
                return snapshot
        return cls(obj)

    def release(self) -> None:
        """Drop the reference to the tensor (a finished log holds none:
        ``torch.utils.swap_tensors`` refuses a tensor a weak reference points to;
        :meth:`CopyLog.let_go`), its layout read first.  A plain tensor's storage stays weakly
        referenced (torch never swaps a storage), to draw its values while it lives."""
        obj = self.ref()
        self.read_layout()
        self.ref = None
        if obj is not None and self._raw is not None:
            self.storage = weakref.ref(obj.untyped_storage())

    def drawable(self) -> Any:
        """What draws the tensor: itself while this snapshot references it; else, while its
        storage lives where and as large as it was, a view of it in the layout as recorded (its
        values now); else the recorded layout (no values)."""
        ref = self.ref
        obj = ref() if ref is not None else None
        if obj is not None:
            return obj
        storage_ref = getattr(self, "storage", None)  # set only by release()
        storage = storage_ref() if storage_ref is not None else None
        raw = self._raw
        if storage is None or storage.data_ptr() != raw[6] or storage.nbytes() != raw[7]:
            return self.layout
        shape, strides, offset, dtype = raw[:4]
        with unseen():  # no event of a block this is drawn in
            view = torch.empty(0, dtype=dtype, device=storage.device)
            return view.set_(storage, offset, tuple(shape), tuple(strides))

    def read_layout(self) -> None:
        """Read the tensor's layout fields now: at once, or, for a snapshot made with
        ``layout=False``, later in the same call, while the tensor is alive and unchanged."""
        if self._raw is not None or self._fields is not None or self.ref is None:
            return
        obj = self.ref()
        while isinstance(obj, torch.Tensor):
            try:
                self._fields = torch_layout_fields(obj)
                return
            except (LayoutError, RuntimeError, NotImplementedError, TypeError):
                # a functorch wrapper: the layout of the tensor it wraps (a BatchedTensor's
                # physical tensor, batch dims included); sparse, nested, opaque: no strides
                obj = functorch_unwrapped(obj)

    @property
    def layout(self) -> Layout | None:
        """The tensor's layout at call time (``None`` for a tensor without strides)."""
        if self._layout is None:
            if self._raw is not None:
                shape, strides, offset, dtype, _cdata, device, address, nbytes = self._raw
                itemsize = dtype.itemsize
                self._layout = Layout(
                    shape=tuple(shape),
                    strides=strides,
                    offset=offset,
                    itemsize=itemsize,
                    storage_size=nbytes // itemsize,
                    dtype=dtype_name(dtype),
                    device=device_name(device),
                    notes=(),
                    storage_address=address or None,
                )
            elif self._fields is not None:
                self._layout = Layout(**self._fields)
        return self._layout


def _plain_fields(t: torch.Tensor) -> tuple[Any, ...] | None:
    """``(shape, strides, offset, dtype, *extent)`` of a plain tensor (see :class:`Snapshot`),
    else ``None``: the raw values, no strings, no ``Layout``; ``extent`` is its :class:`Extent`'s
    fields.  A sparse, mkldnn or (strided) nested tensor has no storage or no strides: reading
    them raises, which says so without asking its layout and nestedness first."""
    dtype = t.dtype
    if dtype not in _PLAIN_DTYPES:
        return None
    device = t.device
    plain_device = _PLAIN_DEVICES.get(device)
    if plain_device is None:
        plain_device = _PLAIN_DEVICES[device] = device.type in ("cpu", "cuda")
    # only a complex tensor can carry the conj bit (torch asserts so): one call fewer per tensor
    if not plain_device or t.is_neg() or (dtype in _COMPLEX_DTYPES and t.is_conj()):
        return None
    try:
        storage = t.untyped_storage()  # sparse (every layout), mkldnn: none
        address = storage.data_ptr()
        strides = t.stride()  # strided nested: none
    except (RuntimeError, NotImplementedError):
        # functionalization's storages have no memory (the adapter's notes say so); functorch's
        # BatchedTensor and TensorWrapper have no storage (storage_extents finds the tensor they
        # wrap)
        return None
    return (
        t.shape,
        strides,
        t.storage_offset(),
        dtype,
        _storage_id(storage),
        device,
        address,
        storage.nbytes(),
    )


def distinct(objects: list[Any]) -> list[Any]:
    """Each object once: ``F.multi_head_attention_forward(x, x, x, ...)`` has one input."""
    return list({id(obj): obj for obj in objects}.values()) if len(objects) > 1 else objects


def has_array(value: Any) -> bool:
    """Is ``value`` a tensor or array, or a tuple or list holding one (at any depth)?"""
    if isinstance(value, ARRAY_TYPES):
        return True
    return type(value) in (tuple, list) and any(has_array(item) for item in value)


def snapshots_of(
    value: Any, before: dict[int, Snapshot] | None = None, layout: bool = True
) -> tuple[Snapshot, ...]:
    """Snapshots of the tensors and arrays in ``value`` (each object once): taken now, or the one
    in ``before`` for a tensor an op wrote to (its layout at call time: ``t_``, ``resize_``)."""
    objects = distinct(arrays_in(value, []))
    if not before:
        return tuple([Snapshot(obj, layout) for obj in objects])
    return tuple([before.get(id(obj)) or Snapshot(obj, layout) for obj in objects])


#: Argument types that are never a tensor or array nor hold one: skipped with one set lookup
#: (``isinstance`` against torch's tensor type costs four times that).
_NOT_ARRAYS = frozenset(
    {int, float, bool, complex, str, bytes, type(None), slice, type(Ellipsis), torch.dtype,
     torch.device, torch.layout, torch.memory_format, torch.Size}
)  # fmt: skip


def call_snapshots(
    args: tuple[Any, ...],
    kwargs: dict,
    result: Any,
    before: dict[int, Snapshot],
    seen: dict[int, Snapshot],
) -> tuple[tuple[Snapshot, ...], tuple[Snapshot, ...], bool]:
    """``(inputs, outputs, returned_input)`` of one call: as :func:`snapshots_of` of
    ``(args, kwargs)`` (with ``before``) and of ``result``, in one pass.  An output that is an
    input object no op rewrote the layout of (``x.add_(1)`` returns ``x``) shares the input's
    snapshot, as its layout cannot have changed; ``returned_input`` says a result is an input.

    ``seen`` (id -> snapshot, kept by the caller across calls) lends a plain tensor the snapshot
    an earlier call took of the same object (two thirds of a training step's snapshots) while
    its storage is where it was (:meth:`Snapshot.still`); the op mode forgets a tensor whose
    layout an op rewrites (``t_``, ``resize_``, ``set_``, ``out=``)."""
    taken: dict[int, Snapshot] = {}
    relaid = before or None  # most calls rewrote no layout: one test per tensor, not a lookup
    for part in (args, kwargs.values()) if kwargs else (args,):
        for obj in part:  # one pass: each tensor snapshotted as it is met, once
            kind = type(obj)
            if kind in _PLAIN_TENSOR_TYPES:  # most tensors: _seen_snapshot inlined
                key = id(obj)
                if key in taken:
                    continue
                if relaid is not None and key in relaid:
                    taken[key] = relaid[key]
                    continue
                snapshot = seen.get(key)
                if snapshot is not None and snapshot.ref() is obj:
                    storage, raw = obj.untyped_storage(), snapshot._raw  # as Snapshot.still
                    if storage.data_ptr() == raw[6] and storage.nbytes() == raw[7]:
                        taken[key] = snapshot
                        continue
                taken[key] = _new_snapshot(obj, key, seen)
            elif kind in _NOT_ARRAYS:  # a scalar (most arguments that are not tensors): no test
                continue
            elif kind in _CONTAINERS:
                for item in arrays_in(obj, [], 2):
                    key = id(item)
                    if key not in taken:
                        taken[key] = (relaid and relaid.get(key)) or _seen_snapshot(item, key, seen)
            elif isinstance(obj, ARRAY_TYPES):
                key = id(obj)
                if key not in taken:
                    taken[key] = (relaid and relaid.get(key)) or _seen_snapshot(obj, key, seen)
    inputs = tuple(taken.values())
    kind = type(result)
    if kind in _NOT_ARRAYS:  # x.item(), x.dim(): no output, without isinstance's cost
        return inputs, (), False
    if kind in _PLAIN_TENSOR_TYPES:  # one tensor: as the loop below, inlined
        key = id(result)
        snapshot = taken.get(key)
        if snapshot is None:
            snapshot = seen.get(key)
            if snapshot is None or snapshot.ref() is not result or not snapshot.still(result):
                snapshot = _new_snapshot(result, key, seen)
            return inputs, (snapshot,), False
        if relaid is not None and key in relaid:
            snapshot = _seen_snapshot(result, key, seen)
        return inputs, (snapshot,), True
    if isinstance(result, ARRAY_TYPES):
        results: list[Any] = [result]
    elif kind in _CONTAINERS:
        results = distinct(arrays_in(result, []))
    else:
        return inputs, (), False
    outputs = []
    returned_input = False
    for obj in results:
        key = id(obj)
        snapshot = taken.get(key)
        if snapshot is None:
            outputs.append(_seen_snapshot(obj, key, seen))
        else:
            returned_input = True
            relayout = relaid is not None and key in relaid
            outputs.append(_seen_snapshot(obj, key, seen) if relayout else snapshot)
    return inputs, tuple(outputs), returned_input


def _seen_snapshot(obj: Any, key: int, seen: dict[int, Snapshot]) -> Snapshot:
    """The snapshot ``seen`` holds of ``obj`` if it still holds, else a new one (kept there when
    it is a plain tensor's)."""
    snapshot = seen.get(key)
    if snapshot is not None and snapshot.ref() is obj and snapshot.still(obj):
        return snapshot
    return _new_snapshot(obj, key, seen)


def _new_snapshot(obj: Any, key: int, seen: dict[int, Snapshot]) -> Snapshot:
    """A new snapshot of ``obj``, kept in ``seen`` when it is a plain tensor's."""
    raw = _plain_fields(obj) if type(obj) in _PLAIN_TENSOR_TYPES else None
    if raw is None:
        return Snapshot(obj)
    snapshot = object.__new__(Snapshot)  # as Snapshot(obj) does for a plain tensor
    snapshot.ref, snapshot._raw = weakref.ref(obj), raw
    snapshot._layout = snapshot._fields = snapshot._extents = None
    seen[key] = snapshot
    return snapshot
