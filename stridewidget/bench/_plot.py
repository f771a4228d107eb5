"""One matplotlib figure per case: GB/s per variant with the run's peak as a line, or time per variant."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from matplotlib.figure import Figure
from matplotlib.ticker import NullFormatter

from ._harness import _format_bytes, _format_seconds


def plot_case(case: dict[str, Any], peak_gbps: float | None, *, subtitle: str = "") -> Figure:
    """A horizontal bar chart of one case's variants.

    Bandwidth cases (``metric == "gbps"``) show achieved GB/s and the peak as a dashed line; the
    others show the median time (log scale) with the interquartile range as error bars. Variants
    that did not match the reference have no bar and are marked as such.

    >>> case = {"name": "demo", "title": "Demo", "metric": "time", "variants": [
    ...     {"name": "a", "median_s": 1e-3, "iqr_s": 1e-4, "gbps": None, "matches_reference": True}]}
    >>> plot_case(case, None).axes[0].get_xlabel()
    'median time (s), bars: IQR'
    """
    # Figure() rather than pyplot: no global state, no GUI backend needed.
    variants = case["variants"]
    figure = Figure(figsize=(8, 0.45 * len(variants) + 1.4), layout="constrained")
    axes = figure.add_subplot()
    labels = [
        v["name"] if v["matches_reference"] else f"{v['name']} (WRONG RESULT, not timed)"
        for v in variants
    ]
    positions = range(len(variants))
    if case["metric"] == "gbps":
        values = [v["gbps"] or 0.0 for v in variants]
        axes.barh(positions, values, color="tab:blue")
        if peak_gbps:
            axes.axvline(
                peak_gbps, color="tab:red", linestyle="--", label=f"peak {peak_gbps:.1f} GB/s"
            )
            axes.legend(loc="lower right", fontsize="small")
        axes.set_xlabel("achieved GB/s (bytes moved / median time)")
    else:
        values = [v["median_s"] or 0.0 for v in variants]
        errors = [v["iqr_s"] or 0.0 for v in variants]
        axes.barh(positions, values, xerr=errors, color="tab:green")
        if any(values):
            axes.set_xscale("log")
        axes.set_xlabel("median time (s), bars: IQR")
    for position, value, variant in zip(positions, values, variants):
        if variant["median_s"] is None:
            continue
        # Right of the bar and of its error bar, so the two never overlap.
        end = value + (variant["iqr_s"] or 0.0 if case["metric"] != "gbps" else 0.0)
        text = _bar_label(variant) if value else f"{_bar_label(variant)}, no bytes moved"
        axes.annotate(
            text,
            (end, position),
            xytext=(4, 0),
            textcoords="offset points",
            va="center",
            fontsize="x-small",
        )
    axes.xaxis.set_minor_formatter(NullFormatter())
    axes.margins(x=0.3)
    axes.set_yticks(list(positions), labels, fontsize="small")
    axes.invert_yaxis()
    axes.set_title(f"{case['title']}\n{subtitle}" if subtitle else case["title"], fontsize="medium")
    return figure


def _bar_label(variant: dict[str, Any]) -> str:
    text = _format_seconds(variant["median_s"])
    extra = variant.get("peak_extra_bytes")
    return text if extra is None else f"{text}, +{_format_bytes(extra)} new"


def save_plots(results: dict[str, Any], path: str | Path) -> list[Path]:
    """Write one PNG per case next to ``path``: ``out.png`` becomes ``out-<case>.png``.

    Returns the paths written.

    >>> import tempfile, os
    >>> case = {"name": "demo", "title": "Demo", "metric": "gbps", "variants": [
    ...     {"name": "a", "median_s": 1e-3, "iqr_s": 0.0, "gbps": 2.0, "matches_reference": True}]}
    >>> results = {"device_name": "CPU", "threading": "single-threaded", "torch_version": "2.x",
    ...            "peak_gbps": 4.0, "cases": [case]}
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     [p.name for p in save_plots(results, os.path.join(folder, "out.png"))]
    ['out-demo.png']
    """
    path = Path(path)
    stem = path.with_suffix("")
    subtitle = f"{results['device_name']}, {results['threading']}, torch {results['torch_version']}"
    written = []
    for case in results["cases"]:
        target = stem.with_name(f"{stem.name}-{case['name']}.png")
        plot_case(case, results["peak_gbps"], subtitle=subtitle).savefig(target, dpi=100)
        written.append(target)
    return written
