"""A DTensor's live picture in Chromium (``sw.show(d)`` on a kernel-free page): hover a global
element and the storage cell holding it lights up in every rank strip that holds it, the status
line naming the ranks and local storage indices; hover a rank's mesh box and its elements light.
Oracle: every rank's ``to_local()`` under ``LocalTensorMode`` (a fake process group), brute force
over each local tensor's elements (the source an arange: a value names its element)."""

from __future__ import annotations

import itertools

import pytest
import torch
import torch.distributed as dist
from playwright.sync_api import expect

from stridewidget.notebook.distributed import DistributedWidget
from stridewidget.notebook.page import widget_page

pytestmark = pytest.mark.browser


def test_hover_links_each_element_to_every_holder_in_the_browser(page, tmp_path):
    from torch.distributed._local_tensor import LocalTensorMode
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import Replicate, Shard, distribute_tensor
    from torch.testing._internal.distributed.fake_pg import FakeStore

    dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=4)
    try:
        with LocalTensorMode(4):
            mesh = init_device_mesh("cpu", (2, 2))
            d = distribute_tensor(torch.arange(12.0).reshape(3, 4), mesh, [Shard(1), Replicate()])
        held: dict[int, set] = {}
        for rank, local in d.to_local()._local_tensors.items():
            for idx in itertools.product(*(range(n) for n in local.shape)):
                cell = local.storage_offset() + sum(i * s for i, s in zip(idx, local.stride()))
                held.setdefault(int(local[idx].item()), set()).add(f"r{rank}:{cell}")
        # one strip per distinct share: the lowest rank of each replica group (torch's values)
        shares: dict[frozenset, int] = {}
        for rank, local in sorted(d.to_local()._local_tensors.items()):
            shares.setdefault(frozenset(local.flatten().tolist()), rank)
        drawn = set(shares.values())
        w = DistributedWidget(d, "d")
        out = tmp_path / "dtensor.html"
        out.write_text(widget_page(w))
        w.close()
    finally:
        dist.destroy_process_group()
    page.goto(out.as_uri())
    root = page.locator(".sw-root")
    expect(root.locator("g.sws-dcell")).to_have_count(12, timeout=30_000)
    lit = "g => [...g.ownerSVGElement.querySelectorAll('g.sws-scell.sw-hl')].map(n => n.dataset.key).sort()"
    for i, j in [(0, 0), (1, 3), (2, 2)]:
        cell = root.locator(f'g.sws-dcell[data-index="{i},{j}"]')
        cell.hover()
        assert set(cell.evaluate(lit)) == {
            k for k in held[4 * i + j] if int(k[1:].split(":")[0]) in drawn
        }
        status = root.locator(".sw-status").inner_text()
        assert "replicated on 2 ranks" in status
        for key in held[4 * i + j]:
            rank, at = key[1:].split(":")
            assert f"rank {rank} at" in status and f"local storage[{at}]" in status
    box = root.locator('g.sws-mesh-rank[data-rank="2"]')
    box.hover()
    mine = box.evaluate(
        "g => [...g.ownerSVGElement.querySelectorAll('g.sws-dcell.sw-hl')].map(n => n.dataset.index)"
    )
    assert sorted(mine) == sorted(f"{i},{j}" for i in range(3) for j in (2, 3))
