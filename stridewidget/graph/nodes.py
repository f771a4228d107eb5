"""One node of a captured graph: its layout (the graph's own FakeTensor), what kind of memory
operation it is, what a copy moves, and the user's line it came from.

The kind is read from the op's schema (alias annotations: ``Tensor(a)`` returns are views,
``Tensor(a!)`` arguments are written in place) and, for ops whose schema says "may alias"
(``reshape``, ``contiguous``, ``to``), from the graph's own FakeTensors: an output in another
storage than every input was a copy.  Nothing here reads a symbol's value (no guards).
"""

from __future__ import annotations

import operator
import os
import re
from dataclasses import dataclass
from typing import Any

import torch

from .._compat import op_arguments, op_overload_class, op_schema
from ..adapters.inspect import inspect, same_storage
from ..frames import PACKAGE_DIR, TORCH_DIR, describe_location
from ..layout.layout import Layout

__all__ = ["KINDS", "GraphNode", "classify"]

KINDS = ("view", "copy", "in-place", "compute", "input", "output")

#: Ops whose whole job is to make a copy (``*_copy`` functional variants too).
#: (``copy_`` is not one: it writes into a tensor that exists, an in-place op that moves bytes.)
_COPY_OPS = frozenset({"clone", "_to_copy", "copy", "contiguous", "lift_fresh_copy"})
#: Ops that view when they can and copy when they must, as a reshape does.
_RESHAPING = frozenset({"reshape", "flatten", "unflatten", "reshape_as", "view_as"})
#: Ops that move nothing after a reshape's clone: the clone was the reshape.
_RESHAPE_VIEWS = frozenset({"_unsafe_view", "view", "reshape", "_reshape_alias"})
#: Op namespaces that are torch's own (anything else is a custom op).
_TORCH_NAMESPACES = frozenset({"aten", "prims", "higher_order", "_c10d_functional", "quantized"})
_OP_OVERLOAD = op_overload_class()
_LINE = re.compile(r"(?::|, line )(\d+)(?: \(torch\))?$")
_FRAME = re.compile(r'File "([^"]+)", line (\d+), in')


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
        return self.kind == "copy" or self.target.endswith(".copy_")

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
    """The node's kind: ``input`` / ``output`` / ``view`` / ``copy`` / ``in-place`` / ``compute``."""
    if node.op in ("placeholder", "get_attr"):
        return "input"
    if node.op == "output":
        return "output"
    target = node.target
    if target is operator.getitem:
        return "view" if tensor_values(node.meta.get("val")) else "compute"
    if not isinstance(target, _OP_OVERLOAD):
        return "compute"
    name = op_name(target)
    if name in _COPY_OPS or name.endswith("_copy"):
        return "copy"
    if any(a.alias_info is not None and a.alias_info.is_write for a in op_arguments(target)):
        return "in-place"
    aliases = _aliases_an_input(node)
    returns = getattr(op_schema(target), "returns", ())
    if any(r.alias_info is not None for r in returns):
        # "may alias" (reshape, contiguous, to): the graph's FakeTensors say what happened
        return "copy" if aliases is False else "view"
    # ops that return a view without saying so in their schema (`_unsafe_view`)
    return "view" if aliases else "compute"


def _is_torch(filename: str) -> bool:
    # torch as imported, or as installed (a stack trace may name the other path of a symlink),
    # or relative to torch's parent folder, as torch writes the frames of the nodes its own
    # passes insert (``torch/fx/passes/runtime_assert.py``)
    path = filename.replace(os.sep, "/")
    return (
        filename.startswith(TORCH_DIR)
        or "-packages/torch/" in path
        or (path.startswith("torch/") and not os.path.isabs(filename))
    )


def _torch_relative(filename: str) -> str:
    path = filename.replace(os.sep, "/")
    return path if path.startswith("torch/") else f"torch/{path.rsplit('/torch/', 1)[-1]}"


def where(node: Any) -> str:
    """``file.py:LINE`` of the innermost frame of the node's stack trace that is the user's
    (not torch's, not this package's); for a torch module called directly, torch's own line,
    marked ``(torch)``; ``""`` when the graph kept no trace."""
    trace = node.meta.get("stack_trace") or ""
    frames = [(f, int(line)) for f, line in _FRAME.findall(trace)]
    frames = [(f, line) for f, line in frames if not f.startswith(PACKAGE_DIR)]
    for filename, line in reversed(frames):
        if not _is_torch(filename):
            return describe_location(filename, line)
    if frames:
        filename, line = frames[-1]
        return f"{_torch_relative(filename)}:{line} (torch)"
    return ""


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


def copy_reason(node: Any) -> str:
    """What forced a copy node (in words).  The user-level call it came from decides first
    (a decomposed ``.contiguous()`` is a ``clone`` followed by views); the users being views
    only says "a reshape" when nothing more explicit asked for the copy."""
    name = op_name(node.target)
    origin = _source(node) or name
    inside = f" (inside {origin})" if origin not in (name, "contiguous", "reshape") else ""
    users = list(node.users)
    custom = [u for u in users if _namespace(u.target) not in ("", *_TORCH_NAMESPACES)]
    if {name, origin} & {"copy_", "copy"}:
        return "copy_: another tensor's values written into an existing tensor"
    if "lift_fresh_copy" in (name, origin):
        return "a constant materialised as a tensor (torch.tensor(...), or a value written in)"
    if custom:
        return f"a stride the next op ({op_name(custom[0].target)}, a custom op) requires"
    if _memory_format(node) is not None:
        return f"a memory-format change to {str(_memory_format(node)).removeprefix('torch.')}"
    if origin == "contiguous":
        return f"a .contiguous() of a non-contiguous input ({_strides(node)})"
    if origin == "clone":
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


def _bytes(node: Any, kind: str) -> Any:
    """Bytes a copy writes: its result's (a ``copy_``'s destination: a broadcast source is
    smaller than what is written)."""
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
        reason=copy_reason(node) if kind == "copy" or _is_copy_into(node) else "",
        inputs=tuple(a.name for a in node.all_input_nodes),
        stage=stage,
        node=node,
        graph=graph,
    )


def _is_copy_into(node: Any) -> bool:
    return isinstance(node.target, _OP_OVERLOAD) and op_name(node.target) == "copy_"


def _target_text(target: Any) -> str:
    if isinstance(target, _OP_OVERLOAD):
        return f"{target.namespace}.{op_name(target)}"
    return getattr(target, "__name__", str(target))
