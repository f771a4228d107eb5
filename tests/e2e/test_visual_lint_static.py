"""The visual lint (``visual_lint.py``): it finds what it claims to find."""

from __future__ import annotations

import pytest

from .visual_lint import counts, lint, summary_line

# Every planted problem is named by its text; everything else on the page is fine.
PLANTED = """
<div id="pic" style="width:600px;background:#ffffff;font-family:monospace">
  <svg width="400" height="130" style="display:block">
    <rect width="400" height="130" fill="#ffffff"/>
    <text x="10" y="20" fill="#222222" font-size="11">overlap-a</text>
    <text x="30" y="23" fill="#222222" font-size="11">overlap-b</text>
    <text x="10" y="34" fill="#222222" font-size="11">line below, no overlap</text>
    <text x="340" y="60" fill="#222222" font-size="11">clipped-by-svg</text>
    <rect x="0" y="70" width="200" height="30" fill="#777777"/>
    <text x="10" y="90" fill="#555555" font-size="11">grey-on-grey</text>
    <rect x="220" y="70" width="120" height="30" fill="#222222"/>
    <text x="230" y="90" fill="#000000" stroke="#ffffff" stroke-width="3" paint-order="stroke"
          font-size="11">haloed</text>
    <g opacity="0.3"><text x="10" y="120" fill="#000000" font-size="11">dimmed</text></g>
    <text x="200" y="120" fill="#000000" font-size="11">dark<title>a tooltip, not drawn</title></text>
  </svg>
  <p style="color:#aaaaaa;margin:2px">faint-html</p>
  <p style="color:#222222;margin:2px">fine html</p>
  <div style="width:60px;overflow:hidden;white-space:nowrap;color:#222222">cut-by-its-box-here</div>
  <details><summary style="color:#222222">more</summary>
    <span style="color:#eeeeee">closed details are not drawn</span></details>
</div>
"""


def test_lint_finds_each_planted_problem_and_nothing_else(page):
    page.set_content(PLANTED)
    result = lint(page, "#pic")
    assert {tuple(sorted((o["a"], o["b"]))) for o in result["overlaps"]} == {
        ("overlap-a", "overlap-b")
    }
    assert {c["text"] for c in result["clipped"]} == {"clipped-by-svg", "cut-by-its-box-here"}
    assert {c["text"] for c in result["low_contrast"]} == {"grey-on-grey", "dimmed", "faint-html"}
    texts = {t["text"] for t in result["texts"]}
    assert "closed details are not drawn" not in texts and "a tooltip, not drawn" not in texts
    assert {"more", "haloed", "fine html"} <= texts
    assert counts(result)["height"] == round(page.locator("#pic").bounding_box()["height"])


ARROWS = """
<div id="pic" style="width:400px;background:#ffffff">
  <svg width="400" height="140" style="display:block">
    <defs><marker id="m" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7"
      orient="auto"><path d="M 0 0 L 10 5 L 0 10 z" fill="#000"/></marker></defs>
    <text x="40" y="24" font-size="11" fill="#222222">crossed-label</text>
    <path d="M 20 20 L 200 20" stroke="#000" fill="none" marker-end="url(#m)"/>
    <path d="M 20 60 L 200 60" stroke="#000" fill="none" marker-end="url(#m)"/>
    <path d="M 100 60 L 300 60" stroke="#000" fill="none" marker-end="url(#m)"/>
    <path d="M 250 10 L 250 110" stroke="#000" fill="none" marker-end="url(#m)"/>
    <text x="260" y="100" font-size="11" fill="#222222">clear-label</text>
    <text x="300" y="115" font-size="11" fill="#222222">under-a-head</text>
    <path d="M 330 70 L 330 108" stroke="#000" fill="none" marker-end="url(#m)"/>
    <path d="M 20 100 L 120 100" stroke="#000" fill="none"/>
    <text x="40" y="104" font-size="11" fill="#222222">under-a-plain-line</text>
  </svg>
</div>
"""


def test_lint_finds_arrows_over_text_and_over_arrows(page):
    """An arrow through a label and two arrows run together are found; an arrow crossing another,
    a label beside an arrow and a line without an arrowhead are not."""
    page.set_content(ARROWS)
    result = lint(page, "#pic")
    found = sorted(hit["text"] for hit in result["arrows_over_text"])
    assert found == ["crossed-label", "under-a-head"]  # a line through one, a head on the other
    assert len(result["arrows_over_arrows"]) == 1  # the two on y = 60, not the crossing one
    assert result["arrows_over_arrows"][0]["px"] >= 90
    assert result["arrows"] == 5


def test_lint_on_a_clean_picture_counts_zero(page):
    page.set_content(
        '<div id="pic" style="background:#1e1e1e;padding:4px">'
        '<span style="color:#e8e8e8">light on dark</span> '
        '<span style="color:#b3b3b3">muted on dark</span></div>'
    )
    c = counts(lint(page, "#pic"))
    assert (c["texts"], c["overlaps"], c["clipped"], c["low_contrast"]) == (2, 0, 0, 0)


def test_corpus_has_the_issue_layouts_and_every_playground_preset():
    import json

    from .lint_corpus import CASES, PLAYGROUND_CASES, tensors_of

    presets = json.loads(PLAYGROUND_CASES.read_text())["bases"][0]["presets"]
    assert {c.name for c in CASES if c.playground} == {f"preset-{name}" for name in presets}
    assert len(CASES) >= 25 + len(presets) - 1
    for case in CASES:
        tensors = tensors_of(case)
        assert tensors and all(isinstance(name, str) for name in tensors), case.name
    assert max(len(tensors_of(c)) for c in CASES) == 10  # the ten views listed for size
    assert max(len(n) for c in CASES for n in tensors_of(c)) == 60  # the long name


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_static_fallback_over_the_corpus_has_no_text_problems_and_fits(browser, theme):
    """Issue 10's check on the static fallback (``sw.render_html``, what nbconvert and GitHub
    show), every corpus layout at 1,280 px wide: 0 overlapping texts, 0 clipped texts, 0 texts
    under 4.5:1, heights within the issue's limits.  Prints the table; saves every screenshot."""
    import stridewidget as sw
    from stridewidget.style import STYLE

    from .conftest import SCREENSHOTS
    from .lint_corpus import CASES, tensors_of

    colours = STYLE["themes"][theme]
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    lines, failures = [], []
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for case in CASES:
        fallback = sw.render_html(**tensors_of(case), wrap=case.wrap, theme=theme)
        page.set_content(
            f'<body style="margin:0;background:{colours["background"]}">{fallback}</body>'
        )
        result = lint(page, ".stridewidget-fallback")
        page.locator(".stridewidget-fallback").screenshot(
            path=str(SCREENSHOTS / f"static-{theme}-{case.name}.png")
        )
        lines.append(summary_line(case.name, result))
        c = counts(result)
        bad = ("overlaps", "clipped", "low_contrast", "arrows_over_text", "arrows_over_arrows")
        if any(c[kind] for kind in bad) or c["height"] > case.max_height:
            failures.append((case.name, c, *(result[kind][:3] for kind in bad)))
    context.close()
    table = "\n".join([f"static fallback, {theme} theme, 1,280 px wide:", *lines])
    print(table)
    (SCREENSHOTS / f"static-{theme}-lint.txt").write_text(table + "\n")
    assert failures == []
