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

from .._copies import _MISSING, _argument, _arrays_in, _OpCache
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


class OpRule(NamedTuple):
    name: str  # "aten.mul_", "mylib.twice"
    arguments: tuple[tuple[int, str], ...]  # (position, name) of every schema argument
    written: frozenset[int]  # positions of the arguments it writes
    elementwise: bool
    order_free: bool
    metadata: bool
    custom: bool


_RULES = _OpCache()


def rule_of(func: Any) -> OpRule:
    """The rule of an ATen or custom op, decided once per op."""
    rule = _RULES.lookup(func)
    return _RULES.store(func, _new_rule(func)) if rule is _MISSING else rule


def _new_rule(func: Any) -> OpRule:
    packet = func.overloadpacket.__name__
    schema = func._schema.arguments
    written = frozenset(
        position
        for position, argument in enumerate(schema)
        if argument.alias_info is not None and argument.alias_info.is_write
    )
    bernoulli_scalar = packet == "bernoulli_" and func._overloadname == "float"
    return OpRule(
        name=f"{func.namespace}.{packet}",
        arguments=tuple((position, argument.name) for position, argument in enumerate(schema)),
        written=written,
        elementwise=torch.Tag.pointwise in func.tags
        or packet in ("copy_", "_foreach_copy_")
        or packet.startswith("_foreach_"),
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


def _plain(value: Any) -> list[torch.Tensor]:
    return [t for t in _arrays_in(value, []) if type(t) in _PLAIN_TYPES]


def _split(rule: OpRule, args: tuple, kwargs: dict) -> tuple[list, list]:
    """The call's plain tensors as (written, read), each ``(tensor, argument name)``."""
    written, read = [], []
    for position, name in rule.arguments:
        tensors = _plain(_argument(args, kwargs, position, name))
        (written if position in rule.written else read).extend((t, name) for t in tensors)
    return written, read


def hazards_of(rule: OpRule, args: tuple, kwargs: dict) -> list[Finding]:
    """Every hazard of one call: out-of-bounds first (running the op would touch memory its
    tensors do not own), then the custom op's layouts or the write's overlaps."""
    written, read = _split(rule, args, kwargs)
    storages: dict[int, Any] = {}
    found = []
    for t, name in (*written, *read):
        storage = storages.get(id(t))
        if storage is None:
            storage = storages[id(t)] = t.untyped_storage()
        witness = out_of_bounds_witness(t, storage.nbytes())
        if witness is not None:
            found.append(Finding("out-of-bounds", witness, (t,), f"argument '{name}'"))
    if found:
        return found
    if rule.custom:
        return _custom_op_hazards(rule, written, read, storages)
    if not written or rule.order_free or _one_value_copy(rule, read):
        return found
    return _write_hazards(rule, written, read, storages)


def _one_value_copy(rule: OpRule, read: list) -> bool:
    """A ``copy_`` from a one-element source writes one value everywhere: order-free."""
    return rule.name == "aten.copy_" and len(read) == 1 and read[0][0].numel() == 1


def _write_hazards(rule: OpRule, written: list, read: list, storages: dict) -> list[Finding]:
    found = []
    for t, name in written:
        witness = internal_witness(t)
        if witness is not None:
            found.append(Finding("internal-overlap", witness, (t,), f"argument '{name}'"))
    for i, (w, w_name) in enumerate(written):
        key = storages[id(w)]._cdata
        # read arguments, then the written ones after this one (each pair once)
        for t, name in (*read, *written[i + 1 :]):
            if storages[id(t)]._cdata != key or (rule.elementwise and same_view(w, t)):
                continue
            witness = overlap_witness(w, t)
            if witness is not None:
                what = f"argument '{w_name}' and argument '{name}'"
                found.append(Finding("partial-overlap", witness, (w, t), what))
    return found


def _custom_op_hazards(rule: OpRule, written: list, read: list, storages: dict) -> list[Finding]:
    """A custom op's kernel may read its inputs' memory as contiguous: each non-contiguous
    argument (with a witness when it overlaps itself), and each write overlapping an input."""
    found = []
    for t, name in (*written, *read):
        if not t.is_contiguous():
            found.append(
                Finding("custom-op-layout", internal_witness(t), (t,), f"argument '{name}'")
            )
    for finding in _write_hazards(rule, written, read, storages):
        if finding.kind == "partial-overlap":
            found.append(finding._replace(kind="custom-op-layout"))
    return found
