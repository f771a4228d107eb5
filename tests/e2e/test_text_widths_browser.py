"""Issue 36 in Chromium: every text's width as Python estimates it (``text_width``) is never less
than what Chromium paints, in the picture's font stack at its sizes, for names in any script; and
pictures whose names are in these scripts keep every text inside the picture, none over another.

The oracle is Chromium's own layout: ``getComputedTextLength`` and ``getBBox`` of each text in an
SVG with the picture's ``font-family`` (fonts the page falls back to included), and the visual
lint's clipped and overlapping texts (``visual_lint.py``) of the widget and the static fallback at
900 and 1,280 px.  A name of 60 ``ℵ`` ran 80 px past the picture's right edge before.
"""

from __future__ import annotations

import pytest

import stridewidget as sw
from stridewidget.notebook.picture import picture_of
from stridewidget.render.primitives import text_width
from stridewidget.scene.build import build_scene
from stridewidget.style import STYLE

from .test_fit_browser import _widget_page
from .test_visual_lint_widget import _RENDER
from .visual_lint import lint

G = STYLE["geometry"]

#: texts in many scripts, as names and labels carry them
CORPUS = {
    "ascii": "activations_of_layer_7",
    "latin-1": "Gewichtsmatrix_über_alle_Köpfe_déjà_vu_ñ",
    "latin-ext": "ŁłŒœŠšŽžĞğİıǄǅǆ",
    "greek": "αβγδεζηθλμπσωΩΣΔ_βάρη",
    "cyrillic": "ЖжШшЩщЫыЮюЯя_веса",
    "hebrew": "משקולות_השכבה",
    "arabic": "أوزان_الطبقة_مرحبا",
    "devanagari": "परत_के_भार_नमस्ते",
    "thai": "สวัสดีชาวโลก",
    "cjk": "注意力权重矩阵的转置视图（所有头）",
    "kana": "カタカナひらがなｱｲｳ",
    "hangul": "안녕하세요_세계_가중치",
    "emoji": "😀🎉🚀🔥👍😴",
    "emoji-zwj": "👩‍💻👨‍👩‍👧‍👦🏳️‍🌈👍🏽✌️",
    "math": "ℵ∑∫∂∇∞≤≥⊗⊕→⟶⟹‱",
    "aleph": "ℵ" * 60,
    "combining": "e\u0301a\u0300o\u0308n\u0303x\u20d7a\u0301\u0302\u0303\u0304",
    "fullwidth": "ＡＢＣ１２３！ｗｅｉｇｈｔ",
    "symbols": "©®™°±µ¶§←↑→↓■□▲●★☆♠♥─│┌┐",
    "other-scripts": "ሰላም_Բարեւ_გამარჯობა_བཀྲ་ཤིས_ᏣᎳᎩ",
    "picture-marks": "— – … → ← ↑ ↓ − ≈ ∞ ≤ ≥ Σ ▸ ↳ ✗ ⋯ ⋮ · × ± µ",
}

_SVG = (
    "<svg xmlns='http://www.w3.org/2000/svg' width='4000' height='100' font-family=\"{}\">"
    "<text id='t' x='0' y='50'></text></svg>"
)
_MEASURE = """
([text, size, bold]) => {
  const t = document.getElementById("t");
  t.textContent = text;
  t.setAttribute("font-size", size);
  t.setAttribute("font-weight", bold ? "bold" : "normal");
  const box = t.getBBox();
  return Math.max(t.getComputedTextLength(), box.x + box.width);
}
"""


def test_text_width_is_never_less_than_chromium_paints(page):
    page.set_content(_SVG.format(G["font_family"].replace('"', "'")))
    lines, problems = [], []
    for name, text in CORPUS.items():
        for size in (G["font_size_small"], G["font_size"], G["font_size_title"]):
            for bold in (False, True):
                painted = page.evaluate(_MEASURE, [text, size, bold])
                estimate = text_width(text, size)
                if size == G["font_size"] and not bold:
                    lines.append(
                        f"{name:<14} {size} px  Chromium {painted:7.1f}  estimate {estimate:7.1f}"
                    )
                if estimate < painted - 0.05:
                    problems.append(f"{name} at {size} px{' bold' if bold else ''}: "
                                    f"painted {painted:.1f} px, estimated {estimate:.1f}")  # fmt: skip
    print("\n" + "\n".join(lines))
    assert problems == []
    # ASCII keeps one monospace advance a character: no picture of ASCII texts changes
    assert text_width(CORPUS["ascii"], 11) == len(CORPUS["ascii"]) * G["char_em"] * 11


def _tensors():
    """Pictures whose names are in the corpus's scripts: each alone, then all in one picture."""
    import torch

    one = {name: {text: torch.arange(12.0).reshape(3, 4)} for name, text in CORPUS.items()}
    mixed = {text[:24]: torch.arange(6.0).reshape(2, 3) for text in list(CORPUS.values())[5:13]}
    one["mixed"] = mixed
    one["view-pair"] = (lambda x: {CORPUS["cjk"]: x, CORPUS["math"]: x.t()})(
        torch.arange(12.0).reshape(3, 4)
    )
    one["3d-slices"] = {CORPUS["aleph"][:30] + CORPUS["cjk"]: torch.arange(24.0).reshape(2, 3, 4)}
    one["strided-1d"] = {CORPUS["emoji-zwj"] + CORPUS["math"]: torch.arange(40.0)[::3]}
    return one


#: per text of the root's pictures: how far (px) its painted box runs past its picture's sides
_PAST = """
(root) => {
  const past = {};
  for (const svg of root.querySelectorAll("svg")) {
    const edge = svg.getBoundingClientRect();
    for (const t of svg.querySelectorAll("text")) {
      const box = t.getBoundingClientRect(), text = t.textContent.trim();
      past[text] = Math.max(past[text] ?? -Infinity, box.right - edge.right, edge.left - box.left);
    }
  }
  return past;
}
"""


def _problems(page, selector: str, what: str) -> list[str]:
    result = lint(page, selector)
    past = page.locator(selector).first.evaluate(_PAST)
    out = [
        f"{what}: {c['text'][:40]!r} clipped, {past.get(c['text'], 0):.0f} px past the edge"
        for c in result["clipped"]
    ]
    return out + [f"{what}: {o['a'][:40]!r} over {o['b'][:40]!r}" for o in result["overlaps"]]


@pytest.mark.parametrize("width", [900, 1280])
def test_pictures_named_in_any_script_keep_their_texts_inside(browser, width):
    context, page = _widget_page(browser, width)
    problems = []
    for case, tensors in _tensors().items():
        scene = build_scene(tensors)
        state = {"picture": picture_of(scene, width - 24, None), "wrap": None, "hovered": None}
        page.evaluate(_RENDER, ["widget", {**state, "picked": {}}])
        page.locator("#pic .sw-root").wait_for()
        problems += _problems(page, "#pic", f"widget {case} {width}px")
        fallback = sw.render_html(**tensors)
        page.set_content(f'<body style="margin:8px;background:#fff">{fallback}</body>')
        problems += _problems(page, ".stridewidget-fallback", f"static {case} {width}px")
    context.close()
    print("\n" + "\n".join(problems))
    assert problems == []
