"""Issue 37/41 (hostile review): ``moves_data`` keyed its verdict by input dtypes only, so ``x ** 1``
(``pow.Tensor_Scalar``: its decomposition, and its CPU kernel, copy ``x``) and ``x ** 2``
(arithmetic) shared one verdict, set by whichever ran first in the process.  The key now holds
the scalars a decomposition may branch on; the tracker's fast path reads the verdict under the
same key.  Each order runs in a fresh process: the cache is per process.

The oracle is torch's own profiler: the CPU kernel of ``pow(x, 1)`` runs an ``aten::copy_``
(``out.copy_(base)``), that of ``pow(x, 2)`` none."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest
import torch
from torch.profiler import ProfilerActivity, profile

import stridewidget as sw
from stridewidget.adapters.aten import call_key, moves_data, moves_data_answers

_ROOT = str(pathlib.Path(sw.__file__).resolve().parents[1])

_CHILD = """
import json, sys, torch
import stridewidget as sw
from stridewidget.adapters.aten import moves_data
x = torch.arange(8.0).reshape(2, 4)
found = []
for exponent in json.loads(sys.argv[1]):
    if isinstance(exponent, list):  # [real, imag]: a complex exponent of a complex tensor
        exponent, x = complex(*exponent), torch.arange(8.0).reshape(2, 4).to(torch.complex64)
    if sys.argv[2] == "track":
        with sw.track_copies() as log:
            x ** exponent
        found.append([(e.kind, e.bytes_copied) for e in log.events])
    else:
        found.append(moves_data(torch.ops.aten.pow.Tensor_Scalar, (x, exponent), {}))
print(json.dumps(found))
"""


def _in_a_fresh_process(exponents: list, how: str) -> list:
    env = {**os.environ, "PYTHONPATH": _ROOT}
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, json.dumps(exponents), how],
        capture_output=True,
        text=True,
        env=env,
        timeout=240,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def _profiler_copies(exponent) -> bool:
    """Does torch's CPU ``pow`` kernel run an ``aten::copy_`` inside ``aten::pow`` for it?"""
    x = torch.arange(8.0).reshape(2, 4)
    if isinstance(exponent, list):
        exponent, x = complex(*exponent), x.to(torch.complex64)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        x**exponent
    return any(
        e.name == "aten::copy_" and e.cpu_parent is not None and e.cpu_parent.name == "aten::pow"
        for e in prof.events()
    )


@pytest.mark.parametrize(
    "order", [[2, 1, 0.5, 1.0, 3], [1, 2, 1.0, 0.5, 3]], ids=["2-first", "1-first"]
)
def test_pow_by_one_is_a_copy_whatever_ran_first(order):
    expected = [_profiler_copies(e) for e in order]
    assert expected == [e in (1, 1.0) for e in order]  # the oracle itself, as the issue says
    tracked = _in_a_fresh_process(order, "track")
    assert tracked == [[["copy", 32]] if copies else [["compute", 0]] for copies in expected]
    assert _in_a_fresh_process(order, "moves_data") == expected


@pytest.mark.parametrize(
    "order",
    [[[2, 0], [1, 0], [0.5, 0], [1, 1]], [[1, 0], [2, 0], [1, 1], [0.5, 0]]],
    ids=["2-first", "1-first"],
)
def test_a_complex_exponent_of_one_is_a_copy_whatever_ran_first(order):
    # complex scalars were keyed by their type alone (hostile review): (1+0j) == 1.0 copies
    expected = [_profiler_copies(e) for e in order]
    assert expected == [e == [1, 0] for e in order]  # the oracle itself
    tracked = _in_a_fresh_process(order, "track")
    assert tracked == [[["copy", 64]] if copies else [["compute", 0]] for copies in expected]
    assert _in_a_fresh_process(order, "moves_data") == expected


def test_the_tracker_and_moves_data_read_one_key():
    """The fast path's lookup key is the one moves_data stores its verdict under."""
    x = torch.ones(2, 3)
    pow_ = torch.ops.aten.pow.Tensor_Scalar
    for exponent in (1, 2, 1.0, 1e-3, 7, True):
        moves_data(pow_, (x, exponent), {})
        assert call_key((x, exponent)) in moves_data_answers(pow_)
    assert moves_data_answers(pow_)[call_key((x, 1))] is True
    assert moves_data_answers(pow_)[call_key((x, 2))] is False
    # 1, 1.0 and True are one dict key in Python: not here
    assert len({call_key((x, 1)), call_key((x, 1.0)), call_key((x, True))}) == 3
    # scalars no decomposition singles out share a key: a step's changing scalars hit the cache
    assert call_key((x, 0.9991)) == call_key((x, 0.9982))
    assert call_key((x, 123)) == call_key((x, 456))
    assert call_key((x, float("nan"))) == call_key((x, float("nan")))
    assert call_key((x,), {"alpha": 1e-3}) == call_key((x,), {"alpha": 2e-3})


def test_a_changing_scalar_keeps_the_answer_dict_small():
    """AdamW's bias correction changes every step: one key, one verdict decided once."""
    x = torch.ones(3)
    div = torch.ops.aten.div.Scalar
    keys = set()
    for step in range(1, 50):
        assert moves_data(div, (x, 1 - 0.999**step), {}) is False
        keys.add(call_key((x, 1 - 0.999**step)))
    assert len(keys) == 1 and keys <= set(moves_data_answers(div))
