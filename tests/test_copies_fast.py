"""Issue 41: the op mode's fast paths decide as the careful ones do.  An op whose verdict depends
on its inputs' dtypes (and scalars) is looked up under the key
:func:`~stridewidget.adapters.aten.moves_data` itself uses, also when an argument is a list of scalars (``sum``'s dims)."""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

import stridewidget as sw
from stridewidget.adapters.aten import arrays_in, call_key


def test_the_fast_path_keys_a_call_as_moves_data_does():
    """The op mode's fast path looks a verdict up with moves_data's own key function."""
    from stridewidget.copies import tracker

    assert tracker.call_key is call_key
    x, b = torch.ones(2, 3), torch.ones(2, dtype=torch.bool)
    dtype_list = [torch.float32]
    cases = [
        (x,),
        (x, [0], True),
        (x, (0, 1), False, None),
        (x, [True, False, True], 2.5, "mean"),
        (x, [x, b]),
        (x, [[0], [1]]),
        (x, {"a": b}),
        (x, [np.ones(2)]),
        (b, x, []),
        (np.ones(3), torch.Size([2, 3]), slice(1, 2)),
        (torch.nn.Parameter(x), dtype_list),
    ]
    for args in cases:  # hashable, and every array found by its dtype, in order
        leaves = [k for k in _leaves(call_key(args)) if isinstance(k, (torch.dtype, np.dtype))]
        named = [torch.float32] if args[-1] is dtype_list else []  # a dtype argument, as is
        assert leaves == [t.dtype for t in arrays_in(args, [])] + named, args
    assert call_key((x, [0], True)) == (torch.float32, (0,), ("bool", True))
    assert call_key((x, [x, b])) == (torch.float32, (torch.float32, torch.bool))


def _leaves(key):
    for item in key if isinstance(key, tuple) else (key,):
        yield from _leaves(item) if isinstance(item, tuple) else (item,)


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
