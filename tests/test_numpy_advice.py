"""NumPy arrays get NumPy's advice (issue 22 §4): ``.reshape(-1)`` and ``np.ascontiguousarray``,
each claim checked against what NumPy itself does."""

from __future__ import annotations

import random

import numpy as np
import pytest
import torch

import stridewidget as sw


def _random_arrays(count: int, seed: int = 4) -> list[np.ndarray]:
    rng = random.Random(seed)
    base = np.arange(240.0).reshape(4, 6, 10)
    arrays = [base, base.T, base[:, ::2], base[::-1], base[1:, 2:5, ::3], base.reshape(24, 10)]
    while len(arrays) < count:
        view = base.transpose(rng.sample(range(3), 3))
        index = tuple(slice(rng.randint(0, 1), None, rng.choice((1, 2, -1))) for _ in range(3))
        arrays.append(view[index])
    return arrays


@pytest.mark.parametrize("array", _random_arrays(24), ids=lambda a: f"{a.shape}:{a.strides}")
def test_numpy_advice_is_numpy_and_true(array):
    explain = sw.inspect(array).explain()
    assert ".contiguous()" not in explain and ".view(-1)" not in explain
    flat_is_view = np.shares_memory(array.reshape(-1), array)
    assert (".reshape(-1) returns a view" in explain) == flat_is_view
    assert (".reshape(-1) copies" in explain) == (not flat_is_view)
    kept = np.ascontiguousarray(array) is array
    assert ("np.ascontiguousarray(a) returns the array itself" in explain) == kept
    assert (f"np.ascontiguousarray(a) copies {array.size} elements" in explain) == (not kept)


def test_torch_tensors_keep_torch_advice():
    explain = sw.inspect(torch.zeros(3, 4).t()).explain()
    assert ".contiguous() copies 12 elements" in explain and "ascontiguousarray" not in explain
