"""The view-versus-copy cases: expand vs repeat, local response norm through an ``as_strided``
window, and sliding-window sums through views, im2col and loops."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from .. import tricks
from ._base import BenchContext, Case, Variant


def expand_vs_repeat(ctx: BenchContext) -> Case:
    """Case 2: expand (a zero-stride view) vs repeat (a copy), alone and under a consumer."""
    variants = _seed_variants(ctx)
    side = ctx.big_square_side()
    variants += _consumer_variants(ctx, side)
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


def _seed_variants(ctx: BenchContext) -> list[Variant]:
    """The seeds' own broadcasts: each as a view (expand, as_strided, the checked trick) and as a
    copy (repeat)."""
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
    return variants


def _consumer_variants(ctx: BenchContext, side: int) -> list[Variant]:
    """A consumer: broadcast multiply of a big batch by one row, three ways."""
    variants: list[Variant] = []
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
    return variants


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
    channels, side, kernel = (3, 40, 5) if ctx.quick else (3, 128, 5)
    variants = _windows_1d(ctx, length, width) + _windows_2d(ctx, channels, side, kernel)
    return Case(
        name="sliding_window",
        title=f"Sliding window sums: 1-D n={length} w={width}; 2-D {channels}x{side}x{side} k={kernel}",
        metric="time",
        variants=variants,
        notes=["expected: avg_pool1d/avg_pool2d times the window size"],
    )


def _windows_1d(ctx: BenchContext, length: int, width: int) -> list[Variant]:
    """Sums of every ``width``-long window of a signal of ``length``."""
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
    return variants


def _windows_2d(ctx: BenchContext, channels: int, side: int, kernel: int) -> list[Variant]:
    """Sums of every ``kernel`` x ``kernel`` window of each channel of an image."""
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

    return [
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
