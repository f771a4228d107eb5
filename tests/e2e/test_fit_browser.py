"""Issue 22 §3 in Chromium: the issue's layouts fit the page, in the widget and the static fallback.

At 1,280 px and in a 900 px window (a notebook column), light and dark: nothing of the widget hides
behind a horizontal scroll (no element that scrolls is wider inside than its box), the widget stays
within the height budget at 1,280 px (1,100 px for <= 2-D, 1,600 px for more), and a static picture
that is wider than its column says so in a visible line.  Screenshots:
``artifacts/screenshots/fit-<widget|static>-<theme>-<width>-<case>.png``.
"""

from __future__ import annotations

import re

import pytest

import stridewidget as sw
from stridewidget.notebook.picture import picture_of
from stridewidget.render.primitives import MAX_WIDTH
from stridewidget.scene.build import build_scene
from stridewidget.style import STYLE

from .conftest import SCREENSHOTS
from .lint_corpus import HEIGHT_2D, HEIGHT_ND
from .test_visual_lint_widget import _RENDER, STATIC, THEMES, _data_url

CASES = {
    "channels-last": ("{'x': torch.randn(1, 3, 8, 8).to(memory_format=torch.channels_last)}", HEIGHT_ND),
    "step-37": ("{'v': torch.arange(1000.)[::37]}", HEIGHT_2D),
    "permuted-5d": ("{'p': torch.arange(720.).reshape(2, 3, 4, 5, 6).permute(4, 2, 0, 3, 1)}", HEIGHT_ND),
    "meta-strided": ("{'m': torch.empty(10**8, device='meta').view(10**4, 10**4)[::3, 1::7]}", HEIGHT_2D),
    "3d-eight-panels": ("{'x': torch.arange(512.).reshape(8, 8, 8)}", HEIGHT_ND),
    "wide-2d": ("{'w': torch.arange(128.).reshape(4, 32)}", HEIGHT_2D),
    # issue 36's own cases
    "nchw-and-nhwc": ("(lambda x: {'nchw': x, 'nhwc': x.contiguous(memory_format=torch.channels_last)})(torch.arange(120.).reshape(2, 3, 4, 5))", HEIGHT_ND),
    "attention-heads": ("(lambda q: {'q': q, 'h': q.view(2, 5, 4, 8).transpose(1, 2)})(torch.arange(320.).reshape(2, 5, 32))", HEIGHT_ND),
    "expand-3d": ("{'e': torch.arange(6.).reshape(2, 3).expand(4, 2, 3)}", HEIGHT_ND),
    # random values print in scientific form (11 characters): fewer digits, then colour, to fit
    "heads-randn": ("{'h': torch.randn(2, 5, 32).view(2, 5, 4, 8).transpose(1, 2)}", HEIGHT_ND),
    "randn-10x10x10": ("{'x': torch.randn(10, 10, 10)}", HEIGHT_ND),
    # hostile round (session 2026-12-04)
    "6d": ("{'x': torch.arange(64.).reshape(2, 2, 2, 2, 2, 2)}", HEIGHT_ND),
    "unfold-2d-windows": ("(lambda x: {'x': x, 'win': x.unfold(0, 3, 1).unfold(1, 3, 1)})(torch.arange(36.).reshape(6, 6))", HEIGHT_ND),
    "channels-last-3d": ("{'v': torch.randn(1, 2, 3, 4, 5).to(memory_format=torch.channels_last_3d)}", HEIGHT_ND),
    "uint8-10x20": ("{'u': torch.arange(200, dtype=torch.uint8).reshape(10, 20)}", HEIGHT_2D),
    "long-unicode-names": ("{'Gewichtsmatrix_der_Aufmerksamkeit_über_alle_Köpfe_α→β': torch.arange(12.).reshape(3, 4), '注意力权重矩阵的转置视图（所有头）': torch.arange(12.).reshape(3, 4).t()}", HEIGHT_2D),
    "randn-1x300": ("{'r': torch.randn(1, 300)}", HEIGHT_2D),
    # session 2026-12-05: a strip row per stride arrow's ends (18 dims) was 2,481 px at 900
    "18d-meta": ("{'x': torch.empty(7, 1, 5, 50, 3, 4, 2, 2, 50, 4, 7, 50, 2, 3, 2, 50, 4, 7, device='meta')}", HEIGHT_ND),
    "17d-pair": ("(lambda x: {'x': x, 'y': x.transpose(3, 11)})(torch.empty(2, 3, 2, 7, 50, 50, 2, 7, 3, 50, 4, 1, 50, 50, 7, 50, device='meta'))", HEIGHT_ND),
}  # fmt: skip

#: (case, window px) whose widget (toolbar + picture) is still taller than the budget: issue 36
#: ("Fit") brings them under.  A strip keeps at most `max_strip_rows` rows (the rows its arrows
#: use first), which brought channels-last from 1,769 px and permuted-5d from 1,667 px under at
#: 1,280 px; in a 900 px window these two stay a little over: their cards sit one under the
#: other.  Checked both ways, so an entry goes once the budget is met.
#: (The 17-D meta pair was 1,925 px at 900 px: its grid of 13-digit addresses wrapped in two
#: blocks of columns; the ladder's last step keeps two of a grid's rows and columns at each end.)
OVER_BUDGET: dict[tuple[str, int], str] = {}

# Elements that scroll sideways and hold more than they show: what a reader would miss.
_HIDDEN = """
(root) => [root, ...root.querySelectorAll("*")].flatMap((e) => {
  if (e instanceof SVGElement) return [];
  const style = getComputedStyle(e);
  if (style.overflowX === "visible" || e.scrollWidth <= e.clientWidth + 1) return [];
  return [`${e.className || e.tagName}: ${e.scrollWidth} px in ${e.clientWidth} px`];
})
"""


def _tensors(expression: str):
    import torch

    torch.manual_seed(0)
    return eval(expression, {"torch": torch})


def _widget_page(browser, width: int):
    """A context and its page ``width`` px wide with the committed widget bundle loaded."""
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    page.set_content("<!doctype html><html><head></head><body></body></html>")
    page.add_style_tag(content=(STATIC / "widget.css").read_text() + "body { margin: 8px; }")
    page.evaluate(
        "async (url) => { window.swWidget = (await import(url)).default; }",
        _data_url(STATIC / "widget.js"),
    )
    return context, page


@pytest.fixture(scope="module", params=[1280, 900], ids=lambda w: f"{w}px")
def fit_page(browser, request):
    context, page = _widget_page(browser, request.param)
    yield page, request.param
    context.close()


@pytest.mark.parametrize("theme", THEMES)
def test_issue_layouts_fit_the_widget(fit_page, theme):
    page, width = fit_page
    page.emulate_media(color_scheme=theme)
    page.evaluate(f"document.body.style.background = '{THEMES[theme]}'")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    problems, lines = [], []
    for name, (expression, budget) in CASES.items():
        scene = build_scene(_tensors(expression))
        # Python lays the picture out for the px the widget reports (the page's margins and the
        # root's padding off the window), as it does when the `width` trait arrives
        picture = picture_of(scene, width - 24, None)
        # the real widget's traits: `picked` shows the slice picker where slices are left out
        state = {"picture": picture, "wrap": None, "hovered": None, "picked": {}}
        page.evaluate(_RENDER, ["widget", state])
        page.locator("#pic .sw-root").wait_for()
        pic = page.locator("#pic")
        pic.screenshot(path=str(SCREENSHOTS / f"fit-widget-{theme}-{width}-{name}.png"))
        hidden = pic.evaluate(_HIDDEN)
        height = round(pic.bounding_box()["height"])
        lines.append(f"{name:<16} {width} px  height {height:>5}  hidden {hidden}")
        if hidden:
            problems.append(f"{name}: hidden behind a scroll: {hidden}")
        if height > budget and (name, width) not in OVER_BUDGET:
            problems.append(f"{name}: {height} px tall > {budget} at {width} px")
        if (name, width) in OVER_BUDGET and height <= budget:
            problems.append(f"{name} fits at {width} px now ({height} px): take it off OVER_BUDGET")
    print("\n" + "\n".join(lines))
    assert problems == []


@pytest.mark.parametrize("theme", THEMES)
def test_issue_layouts_fit_the_static_fallback(fit_page, theme):
    """The saved fallback is laid out for a 900 px column and scales down below it: nothing of it
    scrolls sideways, at 1,280 px or in a 900 px window (issue 35 §3)."""
    page, width = fit_page
    colours = STYLE["themes"][theme]
    problems, lines = [], []
    for name, (expression, _budget) in CASES.items():
        fallback = sw.render_html(**_tensors(expression), theme=theme)
        page.set_content(
            f'<body style="margin:8px;background:{colours["background"]}">{fallback}</body>'
        )
        box = page.locator(".stridewidget-fallback")
        box.screenshot(path=str(SCREENSHOTS / f"fit-static-{theme}-{width}-{name}.png"))
        hidden = box.evaluate(_HIDDEN)
        svg = page.locator(".stridewidget-fallback svg").first
        shown = svg.evaluate("e => e.getBoundingClientRect().width")
        room = box.evaluate("e => e.clientWidth")
        lines.append(f"{name:<16} {width} px  hidden {hidden}  svg {shown:.0f} in {room} px")
        if hidden:
            problems.append(f"{name}: hidden behind a scroll: {hidden}")
        if shown > room:
            problems.append(f"{name}: the picture is {shown:.0f} px in a {room} px box")
        # laid out for a 900 px column: its panels and grids stay within that budget
        svg_width = float(svg.get_attribute("width"))
        if svg_width > MAX_WIDTH:
            problems.append(f"{name}: the picture is laid out {svg_width} px wide")
    print("\n" + "\n".join(lines))
    assert problems == []


_CONTROLS = """
() => {
  const root = document.querySelector("#pic");
  return root.getBoundingClientRect().height - root.querySelector("svg").getBoundingClientRect().height;
}
"""


@pytest.mark.parametrize("width", [400, 500, 700, 900, 1000, 1100, 1280, 1600])
def test_the_height_budget_leaves_room_for_the_controls_as_they_wrap(browser, width):
    """The live widget's controls above the picture (status line, mode buttons, wrap box, slice
    picker) wrap into more rows in a narrow column: at 900 px they took 83 px where the budget
    left 60 (a picture 13 px under its budget was 1,613 px with them).  What
    ``controls_height`` leaves for them, measured against Chromium's own layout: never less,
    and never a whole row more for a one-letter name (two with a longer one, its letters taken
    at their widest, or in a window under 700 px)."""
    from stridewidget.render.picture import controls_height

    context, page = _widget_page(browser, width)
    room = width - 16 - 8  # the page's margins and the root's padding: what the widget reports
    problems = []
    shapes = {  # the slice picker counts up to 34, and 9,996 slices not drawn
        2: "torch.zeros(4, 5)",
        3: "torch.zeros(40, 4, 5)",
        "meta": "torch.empty(10**4, 10**4, 10**4, device='meta')",
    }
    names_tried = (
        ["x"], ["grid"], ["activations_of_layer_7"], ["WWWWWWWWWWWW", "x"], ["注意力权重"], ["ℵ∑ℵ∑"],
    )  # fmt: skip
    for names in names_tried:
        for dims, shape in shapes.items():
            expression = "{" + ", ".join(f"'{n}': {shape}" for n in names) + "}"
            scene = build_scene(_tensors(expression))
            state = {"picture": picture_of(scene, room, None), "wrap": None, "hovered": None}
            page.evaluate(_RENDER, ["widget", {**state, "picked": {}}])
            page.locator("#pic .sw-root").wait_for()
            shown = page.evaluate(_CONTROLS)
            picker = max(names, key=len) if dims != 2 else None
            left = controls_height(room, picker, 40 if dims == 3 else 10**4)
            if not shown <= left < shown + (26 if picker in (None, "x") and width >= 700 else 52):
                problems.append(f"{names} {dims}-D: controls {shown:.0f} px, budget leaves {left}")
    context.close()
    assert problems == []


#: Issue 36 (review 2026-12-05): a reader picks slices of tensors with many of them
_PICKED = {
    "randn-2x8x16x16": "{'x': torch.randn(2, 8, 16, 16)}",
    "meta-cube": "{'x': torch.empty(10**4, 10**4, 10**4, device='meta')}",
    "three-views": "(lambda x: {'a': x, 'b': x.transpose(0, 2), 'c': x[:, ::2]})(torch.randn(33, 8, 33))",
    "permuted-5d": "{'p': torch.randn(3, 4, 5, 12, 12).permute(1, 0, 2, 4, 3)}",
}  # fmt: skip


@pytest.mark.parametrize("width", [900, 1280])
def test_picked_slices_fit_the_widget(browser, width):
    """A widget whose reader picked a slice (the middle one, then one more, or eight) stays
    within the 1,600 px budget, toolbar included, in Chromium: it drew every panel (a 2x8x16x16
    tensor was 2,339 px at a 900 px window, the 10^4 cube 2,264 px)."""
    import torch

    from stridewidget.notebook.widget import StrideWidget

    context, page = _widget_page(browser, width)
    problems, lines = [], []
    for name, expression in _PICKED.items():
        tensors = _tensors(expression)
        w = StrideWidget(tensors)
        w.width = width - 24  # what the front end reports
        first, x = next(iter(tensors.items()))
        lead = x.shape[:-2]
        middle, late = [n // 2 for n in lead], [max(n - 2, 0) for n in lead]
        spread = [  # eight "show" clicks: the most recent are drawn, as many as fit
            [int(i) for i in torch.unravel_index(torch.tensor((k + 1) * lead.numel() // 9), lead)]
            for k in range(8)
        ]
        for picks in ([middle], [middle, late], spread):
            w.picked = {first: picks}
            state = {"picture": w.picture, "wrap": None, "hovered": None, "picked": w.picked}
            page.evaluate(_RENDER, ["widget", state])
            page.locator("#pic .sw-root").wait_for()
            height = round(page.locator("#pic").bounding_box()["height"])
            lines.append(f"{name:<16} {width} px  picked {picks}  height {height:>5}")
            if height > HEIGHT_ND:
                problems.append(f"{name} picked {picks}: {height} px tall > {HEIGHT_ND}")
    context.close()
    print("\n" + "\n".join(lines))
    assert problems == []


@pytest.mark.parametrize("width", [400, 700, 900, 1000, 1280, 1600])
def test_a_refused_pick_keeps_the_controls_rows(browser, width):
    """The slice picker's reason for a refused pick (an index outside the tensor, too few
    indices, whatever was typed) never adds a row to the controls: it said it in the picker's own
    row, which wrapped the toolbar one row (25 px) past what ``controls_height`` leaves (108 px
    where 86 were left at 900 and 1,280 px).  The reason is shown (in the status line)."""
    from stridewidget.render.picture import controls_height

    context, page = _widget_page(browser, width)
    room = width - 16 - 8
    problems = []
    shapes = {
        "3-D": "torch.zeros(40, 4, 5)",
        "cube": "torch.empty(10**4, 10**4, 10**4, device='meta')",
        "17-D": "torch.empty([3] * 17, device='meta')",
    }
    typed = ("99999999, 1", "1, 2, 3, 4, 5, 6, 7, 8", "9" * 40, "-1")
    for label in ("x", "activations_of_layer_7"):
        for dims, shape in shapes.items():
            scene = build_scene(_tensors(f"{{'{label}': {shape}}}"))
            picture = picture_of(scene, room, None)
            state = {"picture": picture, "wrap": None, "hovered": None, "picked": {}}
            page.evaluate(_RENDER, ["widget", state])
            page.locator("#pic .sw-root").wait_for()
            count = max(t["pick"]["left_out"] for t in picture["tensors"] if t["pick"])
            left = controls_height(room, label, count)
            for text in typed:
                page.fill("#pic .sw-pick-index", text)
                page.click("#pic .sw-pick-show")
                shown = page.evaluate(_CONTROLS)
                said = page.locator("#pic .sw-toolbar").inner_text()
                if shown > left:
                    problems.append(f"{label} {dims} {text!r}: controls {shown:.0f} px > {left}")
                if not re.search(r"give \d+ ind|outside 0\.\.", said):
                    problems.append(f"{label} {dims} {text!r}: the reason is not shown")
    context.close()
    assert problems == []
