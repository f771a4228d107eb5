"""A right-to-left name before an index keeps the index in reading order, in Chromium.

Under the Unicode bidirectional algorithm, digits after an Arabic letter are Arabic numbers, and
the brackets and commas between them follow: ``وزن[0, 2, 0, 1]`` was shown as ``[1 ,0 ,2 ,0]وزن``
(another cell's index, read from left to right) in slice titles, notes and hover lines.  The
oracle is Chromium's own layout: where it paints each digit of the index (``getStartPositionOfChar``
in the static SVG; a ``Range`` per character in the status line, as the widget shows a hover
line): the index's numbers must stand left to right in their logical order.
"""

from __future__ import annotations

import itertools
import re

import pytest
import torch

import stridewidget as sw
from stridewidget.notebook.picture import picture_of
from stridewidget.scene.build import build_scene

NAMES = ["وزن", "משקלים", "أوزان الطبقة", "וזן"]

#: the x of each character of every text in the SVG holding ``name[``, as Chromium lays it out
_SVG_POSITIONS = """
(name) => [...document.querySelectorAll("text")]
  .filter((t) => t.textContent.includes(name + "[") || t.textContent.includes(name + "\\u2069["))
  .map((t) => ({
    text: t.textContent,
    xs: [...t.textContent].map((_, i) => { try { return t.getStartPositionOfChar(i).x; } catch { return null; } }),
  }))
"""
#: the same for a line of text in an HTML element (the widget's status line)
_HTML_POSITIONS = """
(line) => {
  const div = document.createElement("div");
  div.style.cssText = "font: 13px monospace; white-space: pre";
  div.textContent = line;
  document.body.replaceChildren(div);
  const node = div.firstChild, xs = [];
  for (let i = 0; i < line.length; i++) {
    const range = document.createRange();
    range.setStart(node, i);
    range.setEnd(node, i + 1);
    xs.push(range.getBoundingClientRect().x);
  }
  return xs;
}
"""


def _index_in_order(text: str, xs: list, name: str) -> bool:
    """Whether the numbers of the first ``[...]`` after ``name`` are painted left to right."""
    start = text.index(name) + len(name)
    match = re.compile(r"\[([^\]]*)\]").search(text, start)
    assert match, text
    digits = [match.start(1) + k for k, c in enumerate(match.group(1)) if c.isdigit()]
    firsts = [i for i in digits if i - 1 not in digits]  # each number's first digit
    at = [xs[i] for i in firsts]
    return len(at) < 2 or all(a < b for a, b in itertools.pairwise(at))


@pytest.mark.parametrize("name", NAMES)
def test_the_static_svg_keeps_an_index_after_a_right_to_left_name_in_order(page, name):
    t = torch.arange(36.0).reshape(2, 3, 2, 3)
    page.set_content(sw.render_svg(**{name: t}))
    texts = page.evaluate(_SVG_POSITIONS, name)
    assert len(texts) >= 4  # the slice titles
    wrong = [x["text"] for x in texts if not _index_in_order(x["text"], x["xs"], name)]
    assert wrong == []


@pytest.mark.parametrize("name", NAMES)
def test_the_hover_lines_keep_an_index_after_a_right_to_left_name_in_order(page, name):
    t = torch.arange(36.0).reshape(2, 3, 2, 3)
    listed = picture_of(build_scene({name: t, "b": t[:, 1:]}), 900, None)
    lines = []

    def walk(items):
        for item in items:
            if item[0] == "g":
                if item[3] and name in item[3] and "[" in item[3].split(name, 1)[1]:
                    lines.append(item[3])
                walk(item[4])

    walk(listed["items"])
    assert len(lines) >= 10  # every logical cell's hover line names it
    wrong = [s for s in lines if not _index_in_order(s, page.evaluate(_HTML_POSITIONS, s), name)]
    assert wrong == []
