"""No quantity is typed into prose: notebook markdown and the README read their numbers from data.

A number with a unit of time (ns, µs, ms, s, min, seconds), size (B, bytes, kB, KiB, MB, MiB,
GB, GiB), rate (GB/s, TB/s, img/s), a percentage or a ratio (×, x) is a measurement, and a measurement typed by hand
goes stale the day the code or the machine changes. So:

* **Notebooks** (every ``notebooks/NN_*.py``, present and future): a markdown cell never types
  such a number. Print it from a code cell instead, computed in the notebook or read from
  ``claims.toml`` / ``notebooks/results/*.json`` (the verdict boxes are rendered that way).
  Exempt: code spans (`` `x[:, ::2]` ``), text in quotes ("…" or “…”, for quoting a seed article
  word for word) and shapes such as 2×3 (a number × a number).
* **Verdicts** (``notebooks/claims.toml``, rendered into the boxes and tables): a number in a
  claim's ``why`` is printed by the claim's labelled cell (as it rounds it), quoted from the
  claim's ``seed`` text, or the timing margin.
* **README.md**: every such number outside code is followed, on the same line, by a marker that
  names where it comes from, and this test recomputes it:

  - ``48–549 kB<!-- result notebooks/results/page-size.json#readme.page_kB -->``: the file (a
    stored benchmark result under ``benchmarks/results/`` or ``notebooks/results/``) holds, at
    that ``#``-path of keys, ``{"value": x, "unit": "kB"}`` or ``{"low": a, "high": b, "unit":
    "kB"}``. The README's typed number (or range ``a–b``) must equal the stored value(s) rounded
    to as many decimals as it types, in the same unit. The benchmark script writes that entry
    from its own measurements, so re-running it and committing the JSON is how a number changes.
  - ``2×<!-- setting lessons:TIMING_MARGIN -->``: a setting, not a measurement;
    the typed number must equal that module attribute (a size setting is given in bytes and
    typed in the unit it shows: 16 MiB equals 16 * 2**20).

  To add a README number: make the benchmark store it as above, type it with the marker, run
  ``pytest tests/test_prose_numbers.py``.
"""

from __future__ import annotations

import importlib
import json
import re
from pathlib import Path

import jupytext
import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK_SOURCES = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.py"))
README = ROOT / "README.md"
RESULT_DIRS = ("benchmarks/results/", "notebooks/results/")

NUMBER = r"\d+(?:[.,]\d+)*"
UNITS = r"img/s|GB/s|TB/s|MB/s|GiB|MiB|KiB|kB|KB|MB|GB|TB|bytes?|seconds?|minutes?|ns|µs|us|ms|min|s|B|%"
# a number (or a range of two) and its unit; "2×2" (a shape) is not a ratio
QUANTITY = re.compile(
    rf"(?<![\w.])(?P<low>{NUMBER})(?:\s?[–-]\s?(?P<high>{NUMBER}))?"
    rf"(?:\s?(?P<unit>{UNITS})(?![\w/])|(?P<ratio>\s?[×x])(?!\s?\d)(?![\w]))"
)
EXEMPT = re.compile(r"`[^`]*`|\"[^\"]*\"|“[^”]*”|<!--.*?-->", re.S)
SIZES = {"B": 1, "kB": 10**3, "KiB": 2**10, "MB": 10**6, "MiB": 2**20, "GB": 10**9, "GiB": 2**30}


def typed_quantities(text: str) -> list[re.Match]:
    """The quantities typed in ``text``, outside code spans, quotes and HTML comments."""
    blanked = EXEMPT.sub(lambda m: " " * len(m.group()), text)
    return list(QUANTITY.finditer(blanked))


@pytest.mark.parametrize(
    "text, found",
    [
        ("takes 1.3× longer", ["1.3×"]),
        ("2.7x faster", ["2.7x"]),
        ("about 70 kB", ["70 kB"]),
        ("71–86 µs", ["71–86 µs"]),
        ("62.5 % of it", ["62.5 %"]),
        ("37 GB/s", ["37 GB/s"]),
        ("a 2×2 image of shape (8, 64), stride (1, 6), element 24", []),
        ("`x[:, ::2]` takes `10 ms`; the seed says “0.02 ms”", []),
        ('the seed: "3-5x faster"', []),
    ],
)
def test_the_pattern_finds_quantities_and_only_them(text, found):
    assert [m.group().strip() for m in typed_quantities(text)] == found


@pytest.mark.parametrize("path", NOTEBOOK_SOURCES, ids=lambda p: p.name)
def test_no_markdown_cell_types_a_quantity(path):
    cells = jupytext.read(path, fmt="py:percent").cells
    typed = [
        f"cell {number}: {match.group().strip()!r} in {cell.source[max(0, match.start() - 40) : match.end()]!r}"
        for number, cell in enumerate(cells)
        if cell.cell_type == "markdown"
        for match in typed_quantities(cell.source)
    ]
    assert not typed, "print these from a code cell (see this file's docstring):\n" + "\n".join(
        typed
    )


MARKER = re.compile(r"<!--\s*(result|setting)\s+(\S+)\s*-->")
TIME_UNITS = {"ns": 1e-9, "µs": 1e-6, "us": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0}


def readme_prose() -> str:
    """README.md with its fenced code blocks blanked (line numbers kept)."""
    text = README.read_text(encoding="utf-8")
    return re.sub(r"```.*?```", lambda m: "\n" * m.group().count("\n"), text, flags=re.S)


def typed_values(match: re.Match) -> tuple[list[str], str]:
    """The number(s) a quantity match types, and its unit ("×" for a ratio)."""
    numbers = [n for n in (match.group("low"), match.group("high")) if n]
    unit = match.group("unit") or "×"
    return numbers, unit


def agrees(typed: str, value: float) -> bool:
    """Whether ``typed`` is ``value`` rounded to as many decimals as it shows."""
    decimals = len(typed.split(".")[1]) if "." in typed else 0
    return float(typed) == round(value, decimals)


def stored(kind: str, source: str) -> tuple[list[float], str | None]:
    """The values a marker names: a stored result's numbers and unit, or a setting (unit None)."""
    if kind == "setting":
        module, attribute = source.split(":")
        return [getattr(importlib.import_module(module), attribute)], None
    path, _, keys = source.partition("#")
    assert path.startswith(RESULT_DIRS), f"{path}: results live under {' or '.join(RESULT_DIRS)}"
    entry = json.loads((ROOT / path).read_text())
    for key in keys.split("."):
        entry = entry[key]
    values = [entry["value"]] if "value" in entry else [entry["low"], entry["high"]]
    return values, entry["unit"]


def in_unit(value: float, unit: str) -> float:
    """A setting (bytes or seconds or a plain number) in the unit the README types."""
    return value / SIZES.get(unit, 1) if unit not in TIME_UNITS else value / TIME_UNITS[unit]


def test_every_readme_quantity_names_its_source():
    lines = readme_prose().splitlines()
    unsourced = [
        f"line {number}: {match.group().strip()!r}"
        for number, line in enumerate(lines, 1)
        for match in typed_quantities(line)
        if not MARKER.match(line, match.end())
    ]
    assert not unsourced, (
        "cite a stored result or a setting (this file's docstring):\n" + "\n".join(unsourced)
    )


def test_every_readme_quantity_agrees_with_its_source():
    checked = 0
    for line in readme_prose().splitlines():
        for match in typed_quantities(line):
            marker = MARKER.match(line, match.end())
            if marker is None:
                continue  # the test above reports it
            numbers, unit = typed_values(match)
            values, stored_unit = stored(*marker.groups())
            shown = match.group().strip()
            if stored_unit is not None:
                assert unit == stored_unit, f"{shown}: stored in {stored_unit}"
            else:
                values = [in_unit(value, unit) for value in values]
            assert len(numbers) == len(values), f"{shown}: the source holds {values}"
            assert all(map(agrees, numbers, values)), f"{shown}: the source says {values}"
            checked += 1
    assert checked >= 3  # the README's cited numbers were found and checked


def test_a_stale_readme_number_is_caught():
    # the check itself, on a typed value that no longer matches its stored result
    assert agrees("65", 64.765) and agrees("1714", 1713.9) and agrees("2", 2.0)
    assert not agrees("70", 64.765) and not agrees("64.7", 64.765)
    assert in_unit(16 * 2**20, "MiB") == 16 and in_unit(0.03, "ms") == pytest.approx(30)


def _claim_cell_outputs(claim) -> str:
    import nbformat

    (saved,) = (ROOT / "notebooks").glob(f"{claim.notebook}_*.ipynb")
    cells = nbformat.read(saved, as_version=4).cells
    return " ".join(
        output.get("text", "")
        for cell in cells
        if cell.cell_type == "code" and f"[{claim.cell}]" in cell.source.split("\n")[0]
        for output in cell.outputs
    )


def test_every_number_in_a_verdict_is_printed_by_its_cell():
    # A verdict box is rendered from claims.toml, so its numbers are typed there: each must be
    # printed by the claim's labelled cell (a measurement), be quoted from the seed, or be the margin.
    from lessons import TIMING_MARGIN, load_claims

    unbacked = []
    for claim in load_claims(ROOT / "notebooks" / "claims.toml").values():
        printed = _claim_cell_outputs(claim)
        for match in typed_quantities(claim.why):
            for number in filter(None, (match.group("low"), match.group("high"))):
                backed = re.search(rf"(?<![\d.]){re.escape(number)}(?![\d])", printed)
                if not (backed or number in claim.seed or float(number) == TIMING_MARGIN):
                    unbacked.append(f"{claim.id}: {match.group().strip()!r}")
    assert not unbacked, "print these in the claim's cell, or drop them:\n" + "\n".join(unbacked)
