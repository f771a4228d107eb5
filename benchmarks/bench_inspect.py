"""Inspector cost, measured side by side in one run (the machine is shared and noisy).

1. ``sw.inspect`` on a 10^12-element meta tensor vs a 10-element CPU tensor: the ratio should be
   about 1 (O(ndim), no values, no enumeration).
2. ``sw.overlap`` vs ``np.shares_memory(max_work=None)`` (both exact) on the same pairs of views:
   transposes, slices, expands, sliding windows, block views and random ``as_strided`` up to 6-D.
   Both answers are also compared, so the benchmark doubles as a cross-check.

Run:  python benchmarks/bench_inspect.py
"""

from __future__ import annotations

import random
import statistics
import timeit

import numpy as np
import torch

import stridewidget as sw


def best_of(fn, number: int = 200, repeat: int = 7) -> float:
    """Median seconds per call over ``repeat`` runs of ``number`` calls."""
    return statistics.median(timeit.repeat(fn, number=number, repeat=repeat)) / number


def bench_inspect() -> None:
    small = torch.arange(10.0)
    huge = torch.empty(10**6, 10**6, device="meta")
    cases = {
        "small contiguous (10)": small,
        "huge meta (1e12)": huge,
        "huge meta transposed slice": huge.t()[::3, 7:],
        "huge meta expand (1e12 over 1e6)": torch.empty(10**6, device="meta").expand(10**6, 10**6),
    }

    # Layout caches derived facts; time inspection plus the facts a user asks for first.
    def run(x):
        lay = sw.inspect(x)
        return lay.is_contiguous, lay.has_overlap, lay.touched, lay.span

    base = best_of(lambda: run(small))
    print("inspect() + flags/overlap/touched/span, median per call")
    for name, x in cases.items():
        t = best_of(lambda x=x: run(x))
        print(f"  {name:36s} {t * 1e6:8.1f} µs   ratio to small: {t / base:5.2f}")


def overlap_cases():
    x = torch.zeros(64, 64)
    flat = x.view(-1)
    yield "transpose vs itself", x.t(), x
    yield "x[:, :32] vs x[:, 32:]", x[:, :32], x[:, 32:]
    yield "x[::2] vs x[1::2]", x[::2], x[1::2]
    yield "x[:, ::2] vs x[:, 1::2] (interleaved cols)", x[:, ::2], x[:, 1::2]
    yield "row 3 expanded vs row 4", x[3].expand(8, 64), x[4]
    yield "sliding windows vs last cell", flat.unfold(0, 16, 4), flat[-1:]
    yield "sliding windows vs cell 4094", flat[:4090].unfold(0, 16, 3), flat[4094:4095]
    blocks = x.view(8, 8, 8, 8).permute(0, 2, 1, 3)
    yield "block (0,0) vs block (0,1)", blocks[0, 0], blocks[0, 1]
    yield "checkerboard [0,0] vs [1,1]", x[0::2, 0::2], x[1::2, 1::2]
    rng = random.Random(0)
    storage = torch.zeros(5000)
    for k in range(12):
        views = []
        for _ in range(2):
            ndim = rng.randint(1, 6)
            size = [rng.randint(1, 6) for _ in range(ndim)]
            stride = [rng.randint(1, 60) for _ in range(ndim)]
            reach = sum(s * (n - 1) for n, s in zip(size, stride))
            offset = rng.randint(0, 5000 - reach - 1)
            views.append(torch.as_strided(storage, size, stride, offset))
        yield f"random as_strided #{k} ({views[0].ndim}-D vs {views[1].ndim}-D)", *views


def bench_overlap() -> None:
    print("\nexact pairwise overlap: sw.overlap vs np.shares_memory(max_work=None)")
    print(f"  {'case':48s} {'answer':>6s} {'sw µs':>9s} {'numpy µs':>9s} {'sw/numpy':>9s}")
    ratios = []
    for name, a, b in overlap_cases():
        na, nb = a.numpy(), b.numpy()
        ours = sw.overlap(a, b)
        theirs = bool(np.shares_memory(na, nb, max_work=None))
        assert ours == theirs, (name, ours, theirs)
        t_sw = best_of(lambda a=a, b=b: sw.overlap(a, b), number=50, repeat=5)
        t_np = best_of(
            lambda na=na, nb=nb: np.shares_memory(na, nb, max_work=None), number=50, repeat=5
        )
        ratios.append(t_sw / t_np)
        print(f"  {name:48s} {ours!s:>6s} {t_sw * 1e6:9.1f} {t_np * 1e6:9.1f} {t_sw / t_np:9.1f}")
    print(f"  median ratio sw/numpy: {statistics.median(ratios):.1f}  (max {max(ratios):.1f})")


def bench_internal_overlap() -> None:
    """torch answers 'too hard' (2) for plain sliding windows; ours is exact."""
    print("\ninternal overlap: sw.inspect(x).has_overlap vs torch._debug_has_internal_overlap")
    x = torch.zeros(10**6)
    for name, v in {
        "unfold(0, 64, 1)": x.unfold(0, 64, 1),
        "unfold(0, 64, 64) (tiles)": x.unfold(0, 64, 64),
        "as_strided (1000,999):(1000,1)": torch.as_strided(x, (1000, 999), (1000, 1)),
        "as_strided (999,1000):(999,1) overlapping rows": torch.as_strided(
            x, (999, 1000), (999, 1)
        ),
    }.items():
        verdict = {0: "no", 1: "yes", 2: "too hard"}[torch._debug_has_internal_overlap(v)]
        t = best_of(lambda v=v: sw.inspect(v).has_overlap, number=50, repeat=5)
        print(
            f"  {name:48s} sw: {sw.inspect(v).has_overlap!s:5s} ({t * 1e6:6.1f} µs)  torch: {verdict}"
        )


def bench_hard_instances() -> None:
    """Adversarial pairs: near-equal strides, a target that no index reaches.  NumPy's exact
    solver is a plain depth-first search (exponential in ndim); ours memoises (level, remainder)
    states and solves the last two dims in closed form, so it grows far more slowly."""
    print("\nhard instances (no overlap; sizes 31 per dim, strides 1000..1000+ndim-1)")
    print(f"  {'ndim':>4s} {'sw ms':>9s} {'numpy ms':>9s} {'numpy/sw':>9s}")
    storage = torch.zeros(400_000)
    for ndim in (5, 6, 7, 8):
        a = torch.as_strided(storage, (31,) * ndim, [1000 + j for j in range(ndim)], 0)
        b = storage[50_500:50_501]
        na, nb = a.numpy(), b.numpy()
        assert sw.overlap(a, b) is False and not np.shares_memory(na, nb, max_work=None)
        t_sw = best_of(lambda a=a, b=b: sw.overlap(a, b), number=1, repeat=3)
        t_np = best_of(
            lambda na=na, nb=nb: np.shares_memory(na, nb, max_work=None), number=1, repeat=3
        )
        print(f"  {ndim:4d} {t_sw * 1e3:9.2f} {t_np * 1e3:9.2f} {t_np / t_sw:9.2f}")


if __name__ == "__main__":
    print(f"torch {torch.__version__}, numpy {np.__version__}, threads {torch.get_num_threads()}")
    bench_inspect()
    bench_overlap()
    bench_internal_overlap()
    bench_hard_instances()
