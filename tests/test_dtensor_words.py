"""A DTensor's words (issue 39, review 3): singular and plural against the counts torch gives,
a mesh coordinate taken for a rank, and a redistribution's words about the padding torch's
collectives send for uneven chunks (against ``torch.chunk``'s sizes).  One CPU process, a fake
process group, every rank's local tensor under ``LocalTensorMode``."""

from __future__ import annotations

import math
import re

import pytest
import torch
import torch.distributed as dist

import stridewidget as sw

if not dist.is_available():
    pytest.skip("torch.distributed is not available in this torch build", allow_module_level=True)

from torch.distributed._local_tensor import LocalTensorMode
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import Replicate, Shard, distribute_tensor


def _all_ranks(mesh_shape, placements, source):
    with LocalTensorMode(math.prod(mesh_shape)):
        return distribute_tensor(source, init_device_mesh("cpu", mesh_shape), placements)


def _counted_words(text: str) -> list[tuple[str, int]]:
    """Each ``rows 4–7`` / ``row 3`` / ``columns 0, 2`` in ``text`` with how many indices it names."""
    found = []
    pattern = r"\b(rows?|columns?|elements?) (\d+(?:–\d+)?(?:, \d+)*)"
    for word, said in re.findall(pattern, text):
        count = 0
        for part in said.split(", "):
            a, _, b = part.partition("–")
            count += int(b or a) - int(a) + 1
        found.append((word, count))
    return found


@pytest.mark.parametrize(
    "mesh_shape, shape, placements",
    [
        ((4,), (4, 6), [Shard(0)]),  # one row each: "row 2"
        ((2,), (4, 6), [Shard(0)]),  # two rows each: "rows 2–3"
        ((6,), (4, 6), [Shard(1)]),  # one column each
        ((4,), (4,), [Shard(0)]),  # one element each
        ((2, 2), (2, 4), [Shard(0), Shard(1)]),
    ],
)
def test_a_rank_names_one_row_in_the_singular(group, mesh_shape, shape, placements):
    group(math.prod(mesh_shape))
    d = _all_ranks(mesh_shape, placements, torch.arange(float(math.prod(shape))).reshape(shape))
    lay = sw.inspect(d)
    locals_ = d.to_local()._local_tensors
    for shard in lay.ranks:
        words = _counted_words(shard.explain().split(": ")[0])
        assert words, shard.explain()
        for word, count in words:
            dim = {"row": 0, "element": 0, "column": 1}[word.rstrip("s")]
            assert count == locals_[shard.rank].shape[dim]  # torch's own local shape
            assert word.endswith("s") == (count != 1), shard.explain()


def test_counts_of_ranks_agree_with_their_noun(group):
    group(17)
    d = _all_ranks((17,), [Shard(0)], torch.arange(34.0).reshape(17, 2))
    text = sw.inspect(d).explain()
    assert "… and 1 more rank\n" in text + "\n"  # 17 ranks, 16 described one by one
    for n, noun in re.findall(r"\b(\d+) (?:more )?(ranks?|coordinates?|rows?|columns?)\b", text):
        assert noun.endswith("s") == (int(n) != 1), (n, noun, text)


def test_a_rank_is_found_by_its_mesh_coordinate(group):
    group(8)
    d = _all_ranks((2, 4), [Shard(0), Shard(1)], torch.arange(32.0).reshape(4, 8))
    lay = sw.inspect(d)
    grid = d.device_mesh.mesh.tolist()
    for i in range(2):
        for j in range(4):
            shard = lay.rank((i, j))
            assert shard.rank == grid[i][j] and shard.coordinate == (i, j)
            assert lay.rank(grid[i][j]) == shard
    for bad in [(2, 0), (0, 4), (1,), (0, 0, 0), (-1, 0)]:
        with pytest.raises(KeyError) as error:
            lay.rank(bad)
        message = str(error.value)
        assert "\n" not in message and "(2, 4)" in message, message


def test_redistribute_says_the_padding_torch_sends_is_excluded(group):
    group(4)
    source = torch.arange(14.0).reshape(7, 2)
    d = _all_ranks((4,), [Shard(0)], source)
    words = sw.inspect(d).redistribute([Replicate()]).explain()
    chunks = [c.shape[0] for c in torch.chunk(source, 4)]  # torch's split of dim 0
    assert "padding excluded" in words
    (line,) = [w for w in words.splitlines() if w.startswith("uneven: dim 0")]
    assert f"padded to {max(chunks)}" in line
    for size in set(chunks) - {max(chunks)}:
        assert f"hold {size} " in line or f"holds {size} " in line
    even = _all_ranks((4,), [Shard(0)], torch.arange(16.0).reshape(8, 2))
    assert "padding" not in sw.inspect(even).redistribute([Replicate()]).explain()
    # a dim whose split stays the same is not re-split: no collective pads it
    kept = sw.inspect(d).redistribute([Shard(0)]).explain()
    assert "padding" not in kept
