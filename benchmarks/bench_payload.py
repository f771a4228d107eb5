"""Scene payload: build time and size for a huge vs a tiny tensor, and browser render/hover time.

Run:  .venv/bin/python benchmarks/bench_payload.py [--repeats 15] [--no-browser] [--screenshots DIR]
          [--baseline DIR] [--bundle-only] [--json benchmarks/results/bench_payload.json]

1. Scene build time of a 10**8-element CPU tensor vs a 100-element one, interleaved in one run
   (the machine is noisy: medians of alternating repeats), their ratio (target <= 3) and the JSON
   payload bytes of each.
2. In headless Chromium (/usr/bin/chromium via Playwright): the bundled widget renders the largest
   default view (a 4-D 10**8-element tensor plus two views of its storage, every slice and
   storage cell the defaults allow) from a fake model; first render time (target <= 150 ms) and
   hover-response time, median over logical and storage cells (target <= 16 ms).  Times are
   script + style + layout (a forced layout ends each measurement); paint is not included.
0. What ``display(x)`` costs after ``sw.enable()`` (issue 22 §5): the whole mime bundle (widget
   state + ``text/plain`` + the static fallback) vs ``repr(x)`` alone, timed side by side
   (alternating, medians; target bundle <= 3 ms), and the fallback's bytes (targets 24 kB for a
   default view of <= 2 dims, 48 kB for 4 dims), at 10, 10**3, 10**4 (100x100), 10**6 and 10**8
   (meta) elements and for a 2x3x4x5 tensor.  ``--json`` stores them.
``--baseline DIR`` (another build's widget.js + widget.css) times that build's first render in the
same run, page loads alternating, and prints this build / baseline.
``--screenshots DIR`` also saves PNGs of a few demo scenes (for looking at the widget).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import statistics
import sys
import tempfile
import time

import numpy as np
import torch

import stridewidget as sw
from stridewidget.notebook.picture import picture_of
from stridewidget.scene.build import build_scene

ROOT = pathlib.Path(__file__).resolve().parents[1]
#: issue 36: display(x) (the whole mime bundle) at most this, at every size
TARGET_BUNDLE_MS = 3
STATIC = ROOT / "stridewidget" / "notebook" / "static"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def time_builds(tensors: dict[str, dict[str, object]], repeats: int) -> dict[str, list[float]]:
    """Seconds per build_scene call, the cases interleaved so that noise hits all of them."""
    times: dict[str, list[float]] = {name: [] for name in tensors}
    for case in tensors.values():  # warm-up (imports, caches)
        build_scene(case)
    for _ in range(repeats):
        for name, case in tensors.items():
            start = time.perf_counter()
            build_scene(case)
            times[name].append(time.perf_counter() - start)
    return times


def bundle_cases() -> dict[str, object]:
    """The sizes issue 22 §5 names, each a default view (random values: the widest texts)."""
    gen = torch.Generator().manual_seed(0)
    return {
        "10": torch.randn(10, generator=gen),
        "10**3 (10x100)": torch.randn(10, 100, generator=gen),
        "10**4 (100x100)": torch.randn(100, 100, generator=gen),
        "10**6 (1000x1000)": torch.randn(1000, 1000, generator=gen),
        "10**8 meta (10**4x10**4)": torch.empty(10**4, 10**4, device="meta"),
        "2x3x4x5": torch.randn(2, 3, 4, 5, generator=gen),
        "attention heads (2,4,5,8)": torch.randn(2, 5, 32, generator=gen)
        .view(2, 5, 4, 8)
        .transpose(1, 2),
        "5x6x7x8": torch.randn(5, 6, 7, 8, generator=gen),
    }


def time_bundles(repeats: int) -> dict[str, dict[str, float]]:
    """Per case: median ms of the mime bundle ``display(x)`` makes after ``sw.enable()`` and of
    ``repr(x)``, timed alternately in one run, and the bytes of the fallback (``text/html``)."""
    from IPython.core.interactiveshell import InteractiveShell

    ip = InteractiveShell.instance()
    sw.enable(ip)
    results = {}
    try:
        for name, x in bundle_cases().items():
            data, _ = ip.display_formatter.format(x)  # warm-up, and the sizes
            bundle_s, repr_s = [], []
            for _ in range(repeats):
                start = time.perf_counter()
                ip.display_formatter.format(x)
                bundle_s.append(time.perf_counter() - start)
                start = time.perf_counter()
                repr(x)
                repr_s.append(time.perf_counter() - start)
            bundle_ms, repr_ms = statistics.median(bundle_s) * 1e3, statistics.median(repr_s) * 1e3
            results[name] = {
                "bundle_ms": bundle_ms,
                "repr_ms": repr_ms,
                "ratio": bundle_ms / repr_ms,
                "fallback_bytes": len(data["text/html"].encode()),
                "state_bytes": len(json.dumps(build_scene({"tensor": x}))),
            }
    finally:
        sw.disable(ip)
    return results


def print_bundles(results: dict[str, dict[str, float]], repeats: int) -> None:
    print(f"display(x) after sw.enable(): mime bundle vs repr(x), medians of {repeats} alternating")
    print(
        f"  {'case':26s} {'bundle':>9s} {'repr':>9s} {'ratio':>7s} {'fallback':>10s} {'state':>9s}"
    )
    for name, r in results.items():
        print(
            f"  {name:26s} {r['bundle_ms']:7.2f}ms {r['repr_ms']:7.2f}ms {r['ratio']:6.1f}x "
            f"{r['fallback_bytes'] / 1000:8.1f}kB {r['state_bytes'] / 1000:7.1f}kB"
        )
    worst = max(r["bundle_ms"] for r in results.values())
    verdict = "ok" if worst <= TARGET_BUNDLE_MS else "OVER"
    print(f"  slowest bundle {worst:.2f} ms (target <= {TARGET_BUNDLE_MS} ms: {verdict})")


def page_html(scene: dict[str, object], dark: bool = False, bundle: pathlib.Path = STATIC) -> str:
    """A standalone page: the built bundle (``widget.js`` + ``widget.css`` in ``bundle``), its CSS
    and a fake anywidget model holding ``scene`` and the picture Python lays out from it."""
    code = (bundle / "widget.js").read_text()
    css = (bundle / "widget.css").read_text()
    background = "#111" if dark else "#fff"
    theme = (
        ":root{--jp-ui-font-color1:#e6edf3;--jp-ui-font-color2:#9198a1;--jp-layout-color0:#111;"
        "--jp-layout-color1:#1b1f24;--jp-layout-color3:#3a4049;--jp-border-color1:#6e7681;"
        "--jp-brand-color1:#ff7b72}"
        if dark
        else ""
    )
    # the picture Python lays out for the widget's px (the page's 1,280 px less margins); an older
    # build (--baseline) draws from the scene, so both are in the state
    picture = picture_of(scene, 1256, None)
    return f"""<!doctype html><html><head><meta charset="utf-8"><style>{css}{theme}
body{{margin:8px;background:{background}}}</style></head><body><div id="host"></div>
<script type="module">
const scene = {json.dumps(scene)};
const picture = {json.dumps(picture)};
const code = {json.dumps(code)};
const handlers = new Map();
const state = {{ scene, picture, hovered: null, wrap: null }};
const model = {{
  get: (k) => state[k],
  set: (k, v) => {{ state[k] = v; (handlers.get("change:" + k) ?? []).forEach((h) => h()); }},
  on: (n, h) => handlers.set(n, [...(handlers.get(n) ?? []), h]),
  off: (n, h) => handlers.set(n, (handlers.get(n) ?? []).filter((x) => x !== h)),
  save_changes: () => {{}},
  send: () => {{}},
}};
window.__model = model;
const url = URL.createObjectURL(new Blob([code], {{ type: "text/javascript" }}));
const widget = (await import(url)).default;
const host = document.getElementById("host");
const t0 = performance.now();
widget.render({{ model, el: host }});
host.getBoundingClientRect();  // force layout: the time includes it
window.__renderMs = performance.now() - t0;
window.__ready = true;
</script></body></html>"""


def largest_default_view() -> dict[str, object]:
    base = torch.randn(100, 100, 100, 100)  # 10**8 elements, the worst case the defaults allow
    return {"x": base, "xt": base.transpose(1, 3), "xs": base[:, ::3, 1::2]}


def browser_timings(
    scene: dict[str, object], samples: int, page_loads: int, baseline: pathlib.Path | None = None
) -> dict[str, float]:
    """Render and hover times of the bundle; with ``baseline`` (a folder holding another build's
    ``widget.js`` + ``widget.css``) also its render times, page loads alternating between the two."""
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        path = pathlib.Path(tmp) / "page.html"
        path.write_text(page_html(scene))
        baseline_path = pathlib.Path(tmp) / "baseline.html"
        if baseline:
            baseline_path.write_text(page_html(scene, bundle=baseline))
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        renders, baseline_renders = [], []

        def load(url: str) -> float:
            page.goto(url)
            page.wait_for_function("window.__ready === true")
            return page.evaluate("window.__renderMs")

        for _ in range(page_loads):
            if baseline:
                baseline_renders.append(load(baseline_path.as_uri()))
            renders.append(load(path.as_uri()))
        hover = page.evaluate(
            """(samples) => {
              const nodes = [...document.querySelectorAll('[data-key],[data-cell],.sws-lcell rect,.sws-scell rect')];
              const times = [];
              for (let k = 0; k < samples; k++) {
                const node = nodes[(k * 7919) % nodes.length];
                const t0 = performance.now();
                node.dispatchEvent(new MouseEvent('mouseover', {bubbles: true}));
                document.body.getBoundingClientRect();  // include style/layout of the highlight
                times.push(performance.now() - t0);
              }
              times.sort((a, b) => a - b);
              return {median: times[Math.floor(times.length / 2)], max: times[times.length - 1],
                      nodes: nodes.length};
            }""",
            samples,
        )
        browser.close()
    return {
        "render_ms_median": statistics.median(renders),
        "baseline_render_ms_median": (
            statistics.median(baseline_renders) if baseline_renders else None
        ),
        "render_ms_first": renders[0],
        "render_ms_min": min(renders),
        "hover_ms_median": hover["median"],
        "hover_ms_max": hover["max"],
        "cells": hover["nodes"],
    }


def screenshots(directory: pathlib.Path) -> list[pathlib.Path]:
    from playwright.sync_api import sync_playwright

    x = torch.arange(12.0).reshape(3, 4)
    big = torch.arange(10**6, dtype=torch.float32).reshape(1000, 1000)
    cases = {
        "aliases": ({"x": x, "xt": x.t(), "cols": x[:, ::2]}, False),
        "expand_unfold": (
            {"row": x[0].expand(3, 4), "windows": torch.arange(10.0).unfold(0, 4, 2)},
            False,
        ),
        "copies_dark": ({"x": x, "detached": x.detach(), "clone": x.clone()}, True),
        "big_3d": ({"big": big, "v": big[::2, 1::3]}, False),
        "hd_meta_xss": (
            {
                "<img src=x onerror=alert(1)>": torch.empty(4, 5, 6, device="meta"),
                "bf16": torch.randn(2, 3, 4).to(torch.bfloat16),
                "numpy_rev": np.arange(20.0).reshape(4, 5)[::-1, ::2],
            },
            False,
        ),
    }
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        for name, (tensors, dark) in cases.items():
            html_path = directory / f"{name}.html"
            html_path.write_text(page_html(build_scene(tensors), dark=dark))
            page.goto(html_path.as_uri())
            page.wait_for_function("window.__ready === true")
            cell = page.query_selector("[data-key]")
            if cell is not None:
                cell.hover()
            png = directory / f"{name}.png"
            page.screenshot(path=str(png), full_page=True)
            written.append(png)
        browser.close()
    return written


def readme_numbers(bundles: dict[str, dict[str, float]]) -> dict[str, dict[str, float | str]]:
    """The numbers the README cites (``<!-- result ...#readme.KEY -->``): fallback kB and bundle
    ms at the sizes issue 36 names, and the slowest bundle's ratio to ``repr``."""
    kb = {"100x100": "10**4 (100x100)", "2x3x4x5": "2x3x4x5", "heads": "attention heads (2,4,5,8)"}
    out: dict[str, dict[str, float | str]] = {
        f"fallback_kB_{key}": {"value": bundles[name]["fallback_bytes"] / 1000, "unit": "kB"}
        for key, name in kb.items()
    }
    times = [b["bundle_ms"] for b in bundles.values()]
    out["bundle_ms"] = {"low": min(times), "high": max(times), "unit": "ms"}
    out["target_bundle_ms"] = {"value": TARGET_BUNDLE_MS, "unit": "ms"}
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--hover-samples", type=int, default=300)
    parser.add_argument("--page-loads", type=int, default=11)
    parser.add_argument("--no-browser", action="store_true")
    parser.add_argument("--screenshots", type=pathlib.Path)
    parser.add_argument(
        "--baseline",
        type=pathlib.Path,
        help="a folder with another build's widget.js + widget.css (e.g. from `git show "
        "REV:stridewidget/notebook/static/widget.js`): its first render is timed in the same run",
    )
    parser.add_argument("--bundle-only", action="store_true", help="only part 0 (display(x))")
    parser.add_argument("--json", type=pathlib.Path, help="write part 0's results here")
    args = parser.parse_args()

    bundles = time_bundles(args.repeats)
    print_bundles(bundles, args.repeats)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        stored = {
            "torch_version": torch.__version__,
            "repeats": args.repeats,
            "load_average_1min": os.getloadavg()[0],  # a shared machine: how busy it was
            "bundle": bundles,
            "readme": readme_numbers(bundles),
        }
        args.json.write_text(json.dumps(stored, indent=1) + "\n")
    if args.bundle_only:
        return 0

    huge = torch.zeros(10**8)
    cases = {
        "1e8 contiguous": {"x": huge.view(10**4, 10**4)},
        "100 contiguous": {"x": torch.zeros(10, 10)},
        "1e8 strided view": {"v": huge.view(10**4, 10**4)[::3, 1::7].t()},
        "100 strided view": {"v": torch.zeros(100).view(10, 10)[::3, 1::7].t()},
    }
    times = time_builds(cases, args.repeats)
    print(f"scene build, median of {args.repeats} interleaved repeats")
    for name, case in cases.items():
        payload = len(json.dumps(build_scene(case)))
        print(f"  {name:18s} {statistics.median(times[name]) * 1e3:8.2f} ms  {payload:8d} B")
    for kind in ("contiguous", "strided view"):
        ratio = statistics.median(times[f"1e8 {kind}"]) / statistics.median(times[f"100 {kind}"])
        verdict = "ok" if ratio <= 3 else "OVER TARGET"
        print(f"  ratio 1e8/100 ({kind}): {ratio:.2f}  (target <= 3: {verdict})")
    meta = build_scene({"m": torch.empty(10**9, device="meta").view(1000, 1000, 1000)})
    print(f"  1e9 meta (1000,1000,1000) payload: {len(json.dumps(meta))} B")

    if not args.no_browser:
        view = largest_default_view()
        scene = build_scene(view)
        timing = browser_timings(scene, args.hover_samples, args.page_loads, args.baseline)
        print(
            f"browser (Chromium, largest default view: {len(json.dumps(scene))} B payload, "
            f"{timing['cells']} hoverable cells)"
        )
        print(
            f"  first render: median {timing['render_ms_median']:.1f} ms of {args.page_loads} page "
            f"loads (min {timing['render_ms_min']:.1f}, first {timing['render_ms_first']:.1f}; "
            "target <= 150 ms)"
        )
        if timing["baseline_render_ms_median"] is not None:
            before = timing["baseline_render_ms_median"]
            print(
                f"  baseline {args.baseline}: first render median {before:.1f} ms, loads "
                f"alternating; this build / baseline = {timing['render_ms_median'] / before:.2f}"
            )
        print(
            f"  hover response: median {timing['hover_ms_median']:.2f} ms, "
            f"max {timing['hover_ms_max']:.2f} ms (target median <= 16 ms)"
        )
    if args.screenshots:
        for png in screenshots(args.screenshots):
            print(f"screenshot: {png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
