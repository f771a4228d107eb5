"""The five ``as_strided`` tricks, done right: every result is a checked view of its input.

Each function reads the input's own ``stride()`` and ``storage_offset()`` and builds the
result with :func:`stridewidget.as_strided`, which checks the new layout against the
storage bounds. Nothing here hard-codes a stride, so every trick works on sliced,
transposed, offset and otherwise non-contiguous inputs, and none of them copies data.

>>> import torch, stridewidget as sw
>>> x = torch.arange(12).reshape(3, 4)
>>> sw.tricks.sliding_window(x[1], 2)
tensor([[4, 5],
        [5, 6],
        [6, 7]])
>>> sw.same_storage(sw.tricks.transpose(x), x)
True
"""

from __future__ import annotations

import itertools
import math
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import numpy
import torch

from ._compat import dispatch_mode_base, storage_id, tree_leaves
from .adapters.as_strided import as_strided
from .adapters.objects import conversion_hint
from .errors import LayoutError
from .layout.ints import as_index, as_indices

__all__ = [
    "PeakMemory",
    "blocks",
    "broadcast",
    "checkerboard",
    "lrn",
    "merge_dims",
    "sliding_window",
    "transpose",
]


def _require_tensor(x: Any, what: str) -> torch.Tensor:
    if not isinstance(x, torch.Tensor):
        hint = (
            " Use `torch.from_numpy(x)` (no copy)."
            if isinstance(x, numpy.ndarray)
            else conversion_hint(x) or " Wrap it with `torch.as_tensor(x)`."
        )
        raise TypeError(f"{what} needs a torch.Tensor, got {type(x).__name__}.{hint}")
    return x


def _view(x: torch.Tensor, size: Sequence[int], stride: Sequence[int]) -> torch.Tensor:
    # Overlap is allowed on purpose: broadcasts and sliding windows overlap by design, and
    # the other tricks overlap exactly when their input already does.
    return as_strided(x, size, stride, x.storage_offset(), allow_overlap=True)


def _normalize_dim(dim: int, ndim: int, what: str) -> int:
    dim = as_index(dim, f"{what}: dim")
    if not -ndim <= dim < ndim:
        raise LayoutError(f"{what}: dim {dim} is out of range for a tensor with {ndim} dimensions")
    return dim % ndim


def broadcast(x: torch.Tensor, size: Sequence[int]) -> torch.Tensor:
    """Broadcast ``x`` to ``size`` with zero strides, like ``x.expand(size)``.

    Broadcast dimensions get stride 0, so every index along them reads the same storage
    element; ``-1`` keeps a dimension's size. No data is copied. Strides are exactly
    ``torch.expand``'s, including a new leading size-1 dimension's (the stride it would have
    if the dimension were contiguous, where the stride does not matter).

    >>> import torch
    >>> col = torch.tensor([[1], [2], [3]])
    >>> b = broadcast(col, (3, 4))
    >>> b.stride(), torch.equal(b, col.expand(3, 4))
    ((1, 0), True)
    >>> broadcast(torch.zeros(5), (1, 1, 5)).stride()
    (5, 5, 1)
    """
    x = _require_tensor(x, "broadcast")
    size = as_indices(size, "broadcast: size")
    new_dims = len(size) - x.dim()
    if new_dims < 0:
        raise LayoutError(
            f"broadcast: target size {size} has fewer dimensions than the input {tuple(x.shape)}; "
            "give at least as many dimensions as the input has"
        )
    out_size = [0] * len(size)
    out_stride = [0] * len(size)
    # From the last dim back, as torch's inferExpandGeometry: a new dim's stride is computed
    # from the dim after it, so the walk must go right to left.
    for i in reversed(range(len(size))):
        target = size[i]
        if i < new_dims:
            if target < 0:
                raise LayoutError(
                    f"broadcast: size {target} is not allowed for new leading dimension {i}"
                )
            have = 1
            stride = out_size[i + 1] * out_stride[i + 1] if i + 1 < len(size) else 1
        else:
            have, stride = x.shape[i - new_dims], x.stride(i - new_dims)
        if target == -1:
            target = have
        if target != have:
            if have != 1 or target < 0:
                raise LayoutError(
                    f"broadcast: dimension {i} has size {have}, which cannot be broadcast to "
                    f"{target}; only size-1 dimensions can be broadcast (use x.repeat(...) to "
                    "copy instead)"
                )
            stride = 0
        out_size[i] = target
        out_stride[i] = stride
    return _view(x, out_size, out_stride)


def sliding_window(x: torch.Tensor, size: int, step: int = 1, dim: int = -1) -> torch.Tensor:
    """All windows of ``size`` elements along ``dim``, ``step`` apart, as a view.

    Same result as ``x.unfold(dim, size, step)``: dimension ``dim`` becomes the window
    index and a new last dimension walks inside a window. Windows overlap when
    ``step < size``, so the result aliases storage: write to it only through a copy.

    >>> import torch
    >>> w = sliding_window(torch.arange(6), 3, step=2)
    >>> w, w.stride()
    (tensor([[0, 1, 2],
            [2, 3, 4]]), (2, 1))
    """
    x = _require_tensor(x, "sliding_window")
    size = as_index(size, "sliding_window: window size")
    step = as_index(step, "sliding_window: step")
    if x.dim() == 0:
        raise LayoutError(
            "sliding_window: a 0-d tensor has no dimension to slide along; reshape it to 1-d"
        )
    dim = _normalize_dim(dim, x.dim(), "sliding_window")
    length = x.shape[dim]
    if size < 0 or size > length:
        raise LayoutError(
            f"sliding_window: window size {size} does not fit in dimension {dim} of length {length}"
        )
    if step < 1:
        raise LayoutError(f"sliding_window: step must be at least 1, got {step}")
    out_size = list(x.shape)
    out_stride = list(x.stride())
    out_size[dim] = (length - size) // step + 1
    out_stride[dim] = x.stride(dim) * step
    out_size.append(size)
    out_stride.append(x.stride(dim))
    return _view(x, out_size, out_stride)


def transpose(x: torch.Tensor, dim0: int = 0, dim1: int = 1) -> torch.Tensor:
    """Swap two dimensions by swapping their sizes and strides, like ``x.transpose``.

    >>> import torch
    >>> transpose(torch.zeros(2, 3)).stride()
    (1, 3)
    """
    x = _require_tensor(x, "transpose")
    # as torch's dim wrapping: a 0-d tensor takes dim 0 / -1, and swapping it is a no-op
    dim0 = _normalize_dim(dim0, max(x.dim(), 1), "transpose")
    dim1 = _normalize_dim(dim1, max(x.dim(), 1), "transpose")
    if x.dim() == 0:
        return _view(x, [], [])
    out_size = list(x.shape)
    out_stride = list(x.stride())
    out_size[dim0], out_size[dim1] = out_size[dim1], out_size[dim0]
    out_stride[dim0], out_stride[dim1] = out_stride[dim1], out_stride[dim0]
    return _view(x, out_size, out_stride)


def merge_dims(x: torch.Tensor, start: int = 0, end: int = -1) -> torch.Tensor:
    """Merge dimensions ``start..end`` (inclusive) into one, as a view, like ``x.flatten``.

    Merging is possible without a copy only when the merged elements are evenly spaced in
    storage: for each pair of neighbouring merged dimensions (size-1 dimensions ignored),
    ``stride[i] == stride[j] * size[j]``. Otherwise this raises :class:`LayoutError`
    instead of silently copying, as ``flatten``/``reshape`` would.

    >>> import torch
    >>> merge_dims(torch.zeros(2, 3, 4), 0, 1).shape
    torch.Size([6, 4])
    >>> merge_dims(torch.zeros(3, 4).t(), 0, 1)
    Traceback (most recent call last):
    ...
    stridewidget.errors.LayoutError: merge_dims: cannot merge dims 0..1 without a copy: ...
    """
    x = _require_tensor(x, "merge_dims")
    if x.dim() == 0:
        return _view(x, (1,), (1,))
    start = _normalize_dim(start, x.dim(), "merge_dims")
    end = _normalize_dim(end, x.dim(), "merge_dims")
    if start > end:
        raise LayoutError(f"merge_dims: start dim {start} comes after end dim {end}")
    sizes, strides = list(x.shape), list(x.stride())
    merged_size = math.prod(sizes[start : end + 1])
    # Size-1 dimensions hold one element whatever their stride, so they never block a merge.
    kept = [d for d in range(start, end + 1) if sizes[d] != 1]
    merged_stride = strides[kept[-1]] if kept else 1
    if x.numel() > 0:
        for outer, inner in itertools.pairwise(kept):
            if strides[outer] != strides[inner] * sizes[inner]:
                raise LayoutError(
                    f"merge_dims: cannot merge dims {start}..{end} without a copy: "
                    f"dim {outer} has stride {strides[outer]} but dim {inner} spans "
                    f"{strides[inner]} x {sizes[inner]} = {strides[inner] * sizes[inner]} elements, "
                    "so the merged elements are not evenly spaced in storage (a transposed, "
                    "permuted or sliced pair). Use x.flatten()/x.reshape() to get a copy, "
                    "or call x.contiguous() first."
                )
    out_size = [*sizes[:start], merged_size, *sizes[end + 1 :]]
    out_stride = [*strides[:start], merged_stride, *strides[end + 1 :]]
    return _view(x, out_size, out_stride)


def _require_2d(x: torch.Tensor, what: str) -> tuple[int, int]:
    x = _require_tensor(x, what)
    if x.dim() != 2:
        raise LayoutError(f"{what}: needs a 2-d (H, W) tensor, got shape {tuple(x.shape)}")
    return x.shape[0], x.shape[1]


def checkerboard(x: torch.Tensor) -> torch.Tensor:
    """Split an ``(H, W)`` tensor (even H, W) into its four 2x2-phase sub-grids, as a view.

    The result has shape ``(2, 2, H // 2, W // 2)`` and ``result[a, b]`` equals
    ``x[a::2, b::2]``: the row phase ``a`` and column phase ``b`` step one element, the
    sub-grid steps two.

    >>> import torch
    >>> x = torch.arange(16).reshape(4, 4)
    >>> checkerboard(x)[0, 1]
    tensor([[ 1,  3],
            [ 9, 11]])
    """
    height, width = _require_2d(x, "checkerboard")
    if height % 2 or width % 2:
        raise LayoutError(f"checkerboard: H and W must be even, got shape {(height, width)}")
    row, col = x.stride()
    return _view(x, (2, 2, height // 2, width // 2), (row, col, 2 * row, 2 * col))


def blocks(x: torch.Tensor, bh: int, bw: int) -> torch.Tensor:
    """Tile an ``(H, W)`` tensor into non-overlapping ``bh x bw`` blocks, as a view.

    The result has shape ``(H // bh, W // bw, bh, bw)``; ``result[i, j]`` is the block at
    block-row ``i``, block-column ``j``. Equal to
    ``x.reshape(H // bh, bh, W // bw, bw).permute(0, 2, 1, 3)``.

    >>> import torch
    >>> blocks(torch.arange(16).reshape(4, 4), 2, 2)[1, 0]
    tensor([[ 8,  9],
            [12, 13]])
    """
    height, width = _require_2d(x, "blocks")
    bh = as_index(bh, "blocks: bh")
    bw = as_index(bw, "blocks: bw")
    if bh < 1 or bw < 1 or height % bh or width % bw:
        raise LayoutError(
            f"blocks: block size {(bh, bw)} must be positive and divide the shape {(height, width)}"
        )
    row, col = x.stride()
    return _view(x, (height // bh, width // bw, bh, bw), (bh * row, bw * col, row, col))


def lrn(
    x: torch.Tensor, size: int = 5, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0
) -> torch.Tensor:
    """Local response normalization over channels, via a sliding window on a padded buffer.

    Computes ``x / (k + alpha / size * sum_window(x**2)) ** beta`` over dimension 1, with
    the same window and zero padding as :func:`torch.nn.functional.local_response_norm`.
    ``x**2`` is written once into a zero-padded buffer; the window sum reduces a
    :func:`sliding_window` view of it, so no ``size``-times-larger temporary is built.
    Peak memory is the padded buffer plus one input-sized result (one more input-sized
    temporary when ``x`` requires grad or carries a forward-mode tangent, as autograd needs
    fresh tensors).  Integer and bool inputs give a result of the default float dtype, as
    ``local_response_norm`` does; the values are those of the input converted to that dtype
    (torch's integer path also rounds the window average down to an integer).  An empty input
    is returned as it is, whatever its dtype, as ``local_response_norm`` returns it.

    >>> import torch
    >>> x = torch.randn(2, 7, 3, 3)
    >>> torch.allclose(lrn(x), torch.nn.functional.local_response_norm(x, 5), rtol=1e-5)
    True
    """
    x = _require_tensor(x, "lrn")
    if x.dim() < 3:
        raise LayoutError(
            f"lrn: needs at least 3 dimensions (N, C, ...), got shape {tuple(x.shape)}"
        )
    size = as_index(size, "lrn: window size")
    if size < 1:
        raise LayoutError(f"lrn: window size must be at least 1, got {size}")
    if x.numel() == 0:  # local_response_norm returns an empty input itself, dtype and all
        return x
    if not (x.is_floating_point() or x.is_complex()):
        # local_response_norm's `x * x` stays integer, then `* alpha` promotes to the default
        # float dtype; converting first gives that dtype, and out= buffers of it.
        x = x.to(torch.get_default_dtype())
    channels = x.shape[1]
    before, after = size // 2, (size - 1) // 2
    records_grad = (x.requires_grad and torch.is_grad_enabled()) or _has_tangent(x)
    if records_grad:
        # out= and in-place writes cannot carry autograd history (backward or forward-mode):
        # pad a fresh x*x instead, which costs one more input-sized temporary.
        squares = torch.nn.functional.pad(x * x, [0, 0] * (x.dim() - 2) + [before, after])
    else:
        squares = x.new_zeros((x.shape[0], channels + before + after, *x.shape[2:]))
        torch.mul(x, x, out=squares.narrow(1, before, channels))
    window_sum = sliding_window(squares, size, dim=1).sum(dim=-1)
    del squares
    if records_grad:
        return x / window_sum.mul(alpha / size).add(k).pow(beta)
    # In place from here on: the denominator buffer becomes the output.
    denominator = window_sum.mul_(alpha / size).add_(k).pow_(beta)
    return torch.div(x, denominator, out=denominator)


def _has_tangent(x: torch.Tensor) -> bool:
    """Whether ``x`` is a forward-mode AD dual tensor at the current level."""
    return torch.autograd.forward_ad.unpack_dual(x).tangent is not None


class PeakMemory(dispatch_mode_base()):
    """Measure the peak bytes of tensor storage allocated by the ATen ops in a block.

    Counts each new storage an op returns (on any device), and its release when the last
    tensor using it goes away; ``peak`` is the largest total alive at once during the
    block, ``live`` what is still alive at the end (e.g. the result). Scratch memory a
    single kernel allocates and frees internally is not seen. Works on CPU, where PyTorch
    has no allocator statistics (on CUDA, ``torch.cuda.max_memory_allocated`` also works).

    >>> import torch
    >>> x = torch.zeros(1000)
    >>> with PeakMemory() as mem:
    ...     y = x.clone()
    >>> mem.peak, mem.live
    (4000, 4000)
    """

    def __init__(self) -> None:
        super().__init__()
        self.live = 0
        self.peak = 0
        self._alive: set[tuple[int, int]] = set()

    def __torch_dispatch__(
        self, func: Callable[..., Any], types: Any, args: tuple = (), kwargs: dict | None = None
    ) -> Any:
        kwargs = kwargs or {}
        # each input storage's (address, bytes) before the op: an out= argument is resized
        # into a new allocation when the result does not fit (`torch.cat(xs, out=empty(0))`)
        inputs = {
            storage_id(t.untyped_storage()): _storage_key(t.untyped_storage())
            for t in tree_leaves((args, kwargs))
            if isinstance(t, torch.Tensor) and t.device.type != "meta"
        }
        out = func(*args, **kwargs)
        for t in tree_leaves(out):
            if not isinstance(t, torch.Tensor) or t.device.type == "meta":
                continue
            storage = t.untyped_storage()
            key = _storage_key(storage)
            before = inputs.get(storage_id(storage))
            if before is not None:
                if key[1] <= before[1]:  # written in place, no allocation
                    continue
                self._release(before)  # resized: the old block is freed, a new one counts
            if key in self._alive:
                continue
            self._alive.add(key)
            self.live += key[1]
            self.peak = max(self.peak, self.live)
            weakref.finalize(storage, self._release, key)
        return out

    def _release(self, key: tuple[int, int]) -> None:
        if key in self._alive:  # a resized block was released when it was resized
            self._alive.discard(key)
            self.live -= key[1]


def _storage_key(storage: Any) -> tuple[int, int]:
    """``(first byte address, bytes)``: which block of memory a storage holds now."""
    return storage.data_ptr(), storage.nbytes()
