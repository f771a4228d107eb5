"""The benchmark cases: each builds its inputs, a reference result, and the variants to time.

A case builder gets a :class:`BenchContext` (device, quick or full sizes, the size of a buffer that
does not fit in the caches) and returns a :class:`Case`. Every :class:`Variant` carries the callable
to time, the result it must equal (``expected``, computed by a *different* reference implementation
wherever one exists), and the tensors it reads and writes, from which the harness counts bytes moved.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from .. import tricks

FLOAT = torch.float32


@dataclass(frozen=True)
class BenchContext:
    """What a case builder needs to size and place its tensors.

    >>> ctx = BenchContext(device=torch.device("cpu"), quick=True, big_bytes=1 << 20)
    >>> ctx.big_square_side()
    512
    """

    device: torch.device
    quick: bool
    big_bytes: int
    """Bytes of one bandwidth buffer: several times the last-level cache, so data comes from DRAM."""

    def big_square_side(self, itemsize: int = 4) -> int:
        """Side of a square matrix of ``itemsize``-byte elements that takes about ``big_bytes``."""
        return math.isqrt(self.big_bytes // itemsize)

    def randn(self, *shape: int) -> torch.Tensor:
        return torch.randn(*shape, dtype=FLOAT, device=self.device)


@dataclass
class Variant:
    """One way of computing a case's result.

    ``reads``: tensors the variant reads (each counted once: the distinct storage bytes it touches);
    ``writes``: preallocated outputs it writes into (``out=``); ``view_of``: tensors whose storage the
    result may share without reading it (views). A result in storage none of these own is counted as
    written once. ``rtol``/``atol`` are for ``torch.testing.assert_close`` against ``expected``.
    """

    name: str
    fn: Callable[[], Any]
    expected: Any
    reads: Sequence[torch.Tensor] = ()
    writes: Sequence[torch.Tensor] = ()
    view_of: Sequence[torch.Tensor] = ()
    rtol: float = 0.0
    atol: float = 0.0
    note: str = ""


@dataclass
class Case:
    """A named group of variants, plotted and tabled together."""

    name: str
    title: str
    metric: str  # "gbps" for bandwidth-bound cases, "time" for the rest (plots use it)
    variants: list[Variant]
    notes: list[str] = field(default_factory=list)


def _sum_tolerance(x: torch.Tensor) -> float:
    # float32 sums of n terms drift by about n * eps * mean|x| in the worst order; this bound is
    # loose enough for any summation order and still catches a wrong element set.
    return float(x.numel()) * 1e-6 * float(x.abs().mean()) + 1e-3


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


def expand_vs_repeat(ctx: BenchContext) -> Case:
    """Case 2: expand (a zero-stride view) vs repeat (a copy), alone and under a consumer."""
    variants: list[Variant] = []
    # Seed 000's example: (3, 1) -> (3, 4).
    column = ctx.randn(3, 1)
    column_copy = column.repeat(1, 4)
    variants += [
        Variant(
            "seed000 (3,1).expand(3,4)", lambda: column.expand(3, 4), column_copy, view_of=[column]
        ),
        Variant(
            "seed000 torch.as_strided((3,4),(1,0))",
            lambda: torch.as_strided(column, (3, 4), (1, 0)),
            expected=column_copy,
            view_of=[column],
        ),
        Variant(
            "seed000 sw.tricks.broadcast (checked)",
            lambda: tricks.broadcast(column, (3, 4)),
            expected=column_copy,
            view_of=[column],
        ),
        Variant(
            "seed000 (3,1).repeat(1,4)",
            lambda: column.repeat(1, 4),
            expected=column_copy,
            reads=[column],
        ),
    ]
    # Seed 002's table: (1, 512) broadcast to batch 1024.
    batch, features = 1024, 512
    row = ctx.randn(1, features)
    row_copy = row.repeat(batch, 1)
    variants += [
        Variant(
            f"seed002 (1,{features}).expand({batch},{features})",
            lambda: row.expand(batch, features),
            expected=row_copy,
            view_of=[row],
        ),
        Variant(
            f"seed002 (1,{features}).repeat({batch},1)",
            lambda: row.repeat(batch, 1),
            expected=row_copy,
            reads=[row],
        ),
    ]
    # Seed 002's batch_augment: (3, 224, 224) to a batch of 256 (quick: 16).
    images = 16 if ctx.quick else 256
    sample = ctx.randn(3, 224, 224)
    sample_batch = sample.unsqueeze(0).repeat(images, 1, 1, 1)
    variants += [
        Variant(
            f"seed002 batch_augment expand to {images}",
            lambda: sample.unsqueeze(0).expand(images, -1, -1, -1),
            expected=sample_batch,
            view_of=[sample],
        ),
        Variant(
            f"seed002 batch_augment repeat({images},1,1,1)",
            lambda: sample.repeat(images, 1, 1, 1),
            expected=sample_batch,
            reads=[sample],
        ),
    ]
    # A consumer: broadcast multiply of a big batch by one row, three ways.
    side = ctx.big_square_side()
    data = ctx.randn(side, side)
    weights = ctx.randn(1, side)
    product = data * weights.repeat(side, 1)
    variants += [
        Variant(
            "consumer x * w (implicit broadcast)",
            lambda: data * weights,
            expected=product,
            reads=[data, weights],
        ),
        Variant(
            "consumer x * w.expand(n, -1)",
            lambda: data * weights.expand(side, -1),
            expected=product,
            reads=[data, weights],
        ),
        Variant(
            "consumer x * w.repeat(n, 1)",
            lambda: data * weights.repeat(side, 1),
            expected=product,
            reads=[data, weights],
            note="repeat's copy is inside the timed call",
        ),
    ]
    return Case(
        name="expand_repeat",
        title="expand vs repeat: time and new memory",
        metric="time",
        variants=variants,
        notes=[
            "view variants read and write nothing (bytes moved 0)",
            f"consumer: float32 {side}x{side} times a broadcast row",
        ],
    )


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


def lrn_naive(
    x: torch.Tensor, size: int = 5, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0
) -> torch.Tensor:
    """Local response norm with a Python loop over channels (same formula as ``F.local_response_norm``).

    >>> x = torch.randn(2, 6, 3, 3)
    >>> torch.testing.assert_close(lrn_naive(x), F.local_response_norm(x, 5))
    """
    out = torch.empty_like(x)
    channels = x.shape[1]
    for channel in range(channels):
        lo = max(0, channel - size // 2)
        hi = min(channels, channel + (size - 1) // 2 + 1)
        window_sum = (x[:, lo:hi] ** 2).sum(1)
        out[:, channel] = x[:, channel] / (k + alpha / size * window_sum) ** beta
    return out


def local_response_norm(ctx: BenchContext) -> Case:
    """Case 4: LRN three ways, with peak extra memory."""
    shape = (2, 32, 28, 28) if ctx.quick else (8, 64, 56, 56)
    x = ctx.randn(*shape)
    expected = F.local_response_norm(x, 5)
    tol = {"rtol": 1e-4, "atol": 1e-5}
    return Case(
        name="lrn",
        title=f"Local response norm, size 5, input {shape}",
        metric="time",
        variants=[
            Variant("naive loop over channels", lambda: lrn_naive(x), expected, [x], **tol),
            Variant(
                "sw.tricks.lrn (as_strided window)", lambda: tricks.lrn(x), expected, [x], **tol
            ),
            Variant(
                "F.local_response_norm", lambda: F.local_response_norm(x, 5), expected, [x], **tol
            ),
        ],
        notes=["expected: F.local_response_norm; seed 000's own lrn code uses another formula"],
    )


def sliding_windows(ctx: BenchContext) -> Case:
    """Case 5: window sums through views, through im2col, and through a Python loop."""
    length, width = (2048, 32) if ctx.quick else (16384, 64)
    signal = ctx.randn(length)
    expected_1d = F.avg_pool1d(signal.view(1, 1, -1), width, stride=1).view(-1) * width
    tol_1d = {"rtol": 1e-4, "atol": 1e-4 * width}
    variants = [
        Variant(
            f"1-D sw.tricks.sliding_window(x, {width}).sum(-1)",
            lambda: tricks.sliding_window(signal, width).sum(-1),
            expected_1d,
            [signal],
            **tol_1d,
        ),
        Variant(
            f"1-D x.unfold(0, {width}, 1).sum(-1)",
            lambda: signal.unfold(0, width, 1).sum(-1),
            expected_1d,
            [signal],
            **tol_1d,
        ),
        Variant(
            "1-D F.unfold (im2col copy).sum(1)",
            lambda: F.unfold(signal.view(1, 1, 1, -1), (1, width)).sum(1).view(-1),
            expected_1d,
            [signal],
            **tol_1d,
        ),
        Variant(
            "1-D Python loop over windows",
            lambda: torch.stack([signal[i : i + width].sum() for i in range(length - width + 1)]),
            expected_1d,
            [signal],
            **tol_1d,
        ),
    ]
    channels, side, kernel = (3, 40, 5) if ctx.quick else (3, 128, 5)
    image = ctx.randn(channels, side, side)
    out_side = side - kernel + 1
    expected_2d = F.avg_pool2d(image.unsqueeze(0), kernel, stride=1)[0] * kernel**2
    tol_2d = {"rtol": 1e-4, "atol": 1e-4 * kernel**2}

    def loop_2d() -> torch.Tensor:
        rows = [
            torch.stack(
                [image[:, i : i + kernel, j : j + kernel].sum((1, 2)) for j in range(out_side)], -1
            )
            for i in range(out_side)
        ]
        return torch.stack(rows, 1)

    variants += [
        Variant(
            f"2-D sw.tricks.sliding_window x2 ({kernel}x{kernel}).sum",
            lambda: tricks.sliding_window(
                tricks.sliding_window(image, kernel, dim=1), kernel, dim=2
            ).sum((-1, -2)),
            expected_2d,
            [image],
            **tol_2d,
        ),
        Variant(
            "2-D x.unfold(1,k,1).unfold(2,k,1).sum",
            lambda: image.unfold(1, kernel, 1).unfold(2, kernel, 1).sum((-1, -2)),
            expected_2d,
            [image],
            **tol_2d,
        ),
        Variant(
            "2-D F.unfold (im2col copy).sum",
            lambda: (
                F.unfold(image.unsqueeze(0), kernel)
                .view(channels, kernel * kernel, out_side, out_side)
                .sum(1)
            ),
            expected_2d,
            [image],
            **tol_2d,
        ),
        Variant("2-D Python loop over windows", loop_2d, expected_2d, [image], **tol_2d),
    ]
    return Case(
        name="sliding_window",
        title=f"Sliding window sums: 1-D n={length} w={width}; 2-D {channels}x{side}x{side} k={kernel}",
        metric="time",
        variants=variants,
        notes=["expected: avg_pool1d/avg_pool2d times the window size"],
    )


def implicit_contiguity(ctx: BenchContext) -> Case:
    """Case 6: letting an op take a non-contiguous input vs calling .contiguous() first."""
    side = ctx.big_square_side()
    x = ctx.randn(side, side)
    y = x.t()
    y_plus_one = x.t().contiguous() + 1
    variants = [
        Variant("y + 1 (y = x.t())", lambda: y + 1, y_plus_one, [y]),
        Variant(
            "y.contiguous() + 1",
            lambda: y.contiguous() + 1,
            y_plus_one,
            [y],
            note="one extra full copy, and twice the new memory",
        ),
    ]
    size = 512 if ctx.quick else 1024
    a = ctx.randn(size, size)
    b = ctx.randn(size, size)
    b_t_contiguous = b.t().contiguous()
    product = (a.double() @ b.double().t()).to(FLOAT)
    mm_tol = {"rtol": 1e-4, "atol": 1e-4 * math.sqrt(size)}
    variants += [
        Variant(
            f"matmul a @ b.t() ({size}^2, transposed operand)",
            lambda: a @ b.t(),
            product,
            [a, b],
            **mm_tol,
        ),
        Variant(
            "matmul a @ b.t().contiguous() (copy inside)",
            lambda: a @ b.t().contiguous(),
            product,
            [a, b],
            **mm_tol,
        ),
        Variant(
            "matmul a @ c (c contiguous, made beforehand)",
            lambda: a @ b_t_contiguous,
            product,
            [a, b_t_contiguous],
            **mm_tol,
        ),
    ]
    linear = nn.Linear(size, size, device=ctx.device, dtype=FLOAT)
    features_major = ctx.randn(size, size)  # stored (in_features, batch)
    batch_view = features_major.t()  # (batch, in_features), non-contiguous
    batch_contiguous = batch_view.contiguous()
    expected_linear = (
        batch_view.double() @ linear.weight.detach().double().t() + linear.bias.detach().double()
    ).to(FLOAT)
    params = [linear.weight, linear.bias]
    variants += [
        Variant(
            "nn.Linear(non-contiguous input)",
            lambda: linear(batch_view),
            expected_linear,
            [batch_view, *params],
            **mm_tol,
        ),
        Variant(
            "nn.Linear(input.contiguous())",
            lambda: linear(batch_view.contiguous()),
            expected_linear,
            [batch_view, *params],
            **mm_tol,
        ),
        Variant(
            "nn.Linear(contiguous input made beforehand)",
            lambda: linear(batch_contiguous),
            expected_linear,
            [batch_contiguous, *params],
            **mm_tol,
        ),
    ]
    return Case(
        name="contiguity",
        title="Implicit vs explicit contiguity",
        metric="time",
        variants=variants,
        notes=[f"y: float32 {side}x{side}; matmul and Linear: {size}x{size}, float64 references"],
    )


def resnet_stem(device: torch.device) -> nn.Module:
    """The first layers of a ResNet: 7x7/2 conv, BN, ReLU, 3x3/2 max-pool, 3x3 conv, BN, ReLU.

    >>> resnet_stem(torch.device("cpu"))(torch.zeros(1, 3, 32, 32)).shape
    torch.Size([1, 64, 8, 8])
    """
    stem = nn.Sequential(
        nn.Conv2d(3, 64, 7, stride=2, padding=3, bias=False),
        nn.BatchNorm2d(64),
        nn.ReLU(inplace=True),
        nn.MaxPool2d(3, stride=2, padding=1),
        nn.Conv2d(64, 64, 3, padding=1, bias=False),
        nn.BatchNorm2d(64),
        nn.ReLU(inplace=True),
    )
    return stem.to(device).eval()


def conv_layout(ctx: BenchContext) -> Case:
    """Case 7: the same conv stack on NCHW, channels-last and permuted input."""
    batch, side = (1, 64) if ctx.quick else (8, 224)
    torch.manual_seed(0)
    model = resnet_stem(ctx.device)
    model_channels_last = resnet_stem(ctx.device).to(memory_format=torch.channels_last)
    model_channels_last.load_state_dict(model.state_dict())
    x = ctx.randn(batch, 3, side, side)
    x_channels_last = x.contiguous(memory_format=torch.channels_last)
    # Stored (N, C, W, H) and transposed to NCHW: non-contiguous and not channels-last either.
    x_transposed = x.transpose(2, 3).contiguous().transpose(2, 3)
    expected = model(x)
    params = list(model.parameters())
    # cuDNN convolutions run in TF32 by default (torch.backends.cudnn.allow_tf32), and NCHW and
    # channels-last pick different algorithms; a wrong layout would be off by O(1), not 1e-2.
    tol = (
        {"rtol": 2e-2, "atol": 2e-2} if ctx.device.type == "cuda" else {"rtol": 1e-3, "atol": 1e-3}
    )
    variants = [
        Variant("NCHW contiguous input", lambda: model(x), expected, [x, *params], **tol),
        Variant(
            "channels_last input + channels_last model",
            lambda: model_channels_last(x_channels_last),
            expected,
            [x_channels_last, *params],
            **tol,
        ),
        Variant(
            "channels_last input, NCHW model",
            lambda: model(x_channels_last),
            expected,
            [x_channels_last, *params],
            **tol,
            note="an NHWC array permuted to NCHW has exactly these strides",
        ),
        Variant(
            "H/W-transposed input (non-contiguous)",
            lambda: model(x_transposed),
            expected,
            [x_transposed, *params],
            **tol,
        ),
        Variant(
            "H/W-transposed input .contiguous() first",
            lambda: model(x_transposed.contiguous()),
            expected,
            [x_transposed, *params],
            **tol,
        ),
    ]
    return Case(
        name="conv",
        title=f"Conv input layout: ResNet stem on {batch}x3x{side}x{side}",
        metric="time",
        variants=variants,
        notes=["eval mode, no grad; bytes moved: input + parameters + output (compute-bound)"],
    )


#: Case builders by name, in run order. ``ceiling`` is always measured first.
CASES: dict[str, Callable[[BenchContext], Case]] = {
    "ceiling": ceiling,
    "layout": layout_bandwidth,
    "expand_repeat": expand_vs_repeat,
    "copy": copy_methods,
    "lrn": local_response_norm,
    "sliding_window": sliding_windows,
    "contiguity": implicit_contiguity,
    "conv": conv_layout,
}
