"""Which hazards one ATen op call has: the sanitizer's rules, on live tensors, metadata only.

Per op, decided once from its schema and tags (:class:`OpRule`): which arguments it writes
(schema alias info ``is_write``, as the copy tracker reads it: ``self`` of ``add_``, ``out=``),
whether it is elementwise (each output element reads only the same index of each input), whether
its result cannot depend on the order it writes in, whether it is a custom op.  Per call, only
tensors sharing a storage are compared, and :mod:`.geometry` answers each question cheaply first.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

import torch

from .._compat import op_arguments, overload_name, storage_id
from ..copies.ops import MISSING as _MISSING
from ..copies.ops import OpCache as _OpCache
from ..copies.snapshot import arrays_in as _arrays_in
from .geometry import (
    Witness,
    byte_span,
    internal_witness,
    other_index_witness,
    out_of_bounds_witness,
    overlap_witness,
    same_view,
    unwrapped,
)
from .indexed import INDEXED_OPS, reads_unwritten
from .resize import after_meta_run, resized_overlaps

__all__ = [
    "METADATA_OPS",
    "ORDER_FREE_OPS",
    "RULES",
    "Finding",
    "OpRule",
    "hazards_of",
    "rule_of",
]

#: Ops whose result cannot depend on the order their elements are written in: every element gets
#: the same value (a fill, a one-element ``copy_`` source) or an independent random draw of one
#: distribution.  Two indices writing one storage element leave the same kind of result.
ORDER_FREE_OPS = frozenset(
    {
        "fill_",
        "zero_",
        "uniform_",
        "normal_",
        "random_",
        "exponential_",
        "geometric_",
        "log_normal_",
        "cauchy_",
    }
)
#: Ops that write a tensor's metadata (its sizes, strides, storage), not its data.
METADATA_OPS = frozenset(
    {
        "resize_",
        "resize_as_",
        "_resize_output_",
        "set_",
        "as_strided_",
        "t_",
        "transpose_",
        "swapdims_",
        "swapaxes_",
        "squeeze_",
        "unsqueeze_",
        "detach_",
        "requires_grad_",
        "_coalesced_",
    }
)
#: Namespaces of torch's own operators; any other namespace is a custom op (``torch.library``).
_TORCH_NAMESPACES = frozenset(
    {"aten", "prim", "prims", "_c10d_functional", "c10d", "profiler", "debugprims", "rngprims"}
)
_PLAIN_TYPES = frozenset({torch.Tensor, torch.nn.Parameter})
#: Elementwise ops no overload of which torch tags ``pointwise``.
_ELEMENTWISE = frozenset(
    {
        "copy_",
        "hardtanh_backward",
        "leaky_relu_backward",
        "elu_backward",
        "hardswish_backward",
        "masked_fill_",
    }
)


#: Ops that read only their inputs' metadata (sizes, dtype, device), never an element.
_METADATA_READS = frozenset(
    {
        "empty_like", "zeros_like", "ones_like", "full_like", "rand_like", "randn_like",
        "randint_like", "new_empty", "new_empty_strided", "new_zeros", "new_ones", "new_full",
        "detach", "alias", "lift_fresh", "sym_size", "sym_stride", "sym_numel",
        "sym_storage_offset", "is_same_size", "_has_same_storage_numel",
    }
)  # fmt: skip
#: Ops that write one value everywhere when every tensor they read, but their indices, holds one.
_ONE_VALUE_OPS = frozenset({"copy_", "index_fill_", "masked_fill_", "index_put_", "scatter_"})
#: Arguments that say where to write, not what.
_INDEX_ARGUMENTS = frozenset({"index", "indices", "mask"})


class OpRule(NamedTuple):
    name: str  # "aten.mul_", "mylib.twice"
    packet: str  # "mul_"
    # (position, name, written) of each argument that may hold tensors (Tensor, Tensor?, Tensor[])
    tensor_arguments: tuple[tuple[int, str, bool], ...]
    elementwise: bool
    # an op torch also runs in place (``cumsum`` has ``cumsum_``): ``out=`` may be its ``self``
    in_place_too: bool
    order_free: bool
    metadata: bool
    custom: bool
    # reads or writes elements (not a view, not ``empty_like``): checked for out-of-bounds
    reads_elements: bool
    has_out: bool  # writes an argument other than self (out=): torch may resize it
    writes: bool  # writes any tensor argument


#: op -> its rule (``sanitize``'s handler reads it inline)
RULES = _OpCache()


def rule_of(func: Any) -> OpRule:
    """The rule of an ATen or custom op, decided once per op."""
    rule = RULES.lookup(func)
    return RULES.store(func, _new_rule(func)) if rule is _MISSING else rule


def _elementwise(func: Any, packet: str) -> bool:
    """Does each output element read only the same index of each input?  Torch tags such ops
    ``pointwise``, though not every overload (``relu.out``, ``where.self_out``, ``add.Scalar_out``
    lack it): one tagged overload marks the whole op."""
    if packet in _ELEMENTWISE or packet.startswith("_foreach_"):
        return True
    overloads = func.overloadpacket
    return any(
        torch.Tag.pointwise in getattr(overloads, name).tags for name in overloads.overloads()
    )


def _new_rule(func: Any) -> OpRule:
    packet = func.overloadpacket.__name__
    tensor_arguments = tuple(
        (position, argument.name, argument.alias_info is not None and argument.alias_info.is_write)
        for position, argument in enumerate(op_arguments(func))
        if "Tensor" in str(argument.type)
    )
    bernoulli_scalar = packet == "bernoulli_" and overload_name(func) == "float"
    return OpRule(
        name=f"{func.namespace}.{packet}",
        packet=packet,
        tensor_arguments=tensor_arguments,
        elementwise=_elementwise(func, packet),
        in_place_too=packet.endswith("_")
        or hasattr(getattr(torch.ops, func.namespace), packet + "_"),
        order_free=packet in ORDER_FREE_OPS or bernoulli_scalar,
        metadata=packet in METADATA_OPS,
        custom=func.namespace not in _TORCH_NAMESPACES,
        writes=any(written for _, _, written in tensor_arguments),
        has_out=any(written and name != "self" for _, name, written in tensor_arguments),
        reads_elements=not (getattr(func, "is_view", False) or packet in _METADATA_READS),
    )


class Finding(NamedTuple):
    """One hazard of a call, before it is dressed as a :class:`~stridewidget.LayoutHazard`."""

    kind: str
    witness: Witness | None
    tensors: tuple[torch.Tensor, ...]  # the written tensor first
    what: str  # the words the message needs ("input 1", "its own elements" ...)


class _Arg(NamedTuple):
    """One tensor of a call: the argument's name, its position in a list argument (``None``
    for a single tensor: ``_foreach_add_([a, b], [b, a])`` pairs only entries of one position)."""

    tensor: torch.Tensor
    name: str
    item: int | None
    given: Any = None  # the subclass tensor ``tensor`` is the plain geometry of, if any


def _split(rule: OpRule, args: tuple, kwargs: dict) -> tuple[list[_Arg], list[_Arg]]:
    """The call's plain tensors as (written, read)."""
    written: list[_Arg] = []
    read: list[_Arg] = []
    count = len(args)
    for position, name, is_written in rule.tensor_arguments:
        value = args[position] if position < count else kwargs.get(name)
        if value is None:
            continue
        into = written if is_written else read
        if isinstance(value, torch.Tensor):
            plain = unwrapped(value)
            if _strided(plain):
                into.append(_Arg(plain, name, None, None if plain is value else value))
        else:  # a list of tensors (cat, _foreach_*, index_put_'s indices)
            for i, t in enumerate(_arrays_in(value, [])):
                plain = unwrapped(t)
                if _strided(plain):
                    into.append(_Arg(plain, name, i))
    return written, read


def _strided(t: Any) -> bool:
    """A plain tensor with strides over a storage (not sparse, not nested; a subclass only as
    :func:`.geometry.unwrapped` makes it plain: a wrapper subclass is not checked)."""
    return type(t) in _PLAIN_TYPES and t.layout is torch.strided and not t.is_nested


def _inside(t: torch.Tensor) -> bool:
    """Does every element of ``t`` lie inside its storage?  Contiguous tensors (most) are
    settled from their element count alone."""
    numel = t.numel()
    if numel == 0:
        return True
    try:
        nbytes = t.untyped_storage().nbytes()
    except (RuntimeError, NotImplementedError):  # no storage to reach past (mkldnn, opaque)
        return True
    if t.is_contiguous():
        return (t.storage_offset() + numel) * t.element_size() <= nbytes
    return out_of_bounds_witness(t, nbytes) is None


def _all_inside(rule: OpRule, args: tuple, kwargs: dict) -> bool:
    """Does every plain tensor argument of a call lie inside its storage?  (No list unpacked
    into records: the read-only op's fast path.)"""
    count = len(args)
    for position, name, _ in rule.tensor_arguments:
        value = args[position] if position < count else kwargs.get(name)
        if type(value) in _PLAIN_TYPES:
            if _strided(value) and not _inside(value):
                return False
        elif isinstance(value, torch.Tensor):
            plain = unwrapped(value)
            if _strided(plain) and not _inside(plain):
                return False
        elif value is not None and not all(
            _inside(p) for p in map(unwrapped, _arrays_in(value, [])) if _strided(p)
        ):
            return False
    return True


def _apart(rule: OpRule, args: tuple, kwargs: dict) -> bool:
    """No hazard is possible, by the cheapest test: every tensor argument is one plain tensor,
    contiguous (so none overlaps itself) and inside its storage, and no written one's byte range
    meets another's (so no write can alias, whatever the devices).  ``False`` sends the call to the exact
    rules, which decide; so does an argument that is a list or a subclass."""
    spans: list[tuple[int, int, bool]] = []
    count = len(args)
    try:
        for position, name, written in rule.tensor_arguments:
            value = args[position] if position < count else kwargs.get(name)
            if type(value) not in _PLAIN_TYPES:
                if type(value) in (list, tuple):  # a _foreach_ / _fused_ op: its own sweep
                    return _apart_lists(rule, args, kwargs)
                if isinstance(value, (torch.Tensor, list, tuple)):
                    return False
                continue  # None, or a number where the schema takes a tensor (mul_(0.9))
            span = _contiguous_span(value)
            if span is False:
                return False
            if span is True:
                continue
            start, end = span
            for other_start, other_end, other_written in spans:
                if (written or other_written) and start < other_end and other_start < end:
                    return False
            spans.append((start, end, written))
    except (RuntimeError, NotImplementedError):  # no memory to place: the exact rules decide
        return False
    return True


def _contiguous_span(t: torch.Tensor) -> tuple[int, int] | bool:
    """The byte range of a plain tensor that is contiguous and inside its storage; ``True``: it
    has no element (nothing to place); ``False``: not such a tensor (the exact rules decide).
    May raise ``RuntimeError`` / ``NotImplementedError`` (no memory to place)."""
    if t.layout is not torch.strided:
        return False
    numel = t.numel()
    if not numel:
        return True
    if t.is_nested or not t.is_contiguous():
        return False
    itemsize = t.element_size()
    nbytes = numel * itemsize
    if t.storage_offset() * itemsize + nbytes > t.untyped_storage().nbytes():
        return False
    start = t.data_ptr()
    return (start, start + nbytes)


def _apart_lists(rule: OpRule, args: tuple, kwargs: dict) -> bool:
    """:func:`_apart` for a call with list arguments (a ``_foreach_`` / ``_fused_`` op: a tensor
    per parameter in each list): the same test of each listed tensor, and the byte ranges
    compared by one sweep over them sorted by start, not pair by pair.  A list item that is not
    a plain tensor or ``None`` sends the call to the exact rules."""
    spans: list[tuple[int, int, bool]] = []
    count = len(args)
    try:
        for position, name, written in rule.tensor_arguments:
            value = args[position] if position < count else kwargs.get(name)
            kind = type(value)
            if kind is list or kind is tuple:
                items = value
            elif kind in _PLAIN_TYPES:
                items = (value,)
            elif isinstance(value, torch.Tensor):
                return False
            else:
                continue  # None, or a number where the schema takes a tensor
            for t in items:
                if type(t) not in _PLAIN_TYPES:
                    if t is None:  # a Tensor?[] item
                        continue
                    return False
                span = _contiguous_span(t)
                if span is False:
                    return False
                if span is not True:
                    spans.append((*span, written))
    except (RuntimeError, NotImplementedError):  # no memory to place: the exact rules decide
        return False
    spans.sort()
    ends = written_ends = -1  # the furthest end of the ranges so far (of the written ones)
    for start, end, written in spans:
        if start < written_ends or (written and start < ends):
            return False  # meets an earlier range, one of the two written
        if end > ends:
            ends = end
        if written and end > written_ends:
            written_ends = end
    return True


def _outs_kept(rule: OpRule, args: tuple, kwargs: dict, func: Any) -> bool:
    """Of a call :func:`_apart` settled: does the op leave every written argument but ``self``
    its shape (its meta run says so: :mod:`.resize`; an op without one resizes nothing there
    either)?  Then nothing is resized onto an input, the one question left, and a fused
    optimizer's lists need no records.  ``False`` sends the call to the exact rules."""
    if func is None or rule.order_free or rule.packet in _ONE_VALUE_OPS:
        return False
    shapes = after_meta_run(func, args, kwargs)
    if shapes is None:  # no meta run: the exact rules find no resize either
        return True
    count = len(args)
    for position, name, written in rule.tensor_arguments:
        if not written or name == "self":
            continue
        value = args[position] if position < count else kwargs.get(name)
        for t in value if type(value) in (list, tuple) else (value,):
            if t is not None and shapes.get(id(t)) != t.shape:
                return False
    return True


def hazards_of(rule: OpRule, args: tuple, kwargs: dict, func: Any = None) -> list[Finding]:
    """Every hazard of one call: out-of-bounds first (running the op would touch memory its
    tensors do not own), then the custom op's layouts or the write's overlaps.  Only an op that
    reads or writes elements is checked for out-of-bounds: a view, ``detach`` or ``empty_like``
    of a tensor over freed storage (FSDP's) reads only its metadata.  Given the op (``func``), an
    ``out=`` it will resize is compared where it will lie (:mod:`.resize`)."""
    if not (rule.writes or rule.custom) and (
        not rule.reads_elements or _all_inside(rule, args, kwargs)
    ):
        return []  # most ops: read only, every tensor inside its storage (the cheapest test)
    # most writes: plain contiguous tensors inside storages that share no byte; an out= still
    # asks where the op will resize it (below), and only as the exact rules would ask
    apart = rule.writes and not rule.custom and _apart(rule, args, kwargs)
    if apart and (not rule.has_out or _outs_kept(rule, args, kwargs, func)):
        return []
    written, read = _split(rule, args, kwargs)
    if not apart:
        found = [
            Finding(
                "out-of-bounds",
                out_of_bounds_witness(a.tensor, a.tensor.untyped_storage().nbytes()),
                (a.tensor,),
                f"argument '{a.name}'",
            )
            for a in (written + read if rule.reads_elements else written)
            if not _inside(a.tensor)
        ]
        if found:
            return found
        if rule.custom:
            return _custom_op_hazards(rule, written, read)
    if not written or rule.order_free or _copy_onto_itself(rule, written, read):
        return []
    if _one_value_write(rule, args, kwargs, written, read):  # no order: only the indices
        if apart:  # no two byte ranges meet: no overlap to find
            return []
        found = _write_hazards(
            rule, written, [a for a in read if a.name in _INDEX_ARGUMENTS], False
        )
        return _written_reads(rule, found, args, kwargs)
    found = [] if apart else _written_reads(rule, _write_hazards(rule, written, read), args, kwargs)
    if func is not None and rule.has_out:
        found += [
            Finding("partial-overlap", witness, (out, other), what)
            for witness, out, other, what in resized_overlaps(func, args, kwargs, written, read)
        ]
    return found


def _written_reads(rule: OpRule, found: list[Finding], args: tuple, kwargs: dict) -> list[Finding]:
    """Less the overlaps of an index-driven write (``index_put_``, ``scatter_`` ...) whose other
    tensor reads no element its indices write (:mod:`.indexed`, from the index values)."""
    if rule.packet not in INDEXED_OPS or rule.has_out:
        return found
    return [
        f
        for f in found
        if f.kind != "partial-overlap"
        or not reads_unwritten(rule.packet, f.tensors[0], f.tensors[1], args, kwargs)
    ]


def _copy_onto_itself(rule: OpRule, written: list[_Arg], read: list[_Arg]) -> bool:
    """``v.copy_(v)``: torch skips a copy whose source is its destination."""
    return (
        rule.packet == "copy_"
        and len(read) == 1
        and written[0].tensor.dtype == read[0].tensor.dtype
        and same_view(written[0].tensor, read[0].tensor)
        and written[0].tensor.shape == read[0].tensor.shape
    )


def _one_value_write(
    rule: OpRule, args: tuple, kwargs: dict, written: list[_Arg], read: list[_Arg]
) -> bool:
    """Does every written element get one value, the very bits it is read as?  A ``copy_`` from
    a one-element (or stride-0 everywhere) source; an ``index_fill_``, ``masked_fill_``, or (not
    reducing) ``scatter_`` or (not accumulating) ``index_put_`` of one value.  The order of such
    writes cannot matter: where the value's own element is written, it is written with itself.
    Not so for a reducing ``scatter_`` (``reduce="add"`` adds the value to it), nor for a value
    read as another dtype or through a conjugate or negative bit (``copy_`` converts it)."""
    if rule.packet not in _ONE_VALUE_OPS:
        return False
    if rule.packet == "index_put_" and (args[3:4] or (kwargs.get("accumulate", False),))[0]:
        return False
    if rule.packet == "scatter_" and kwargs.get("reduce") is not None:
        return False
    bits = {(a.tensor.dtype, a.tensor.is_conj(), a.tensor.is_neg()) for a in written}
    return all(
        _one_value(a.tensor) and (a.tensor.dtype, a.tensor.is_conj(), a.tensor.is_neg()) in bits
        for a in read
        if a.name not in _INDEX_ARGUMENTS
    )


def _one_value(t: torch.Tensor) -> bool:
    return t.numel() <= 1 or all(s == 0 or n == 1 for n, s in zip(t.shape, t.stride()))


def _extent(t: torch.Tensor) -> tuple[Any, int, int]:
    """Where ``t``'s bytes lie in memory: (memory, first byte, one past the last), ``memory`` a
    sortable ``(device type, index)`` (``torch.device`` has no order: a call with arguments on
    two devices must still sort).  Two storage objects may hold one memory (two
    ``torch.from_numpy`` of views of one array): addresses, not storages, decide.  Meta tensors
    have no addresses: their storage stands for one, as the index."""
    device = t.device
    if device.type == "meta":
        start, end = byte_span(t)
        return ("meta", storage_id(t.untyped_storage())), start, end
    index = device.index
    device = (device.type, -1 if index is None else index)
    first = t.data_ptr()
    if t.is_contiguous():  # most tensors: no per-dim sum
        return device, first, first + t.numel() * t.element_size()
    start, end = byte_span(t)
    return device, first, first + end - start


def _meeting(entries: list[tuple[_Arg, bool]]) -> Iterator[tuple[int, int]]:
    """Pairs ``(i, j)``, ``i < j``, of entries whose byte ranges meet, at least one written: a
    sweep over the ranges sorted by start (a _foreach_ op has hundreds of tensors)."""
    spans = sorted((_extent(a.tensor), i) for i, (a, _) in enumerate(entries) if a.tensor.numel())
    open_: list[tuple[Any, int, int]] = []  # (device, end, index)
    for (device, start, end), i in spans:
        open_ = [o for o in open_ if o[0] != device or o[1] > start]
        for other_device, _, j in open_:
            if other_device == device and (entries[i][1] or entries[j][1]):
                yield min(i, j), max(i, j)
        open_.append((device, end, i))


def _write_hazards(
    rule: OpRule, written: list[_Arg], read: list[_Arg], internal: bool = True
) -> list[Finding]:
    found = []
    for a in written if internal else ():
        witness = internal_witness(a.tensor)
        if witness is not None:
            found.append(Finding("internal-overlap", witness, (a.tensor,), f"argument '{a.name}'"))
    entries = [(a, True) for a in written] + [(a, False) for a in read]
    for i, j in _meeting(entries):
        (w, _), (other, other_written) = entries[i], entries[j]
        if not other_written and _sorted_in_place(rule, w, other):
            continue
        if not other_written and _same_elements_allowed(rule, w, other, written):
            if same_view(w.tensor, other.tensor):
                continue
            witness = other_index_witness(w.tensor, other.tensor, not _copies_bits(rule, w, other))
        else:
            witness = overlap_witness(w.tensor, other.tensor)
        if witness is not None:
            what = f"argument '{_named(w)}' and argument '{_named(other)}'"
            found.append(Finding("partial-overlap", witness, (w.tensor, other.tensor), what))
    return found


def _copies_bits(rule: OpRule, written: _Arg, other: _Arg) -> bool:
    """Does the op write each element with the very bits it reads (a ``copy_`` without a
    conversion)?  Then an element written at the index that reads it is left as it was, and
    the other indices a broadcast reads it at see it unchanged: ``m.copy_(m[:, :1])`` is exact."""
    a, b = written.tensor, other.tensor
    return (
        rule.packet in ("copy_", "_foreach_copy_")
        and other.name == "src"
        and (a.dtype, a.is_conj(), a.is_neg()) == (b.dtype, b.is_conj(), b.is_neg())
    )


def _named(a: _Arg) -> str:
    return a.name if a.item is None else f"{a.name}[{a.item}]"


def _sorted_in_place(rule: OpRule, written: _Arg, other: _Arg) -> bool:
    """``torch.sort(x, out=(x, i))``: ``sort.values`` copies ``self`` into ``values`` (a copy
    onto itself is skipped) and then sorts ``values`` in place, reading nothing else of
    ``self``; with ``values`` the very view of ``self`` (same elements, same shape) the result is
    exact.  Any other overlap of the two stays a hazard."""
    return (
        rule.packet == "sort"
        and written.name == "values"
        and other.name == "self"
        and written.tensor.dtype == other.tensor.dtype
        and written.tensor.shape == other.tensor.shape
        and same_view(written.tensor, other.tensor)
    )


def _same_elements_allowed(
    rule: OpRule, written: _Arg, other: _Arg, all_written: list[_Arg]
) -> bool:
    """May a written tensor share elements with a read one at the same index (and the same list
    position)?  An elementwise op reads each element before it writes it, and so does an op
    torch also runs in place when ``other`` is its ``self``.  (Two written tensors never may:
    ``frexp(out=(m, m.view(torch.int32)))``.)  A single tensor read by a list op
    (``_foreach_div_([s, t], s)``) is read for every entry: written by one entry, it is read
    by the others, before or after."""
    if not (rule.elementwise or (rule.in_place_too and other.name == "self")):
        return False
    if written.item is not None and other.item is None:
        return all(a.item in (None, written.item) for a in all_written)
    return written.item is None or other.item is None or written.item == other.item


def _custom_op_hazards(rule: OpRule, written: list, read: list) -> list[Finding]:
    """A custom op's kernel may read its inputs' memory as contiguous: each non-contiguous
    argument (with a witness when it overlaps itself), and each write overlapping an input."""
    found = []
    for a in (*written, *read):
        if not a.tensor.is_contiguous():
            found.append(
                Finding(
                    "custom-op-layout",
                    internal_witness(a.tensor),
                    (a.tensor,),
                    f"argument '{a.name}'",
                )
            )
    for finding in _write_hazards(rule, written, read):
        if finding.kind == "partial-overlap":
            found.append(finding._replace(kind="custom-op-layout"))
    return found
