"""One node of a captured graph: its layout (the graph's own FakeTensor), what kind of memory
operation it is, what a copy moves, and the user's line it came from.

The kind is read from the op's schema (alias annotations: ``Tensor(a)`` returns are views,
``Tensor(a!)`` arguments are written in place) and, for ops whose schema says "may alias"
(``reshape``, ``contiguous``, ``to``), from the graph's own FakeTensors: an output in another
storage than every input was a copy.  Nothing here reads a symbol's value (no guards).
"""

from __future__ import annotations

import operator
import re
import weakref
from dataclasses import dataclass
from typing import Any

import torch

from .._compat import op_arguments, op_overload_class, op_schema, symbol_example
from ..adapters.aten import moves_data, op_info
from ..adapters.inspect import inspect, same_storage
from ..layout.layout import Layout
from ..layout.strides import is_channels_last, is_contiguous, view_strides
from .source import where
from .writes import fx_value as _value
from .writes import index_write

__all__ = ["KINDS", "GraphNode", "classify", "where"]

KINDS = ("view", "copy", "in-place", "compute", "input", "output", "subgraph")

#: Ops whose whole job is to make a copy (``*_copy`` functional variants too; ``copy`` is the
#: functional form of ``copy_``).  Every other op that moves data without arithmetic (``cat``,
#: ``roll``, ``repeat``, ``index``, ``pad`` ...) is found by the eager tracker's own verdict
#: (:func:`~stridewidget.adapters.aten.op_info`, :func:`~stridewidget.adapters.aten.moves_data`).
#: (``copy_`` is not one: it writes into a tensor that exists, an in-place op that moves bytes.)
_COPY_OPS = frozenset({"clone", "_to_copy", "copy", "lift_fresh_copy"})
#: Ops that view when they can and copy when they must, as a reshape does.
_RESHAPING = frozenset({"reshape", "flatten", "unflatten", "reshape_as", "view_as", "ravel"})
#: Ops that copy only when the input's conjugate / negative bit is set (the FakeTensor's too).
_RESOLVES = {"resolve_conj": "is_conj", "resolve_neg": "is_neg"}
#: The ops whose ``Tensor(a)`` return only "may alias": every other aliasing return is a view.
_MAY_ALIAS = _RESHAPING | {"contiguous", "to", *_RESOLVES}
#: In-place ops that change only a tensor's metadata (``torch.Tag.inplace_view``) and never
#: allocate: views, writing no data (``resize_`` may allocate, so it stays in-place).
_RESIZES = frozenset({"resize_", "resize_as_", "set_"})
#: Ops that move nothing after a reshape's clone: the clone was the reshape.
_RESHAPE_VIEWS = frozenset({"_unsafe_view", "view", "reshape", "_reshape_alias"})
#: Op namespaces that are torch's own (anything else is a custom op).
_TORCH_NAMESPACES = frozenset({"aten", "prims", "higher_order", "_c10d_functional", "quantized"})
_OP_OVERLOAD = op_overload_class()
_LINE = re.compile(r"(?::|, line )(\d+)(?: \(torch\))?$")


@dataclass(frozen=True, eq=False)
class GraphNode:
    """A node of :func:`stridewidget.graph`: ``name`` and ``op`` are the FX node's own."""

    name: str
    op: str
    target: str
    layout: Layout | None
    kind: str
    bytes: Any
    where: str
    reason: str
    inputs: tuple[str, ...]
    stage: str
    node: Any  # the torch.fx.Node
    graph: int = 0  # which of the captured graphs (several after a torch.compile graph break)

    @property
    def line(self) -> int | None:
        """The line number in :attr:`where` (``file.py:12``, a notebook's ``In[3], line 12``,
        torch's ``torch/nn/functional.py:5 (torch)``); ``None`` when no line was recorded.

        >>> import torch, stridewidget as sw
        >>> g = sw.graph(lambda x: x.t().contiguous(), torch.zeros(2, 3), stage="export")
        >>> g.copies[0].line == int(g.copies[0].where.rsplit(":", 1)[-1])
        True
        """
        found = _LINE.search(self.where)
        return int(found[1]) if found else None

    @property
    def moves(self) -> bool:
        """True when the node writes data: a copy, or a ``copy_`` into a tensor that exists
        (``bytes`` is then what it writes).

        >>> import torch, stridewidget as sw
        >>> def fill(x, s):
        ...     y = torch.empty_like(x)
        ...     return y.copy_(s)
        >>> [(n.kind, n.bytes) for n in sw.graph(fill, torch.zeros(2, 3), torch.zeros(3),
        ...                                      stage="export").nodes if n.moves]
        [('in-place', 24)]
        """
        known_none = isinstance(self.bytes, int) and self.bytes == 0  # a SymInt is never 0 here
        return (
            self.kind == "copy"
            or self.target.endswith(".copy_")
            or (self.kind == "in-place" and not known_none)
        )

    def __repr__(self) -> str:
        moved = f" · {self.bytes} B" if self.moves else ""
        return f"<{self.kind} {self.name} = {self.target}{moved} · {self.layout} · {self.where}>"


def op_name(target: Any) -> str:
    """``clone`` for ``aten.clone.default``; the callable's name otherwise."""
    schema = op_schema(target) if isinstance(target, _OP_OVERLOAD) else None
    if schema is not None:
        return schema.name.split("::")[-1]
    return getattr(target, "__name__", str(target))


def _namespace(target: Any) -> str:
    return target.namespace if isinstance(target, _OP_OVERLOAD) else ""


def tensor_values(value: Any) -> list[Any]:
    """The tensors in a node's value (a tensor, or a tuple/list of them)."""
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [v for v in value if isinstance(v, torch.Tensor)]
    return []


def _input_values(node: Any) -> list[Any]:
    return [t for arg in node.all_input_nodes for t in tensor_values(arg.meta.get("val"))]


def _aliases_an_input(node: Any) -> bool | None:
    outputs = tensor_values(node.meta.get("val"))
    inputs = _input_values(node)
    if not outputs or not inputs:
        return None
    return any(same_storage(out, given) for out in outputs for given in inputs)


def classify(node: Any) -> str:
    """The node's kind: ``input`` / ``output`` / ``view`` / ``copy`` / ``in-place`` /
    ``compute``, or ``subgraph`` for a graph a higher-order op runs (a ``torch.cond`` branch)."""
    if node.op == "get_attr" and isinstance(_owned(node), torch.fx.GraphModule):
        return "subgraph"
    if node.op in ("placeholder", "get_attr"):
        return "input"
    if node.op == "output":
        return "output"
    target = node.target
    if target is operator.getitem:
        return _item_kind(node)
    if _is_functionalized(node):
        return _functionalized_kind(node)
    if not isinstance(target, _OP_OVERLOAD):
        return "compute"
    name = op_name(target)
    if name in _COPY_OPS or name.endswith("_copy"):
        return "copy"
    if torch.Tag.inplace_view in target.tags and name not in _RESIZES:
        return "view"  # detach_, t_, squeeze_ ...: new metadata, no data written
    if any(a.alias_info is not None and a.alias_info.is_write for a in op_arguments(target)):
        return "in-place"
    if _running_stats(node):
        return "in-place"
    returns = getattr(op_schema(target), "returns", ())
    if any(r.alias_info is not None for r in returns):
        # a plain alias return is a view; only "may alias" ops need the graph's own answer
        return _may_alias_kind(node, name) if name in _MAY_ALIAS else "view"
    if _moves_data(node, target):
        return "copy"
    # ops that return a view without saying so in their schema (`_unsafe_view`)
    return "view" if _aliases_an_input(node) else "compute"


def _concrete(value: Any) -> bool:
    """No symbol anywhere (a SymInt's value is never read here: that would guard)."""
    if isinstance(value, torch.Tensor):
        return _concrete([*value.shape, *value.stride()])
    if isinstance(value, (list, tuple)):
        return all(_concrete(v) for v in value)
    if isinstance(value, dict):
        return all(_concrete(v) for v in value.values())
    return not isinstance(value, (torch.SymInt, torch.SymFloat, torch.SymBool))


def _moves_data(node: Any, target: Any) -> bool:
    """Does the op move its inputs' data into a new tensor without arithmetic (``cat``,
    ``roll``, ``repeat``, ``index_select``, ``pad`` ...)?  The eager copy tracker's verdict: its
    list of primitive moves, else the op's reference decomposition followed on meta tensors
    (with symbols: on stand-ins sized by the symbols' example values, so nothing guards)."""
    if target.is_view or _namespace(target) != "aten":
        return False
    args, kwargs = _value(node.args), _value(node.kwargs)
    info = op_info(target)
    if info.is_copy:
        return info.moves(args, kwargs)
    if any(a is None for a in tensor_values(args) + tensor_values(list(kwargs.values()))):
        return False
    if not _concrete((args, kwargs)):
        args, kwargs = _stand_in(args), _stand_in(kwargs)
    return moves_data(target, tuple(args), dict(kwargs))


def _stand_in(value: Any) -> Any:
    """``value`` with each symbol replaced by its example value (read off the expression, never
    compared: no guard) and each tensor by a meta tensor of those sizes and strides."""
    if isinstance(value, torch.Tensor):
        if _concrete(value):
            return value
        sizes, strides = _stand_in(list(value.shape)), _stand_in(list(value.stride()))
        return torch.empty_strided(sizes, strides, dtype=value.dtype, device="meta")
    if isinstance(value, (list, tuple)):
        return type(value)(_stand_in(v) for v in value)
    if isinstance(value, dict):
        return {k: _stand_in(v) for k, v in value.items()}
    if isinstance(value, torch.SymInt):
        return symbol_example(value, 2)
    return value


#: Per FX graph: do its FakeTensors share storages as real tensors would?
_TRUSTED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _storages_trusted(graph: Any) -> bool:
    """False when no view of the graph shares its input's storage: the FakeTensors of a program
    from ``torch.export.load`` each have a storage of their own."""
    if graph not in _TRUSTED:
        answers = [
            _aliases_an_input(n)
            for n in graph.nodes
            if n.op == "call_function"
            and getattr(n.target, "is_view", False)
            and op_name(n.target) not in _MAY_ALIAS
        ]
        answers = [a for a in answers if a is not None]
        _TRUSTED[graph] = not answers or any(answers)
    return _TRUSTED[graph]


def _may_alias_kind(node: Any, name: str) -> str:
    """``reshape`` / ``contiguous`` / ``to``: a view where the output shares the input's storage;
    where the graph's storages cannot say (a loaded program), the layouts decide: a reshape views
    when the input's layout allows it (:func:`~stridewidget.layout.strides.view_strides`)."""
    aliases = _aliases_an_input(node)
    if name in _RESOLVES and _input_values(node):  # the bit the FakeTensor carries decides
        return "copy" if getattr(_input_values(node)[0], _RESOLVES[name])() else "view"
    if aliases or _storages_trusted(node.graph) or not _concrete(node.meta.get("val")):
        return "copy" if aliases is False else "view"
    outputs, inputs = tensor_values(node.meta.get("val")), _input_values(node)
    if not outputs or not inputs or not _concrete(inputs[0]):
        return "copy" if aliases is False else "view"
    given, made = inputs[0], outputs[0]
    shape, strides = tuple(given.shape), tuple(given.stride())
    if name in _RESHAPING:
        viewable = view_strides(shape, strides, tuple(made.shape)) is not None
    elif name == "contiguous":
        test = is_channels_last if _memory_format(node) == torch.channels_last else is_contiguous
        viewable = test(shape, strides)
    else:  # to: a view when nothing changes
        viewable = (given.dtype, given.device, shape, strides) == (
            made.dtype,
            made.device,
            tuple(made.shape),
            tuple(made.stride()),
        ) and not node.kwargs.get("copy")
    return "view" if viewable else "copy"


#: Ops that update BatchNorm's running statistics in place in training without saying so in
#: their schema (no ``(a!)``): (training argument, the statistics written).
_STATS_WRITTEN = ("running_mean", "running_var")


def _running_stats(node: Any) -> list[Any]:
    """The running statistics a ``batch_norm`` in training writes (its schema does not say)."""
    target = node.target
    if not isinstance(target, _OP_OVERLOAD) or _namespace(target) != "aten":
        return []
    names = [a.name for a in op_arguments(target)]
    if "training" not in names or not set(_STATS_WRITTEN) <= set(names):
        return []

    def given(name: str) -> Any:
        position = names.index(name)
        return node.args[position] if position < len(node.args) else node.kwargs.get(name)

    if given("training") is not True:
        return []
    return [arg for arg in map(given, _STATS_WRITTEN) if hasattr(arg, "meta")]


def _owned(node: Any) -> Any:
    """What a ``get_attr`` node reads from the module that owns its graph (``None`` if absent)."""
    value: Any = node.graph.owning_module
    for part in str(node.target).split("."):
        value = getattr(value, part, None)
    return value


def _item_kind(node: Any) -> str:
    """A ``getitem`` of a node's tuple or list: the item is the producer's output itself, so it
    is a view where that output aliases one of the producer's inputs (``split``, ``unbind``,
    ``chunk``: views of their input) and compute where it has its own storage (the outputs of
    ``native_layer_norm``, ``max_pool2d_with_indices``, ``convolution_backward``...)."""
    values = tensor_values(node.meta.get("val"))
    if not values:
        return "compute"
    producer = node.args[0] if node.args else None
    if getattr(producer, "op", None) != "call_function":
        return "view"  # an item of a list the graph was given: that tensor itself
    inputs = _input_values(producer)
    aliased = any(same_storage(value, given) for value in values for given in inputs)
    return "view" if aliased else "compute"


#: The higher-order ops that stand for a mutating custom op in a functionalized graph.
_FUNCTIONALIZED = frozenset({"auto_functionalized", "auto_functionalized_v2"})


def _is_functionalized(node: Any) -> bool:
    """``auto_functionalized`` / ``auto_functionalized_v2``: the functional form of an op that
    writes its arguments in place (a ``torch.library.custom_op`` with ``mutates_args``)."""
    target = getattr(node, "target", None)
    return getattr(target, "namespace", None) == "higher_order" and (
        getattr(target, "__name__", "") in _FUNCTIONALIZED
    )


def _writes(argument: Any) -> bool:
    return argument.alias_info is not None and argument.alias_info.is_write


def _cloned(node: Any) -> tuple[list[Any], list[Any]]:
    """(cloned, written in place): the nodes of the tensors an ``auto_functionalized(_v2)`` node hands its
    op, as the graph gives them (v2: the bases of the mutated arguments; v1: the arguments).  Run
    as it is, the node clones each one named in ``_only_clone_these_bases`` (v1:
    ``_only_clone_these_tensors``; absent: every one) and the op writes into the clones; it
    writes the others in place (torch's ``auto_functionalized_v2_dense``, checked on 2.13)."""
    if "_all_bases" in node.kwargs:  # v2
        bases = list(node.kwargs["_all_bases"])
        only = node.kwargs.get("_only_clone_these_bases")
        chosen = range(len(bases)) if only is None else set(only)
        given = [(i in chosen, b) for i, b in enumerate(bases)]
    else:  # v1: each mutated argument by its name
        names = [a.name for a in op_arguments(node.args[0]) if _writes(a)]
        only = node.kwargs.get("_only_clone_these_tensors")
        given = [(only is None or n in only, node.kwargs.get(n)) for n in names]
    cloned = [n for clone, arg in given if clone for n in _flat_nodes(arg)]
    return cloned, [n for clone, arg in given if not clone for n in _flat_nodes(arg)]


def _functionalized_kind(node: Any) -> str:
    cloned, in_place = _cloned(node)
    return "copy" if cloned else "in-place" if in_place else "compute"


def _functionalized_bytes(node: Any) -> Any:
    """A functionalized node's clones: each clone's whole storage (``clone_preserve_strides``
    copies the storage span the base reaches); with no clone, the written bases' bytes."""
    cloned, in_place = (_node_tensors(nodes) for nodes in _cloned(node))
    if cloned:
        return sum((_reach(t) * t.element_size() for t in cloned), 0)
    return sum((t.numel() * t.element_size() for t in in_place), 0)


def _reach(tensor: Any) -> Any:
    """The storage elements a strided tensor reaches: what ``clone_preserve_strides`` copies
    (no guard: only a size that is the int 0 is tested)."""
    if any(isinstance(n, int) and n == 0 for n in tensor.shape):
        return 0
    steps = [(n - 1) * s for n, s in zip(tensor.shape, tensor.stride())]
    return tensor.storage_offset() + sum(steps, 0) + 1


def _functionalized_reason(node: Any) -> str:
    mutable = node.args[0] if node.args else None
    schema = op_schema(mutable) if isinstance(mutable, _OP_OVERLOAD) else None
    op = schema.name if schema is not None else getattr(mutable, "__name__", str(mutable))
    names = [a.name for a in op_arguments(mutable) if _writes(a)] if schema is not None else []
    written = ", ".join(names) or "its arguments"
    head = f"{node.target.__name__}, the functional form of {op} (which writes {written} in place)"
    cloned, in_place = (", ".join(n.name for n in nodes) for nodes in _cloned(node))
    if cloned:
        kept = f"; it writes {in_place} in place" if in_place else ""
        return f"{head}: this graph clones {cloned} and the op writes into the clone{kept}"
    if in_place:
        return f"{head}: the op writes {in_place} in place"
    return f"{head}: here it writes new tensors"


def _flat_nodes(arg: Any) -> list[Any]:
    if isinstance(arg, (list, tuple)):
        return [n for a in arg for n in _flat_nodes(a)]
    return [arg] if hasattr(arg, "meta") else []


def _node_tensors(arg: Any) -> list[Any]:
    return [t for n in _flat_nodes(arg) for t in tensor_values(n.meta.get("val"))]


def _source(node: Any) -> str:
    """The user-level call a node was traced from (``linear``, ``contiguous``), if recorded."""
    for key, prefix in (("source_fn_stack", ""), ("fwd_source_fn_stack", "the backward of ")):
        stack = node.meta.get(key)
        if stack:
            return prefix + (str(stack[-1][0]).rstrip("_0123456789") or str(stack[-1][0]))
    for source in node.meta.get("from_node") or ():
        return str(source.target).removeprefix("aten.").split(".")[0]
    return ""


def _strides(node: Any) -> str:
    values = _input_values(node)
    return f"strides {tuple(values[0].stride())}" if values else "its strides"


def _memory_format(node: Any) -> Any:
    """The memory format a copy was asked for, when it is not plain row-major (or preserved)."""
    fmt = node.kwargs.get("memory_format")
    return None if fmt in (None, torch.contiguous_format, torch.preserve_format) else fmt


def copy_reason(node: Any, stage: str = "") -> str:
    """What forced a copy node (in words).  The user-level call it came from decides first
    (a decomposed ``.contiguous()`` is a ``clone`` followed by views); the users being views
    only says "a reshape" when nothing more explicit asked for the copy."""
    name = op_name(node.target)
    recorded = _source(node)
    origin = recorded or name
    inside = f" (inside {origin})" if origin not in (name, "contiguous", "reshape") else ""
    users = list(node.users)
    custom = [u for u in users if _namespace(u.target) not in ("", *_TORCH_NAMESPACES)]
    if name == "copy":
        return (
            "copy, the functional form of copy_: a new tensor holding the source's values "
            "in the destination's layout (what a functionalized graph makes of a write)"
        )
    if {name, origin} & {"copy_"}:
        return "copy_: another tensor's values written into an existing tensor"
    if name not in _COPY_OPS | _MAY_ALIAS and not name.endswith("_copy"):
        return (
            f"{name}(), an op that moves data: its result is its inputs' values moved, "
            f"selected or repeated into a new tensor, without arithmetic{inside}"
        )
    if name in _RESOLVES:
        bit = "conjugate" if name == "resolve_conj" else "negative"
        return f"{name}() of a tensor whose {bit} bit is set: the values are written out"
    if name == "clone" and not recorded and _copy_slices(node):
        return (
            "a clone autograd's backward makes: CopySlices, the backward of an in-place op on "
            "a view, clones the view's gradient before the op's own backward runs on it"
        )
    if name == "clone" and not recorded and stage == "backward":
        return "a clone autograd's backward makes (no user call of clone() recorded for it)"
    if "lift_fresh_copy" in (name, origin):
        return "a constant materialised as a tensor (torch.tensor(...), or a value written in)"
    if custom:
        return f"a stride the next op ({op_name(custom[0].target)}, a custom op) requires"
    if _memory_format(node) is not None:
        return f"a memory-format change to {str(_memory_format(node)).removeprefix('torch.')}"
    if origin == "contiguous":
        return f"a .contiguous() of a non-contiguous input ({_strides(node)})"
    if origin == "clone" and (recorded or stage != "backward"):
        return "an explicit clone()"
    if name in _RESHAPING and name != "reshape":
        return f"a reshape of a non-viewable input ({_strides(node)}) (inside {name})"
    if "reshape" in (name, origin) or (
        users and all(op_name(u.target) in _RESHAPE_VIEWS for u in users)
    ):
        return f"a reshape of a non-viewable input ({_strides(node)}){inside}"
    if name == "_to_copy" or name == "to":
        return "a .to() that converts dtype, device or memory format"
    if name == "clone" and origin != "clone":
        return f"a decomposition's clone{inside}"
    return f"an explicit {name}()"


def _copy_slices(node: Any) -> bool:
    """Is this backward ``clone`` the one autograd's ``CopySlices`` makes?  It runs, for the
    backward of an in-place op on a view: ``result = grad.new_empty_strided(base); result.copy_(
    grad); grad_slice = result.as_strided(view); fn(grad_slice.clone())`` (torch's
    ``autograd/functions/tensor.cpp``): the clone is of a view of a ``copy`` into a
    ``new_empty_strided``, all of one forward op (the same ``seq_nr``)."""
    seq = node.meta.get("seq_nr")
    source = node.args[0] if node.args else None
    while hasattr(source, "meta") and getattr(source.target, "is_view", False):
        source = source.args[0] if source.args else None
    if not hasattr(source, "meta") or op_name(source.target) != "copy" or not source.args:
        return False
    into = source.args[0]
    same = {getattr(n, "meta", {}).get("seq_nr") for n in (source, into)} == {seq}
    return (
        same and seq is not None and op_name(getattr(into, "target", None)) == "new_empty_strided"
    )


def _written(node: Any) -> list[Any]:
    """The FX nodes of the tensors an in-place node writes: its ``(a!)`` arguments, and the
    running statistics of a ``batch_norm`` in training."""
    target = node.target
    found = list(_running_stats(node))
    for position, argument in enumerate(op_arguments(target)):
        if _writes(argument):
            given = node.args[position] if position < len(node.args) else None
            found += _flat_nodes(node.kwargs.get(argument.name, given))
    return found


def _bytes(node: Any, kind: str) -> Any:
    """Bytes a copy writes: its result's (a ``copy_``'s destination: a broadcast source is
    smaller than what is written); an in-place op's: the tensors it writes; a functionalized
    op's: what it clones or writes."""
    if _is_functionalized(node):
        return _functionalized_bytes(node)
    if kind == "in-place" and isinstance(node.target, _OP_OVERLOAD):
        partial = index_write(node)
        if partial is not None:
            return partial[0]
        written = _node_tensors(_written(node))
        if written and op_name(node.target) != "copy_":
            return sum((t.numel() * t.element_size() for t in written), 0)
    if kind != "copy" and op_name(node.target) != "copy_":
        return 0
    return sum((t.numel() * t.element_size() for t in tensor_values(node.meta.get("val"))), 0)


def describe(node: Any, stage: str, graph: int = 0) -> GraphNode:
    """A :class:`GraphNode` for an FX node of a captured graph."""
    kind = classify(node)
    values = tensor_values(node.meta.get("val"))
    single = isinstance(node.meta.get("val"), torch.Tensor)
    return GraphNode(
        name=node.name,
        op=node.op,
        target=str(node.target) if node.op != "call_function" else _target_text(node.target),
        layout=inspect(values[0]) if single else None,
        kind=kind,
        bytes=_bytes(node, kind),
        where=where(node),
        reason=_reason(node, kind, stage),
        inputs=tuple(a.name for a in node.all_input_nodes),
        stage=stage,
        node=node,
        graph=graph,
    )


def _reason(node: Any, kind: str, stage: str = "") -> str:
    if _is_functionalized(node):
        return _functionalized_reason(node)
    stats = _running_stats(node) if kind == "in-place" else []
    if stats:
        names = " and ".join(n.name for n in stats)
        return (
            f"{op_name(node.target)} in training also writes {names} in place (the running "
            "statistics; its schema does not mark them written)"
        )
    if kind == "in-place" and isinstance(node.target, _OP_OVERLOAD) and index_write(node):
        return index_write(node)[1]
    return copy_reason(node, stage) if kind == "copy" or _is_copy_into(node) else ""


def _is_copy_into(node: Any) -> bool:
    return isinstance(node.target, _OP_OVERLOAD) and op_name(node.target) == "copy_"


def _target_text(target: Any) -> str:
    if isinstance(target, _OP_OVERLOAD):
        return f"{target.namespace}.{op_name(target)}"
    return getattr(target, "__name__", str(target))
