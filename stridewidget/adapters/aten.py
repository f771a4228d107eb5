"""What one ATen op does with its inputs' data: moves it, writes an argument, or computes.

Decided once per op from its schema and tags (:class:`OpInfo`, kept in an :class:`OpCache`),
and, for an op that is neither a primitive data movement (:data:`COPY_OPS`) nor a view, by
following its reference decomposition on meta tensors (:func:`moves_data`).  The one list both
the eager copy tracker (``copies/``) and ``sw.graph``'s node kinds (``graph/nodes.py``) read.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy
import torch

from .._compat import (
    composite_implicit_key,
    decomposition_table,
    disable_current_modes,
    dispatch_mode_base,
    has_kernel,
    op_arguments,
    run_composite_implicit,
    sparse_parts,
    storage_id,
    tree_map,
    wrapped_tensors,
)

__all__ = [
    "ARRAY_TYPES",
    "COMPOSITE_IMPLICIT",
    "COPY_OPS",
    "MISSING",
    "SCATTERS_INTO",
    "OpCache",
    "OpInfo",
    "argument_value",
    "arrays_in",
    "call_key",
    "data_nbytes",
    "moves_data",
    "moves_data_answers",
    "op_info",
    "undecomposed",
]

#: The array types :func:`arrays_in` finds.
ARRAY_TYPES = (torch.Tensor, numpy.ndarray)
_CONTAINERS = frozenset({tuple, list, dict})


def arrays_in(value: Any, found: list[Any], depth: int = 0) -> list[Any]:
    """Tensors and NumPy arrays in ``value``, looking into tuples, lists and dicts (3 levels).

    Runs for every recorded call, so scalars are skipped without a call per item.  An object
    passed twice is listed twice (``copies.snapshot.distinct`` lists each once).
    """
    if isinstance(value, ARRAY_TYPES):
        items: Any = (value,)
    else:
        container = type(value)
        if container not in _CONTAINERS:  # not torch.Size, not a named tuple
            return found
        items = value.values() if container is dict else value
    for item in items:
        if isinstance(item, ARRAY_TYPES):
            found.append(item)
        elif depth < 3 and type(item) in _CONTAINERS:
            arrays_in(item, found, depth + 1)
    return found


def data_nbytes(tensors: Any) -> int:
    """Bytes of the data in ``tensors``; a wrapper subclass holds the data of the tensors it wraps,
    a sparse tensor its indices and values (not the dense size)."""
    total = 0
    for t in arrays_in(tensors, []):
        inner = wrapped_tensors(t)
        if inner is not None:
            total += data_nbytes(list(inner))
        elif isinstance(t, torch.Tensor) and t.layout is not torch.strided and sparse_parts(t):
            total += data_nbytes(list(sparse_parts(t)))
        else:
            total += t.numel() * t.element_size()
    return total


#: The primitive data-movement ATen ops: their output is existing values moved (and maybe
#: converted), selected or surrounded by constants, without arithmetic.  Ops tagged
#: ``torch.Tag.view_copy`` (``permute_copy``, ``expand_copy`` ...) count too; ``index_put`` with
#: ``accumulate=True`` and ``scatter`` with a ``reduce`` add, so they do not.  Any other op moves
#: data when its reference decomposition does (see :func:`moves_data`): ``F.pad`` (reflect,
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
        "index_copy",
        "scatter",
        "slice_scatter",
        "select_scatter",
        "diagonal_scatter",
        "as_strided_scatter",
        "_chunk_cat",  # FSDP2's reduce-scatter input: chunks of each gradient, zero-padded
        "_foreach_copy_",  # copy_ of each entry (an optimizer's state copied in)
        "_foreach_copy",
    }
)


#: The in-place ops that move a source tensor's values into ``self`` (``buf.index_copy_(0, i, a)``,
#: ``buf[i] = a``), and the argument holding that source.  A 0- or 1-element source (``x[mask] =
#: 0``) is a fill, not data moved; ``scatter_`` with a scalar ``value`` or a ``reduce`` adds none.
SCATTERS_INTO = {
    "index_put_": "values",
    "_index_put_impl_": "values",
    "index_copy_": "source",
    "scatter_": "src",
    "masked_scatter_": "source",
}


class OpInfo(NamedTuple):
    """What an ATen op's schema and registrations say about it, read once (:func:`op_info`)."""

    name: str
    is_copy: bool
    # (position, name) of every argument the op writes to (``self`` of ``add_``, ``out=``).
    written: tuple[tuple[int, str], ...]
    # a CompositeImplicitAutograd op: defined as other ATen ops (see OpMode)
    decomposes: bool
    # (position, name) of ``accumulate`` / ``reduce`` arguments, which turn a move into arithmetic
    combining: tuple[tuple[int, str], ...]
    # device types whose own kernel the dispatcher runs instead of the decomposition
    # (``silu_backward``, ``native_channel_shuffle`` on the CPU); ``None``: every device's
    kernel_devices: frozenset[str] | None = frozenset()
    # (position, name) of the source of an in-place op of :data:`SCATTERS_INTO`, else None
    source: tuple[int, str] | None = None

    def runs_decomposition(self, args: tuple[Any, ...], kwargs: dict) -> bool:
        """Does a plain run of this call execute the op's decomposition (not a kernel of its own)?"""
        if not self.decomposes or self.kernel_devices is None:
            return False
        if not self.kernel_devices:
            return True
        tensors = arrays_in((args, kwargs), [])
        return not tensors or tensors[0].device.type not in self.kernel_devices

    def moves(self, args: tuple[Any, ...], kwargs: dict) -> bool:
        """Is this call of the op a primitive data movement (see :data:`COPY_OPS`)?"""
        if not self.is_copy or any(
            argument_value(args, kwargs, position, name) not in (None, False)
            for position, name in self.combining
        ):
            return False
        if self.source is None:
            return True
        source = argument_value(args, kwargs, *self.source)
        if isinstance(source, (list, tuple)):  # a list of sources (all_gather_copy_in's shards)
            return sum(t.numel() for t in source if isinstance(t, torch.Tensor)) > 1
        return isinstance(source, torch.Tensor) and source.numel() > 1

    def moved_bytes(self, args: tuple[Any, ...], kwargs: dict, written: Any) -> int:
        """Bytes this call of a moving op wrote into ``written``: all of it, or for an op of
        :data:`SCATTERS_INTO` at most its source's."""
        size = data_nbytes(written)
        if self.source is None:
            return size
        return min(size, data_nbytes(argument_value(args, kwargs, *self.source)))


def argument_value(args: tuple[Any, ...], kwargs: dict, position: int, name: str) -> Any:
    """The argument at ``position`` of a call, or its keyword ``name`` (``None`` if absent)."""
    return args[position] if position < len(args) else kwargs.get(name)


class OpCache(dict):
    """ATen op -> a value decided once for it, keyed by ``id(op)`` with the op kept in the entry
    (so the id stays its own): an OpOverload's ``__hash__`` is Python code, and these caches are
    read for every op a mode sees."""

    def lookup(self, func: Any) -> Any:
        """The value stored for ``func``, else :data:`MISSING`."""
        entry = self.get(id(func))
        return entry[1] if entry is not None and entry[0] is func else MISSING

    def store(self, func: Any, value: Any) -> Any:
        """Keep ``value`` for ``func`` and return it."""
        self[id(func)] = (func, value)
        return value


#: What :meth:`OpCache.lookup` returns for an op it holds no value for (``None`` may be one).
#: Ops outside ATen that copy a source into an argument: (namespace, name) -> (the argument
#: written, the source).  FSDP2's ``fsdp::all_gather_copy_in`` copies this rank's shards into a
#: slice of the all-gather buffer it is given (its schema does not say it writes it) and returns
#: views of that buffer; ``fsdp::split_with_sizes_copy`` copies the gathered buffer into the
#: unsharded parameters (``out``); ``fsdp::chunk_cat`` writes the reduce-scatter input: chunks
#: of each gradient, zero-padded (all of ``out``, as ``aten._chunk_cat``: no source bound).
UNDECLARED_COPIES: dict[tuple[str, str], tuple[str, str | None]] = {
    ("fsdp", "all_gather_copy_in"): ("all_gather_output", "all_gather_inputs"),
    ("fsdp", "split_with_sizes_copy"): ("out", "all_gather_output"),
    ("fsdp", "chunk_cat"): ("out", None),
}


MISSING = object()
_OP_INFO = OpCache()
#: The dispatch key of an op's decomposition into other ATen ops (``run_composite_implicit`` runs it).
COMPOSITE_IMPLICIT = composite_implicit_key()


#: ``torch.Tag.out`` (an ``.out`` overload); torch builds before 2.13 that lack it (the project's
#: floor; a GPU machine's image may be older) say no op is one
_OUT_TAG = getattr(torch.Tag, "out", None)


def op_info(func: Any) -> OpInfo:
    """The :class:`OpInfo` of an ATen op (``torch.ops.aten.add_.Tensor``), cached per op."""
    info = _OP_INFO.lookup(func)
    if info is not MISSING:
        return info
    packet = func.overloadpacket.__name__
    namespace = getattr(func, "namespace", "aten")
    arguments = list(enumerate(op_arguments(func)))
    undeclared = UNDECLARED_COPIES.get((namespace, packet))
    source_name = undeclared[1] if undeclared else SCATTERS_INTO.get(packet)
    source = next(((position, a.name) for position, a in arguments if a.name == source_name), None)
    is_copy = (
        undeclared is not None
        or packet in COPY_OPS
        or torch.Tag.view_copy in func.tags
        or source is not None
        or (_OUT_TAG in func.tags and _view_copy_packet(func))  # split_with_sizes_copy.out
    )
    written = tuple(
        (position, argument.name)
        for position, argument in arguments
        if (argument.alias_info is not None and argument.alias_info.is_write)
        or (undeclared is not None and argument.name == undeclared[0])
    )
    combining = tuple(
        (position, argument.name)
        for position, argument in arguments
        if argument.name in ("accumulate", "reduce")
    )
    # the C++ kernel only: Python ones (torch._decomp's py_impl) serve tracing, not eager runs
    try:
        decomposes = has_kernel(func, COMPOSITE_IMPLICIT)
    except RuntimeError:  # not in the dispatcher: prim::device, which FakeTensorMode sends
        decomposes = False
    kernel_devices = _kernel_devices(func) if decomposes else frozenset()
    return _OP_INFO.store(
        func,
        OpInfo(
            f"{namespace}.{packet}", is_copy, written, decomposes, combining, kernel_devices, source
        ),
    )


def _view_copy_packet(func: Any) -> bool:
    """Is an overload of ``func``'s packet tagged ``view_copy`` (the ``out=`` overload of
    ``split_with_sizes_copy`` is not, its functional one is)?"""
    packet = func.overloadpacket
    return any(torch.Tag.view_copy in getattr(packet, name).tags for name in packet.overloads())


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


def _kernel_devices(func: Any) -> frozenset[str] | None:
    """The device types on which ``func`` runs a kernel of its own rather than its
    CompositeImplicitAutograd decomposition; ``None`` for every device."""
    if any(has_kernel(func, key) for key in _EVERY_DEVICE_KEYS):
        return None
    return frozenset(device for key, device in _BACKEND_KEYS.items() if has_kernel(func, key))


# --- which composite ops move data: their reference decompositions, followed on meta tensors --------

_MOVES_DATA = OpCache()
# ids of ops (kept alive by _MOVES_DATA) whose verdict was reached without a decomposition: it
# holds for every dtype
_UNDECOMPOSED: set[int] = set()


def undecomposed(func: Any) -> bool:
    """Was :func:`moves_data`'s verdict on ``func`` reached without following a decomposition
    (so it holds for every dtype)?

    >>> import torch
    >>> x = torch.zeros(2)
    >>> moves_data(torch.ops.aten.flip.default, (x, [0]), {}), undecomposed(torch.ops.aten.flip.default)
    (True, True)
    """
    return id(func) in _UNDECOMPOSED


def _storage_id(t: torch.Tensor) -> int:
    return storage_id(t.untyped_storage())


class _DataFlow(dispatch_mode_base()):
    """Follows the inputs' data through an op's decomposition: which ops read it, which moved it.

    Data is tracked per storage, so views of it are data too.  An op that reads the data is
    decomposed further (CompositeImplicitAutograd kernel, else ``torch._decomp``'s reference) until
    it is a primitive move (:data:`COPY_OPS`: its results and what it wrote become data), a view
    (every result aliases the data), an allocation shaped like it (``*_like``, ``new_*``), a
    constant fill, or arithmetic (anything else that returns or writes a tensor).
    """

    def __init__(self, data: set[int]) -> None:
        super().__init__()
        self.decompositions = decomposition_table()  # imported at first use: it is large
        self.data = data
        self.moved = False
        self.computed = False
        self.decomposed = False

    def __torch_dispatch__(
        self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: dict | None = None
    ) -> Any:
        kwargs = kwargs or {}
        info = op_info(func)
        packet = func.overloadpacket.__name__
        reads = any(_storage_id(t) in self.data for t in arrays_in((args, kwargs), []))
        if not reads or packet.endswith("_like") or packet.startswith("new_"):
            return func(*args, **kwargs)
        if info.moves(args, kwargs):
            result = func(*args, **kwargs)
            self.moved = True
            written = [
                argument_value(args, kwargs, position, name) for position, name in info.written
            ]
            self.data.update(_storage_id(t) for t in arrays_in((result, written), []))
            return result
        if packet in ("fill_", "zero_"):
            return func(*args, **kwargs)
        if info.decomposes:
            self.decomposed = True
            with self:
                return run_composite_implicit(func, *args, **kwargs)
        decomposition = None if func.is_view else self.decompositions.get(func)
        if decomposition is not None:
            self.decomposed = True
            with self:
                return decomposition(*args, **kwargs)
        result = func(*args, **kwargs)
        results = arrays_in(result, [])
        if info.written or not all(_storage_id(t) in self.data for t in results):
            self.computed = True
        return result


# --- the key moves_data decides a call under --------------------------------------------------

#: Scalars a decomposition branches on, keyed exactly: ``pow(x, 1)`` is a copy, ``pow(x, 2)``
#: arithmetic, ``pow(x, 0.5)`` a ``sqrt``; small ints are also the dims ops take.  Any other int or
#: float is keyed by its type alone, so that a step's ever-changing scalars (AdamW's bias
#: correction, a learning rate) share one verdict.  Floats and bools are keyed apart from ints
#: (``1 == 1.0 == True`` in a dict); a complex number with no imaginary part as its real part.
_INT_KEYS = {value: value for value in range(-4, 5)}
_FLOAT_KEYS = {
    value: ("float", value)
    for value in (*map(float, range(-4, 5)), 0.5, -0.5, 1.5, -1.5, 0.25, math.inf, -math.inf)
}
_BOOL_KEYS = {False: ("bool", False), True: ("bool", True)}
_ANY_INT, _ANY_FLOAT, _NAN = ("int",), ("float",), ("float", "nan")
_ANY_COMPLEX, _NAN_COMPLEX = ("complex",), ("complex", "nan")
_KEYED_AS_IS = frozenset(
    {type(None), str, torch.dtype, torch.device, torch.layout, torch.memory_format}
)
_PLAIN_TENSORS = frozenset({torch.Tensor, torch.nn.Parameter})
#: :func:`moves_data` forgets an op's verdicts past this many keys (a call with ever-new keys
#: must not grow its dict without bound; forgotten verdicts are decided again).
MAX_KEYS = 512


def _value_key(value: Any, depth: int) -> Any:
    """:func:`call_key` of one argument: a tensor or array by its dtype, a scalar as above, a
    list, tuple or dict (3 levels deep, as :func:`arrays_in` looks) by its items' keys, anything
    else by its type."""
    kind = type(value)
    if kind is int:
        return _INT_KEYS.get(value, _ANY_INT)
    if kind is float:
        return _FLOAT_KEYS.get(value, _ANY_FLOAT) if value == value else _NAN
    if kind is bool:
        return _BOOL_KEYS[value]
    if kind in _KEYED_AS_IS:
        return value
    if kind is complex:  # ``c ** (1 + 0j)`` copies as ``c ** 1.0`` does (they are equal)
        if value.imag == 0 and value.real in _FLOAT_KEYS:
            return ("complex", value.real)
        return _ANY_COMPLEX if value == value else _NAN_COMPLEX
    if isinstance(value, ARRAY_TYPES):
        return value.dtype
    if kind in _CONTAINERS and depth < 3:
        if kind is dict:
            return tuple([(name, _value_key(item, depth + 1)) for name, item in value.items()])
        return tuple(
            [
                _INT_KEYS.get(item, _ANY_INT) if type(item) is int else _value_key(item, depth + 1)
                for item in value
            ]
        )
    return kind


def call_key(args: tuple[Any, ...], kwargs: dict | None = None) -> tuple[Any, ...]:
    """The key :func:`moves_data` keeps its verdict on a call under: per argument, a tensor's
    dtype (a decomposition may branch on it: ``tril`` of a bool mask runs a logical op where a
    float one is moved), a scalar's value when a decomposition may branch on it, else its type.

    >>> import torch
    >>> x = torch.ones(2)
    >>> call_key((x, 1)), call_key((x, 2.0)), call_key((x, 1e-3)), call_key((x, [0, 7]))
    ((torch.float32, 1), (torch.float32, ('float', 2.0)), (torch.float32, ('float',)), (torch.float32, (0, ('int',))))
    """
    key = []
    for arg in args:  # the common arguments inline: this runs for each op the tracker sees
        kind = type(arg)
        if kind in _PLAIN_TENSORS:
            key.append(arg.dtype)
        elif kind is int:
            key.append(_INT_KEYS.get(arg, _ANY_INT))
        elif kind is float:
            key.append(_FLOAT_KEYS.get(arg, _ANY_FLOAT) if arg == arg else _NAN)
        elif kind is bool:
            key.append(_BOOL_KEYS[arg])
        elif kind is list:  # dims, sizes: as _value_key keys a list
            key.append(
                tuple(
                    [
                        _INT_KEYS.get(item, _ANY_INT) if type(item) is int else _value_key(item, 1)
                        for item in arg
                    ]
                )
            )
        else:
            key.append(_value_key(arg, 0))
    if kwargs:
        key.append(_value_key(kwargs, 0))
    return tuple(key)


def moves_data_answers(func: Any) -> dict[tuple[Any, ...], bool]:
    """:func:`moves_data`'s verdicts for ``func`` so far, keyed by :func:`call_key` (the dict it
    keeps and fills): a caller that keys a call so reads a verdict without the call.

    >>> import torch
    >>> moves_data(torch.ops.aten.sqrt.default, (torch.ones(2),), {})
    False
    >>> moves_data_answers(torch.ops.aten.sqrt.default)[(torch.float32,)]
    False
    """
    entry = _MOVES_DATA.get(id(func))
    if entry is not None and entry[0] is func:
        return entry[1]
    return _MOVES_DATA.store(func, {})


def moves_data(func: Any, args: tuple[Any, ...], kwargs: dict) -> bool:
    """Does ``func`` only move its inputs' data into new storage (no arithmetic on it)?

    Decided once per op and :func:`call_key` (input dtypes, the scalars a decomposition may branch
    on), from its definition: its decomposition is run on meta tensors shaped like this call's
    (no data, no device) and followed by :class:`_DataFlow`.  Yes when the data reached every
    result through primitive moves and views only.  An op without a decomposition, or one whose
    decomposition fails on meta tensors, counts as compute.  The answer must not depend on which
    call came first: ``x ** 1`` is a copy and ``x ** 2`` arithmetic, whichever ran before.
    """
    entry = _MOVES_DATA.get(id(func))  # as _MOVES_DATA.lookup, inlined: it runs per op call
    by_key = entry[1] if entry is not None and entry[0] is func else None
    if by_key is None:
        by_key = _MOVES_DATA.store(func, {})
    key = call_key(args, kwargs)
    answer = by_key.get(key)
    if answer is None:
        answer, decomposed = _follow_data(func, args, kwargs)
        if len(by_key) >= MAX_KEYS:
            by_key.clear()  # in place: the tracker reads this very dict
        by_key[key] = answer
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

    with disable_current_modes(), torch.no_grad():
        try:
            meta_args, meta_kwargs = tree_map(on_meta, (args, kwargs))
            flow = _DataFlow({_storage_id(t) for t in arrays_in((meta_args, meta_kwargs), [])})
            with flow:
                result = func(*meta_args, **meta_kwargs)
        except Exception:  # sparse inputs, data-dependent shapes ...: not decidable on meta
            return False, True
    results = arrays_in(result, [])
    moved = (
        flow.moved
        and not flow.computed
        and bool(results)
        and all(_storage_id(t) in flow.data for t in results)
    )
    return moved, flow.decomposed
