"""Logical cells print in their tensor's own format, decided over the values its ``repr`` prints;
the storage strip (raw memory, shared) in its own, decided over the strip's cells (issue 22
review item 3).  Oracle: torch's ``repr`` and NumPy's ``array2string`` tokens."""

from __future__ import annotations

import random
import re

import numpy as np
import pytest
import torch

import stridewidget as sw
from stridewidget.scene.build import build_scene


def _repr_tokens(obj) -> list[str]:
    """The element texts the library prints, in C order (small, non-elided tensors only)."""
    if isinstance(obj, np.ndarray):
        body = np.array2string(obj, separator=",", threshold=10**9)
    else:
        body = repr(obj.resolve_conj())
        body = body[body.index("(") + 1 :]
        body = re.sub(r",\s*(dtype|device|requires_grad)=.*$", "", body, flags=re.S).rstrip(")")
    return [token for token in re.split(r"[\[\],\s]+", body) if token]


def _logical_texts(scene, number: int) -> dict[tuple, str]:
    tensor = scene["tensors"][number]
    (storage,) = [s for s in scene["storages"] if s["id"] == tensor["storage"]]
    where = {cell: i for i, cell in enumerate(storage["cells"]["index"])}
    texts = (tensor["reads"] or {}).get("text") or storage["cells"]["text"]
    drawn = {}
    for slice_ in tensor["logical"]["slices"]:
        for r, row in enumerate(slice_["addr"]):
            for c, address in enumerate(row):
                index = list(slice_["lead"])
                index += [slice_["rows"][r]] if slice_["rows"] is not None else []
                index += [slice_["cols"][c]] if slice_["cols"] is not None else []
                drawn[tuple(index)] = texts[where[address]]
    return drawn


def _check(obj, scene, number=0):
    tokens = _repr_tokens(obj)
    drawn = _logical_texts(scene, number)
    for index, text in drawn.items():
        flat = int(np.ravel_multi_index(index, obj.shape)) if index else 0
        assert text == tokens[flat], (index, text, tokens)


CASES = {
    "torch sci storage, plain view": lambda: torch.tensor([1e-5, 1.0, 2.0])[1:],
    "torch fixed storage, whole view": lambda: torch.tensor([1.0, 2.0, 0.5])[:2],
    "numpy sci storage, plain view": lambda: np.array([1e-5, 1.0, 2.0])[1:],
    "conj view": lambda: torch.tensor([1e-5 + 1j, 1 + 2j, 3 - 4j])[1:].conj(),
}


@pytest.mark.parametrize("name", CASES)
def test_logical_cells_print_as_the_tensor_does(name):
    obj = CASES[name]()
    scene = build_scene({"v": obj})
    _check(obj, scene)
    if name.endswith("plain view"):  # the strip keeps raw memory's own format
        storage = scene["storages"][0]["cells"]["text"]
        base = obj.base if isinstance(obj, np.ndarray) else obj._base
        assert storage == _repr_tokens(base)


def test_static_svg_and_text_draw_the_tensors_format():
    obj = torch.tensor([1e-5, 1.0, 2.0])[1:]
    widget = sw.show(v=obj)
    svg, text = widget._static_html(), widget.summary()
    assert ">1.<" in svg and ">2.<" in svg and ">1.0000e-05<" in svg
    assert text  # the text renderer reads the same scene texts (tests/test_cell_oracle.py)


def test_random_layouts_print_as_repr():
    rng = random.Random(3)
    for _ in range(40):
        base = torch.tensor([rng.choice([1e-5, 0.5, 1.0, 2.0, 3.25, 1e9, -7.0]) for _ in range(24)])
        shape = tuple(rng.randint(1, 3) for _ in range(rng.randint(1, 3)))
        strides = tuple(rng.randint(0, 4) for _ in shape)
        span = sum((n - 1) * s for n, s in zip(shape, strides))
        if span > 23:
            continue
        view = base.as_strided(shape, strides, rng.randint(0, 23 - span))
        scene = build_scene({"b": base, "v": view})
        _check(base, scene, 0)
        _check(view, scene, 1)
        array = base.numpy().copy()
        nview = np.lib.stride_tricks.as_strided(
            array[view.storage_offset() :], shape, [array.itemsize * s for s in strides]
        )
        _check(nview, build_scene({"b": array, "v": nview}), 1)


def test_a_strip_without_values_says_why():
    record = np.zeros(4, dtype=[("a", "i4"), ("b", "f8")])
    unaligned = np.zeros(17, np.uint8)[1:].view(np.float32)
    for obj in (record["b"], unaligned):
        text, svg = sw.render_text(v=obj), sw.render_svg(v=obj)
        for picture in (text, svg):
            assert "meta tensor or layout only" not in picture
            assert "meta / layout only" not in picture
            assert "straddle" in picture


def test_records_print_as_numpy_prints_them():
    record = np.zeros(2, dtype=[("a", "i4"), ("b", "f8")])
    record[0] = (3, -4.0)
    scene = build_scene({"r": record})
    assert scene["storages"][0]["cells"]["text"] == _repr_tokens_records(record)


def _repr_tokens_records(record) -> list[str]:
    return [text.strip() for text in np.array2string(record, separator="|")[1:-1].split("|")]
