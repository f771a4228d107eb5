"""Adapters: the only code that knows torch and NumPy.  Live object -> :class:`Layout`.

Nothing here reads a tensor's values, synchronizes a device or copies data, except
:func:`read_cells`, which reads exactly the storage cells it is asked for.
"""

from __future__ import annotations

import functools
import math
import sys
import warnings
from collections.abc import Hashable, Sequence
from typing import Any, NamedTuple

from .._compat import wrapped_tensors
from ..errors import LayoutError, safe_repr
from ..layout.ints import INT64_MAX, as_index, as_indices
from ..layout.layout import Layout
from ..layout.overlap import ranges_overlap

__all__ = [
    "OverlapWarning",
    "as_index",
    "as_strided",
    "conversion_hint",
    "inspect",
    "overlap",
    "read_cells",
    "same_storage",
    "storage_key",
]


class OverlapWarning(UserWarning):
    """A checked ``as_strided`` view reads some storage cells more than once."""


# --- recognising objects --------------------------------------------------------------------------


def _torch() -> Any:
    """The torch module if it is already imported (an object can't be a Tensor otherwise)."""
    return sys.modules.get("torch")


def _numpy() -> Any:
    return sys.modules.get("numpy")


def is_tensor(x: Any) -> bool:
    torch = _torch()
    return torch is not None and isinstance(x, torch.Tensor)


def is_ndarray(x: Any) -> bool:
    np = _numpy()
    return np is not None and isinstance(x, np.ndarray)


def _describe(x: Any) -> str:
    kind = type(x)
    module = getattr(kind, "__module__", None)
    name = getattr(kind, "__qualname__", None) or getattr(kind, "__name__", "object")
    return f"{module}.{name}" if isinstance(module, str) else str(name)


_NON_STRIDED_ADVICE = {
    "sparse_coo": "sparse COO tensor: it has no strides; inspect `t.indices()` and `t.values()`, "
    "or `t.to_dense()`",
    "sparse_csr": "sparse CSR tensor: it has no strides; inspect `t.crow_indices()`, "
    "`t.col_indices()` and `t.values()`, or `t.to_dense()`",
    "sparse_csc": "sparse CSC tensor: it has no strides; inspect `t.ccol_indices()`, "
    "`t.row_indices()` and `t.values()`, or `t.to_dense()`",
    "sparse_bsr": "sparse BSR tensor: it has no strides; inspect `t.crow_indices()`, "
    "`t.col_indices()` and `t.values()`, or `t.to_dense()`",
    "sparse_bsc": "sparse BSC tensor: it has no strides; inspect `t.ccol_indices()`, "
    "`t.row_indices()` and `t.values()`, or `t.to_dense()`",
    "_mkldnn": "MKL-DNN (opaque) tensor: its layout is private to oneDNN; inspect `t.to_dense()`",
}


# --- torch ----------------------------------------------------------------------------------------

#: dtypes whose single elements torch cannot read (no indexing kernel): drawn without values.
_UNREADABLE_DTYPES = frozenset(
    {"float4_e2m1fn_x2", "bits1x8", "bits2x4", "bits4x2", "bits8", "bits16"}
    | {f"{kind}{bits}" for kind in ("int", "uint") for bits in range(1, 8)}
)
#: Integer dtype of a quantized tensor's stored codes.
QUANTIZED_CODES = {"quint8": "uint8", "qint8": "int8", "qint32": "int32"}
#: Quantized dtypes that pack several codes into a byte: strides count codes, storage bytes.
_PACKED_QUANTIZED = {"quint4x2": 2, "quint2x4": 4}


# The copy tracker reads the fields of every tensor each call touches: names are cached per
# dtype and per device (a handful of each) instead of formatted each time.
_DTYPE_NAMES: dict[Any, str] = {}
_DEVICE_NAMES: dict[Any, str] = {}


def dtype_name(dtype: Any) -> str:
    """``float32`` for ``torch.float32``."""
    name = _DTYPE_NAMES.get(dtype)
    if name is None:
        name = _DTYPE_NAMES[dtype] = str(dtype).removeprefix("torch.")
    return name


def device_name(device: Any) -> str:
    """``cpu``, ``cuda:0``: ``str(device)``."""
    name = _DEVICE_NAMES.get(device)
    if name is None:
        name = _DEVICE_NAMES[device] = str(device)
    return name


def _is_fake(t: Any) -> bool:
    fake_tensor = sys.modules.get("torch._subclasses.fake_tensor")
    return fake_tensor is not None and isinstance(t, fake_tensor.FakeTensor)


def _has_no_memory(storage: Any) -> bool:
    """A storage made by ``_make_wrapper_subclass`` (TwoTensor, DTensor...) or functionalization:
    sizes only, its data lives in inner tensors."""
    try:
        storage.data_ptr()
    except RuntimeError:  # "Attempted to access the data pointer on an invalid python storage"
        return True
    return False


def _no_data_reason(t: Any, storage: Any) -> str | None:
    """The note saying why ``t``'s values cannot be read (``None`` when they can)."""
    torch = _torch()
    if t.device.type == "meta":
        return "meta"
    if _is_fake(t):
        return "fake"
    if _has_no_memory(storage):
        return "functional" if torch._is_functional_tensor(t) else "wrapper-subclass"
    if dtype_name(t.dtype) in _UNREADABLE_DTYPES:
        return "unreadable-dtype"
    return None


def _torch_storage(t: Any) -> Any:
    torch = _torch()
    if t.is_nested:  # strided or jagged: several tensors of different shapes, no single stride
        raise LayoutError(
            "cannot inspect a nested tensor as one strided layout: inspect its components "
            "(`t.unbind()`), or `t.to_padded_tensor(0.0)` for a padded copy."
        )
    if t.layout != torch.strided:
        layout_name = str(t.layout).removeprefix("torch.")
        advice = _NON_STRIDED_ADVICE.get(layout_name, f"{layout_name} tensor: it has no strides")
        raise LayoutError(f"cannot inspect a {advice}.")
    try:
        return t.untyped_storage()
    except (RuntimeError, NotImplementedError) as error:
        first_line = str(error).strip().splitlines()[0] if str(error).strip() else ""
        raise LayoutError(
            f"this {_describe(t)} has no storage that can be inspected ({first_line}); "
            "tensors inside torch.func transforms or functionalization have none — "
            "inspect the tensor outside the transform."
        ) from None


def _torch_layout(t: Any) -> Layout:
    fields = torch_layout_fields(t)
    if fields["storage_address"] is None:  # fake / functional: sizes may be symbolic (SymInts)
        from .symbolic import SymbolicLayout, has_symbols

        if has_symbols(
            fields["shape"], fields["strides"], fields["offset"], fields["storage_size"]
        ):
            return SymbolicLayout(**fields)  # its facts never guard
    return Layout(**fields)


def torch_layout_fields(t: Any) -> dict[str, Any]:
    """The :class:`Layout` keyword arguments of tensor ``t``, read now, to build the Layout later.

    The one torch adapter: :func:`inspect` builds ``Layout(**fields)`` at once; the copy tracker
    reads the fields of every tensor at call time and builds the Layout only when one is read.

    >>> import torch
    >>> fields = torch_layout_fields(torch.zeros(2, 3).t())
    >>> fields["shape"], fields["strides"], fields["storage_size"], Layout(**fields).is_contiguous
    ((3, 2), (1, 3), 6, False)
    """
    storage = _torch_storage(t)
    dtype = dtype_name(t.dtype)
    if dtype in _PACKED_QUANTIZED:
        raise LayoutError(
            f"cannot inspect a {dtype} tensor: it packs {_PACKED_QUANTIZED[dtype]} codes into each "
            "byte, so its strides count codes but its storage counts bytes and no storage cell "
            "holds one element; inspect its packed bytes `t.int_repr()` instead."
        )
    itemsize = t.element_size()
    notes = []
    if t.is_conj():
        notes.append("conj")
    if t.is_neg():
        notes.append("neg")
    if t.is_quantized:
        notes.append("quantized")
    no_data = _no_data_reason(t, storage)
    if no_data is not None:
        notes.append(no_data)
    # Fake, functional and wrapper-subclass storages have no memory of their own to point at.
    storage_address = storage.data_ptr() if no_data in (None, "unreadable-dtype") else None
    return dict(
        shape=tuple(t.shape),
        strides=tuple(t.stride()),
        offset=t.storage_offset(),
        itemsize=itemsize,
        storage_size=storage.nbytes() // itemsize,
        dtype=dtype,
        device=device_name(t.device),
        notes=tuple(notes),
        storage_address=storage_address or None,
    )


# --- NumPy ----------------------------------------------------------------------------------------


def _numpy_buffer(a: Any) -> tuple[int, int]:
    """``(first byte address, nbytes)`` of the memory block ``a`` lives in.

    Follows ``.base`` through views (and NumPy's ``as_strided`` helper objects) to the object that
    owns the memory.  When the owner is not an array, its buffer protocol gives the extent; failing
    that, the array's own byte bounds are the best known (and still exact for the view itself).
    """
    np = _numpy()
    owner = a
    while getattr(owner, "base", None) is not None:
        owner = owner.base
    if is_tensor(owner):  # `t.numpy()`: the tensor's storage is the memory block
        storage = owner.untyped_storage()
        return storage.data_ptr(), storage.nbytes()
    if isinstance(owner, np.ndarray):
        if owner.flags.owndata:
            if owner.flags.c_contiguous:  # the usual owner: no need to walk its strides
                return owner.__array_interface__["data"][0], owner.nbytes
            low, high = _byte_bounds()(owner)
            return low, high - low
    else:
        try:
            block = np.frombuffer(owner, dtype=np.uint8)
        except (TypeError, ValueError, BufferError):
            block = None
        if block is not None:
            return block.__array_interface__["data"][0], block.nbytes
    low, high = _byte_bounds()(a)
    return low, high - low


@functools.cache
def _byte_bounds() -> Any:
    """NumPy's ``byte_bounds``, looked up once (its home moved in NumPy 2.0)."""
    try:
        from numpy.lib.array_utils import byte_bounds
    except ImportError:  # NumPy < 2.0 has it at the top level
        from numpy import byte_bounds
    return byte_bounds


@functools.lru_cache(maxsize=1024)
def _numpy_dtype_name(dtype: Any) -> str:
    """The Layout's dtype name; cached because NumPy builds ``str(dtype)`` in Python, per call."""
    return str(dtype) if dtype.names is None else "structured"


def _check_numpy(a: Any) -> None:
    """Refuse the arrays that have no layout of values: object and zero-size dtypes."""
    if a.dtype.hasobject:
        raise LayoutError(
            "cannot inspect an object array: its cells hold pointers to Python objects, "
            "not values; convert it with `a.astype(...)` to a numeric dtype first."
        )
    if a.itemsize == 0:
        raise LayoutError(f"cannot inspect an array of zero-size dtype {a.dtype}.")


def _numpy_layout(a: Any) -> Layout:
    np = _numpy()
    _check_numpy(a)
    itemsize = a.itemsize
    data_address, interface_read_only = a.__array_interface__["data"]
    start, nbytes = _numpy_buffer(a)
    byte_offset = data_address - start
    unit = math.gcd(itemsize, byte_offset, *a.strides)
    notes = []
    if interface_read_only:  # also true of arrays that only warn on writing: ask the flag
        with warnings.catch_warnings():
            # np.broadcast_arrays outputs warn on reading `writeable` (they are writeable for now)
            warnings.simplefilter("ignore", FutureWarning)
            if not a.flags.writeable:
                notes.append("read-only")
    return (
        Layout(
            shape=a.shape,
            strides=tuple(s // unit for s in a.strides),
            offset=byte_offset // unit,
            itemsize=itemsize,
            storage_size=nbytes // unit,
            dtype=_numpy_dtype_name(a.dtype),
            device="cpu",
            unit=unit,
            notes=tuple(notes),
            storage_address=start or None,
            library="numpy",
        )
        if np is not None
        else None
    )  # pragma: no cover - np is imported when `a` is an ndarray


# --- public API -----------------------------------------------------------------------------------


def inspect(x: Any) -> Layout:
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
    """
    if is_tensor(x):
        return _torch_layout(x)
    if is_ndarray(x):
        return _numpy_layout(x)
    if isinstance(x, Layout):
        return x
    raise TypeError(
        f"stridewidget.inspect() takes a torch.Tensor or numpy.ndarray, got {_describe(x)}."
        f"{conversion_hint(x)}"
    )


def _has(x: Any, name: str) -> bool:
    """``hasattr`` that a hostile ``__getattr__`` (raising anything) cannot turn into a crash."""
    try:
        return hasattr(x, name)
    except Exception:
        return False


def conversion_hint(x: Any) -> str:
    """What to pass instead of ``x``, an object that is no tensor or array (``""`` if unknown).

    >>> conversion_hint([1, 2])
    ' Wrap it first: `torch.as_tensor(x)` or `numpy.asarray(x)`.'
    """
    if isinstance(x, (list, tuple, int, float, complex, bool)):
        return " Wrap it first: `torch.as_tensor(x)` or `numpy.asarray(x)`."
    if type(x).__name__ == "PyCapsule" and type(x).__module__ == "builtins":
        return (
            " A PyCapsule is how DLPack hands over a tensor: inspect `torch.from_dlpack(capsule)` "
            "(a view of its memory, no copy; a capsule can be consumed only once), or pass the "
            "producing array itself."
        )
    if _has(x, "__dlpack__"):
        return " It supports DLPack: inspect `torch.from_dlpack(x)` (a view, no copy)."
    if _has(x, "__cuda_array_interface__"):
        return (
            " It exposes GPU memory through `__cuda_array_interface__`: inspect "
            "`torch.as_tensor(x, device='cuda')` (a view, no copy)."
        )
    if _has(x, "__array_interface__") or _has(x, "__array__"):
        return " It looks array-like: inspect `numpy.asarray(x)` (no copy when possible)."
    torch = _torch()
    if torch is not None and isinstance(x, (torch.UntypedStorage, torch.TypedStorage)):
        untyped = "s" if isinstance(x, torch.UntypedStorage) else "s.untyped_storage()"
        return (
            " A storage has no shape or strides: inspect a tensor over it, such as "
            f"`torch.empty(0, dtype=torch.uint8, device=s.device).set_({untyped})` "
            "(its bytes, no copy)."
        )
    try:
        memoryview(x)
    except Exception:  # no buffer protocol (or a broken one): nothing more to suggest
        return ""
    return " It is a buffer: inspect `numpy.frombuffer(x, dtype=numpy.uint8)` (its bytes, no copy)."


def layout_and_cells(x: Any) -> tuple[Layout, Any]:
    """Layout of ``x`` plus a key that is equal exactly when two objects share a storage."""
    layout = inspect(x)
    return layout, _storage_identity(x, layout.storage_address, layout.device)


def _storage_identity(x: Any, storage_address: int | None, device: str) -> Hashable:
    if storage_address is not None:
        return device, storage_address
    if is_tensor(x):
        # Meta and zero-byte storages have no memory address; the StorageImpl is their identity.
        return "torch-storage", x.untyped_storage()._cdata
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
        return _Extent(
            fields["shape"],
            tuple(s * itemsize for s in fields["strides"]),
            fields["offset"] * itemsize,
            itemsize,
            fields["storage_address"],
            fields["storage_size"] * itemsize,
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
    ``detach()`` and ``view(dtype)``, which share storage without being ``_is_view()``.

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
    """
    return any(
        _extents_overlap(_extent(p), _extent(q)) for p in _data_parts(a) for q in _data_parts(b)
    )


def _extents_overlap(extent_a: _Extent, extent_b: _Extent) -> bool:
    if not _share(extent_a, extent_b):
        return False
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


def first_out_of_bounds(
    size: Sequence[int], stride: Sequence[int], offset: int, storage_size: int
) -> tuple[int, ...] | None:
    """The first logical index, in row-major order, whose address is ``>= storage_size``.

    Strides are non-negative, so addresses grow along every dim: in the first slab along dim 0 that
    reaches past the end, look for the first sub-slab that does, and so on.  O(ndim).
    """
    reach = [s * (n - 1) for n, s in zip(size, stride)]
    if offset + sum(reach) < storage_size:
        return None
    index = []
    position = offset
    for d, (n, s) in enumerate(zip(size, stride)):
        rest = sum(reach[d + 1 :])
        if s == 0:
            i = 0
        else:
            need = storage_size - position - rest  # smallest i with position + s*i + rest >= end
            i = max(0, -(-need // s))
        index.append(min(i, n - 1))
        position += s * index[-1]
    return tuple(index)


def as_strided(
    x: Any,
    size: Sequence[int],
    stride: Sequence[int],
    storage_offset: int | None = None,
    *,
    allow_overlap: bool | None = None,
) -> Any:
    """A checked ``torch.as_strided``: the view is validated before torch ever sees it.

    * ``storage_offset`` defaults to ``x``'s own offset, as in ``torch.as_strided``; an explicit
      offset counts from the start of the *storage*, not from ``x[0]``.
    * A view that would leave the storage raises :class:`LayoutError` naming the first
      out-of-bounds index and the storage size (``torch.as_strided`` checks this too, but only on
      some devices and paths, and never says which index).
    * Negative strides, negative sizes and length mismatches are refused.
    * Self-overlap (two indices on one cell): ``allow_overlap=None`` warns with
      :class:`OverlapWarning`, ``True`` allows silently (broadcasts, sliding windows), ``False`` raises.

    >>> import torch, stridewidget as sw
    >>> x = torch.arange(10.0)
    >>> sw.as_strided(x, (4, 3), (2, 1), allow_overlap=True)[1]
    tensor([2., 3., 4.])
    >>> sw.as_strided(x[2:], (2,), (1,))          # keeps x[2:]'s offset
    tensor([2., 3.])
    >>> sw.as_strided(x, (4,), (3,), storage_offset=1)
    Traceback (most recent call last):
      ...
    stridewidget.errors.LayoutError: as_strided: index (3,) maps to storage element 10, but the \
storage has only 10 elements (valid: 0..9); size (4,), stride (3,), storage_offset 1
    """
    if not is_tensor(x):
        hint = " Use `torch.from_numpy(x)` (no copy)." if is_ndarray(x) else conversion_hint(x)
        raise TypeError(f"sw.as_strided needs a torch.Tensor, got {_describe(x)}.{hint}")
    layout = inspect(x)
    if allow_overlap is not None and not isinstance(allow_overlap, bool):
        # np.False_ or 0 would only warn where False raises: the check is asked exactly
        raise TypeError(
            "as_strided: allow_overlap must be True, False or None (a Python bool), got "
            f"{safe_repr(allow_overlap)} ({type(allow_overlap).__module__}."
            f"{type(allow_overlap).__qualname__})"
        )
    size = as_indices(size, "as_strided: size")
    stride = as_indices(stride, "as_strided: stride")
    offset = (
        layout.offset
        if storage_offset is None
        else as_index(storage_offset, "as_strided: storage_offset")
    )
    if len(size) != len(stride):
        raise LayoutError(
            f"as_strided: size {size} has {len(size)} dims but stride {stride} has {len(stride)}"
        )
    if any(n < 0 for n in size):
        raise LayoutError(f"as_strided: size {size} has a negative entry")
    if any(s < 0 for s in stride):
        raise LayoutError(
            f"as_strided: stride {stride} has a negative entry; torch views cannot step backwards "
            "(use `torch.flip`, which copies)"
        )
    if offset < 0:
        raise LayoutError(f"as_strided: storage_offset {offset} is negative")
    numel = math.prod(size)
    if numel > INT64_MAX:
        raise LayoutError(
            f"as_strided: size {size} has {numel} elements, more than torch's limit of 2**63 - 1 "
            "(its element count is a 64-bit int); use fewer or smaller dimensions"
        )
    if numel > 0:
        bad = first_out_of_bounds(size, stride, offset, layout.storage_size)
        if bad is not None:
            where = offset + sum(i * s for i, s in zip(bad, stride))
            raise LayoutError(
                f"as_strided: index {bad} maps to storage element {where}, but the storage has only "
                f"{layout.storage_size} elements (valid: 0..{layout.storage_size - 1}); "
                f"size {size}, stride {stride}, storage_offset {offset}"
            )
    torch = _torch()
    if x.is_quantized and x.qscheme() not in (torch.per_tensor_affine, torch.per_tensor_symmetric):
        raise LayoutError(
            f"as_strided: torch makes no strided views of a {x.qscheme()} quantized tensor (its "
            "scales follow one axis); use the integer codes `x.int_repr()`, or dequantize first"
        )
    view_layout = Layout(size, stride, offset, layout.itemsize, layout.storage_size)
    # allow_overlap=True asks for no check: skip the search (it can be costly for huge views)
    witness = None if allow_overlap is True else view_layout.overlap_witness
    if witness is not None:
        message = (
            f"as_strided: size {size}, stride {stride} overlaps itself: indices {witness[0]} and "
            f"{witness[1]} are both storage element {view_layout.address(witness[0])}; "
            "in-place writes through it would hit some elements more than once"
        )
        if allow_overlap is False:
            raise LayoutError(message)
        warnings.warn(
            message + " (pass allow_overlap=True to silence)", OverlapWarning, stacklevel=2
        )
    return torch.as_strided(x, size, stride, offset)


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
    layout = inspect(x)
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
    torch = _torch()
    if layout.storage_address is None and layout.storage_size:  # no memory: the notes say why
        return None
    if _no_data_reason(x, x.untyped_storage()) is not None:
        return None
    # A fresh plain tensor over the storage: no quantizer, no lazy bits, no autograd, and the
    # user's tensor (and its version counter) untouched.
    codes = QUANTIZED_CODES.get(layout.dtype)
    flat = torch.empty(0, dtype=getattr(torch, codes) if codes else x.dtype, device=x.device)
    flat.set_(x.untyped_storage(), 0, (layout.storage_size,), (1,))
    picked = flat[torch.as_tensor(indices, device=x.device)]
    if x.is_conj() and not as_stored:
        picked = picked.conj_physical()
    if x.is_neg() and not as_stored:
        picked = picked.neg()
    if picked.dtype == torch.complex32:
        picked = picked.to(torch.complex64)  # NumPy has no complex32
    elif picked.dtype in (torch.bfloat16, torch.float16) or "float8" in str(picked.dtype):
        picked = picked.float()
    return picked.cpu().numpy()


def numpy_storage_view(x: Any, layout: Layout) -> Any:
    """A 1-D array over the whole storage of ``x``, from its first element (no copy).

    Built the way NumPy's own ``as_strided`` builds views: from an ``__array_interface__``
    whose base keeps ``x``'s memory alive.
    """
    np = _numpy()

    class _Block:
        def __init__(self) -> None:
            self.base = x
            self.__array_interface__ = {
                "shape": (layout.storage_size,),
                "typestr": x.dtype.str,
                "data": (layout.storage_address or 0, True),
                "strides": None,
                "version": 3,
            }

    return np.asarray(_Block())
