"""The fixes the audit can apply and measure: each takes a model and its inputs (deep copies) and
returns them changed (:func:`to_channels_last`, :func:`contiguous_input`, :func:`relaid_parameter`,
:func:`input_stored_for`), and the layout arithmetic they share (:func:`view_order`,
:func:`laid_out_for`, :func:`layout_code`, :func:`contiguous_if_channels_last`)."""

from __future__ import annotations

from typing import Any

import torch

from ...layout.layout import Layout

__all__ = [
    "channels_last_inputs",
    "contiguous_if_channels_last",
    "contiguous_input",
    "input_stored_for",
    "laid_out_for",
    "layout_code",
    "permute_contiguous_if_channels_last",
    "relaid_parameter",
    "to_channels_last",
    "view_order",
]


def view_order(
    view: Layout, shape: tuple[int, ...], strides: tuple[int, ...], offset: int
) -> tuple[int, ...] | None:
    """``order`` with ``view == base.permute(order)`` for a base tensor of ``shape``, ``strides``
    and ``offset`` in the same storage, or ``None`` when the view is not a permutation of it.

    >>> view_order(Layout((3, 2), (1, 3)), (2, 3), (3, 1), 0)
    (1, 0)
    >>> view_order(Layout((3, 2), (1, 3)), (2, 3), (3, 1), 1) is None   # another offset
    True
    """
    if view.offset != offset or len(view.shape) != len(shape):
        return None
    order: list[int] = []
    for size, stride in zip(view.shape, view.strides):
        # a dim of size 1 is never stepped along, so its stride does not have to match
        match = next(
            (
                dim
                for dim in range(len(shape))
                if dim not in order and shape[dim] == size and (size == 1 or strides[dim] == stride)
            ),
            None,
        )
        if match is None:
            return None
        order.append(match)
    return tuple(order)


def _inverse(order: tuple[int, ...]) -> tuple[int, ...]:
    inverse = [0] * len(order)
    for position, dim in enumerate(order):
        inverse[dim] = position
    return tuple(inverse)


def laid_out_for(tensor: torch.Tensor, order: tuple[int, ...]) -> torch.Tensor:
    """``tensor``'s values and shape, stored so that ``tensor.permute(order)`` is contiguous."""
    return tensor.permute(order).contiguous().permute(_inverse(order))


def contiguous_if_channels_last(shape: tuple[int, ...], strides: tuple[int, ...]) -> bool:
    """Would this view of a contiguous NCHW convolution output flattened to ``(N, C, H·W)``
    (``flatten(2).transpose(1, 2)``) be contiguous were the convolution run channels-last?
    Checked on meta tensors: the view's dimensions are matched to the producer's by their
    strides, the view is rebuilt on an NCHW meta tensor (it must give ``strides``: else it is
    no such view, and the answer is no), and the same view of a channels-last one is asked.

    >>> contiguous_if_channels_last((2, 16, 8), (128, 1, 16))  # flatten(2).transpose(1, 2)
    True
    >>> contiguous_if_channels_last((16, 2, 8), (1, 128, 16))  # flatten(2).permute(2, 0, 1)
    False
    """
    if len(shape) != 3 or len(strides) != 3:
        return False
    by_stride = sorted(range(3), key=lambda d: -strides[d])  # the view's N, C and H·W dims
    order = [0, 0, 0]  # the view is producer.permute(order)
    for producer_dim, view_dim in enumerate(by_stride):
        order[view_dim] = producer_dim
    n, c, hw = (shape[d] for d in by_stride)
    nchw = torch.empty(n, c, hw, device="meta").permute(order)
    if tuple(nchw.shape) != tuple(shape) or nchw.stride() != tuple(strides):
        return False
    nhwc = torch.empty(n, hw, c, device="meta").permute(0, 2, 1)  # flatten(2) of channels-last
    return nhwc.permute(order).is_contiguous()


def permute_contiguous_if_channels_last(shape: tuple[int, ...], strides: tuple[int, ...]) -> bool:
    """Would this permuted view of a contiguous 4-d (NCHW) tensor (``permute(0, 2, 3, 1)``) be
    contiguous were that tensor channels-last?  Checked on meta tensors, as
    :func:`contiguous_if_channels_last`: the producer's dims are the view's by falling stride,
    the view is rebuilt on a contiguous meta tensor (it must give ``strides``) and asked of a
    channels-last one.

    >>> permute_contiguous_if_channels_last((2, 4, 4, 3), (48, 4, 1, 16))  # permute(0, 2, 3, 1)
    True
    >>> permute_contiguous_if_channels_last((2, 4, 3, 4), (48, 4, 16, 1))  # permute(0, 2, 1, 3)
    False
    """
    if len(shape) != 4 or len(strides) != 4:
        return False
    by_stride = sorted(range(4), key=lambda d: -strides[d])  # the producer's N, C, H, W dims
    order = [0, 0, 0, 0]
    for producer_dim, view_dim in enumerate(by_stride):
        order[view_dim] = producer_dim
    sizes = [shape[d] for d in by_stride]
    nchw = torch.empty(sizes, device="meta").permute(order)
    if tuple(nchw.shape) != tuple(shape) or nchw.stride() != tuple(strides):
        return False
    nhwc = torch.empty(sizes, device="meta", memory_format=torch.channels_last)
    return nhwc.permute(order).is_contiguous()


def layout_code(order: tuple[int, ...]) -> str:
    if order == tuple(range(len(order))):
        return ".contiguous()"
    if len(order) == 2:
        return ".t().contiguous().t()"
    return f".permute{order}.contiguous().permute{_inverse(order)}"


def to_channels_last(
    model: torch.nn.Module, inputs: tuple[Any, ...]
) -> tuple[torch.nn.Module, tuple[Any, ...]]:
    return channels_last_inputs(model.to(memory_format=torch.channels_last), inputs)


def channels_last_inputs(
    model: torch.nn.Module, inputs: tuple[Any, ...]
) -> tuple[torch.nn.Module, tuple[Any, ...]]:
    """The 4-d inputs stored channels-last (a leaf stays a leaf); the model as it is."""
    return model, tuple(
        _stored(value, value.contiguous(memory_format=torch.channels_last))
        if isinstance(value, torch.Tensor) and value.dim() == 4
        else value
        for value in inputs
    )


def _stored(value: torch.Tensor, stored: torch.Tensor) -> torch.Tensor:
    """``stored`` (``value`` laid out anew) as the user would make it, outside the step: a leaf
    ``value`` (one that requires grad: the step's gradient goes to it) gives a leaf.

    >>> x = torch.ones(2, 3, requires_grad=True)
    >>> _stored(x, x.t().contiguous().t()).is_leaf
    True
    """
    if value.is_leaf and stored is not value:
        return stored.detach().requires_grad_(value.requires_grad)
    return stored


def relaid_parameter(
    name: str, order: tuple[int, ...], model: torch.nn.Module, inputs: tuple[Any, ...]
) -> tuple[torch.nn.Module, tuple[Any, ...]]:
    parameter = model.get_parameter(name)
    with torch.no_grad():
        parameter.data = laid_out_for(parameter.data, order)
    return model, inputs


def input_stored_for(
    position: int, order: tuple[int, ...], model: torch.nn.Module, inputs: tuple[Any, ...]
) -> tuple[torch.nn.Module, tuple[Any, ...]]:
    stored = list(inputs)
    stored[position] = _stored(stored[position], laid_out_for(stored[position], order))
    return model, tuple(stored)


class _ContiguousInput(torch.nn.Module):
    """The model, with one input (a position, or a keyword's name) made contiguous inside the
    step (so that the fix's own copy is audited and timed with it)."""

    def __init__(self, model: torch.nn.Module, key: int | str) -> None:
        super().__init__()
        self.model = model
        self.key = key

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        if isinstance(self.key, str):
            kwargs = {**kwargs, self.key: kwargs[self.key].contiguous()}
        else:
            inputs = tuple(x.contiguous() if i == self.key else x for i, x in enumerate(inputs))
        return self.model(*inputs, **kwargs)


def contiguous_input(
    key: int | str, model: torch.nn.Module, inputs: tuple[Any, ...]
) -> tuple[torch.nn.Module, tuple[Any, ...]]:
    """``model`` wrapped so that input ``key`` (a position, or a keyword's name) is made
    contiguous inside the step.

    >>> model, inputs = contiguous_input(0, torch.nn.Identity(), ())
    >>> model(torch.ones(2, 3).t()).is_contiguous()
    True
    """
    return _ContiguousInput(model, key), inputs
