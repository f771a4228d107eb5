"""The torch adapter: a live tensor's layout fields, its storage, and reads of its cells.

The only code that reads a torch tensor: it decides, once, what each exotic tensor is (sparse,
nested, packed quantized: refused with advice; meta, fake, functional, wrapper subclasses and
unreadable dtypes: a layout without values) and never synchronizes a device or copies data,
except :func:`_read_torch_cells`, which copies exactly the cells it is asked for.
"""

from __future__ import annotations

import sys
from typing import Any

from .._compat import is_fake_tensor, is_functional_tensor
from ..errors import LayoutError
from ..layout.layout import Layout
from .objects import _describe

__all__ = [
    "QUANTIZED_CODES",
    "device_name",
    "dtype_name",
    "is_tensor",
    "plain_geometry",
    "torch_layout_fields",
]


def _torch() -> Any:
    """The torch module if it is already imported (an object can't be a Tensor otherwise)."""
    return sys.modules.get("torch")


def is_tensor(x: Any) -> bool:
    """Is ``x`` a ``torch.Tensor`` (checked without importing torch)?

    >>> import torch
    >>> is_tensor(torch.zeros(2)), is_tensor([0.0, 0.0])
    (True, False)
    """
    torch = _torch()
    return torch is not None and isinstance(x, torch.Tensor)


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
    """``float32`` for ``torch.float32``.

    >>> import torch
    >>> dtype_name(torch.float32)
    'float32'
    """
    name = _DTYPE_NAMES.get(dtype)
    if name is None:
        name = _DTYPE_NAMES[dtype] = str(dtype).removeprefix("torch.")
    return name


def device_name(device: Any) -> str:
    """``cpu``, ``cuda:0``: ``str(device)``.

    >>> import torch
    >>> device_name(torch.device("cpu"))
    'cpu'
    """
    name = _DEVICE_NAMES.get(device)
    if name is None:
        name = _DEVICE_NAMES[device] = str(device)
    return name


def _is_fake(t: Any) -> bool:
    return is_fake_tensor(t)


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
    if t.device.type == "meta":
        return "meta"
    if _is_fake(t):
        return "fake"
    if _has_no_memory(storage):
        return "functional" if is_functional_tensor(t) else "wrapper-subclass"
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


#: The tensor types whose memory is their own (no FakeTensor, no wrapper subclass): only these
#: take the plain path.  Filled on first use (torch is imported by then).
_PLAIN_TYPES: tuple[Any, ...] = ()


def plain_geometry(t: Any) -> tuple[int, int, Any, Any, Any, int, int] | None:
    """``(storage address, storage bytes, device, shape, strides, offset, itemsize)`` of a plain
    tensor, else ``None``.

    *Plain*: a ``torch.Tensor`` or ``Parameter`` (no subclass), strided, not nested, not
    quantized, whose storage has memory of its own.  Such a tensor's sizes and strides are ints
    (only fake, functional and wrapper tensors, which have no memory, carry symbols), so this one
    test up front spares every symbol check; anything else gets ``None`` and the careful path.

    >>> import torch
    >>> plain_geometry(torch.zeros(2, 3).t())[3:]
    (torch.Size([3, 2]), (1, 3), 0, 4)
    >>> plain_geometry(torch.zeros(2, device="meta")) is None
    True
    """
    global _PLAIN_TYPES
    if not _PLAIN_TYPES:
        torch = _torch()
        if torch is None:
            return None
        _PLAIN_TYPES = (torch.Tensor, torch.nn.Parameter, torch.strided)
    kind = type(t)
    if (
        (kind is not _PLAIN_TYPES[0] and kind is not _PLAIN_TYPES[1])
        or t.layout is not _PLAIN_TYPES[2]
        or t.is_nested
        or t.is_quantized
    ):
        return None
    try:
        storage = t.untyped_storage()
        address = storage.data_ptr()
    except (RuntimeError, NotImplementedError):  # functional / functorch tensors: no memory
        return None
    if not address:  # meta, or a storage of zero bytes: identified by its StorageImpl instead
        return None
    return (
        address,
        storage.nbytes(),
        t.device,
        t.shape,
        t.stride(),
        t.storage_offset(),
        t.element_size(),
    )


def _torch_layout(t: Any) -> Layout:
    fields = torch_layout_fields(t)
    if fields["storage_address"] is None:  # fake / functional: sizes may be symbolic (SymInts)
        from .symbolic import SymbolicLayout, has_symbols

        if has_symbols(
            fields["shape"], fields["strides"], fields["offset"], fields["storage_size"]
        ):
            return SymbolicLayout(**fields)  # its facts never guard
    return Layout.from_fields(fields)


def torch_layout_fields(t: Any) -> dict[str, Any]:
    """The :class:`Layout` keyword arguments of tensor ``t``, read now, to build the Layout later.

    The one torch adapter: :func:`inspect` builds ``Layout(**fields)`` at once; the copy tracker
    reads the fields of every tensor at call time and builds the Layout only when one is read.

    >>> import torch
    >>> fields = torch_layout_fields(torch.zeros(2, 3).t())
    >>> fields["shape"], fields["strides"], fields["storage_size"], Layout(**fields).is_contiguous
    ((3, 2), (1, 3), 6, False)
    """
    plain = plain_geometry(t)
    if plain is not None:  # the usual tensor, read once: no symbol checks, no exotic cases
        address, nbytes, device, shape, strides, offset, itemsize = plain
        dtype = dtype_name(t.dtype)
        notes: tuple[str, ...] = ()
        if t.is_conj():
            notes += ("conj",)
        if t.is_neg():
            notes += ("neg",)
        if dtype in _UNREADABLE_DTYPES:
            notes += ("unreadable-dtype",)
        return dict(
            shape=tuple(shape),
            strides=strides,
            offset=offset,
            itemsize=itemsize,
            storage_size=nbytes // itemsize,
            dtype=dtype,
            device=device_name(device),
            notes=notes,
            storage_address=address,
        )
    return _careful_fields(t)


def _careful_fields(t: Any) -> dict[str, Any]:
    """:func:`torch_layout_fields` of every tensor that is not plain (fake, meta, functional,
    wrapper, quantized, nested, sparse: the last two refused with advice)."""
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


def _read_torch_cells(x: Any, layout: Layout, indices: Any, as_stored: bool) -> Any:
    """The values at storage ``indices`` (an int64 NumPy array, already bounds-checked) of tensor
    ``x``, as a NumPy array; ``None`` when ``x`` has no values to read (see ``read_cells``)."""
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
