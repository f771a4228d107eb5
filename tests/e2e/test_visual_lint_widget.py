"""The live widget over the lint corpus, in both themes, at 1,280 px wide (issue 10).

Each case is drawn by the committed bundles (``stridewidget/notebook/static/widget.js``, and
``playground.js`` for the playground presets) in Chromium, with the model a plain object holding
what Python would sync (the picture Python laid out for the widget's width, or the playground's
traits).  The visual lint counts
overlapping, clipped and low-contrast texts and the height, then again while the last logical cell
is hovered (outline, dimming, index walk), where the dimmed cells must stand apart from the linked
ones (``MIN_DIMMING_RATIO``, measured from pixels); the table is printed, every screenshot saved under
``artifacts/screenshots/widget-lint-<theme>-<case>[-hover].png``, and any count above zero or height
over the case's limit fails the test.
"""

from __future__ import annotations

import base64
import io
import json
import pathlib

import pytest

from stridewidget.notebook.picture import picture_of
from stridewidget.scene.build import build_scene
from stridewidget.style import contrast_ratio

from .conftest import CHROMIUM, CHROMIUM_ARGS, ROOT, SCREENSHOTS, require_or_skip
from .lint_corpus import CASES, evaluate, tensors_of
from .visual_lint import counts, lint, summary_line

STATIC = ROOT / "stridewidget" / "notebook" / "static"
WIDTH = 1280
THEMES = {"light": "#ffffff", "dark": "#1e1e1e"}
#: How far a dimmed cell's fill must stand apart from a linked cell's (WCAG ratio of the two fills):
#: a cell that merely turns translucent on a page of its own colour measures 1.0.
MIN_DIMMING_RATIO = 1.25

# A point of each kind of cell's fill while something is hovered: inside the rect, left of its
# centred text and clear of its outline.
_FILL_POINTS = """
() => {
  const point = (cell) => {
    if (!cell) return null;
    const box = cell.getBoundingClientRect();
    return [box.left + 5, box.top + box.height / 2];
  };
  return {
    linked: point(document.querySelector("#pic .sws-lcell.sw-hl:not(.sw-hl-source) > rect")),
    dimmed: point(document.querySelector("#pic .sws-lcell:not(.sw-hl) > rect")),
  };
}
"""


def _dimming_ratio(page) -> float | None:
    """Contrast of a dimmed cell's fill against a linked one's, from pixels (None: no such pair)."""
    from PIL import Image

    points = page.evaluate(_FILL_POINTS)
    if points["linked"] is None or points["dimmed"] is None:
        return None
    image = Image.open(io.BytesIO(page.screenshot())).convert("RGB")
    fills = [
        tuple(channel / 255 for channel in image.getpixel((round(x), round(y))))
        for x, y in (points["linked"], points["dimmed"])
    ]
    return contrast_ratio(*fills)


_LOADER = """
async ([widgetUrl, playgroundUrl]) => {
  window.swWidget = (await import(widgetUrl)).default;
  window.swPlayground = (await import(playgroundUrl)).default;
}
"""

# A model as anywidget hands it to render(): get/set/on/off/save_changes over plain state.
_RENDER = """
([which, state]) => {
  document.body.replaceChildren();
  const el = document.createElement("div");
  el.id = "pic";
  document.body.appendChild(el);
  const handlers = new Map();
  const model = {
    get: (key) => state[key],
    set: (key, value) => { state[key] = value; (handlers.get(`change:${key}`) ?? []).forEach((h) => h()); },
    on: (name, h) => handlers.set(name, [...(handlers.get(name) ?? []), h]),
    off: () => {},
    save_changes: () => {},
    send: () => {},
  };
  (which === "playground" ? window.swPlayground : window.swWidget).render({ model, el });
}
"""


def _data_url(path) -> str:
    return "data:text/javascript;base64," + base64.b64encode(path.read_bytes()).decode()


#: Cases whose one picture, with the widget's toolbar, is still over the height budget at
#: 1,280 px (none since the strip keeps at most `max_strip_rows` rows: nchw-wrap-20 was 1,614 px,
#: now 1,594).  Checked both ways so an entry goes when the budget is met.
OVER_BUDGET: dict[
    str, str
] = {}  # issue 36: nchw-wrap-20 fits (a picture too tall draws fewer panels)

#: The px the widget reports at 1,280 px (the page's 8 px margins, the root's 4 px padding):
#: Python lays the picture out for it, as it does when the widget's `width` trait arrives.
ROOM = WIDTH - 16 - 2 * 4


def _model_state(case) -> tuple[str, dict]:
    """What Python would sync for the case: the playground's traits, or the widget's picture."""
    if case.playground:
        widget = evaluate(case)
        state = {k: v for k, v in widget.get_state().items() if not k.startswith("_")}
        widget.close()
        return "playground", json.loads(json.dumps(state, default=list))
    scene = build_scene(tensors_of(case), wrap=case.wrap)
    picture = picture_of(scene, ROOM, None)
    return "widget", {
        "scene": scene,
        "picture": picture,
        "wrap": None,
        "hovered": None,
        "picked": {},
    }


@pytest.fixture(scope="module")
def lint_page():
    chromium = pathlib.Path(CHROMIUM)
    require_or_skip(chromium.exists(), f"{chromium} is missing: apt-get install -y chromium")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(chromium), headless=True, args=CHROMIUM_ARGS
        )
        page = browser.new_page(viewport={"width": WIDTH, "height": 900})
        page.route(
            "**/*",
            lambda route: (
                route.continue_()
                if route.request.url.startswith(("data:", "about:"))
                else route.abort()
            ),
        )
        page.set_content("<!doctype html><html><head></head><body></body></html>")
        css = (STATIC / "widget.css").read_text() + (STATIC / "playground.css").read_text()
        page.add_style_tag(content=css + "body { margin: 8px; }")
        page.evaluate(
            _LOADER, [_data_url(STATIC / "widget.js"), _data_url(STATIC / "playground.js")]
        )
        yield page
        browser.close()


@pytest.mark.parametrize("theme", THEMES)
def test_widget_draws_every_corpus_layout_legibly(lint_page, theme):
    page = lint_page
    page.emulate_media(color_scheme=theme)
    page.evaluate(f"document.body.style.background = '{THEMES[theme]}'")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    lines, failures = [], []
    totals = {
        "overlaps": 0, "clipped": 0, "low_contrast": 0, "arrows_over_text": 0,
        "arrows_over_arrows": 0,
    }  # fmt: skip
    for case in CASES:
        which, state = _model_state(case)
        page.evaluate(_RENDER, [which, state])
        root = page.locator("#pic .sw-root, #pic .pg-root").first
        root.wait_for()
        result = lint(page, "#pic")
        page.locator("#pic").screenshot(
            path=str(SCREENSHOTS / f"widget-lint-{theme}-{case.name}.png")
        )
        found = counts(result)
        lines.append(summary_line(case.name, result))
        for kind in totals:
            totals[kind] += found[kind]
        problems = [kind for kind in totals if found[kind]]
        if found["height"] > case.max_height and case.name not in OVER_BUDGET:
            problems.append(f"height {found['height']} > {case.max_height}")
        if case.name in OVER_BUDGET and found["height"] <= case.max_height:
            problems.append(f"fits its budget now ({found['height']} px): off OVER_BUDGET")
        # the same picture while a deep logical cell is hovered: outline, dimming, index walk
        cells = page.locator("#pic .sws-lcell")
        if cells.count():
            cells.nth(cells.count() - 1).hover()
            hovered = lint(page, "#pic")
            page.locator("#pic").screenshot(
                path=str(SCREENSHOTS / f"widget-lint-{theme}-{case.name}-hover.png")
            )
            lines.append(summary_line(f"  (hovered) {case.name}", hovered))
            found_hovered = counts(hovered)
            for kind in totals:
                totals[kind] += found_hovered[kind]
            problems += [f"hovered {kind}" for kind in totals if found_hovered[kind]]
            dimming = _dimming_ratio(page)
            if dimming is not None:
                lines[-1] += f"  dimming {dimming:.2f}:1"
                if dimming < MIN_DIMMING_RATIO:
                    problems.append(f"dimmed cells {dimming:.2f}:1 from linked ones")
            result = {k: result[k] + hovered[k] for k in totals}
            page.mouse.move(0, 0)
        if problems:
            details = (
                result["overlaps"][:2] + result["clipped"][:2] + result["low_contrast"][:2]
                + result["arrows_over_text"][:2] + result["arrows_over_arrows"][:2]
            )  # fmt: skip
            failures.append(f"{case.name}: {', '.join(problems)} {details}")
    print(f"\nwidget visual lint, {theme} theme, {WIDTH} px wide, {len(CASES)} layouts")
    print("\n".join(lines))
    print(f"total: {totals}")
    assert not failures, "\n".join(failures)
