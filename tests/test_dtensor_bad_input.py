"""Issue 39 (review 2): bad input to the DTensor path is one clear line, never a raw error or a
silent wrong answer.

* A LocalTensor (``d.to_local()`` under ``LocalTensorMode``: every rank's local tensor at once)
  of an uneven shard has rank-dependent sizes; drawing it raised ``AttributeError:
  'LocalIntNode' object has no attribute 'expr'``.
* A DTensor whose process group was destroyed was read as if no rank were this process: its
  real local tensor (torch's ``to_local()``, still there) silently dropped.
"""

from __future__ import annotations

import pytest
import torch

import stridewidget as sw


def test_a_local_tensor_of_an_uneven_shard_is_refused_in_one_line(group):
    from torch.distributed._local_tensor import LocalTensorMode
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import Shard, distribute_tensor

    group(8)
    with LocalTensorMode(8):
        mesh = init_device_mesh("cpu", (8,))
        d = distribute_tensor(torch.arange(40.0).reshape(8, 5), mesh, [Shard(1)])
    lt = d.to_local()
    sizes = {r: tuple(t.shape) for r, t in lt._local_tensors.items()}
    assert len(set(sizes.values())) > 1  # torch's own: the ranks' sizes differ
    for draw in (sw.show, sw.render_html, sw.render_text, sw.render_svg):
        with pytest.raises(sw.LayoutError) as raised:
            draw(lt)
        assert "\n" not in str(raised.value) and "LocalTensor" in str(raised.value)
    one = lt._local_tensors[0]  # one rank's tensor, as the line says, draws
    assert "storage" in sw.render_html(one)


def test_a_dtensor_whose_group_is_gone_is_one_line(group):
    import torch.distributed as dist
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import Shard, distribute_tensor

    group(8, rank=3)
    mesh = init_device_mesh("cpu", (2, 4))
    d = distribute_tensor(torch.arange(35.0).reshape(7, 5), mesh, [Shard(0), Shard(1)])
    assert sw.inspect(d).present_ranks == (3,)  # while the group lives: rank 3's own tensor
    local_shape = d.to_local().shape
    dist.destroy_process_group()
    assert d.to_local().shape == local_shape  # torch still holds this rank's local tensor
    for call in (sw.inspect, sw.show, sw.render_html):
        with pytest.raises(sw.LayoutError) as raised:
            call(d)
        assert "\n" not in str(raised.value) and "process group is gone" in str(raised.value)


def test_partial_max_is_no_sum_of_summands(group):
    """Partial('max'): torch's full_tensor() is the max over the ranks, so no word calls the
    ranks' values summands; Partial() (sum) keeps the word."""
    import re

    from torch.distributed._local_tensor import LocalTensorMode, rank_map
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import DTensor, Partial

    group(4)
    with LocalTensorMode(4):
        mesh = init_device_mesh("cpu", (4,))
        q = DTensor.from_local(rank_map(lambda r: torch.ones(2, 3) * r), mesh, [Partial("max")])
        s = DTensor.from_local(rank_map(lambda r: torch.ones(2, 3) * r), mesh, [Partial()])
        full_max = q.full_tensor()
        full_sum = s.full_tensor()
    assert torch.equal(full_max._local_tensors[0], torch.full((2, 3), 3.0))  # max, not sum
    assert torch.equal(full_sum._local_tensors[0], torch.full((2, 3), 6.0))
    words_max = " ".join(re.findall(r">([^<]+)<", sw.render_svg(q)))
    words_sum = " ".join(re.findall(r">([^<]+)<", sw.render_svg(s)))
    assert "summand" not in words_max and "partial value" in words_max
    assert "summand" in words_sum


def test_the_uneven_words_stay_short_on_a_big_mesh(group):
    """1,024 ranks over 7 columns: the ranks holding none are one run, not 1,017 numbers (the
    review found a 6 kB line); which ranks they are is torch's chunk split."""
    import torch.distributed.tensor as dt
    from torch.distributed.device_mesh import init_device_mesh

    group(1024)
    mesh = init_device_mesh("cpu", (1024,))
    d = dt.empty(5, 7, device_mesh=mesh, placements=[dt.Shard(1)])
    holding = len(torch.arange(7).chunk(1024))  # torch: the first 7 ranks get a column each
    (line,) = sw.inspect(d).uneven_words()
    assert f"ranks {holding}–1023 hold 0" in line and len(line) < 200
