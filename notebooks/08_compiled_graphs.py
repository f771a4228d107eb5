# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 8. Layouts inside compiled and exported programs: `sw.graph`
#
# `torch.compile` and `torch.export` run a model as a graph of ATen ops.  How close those are to
# the ops eager mode dispatches depends on the graph: `torch.export`'s own graph keeps `reshape` and
# `.contiguous()` as written (`run_decompositions()` turns them into `clone` + `view`), and the
# AOTAutograd forward graph `torch.compile` makes can name an op otherwise than eager without a
# layout difference — a `view` where eager dispatches `_unsafe_view` (after each `bmm` of the model
# below), the functional `add` where eager runs the in-place `add_`.  For the attention model below,
# the copies are the same `clone`s in eager mode and in its forward graph, every node's strides are
# the ones eager's op gave, and `g.compare_eager()` finds no output whose strides differ (all
# asserted below).

# %% [markdown]
# What the graph adds is that every op is a node you can list, with the strides its FakeTensor
# says, where eager hides them inside one Python call.  Layouts can differ where other kernels
# run than eager's.  In the graphs `sw.graph` reads, a decomposition can stand in place of a fused
# kernel, as for the attention at the end of the backward section, and `g.compare_eager()` finds
# the strides that differ.  Under a default `torch.compile`, Inductor does not run these graphs' ops one by one but
# kernels it generates, with layout choices of its own (padding, stride orders) that `sw.graph`
# does not read: only the compiled program's outputs are kept at the strides eager gives them
# (the setting is printed at the end of the backward section).
# `sw.graph(model, *inputs, stage=...)` lists the nodes of such a graph with their layouts, says
# which are views and which copy (and why), and points at the line of your code each one came
# from.
#
# * `stage="export"`: the graph `torch.export` traced; `"aten"`: after `run_decompositions()`;
# * `stage="forward"` / `"backward"`: the AOTAutograd graphs `torch.compile` hands its backend
#   (captured by a backend that only records them and runs them as they are — no Inductor).
#
# Looking at a graph never changes it: symbolic sizes stay symbols and nothing adds a guard.

# %%
import warnings

import torch
from IPython.display import SVG, display
from torch.export import Dim
from torch.utils._python_dispatch import TorchDispatchMode

import stridewidget as sw

torch.manual_seed(0)
torch.set_num_threads(1)
# torch 2.13's own run_decompositions() warns about its pytree internals: not ours to fix
warnings.filterwarnings("ignore", message=".*LeafSpec.*", category=FutureWarning)


# %% [markdown]
# ## The ATen ops eager mode runs, and each graph's
#
# A dispatch mode sees the ATen ops eager mode dispatches.  On a `reshape` that cannot be a view and a
# `.contiguous()`, eager runs the ops the compiled forward graph lists; `torch.export`'s own
# graph still has `reshape` and `contiguous`, until `run_decompositions()` (`stage="aten"`) makes
# them `clone` + `view` (and `t` a `permute`).  An in-place op is another case: the forward graph
# is functional, so eager's `add_` is an `add` there.


# %%
class AtenOps(TorchDispatchMode):
    """Records every ATen op eager mode dispatches, and each clone's source and result layouts."""

    def __init__(self):
        super().__init__()
        self.names, self.clones = [], []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        self.names.append(f"aten.{func.overloadpacket.__name__}")
        if func.overloadpacket is torch.ops.aten.clone:
            self.clones.append((tuple(args[0].shape), args[0].stride(), out.stride()))
        return out


class TwoCopies(torch.nn.Module):
    def forward(self, x):
        return x.t().reshape(-1), x.t().contiguous()


# %%
# [same-ops] eager dispatches the compiled graph's ops; export keeps reshape/contiguous until aten
small = torch.randn(3, 4)
with AtenOps() as eager_ops:
    TwoCopies()(small)
staged = {
    stage: [
        n.target
        for n in sw.graph(TwoCopies(), small, stage=stage).nodes
        if n.inputs and n.kind != "output"
    ]
    for stage in ("forward", "export", "aten")
}
print("eager   ", eager_ops.names)
for stage, targets in staged.items():
    print(f"{stage:8}", targets)
assert eager_ops.names == staged["forward"]
assert {"aten.reshape", "aten.contiguous"} <= set(staged["export"])
assert not {"aten.reshape", "aten.contiguous", "aten._unsafe_view"} & set(staged["aten"])
assert staged["aten"].count("aten.clone") == eager_ops.names.count("aten.clone")
assert "aten.permute" in staged["aten"] and "aten.t" not in staged["aten"]


# %%
# [in-place] eager's in-place add_ is the functional add in the forward graph
class InPlace(torch.nn.Module):
    def forward(self, x):
        return (x * 2).add_(1)


with AtenOps() as eager_ops:
    InPlace()(small)
functional = [
    n.target for n in sw.graph(InPlace(), small, stage="forward").nodes if n.kind == "compute"
]
print("in place: eager", eager_ops.names, " forward", functional)
assert eager_ops.names == ["aten.mul", "aten.add_"] and functional == ["aten.mul", "aten.add"]


# %% [markdown]
# ## A small attention block, eager first
#
# The heads are split with `view` + `transpose` and merged back with `transpose` + `reshape`.


# %%
class Attention(torch.nn.Module):
    def __init__(self, dim=4, heads=2):
        super().__init__()
        self.qkv = torch.nn.Linear(dim, 3 * dim)
        self.heads = heads

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        weights = (q @ k.transpose(-2, -1)).softmax(-1)
        return (weights @ v).transpose(1, 2).reshape(b, t, c)


model = Attention()
x = torch.randn(2, 3, 4)  # tiny, so the saved pictures stay small

# %% [markdown]
# In eager mode, `sw.track_copies` sees the calls that copied, and `sw.audit` the whole step:

# %%
with sw.track_copies() as log:
    model(x)
eager_calls = [(event.call, event.line) for event in log.copies]
print(eager_calls)
report = sw.audit(model, x)
print(report)

# %% [markdown]
# ## The same model, compiled: the AOTAutograd forward graph
#
# `display(g)` in a running kernel is a live table of the nodes: click one (or move with the arrow
# keys) and the kernel draws its layout beside its inputs' with the tensor widget's picture. A
# saved notebook, like this one, keeps the static table: copies in red, views in green, and each
# copy's layout drawn beside its inputs' (a graph with more copies than
# `sw.limits.MAX_GRAPH_PICTURES` draws the first ones and lists the rest by name; this one has
# fewer, so every copy is drawn: the assert below checks it).

# %%
g = sw.graph(model, x, stage="forward")
assert len(g.copies) <= sw.limits.MAX_GRAPH_PICTURES
display(g)

# %% [markdown]
# What the live table does on a click, without a browser: the front end sets `selected` to the
# node's position, and the kernel builds that node's picture only (a view shares its input's
# storage strip, a copy has its own).

# %%
live = sw.graph.GraphWidget(g)
views = [i for i, n in enumerate(g.nodes) if n.kind == "view" and n.target != "getitem"]
copies = [i for i, n in enumerate(g.nodes) if n.kind == "copy"]
for index in views[:3] + copies:
    node = g.nodes[index]
    if node.layout is not None:
        live.selected = index
        drawn = {t["name"]: t["storage"] for t in live.scene["tensors"]}
        print(f"{node.kind:4} {node.name:12} drawn with {drawn}")
live.close()

# %%
for node in g.copies:
    print(f"{node.name:10} {node.bytes:5} bytes  {node.where:14}  {node.reason}")

# %% [markdown]
# Eager mode makes the same copies, of the same layouts: each `clone` it dispatches, with its
# source's shape and strides and its result's strides, beside the graph's copies (its
# FakeTensors'):

# %%
# [same-layouts] eager's clones of this model are the graph's copies, layout for layout
with AtenOps() as eager_ops:
    model(x)
nodes = {n.name: n for n in g.nodes}
graph_clones = [
    (nodes[n.inputs[0]].layout.shape, nodes[n.inputs[0]].layout.strides, n.layout.strides)
    for n in g.copies
]
for eager_clone, graph_clone in zip(eager_ops.clones, graph_clones):
    print("eager", eager_clone, " graph", graph_clone)
assert eager_ops.clones == graph_clones

# %% [markdown]
# And every node, not only the copies: each tensor the graph's ops make has the strides the op eager
# dispatched in its place gave (a `split`'s tuple is its `getitem`s).  The ops pair up one to one;
# two differ in name only, eager's `_unsafe_view` after each `bmm` being a `view` in the graph:


# %%
class AtenStrides(AtenOps):
    """AtenOps, and the strides of every tensor each op returns."""

    def __init__(self):
        super().__init__()
        self.strides = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = super().__torch_dispatch__(func, types, args, kwargs)
        self.strides.extend(t.stride() for t in tensors(out))
        return out


def tensors(value):
    if isinstance(value, (tuple, list)):
        return [v for v in value if isinstance(v, torch.Tensor)]
    return [value] if isinstance(value, torch.Tensor) else []


# %%
# [same-strides] every forward node's strides are eager's; ops differ only in name (view, _unsafe_view)
with AtenStrides() as eager_ops:
    model(x)
made = [n for n in g.nodes if n.inputs and n.kind != "output"]
graph_strides = [n.layout.strides for n in made if n.layout is not None]  # split: its getitems
graph_ops = [n.target for n in made if n.target != "getitem"]
renamed = sorted({(e, c) for e, c in zip(eager_ops.names, graph_ops) if e != c})
print(f"{len(graph_strides)} tensors, strides equal: {eager_ops.strides == graph_strides}")
print(
    f"{len(graph_ops)} ops, named otherwise:",
    renamed,
    sum(map(str.__ne__, eager_ops.names, graph_ops)),
)
assert eager_ops.strides == graph_strides and len(eager_ops.names) == len(graph_ops)
assert renamed == [("aten._unsafe_view", "aten.view")]
assert sum(map(str.__ne__, eager_ops.names, graph_ops)) == eager_ops.names.count("aten.bmm") == 2

# %% [markdown]
# Every copy the table names is a real one: replaying the graph eagerly on real tensors
# (`g.run()`, a `torch.fx.Interpreter`) gives each copy node its own storage, and each view
# node its input's storage.  A `split` returns a tuple of views and a `getitem` picks one of
# them, so a tuple counts as a view when every tensor in it shares an input's storage.


# %%
# [all-checked] every view shares an input's storage when replayed, every copy has its own
real = g.run()  # tensors(): a node's value as a list of tensors, defined above
checked = {"copy": 0, "view": 0}
for node in g.nodes:
    results = tensors(real.get(node.name))
    given = [t for name in node.inputs for t in tensors(real.get(name))]
    if node.kind in ("input", "output") or not results or not given:
        continue
    shared = all(any(sw.same_storage(r, t) for t in given) for r in results)
    assert shared == (node.kind == "view"), node.name
    if node.kind in checked:  # compute nodes pass the assert too; only these two are counted
        checked[node.kind] += 1
in_graph = {"copy": len(g.copies), "view": sum(n.kind == "view" for n in g.nodes)}
for kind in in_graph:
    print(f"{in_graph[kind]} {kind} nodes, {checked[kind]} checked")
assert checked == in_graph

# %% [markdown]
# Line by line, what eager mode copied (`sw.track_copies`) beside what the compiled forward graph
# copies.  The merge's `reshape` copies in both; the numbers are computed, not typed.


# %%
def per_line(pairs):
    table = {}
    for line, moved in pairs:
        count, total = table.get(line, (0, 0))
        table[line] = (count + 1, total + moved)
    return table


eager = per_line((event.line, event.bytes_copied) for event in log.copies)
compiled = per_line((n.line, n.bytes) for n in g.copies)  # .line: where's line number
for line in sorted(set(eager) | set(compiled)):
    print(f"line {line}: eager {eager.get(line, (0, 0))}, compiled {compiled.get(line, (0, 0))}")
merge_line = next(line for call, line in eager_calls if call == "torch.Tensor.reshape")
assert merge_line in compiled and merge_line in eager

# %% [markdown]
# The last copy drawn with its input, from the real replay (the table above draws the graph's
# FakeTensors, which have no values): the merged heads' transposed layout, and the contiguous
# buffer the decomposition's `clone` writes.

# %%
merge = g.copies[-1]
print(merge.name, "←", merge.inputs[0], ":", merge.reason)
SVG(sw.render_svg(**{merge.inputs[0]: real[merge.inputs[0]], merge.name: real[merge.name]}))

# %% [markdown]
# ## The backward graph, and eager vs compiled strides
#
# `stage="backward"` is the graph AOTAutograd made for the gradients.  `g.compare_eager()` runs
# the eager model and lists every output whose strides differ from the graph's (and every
# custom op's input): here there are none.

# %%
backward = sw.graph(model, x, stage="backward")
for node in backward.copies:
    print(f"{node.name:10} {node.bytes:5} bytes  {node.reason}")
assert g.compare_eager() == [] and sw.graph(model, x, stage="aten").compare_eager() == []

# %% [markdown]
# Where a graph runs another kernel than eager, its layouts can differ.  Eager mode's
# `scaled_dot_product_attention` on the CPU is a fused kernel; `run_decompositions()` replaces it
# with its math decomposition, whose output has other strides, and `compare_eager()` says so:


# %%
# [differs] the decomposed attention's output strides are not eager's fused kernel's
class FusedAttention(torch.nn.Module):
    def forward(self, x):
        b, t, c = x.shape
        q = x.view(b, t, 2, c // 2).transpose(1, 2)
        return torch.nn.functional.scaled_dot_product_attention(q, q, q)


fused = FusedAttention()
with AtenOps() as eager_ops:
    fused(x)
print("eager runs", [name for name in eager_ops.names if "attention" in name])
for stage in ("export", "forward", "aten"):
    print(f"{stage:8}", sw.graph(fused, x, stage=stage).compare_eager())
decomposed = sw.graph(fused, x, stage="aten")
assert "aten._scaled_dot_product_flash_attention_for_cpu" in eager_ops.names  # the fused kernel
assert not any("attention" in n.target for n in decomposed.nodes)  # bmm, _softmax, ... instead
(mismatch,) = decomposed.compare_eager()
assert mismatch.eager_strides == fused(x).stride() != mismatch.compiled_strides

# %% [markdown]
# Inductor, the default backend, is the other case: it runs kernels of its own, not the graphs'
# ops, and only its outputs are promised eager's strides — by a setting on by default:

# %%
# [inductor-outputs] a default torch.compile keeps the compiled program's outputs at eager's strides
import torch._inductor.config as inductor_config  # a private module: read, never set

print("keep_output_stride:", inductor_config.keep_output_stride)
assert inductor_config.keep_output_stride is True

# %% [markdown]
# ## Dynamic shapes: symbols, and no guards
#
# Exported with a dynamic batch, the layouts are symbolic: `sw.inspect` of a node's FakeTensor
# shows the symbol, says which facts depend on it, and adds no guard to the program's ShapeEnv —
# the program still accepts every batch size afterwards.

# %%
program = torch.export.export(model, (x,), dynamic_shapes={"x": {0: Dim("batch")}})
shape_env = next(iter(program.graph.nodes)).meta["val"].fake_mode.shape_env
guards_before = list(shape_env.guards)
dynamic = sw.graph(program, stage="aten")
for node in dynamic.copies:
    print(node.name, node.layout, "·", node.bytes, "bytes")
assert list(shape_env.guards) == guards_before
print(program.module()(torch.randn(7, 3, 4)).shape)

# %% [markdown]
# Drawn, a symbolic layout uses the example the program was traced at and says so:

# %%
print(sw.render_text(dynamic.copies[-1].node.meta["val"]).splitlines()[0])
