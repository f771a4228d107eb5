"""Write ``js/playground/cases.json``: the playground's shared table of cases, computed by Python.

The browser does the playground's index math itself (so it works with no kernel); this table is what
the Python inspector says about the same settings, and ``js/playground/*.test.js`` assert that the
browser agrees.  ``tests/test_playground.py`` re-generates the table and asserts it equals the
committed file, so the two sides can't drift.

* ``layouts``: settings (size, stride, offset) over a base's storage — hand-picked and seeded-random,
  valid and refused — with ``sw.as_strided``'s refusal message, or the Layout facts (span, flags,
  exact overlap and a witness pair, touched count, per-element touch counts of the Python scene).
* ``ops``: standard ops evaluated by torch on the base (``x.t()``, ``x.unfold(1, 3, 1)``, ...) and
  the layout each gives: the recogniser must name them.
* ``presets``: the five tricks computed by torch / ``sw.tricks`` and the seed article's formulas
  run through ``sw.as_strided``: the presets must load exactly these settings.
* ``names`` on every valid setting: what the browser's recogniser calls it (Node runs
  ``js/playground/recognise.js``), each name evaluated by torch on ``x`` and kept only if it gives
  exactly that view; ``wrong_names`` lists the others and must stay empty (tests check both).

Run: ``.venv/bin/python tests/make_playground_cases.py`` (after changing the cases or the inspector).
"""

from __future__ import annotations

import json
import pathlib
import random
import shutil
import subprocess
from typing import Any

import torch

import stridewidget as sw
from stridewidget.layout.touch import touch_counts

ROOT = pathlib.Path(__file__).resolve().parents[1]
OUTPUT = ROOT / "js" / "playground" / "cases.json"

#: name -> expression building the base `x` (evaluated with torch)
BASES = {
    "contiguous 4x6": "torch.arange(24).view(4, 6)",
    "transposed 4x6": "torch.arange(24).view(6, 4).t()",
    "sliced 4x6 at offset 10": "torch.arange(40).view(5, 8)[1:, 2:]",
    "1-d 10": "torch.arange(10)",
    "3-d 2x3x4": "torch.arange(24).view(2, 3, 4)",
}

HAND_PICKED = [
    ((4, 6), (6, 1), 0),
    ((6, 4), (1, 6), 0),
    ((4, 6), (6, 0), 0),
    ((4, 6), (1, 0), 0),
    ((4, 4, 3), (6, 1, 1), 0),
    ((22, 3), (1, 1), 0),
    ((2, 3), (1, 1), 0),
    ((24,), (1,), 0),
    ((24,), (6,), 0),
    ((2, 2, 2, 3), (6, 1, 12, 2), 0),
    ((2, 2, 3), (12, 2, 2), 0),
    ((2, 2, 2, 2), (12, 3, 6, 1), 0),
    ((5,), (2,), 1),
    ((3, 3), (8, 1), 1),
    ((), (), 5),
    ((0, 4), (9, 1), 99),
    ((3,), (1,), 22),
    ((3,), (1,), 23),
    ((2, 2), (-1, 1), 3),
    ((-1, 2), (1, 1), 0),
    ((2, 2), (1, 1), -1),
    ((2, 3), (3,), 0),
    ((4,), (7,), 0),
    ((3,), (7,), 2),
    ((1, 2, 2, 3), (12, 1, 6, 2), 0),
    ((2, 3, 2, 2), (12, 1, 6, 3), 0),
    ((2**32, 2**32), (0, 0), 0),  # more elements than torch's int64 count
]

#: name of base -> op expressions on `x` the recogniser must name (evaluated with torch here)
OPS = {
    "contiguous 4x6": [
        "x",
        "x.t()",
        "x[:, 0:1].expand(4, 6)",
        "x[2].expand(3, 6)",
        "x.expand(2, 4, 6)",
        "x.unfold(1, 3, 1)",
        "x.unfold(0, 2, 1)",
        "x.unfold(1, 2, 2)",
        "x.flatten()",
        "x.flatten().unfold(0, 3, 1)",
        "x.flatten()[1::2]",
        "x[:, 1::2]",
        "x[1:3]",
        "x[::2, 1:4:2]",
        "x[1:, 2:4]",
        "x[:, 3]",
        "x[:, 3].expand(2, 4)",
        "x.view(2, 12)",
        "x.view(2, 2, 6)",
        "x.unfold(0, 2, 2).unfold(1, 2, 2)",
        "x.unfold(0, 2, 2).unfold(1, 3, 3)",
        "x.unfold(0, 2, 2).unfold(1, 2, 2).permute(2, 3, 0, 1)",
        "sw.tricks.checkerboard(x)",
        "sw.tricks.blocks(x, 2, 3)",
        "x.diagonal()",
        "x.diagonal(2)",
        "x.diagonal(-1)",
    ],
    "transposed 4x6": [
        "x",
        "x.t()",
        "x[:, 0:1].expand(4, 6)",
        "x.unfold(1, 3, 1)",
        "x.unfold(0, 2, 2).unfold(1, 2, 2).permute(2, 3, 0, 1)",
    ],
    "sliced 4x6 at offset 10": [
        "x",
        "x.t()",
        "x[1]",
        "x[:, 3:4].expand(4, 6)",
        "x[1:3, ::3]",
        "x.diagonal(1)",
        "x.unfold(1, 3, 1)",
        "x.unfold(0, 2, 2).unfold(1, 2, 2)",
    ],
    "1-d 10": [
        "x",
        "x.expand(3, 10)",
        "x.unfold(0, 3, 1)",
        "x.unfold(0, 4, 2)",
        "x[1::2]",
        "x[2:6:3]",
    ],
    "3-d 2x3x4": [
        "x",
        "x.transpose(0, 2)",
        "x.permute(1, 2, 0)",
        "x.flatten(0, 1)",
        "x.flatten(1, 2)",
        "x.flatten()",
        "x.unfold(2, 2, 1)",
        "x.expand(5, 2, 3, 4)",
        "x[:, 1:, ::2]",
        "x[0].diagonal()",
        "x[1]",
    ],
}


def _tuple(values: Any) -> list[int]:
    return [int(v) for v in values]


def _setting(t: torch.Tensor) -> dict[str, Any]:
    return {"size": _tuple(t.shape), "stride": _tuple(t.stride()), "offset": t.storage_offset()}


def _base_dict(x: torch.Tensor) -> dict[str, Any]:
    layout = sw.inspect(x)
    return {
        "shape": list(layout.shape),
        "strides": list(layout.strides),
        "offset": layout.offset,
        "storage_size": layout.storage_size,
    }


def _verdict(x: torch.Tensor, size: Any, stride: Any, offset: int) -> dict[str, Any]:
    """What Python says about one setting over x's storage."""
    case: dict[str, Any] = {"size": list(size), "stride": list(stride), "offset": offset}
    try:
        view = sw.as_strided(x, size, stride, offset, allow_overlap=True)
    except sw.LayoutError as refusal:
        case["refusal"] = str(refusal)
        return case
    layout = sw.inspect(view)
    storage_size = layout.storage_size
    counts = touch_counts(layout, list(range(storage_size)))
    witness = layout.overlap_witness
    case.update(
        refusal=None,
        span=None if layout.span is None else list(layout.span),
        is_contiguous=layout.is_contiguous,
        is_f_contiguous=layout.is_f_contiguous,
        is_dense=layout.is_dense,
        is_channels_last=layout.is_channels_last,
        has_overlap=layout.has_overlap,
        witness=None if witness is None else [list(witness[0]), list(witness[1])],
        touched=layout.touched,
        counts=[[cell, n] for cell, n in enumerate(counts) if n],
    )
    return case


#: Runs the browser's recogniser (js/playground/recognise.js) on the layouts given on stdin.
_RECOGNISE_JS = """
import { recognise } from "./js/playground/recognise.js";
let input = "";
process.stdin.on("data", (chunk) => (input += chunk));
process.stdin.on("end", () => {
  const { base, views } = JSON.parse(input);
  process.stdout.write(JSON.stringify(views.map((view) => recognise(base, view))));
});
"""


def _recogniser_names(base: dict[str, Any], views: list[dict[str, Any]]) -> list[list[str]]:
    """What the browser's recogniser calls each view (Node runs the very module the page uses)."""
    node = shutil.which("node")
    if node is None:
        raise RuntimeError("node is needed to run js/playground/recognise.js (install Node 20)")
    result = subprocess.run(
        [node, "--input-type=module", "-e", _RECOGNISE_JS],
        input=json.dumps({"base": base, "views": views}),
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    return json.loads(result.stdout)


def _same_mapping(t: torch.Tensor, case: dict[str, Any]) -> bool:
    if list(t.shape) != case["size"]:
        return False
    if t.numel() == 0:
        return True
    return t.storage_offset() == case["offset"] and all(
        n == 1 or s == want for n, s, want in zip(t.shape, t.stride(), case["stride"])
    )


def _check_names(x: torch.Tensor, base: dict[str, Any], cases: list[dict[str, Any]]) -> None:
    """Torch evaluates every name the recogniser gives: ``names`` are confirmed, ``wrong_names``
    (which must stay empty) are not."""
    valid = [case for case in cases if case.get("refusal") is None]
    for case, names in zip(valid, _recogniser_names(base, valid)):
        confirmed = [name for name in names if _same_mapping(eval(name, {"x": x, "sw": sw}), case)]
        case["names"] = confirmed
        case["wrong_names"] = [name for name in names if name not in confirmed]


def _random_settings(rng: random.Random, storage_size: int, count: int) -> list[tuple]:
    settings = []
    for _ in range(count):
        ndim = rng.randint(0, 4)
        size = tuple(
            rng.randint(0, 5) if rng.random() < 0.1 else rng.randint(1, 5) for _ in range(ndim)
        )
        stride = tuple(rng.choice([0, 1, 1, 2, 3, 4, 6, 7]) for _ in range(ndim))
        if rng.random() < 0.05 and ndim:
            stride = (-1, *stride[1:])
        offset = rng.randint(0, storage_size // 2)
        settings.append((size, stride, offset))
    return settings


def _presets(x: torch.Tensor) -> dict[str, Any]:
    """Each preset's setting from torch / sw.tricks (tricks) or from the seed's formula (seed)."""

    def seed(size: Any, stride: Any, source: torch.Tensor | None = None) -> dict[str, Any]:
        source = x if source is None else source
        offset = source.storage_offset()  # torch.as_strided's default: the input's own offset
        return _verdict(source, size, stride, offset)

    def trick(view: torch.Tensor) -> dict[str, Any]:
        assert sw.same_storage(view, x), "a trick must be a view"
        return _verdict(x, *_setting(view).values())

    out: dict[str, Any] = {"base": trick(x)}
    ndim = x.dim()
    if ndim == 2:
        rows, cols = x.shape
        out["column"] = trick(x[:, 1])
        # the seed: torch.as_strided(x, size=(5,), stride=(2,)) for x[:, 1] of a (5, 2) x
        out["seed-column"] = seed((rows,), (cols,))
        out["broadcast"] = trick(x[:, 0:1].expand(rows, cols))
        # the seed: torch.as_strided(original, size=(3, 4), stride=(1, 0)) on a column
        out["seed-broadcast"] = seed((rows, cols), (1, 0), x[:, 0:1])
        out["transpose"] = trick(x.t())
        out["seed-transpose"] = seed((cols, rows), (1, cols))  # seed: stride(1, 6) for (4, 6)
        if rows % 2 == 0 and cols % 2 == 0:
            out["checkerboard"] = trick(sw.tricks.checkerboard(x))
            # seed: size(2, H//2, W//2), stride(2*W, 2, 2)
            out["seed-checkerboard"] = seed((2, rows // 2, cols // 2), (2 * cols, 2, 2))
            out["blocks"] = trick(sw.tricks.blocks(x, 2, 2))
    elif ndim == 1:
        out["broadcast"] = trick(x.expand(3, x.shape[0]))
    if ndim >= 1 and x.shape[-1] >= 3:
        out["sliding"] = trick(x.unfold(ndim - 1, 3, 1))
        # the seed: size(x.size(0) - window_size + 1, window_size), stride(1, 1)
        out["seed-sliding"] = seed((x.shape[0] - 3 + 1, 3), (1, 1))
    if ndim >= 2:
        merged = x.flatten(0, 1)
        if sw.same_storage(merged, x) and merged.data_ptr() == x.data_ptr():
            out["merge"] = trick(merged)
        # the seed's batch merge: the outer strides, shifted (stride(3*224*224, 224*224, 224))
        merged_size = (x.shape[0] * x.shape[1], *x.shape[2:])
        out["seed-merge"] = seed(merged_size, x.stride()[: len(merged_size)])
    return out


def build_cases() -> dict[str, Any]:
    """The whole table, deterministically (seeded random settings)."""
    rng = random.Random(20261129)
    bases = []
    for name, expression in BASES.items():
        x = eval(expression, {"torch": torch})
        storage_size = sw.inspect(x).storage_size
        settings = list(HAND_PICKED) + _random_settings(rng, storage_size, 30)
        ops = []
        for op in OPS[name]:
            view = eval(op, {"x": x, "torch": torch, "sw": sw})
            assert sw.same_storage(view, x), f"{op} must be a view of x"
            ops.append({"expr": op, **_setting(view)})
        layouts = [_verdict(x, *setting) for setting in settings]
        presets = _presets(x)
        base = _base_dict(x)
        _check_names(x, base, layouts + ops + list(presets.values()))
        bases.append(
            {
                "name": name,
                "expression": expression,
                "base": base,
                "layouts": layouts,
                "ops": ops,
                "presets": presets,
            }
        )
    return {
        "generated_by": "tests/make_playground_cases.py (do not edit by hand)",
        "bases": bases,
    }


def render(cases: dict[str, Any]) -> str:
    """The file's exact text (stable key order, one case per line group)."""
    return json.dumps(cases, indent=1) + "\n"


if __name__ == "__main__":
    OUTPUT.write_text(render(build_cases()))
    print(f"wrote {OUTPUT.relative_to(ROOT)}")
