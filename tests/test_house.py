"""The checks that keep the house in order, read off the package's source with ``ast`` (nothing
is imported): no import cycle, no underscore name imported from another package directory, no
file over 600 lines, no function over 80 lines without a stated reason, and every private torch /
NumPy API used only in the ``stridewidget/_compat/`` package.

Each failure names the place (``path:line``) and what to do.
"""

from __future__ import annotations

import ast
import functools
import itertools
import pathlib
import re
from dataclasses import dataclass

PACKAGE = pathlib.Path(__file__).resolve().parent.parent / "stridewidget"
ROOT = PACKAGE.parent
MAX_FILE_LINES = 600
MAX_FUNCTION_LINES = 80
LONG_REASON = "# Long on purpose:"
COMPAT = "stridewidget._compat"


def _in_compat(module_name: str) -> bool:
    """The ``_compat`` package (or a single ``_compat.py``, as it once was)."""
    return module_name == COMPAT or module_name.startswith(COMPAT + ".")


@dataclass(frozen=True)
class Module:
    name: str  # dotted: stridewidget.layout.strides
    path: pathlib.Path
    tree: ast.Module

    @property
    def is_package(self) -> bool:
        return self.path.name == "__init__.py"

    @property
    def where(self) -> str:
        return self.path.relative_to(ROOT).as_posix()


@functools.cache
def modules() -> dict[str, Module]:
    """Every module of the package by dotted name, parsed."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        name = ".".join(parts)
        found[name] = Module(name, path, ast.parse(path.read_text(encoding="utf-8"), str(path)))
    return found


def _type_checking_only(tree: ast.Module) -> set[int]:
    """Ids of the nodes under ``if TYPE_CHECKING:`` (imports there never run)."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(inner) for stmt in node.body for inner in ast.walk(stmt))
    return skipped


def _absolute(module: Module, node: ast.ImportFrom) -> str:
    """The dotted module a ``from X import ...`` reads, relative levels resolved."""
    if not node.level:
        return node.module or ""
    base = module.name.split(".") if module.is_package else module.name.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imports(module: Module) -> list[tuple[int, str, list[str] | None]]:
    """``(line, module imported, names taken from it)`` for every import that runs, those inside
    functions included (``import x.y`` takes no names: ``None``)."""
    skipped = _type_checking_only(module.tree)
    found = []
    for node in ast.walk(module.tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name, None) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            found.append((node.lineno, _absolute(module, node), [a.name for a in node.names]))
    return found


def import_graph() -> dict[str, dict[str, int]]:
    """Module → {package module it imports: line of the import}.  ``from pkg import sub``
    imports the submodule ``pkg.sub`` where there is one."""
    known = modules()
    graph: dict[str, dict[str, int]] = {}
    for name, module in known.items():
        edges: dict[str, int] = {}
        for line, target, names in imports(module):
            names = names or []
            targets = [f"{target}.{n}" if f"{target}.{n}" in known else target for n in names]
            for dependency in targets or [target]:
                if dependency in known and dependency != name:
                    edges.setdefault(dependency, line)
                # importing a.b.c runs a/b/__init__ first (unless it is running already: an
                # ancestor of the importer), and that may import much more
                parts = dependency.split(".")
                for cut in range(2, len(parts)):
                    parent = ".".join(parts[:cut])
                    if parent in known and not (name + ".").startswith(parent + "."):
                        edges.setdefault(parent, line)
        graph[name] = edges
    return graph


def cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """One cycle (a closed path of modules) for each strongly connected group (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[set[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in graph[node]:
            if other not in index:
                connect(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            group = set()
            while True:
                member = stack.pop()
                group.add(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(group)

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return [_closed_path(graph, group) for group in groups]


def _closed_path(graph: dict[str, dict[str, int]], group: set[str]) -> list[str]:
    """A shortest path from the group's first module back to itself, inside the group."""
    start = min(group)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for other in sorted(graph[node]):
                if other == start:
                    return paths[node] + [start]
                if other in group and other not in paths:
                    paths[other] = paths[node] + [other]
                    following.append(other)
        frontier = following
    raise AssertionError(f"no cycle through {start}")  # pragma: no cover - Tarjan said there is


def _described(graph: dict[str, dict[str, int]], cycle: list[str]) -> str:
    steps = [
        f"{modules()[a].where}:{graph[a][b]} imports {b}" for a, b in itertools.pairwise(cycle)
    ]
    return " -> ".join(cycle) + "\n      " + "\n      ".join(steps)


# --- (a) no import cycle ------------------------------------------------------------------------


def test_cycles_finds_a_cycle_and_only_cycles():
    assert cycles({"a": {"b": 1}, "b": {"c": 2}, "c": {"a": 3}, "d": {"a": 4}}) == [
        ["a", "b", "c", "a"]
    ]
    assert cycles({"a": {"b": 1}, "b": {}, "c": {"b": 2}}) == []


def test_no_import_cycle():
    """Every import that runs (inside functions too; not under ``if TYPE_CHECKING``) counts: a
    cycle makes the import order matter and the layers meaningless."""
    graph = import_graph()
    found = [_described(graph, cycle) for cycle in cycles(graph)]
    assert not found, "import cycles:\n  " + "\n  ".join(found)


#: The layers of ARCHITECTURE.md, lowest first: a module may import only from its own layer or a
#: lower one.  A top-level module or subpackage of the package not listed here fails the test.
LAYERS = [
    {"errors", "limits", "style", "_compat", "frames", "gcpause", "unseen"},
    {"layout"},
    {"adapters"},
    {"scene"},
    {"render"},
    {"notebook"},
    {"graph"},
    {"copies"},
    {"check", "tricks"},
    {"bench", "cli", "__main__", "audit", "__init__"},
]


def layer_of(module_name: str) -> int:
    """The index in :data:`LAYERS` of a package module (``stridewidget`` itself is ``__init__``)."""
    parts = module_name.split(".")
    top = parts[1] if len(parts) > 1 else "__init__"
    for index, layer in enumerate(LAYERS):
        if top in layer:
            return index
    raise AssertionError(f"{module_name}: its layer {top!r} is not in LAYERS (ARCHITECTURE.md)")


def upward_imports(graph: dict[str, dict[str, int]]) -> list[str]:
    """``module:line imports target`` for every import of a higher layer than the importer's."""
    found = []
    for name, edges in sorted(graph.items()):
        for target, line in sorted(edges.items()):
            if target == "stridewidget":
                continue  # ``from .. import tricks`` names a submodule: counted as that submodule
            if layer_of(target) > layer_of(name):
                found.append(f"{name}:{line} imports {target}")
    return found


def test_upward_imports_are_found():
    graph = {"stridewidget.layout.layout": {"stridewidget.render.svg": 7}, "stridewidget.cli": {}}
    assert upward_imports(graph) == ["stridewidget.layout.layout:7 imports stridewidget.render.svg"]
    assert upward_imports({"stridewidget.render.svg": {"stridewidget.layout.layout": 3}}) == []


def test_every_import_goes_down_the_layers():
    """The order of ARCHITECTURE.md's diagram (``LAYERS`` is that diagram): pure layout math never
    reaches for a renderer, the renderers never for the notebook, and so on."""
    found = upward_imports(import_graph())
    assert not found, "imports against the layers of ARCHITECTURE.md:\n  " + "\n  ".join(found)


# --- (b) no underscore name across package directories ----------------------------------------


def _directory(module_name: str) -> str:
    """The package directory a module lives in (a package's ``__init__`` lives in its own)."""
    module = modules().get(module_name)
    if module is not None and module.is_package:
        return module_name
    return module_name.rpartition(".")[0]


def underscore_imports() -> list[str]:
    """``from <module in another directory> import _name``: private to that directory.  Names
    from ``stridewidget._compat`` are the exception: it exists to be imported."""
    found = []
    for module in modules().values():
        for line, target, names in imports(module):
            if not names or not target.startswith("stridewidget") or _in_compat(target):
                continue
            private = [n for n in names if n.startswith("_") and not n.startswith("__")]
            if private and _directory(target) != _directory(module.name):
                found.append(f"{module.where}:{line}: from {target} import {', '.join(private)}")
    return found


def test_no_underscore_import_from_another_package_directory():
    found = underscore_imports()
    assert not found, (
        "underscore names imported from another package directory (make them public, or "
        "give the other side a named extension point):\n  " + "\n  ".join(found)
    )


# --- (c) file and function sizes ----------------------------------------------------------------


def long_files() -> list[str]:
    found = []
    for module in modules().values():
        count = len(module.path.read_text(encoding="utf-8").splitlines())
        if count > MAX_FILE_LINES:
            found.append(f"{module.where}: {count} lines")
    return found


def _states_a_reason(function: ast.FunctionDef | ast.AsyncFunctionDef, source: list[str]) -> bool:
    """The body opens (after the docstring) with a ``# Long on purpose: <reason>`` comment: the
    topmost of the comment lines just above the first statement."""
    body = function.body
    first = body[0]
    docstring = (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    )
    statements = body[1:] if docstring else body
    if not statements:
        return False
    statement = statements[0]
    start = min([statement.lineno, *(d.lineno for d in getattr(statement, "decorator_list", []))])
    top = None
    index = start - 2  # the line above the first statement, 0-based
    while index >= 0 and (not source[index].strip() or source[index].strip().startswith("#")):
        top = source[index].strip() or top
        index -= 1
    return top is not None and top.startswith(LONG_REASON) and len(top) > len(LONG_REASON) + 1


def long_functions() -> list[str]:
    found = []
    for module in modules().values():
        source = module.path.read_text(encoding="utf-8").splitlines()
        for node in ast.walk(module.tree):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            count = node.end_lineno - node.lineno + 1
            if count > MAX_FUNCTION_LINES and not _states_a_reason(node, source):
                found.append(f"{module.where}:{node.lineno}: {node.name} ({count} lines)")
    return found


def test_reason_comment_is_read_after_the_docstring_only():
    def parsed(text: str) -> tuple[ast.FunctionDef, list[str]]:
        return ast.parse(text).body[0], text.splitlines()

    assert _states_a_reason(
        *parsed('def f():\n    """Doc."""\n    # Long on purpose: x\n    a = 1\n')
    )
    assert _states_a_reason(*parsed("def f():\n    # Long on purpose: one table\n    a = 1\n"))
    assert not _states_a_reason(*parsed("def f():\n    a = 1\n    # Long on purpose: late\n"))
    assert not _states_a_reason(*parsed("def f():\n    # Long on purpose:\n    a = 1\n"))


def test_no_file_over_600_lines():
    found = long_files()
    assert not found, f"files over {MAX_FILE_LINES} lines (split them):\n  " + "\n  ".join(found)


def test_no_function_over_80_lines_without_a_reason():
    found = long_functions()
    assert not found, (
        f"functions over {MAX_FUNCTION_LINES} lines (split them, or open the body with "
        f"'{LONG_REASON} <reason>'):\n  " + "\n  ".join(found)
    )


# --- (d) private torch / NumPy API only in _compat -------------------------------------------

#: Roots of the libraries whose private names count.
LIBRARIES = ("torch", "numpy")

#: Private attributes of torch objects (tensors, storages, ops, modules, compiled wrappers) read
#: off a value of any name, so the receiver cannot tell the library: each is torch's own.
TORCH_PRIVATE_ATTRIBUTES = frozenset(
    {
        "_base",  # Tensor: the tensor a view is a view of
        "_version",  # Tensor: the in-place version counter
        "_cdata",  # Tensor / UntypedStorage: the C++ object's address
        "_typed_storage",
        "_is_view",
        "_is_zerotensor",
        "_neg_view",
        "_conj",
        "_nested_tensor_size",
        "_nested_tensor_strides",
        "_nested_tensor_storage_offsets",
        "_values",
        "_indices",
        "_nnz",
        "_storage",
        "_schema",  # OpOverload: its FunctionSchema
        "_overloadname",
        "_op_dk",  # OpOverload: call one dispatch key's kernel
        "_orig_mod",  # OptimizedModule: the compiled model
        "_torchdynamo_orig_callable",
        "_boxed_call",  # AOTAutograd's calling convention
        "_buffers",  # nn.Module's buffer dict
        "_parameters",
        "_modules",
        "_forward_hooks",
        "_forward_pre_hooks",
        "_backward_hooks",
    }
)

#: Underscore names that are not private APIs of torch or NumPy: CPython's ``sys._getframe``
#: (allowed everywhere), namedtuple's public ``_replace``/``_fields``/``_asdict``/``_make``, and
#: IPython's display protocol.
NOT_LIBRARY_PRIVATE = frozenset(
    {
        "_getframe",
        "_replace",
        "_fields",
        "_asdict",
        "_make",
        "_repr_html_",
        "_repr_mimebundle_",
        "_repr_svg_",
        "_repr_png_",
        "_repr_pretty_",
        "_ipython_display_",
    }
)


def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _private_module(dotted: str) -> bool:
    """``torch._C``, ``torch.utils._pytree``, ``numpy._core._multiarray_tests``: a library module
    with a private part."""
    parts = dotted.split(".")
    return parts[0] in LIBRARIES and any(_is_private(part) for part in parts[1:])


def _library_aliases(tree: ast.Module) -> dict[str, str]:
    """Local names bound to a torch / NumPy module in this file (``np``, ``F``, ``nn``), by the
    dotted module each names."""
    aliases = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in LIBRARIES:
                    local = alias.asname or alias.name.split(".")[0]
                    aliases[local] = alias.name if alias.asname else local
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            for alias in node.names if node.module.split(".")[0] in LIBRARIES else ():
                aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return aliases


def _chain(node: ast.expr) -> list[str] | None:
    """``torch.autograd._x`` as ``["torch", "autograd", "_x"]``; ``sys.modules["torch"]._C`` as
    ``["torch", "_C"]``; ``None`` for a chain not rooted at a name."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return [node.id, *reversed(parts)]
    if (
        isinstance(node, ast.Subscript)
        and ast.unparse(node.value) == "sys.modules"
        and isinstance(node.slice, ast.Constant)
        and isinstance(node.slice.value, str)
    ):
        return [*node.slice.value.split("."), *reversed(parts)]
    return None


@functools.cache
def package_private_names() -> frozenset[str]:
    """Underscore names the package itself defines (functions, classes, attributes it assigns,
    class fields): an ``x._name`` with one of them is the package's own business."""
    names: set[str] = set()
    for module in modules().values():
        for node in ast.walk(module.tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, ast.arg):
                names.add(node.arg)
    return frozenset(name for name in names if _is_private(name)) - TORCH_PRIVATE_ATTRIBUTES


def _attribute_uses(tree: ast.Module) -> list[tuple[int, ast.expr, str, bool]]:
    """``(line, receiver, name, outermost)`` for each ``x.name`` (``outermost``: not itself the
    receiver of a longer chain) and each ``getattr/hasattr/setattr/delattr(x, "name")`` with a
    constant name (always outermost)."""
    inner = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            found.append((node.lineno, node.value, node.attr, id(node) not in inner))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "hasattr", "setattr", "delattr")
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
        ):
            found.append((node.lineno, node.args[0], node.args[1].value, True))
    return found


def private_api_uses(module: Module) -> list[str]:
    """Each private torch / NumPy API use in one module, as ``path:line: what``."""
    found = []
    for line, target, names in imports(module):
        if names is None and _private_module(target):
            found.append(f"{module.where}:{line}: import {target}")
        elif names is not None and target.split(".")[0] in LIBRARIES:
            private = [n for n in names if _is_private(n)]
            if private or _private_module(target):
                found.append(f"{module.where}:{line}: from {target} import {', '.join(names)}")
    aliases = _library_aliases(module.tree)
    for line, receiver, name, outermost in _attribute_uses(module.tree):
        chain = _chain(receiver)
        if chain is not None and chain[0] in aliases:
            chain = [*aliases[chain[0]].split("."), *chain[1:]]
        if chain is not None and chain[0] in LIBRARIES:
            # a chain rooted at torch / NumPy: once, whole, where any part of it is private
            if outermost and any(_is_private(part) for part in [*chain[1:], name]):
                found.append(f"{module.where}:{line}: {'.'.join([*chain, name])}")
            continue
        if not _is_private(name) or name in NOT_LIBRARY_PRIVATE or chain in (["self"], ["cls"]):
            continue  # the package's own objects: its private names are its business
        if name in TORCH_PRIVATE_ATTRIBUTES:
            found.append(f"{module.where}:{line}: {ast.unparse(receiver)}.{name}")
        elif name not in package_private_names():
            found.append(f"{module.where}:{line}: {ast.unparse(receiver)}.{name} (unknown)")
    docstrings = _docstring_nodes(module.tree)
    for node in ast.walk(module.tree):
        # a private module named in a string: sys.modules.get("torch._x"), import_module(...)
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docstrings
            and re.fullmatch(r"\w+(\.\w+)+", node.value)
            and _private_module(node.value)
        ):
            found.append(f"{module.where}:{node.lineno}: {node.value!r}")
    return sorted(set(found), key=lambda text: (text.split(":")[0], int(text.split(":")[1])))


def _docstring_nodes(tree: ast.Module) -> set[int]:
    """The ids of the docstring constants of a module and its functions and classes."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def test_private_api_finder_sees_each_form():
    source = (
        "import sys\nimport torch\nimport numpy as np\nfrom torch.utils import _pytree\n"
        "from torch._C import _profiler\nfrom torch.nn import functional as F\n"
        "def f(t, op, frame):\n"
        "    a = torch._C._current_autograd_node()\n"
        "    b = np.core._multiarray_umath\n"
        "    c = t._base, t._version, op._schema, getattr(t, '_cdata', None)\n"
        "    d = sys.modules['torch']._tensor_str\n"
        "    e = F._canonical_mask\n"
        "    g = sys.modules.get('torch._subclasses.fake_tensor'), 'torch.nn', 'a._b'\n"
        "    ok = sys._getframe(), t.shape, t.__class__, torch.zeros(2), self_made._mine\n"
        "self_made = None\n"
    )
    module = Module("stridewidget.example", PACKAGE / "example.py", ast.parse(source))
    found = [text.split(": ", 1)[1] for text in private_api_uses(module)]
    assert sorted(found) == sorted(
        [
            "from torch.utils import _pytree",
            "from torch._C import _profiler",
            "torch._C._current_autograd_node",
            "numpy.core._multiarray_umath",
            "t._base",
            "t._version",
            "op._schema",
            "t._cdata",
            "torch._tensor_str",
            "torch.nn.functional._canonical_mask",
            "'torch._subclasses.fake_tensor'",
            "self_made._mine (unknown)",
        ]
    )


def test_private_torch_and_numpy_api_only_in_compat():
    """A torch or NumPy upgrade that drops a private name breaks one function of ``_compat``
    (each with the version it was checked on and a fallback), not a picture.  ``(unknown)``: an
    underscore attribute the package does not define and this test does not know; if it is
    torch's or NumPy's, use it through ``_compat``; if not, add it to NOT_LIBRARY_PRIVATE."""
    found = [use for n, m in modules().items() if not _in_compat(n) for use in private_api_uses(m)]
    assert not found, "private torch / NumPy API outside _compat:\n  " + "\n  ".join(found)


# --- ARCHITECTURE.md matches the tree ---------------------------------------------------------

#: Folders ARCHITECTURE.md names as a whole: their files are their own business.
WHOLE_FOLDERS = ("bench", "_compat")


def test_architecture_names_every_module_and_only_real_ones():
    """Every module of the package is named in ARCHITECTURE.md (except inside the folders it
    names as a whole), and every ``name.py`` it names is a file of the repository."""
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    named = set(re.findall(r"[\w/]*?(\w+)\.py\b", text))
    missing = []
    for module in modules().values():
        relative = module.path.relative_to(PACKAGE)
        if relative.name == "__init__.py" or relative.parts[0] in WHOLE_FOLDERS:
            continue
        if relative.stem not in named:
            missing.append(str(relative))
    assert not missing, "ARCHITECTURE.md does not name: " + ", ".join(sorted(missing))
    real = {path.stem for path in ROOT.rglob("*.py") if ".venv" not in path.parts}
    invented = sorted(name for name in named if name not in real)
    assert not invented, "ARCHITECTURE.md names files that do not exist: " + ", ".join(invented)
