"""The compute-bound cases: implicit vs explicit contiguity (elementwise, matmul, Linear) and the
conv input layout (a ResNet stem on NCHW, channels-last and permuted input)."""

from __future__ import annotations

import math

import torch
from torch import nn

from ._base import FLOAT, BenchContext, Case, Variant


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
    mm_tol = {"rtol": 1e-4, "atol": 1e-4 * math.sqrt(size)}
    variants += _matmul_variants(ctx, size, mm_tol)
    variants += _linear_variants(ctx, size, mm_tol)
    return Case(
        name="contiguity",
        title="Implicit vs explicit contiguity",
        metric="time",
        variants=variants,
        notes=[f"y: float32 {side}x{side}; matmul and Linear: {size}x{size}, float64 references"],
    )


def _matmul_variants(ctx: BenchContext, size: int, mm_tol: dict[str, float]) -> list[Variant]:
    """``a @ b.t()``: the transposed operand as it is, made contiguous inside, made beforehand."""
    a = ctx.randn(size, size)
    b = ctx.randn(size, size)
    b_t_contiguous = b.t().contiguous()
    product = (a.double() @ b.double().t()).to(FLOAT)
    return [
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


def _linear_variants(ctx: BenchContext, size: int, mm_tol: dict[str, float]) -> list[Variant]:
    """``nn.Linear`` on a non-contiguous batch, on its ``.contiguous()``, on one made beforehand."""
    linear = nn.Linear(size, size, device=ctx.device, dtype=FLOAT)
    features_major = ctx.randn(size, size)  # stored (in_features, batch)
    batch_view = features_major.t()  # (batch, in_features), non-contiguous
    batch_contiguous = batch_view.contiguous()
    expected_linear = (
        batch_view.double() @ linear.weight.detach().double().t() + linear.bias.detach().double()
    ).to(FLOAT)
    params = [linear.weight, linear.bias]
    return [
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
