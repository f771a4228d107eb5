"""The bandwidth-bound cases: the run's ceiling (a contiguous copy), layout and bandwidth (sums
and adds over strided views), and the ways to copy a tensor."""

from __future__ import annotations

import torch

from ._base import FLOAT, BenchContext, Case, Variant, _sum_tolerance


def ceiling(ctx: BenchContext) -> Case:
    """Case 8, measured first: a large contiguous copy, the run's bandwidth ceiling."""
    src = ctx.randn(ctx.big_bytes // 4)
    dst = torch.empty_like(src)
    return Case(
        name="ceiling",
        title=f"Ceiling: contiguous copy of {src.nbytes / 2**20:.0f} MiB (read + write)",
        metric="gbps",
        variants=[
            Variant(
                "dst.copy_(src)", lambda: dst.copy_(src), expected=src, reads=[src], writes=[dst]
            )
        ],
        notes=[
            "peak GB/s of this run = bytes moved (read src + write dst) / median time",
            "read-mostly kernels (a sum) can beat it: a copy also reads each destination cache "
            "line before writing it (write-allocate), traffic the counted bytes leave out",
        ],
    )


def layout_bandwidth(ctx: BenchContext) -> Case:
    """Case 1: sum and elementwise add over a contiguous tensor, its transpose and gapped views."""
    side = ctx.big_square_side()
    x = ctx.randn(side, side)
    gaps = (2, 16) if ctx.quick else (2, 4, 8, 16)
    variants = [*_sum_variants(x, gaps), *_add_variants(ctx, x, gaps)]
    return Case(
        name="layout",
        title=f"Layout and bandwidth: float32 {side}x{side} ({x.nbytes / 2**20:.0f} MiB)",
        metric="gbps",
        variants=variants,
        notes=[
            "bytes moved count only the elements used; a gapped view with k*4 < 64 bytes still pulls "
            "whole cache lines, so its effective GB/s falls with k"
        ],
    )


def _sum_variants(x: torch.Tensor, gaps: tuple[int, ...]) -> list[Variant]:
    """Full sums over ``x``, its transpose and its column-gapped views."""
    variants: list[Variant] = []

    def sum_variant(name: str, view: torch.Tensor, note: str = "") -> Variant:
        return Variant(
            f"sum {name}",
            view.sum,
            expected=view.sum(dtype=torch.float64).to(FLOAT),
            reads=[view],
            rtol=1e-5,
            atol=_sum_tolerance(view),
            note=note,
        )

    variants.append(sum_variant("x (contiguous)", x))
    variants.append(
        sum_variant("x.t()", x.t(), "a full reduction walks storage order, whatever the strides")
    )
    variants += [sum_variant(f"x[:, ::{k}]", x[:, ::k]) for k in gaps]
    return variants


def _add_variants(ctx: BenchContext, x: torch.Tensor, gaps: tuple[int, ...]) -> list[Variant]:
    """``+ 1`` over ``x``, its transpose and its gapped views, into new or preallocated outputs."""
    variants: list[Variant] = []
    out_same = torch.empty_like(x)
    plus_one = x + 1
    transposed_plus_one = x.t().contiguous() + 1
    variants.append(
        Variant(
            "add x + 1 -> contiguous out",
            lambda: torch.add(x, 1, out=out_same),
            expected=plus_one,
            reads=[x],
            writes=[out_same],
        )
    )
    variants.append(
        Variant(
            "add x + 1 (new output)",
            lambda: x + 1,
            expected=plus_one,
            reads=[x],
            note="includes allocating the output",
        )
    )
    transposed = x.t()
    variants.append(
        Variant(
            "add x.t() + 1 -> contiguous out",
            lambda: torch.add(transposed, 1, out=out_same),
            expected=transposed_plus_one,
            reads=[transposed],
            writes=[out_same],
            note="reads along columns: a transposing copy",
        )
    )
    variants.append(
        Variant(
            "add x.t() + 1 (new output, keeps x.t()'s strides)",
            lambda: transposed + 1,
            expected=transposed_plus_one,
            reads=[transposed],
            note="TensorIterator gives the output the input's memory order",
        )
    )
    for k in gaps:
        gapped = x[:, ::k]
        out_gapped = torch.empty(gapped.shape, dtype=FLOAT, device=ctx.device)
        variants.append(
            Variant(
                f"add x[:, ::{k}] + 1 -> contiguous out",
                lambda gapped=gapped, out_gapped=out_gapped: torch.add(gapped, 1, out=out_gapped),
                expected=gapped.contiguous() + 1,
                reads=[gapped],
                writes=[out_gapped],
            )
        )
    return variants


def copy_methods(ctx: BenchContext) -> Case:
    """Case 3: the ways to copy a tensor, on contiguous and on transposed input."""
    side = ctx.big_square_side()
    x = ctx.randn(side, side)
    transposed = x.t()
    host_round_trip = (
        "a host round trip" if ctx.device.type != "cpu" else "on CPU: .cpu()/.to() are no-ops"
    )
    preallocated = torch.empty_like(x)
    variants = [
        Variant(
            "preallocated.copy_(x) (no new memory)",
            lambda: preallocated.copy_(x),
            expected=x,
            reads=[x],
            writes=[preallocated],
            note="the same copy without allocating: the difference is the allocation's cost",
        ),
        Variant("x.clone()", x.clone, expected=x, reads=[x]),
        Variant(
            "torch.empty_like(x).copy_(x)",
            lambda: torch.empty_like(x).copy_(x),
            expected=x,
            reads=[x],
        ),
        Variant(
            "x.cpu().clone().to(device)",
            lambda: x.cpu().clone().to(ctx.device),
            expected=x,
            reads=[x],
            note=host_round_trip,
        ),
        Variant(
            "x.contiguous() on contiguous x",
            x.contiguous,
            expected=x,
            view_of=[x],
            note="returns x itself: no copy, nothing moved",
        ),
        Variant(
            "x.t().clone() (keeps strides)",
            transposed.clone,
            expected=transposed,
            reads=[transposed],
            note="preserve_format: a straight copy",
        ),
        Variant(
            "x.t().contiguous()",
            transposed.contiguous,
            expected=transposed,
            reads=[transposed],
            note="a transposing copy",
        ),
        Variant(
            "x.t().clone(memory_format=contiguous_format)",
            lambda: transposed.clone(memory_format=torch.contiguous_format),
            expected=transposed,
            reads=[transposed],
        ),
    ]
    notes = [
        f"x: float32 {side}x{side} ({x.nbytes / 2**20:.0f} MiB)",
        "on CPU a fresh large buffer is new pages from the OS: its first write page-faults, "
        "which is part of what clone() costs",
    ]
    if not ctx.quick:
        gib = ctx.randn(2**28)  # 1 GiB of float32: seed 001's size
        variants.append(
            Variant("1 GiB x.clone() (seed 001's size)", gib.clone, expected=gib, reads=[gib])
        )
        variants.append(
            Variant(
                "1 GiB torch.empty_like(x).copy_(x)",
                lambda: torch.empty_like(gib).copy_(gib),
                expected=gib,
                reads=[gib],
            )
        )
    return Case(name="copy", title="Copy methods", metric="gbps", variants=variants, notes=notes)
