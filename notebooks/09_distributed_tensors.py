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
# # 9. Distributed tensors: who holds which element, and what `redistribute` moves
#
# A `DTensor` is one global tensor spread over a **device mesh**: each mesh dim has a
# **placement** — `Shard(d)` splits tensor dim `d` over that mesh dim's coordinates,
# `Replicate()` gives each coordinate the same elements, `Partial()` gives each a summand of
# them. Every rank keeps its share as an ordinary local tensor with its own strides.
#
# No GPU and no second process is needed: a **fake process group** plus torch's
# `LocalTensorMode` run every rank in this one CPU process, so each rank's local tensor is here to
# check. Every claim below is checked against torch's own answers (`to_local()`,
# `full_tensor()`, `redistribute`).

# %%
import torch
import torch.distributed as dist
from IPython.display import HTML, display
from torch.distributed._local_tensor import LocalTensorMode, rank_map
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import DTensor, Partial, Replicate, Shard, distribute_tensor
from torch.testing._internal.distributed.fake_pg import FakeStore

import stridewidget as sw

if not dist.is_initialized():  # one fake group of 8 ranks; this process plays all of them
    dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=8)


def locals_of(t):
    """Every rank's local tensor (LocalTensorMode keeps them all in this process), of a DTensor
    or of the ``LocalTensor`` that ``full_tensor()`` gives under that mode."""
    if isinstance(t, DTensor):
        return sw.adapters.distributed.local_tensors(t)
    return dict(t._local_tensors)


# %% [markdown]
# ## 1. A 2-D mesh: `Shard(0)` over `dp`, `Shard(1)` over `tp`
#
# Eight ranks as a 2×4 mesh. The 8×8 source holds its own flat indices (`arange`), so each value
# a rank keeps names the global element it is.

# %%
source = torch.arange(64.0).reshape(8, 8)
with LocalTensorMode(8):
    mesh = init_device_mesh("cpu", (2, 4), mesh_dim_names=("dp", "tp"))
    d = distribute_tensor(source, mesh, [Shard(0), Shard(1)])
lay = sw.inspect(d)
print(lay.explain())

# %% [markdown]
# Each rank's line is checked against its real local tensor: the rows and columns stridewidget
# names, taken from the source, are exactly the values that rank holds, with the shape and strides
# it reports.

# %%
local = locals_of(d)
for shard in lay.ranks:
    rows, cols = shard.indices
    assert torch.equal(local[shard.rank], source[list(rows)][:, list(cols)])
    assert shard.local.shape == tuple(local[shard.rank].shape)
    assert shard.local.strides == local[shard.rank].stride()
print(f"rank 6: {lay.rank(6).explain()}")
print("element (5, 4) is kept by rank(s)", lay.holders((5, 4)))
assert lay.holders((5, 4)) == tuple(r for r, t in local.items() if (t == 5 * 8 + 4).any())

# %% [markdown]
# ## 2. The picture
#
# `sw.render_html(d)` (or `sw.render_svg(d)`) draws the global grid, each cell marked with the
# rank that holds it, the mesh with its placements, and up to four ranks' local storages as
# ordinary strips, chosen to hold as many distinct elements as four can (a replica of a drawn
# rank is not drawn again); the other ranks are listed with their layouts, and an element or rank
# whose storage is not drawn says so. `sw.show(d)` is the same picture live in a running kernel:
# hover an element and the storage cell holding it lights up on every drawn rank that holds it;
# hover a rank's mesh box and its elements light up. This saved page shows the static picture.

# %%
page = sw.render_html(d)
assert "<svg" in page and "Shard(0)" in page and "Shard(1)" in page
display(HTML(page))

# %% [markdown]
# ## 3. `Replicate` and `Partial`
#
# `[Replicate(), Shard(1)]`: the `dp` coordinates hold the same columns, so every element has two
# holders. A `Partial()` DTensor holds summands: its value is the **sum** over the ranks of that
# mesh dim, which `full_tensor()` computes.

# %%
with LocalTensorMode(8):
    r = distribute_tensor(source, mesh, [Replicate(), Shard(1)])
    p = DTensor.from_local(torch.ones(2, 3), mesh, [Partial(), Replicate()])
    p_full = p.full_tensor()
rep = sw.inspect(r)
print("element (0, 0) is kept by ranks", rep.holders((0, 0)))
assert rep.holders((0, 0)) == tuple(k for k, t in locals_of(r).items() if (t == 0).any())
print(sw.inspect(p).explain().splitlines()[1])
assert torch.equal(locals_of(p_full)[0], torch.full((2, 3), 2.0))  # the sum over dp = 2 ranks

# %% [markdown]
# ## 4. An uneven shard
#
# 7 rows over 2 `dp` coordinates and 5 columns over 4 `tp` coordinates do not divide: torch splits
# like `torch.chunk` (chunks of `ceil(n / k)`, the last ones shorter — here the last `tp`
# coordinate gets no column at all, so two ranks hold nothing). stridewidget says which ranks hold
# fewer.

# %%
uneven_source = torch.arange(35.0).reshape(7, 5)
with LocalTensorMode(8):
    u = distribute_tensor(uneven_source, mesh, [Shard(0), Shard(1)])
un = sw.inspect(u)
print("\n".join(un.uneven_words()))
for shard in un.ranks:
    assert shard.shape == tuple(locals_of(u)[shard.rank].shape)
print({s.rank: s.shape for s in un.ranks})
empty = [r for r, t in locals_of(u).items() if t.numel() == 0]  # torch's own empty locals
assert len(empty) == 2 and all(un.rank(r).shape[1] == 0 for r in empty)

# %% [markdown]
# ## 5. A 3-D tensor
#
# Shards apply left to right over the mesh dims. Here `dp` splits tensor dim 2 and `tp` dim 0.
# `where(index)` names each holder of a global element and the storage element of its local
# tensor that keeps it; reading that storage element confirms it.

# %%
cube = torch.arange(4 * 6 * 5.0).reshape(4, 6, 5)
with LocalTensorMode(8):
    c = distribute_tensor(cube, mesh, [Shard(2), Shard(0)])
cl = sw.inspect(c)
print(cl.rank(5).explain())
index = (3, 2, 4)
for rank, cell in cl.where(index):
    storage = locals_of(c)[rank].reshape(-1)  # contiguous: storage element = flat position
    print(f"{index} → rank {rank}, local storage[{cell}] = {storage[cell].item():.0f}")
    assert storage[cell] == cube[index]

# %% [markdown]
# ## 6. What `redistribute` moves
#
# `sw.inspect(d).redistribute(placements)` computes, from the placements alone (no collective
# runs), what each rank must **receive** — the elements it holds after and not before — and
# **send** (each element a rank lacks comes from its lowest-numbered holder), in elements and
# bytes. Below, torch really redistributes `d` from `[Shard(0), Shard(1)]` to
# `[Replicate(), Shard(1)]`, and the elements each rank newly holds are compared with that count.

# %%
target = [Replicate(), Shard(1)]
move = lay.redistribute(target)
print(move.explain())
with LocalTensorMode(8):
    after = d.redistribute(mesh, target)
moved_bytes = 0
for rank, before in locals_of(d).items():
    new = set(locals_of(after)[rank].flatten().tolist()) - set(before.flatten().tolist())
    assert {i * 8 + j for i, j in move.received(rank)} == new
    assert move.move(rank).receive_bytes == len(new) * after.element_size()
    moved_bytes += len(new) * after.element_size()
assert move.total_bytes == moved_bytes
print(f"torch: {moved_bytes} B newly held over all ranks")

# %% [markdown]
# From a `Partial` the move is a **reduction**: a rank that needs an element's value receives
# every other rank's summand of it. `Partial()` → `Replicate()` on a 4-rank mesh: each rank
# receives 3 summands of each of its 6 elements. Torch agrees: after the all-reduce each value is
# the sum of the 4 summands (each rank's summand is `source + 100 * rank` here).

# %%
with LocalTensorMode(4):
    mesh4 = init_device_mesh("cpu", (4,))
    summands = {k: torch.arange(6.0).reshape(2, 3) + 100 * k for k in range(4)}
    q = DTensor.from_local(rank_map(summands.__getitem__), mesh4, [Partial()])
    q_after = q.redistribute(mesh4, [Replicate()])
reduce = sw.inspect(q).redistribute([Replicate()])
print(reduce.explain())
expected = sum(summands.values())
for k in range(4):
    assert torch.equal(locals_of(q_after)[k], expected)  # every summand arrived
    assert reduce.move(k).receives == 6 * (4 - 1)

# %% [markdown]
# A wrong target is refused in one line: a placement for a dim the tensor does not have, or not
# one placement per mesh dim (torch itself answers both with a bare `IndexError`).

# %%
for bad in ([Shard(2), Shard(1)], [Replicate()]):
    try:
        lay.redistribute(bad)
        raise AssertionError("expected a LayoutError")
    except sw.LayoutError as error:
        print(f"{bad}: {error}")
        assert "\n" not in str(error)

# %% [markdown]
# ## 7. FSDP2 + TP on a small MLP
#
# `parallelize_module` splits the MLP's linears over `tp` (column-wise, then row-wise) and
# `fully_shard` shards every parameter over `dp`: the first weight is then a strided shard over
# `dp` and a `Shard(0)` over `tp`. Outside `LocalTensorMode` this process is rank 0 and holds only
# its own shards; the others' are computed from the placements (the words say which).

# %%
import warnings

from torch.distributed.fsdp import fully_shard
from torch.distributed.tensor.parallel import (
    ColwiseParallel,
    RowwiseParallel,
    parallelize_module,
)

mesh2 = init_device_mesh("cpu", (2, 4), mesh_dim_names=("dp", "tp"))
torch.manual_seed(0)
mlp = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 8))
parallelize_module(mlp, mesh2["tp"], {"0": ColwiseParallel(), "2": RowwiseParallel()})
fully_shard(mlp, mesh=mesh2["dp"])
w = mlp[0].weight
wlay = sw.inspect(w)
print(wlay.explain())
assert wlay.rank(0).shape == tuple(w.to_local().shape)  # torch's own shard of rank 0
assert wlay.computed_ranks == tuple(range(1, 8))

# %% [markdown]
# A forward pass gathers each parameter before its module runs. `sw.track_copies()` names the two
# copies FSDP2 makes for it, with their bytes: the **copy-in** (this rank's shards into one
# all-gather buffer) and the **copy-out** (the gathered buffer into the unsharded parameters).
# Both write into buffers FSDP2 allocated (the log's kind `in-place`). The all-gather itself moves
# data between ranks and copies nothing here. (The root module keeps its parameters gathered after
# the forward, so `to_local()` then gives the unsharded ones.)

# %%
shard_bytes = sum(p.to_local().numel() * p.element_size() for p in mlp.parameters())
with sw.track_copies() as log, warnings.catch_warnings():
    # FSDP2 warns that this Sequential returns a view (the row-wise output): not used in place here
    warnings.simplefilter("ignore", UserWarning)
    mlp(torch.randn(4, 8))
gathered_bytes = sum(p.to_local().numel() * p.element_size() for p in mlp.parameters())
for event in log.events:
    if event.call.startswith("fsdp."):
        print(f"{event.call}: {event.kind}, {event.bytes_copied} B")
copy_in = [e.bytes_copied for e in log.events if e.call == "fsdp.all_gather_copy_in"]
copy_out = [e.bytes_copied for e in log.events if e.call == "fsdp.split_with_sizes_copy"]
assert copy_in == [shard_bytes] and copy_out == [gathered_bytes]
