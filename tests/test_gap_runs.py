"""Issue 36, truth: a storage gap too long to count cell by cell said "not shown" whenever more
than one tensor met it (``x[::1000]`` beside ``x[3::777]``), or one tensor read it as more than
one run (``x.view(1000, 1000)[:, :3]``).  It is counted now, as the union of the tensors'
arithmetic runs: checked against torch itself, over ``torch.arange`` (each element's value is its
storage index, so the cells a view reads are its values)."""

from __future__ import annotations

import random

import pytest
import torch

from stridewidget.limits import GAP_COUNT_LIMIT
from stridewidget.scene.build import build_scene

N = 10**6


def _views(rng: random.Random, x: torch.Tensor) -> dict[str, torch.Tensor]:
    """Two or three views of ``x`` that read it sparsely, each a few arithmetic runs."""
    makers = [
        lambda: x[rng.randrange(50) :: rng.choice([7, 100, 777, 1000, 1001, 10007])],
        lambda: x.view(1000, 1000)[:, rng.randrange(990) :][:, : rng.randint(1, 5)],
        lambda: x.view(1000, 1000)[
            rng.randrange(3) :: rng.choice([2, 3, 7]), :: rng.choice([250, 333, 500])
        ],
        lambda: x.view(500, 2000)[:, :4].t(),
        lambda: x[: 2000 * 300].view(300, 2000)[:, 5:8].unsqueeze(0).expand(2, 300, 3),
        lambda: x[rng.randrange(1000) :: 999].unfold(0, 3, 2),
        lambda: x[rng.randrange(10) :: 3][:30],  # dense enough near the start, no long gap
    ]
    return {f"v{k}": rng.choice(makers)() for k in range(rng.randint(2, 3))}


@pytest.mark.parametrize("seed", range(12))
def test_a_long_gap_under_several_tensors_counts_the_cells_they_read(seed):
    rng = random.Random(seed)
    x = torch.arange(float(N))
    views = _views(rng, x)
    read = set()  # torch's own answer: the values a view reads are the storage indices
    for v in views.values():
        read.update(int(c) for c in v.flatten().tolist())
    storage = build_scene(views)["storages"][0]
    long_gaps = [
        g
        for g in storage["segments"]
        if g["kind"] == "gap" and g["in_span"] and g["stop"] - g["start"] > GAP_COUNT_LIMIT
    ]
    assert long_gaps  # the case reaches the counting this test is about
    for gap in long_gaps:
        assert gap["read"] is not None, gap  # counted, not "not shown"
        assert gap["read"] == sum(1 for c in read if gap["start"] <= c < gap["stop"]), gap


def test_a_gap_among_many_runs_tries_a_bounded_number_of_intersections(monkeypatch):
    """Hostile review (2026-12-05): 31 tensors of 64 runs each with distinct residues, and 30
    one-element tensors cutting their span into 31 long gaps, took ``build_scene`` 23 s (0.23 s
    without the run counting): every visited intersection tried every later run.  Each gap now
    tries at most ``_MOST_MEETS`` intersections (then "not shown"): counted by a wrapper."""
    from stridewidget.scene import runs

    calls: list[int] = []
    meet = runs._meet

    def counted(a, b):
        calls[-1] += 1
        return meet(a, b)

    union = runs._union_count

    def per_gap(found):
        calls.append(0)
        return union(found)

    monkeypatch.setattr(runs, "_meet", counted)
    monkeypatch.setattr(runs, "_union_count", per_gap)
    base, k, length = torch.empty(10**10, device="meta"), 31, 10**6
    views = {f"v{i}": base.as_strided((64, length), (1, 64 * k), 64 * i) for i in range(k)}
    span = 64 * k * length
    views.update({f"p{j}": base[(j + 1) * span // 31 :][:1] for j in range(30)})
    build_scene(views)
    assert len(calls) >= 20 and max(calls) <= runs._MOST_MEETS
