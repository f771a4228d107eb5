"""Size of the standalone page (``python -m stridewidget EXPR --html``) for small to the largest views.

The page inlines the widget's ES module, its CSS, the scene (a bounded number of cells whatever
the tensor's size) and a static fallback picture, so its size depends on the tensors shown. Measured
for the README's own example, a 10**6-element matrix and the largest default view (a 4-D
10**8-element tensor with two more views of its storage, as ``bench_payload.py`` renders).
Writes ``benchmarks/results/page-size.json``, whose ``readme`` entry the README cites
(``tests/test_prose_numbers.py`` checks the two agree).

Run:  python benchmarks/bench_page_size.py [--json benchmarks/results/page-size.json]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch

from stridewidget.cli import standalone_html

DEFAULT_JSON = Path(__file__).resolve().parent / "results" / "page-size.json"


def cases() -> dict[str, dict[str, torch.Tensor]]:
    torch.manual_seed(0)
    base = torch.randn(100, 100, 100, 100)  # random values, as bench_payload.py shows them
    return {
        "torch.arange(12.0).reshape(3, 4).t()": {"x": torch.arange(12.0).reshape(3, 4).t()},
        "torch.randn(1000, 1000)": {"x": torch.randn(1000, 1000)},
        "largest default view (10**8 elements, 3 views)": {
            "x": base,
            "xt": base.transpose(1, 3),
            "xs": base[:, ::3, 1::2],
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON)
    args = parser.parse_args()
    pages = {name: len(standalone_html(tensors).encode()) for name, tensors in cases().items()}
    for name, size in pages.items():
        print(f"{name:50} {size / 1000:8.1f} kB")
    kilobytes = [size / 1000 for size in pages.values()]
    results = {
        "torch_version": torch.__version__,
        "page_bytes": pages,
        "readme": {"page_kB": {"low": min(kilobytes), "high": max(kilobytes), "unit": "kB"}},
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
