"""sw.show(d) / display(d) of a DTensor: the live widget draws the picture sw.render_svg(d) draws,
its display list keyed so that hovering a global element lights the storage cell holding it on
every drawn rank (js/paint/link.js; js/widget/dtensor.test.js paints and hovers it).

Oracles (none of them the library's code): every rank's ``to_local()`` under ``LocalTensorMode``
(a fake process group), brute force over each local tensor's elements for who holds global element
i and at which local storage index (the source is an ``arange``, so a value names its element);
the static SVG parsed as a browser resolves it (``tests/svg_resolve.py``) for the shapes.
"""

from __future__ import annotations

import gc
import itertools
import json
import math
import pathlib
import re

import jsonschema
import pytest
import torch
import torch.distributed as dist
from svg_resolve import colour, drawn

import stridewidget as sw
from stridewidget.errors import LayoutError
from stridewidget.notebook.distributed import DistributedWidget
from stridewidget.notebook.picture import listed_json
from stridewidget.render.distributed import MAX_MESH_BOXES, MAX_RANK_STRIPS, MAX_TITLE_RANKS
from stridewidget.style import STYLE

if not dist.is_available():
    pytest.skip("torch.distributed is not available in this torch build", allow_module_level=True)

from torch.distributed._local_tensor import LocalTensorMode
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import DTensor, Partial, Replicate, Shard, distribute_tensor

PLACE = re.compile(r"rank (\d+) at \([\d, ]*\) local storage\[([\d,]+)\]")  # digits grouped


def _cover(locals_, limit):
    """The ranks whose storages hold the most distinct elements (arange: a value names its
    element), chosen greedily from torch's own local values: the lowest rank on a tie."""
    sets = {r: {float(v) for v in t.flatten().tolist()} for r, t in locals_.items()}
    chosen, covered = [], set()
    while len(chosen) < limit:
        gain, r = max(((len(s - covered), -r) for r, s in sets.items() if -r not in chosen))
        if not gain:
            break
        chosen.append(-r)
        covered |= sets[-r]
    return sorted(chosen)


def _all_ranks(mesh_shape, placements, source):
    with LocalTensorMode(math.prod(mesh_shape)):
        mesh = init_device_mesh("cpu", mesh_shape)
        return distribute_tensor(source, mesh, placements)


def _groups(items, cls=None, out=None):
    """Every group of a display list (``cls``: of that class), in paint order."""
    out = [] if out is None else out
    for item in items:
        if item[0] == "g":
            if cls is None or item[1] == cls:
                out.append(item)
            _groups(item[4], cls, out)
    return out


def _flat(items, out=None):
    out = [] if out is None else out
    for item in items:
        if item[0] == "g":
            _flat(item[4], out)
        else:
            out.append(item)
    return out


def _oracle(locals_, partial=False):
    """Global element → {(rank, local storage index)}, by brute force over every rank's local
    tensor: its element at local index ``idx`` sits at ``offset + Σ idx·stride`` of its storage
    and (the source an arange) its value is the global element's flat index."""
    held: dict = {}
    for rank, local in locals_.items():
        for idx in itertools.product(*(range(n) for n in local.shape)):
            cell = local.storage_offset() + sum(i * s for i, s in zip(idx, local.stride()))
            key = idx if partial else int(local[idx].item())  # a summand names no element
            held.setdefault(key, set()).add((rank, cell))
    return held


CASES = {
    "shard-shard-2x4": ((2, 4), [Shard(0), Shard(1)], (8, 8)),
    "shard1-1d": ((4,), [Shard(1)], (3, 8)),
    "replicate-shard": ((2, 4), [Replicate(), Shard(1)], (3, 4)),
    "uneven": ((2,), [Shard(0)], (7, 3)),
    "three-d": ((2, 2, 2), [Shard(2), Shard(0), Replicate()], (4, 6, 5)),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_element_links_exactly_the_storage_cells_torch_holds_it_in(group, case):
    mesh_shape, placements, shape = CASES[case]
    group(math.prod(mesh_shape))
    source = torch.arange(float(math.prod(shape))).reshape(shape)
    d = _all_ranks(mesh_shape, placements, source)
    locals_ = d.to_local()._local_tensors
    held = _oracle(locals_)
    w = sw.show(d)
    assert isinstance(w, DistributedWidget) and w.name == "d"
    listed = w.picture
    strips = [g[2]["rank"] for g in _groups(listed["items"], "sws-rank-strip")]
    assert strips == _cover(locals_, MAX_RANK_STRIPS)
    keys = {g[2]["key"]: g for g in _groups(listed["items"]) if "key" in g[2]}
    cells = _groups(listed["items"], "sws-dcell")
    assert len(cells) == source.numel()  # every element of these small tensors is drawn
    for g in cells:
        index = tuple(int(i) for i in g[2]["index"].split(","))
        want = held[int(source[index].item())]
        # the hover line names every holder with its local storage index, as torch holds it
        assert set((int(r), int(c.replace(",", ""))) for r, c in PLACE.findall(g[3])) == want, g[3]
        assert ("replicated on" in g[3]) == (len(want) > 1)
        assert ("storage is not drawn" in g[3]) == (not {r for r, _ in want} & set(strips))
        # the links: each drawn strip's cell holding it, and each holder's mesh box
        links = g[2]["links"].split()
        cells_linked = {tuple(map(int, k[1:].split(":"))) for k in links if ":" in k}
        assert cells_linked == {(r, c) for r, c in want if r in strips}
        assert {int(k[1:]) for k in links if ":" not in k} == {r for r, _ in want}
        for key in links:  # each names a drawn group; a strip cell shows the element's value
            assert key in keys, key
            if ":" in key:
                assert keys[key][3].startswith(f"storage[{key.split(':')[1]}] = ")
                assert f" = {source[index].item():g}." in keys[key][3]
                assert keys[key][3].endswith(f" · holds d[{', '.join(map(str, index))}]")
    schema = pathlib.Path(sw.__file__).parent / "render" / "listing.schema.json"
    jsonschema.validate(listed, json.loads(schema.read_text()))
    for rank in strips:  # a strip cell links its rank's box; a box is keyed by its rank
        for g in _groups(listed["items"], "sws-scell"):
            if g[2]["key"].startswith(f"r{rank}:"):
                assert g[2]["links"] == f"r{rank}"
    assert {g[2]["key"] for g in _groups(listed["items"], "sws-mesh-rank")} == {
        f"r{r}" for r in locals_
    }
    w.close()


def test_partial_says_so_and_links_every_summand(group):
    group(4)
    with LocalTensorMode(4):
        mesh = init_device_mesh("cpu", (4,))
        d = DTensor.from_local(torch.arange(6.0).reshape(2, 3), mesh, [Partial()])
    held = _oracle(d.to_local()._local_tensors, partial=True)
    w = sw.show(d)
    for g in _groups(w.picture["items"], "sws-dcell"):
        index = tuple(int(i) for i in g[2]["index"].split(","))
        assert set((int(r), int(c.replace(",", ""))) for r, c in PLACE.findall(g[3])) == held[index]
        assert "partial" in g[3] and "replicated" not in g[3]
        linked = {tuple(map(int, k[1:].split(":"))) for k in g[2]["links"].split() if ":" in k}
        assert linked == held[index]
    w.close()


def _resolve(value, theme="light"):
    if isinstance(value, str) and value.startswith("@"):
        return colour(STYLE["themes"][theme][value[1:]])
    return colour(value) if isinstance(value, str) else value


def test_the_widget_draws_the_static_picture(group):
    group(8)
    d = _all_ranks((2, 4), [Shard(0), Shard(1)], torch.arange(64.0).reshape(8, 8))
    w = sw.show(d)
    items = _flat(w.picture["items"])
    shapes = drawn(sw.render_svg(d))[1:]  # the background first
    assert [s["tag"] for s in shapes] == [
        {"r": "rect", "t": "text", "p": "path"}[i[0]] for i in items
    ]
    for shape, item in zip(shapes, items):
        if item[0] == "t":
            assert (shape["text"], shape["at"]) == (item[3], (item[1], item[2]))
            assert shape["fill"] == _resolve(item[5])
        elif item[0] == "r":
            assert shape["box"] == tuple(item[1:5])
            if isinstance(item[5], str) and not item[5].startswith("p"):
                assert shape["fill"] == _resolve(item[5])
        else:
            assert shape["stroke"] == _resolve(item[2])
    # the saved fallback: the same picture, keyless, with the layout in words
    data, _ = w._repr_mimebundle_()
    page = data["text/html"]
    assert "sws-dcell" not in page and "data-key" not in page and "mesh dim" in page
    svg = page[page.index("<svg") : page.index("</svg>") + 6]
    static = sw.render_html(d)
    want = static[static.index("<svg") : static.index("</svg>") + 6]
    assert drawn(svg) == drawn(want)
    assert data["text/plain"].startswith("DistributedWidget · d: DTensor float32 (8, 8)")
    # laid out again for the width the browser reports, still keyed
    for width in (500, 700):  # a rank strip's heading wraps in a narrow column
        w.width = width
        assert w.picture["width"] <= width and _groups(w.picture["items"], "sws-dcell")
    w.close()


def test_display_after_enable_shows_the_widget(group):
    from IPython.core.interactiveshell import InteractiveShell

    group(4)
    d = _all_ranks((4,), [Shard(1)], torch.arange(8.0).reshape(2, 4))
    ip = InteractiveShell.instance()
    sw.enable(ip)
    try:
        ip.user_ns["dt"] = d
        data, _ = ip.display_formatter.format(d)
        assert "application/vnd.jupyter.widget-view+json" in data
        assert data["text/plain"] == repr(d)
        assert "<svg" in data["text/html"] and "sws-dcell" not in data["text/html"]
        assert "dt: DTensor" in data["text/html"] or "dt:" in data["text/html"]
    finally:
        ip.user_ns.pop("dt", None)
        sw.disable(ip)


def test_a_dtensor_whose_mesh_cannot_be_read_is_one_line(group, monkeypatch):
    from IPython.core.interactiveshell import InteractiveShell

    group(2)
    d = _all_ranks((2,), [Shard(0)], torch.arange(4.0))

    def gone(self):
        raise RuntimeError("the default process group has not been initialized")

    monkeypatch.setattr(DTensor, "device_mesh", property(gone))
    with pytest.raises(LayoutError) as caught:
        sw.show(d)
    assert "\n" not in str(caught.value) and "process group" in str(caught.value)
    ip = InteractiveShell.instance()
    sw.enable(ip)
    try:  # display keeps a plain repr rather than failing
        data, _ = ip.display_formatter.format(d)
        assert "application/vnd.jupyter.widget-view+json" not in data
    finally:
        sw.disable(ip)


def test_a_mesh_over_the_budget_is_a_bounded_picture_the_rest_listed(group):
    world = 80
    group(world)
    d = _all_ranks((2, world // 2), [Shard(0), Replicate()], torch.arange(6.0).reshape(2, 3))
    w = sw.show(d)
    listed = w.picture
    boxes = [g[2]["rank"] for g in _groups(listed["items"], "sws-mesh-rank")]
    assert len(boxes) <= MAX_MESH_BOXES
    # the mesh keeps its 2 rows (ranks 0–39, 40–79), each with its first and last columns
    rows = [sorted(r for r in boxes if r // 40 == k) for k in (0, 1)]
    assert all(row[0] % 40 == 0 and row[-1] % 40 == 39 for row in rows)
    # one strip per distinct share: rank 0 holds row 0, rank 40 row 1 (the others are replicas)
    assert [g[2]["rank"] for g in _groups(listed["items"], "sws-rank-strip")] == [0, 40]
    words = [i[3] for i in _flat(listed["items"]) if i[0] == "t"]
    left = f"{len(boxes)} drawn, … and ⋮ mark the {world - len(boxes)} ranks left out"
    assert any("mesh (2, 40): 2 rows × 40 columns of boxes" in t and left in t for t in words)
    # the ranks not drawn (all but 0 and 40) as runs
    assert any(t.startswith(f"ranks 1–39, 41–{world - 1}: ") for t in words)
    for g in _groups(listed["items"], "sws-dcell"):
        assert len(PLACE.findall(g[3])) == MAX_TITLE_RANKS
        assert f"replicated on {world // 2} ranks" in g[3]
        assert f"… and {world // 2 - MAX_TITLE_RANKS} more ranks" in g[3]
        # its holders among the drawn mesh boxes and strips (rows of 40 ranks: row 0 or 1)
        links = g[2]["links"].split()
        assert len(links) == len(rows[int(g[2]["index"][0])]) + 1
    assert len(listed_json(listed)) < 200_000
    w.close()


def test_the_widget_holds_the_dtensor_weakly(group):
    group(2)
    d = _all_ranks((2,), [Shard(0)], torch.arange(4.0))
    w = DistributedWidget(d, "d")
    before = w.picture
    del d
    gc.collect()
    assert w.dtensor is None
    w.width = 500  # nothing to lay out again: the picture as last drawn
    assert w.picture == before and "freed" in w.summary()
    assert json.loads(listed_json(w.picture)) == w.picture
    w.close()


def test_one_real_rank_links_its_own_strip_only(group):
    group(8, rank=3)
    mesh = init_device_mesh("cpu", (2, 4))
    d = distribute_tensor(torch.arange(64.0).reshape(8, 8), mesh, [Shard(0), Shard(1)])
    w = sw.show(d)
    cells = {g[2]["index"]: g for g in _groups(w.picture["items"], "sws-dcell")}
    local = d.to_local()  # rank 3 holds rows 0–3, columns 6–7
    mine = cells["0,7"]
    assert mine[3] == "d[0, 7] → rank 3 at (0, 3) local storage[1]"
    # [0, 7] is [0, 7 - 6] of rank 3's (4, 2) local tensor (the fake group moves no values)
    assert tuple(local.shape) == (4, 2)
    assert local.storage_offset() + 0 * local.stride(0) + 1 * local.stride(1) == 1
    assert sorted(mine[2]["links"].split()) == ["r3", "r3:1"]
    other = cells["7,0"]  # rank 4's: computed, its storage index not known
    assert "rank 4 at (1, 0) local index not read" in other[3]
    assert other[2]["links"] == "r4"
    w.close()


def test_refresh_reads_the_ranks_again(group):
    group(2)
    d = _all_ranks((2,), [Shard(0)], torch.arange(4.0))
    w = sw.show(d)
    titles = lambda: [g[3] for g in _groups(w.picture["items"], "sws-scell")]  # noqa: E731
    assert titles()[1].startswith("storage[1] = 1.")
    with LocalTensorMode(2):
        d.mul_(10)
    w.refresh()
    assert titles()[1].startswith("storage[1] = 10.") and titles()[3].startswith("storage[1] = 30.")
    w.close()


def test_named_and_wrapped(group):
    group(2)
    d = _all_ranks((2,), [Shard(0)], torch.arange(16.0))
    w = sw.show(weights=d, wrap=3)
    assert w.name == "weights" and w.wrap == 3
    cells = _groups(w.picture["items"], "sws-dcell")
    assert cells[0][3].startswith("weights[0] → rank 0")
    rows = {
        g[4][0][2] for g in _groups(w.picture["items"], "sws-scell") if g[2]["key"][:3] == "r0:"
    }
    assert len(rows) == 3  # 8 storage cells, 3 a row
    with pytest.raises(Exception, match="wrap"):
        w.wrap = -1
    w.close()
