"""The cell oracle (issue 22 §1): what every renderer draws, checked against memory itself.

:func:`corpus` gives named groups of tensors/arrays over one storage each: random strided layouts
(overlapping, gapped, offset, permuted) of every dtype family (bool, unsigned and signed ints,
float16, bfloat16, float32/64, complex64/128), conj and neg views, quantized tensors and NumPy
arrays.  The oracle reads independently of the project's own reader:

* a storage cell's raw value through a plain tensor over the same storage (``torch.tensor([],
  dtype=...).set_(t.untyped_storage())``: no conj/neg bit, no quantizer, so the integer codes of a
  quantized tensor), or for NumPy the owning array's own elements;
* a logical cell's value as ``t[idx]`` (conjugated, negated, dequantized by torch itself);
* an arrow's ends as ``offset`` and ``offset + stride``.

Texts are compared by parsing the drawn number back (renderers format per library): a value is
right when it lies within the rounding a display format can make.
"""

from __future__ import annotations

import math
import random
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

_CODES = {torch.quint8: torch.uint8, torch.qint8: torch.int8, torch.qint32: torch.int32}
_TORCH_DTYPES = [
    torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64,
    torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.complex64, torch.complex128,
]  # fmt: skip
_NUMPY_DTYPES = [np.bool_, np.uint16, np.int32, np.float16, np.float32, np.complex128]


def _values(size: int, dtype: Any, rng: random.Random) -> list[Any]:
    """Distinct-looking values of a dtype family: short to draw, far apart after rounding."""
    if dtype in (torch.bool, np.bool_):
        return [rng.random() < 0.5 for _ in range(size)]
    if dtype in (torch.uint8, np.uint16):
        return [rng.randrange(0, 200) for _ in range(size)]
    if dtype in (torch.int8, torch.int16, torch.int32, torch.int64, np.int32):
        return [rng.randrange(-99, 100) for _ in range(size)]
    if dtype in (torch.complex64, torch.complex128, np.complex128):
        return [complex(rng.randrange(-9, 10), rng.randrange(-9, 10)) for _ in range(size)]
    return [round(rng.uniform(-9, 9), rng.choice((0, 1, 2))) or 0.5 for _ in range(size)]


def _random_view_args(storage_size: int, rng: random.Random) -> tuple[tuple, tuple, int]:
    """A random in-bounds (shape, strides, offset): 1–3 dims, strides 0..5 (overlap, gaps)."""
    while True:
        ndim = rng.randint(1, 3)
        shape = tuple(rng.randint(1, 4) for _ in range(ndim))
        strides = tuple(rng.randint(0, 5) for _ in range(ndim))
        offset = rng.randint(0, 3)
        if offset + sum((n - 1) * s for n, s in zip(shape, strides)) < storage_size:
            return shape, strides, offset


def _torch_case(dtype: Any, rng: random.Random) -> dict[str, Any]:
    base = torch.tensor(_values(24, dtype, rng), dtype=dtype)
    shape, strides, offset = _random_view_args(24, rng)
    return {"base": base, "view": base.as_strided(shape, strides, offset)}


def _numpy_case(dtype: Any, rng: random.Random) -> dict[str, Any]:
    base = np.array(_values(24, dtype, rng), dtype=dtype)
    shape, strides, offset = _random_view_args(24, rng)
    item = base.itemsize
    view = np.lib.stride_tricks.as_strided(
        base[offset:], shape, tuple(s * item for s in strides), writeable=False
    )
    return {"base": base, "view": view, "reversed": base[::-2]}


def _quantized(per_channel: bool, rng: random.Random) -> torch.Tensor:
    values = torch.tensor([[rng.uniform(-2, 2) for _ in range(4)] for _ in range(3)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # quantized creation is deprecated in torch 2.13
        if per_channel:
            return torch.quantize_per_channel(
                values, torch.tensor([0.05, 0.1, 0.2]), torch.tensor([0, 3, -2]), 0, torch.qint8
            )
        return torch.quantize_per_tensor(values, 0.05, 7, torch.quint8)


def corpus(seed: int = 22) -> dict[str, Callable[[], dict[str, Any]]]:
    """Case name → a function giving the case's name → tensor mapping (built when called)."""
    rng = random.Random(seed)
    cases: dict[str, Callable[[], dict[str, Any]]] = {}
    for dtype in _TORCH_DTYPES:
        state = rng.random()
        cases[f"torch-{str(dtype)[6:]}"] = lambda d=dtype, s=state: _torch_case(d, random.Random(s))
    for dtype in _NUMPY_DTYPES:
        state = rng.random()
        name = f"numpy-{np.dtype(dtype).name}"
        cases[name] = lambda d=dtype, s=state: _numpy_case(d, random.Random(s))
    complex_base = torch.tensor([1 + 2j, 3 - 4j, -5 + 6j, 7 - 8j, 2 + 0j, 0 - 3j])
    cases["conj-issue"] = lambda: {"v": torch.tensor([1 + 2j, 3 - 4j]).conj()}
    cases["conj-and-base"] = lambda: {
        "z": complex_base,
        "zc": complex_base.conj(),
        "zct": complex_base.view(2, 3).conj().t(),
    }
    cases["neg-float"] = lambda: {"n": torch._neg_view(torch.tensor([1.5, -2.0, 3.25, 0.5]))}
    cases["neg-conj-complex"] = lambda: {
        "z": complex_base,
        "nc": torch._neg_view(complex_base.conj())[1::2],
    }
    cases["quantized-per-tensor"] = lambda: (lambda q: {"q": q, "qt": q.t(), "q1": q[1:, ::2]})(
        _quantized(False, random.Random(1))
    )
    cases["quantized-per-channel"] = lambda: {"q": _quantized(True, random.Random(2))}
    return cases


# --- the oracle ---------------------------------------------------------------------------------


def raw_cell(obj: Any, cell: int) -> Any:
    """The raw element at storage index ``cell``, read through a plain tensor over the storage
    (for NumPy: the owning array), never through the project's reader."""
    if isinstance(obj, np.ndarray):
        root = obj
        while isinstance(root.base, np.ndarray):
            root = root.base
        return root.reshape(-1)[cell].item()
    plain = torch.tensor([], dtype=_CODES.get(obj.dtype, obj.dtype)).set_(obj.untyped_storage())
    return plain[cell].item()


def logical_value(obj: Any, index: tuple[int, ...]) -> Any:
    """``t[idx]`` as a Python number (torch conjugates, negates and dequantizes it itself)."""
    return obj[index].item()


def arrow_ends(obj: Any, dim: int) -> tuple[int, int]:
    """Storage cells a stride arrow of ``dim`` joins: the offset and offset + stride."""
    if isinstance(obj, np.ndarray):
        from stridewidget import inspect

        layout = inspect(obj)
        return layout.offset, layout.offset + layout.strides[dim]
    return obj.storage_offset(), obj.storage_offset() + obj.stride()[dim]


def parse_number(text: str) -> Any:
    """A drawn value back as a number: ``T``/``True``, ``-3``, ``1.5e3``, ``1.+2.j``, ``-0.``."""
    text = text.strip()
    if text in ("T", "True", "true"):
        return True
    if text in ("F", "False", "false"):
        return False
    if text.endswith("j"):
        return complex(text.replace(" ", ""))
    return float(text)


def matches(text: str, expected: Any, scale: float) -> bool:
    """Whether drawn ``text`` shows ``expected``, within display rounding (``scale``: the largest
    magnitude among the values shown, against which fixed-point formats round)."""
    try:
        got = parse_number(text)
    except ValueError:
        return False
    if isinstance(expected, bool) or isinstance(got, bool):
        return bool(got) == bool(expected) and isinstance(got, bool) == isinstance(expected, bool)
    pairs = (
        [(complex(got).real, complex(expected).real), (complex(got).imag, complex(expected).imag)]
        if isinstance(expected, complex) or isinstance(got, complex)
        else [(float(got), float(expected))]
    )
    return all(
        math.isclose(g, e, rel_tol=6e-3, abs_tol=1e-3 * max(scale, 1e-30) + 1e-12) for g, e in pairs
    )


def magnitude(values: list[Any]) -> float:
    """The largest magnitude among ``values`` (bools count as 1)."""
    return max((abs(complex(v)) for v in values), default=1.0)
