"""Values and labels are at least 11 px, storage indices at least 9 px (issue 22 §4), in the
static SVG of every lint-corpus layout (the widget's: ``tests/e2e/test_cell_oracle_widget.py``)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest
from e2e.lint_corpus import CASES, tensors_of

import stridewidget as sw

SVG = "{http://www.w3.org/2000/svg}"
#: A storage index (under a storage cell, a row label, "+k" from a row label) or an @address.
INDEX = re.compile(r"^[@+]?[\d,]+$")


def too_small(texts: list[tuple[str, float]]) -> list[tuple[str, float]]:
    """The (text, size) pairs under the rule: >= 11 px, or >= 9 px for a storage index."""
    return [(t, s) for t, s in texts if s < 9 or (s < 11 and not INDEX.match(t))]


@pytest.mark.parametrize("case", [c for c in CASES if not c.playground], ids=lambda c: c.name)
def test_static_svg_text_sizes(case):
    root = ET.fromstring(sw.render_svg(wrap=case.wrap, **tensors_of(case)))
    default = float(root.get("font-size"))
    texts = [
        ("".join(t.itertext()), float(t.get("font-size", default))) for t in root.iter(f"{SVG}text")
    ]
    assert texts and not too_small(texts)
