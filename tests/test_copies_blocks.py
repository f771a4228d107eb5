"""A tensor whose layout changed between two ``sw.track_copies()`` blocks is shown as it is in the
second (issue 41): no snapshot the first block took may be lent to the second, whatever changed
the tensor outside any block.  Some of these changes move neither its version counter nor its
storage (``x.data = x.data.t()`` keeps both, and the storage's address and size;
``torch.utils.swap_tensors`` swaps in a view of the same storage at another offset), so a
snapshot cache that survives across blocks keyed on the tensor's identity, version and storage
would show the first block's layout (and, holding weak references past the block, make
``swap_tensors`` refuse the tensor): each case here fails under such a cache."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch

import stridewidget as sw
from stridewidget.copies.log import CopyLog
from stridewidget.copies.tracker import CallMode, OpMode, Recorder, tracking


class _Eager(Recorder):
    lazy = False  # snapshots every call afresh: no snapshot lent


def _fields(event: sw.copies.log.CopyEvent) -> tuple:
    return (event.call, event.ops, event.kind, event.returned_input, event.wrote_input,
            event.bytes_copied, event.inputs, event.outputs)  # fmt: skip


def _data_transposed(x: torch.Tensor) -> None:
    x.data = x.data.t()  # same storage, address, size and version: other strides


def _data_as_int(x: torch.Tensor) -> None:
    x.data = x.data.view(torch.int32)  # same shape, storage and version: another dtype


def _data_shifted(x: torch.Tensor) -> None:
    x.data = x.data.view(-1)[4:].view(3, 4)  # same storage and version: another offset


def _swapped(x: torch.Tensor) -> None:
    torch.utils.swap_tensors(x, x._base[4:16].view(3, 4))  # a view of x's own storage


def _storage_regrown(x: torch.Tensor) -> None:
    x.untyped_storage().resize_(0)  # freed and allocated again, maybe at the same address
    x.untyped_storage().resize_(128)


_CHANGES: dict[str, Callable[[torch.Tensor], None]] = {
    "data = t()": _data_transposed,
    "data = view(int32)": _data_as_int,
    "data = offset view": _data_shifted,
    "swap_tensors": _swapped,
    "t_": lambda x: x.t_(),
    "as_strided_": lambda x: x.as_strided_((4, 4), (1, 4)),
    "resize_": lambda x: x.resize_(2, 8),
    "set_": lambda x: x.set_(x.untyped_storage(), 2, (3, 4), (4, 1)),
    "unsqueeze_": lambda x: x.unsqueeze_(0),
    "storage regrown": _storage_regrown,
    "storage grown": lambda x: x.untyped_storage().resize_(256),
}


def _block(x: torch.Tensor) -> tuple[list, list]:
    eager = _Eager(CopyLog())
    with tracking(CallMode(eager), OpMode(eager)) as eager_log, sw.track_copies() as log:
        x.mul(2)  # first: an in-place op would move the version, hiding a stale snapshot
        x.reshape(-1)
        x.add_(1)
        torch.add(x, 1, out=torch.empty(0, dtype=x.dtype))
    return [_fields(e) for e in log.events], [_fields(e) for e in eager_log.events]


@pytest.mark.parametrize("change", list(_CHANGES))
def test_a_layout_changed_between_blocks_is_read_afresh(change: str) -> None:
    x = torch.zeros(32)[:16].view(4, 4)  # a view, so that swap_tensors finds a view to swap in
    first, _ = _block(x)
    _CHANGES[change](x)
    second, fresh = _block(x)
    assert second == fresh
    assert second[0][6] != first[0][6] or change == "storage regrown"  # x as mul met it
