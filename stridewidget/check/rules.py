"""Which hazards one ATen op call has: the sanitizer's rules, on live tensors, metadata only.

Per op, decided once from its schema and tags (:class:`OpRule`): which arguments it writes
(schema alias info ``is_write``, as the copy tracker reads it: ``self`` of ``add_``, ``out=``),
whether it is elementwise (each output element reads only the same index of each input), whether
its result cannot depend on the order it writes in, whether it is a custom op.  Per call, only
tensors sharing a storage are compared, and :mod:`.geometry` answers each question cheaply first.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import torch

from .._compat import op_arguments, overload_name, storage_id
from .._copies import _MISSING, _arrays_in, _OpCache
from .geometry import (
    Witness,
    internal_witness,
    out_of_bounds_witness,
    overlap_witness,
    same_view,
)

__all__ = ["METADATA_OPS", "ORDER_FREE_OPS", "Finding", "OpRule", "hazards_of", "rule_of"]

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


class OpRule(NamedTuple):
    name: str  # "aten.mul_", "mylib.twice"
    # (position, name, written) of each argument that may hold tensors (Tensor, Tensor?, Tensor[])
    tensor_arguments: tuple[tuple[int, str, bool], ...]
    elementwise: bool
    # an op torch also runs in place (``cumsum`` has ``cumsum_``): ``out=`` may be its ``self``
    in_place_too: bool
    order_free: bool
    metadata: bool
    custom: bool


_RULES = _OpCache()


def rule_of(func: Any) -> OpRule:
    """The rule of an ATen or custom op, decided once per op."""
    rule = _RULES.lookup(func)
    return _RULES.store(func, _new_rule(func)) if rule is _MISSING else rule


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
        tensor_arguments=tensor_arguments,
        elementwise=_elementwise(func, packet),
        in_place_too=packet.endswith("_")
        or hasattr(getattr(torch.ops, func.namespace), packet + "_"),
        order_free=packet in ORDER_FREE_OPS or bernoulli_scalar,
        metadata=packet in METADATA_OPS,
        custom=func.namespace not in _TORCH_NAMESPACES,
    )


class Finding(NamedTuple):
    """One hazard of a call, before it is dressed as a :class:`~stridewidget.LayoutHazard`."""

    kind: str
    witness: Witness | None
    tensors: tuple[torch.Tensor, ...]  # the written tensor first
    what: str  # the words the message needs ("input 1", "its own elements" ...)


def _split(rule: OpRule, args: tuple, kwargs: dict) -> tuple[list, list]:
    """The call's plain tensors as (written, read), each ``(tensor, argument name)``."""
    written: list[tuple[torch.Tensor, str]] = []
    read: list[tuple[torch.Tensor, str]] = []
    count = len(args)
    for position, name, is_written in rule.tensor_arguments:
        value = args[position] if position < count else kwargs.get(name)
        if value is None:
            continue
        into = written if is_written else read
        if type(value) in _PLAIN_TYPES:
            if value.layout is torch.strided:
                into.append((value, name))
        else:  # a list of tensors (cat, _foreach_*, index_put_'s indices)
            into.extend((t, name) for t in _arrays_in(value, []) if _strided(t))
    return written, read


def _strided(t: Any) -> bool:
    """A plain tensor with strides over a storage (not sparse, not nested, not a subclass)."""
    return type(t) in _PLAIN_TYPES and t.layout is torch.strided


def _inside(t: torch.Tensor) -> bool:
    """Does every element of ``t`` lie inside its storage?  Contiguous tensors (most) are
    settled from their element count alone."""
    try:
        nbytes = t.untyped_storage().nbytes()
    except (RuntimeError, NotImplementedError):  # no storage to reach past (mkldnn, opaque)
        return True
    if t.is_contiguous():
        return (t.storage_offset() + t.numel()) * t.element_size() <= nbytes or t.numel() == 0
    return out_of_bounds_witness(t, nbytes) is None


def hazards_of(rule: OpRule, args: tuple, kwargs: dict) -> list[Finding]:
    """Every hazard of one call: out-of-bounds first (running the op would touch memory its
    tensors do not own), then the custom op's layouts or the write's overlaps."""
    written, read = _split(rule, args, kwargs)
    found = [
        Finding(
            "out-of-bounds",
            out_of_bounds_witness(t, t.untyped_storage().nbytes()),
            (t,),
            f"argument '{name}'",
        )
        for t, name in written + read
        if not _inside(t)
    ]
    if found:
        return found
    if rule.custom:
        return _custom_op_hazards(rule, written, read)
    if not written or rule.order_free or _one_value_copy(rule, read):
        return found
    return _write_hazards(rule, written, read)


def _one_value_copy(rule: OpRule, read: list) -> bool:
    """A ``copy_`` from a one-element source writes one value everywhere: order-free."""
    return rule.name == "aten.copy_" and len(read) == 1 and read[0][0].numel() == 1


def _write_hazards(rule: OpRule, written: list, read: list) -> list[Finding]:
    found = []
    for t, name in written:
        witness = internal_witness(t)
        if witness is not None:
            found.append(Finding("internal-overlap", witness, (t,), f"argument '{name}'"))
    # only tensors of one storage can overlap: group them (a _foreach_ op has hundreds)
    groups: dict[int, list[tuple[torch.Tensor, str, bool]]] = {}
    for t, name in written:
        groups.setdefault(storage_id(t.untyped_storage()), []).append((t, name, True))
    for t, name in read:
        group = groups.get(storage_id(t.untyped_storage()))
        if group is not None:
            group.append((t, name, False))
    for group in groups.values():
        for i, (w, w_name, is_written) in enumerate(group):
            if not is_written:
                break  # the written ones come first; each pair is met once
            for t, name, _ in group[i + 1 :]:
                if not _may_share(rule, w, t, name):
                    continue
                witness = overlap_witness(w, t)
                if witness is not None:
                    what = f"argument '{w_name}' and argument '{name}'"
                    found.append(Finding("partial-overlap", witness, (w, t), what))
    return found


def _may_share(rule: OpRule, written: torch.Tensor, other: torch.Tensor, name: str) -> bool:
    """May ``written`` share elements with ``other`` here?  Not the same elements through the
    same index: an elementwise op reads each before it writes it, and so does an op torch also
    runs in place when ``other`` is its ``self``."""
    same_elements_allowed = rule.elementwise or (rule.in_place_too and name == "self")
    return not (same_elements_allowed and same_view(written, other))


def _custom_op_hazards(rule: OpRule, written: list, read: list) -> list[Finding]:
    """A custom op's kernel may read its inputs' memory as contiguous: each non-contiguous
    argument (with a witness when it overlaps itself), and each write overlapping an input."""
    found = []
    for t, name in (*written, *read):
        if not t.is_contiguous():
            found.append(
                Finding("custom-op-layout", internal_witness(t), (t,), f"argument '{name}'")
            )
    for finding in _write_hazards(rule, written, read):
        if finding.kind == "partial-overlap":
            found.append(finding._replace(kind="custom-op-layout"))
    return found
