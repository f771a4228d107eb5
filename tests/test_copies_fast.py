"""Issue 41: the op mode's fast paths decide as the careful ones do.  An op whose verdict depends
on its inputs' dtypes is looked up under the key :func:`~stridewidget.adapters.aten.moves_data`
itself uses, also when an argument is a list of scalars (``sum``'s dims)."""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

import stridewidget as sw
from stridewidget.adapters.aten import arrays_in
from stridewidget.copies.tracker import _flat_dtypes


def test_flat_dtypes_is_moves_datas_key_or_none():
    x, b = torch.ones(2, 3), torch.ones(2, dtype=torch.bool)
    cases = [
        (x,),
        (x, [0], True),
        (x, (0, 1), False, None),
        (x, [True, False, True], 2.5, "mean"),
        (x, [x, b]),  # a list holding tensors: walked by moves_data, not here
        (x, [[0], [1]]),
        (x, {"a": b}),
        (x, [np.ones(2)]),
        (b, x, []),
        (np.ones(3), torch.Size([2, 3]), slice(1, 2)),
        (torch.nn.Parameter(x), [torch.float32]),
    ]
    for args in cases:
        key = tuple(t.dtype for t in arrays_in((args, {}), []))
        found = _flat_dtypes(args)
        assert found is None or found == key, args
    assert _flat_dtypes((x, [0], True)) == (torch.float32,)
    assert _flat_dtypes((x, [x])) is None


def test_an_op_with_a_list_argument_keeps_its_verdict_every_call():
    x = torch.arange(12.0).reshape(3, 4)
    with sw.track_copies() as log:
        for _ in range(3):
            F.pad(x, [1, 1])  # moves data (constant_pad_nd with a list of pads)
            x.sum([0], keepdim=True)  # computes (sum.dim_IntList with a list of dims)
            torch.ones(2, dtype=torch.bool).sum([0])
    kinds = [(e.call.rsplit(".", 1)[-1], e.kind, e.bytes_copied) for e in log.events]
    assert kinds == [("pad", "copy", 72), ("sum", "compute", 0), ("ones", "compute", 0),
                     ("sum", "compute", 0)] * 3  # fmt: skip
