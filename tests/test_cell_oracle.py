"""Every renderer draws what memory holds and what the tensor reads (issue 22 §1).

Over the oracle corpus (``tests/oracle_cells.py``): every drawn storage cell equals the raw element at
that storage index, every logical cell equals ``t[idx]``, every arrow goes from the offset to
offset + stride — in the scene the widget draws, the static SVG (parsed), the text picture and
``sw.plot``'s matplotlib texts.  The widget's DOM is checked the same way in
``tests/e2e/test_cell_oracle_widget.py``.
"""

from __future__ import annotations

import itertools
import re
import xml.etree.ElementTree as ET

import matplotlib
import pytest
from oracle_cells import arrow_ends, corpus, logical_value, magnitude, matches, raw_cell

import stridewidget as sw
from stridewidget.scene.build import build_scene

matplotlib.use("Agg")

CASES = corpus()
SVG = "{http://www.w3.org/2000/svg}"


def _objects(tensors):
    return list(tensors.values())


def _expected_storage(tensors, scene):
    """Storage id → {cell: raw value} for the shown cells, read by the oracle."""
    objects = _objects(tensors)
    expected = {}
    for storage in scene["storages"]:
        owner = objects[next(t["order"] for t in scene["tensors"] if t["storage"] == storage["id"])]
        expected[storage["id"]] = {c: raw_cell(owner, c) for c in storage["cells"]["index"]}
    return expected


def _expected_logical(tensors, scene):
    """(tensor id, index tuple) → t[idx] for every shown logical cell."""
    objects = _objects(tensors)
    expected = {}
    for tensor in scene["tensors"]:
        for slice_ in tensor["logical"]["slices"]:
            if slice_["kind"] != "slice":
                continue
            for r, row in enumerate(slice_["addr"]):
                for c, address in enumerate(row):
                    if address is None:
                        continue
                    index = list(slice_["lead"])
                    if slice_["rows"] is not None:
                        index.append(slice_["rows"][r])
                    if slice_["cols"] is not None:
                        index.append(slice_["cols"][c])
                    value = logical_value(objects[tensor["order"]], tuple(index))
                    expected[(tensor["id"], tuple(index))] = value
    return expected


def _check(pairs, what):
    """``pairs`` of (where, drawn text, expected value, scale): all must match; returns the count."""
    wrong = [(w, text, value) for w, text, value, scale in pairs if not matches(text, value, scale)]
    assert not wrong, f"{what}: drawn ≠ oracle at {wrong[:6]}"
    return len(pairs)


@pytest.fixture(scope="module", params=sorted(CASES))
def case(request):
    tensors = CASES[request.param]()
    scene = build_scene(tensors)
    storage = _expected_storage(tensors, scene)
    logical = _expected_logical(tensors, scene)
    scale = magnitude([*(v for s in storage.values() for v in s.values()), *logical.values()])
    return tensors, scene, storage, logical, scale


def test_scene_cells_and_arrows_follow_memory(case):
    tensors, scene, storage, logical, scale = case
    objects = _objects(tensors)
    checked = 0
    for s in scene["storages"]:
        for cell, text in zip(s["cells"]["index"], s["cells"]["text"]):
            checked += _check([(cell, text, storage[s["id"]][cell], scale)], "scene storage")
    position = {
        s["id"]: {c: i for i, c in enumerate(s["cells"]["index"])} for s in scene["storages"]
    }
    for (tensor_id, index), value in logical.items():
        tensor = next(t for t in scene["tensors"] if t["id"] == tensor_id)
        cell = sw.inspect(objects[tensor["order"]]).address(index)
        i = position[tensor["storage"]][cell]
        reads = tensor.get("reads")
        text = (reads["text"] if reads and reads["text"] else None) or None
        drawn = (
            text[i]
            if text
            else next(s for s in scene["storages"] if s["id"] == tensor["storage"])["cells"][
                "text"
            ][i]
        )
        checked += _check([((tensor_id, index), drawn, value, scale)], "scene logical")
    for tensor in scene["tensors"]:
        for arrow in tensor["arrows"]:
            assert (arrow["from"], arrow["to"]) == arrow_ends(
                objects[tensor["order"]], arrow["dim"]
            )
    assert checked >= len(logical)


def _svg_cells(svg_text):
    root = ET.fromstring(svg_text)
    storage, logical, arrows = {}, {}, []
    for group in root.iter(f"{SVG}g"):
        cls = group.get("class", "").split()
        if "sws-scell" in cls:
            rect = group.find(f"{SVG}rect")
            top, height = float(rect.get("y")), float(rect.get("height"))
            box = (float(rect.get("x")), top, float(rect.get("width")), height)
            values = [
                t.text
                for t in group.findall(f"{SVG}text")
                if t.get("font-weight") != "bold" and top + 11 < float(t.get("y")) <= top + height
            ]
            storage[(group.get("data-storage"), int(group.get("data-cell")))] = (values, box)
        elif "sws-lcell" in cls:
            values = [t.text for t in group.findall(f"{SVG}text") if not t.text.startswith("@")]
            index = tuple(int(i) for i in group.get("data-index").split(",") if i != "")
            logical[(group.get("data-tensor"), index)] = values
        elif "sws-arrow" in cls:
            numbers = [
                float(n) for n in re.findall(r"-?\d+(?:\.\d+)?", group.find(f"{SVG}path").get("d"))
            ]
            arrows.append((group.get("data-tensor"), int(group.get("data-dim")), numbers))
    return storage, logical, arrows


def _inside(x, y, box, slack=3.0):
    left, top, width, height = box
    return left - 0.5 <= x <= left + width + 0.5 and top - slack <= y <= top + height + slack


def test_static_svg_draws_memory_and_reads(case):
    tensors, scene, storage, logical, scale = case
    objects = _objects(tensors)
    cells, lcells, arrows = _svg_cells(sw.render_svg(scene))
    pairs = [
        ((sid, cell), values[0], storage[sid][cell], scale)
        for (sid, cell), (values, _) in cells.items()
        if values
    ]
    assert _check(pairs, "SVG storage") or not any(s["has_values"] for s in scene["storages"])
    pairs = [(key, values[0], logical[key], scale) for key, values in lcells.items() if values]
    assert _check(pairs, "SVG logical") >= 1
    assert set(lcells) == set(logical)
    for tensor_id, dim, numbers in arrows:
        tensor = next(t for t in scene["tensors"] if t["id"] == tensor_id)
        start, end = arrow_ends(objects[tensor["order"]], dim)
        for (x, y), cell in (((numbers[0], numbers[1]), start), ((numbers[-2], numbers[-1]), end)):
            assert _inside(x, y, cells[(tensor["storage"], cell)][1]), (tensor_id, dim, cell, x, y)


def _text_storage(lines):
    """(cell, value text) from the text picture's ``index |`` / ``value |`` line pairs."""
    found = []
    for above, below in itertools.pairwise(lines):
        if above.startswith("  index |") and below.startswith("  value |"):
            found += list(zip(above[9:].split(), below[9:].split()))
    return [(int(cell), text) for cell, text in found]


def test_text_picture_draws_memory_and_reads(case):
    tensors, scene, storage, logical, scale = case
    objects = _objects(tensors)
    lines = sw.render_text(scene).splitlines()
    (only,) = {s["id"] for s in scene["storages"]}  # the corpus: one storage per case
    pairs = [(cell, text, storage[only][cell], scale) for cell, text in _text_storage(lines)]
    assert _check(pairs, "text storage") == len(scene["storages"][0]["cells"]["index"])
    for tensor in scene["tensors"]:
        start = lines.index(f"logical {tensor['name']} {tuple(tensor['logical']['shape'])}:")
        rows = []
        for line in lines[start + 1 :]:
            if line.startswith("logical ") or not line.startswith("  "):
                break
            if line.strip().startswith("["):
                rows.append(line.strip()[1:-1].split())
        shown = [s for s in tensor["logical"]["slices"] if s["kind"] == "slice"]
        keys = []
        for slice_ in shown:
            for r, row in enumerate(slice_["addr"]):
                if slice_["rows"] is not None and slice_["rows"][r] is None:
                    continue
                index_row = []
                for c, address in enumerate(row):
                    index = list(slice_["lead"])
                    if slice_["rows"] is not None:
                        index.append(slice_["rows"][r])
                    if slice_["cols"] is not None:
                        index.append(slice_["cols"][c])
                    index_row.append(None if address is None else (tensor["id"], tuple(index)))
                keys.append(index_row)
        assert len(rows) == len(keys)
        pairs = [
            (key, text, logical[key], scale)
            for row, key_row in zip(rows, keys)
            for text, key in zip(row, key_row)
            if key is not None
        ]
        assert _check(pairs, f"text logical {tensor['name']}") == sum(
            k is not None for row in keys for k in row
        )
        for arrow in tensor["arrows"]:
            start_cell, end_cell = arrow_ends(objects[tensor["order"]], arrow["dim"])
            assert f"{arrow['label']} (storage[{start_cell}] → storage[{end_cell}])" in "\n".join(
                lines
            )


def test_plot_texts_draw_memory_and_reads(case):
    _, scene, storage, logical, scale = case
    figure = sw.plot(scene)
    drawn_storage, drawn_logical = {}, {}
    for text in figure.axes[0].texts:
        gid = text.get_gid() or ""
        if gid.startswith("sws-scell:") and text.get_fontweight() != "bold":
            _, sid, cell = gid.split(":")
            drawn_storage.setdefault((sid, int(cell)), []).append(text.get_text())
        elif gid.startswith("sws-lcell:") and not text.get_text().startswith("@"):
            _, tensor_id, index, _address = gid.split(":")
            key = (tensor_id, tuple(int(i) for i in index.split(",") if i != ""))
            drawn_logical.setdefault(key, []).append(text.get_text())
    # a storage cell's texts are its value and its index: one of them must be the raw value
    for (sid, cell), texts in drawn_storage.items():
        candidates = [t for t in texts if t != str(cell)] or texts
        assert any(matches(t, storage[sid][cell], scale) for t in candidates), (sid, cell, texts)
    pairs = [(key, texts[0], logical[key], scale) for key, texts in drawn_logical.items()]
    assert _check(pairs, "plot logical") >= 1
