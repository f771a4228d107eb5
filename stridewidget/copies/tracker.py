"""Copy tracker: which call in a block of code copied data, which made a view, which computed.

``track_copies()`` stacks two of PyTorch's own interception modes for the length of a ``with`` block
(no monkey-patching):

* a :class:`torch.overrides.TorchFunctionMode` sees each *user-level* call (``Tensor.reshape``,
  ``torch.cat``, ``torch.nn.functional.linear`` ...).  PyTorch pops a mode while its handler runs, so
  the torch calls made *inside* a call (the dozens inside ``F.multi_head_attention_forward``) are
  not seen at this level: they belong to the outermost call, which is what the user wrote.
* a :class:`torch.utils._python_dispatch.TorchDispatchMode` sees every ATen op those calls run
  (below autograd, after decomposition): ``reshape`` on a non-viewable input shows up as
  ``aten.clone`` + ``aten._unsafe_view``, ``contiguous()`` on a contiguous input as no op at all.

Each call becomes a :class:`CopyEvent`, classified from what its ATen ops did and from storage
identity (not from the call's name):

``copy``      it moved existing data into storage it allocated: a data-movement op ran
              (``clone``, ``_to_copy``, ``copy_`` into a fresh buffer, ``repeat``, ``flip``,
              ``cat``, advanced indexing ... see :data:`COPY_OPS`), or an op whose reference
              decomposition moves its inputs' data without arithmetic (``F.pad`` in every mode,
              ``pixel_shuffle``, ``F.unfold``, ``diag_embed``; see :func:`_moves_data`).  A call
              that both computed and copied (an attention forward calling ``.contiguous()``
              inside) counts as a copy: the point is to find every copy.  So does an in-place
              call that cloned its input first (``F.silu(x, inplace=True)``, ``x.mul_(w)``
              under autograd): precedence copy > in-place > view > compute, and its
              ``wrote_input`` says it also wrote in place.
``in-place``  it wrote into an input's existing storage and returned that storage (or nothing):
              ``x.add_(1)``, ``x.copy_(y)``, ``x[0] = y``, ``torch.cat(xs, out=buf)``.
``view``      the result shares an input's storage and nothing was written: ``view``, ``t()``,
              ``x[:, 1:]``, ``detach()``, ``.numpy()``, and calls that return their input itself
              (``contiguous()`` on a contiguous tensor, ``.to(same dtype)``; ``returned_input``).
``compute``   everything else: new values in new storage (``x + 1``, ``x.T @ y``, ``torch.zeros``).

Calls that return no tensor or array and ran no ATen op (``x.shape``, ``x.dim()``) are not events.
Every ATen op run in the block belongs to exactly one event: an op that no user-level call
accounts for becomes an event of its own, named after the op.  ``torch.from_numpy`` is such a case:
PyTorch does not route it through ``__torch_function__``, so it appears as ``aten.lift_fresh``, a
``view`` of memory the tensor already shares with the array.

Cost is paid only inside the block, per call and per ATen op (``benchmarks/bench_copies.py``
measures it beside PyTorch's two bare modes, which cost about as much again); layouts are captured
as a few fields and built into :class:`~stridewidget.Layout` objects only when read, an op's
data-movement verdict is worked out once per op, and tensors are held by weak reference only.
Note that any active ``TorchFunctionMode`` makes ``has_torch_function`` true, so fused fast paths
that check it (``nn.TransformerEncoderLayer`` in eval mode) take their plain path while tracked.
"""

from __future__ import annotations

import html
import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, NamedTuple

import numpy
import torch
from torch.overrides import TorchFunctionMode, resolve_name
from torch.utils._python_dispatch import (
    TorchDispatchMode,
    _disable_current_modes,
)
from torch.utils._pytree import tree_map

from .._compat import (
    functional_mutation_count,
    functorch_transforms,
    functorch_unwrapped,
    wrapped_tensors,
)
from ..adapters.inspect import inspect
from ..adapters.torch import device_name, dtype_name, torch_layout_fields
from ..errors import LayoutError
from ..frames import describe_location, user_line
from ..layout.layout import Layout

__all__ = ["COPY_OPS", "CopyEvent", "CopyLog", "track_copies"]

#: The primitive data-movement ATen ops: their output is existing values moved (and maybe
#: converted), selected or surrounded by constants, without arithmetic.  Ops tagged
#: ``torch.Tag.view_copy`` (``permute_copy``, ``expand_copy`` ...) count too; ``index_put`` with
#: ``accumulate=True`` and ``scatter`` with a ``reduce`` add, so they do not.  Any other op moves
#: data when its reference decomposition does (see :func:`_moves_data`): ``F.pad`` (reflect,
#: replicate), ``pixel_shuffle``, ``F.unfold`` (``im2col``), ``diag_embed``, ``tril`` ...
COPY_OPS = frozenset(
    {
        "clone",
        "copy_",
        "_to_copy",
        "_copy_from",
        "_copy_from_and_resize",
        "lift_fresh_copy",
        "_reshape_copy",
        "narrow_copy",
        "repeat",
        "flip",
        "roll",
        "cat",
        "stack",
        "index",
        "index_select",
        "gather",
        "take",
        "masked_select",
        "constant_pad_nd",
        "where",
        "masked_fill",
        "masked_scatter",
        "index_put",
        "_index_put_impl",
        "scatter",
        "slice_scatter",
        "select_scatter",
        "diagonal_scatter",
        "as_strided_scatter",
    }
)

KINDS = ("copy", "in-place", "view", "compute")


class _OpInfo(NamedTuple):
    name: str
    is_copy: bool
    # (position, name) of every argument the op writes to (``self`` of ``add_``, ``out=``).
    written: tuple[tuple[int, str], ...]
    # a CompositeImplicitAutograd op: defined as other ATen ops (see _OpMode)
    decomposes: bool
    # (position, name) of ``accumulate`` / ``reduce`` arguments, which turn a move into arithmetic
    combining: tuple[tuple[int, str], ...]
    # device types whose own kernel the dispatcher runs instead of the decomposition
    # (``silu_backward``, ``native_channel_shuffle`` on the CPU); ``None``: every device's
    kernel_devices: frozenset[str] | None = frozenset()

    def runs_decomposition(self, args: tuple[Any, ...], kwargs: dict) -> bool:
        """Does a plain run of this call execute the op's decomposition (not a kernel of its own)?"""
        if not self.decomposes or self.kernel_devices is None:
            return False
        if not self.kernel_devices:
            return True
        tensors = _arrays_in((args, kwargs), [])
        return not tensors or tensors[0].device.type not in self.kernel_devices

    def moves(self, args: tuple[Any, ...], kwargs: dict) -> bool:
        """Is this call of the op a primitive data movement (see :data:`COPY_OPS`)?"""
        return self.is_copy and not any(
            _argument(args, kwargs, position, name) not in (None, False)
            for position, name in self.combining
        )


def _argument(args: tuple[Any, ...], kwargs: dict, position: int, name: str) -> Any:
    return args[position] if position < len(args) else kwargs.get(name)


class _OpCache(dict):
    """ATen op -> a value decided once for it, keyed by ``id(op)`` with the op kept in the entry
    (so the id stays its own): an OpOverload's ``__hash__`` is Python code, and these caches are
    read for every op a mode sees."""

    def lookup(self, func: Any) -> Any:
        """The value stored for ``func``, else :data:`_MISSING`."""
        entry = self.get(id(func))
        return entry[1] if entry is not None and entry[0] is func else _MISSING

    def store(self, func: Any, value: Any) -> Any:
        self[id(func)] = (func, value)
        return value


_MISSING = object()
_OP_INFO = _OpCache()
_IMPLICIT = torch._C.DispatchKey.CompositeImplicitAutograd


def _op_info(func: Any) -> _OpInfo:
    info = _OP_INFO.lookup(func)
    if info is not _MISSING:
        return info
    packet = func.overloadpacket.__name__
    is_copy = packet in COPY_OPS or torch.Tag.view_copy in func.tags
    arguments = list(enumerate(func._schema.arguments))
    written = tuple(
        (position, argument.name)
        for position, argument in arguments
        if argument.alias_info is not None and argument.alias_info.is_write
    )
    combining = tuple(
        (position, argument.name)
        for position, argument in arguments
        if argument.name in ("accumulate", "reduce")
    )
    # the C++ kernel only: Python ones (torch._decomp's py_impl) serve tracing, not eager runs
    try:
        decomposes = torch._C._dispatch_has_kernel_for_dispatch_key(func.name(), _IMPLICIT)
    except RuntimeError:  # not in the dispatcher: prim::device, which FakeTensorMode sends
        decomposes = False
    kernel_devices = _kernel_devices(func.name()) if decomposes else frozenset()
    return _OP_INFO.store(
        func, _OpInfo(f"aten.{packet}", is_copy, written, decomposes, combining, kernel_devices)
    )


# A kernel registered for one of these keys wins over CompositeImplicitAutograd on its device;
# a CompositeExplicitAutograd one on every device.
_BACKEND_KEYS = {
    "CPU": "cpu",
    "CUDA": "cuda",
    "MPS": "mps",
    "XPU": "xpu",
    "PrivateUse1": "privateuseone",
}
_EVERY_DEVICE_KEYS = ("CompositeExplicitAutograd", "CompositeExplicitAutogradNonFunctional")


def _kernel_devices(name: str) -> frozenset[str] | None:
    """The device types on which ``name`` runs a kernel of its own rather than its
    CompositeImplicitAutograd decomposition; ``None`` for every device."""
    has = torch._C._dispatch_has_kernel_for_dispatch_key
    if any(has(name, key) for key in _EVERY_DEVICE_KEYS):
        return None
    return frozenset(device for key, device in _BACKEND_KEYS.items() if has(name, key))


# --- cheap snapshots of the tensors an event touched ----------------------------------------------


class _Extent(NamedTuple):
    """Where a tensor's storage lives: enough to decide aliasing, nothing more."""

    cdata: (
        int | None
    )  # StorageImpl identity (shared by views, detach, view(dtype), even at 0 bytes)
    device: Any
    address: int  # first byte of the storage; 0 when it has no memory (empty, meta)
    nbytes: int

    def shares(self, other: _Extent) -> bool:
        if self.cdata is not None and self.cdata == other.cdata:
            return True
        if not self.address or not other.address or self.device != other.device:
            return False
        return self.address < other.address + other.nbytes and (
            other.address < self.address + self.nbytes
        )


_CPU = torch.device("cpu")
_ARRAY_TYPES = (torch.Tensor, numpy.ndarray)
_CONTAINERS = frozenset({tuple, list, dict})


def _extents(t: torch.Tensor) -> tuple[_Extent, ...]:
    """Where a tensor's data lives: its storage, or for a wrapper subclass (``TwoTensor``, any
    ``_make_wrapper_subclass`` with ``__tensor_flatten__``) the storages of the tensors it wraps,
    whose own storage is a placeholder without memory; for a functorch wrapper without a storage
    (``vmap``'s BatchedTensor, ``grad``'s TensorWrapper) the tensor it wraps.  Empty for sparse
    and other tensors without a storage to alias."""
    inner = wrapped_tensors(t)
    if inner is not None:
        return tuple(extent for tensor in inner for extent in _extents(tensor))
    try:
        storage = t.untyped_storage()
    except (RuntimeError, NotImplementedError, TypeError):
        unwrapped = functorch_unwrapped(t)
        return () if unwrapped is None else _extents(unwrapped)
    address = 0
    if storage.device.type != "meta":  # meta and FakeTensor storages have no memory
        try:
            address = storage.data_ptr()
        except RuntimeError:  # nor do functionalization's; their identity still tells aliasing
            address = 0
    return (_Extent(storage._cdata, t.device, address, storage.nbytes()),)


def _shares_any(extents: tuple[_Extent, ...] | list[_Extent], others: list[_Extent]) -> bool:
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
_PLAIN_TENSOR_TYPES = frozenset({torch.Tensor, torch.nn.Parameter})
# device -> is it a CPU or CUDA device (``device.type`` costs as much as the rest of a snapshot)
_PLAIN_DEVICES: dict[Any, bool] = {}


class _Snapshot:
    """A tensor's layout as read at call time; the :class:`Layout` is built on read.

    Building a ``Layout`` per tensor per call would dominate the tracker's cost.  For a plain
    tensor (a ``Tensor`` or ``Parameter`` of a :data:`_PLAIN_DTYPES` dtype on CPU or CUDA, no
    conj/neg bit, its storage readable) this keeps the raw fields (shape, strides, offset, dtype,
    storage) read once for both the extent and the layout, whose fields are then exactly what the
    torch adapter would read.  Any other tensor gets the adapter's fields
    (:func:`stridewidget.adapters.inspect.torch_layout_fields`), with its notes (conj, neg, quantized,
    meta ...), and builds the object when asked.
    """

    __slots__ = ("_fields", "_layout", "_raw", "extents", "ref")

    def __init__(self, obj: Any, layout: bool = True) -> None:
        self.ref = weakref.ref(obj)
        self._layout = self._fields = self._raw = None
        if type(obj) in _PLAIN_TENSOR_TYPES:
            self._raw = _plain_fields(obj)
            if self._raw is not None:
                self.extents = (_Extent(*self._raw[4:]),)
                return
        if isinstance(obj, torch.Tensor):
            self.extents = _extents(obj)
            if layout:
                self.read_layout()
        else:  # a NumPy array: rare (``.numpy()``), inspect it now
            try:
                self._layout = layout = inspect(obj)
            except LayoutError:  # an object array has no cells to alias
                self.extents = ()
                return
            self.extents = (
                _Extent(None, _CPU, layout.storage_address or 0, layout.storage_nbytes),
            )

    @classmethod
    def for_drawing(cls, obj: Any) -> _Snapshot:
        """A snapshot whose layout may be drawn but from which no aliasing is decided: a plain
        tensor's raw fields only (no extent, no reference); anything else as ``cls(obj)``."""
        if type(obj) in _PLAIN_TENSOR_TYPES:
            raw = _plain_fields(obj)
            if raw is not None:
                snapshot = object.__new__(cls)
                snapshot._raw, snapshot._layout, snapshot._fields = raw, None, None
                snapshot.extents, snapshot.ref = (), None
                return snapshot
        return cls(obj)

    def read_layout(self) -> None:
        """Read the tensor's layout fields now: at once, or, for a snapshot made with
        ``layout=False``, later in the same call, while the tensor is alive and unchanged."""
        if self._raw is not None or self._fields is not None:
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
    """``(shape, strides, offset, dtype, *extent)`` of a plain tensor (see :class:`_Snapshot`),
    else ``None``: the raw values, no strings, no ``Layout``; ``extent`` is its :class:`_Extent`'s
    fields."""
    dtype = t.dtype
    if dtype not in _PLAIN_DTYPES or t.layout is not torch.strided or t.is_nested:
        return None
    device = t.device
    plain_device = _PLAIN_DEVICES.get(device)
    if plain_device is None:
        plain_device = _PLAIN_DEVICES[device] = device.type in ("cpu", "cuda")
    if not plain_device or t.is_conj() or t.is_neg():
        return None
    try:
        storage = t.untyped_storage()
        address = storage.data_ptr()
    except (RuntimeError, NotImplementedError):
        # functionalization's storages have no memory (the adapter's notes say so); functorch's
        # BatchedTensor and TensorWrapper have no storage (_extents finds the tensor they wrap)
        return None
    return (
        t.shape,
        t.stride(),
        t.storage_offset(),
        dtype,
        storage._cdata,
        device,
        address,
        storage.nbytes(),
    )


def _arrays_in(value: Any, found: list[Any], depth: int = 0) -> list[Any]:
    """Tensors and NumPy arrays in ``value``, looking into tuples, lists and dicts (3 levels).

    Runs for every recorded call, so scalars are skipped without a call per item.  An object
    passed twice is listed twice (see :func:`_distinct`).
    """
    if isinstance(value, _ARRAY_TYPES):
        items: Any = (value,)
    else:
        container = type(value)
        if container not in _CONTAINERS:  # not torch.Size, not a named tuple
            return found
        items = value.values() if container is dict else value
    for item in items:
        if isinstance(item, _ARRAY_TYPES):
            found.append(item)
        elif depth < 3 and type(item) in _CONTAINERS:
            _arrays_in(item, found, depth + 1)
    return found


def _distinct(objects: list[Any]) -> list[Any]:
    """Each object once: ``F.multi_head_attention_forward(x, x, x, ...)`` has one input."""
    return list({id(obj): obj for obj in objects}.values()) if len(objects) > 1 else objects


def _has_array(value: Any) -> bool:
    if isinstance(value, _ARRAY_TYPES):
        return True
    return type(value) in (tuple, list) and any(_has_array(item) for item in value)


def _nbytes(tensors: Any) -> int:
    """Bytes of the data in ``tensors``; a wrapper subclass holds the data of the tensors it wraps."""
    total = 0
    for t in _arrays_in(tensors, []):
        inner = wrapped_tensors(t)
        if inner is not None:
            total += _nbytes(list(inner))
        else:
            total += t.numel() * t.element_size()
    return total


# --- where in the user's code -----------------------------------------------------------------------


# --- events and the log ------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class CopyEvent:
    """One user-level call in a :func:`track_copies` block, and what its ATen ops did.

    ``kind`` is one of ``"copy"``, ``"in-place"``, ``"view"``, ``"compute"`` (see the module
    docstring); ``bytes_copied`` counts the bytes data-movement ops wrote (also into an existing
    tensor, as ``x.copy_(y)`` does); ``allocated`` says a result lives in storage none of the inputs
    had; ``inputs`` / ``outputs`` are the layouts at call time.

    >>> import torch, stridewidget as sw
    >>> x = torch.arange(6.0).reshape(2, 3)
    >>> with sw.track_copies() as log:
    ...     y = x.t().reshape(-1)
    >>> event = log.events[-1]
    >>> event.call, event.kind, event.ops, event.bytes_copied
    ('torch.Tensor.reshape', 'copy', ('aten.clone', 'aten._unsafe_view'), 24)
    >>> print(event.inputs[0], "->", event.outputs[0])
    float32 (3,2):(1,3) +0 · storage 6 · F-contiguous -> float32 (6):(1) +0 · storage 6 · contiguous
    """

    index: int
    call: str
    ops: tuple[str, ...]
    kind: str
    aliases_input: bool
    allocated: bool
    returned_input: bool
    wrote_input: bool
    bytes_copied: int
    filename: str
    line: int
    _inputs: tuple[_Snapshot, ...] = field(repr=False)
    _outputs: tuple[_Snapshot, ...] = field(repr=False)
    #: The functorch transforms the call ran under, outermost first (``("vmap",)``): its inputs
    #: and outputs are then the physical tensors (a BatchedTensor's, batch dims included).
    transforms: tuple[str, ...] = ()

    @classmethod
    def _recorded(cls, **fields: Any) -> CopyEvent:
        """The event the tracker records, its fields set at once: a frozen dataclass's
        ``__init__`` sets each field through ``object.__setattr__`` (1.5 µs for these 13, a
        tenth of the tracker's Python per op).  There is no ``__post_init__`` to run."""
        event = object.__new__(cls)
        event.__dict__.update(fields)
        return event

    @cached_property
    def inputs(self) -> tuple[Layout | None, ...]:
        """Layouts of the call's tensor/array arguments (None for a tensor without strides)."""
        return tuple(snapshot.layout for snapshot in self._inputs)

    @cached_property
    def outputs(self) -> tuple[Layout | None, ...]:
        """Layouts of the tensors/arrays the call returned."""
        return tuple(snapshot.layout for snapshot in self._outputs)

    @property
    def location(self) -> str:
        """The user's source line: ``file.py:12``, or ``In[3], line 2`` in a notebook."""
        return describe_location(self.filename, self.line)


class CopyLog:
    """The events a :func:`track_copies` block recorded, in call order.

    Displays as a table (text in a terminal, HTML in a notebook); ``show(i)`` draws event ``i``'s
    input and output storages with the widget.

    >>> import torch, stridewidget as sw
    >>> x = torch.arange(12.0).reshape(3, 4)
    >>> with sw.track_copies() as log:
    ...     w = x.view(-1)
    ...     z = x[:, 1:].flatten()
    >>> [(e.call, e.kind) for e in log.events]
    [('torch.Tensor.view', 'view'), ('torch.Tensor.__getitem__', 'view'), ('torch.Tensor.flatten', 'copy')]
    >>> len(log.copies), log.total_bytes
    (1, 36)
    """

    def __init__(self) -> None:
        self.events: list[CopyEvent] = []
        self.active = True

    @property
    def copies(self) -> list[CopyEvent]:
        """Events that moved existing data into new storage (``kind == "copy"``)."""
        return [event for event in self.events if event.kind == "copy"]

    @property
    def total_bytes(self) -> int:
        """Bytes written by data-movement ops in the whole block (includes ``x.copy_(y)``)."""
        return sum(event.bytes_copied for event in self.events)

    def __len__(self) -> int:
        return len(self.events)

    def __iter__(self) -> Iterator[CopyEvent]:
        return iter(self.events)

    def __getitem__(self, index: int) -> CopyEvent:
        return self.events[index]

    def summary(self) -> str:
        """One line: counts per kind and the bytes copied.

        >>> import torch, stridewidget as sw
        >>> with sw.track_copies() as log:
        ...     y = torch.ones(2, 3).t().contiguous()
        >>> log.summary()
        'CopyLog: 3 events (1 copy, 1 view, 1 compute); 24 B copied'
        """
        counts = {kind: 0 for kind in KINDS}
        for event in self.events:
            counts[event.kind] += 1
        kinds = ", ".join(f"{n} {kind}" for kind, n in counts.items() if n)
        state = " (still recording)" if self.active else ""
        return (
            f"CopyLog: {len(self.events)} events{state} ({kinds or 'none'}); "
            f"{_format_bytes(self.total_bytes)} copied"
        )

    def _rows(self, max_rows: int, compact: bool) -> tuple[list[tuple[str, ...]], int]:
        rows = []
        for event in self.events[:max_rows]:
            source = _layout_text(event.inputs, compact)
            result = _layout_text(event.outputs, compact)
            if event.returned_input:
                result = "(its input itself)"
            transforms = f" [{'·'.join(event.transforms)}]" if event.transforms else ""
            rows.append(
                (
                    str(event.index),
                    _short_call(event.call) + transforms,
                    event.kind,
                    _format_bytes(event.bytes_copied) if event.bytes_copied else "",
                    _ops_text(event.ops),
                    source,
                    result,
                    event.location,
                )
            )
        return rows, max(0, len(self.events) - max_rows)

    _HEADER = ("#", "call", "kind", "copied", "ATen ops", "input", "output", "where")

    def to_text(self, max_rows: int = 50) -> str:
        """The table as plain text (what ``repr`` shows), at most ``max_rows`` events.

        >>> import torch, stridewidget as sw
        >>> with sw.track_copies() as log:
        ...     y = torch.arange(4.0).flip(0)
        >>> print(log.to_text())  # doctest: +NORMALIZE_WHITESPACE +ELLIPSIS
        CopyLog: 2 events (1 copy, 1 compute); 16 B copied
        #  call          kind     copied  ATen ops     input          output         where
        0  torch.arange  compute          aten.arange                 float32 (4):(1)  ...
        1  Tensor.flip   copy     16 B    aten.flip    float32 (4):(1)  float32 (4):(1)  ...
        """
        rows, hidden = self._rows(max_rows, compact=True)
        table = [self._HEADER, *rows]
        widths = [min(48, max(len(row[c]) for row in table)) for c in range(len(self._HEADER))]
        lines = [self.summary()]
        for row in table:
            cells = [_clip(cell, width).ljust(width) for cell, width in zip(row, widths)]
            lines.append("  ".join(cells).rstrip())
        if hidden:
            lines.append(f"... {hidden} more events in log.events")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.to_text()

    def _repr_html_(self, max_rows: int = 200) -> str:
        rows, hidden = self._rows(max_rows, compact=False)
        escape = html.escape
        head = "".join(f"<th style='text-align:left'>{escape(h)}</th>" for h in self._HEADER)
        body = []
        for row in rows:
            cells = "".join(
                "<td style='text-align:left;vertical-align:top;font-family:monospace;"
                f"white-space:pre-line'>{escape(cell)}</td>"
                for cell in row
            )
            tint = _KIND_TINT[row[2]]
            body.append(f"<tr style='background:{tint}'>{cells}</tr>")
        more = f"<p>… {hidden} more events in <code>log.events</code></p>" if hidden else ""
        return (
            f"<div><p><b>{escape(self.summary())}</b></p>"
            f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
            f"{more}<p style='font-size:smaller'>Draw one: <code>log.show(i)</code></p></div>"
        )

    def show(self, index: int) -> Any:
        """Draw event ``index``'s first input (``src``) and first output (``dst``) with the widget.

        Uses the live tensors while they exist and the recorded layouts (no values) once they were
        freed.  Returns what ``stridewidget.show`` returns.

        >>> import torch, stridewidget as sw
        >>> x = torch.arange(6.0).reshape(2, 3)
        >>> with sw.track_copies() as log:
        ...     y = x.t().reshape(-1)
        >>> widget = log.show(1)          # the copy: src and dst on two storages
        >>> widget.names, len(widget.scene["storages"])
        (['src', 'dst'], 2)
        """
        if not -len(self.events) <= index < len(self.events):
            raise IndexError(
                f"CopyLog.show: no event {index}; this log has {len(self.events)} events "
                "(numbered in the table's '#' column)"
            )
        event = self.events[index]
        drawn = {}
        for label, snapshots in (("src", event._inputs), ("dst", event._outputs)):
            if snapshots:
                live = snapshots[0].ref()
                drawn[label] = live if live is not None else snapshots[0].layout
        if not drawn:
            raise ValueError(f"CopyLog.show: event {index} ({event.call}) has no tensor to draw")
        import stridewidget

        return stridewidget.show(**drawn)


_KIND_TINT = {
    "copy": "rgba(230,120,40,0.18)",
    "in-place": "rgba(160,90,200,0.15)",
    "view": "rgba(40,150,90,0.12)",
    "compute": "transparent",
}


def _short_call(call: str) -> str:
    """``Tensor.reshape``, ``F.linear``, ``torch.cat``: the names people write."""
    call = call.removesuffix(".__get__")  # properties: Tensor.T, Tensor.mT
    for long, short in (("torch.Tensor.", "Tensor."), ("torch.nn.functional.", "F.")):
        if call.startswith(long):
            return short + call[len(long) :]
    return call


def _ops_text(ops: tuple[str, ...]) -> str:
    """``aten.clone aten._unsafe_view``; runs of one op as ``aten.view×3``."""
    if not ops:
        return "(no op)"
    parts: list[list[Any]] = []
    for op in ops:
        if parts and parts[-1][0] == op:
            parts[-1][1] += 1
        else:
            parts.append([op, 1])
    return " ".join(op if n == 1 else f"{op}×{n}" for op, n in parts)


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _layout_text(layouts: tuple[Layout | None, ...], compact: bool) -> str:
    """The first two layouts: in full, or compact as ``float32 (4,3):(1,4) +2``."""
    shown = []
    for layout in layouts[:2]:
        if layout is None:
            shown.append("(no strides)")
        elif compact:
            dims = ",".join(map(str, layout.shape))
            steps = ",".join(map(str, layout.strides))
            offset = f" +{layout.offset}" if layout.offset else ""
            shown.append(f"{layout.dtype} ({dims}):({steps}){offset}")
        else:
            shown.append(str(layout))
    if len(layouts) > 2:
        shown.append(f"+{len(layouts) - 2} more")
    return ("; " if compact else "\n").join(shown)


def _format_bytes(n: int) -> str:
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{n} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


# --- the two modes -------------------------------------------------------------------------------


class _ThreadState(threading.local):
    # > 0 while any tracker's dispatch handler runs: calls it makes (the op itself, metadata reads)
    # are the tracker's own, not the user's, for every tracker in the stack.
    in_dispatch = 0


_THREAD = _ThreadState()


class _Pending:
    """What the ATen ops of the call in progress did."""

    __slots__ = (
        "before",
        "bytes_copied",
        "copied_into",
        "fresh_copy",
        "keep_layouts",
        "ops",
        "transforms",
        "written",
    )

    def __init__(self) -> None:
        self.ops: list[str] = []
        # set by a recorder subclass's op mode: read this call's layouts (see _Recorder)
        self.keep_layouts = False
        # snapshots of the tensors ops wrote to (by id), taken before the first such op ran
        self.before: dict[int, _Snapshot] = {}
        self.bytes_copied = 0
        self.fresh_copy = False  # an out-of-place copy op ran: its result is new storage
        self.written: list[_Extent] = []  # storages written by in-place and out= ops
        self.copied_into: list[_Extent] = []  # the subset written by copy ops (copy_, cat.out)
        self.transforms: tuple[str, ...] = ()  # the functorch transforms running (see CopyEvent)


def _snapshots(
    value: Any, before: dict[int, _Snapshot] | None = None, layout: bool = True
) -> tuple[_Snapshot, ...]:
    """Snapshots of the tensors and arrays in ``value`` (each object once): taken now, or the one
    in ``before`` for a tensor an op wrote to (its layout at call time: ``t_``, ``resize_``)."""
    objects = _distinct(_arrays_in(value, []))
    if not before:
        return tuple([_Snapshot(obj, layout) for obj in objects])
    return tuple([before.get(id(obj)) or _Snapshot(obj, layout) for obj in objects])


# The fields an unread event (see _Recorder.unread) shares with every other one.
_UNREAD_FIELDS = {
    "kind": "",
    "aliases_input": False,
    "allocated": False,
    "returned_input": False,
    "wrote_input": False,
    "bytes_copied": 0,
    "_outputs": (),
}


class _Recorder:
    #: Every event's layouts are read (what the tracker promises).  The audit's subclass reads
    #: them only for the events its report can show: copies, and calls whose ``keep_layouts`` its
    #: op mode set (they ran an op that can hide a copy).  Reading a layout is most of a
    #: snapshot's cost, and calls that only made views are nearly half of a step's events.
    every_layout = True

    #: The user's source line is read for each event (the audit's backward recorder has no
    #: use for it: backward ops have no Python frames of their own).
    user_lines = True

    def __init__(self, log: CopyLog) -> None:
        self.log = log
        self.pending: _Pending | None = None

    def add(self, call: str, arguments: Any, result: Any, pending: _Pending) -> None:
        """Record the event of one call (or loose op) that returned ``result``: in full, or as
        :meth:`record_unread` when :meth:`unread` says nothing will read its kind.  Called by the
        modes' handlers, so that :func:`_user_frame` starts its walk in this module."""
        if self.unread(pending):
            lines = self.user_lines and pending.keep_layouts
            filename, line = user_line() if lines else ("", 0)
            self.record_unread(call, pending, arguments, filename, line)
        else:
            filename, line = user_line() if self.user_lines else ("", 0)
            input_snapshots = _snapshots(arguments, pending.before, self.every_layout)
            self.record(call, input_snapshots, result, pending, filename, line)

    def unread(self, pending: _Pending) -> bool:
        """Is this an event whose kind nothing will read, so that it is recorded by
        :meth:`record_unread`?  Never for the tracker; the audit's subclass says yes to events
        that moved no data and wrote nothing (they cannot be copies)."""
        return False

    def record_unread(
        self, call: str, pending: _Pending, arguments: Any, filename: str, line: int
    ) -> None:
        """Add an event :meth:`unread` chose: its kind ``""`` (not decided: no aliasing read), no
        outputs; its inputs' snapshots only when ``pending.keep_layouts`` (it ran an op that can
        hide a copy, whose source the audit may draw)."""
        inputs = (
            tuple([_Snapshot.for_drawing(obj) for obj in _distinct(_arrays_in(arguments, []))])
            if pending.keep_layouts
            else ()
        )
        event = object.__new__(CopyEvent)  # as CopyEvent._recorded, from a template
        fields = event.__dict__
        fields.update(_UNREAD_FIELDS)
        fields["index"] = len(self.log.events)
        fields["call"], fields["ops"], fields["_inputs"] = call, tuple(pending.ops), inputs
        fields["filename"], fields["line"] = filename, line
        self.log.events.append(event)

    def record(
        self,
        call: str,
        input_snapshots: tuple[_Snapshot, ...],
        result: Any,
        pending: _Pending,
        filename: str,
        line: int,
    ) -> None:
        """Add the event of one call; ``input_snapshots`` show the inputs as they were when it
        was called (an in-place metadata op such as ``t_`` or ``resize_`` changes them)."""
        output_snapshots = _snapshots(result, layout=self.every_layout)
        input_extents = [e for snapshot in input_snapshots for e in snapshot.extents]
        output_extents = [s.extents for s in output_snapshots if s.extents]
        aliased = [_shares_any(extents, input_extents) for extents in output_extents]
        written_inputs = [e for e in pending.written if _shares_any((e,), input_extents)]
        # copy_ into a buffer the call allocated itself (not an input) is a copy into new storage
        fresh_copy = pending.fresh_copy or (
            bool(pending.copied_into)
            and not all(_shares_any((e,), input_extents) for e in pending.copied_into)
        )
        returned_input = any(
            out.ref() is snapshot.ref() for out in output_snapshots for snapshot in input_snapshots
        )
        aliases_input = returned_input or any(aliased)
        # copy > in-place > view > compute: an in-place call that cloned first (F.silu(x,
        # inplace=True) or x.mul_(w) under autograd) copied; ``wrote_input`` says it also wrote
        if fresh_copy:
            kind = "copy"
        elif written_inputs and (
            not output_extents
            or any(_shares_any(extents, written_inputs) for extents in output_extents)
        ):
            kind = "in-place"
        elif aliases_input:
            kind = "view"
        else:
            kind = "compute"
        if not self.every_layout and (kind == "copy" or pending.keep_layouts):
            for snapshot in (*input_snapshots, *output_snapshots):
                snapshot.read_layout()
        self.log.events.append(
            CopyEvent._recorded(
                index=len(self.log.events),
                call=call,
                ops=tuple(pending.ops),
                kind=kind,
                aliases_input=aliases_input,
                allocated=not all(aliased),
                returned_input=returned_input,
                wrote_input=bool(written_inputs),
                bytes_copied=pending.bytes_copied,
                filename=filename,
                line=line,
                _inputs=input_snapshots,
                _outputs=output_snapshots,
                transforms=pending.transforms,
            )
        )


_CALL_NAMES: dict[Any, str] = {}


def _call_name(func: Any) -> str:
    """``torch.Tensor.reshape``, ``torch.nn.functional.linear``: torch's own names, cached."""
    name = _CALL_NAMES.get(func)
    if name is None:
        name = _CALL_NAMES[func] = resolve_name(func) or getattr(func, "__name__", repr(func))
    return name


class _CallMode(TorchFunctionMode):
    """Sees user-level calls; PyTorch pops it while a call runs, so inner calls are not seen."""

    def __init__(self, recorder: _Recorder) -> None:
        super().__init__()
        self.recorder = recorder

    def __torch_function__(
        self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: dict | None = None
    ) -> Any:
        if kwargs is None:
            kwargs = {}
        if _THREAD.in_dispatch:
            return func(*args, **kwargs)
        recorder = self.recorder
        outer = recorder.pending
        pending = recorder.pending = _Pending()
        transforms = pending.transforms = functorch_transforms()
        mutations = _functional_mutations(args, kwargs) if "functionalize" in transforms else ()
        try:
            result = func(*args, **kwargs)
        finally:
            recorder.pending = outer
        for tensor, count in mutations:
            # functionalization ran the in-place op out of place and swapped the result into
            # the wrapper: no op wrote an argument, but the wrapper's mutation count moved
            if functional_mutation_count(tensor) != count:
                pending.written.extend(_extents(tensor))
        if pending.ops or _has_array(result):
            recorder.add(_call_name(func), (args, kwargs), result, pending)
            self.recorded(func, result)
        return result

    def recorded(self, func: Any, result: Any) -> None:
        """Called when a call's event (the log's last) is recorded: the audit's subclass notes the
        call's source line there, instead of a third mode seeing every call again."""


def _functional_mutations(args: tuple[Any, ...], kwargs: dict) -> list[tuple[Any, int]]:
    """``(tensor, mutation count)`` of the arguments that are ``functionalize`` wrappers."""
    counted = []
    for tensor in _arrays_in((args, kwargs), []):
        if isinstance(tensor, torch.Tensor):
            count = functional_mutation_count(tensor)
            if count is not None:
                counted.append((tensor, count))
    return counted


def _note_op(
    func: Any, info: _OpInfo, args: tuple[Any, ...], kwargs: dict, result: Any, pending: _Pending
) -> None:
    """Add what one ATen op did (its name, what it wrote, the bytes it moved) to ``pending``."""
    pending.ops.append(info.name)
    if info.written:
        moves = info.moves(args, kwargs)
        for position, name in info.written:
            for tensor in _arrays_in(_argument(args, kwargs, position, name), []):
                extents = _extents(tensor)
                pending.written.extend(extents)
                if moves:
                    pending.copied_into.extend(extents)
                    pending.bytes_copied += _nbytes(tensor)
    elif info.moves(args, kwargs) or (not func.is_view and _moves_data(func, args, kwargs)):
        pending.fresh_copy = True
        pending.bytes_copied += _nbytes(result)
    elif not info.is_copy and (func.is_view or id(func) in _UNDECOMPOSED):
        # never moves data, whatever its arguments (a view, or an op with no decomposition to
        # branch on dtypes): noted by name from now on
        _PLAIN_OPS.add(id(func))


# ids of ops (kept alive by _OP_INFO) that write no argument and never move data: views and
# compute ops whose decomposition was followed once (_moves_data)
_PLAIN_OPS: set[int] = set()


# --- which composite ops move data: their reference decompositions, followed on meta tensors --------

_MOVES_DATA = _OpCache()
# ids of ops (kept alive by _MOVES_DATA) whose verdict was reached without a decomposition: it
# holds for every dtype
_UNDECOMPOSED: set[int] = set()


def _storage_id(t: torch.Tensor) -> int:
    return t.untyped_storage()._cdata


class _DataFlow(TorchDispatchMode):
    """Follows the inputs' data through an op's decomposition: which ops read it, which moved it.

    Data is tracked per storage, so views of it are data too.  An op that reads the data is
    decomposed further (CompositeImplicitAutograd kernel, else ``torch._decomp``'s reference) until
    it is a primitive move (:data:`COPY_OPS`: its results and what it wrote become data), a view
    (every result aliases the data), an allocation shaped like it (``*_like``, ``new_*``), a
    constant fill, or arithmetic (anything else that returns or writes a tensor).
    """

    def __init__(self, data: set[int]) -> None:
        super().__init__()
        from torch._decomp import decomposition_table  # imported at first use: it is large

        self.decompositions = decomposition_table
        self.data = data
        self.moved = False
        self.computed = False
        self.decomposed = False

    def __torch_dispatch__(
        self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: dict | None = None
    ) -> Any:
        kwargs = kwargs or {}
        info = _op_info(func)
        packet = func.overloadpacket.__name__
        reads = any(_storage_id(t) in self.data for t in _arrays_in((args, kwargs), []))
        if not reads or packet.endswith("_like") or packet.startswith("new_"):
            return func(*args, **kwargs)
        if info.moves(args, kwargs):
            result = func(*args, **kwargs)
            self.moved = True
            written = [_argument(args, kwargs, position, name) for position, name in info.written]
            self.data.update(_storage_id(t) for t in _arrays_in((result, written), []))
            return result
        if packet in ("fill_", "zero_"):
            return func(*args, **kwargs)
        if info.decomposes:
            self.decomposed = True
            with self:
                return func._op_dk(_IMPLICIT, *args, **kwargs)
        decomposition = None if func.is_view else self.decompositions.get(func)
        if decomposition is not None:
            self.decomposed = True
            with self:
                return decomposition(*args, **kwargs)
        result = func(*args, **kwargs)
        results = _arrays_in(result, [])
        if info.written or not all(_storage_id(t) in self.data for t in results):
            self.computed = True
        return result


def _moves_data(func: Any, args: tuple[Any, ...], kwargs: dict) -> bool:
    """Does ``func`` only move its inputs' data into new storage (no arithmetic on it)?

    Decided once per op and input dtypes, from its definition: its decomposition is run on meta
    tensors shaped like this call's (no data, no device) and followed by :class:`_DataFlow`.  Yes
    when the data reached every result through primitive moves and views only.  An op without a
    decomposition, or one whose decomposition fails on meta tensors, counts as compute.  The
    dtypes are part of the key because a decomposition may branch on them (``tril`` of a bool mask
    runs a logical op where a float one is moved): the answer must not depend on which call came
    first.
    """
    by_dtypes = _MOVES_DATA.lookup(func)
    if by_dtypes is _MISSING:
        by_dtypes = _MOVES_DATA.store(func, {})
    dtypes = tuple(getattr(t, "dtype", None) for t in _arrays_in((args, kwargs), []))
    answer = by_dtypes.get(dtypes)
    if answer is None:
        answer, decomposed = _follow_data(func, args, kwargs)
        by_dtypes[dtypes] = answer
        if not decomposed:
            _UNDECOMPOSED.add(id(func))
    return answer


def _follow_data(func: Any, args: tuple[Any, ...], kwargs: dict) -> tuple[bool, bool]:
    """Whether ``func`` moved data only, and whether a decomposition was followed to say so."""

    def on_meta(value: Any) -> Any:
        if isinstance(value, torch.Tensor):
            return torch.empty_strided(
                value.shape, value.stride(), dtype=value.dtype, device="meta"
            )
        return value

    with _disable_current_modes(), torch.no_grad():
        try:
            meta_args, meta_kwargs = tree_map(on_meta, (args, kwargs))
            flow = _DataFlow({_storage_id(t) for t in _arrays_in((meta_args, meta_kwargs), [])})
            with flow:
                result = func(*meta_args, **meta_kwargs)
        except Exception:  # sparse inputs, data-dependent shapes ...: not decidable on meta
            return False, True
    results = _arrays_in(result, [])
    moved = (
        flow.moved
        and not flow.computed
        and bool(results)
        and all(_storage_id(t) in flow.data for t in results)
    )
    return moved, flow.decomposed


class _OpMode(TorchDispatchMode):
    """Sees every ATen op and notes what it wrote into the call in progress."""

    def __init__(self, recorder: _Recorder) -> None:
        super().__init__()
        self.recorder = recorder

    def __torch_dispatch__(
        self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: dict | None = None
    ) -> Any:
        if kwargs is None:
            kwargs = {}
        recorder = self.recorder
        standalone = recorder.pending is None
        _THREAD.in_dispatch += 1
        try:
            if standalone:  # an op no user-level call accounts for: an event of its own
                recorder.pending = _Pending()
            pending = recorder.pending
            info = _op_info(func)
            for position, name in info.written:  # in-place metadata ops change the layout
                for tensor in _arrays_in(_argument(args, kwargs, position, name), []):
                    if id(tensor) not in pending.before:
                        pending.before[id(tensor)] = _Snapshot(tensor)
            try:
                if info.decomposes and info.runs_decomposition(args, kwargs):
                    # Only with autograd off (torch.inference_mode()) do CompositeImplicitAutograd
                    # ops (contiguous, reshape, flatten, pad ...) reach this mode whole; run their
                    # decomposition through this mode, so the ops that do the work are seen
                    # exactly as with autograd on.  An op with a kernel of its own on this device
                    # (silu_backward) runs that kernel, as it does outside the mode.
                    with self:
                        result = func._op_dk(_IMPLICIT, *args, **kwargs)
                else:
                    result = self.run(func, args, kwargs)
                    if id(func) in _PLAIN_OPS:  # known to move and write nothing: its name only
                        pending.ops.append(info.name)
                    else:
                        _note_op(func, info, args, kwargs, result, pending)
            finally:
                if standalone:
                    recorder.pending = None
            if standalone:
                recorder.add(info.name, (args, kwargs), result, pending)
        finally:
            _THREAD.in_dispatch -= 1
        return result

    def run(self, func: Any, args: tuple[Any, ...], kwargs: dict) -> Any:
        """Run one ATen op that is not decomposed here: the audit's subclass marks the ops whose
        kernels can hide a copy for the profiler, instead of a second mode seeing every op."""
        return func(*args, **kwargs)


@contextmanager
def track_copies() -> Iterator[CopyLog]:
    """Record every tensor-producing call in the block: copy, in-place, view or compute.

    Re-entrant (nested blocks each get every event), safe with autograd, ``torch.no_grad()`` and
    ``torch.inference_mode()``, sees through wrapper subclasses to the tensors they wrap,
    device-agnostic (reads metadata only: never values, never a device sync).  When the block ends,
    normally or by an exception, both modes are gone and torch runs at full speed again.

    >>> import torch, stridewidget as sw
    >>> x = torch.arange(12.0).reshape(3, 4)
    >>> with sw.track_copies() as log:
    ...     y = x.t().reshape(-1)    # not viewable: reshape copies
    ...     c = x.contiguous()       # already contiguous: returns x itself
    >>> [(e.call, e.kind, e.bytes_copied) for e in log.events]
    [('torch.Tensor.t', 'view', 0), ('torch.Tensor.reshape', 'copy', 48), ('torch.Tensor.contiguous', 'view', 0)]
    >>> log.events[-1].returned_input, log.total_bytes
    (True, 48)

    Only the thread that opened the block is tracked: PyTorch's interception modes are per
    thread, so calls in a worker thread started inside the block are not recorded.  Track a
    worker with its own ``track_copies()`` inside the worker:

    >>> import threading
    >>> worker_logs = []
    >>> def worker(t):
    ...     with sw.track_copies() as worker_log:
    ...         t.t().contiguous()
    ...     worker_logs.append(worker_log)
    >>> with sw.track_copies() as main_log:
    ...     thread = threading.Thread(target=worker, args=(x,))
    ...     thread.start()
    ...     thread.join()
    >>> len(main_log.events), [e.kind for e in worker_logs[0].events]
    (0, ['view', 'copy'])

    Under ``torch.func`` transforms (``vmap``, ``grad``, ``functionalize``) each event notes them
    in ``transforms``, and its layouts and bytes are those of the physical tensors.
    """
    recorder = _Recorder(CopyLog())
    with _tracking(_CallMode(recorder), _OpMode(recorder)) as log:
        yield log


@contextmanager
def _tracking(call_mode: _CallMode, op_mode: _OpMode) -> Iterator[CopyLog]:
    """Both modes on for the block (the audit passes its subclasses); the log they record into
    says it stopped recording when the block ends."""
    log = op_mode.recorder.log
    try:
        with call_mode, op_mode:
            yield log
    finally:
        log.active = False
