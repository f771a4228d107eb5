"""Visual lint of a rendered picture: overlapping texts, clipped texts, low contrast, height.

:func:`lint` takes a Playwright page and a CSS selector of the picture's root element and returns
what a reader would trip over:

* ``overlaps``: pairs of texts whose em boxes (the advance width × the font size, centred on the
  glyph box) intersect by more than ``slack`` px in both directions;
* ``clipped``: texts not wholly inside the root, or inside an ancestor that clips its overflow
  (``overflow`` not ``visible``, which includes every inline ``<svg>``);
* ``low_contrast``: texts under ``min_contrast`` (WCAG) against their *effective* background,
  measured from pixels: the root is screenshotted with every glyph made transparent, and the text
  colour (blended by its effective opacity) is compared with each colour covering at least a
  quarter of its box (a halo — ``paint-order: stroke`` — counts as the background);
* ``arrows_over_text``: a stride arrow (a path with an arrowhead, sampled every 2 px as drawn)
  running through a text's em box (its first 4 px, where it leaves a cell, left out; its last 10 px,
  the arrowhead, with 1.5 px around it; the tip itself left out); ``arrows_over_arrows``: two arrows running on top of each other for more than 6 px (within
  1.5 px; crossing is fine);
* ``height`` / ``width`` of the root, in CSS px.

Texts are SVG ``<text>`` elements and the visible text nodes of HTML elements (one box per line);
``<title>``, ``<script>``, ``<style>`` and text in closed ``<details>`` are not drawn, so not linted.
"""

from __future__ import annotations

import io
from typing import Any

from stridewidget.style import MIN_CONTRAST, contrast_ratio

__all__ = ["counts", "lint", "summary_line"]

_COLLECT = r"""
([root, slack]) => {
  const rootBox = root.getBoundingClientRect();
  const parse = (colour) => {
    const m = /rgba?\(([^)]+)\)/.exec(colour || "");
    if (!m) return null;
    const parts = m[1].split(/[\s,\/]+/).filter(Boolean).map(Number);
    return { rgb: parts.slice(0, 3), alpha: parts.length > 3 ? parts[3] : 1 };
  };
  const describe = (el) => {
    const id = el.closest("[data-cell],[data-tensor],[class]");
    if (!id) return el.tagName.toLowerCase();
    const attrs = ["class", "data-tensor", "data-cell", "data-r", "data-c"]
      .map((a) => (id.getAttribute(a) ? `${a}=${id.getAttribute(a)}` : ""))
      .filter(Boolean);
    return `${id.tagName.toLowerCase()}[${attrs.join(" ")}]`;
  };
  const hidden = (el) => {
    for (let e = el; e && e !== document; e = e.parentElement) {
      const style = getComputedStyle(e);
      if (style.display === "none" || style.visibility === "hidden") return true;
    }
    // a closed <details> shows only its own <summary>
    for (let d = el.closest("details"); d; d = d.parentElement && d.parentElement.closest("details")) {
      const summary = el.closest("summary");
      if (!d.open && !(summary && summary.parentElement === d)) return true;
    }
    return false;
  };
  const opacityOf = (el) => {
    let alpha = 1;
    for (let e = el; e && e !== document.documentElement; e = e.parentElement) {
      alpha *= Number(getComputedStyle(e).opacity || 1);
    }
    return alpha;
  };
  const clippers = (el) => {
    const out = [];
    for (let e = el; e && e !== document.documentElement; e = e.parentElement) {
      const style = getComputedStyle(e);
      if (style.overflowX !== "visible" || style.overflowY !== "visible" || e.tagName.toLowerCase() === "svg") {
        const b = e.getBoundingClientRect();
        out.push({ left: b.left, top: b.top, right: b.right, bottom: b.bottom, what: describe(e) });
      }
    }
    return out;
  };
  const items = [];
  const add = (el, text, box, fontSize, colour, halo) => {
    if (box.width < 0.5 || box.height < 0.5) return;
    const emTop = box.top + Math.max(0, (box.height - fontSize) / 2);
    items.push({
      text, where: describe(el),
      left: box.left, right: box.right, top: emTop, bottom: emTop + Math.min(box.height, fontSize),
      fullTop: box.top, fullBottom: box.bottom,
      colour, halo, opacity: opacityOf(el), clippers: clippers(el),
    });
  };
  for (const el of root.querySelectorAll("text")) {
    const text = el.textContent.trim();
    if (!text || hidden(el)) continue;
    const style = getComputedStyle(el);
    const strokeWidth = parseFloat(style.strokeWidth) || 0;
    const halo = style.paintOrder.startsWith("stroke") && strokeWidth >= 1.5 ? parse(style.stroke) : null;
    if (!el.querySelector("tspan")) {
      add(el, text, el.getBoundingClientRect(), parseFloat(style.fontSize), parse(style.fill), halo);
      continue;
    }
    // a text of chunks (each <tspan x> placed on its own): each chunk is a text of its own
    for (const node of el.childNodes) {
      const chunk = node.textContent.trim();
      if (!chunk) continue;
      let box;
      if (node.nodeType === Node.TEXT_NODE) {
        const range = document.createRange();
        range.selectNodeContents(node);
        box = range.getBoundingClientRect();
      } else {
        box = node.getBoundingClientRect();
      }
      add(el, chunk, box, parseFloat(style.fontSize), parse(style.fill), halo);
    }
  }
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const parent = node.parentElement;
    const text = node.textContent.trim();
    if (!text || !parent || parent.closest("svg,title,script,style,template") || hidden(parent)) continue;
    const style = getComputedStyle(parent);
    const range = document.createRange();
    range.selectNodeContents(node);
    for (const box of range.getClientRects()) {
      add(parent, text, box, parseFloat(style.fontSize), parse(style.color), null);
    }
  }
  const overlaps = [];
  for (let i = 0; i < items.length; i++) {
    for (let j = i + 1; j < items.length; j++) {
      const a = items[i], b = items[j];
      const w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
      const h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
      if (w > slack && h > slack) overlaps.push({ a: a.text, b: b.text, where: [a.where, b.where], w, h });
    }
  }
  const clipped = [];
  for (const t of items) {
    const boxes = [{ left: rootBox.left, top: rootBox.top, right: rootBox.right, bottom: rootBox.bottom, what: "root" }, ...t.clippers];
    for (const c of boxes) {
      if (t.left < c.left - 0.5 || t.right > c.right + 0.5 || t.top < c.top - 0.5 || t.bottom > c.bottom + 0.5) {
        clipped.push({ text: t.text, where: t.where, by: c.what });
        break;
      }
    }
  }
  // stride arrows: every path with an arrowhead, sampled every 2 px in page coordinates
  const arrows = [];
  for (const path of root.querySelectorAll("path")) {
    if (hidden(path) || getComputedStyle(path).markerEnd === "none" || !path.getTotalLength) continue;
    const matrix = path.getScreenCTM();
    const length = path.getTotalLength();
    const points = [];
    for (let at = 0; at <= length; at += 2) {
      const p = path.getPointAtLength(at).matrixTransform(matrix);
      points.push([p.x, p.y]);
    }
    const box = path.getBoundingClientRect();
    arrows.push({ where: describe(path), points, box });
  }
  // an arrow through a text: a sample point inside the text's em box (less 1 px each side),
  // its first and last 3 px (where it leaves and enters a cell) left out
  // the arrowhead (about 11 px back from the tip, its own tip left out) counts with 1.5 px around it
  const arrowsOverText = [];
  for (const arrow of arrows) {
    const line = arrow.points.slice(2, -6);
    const head = arrow.points.slice(Math.max(2, arrow.points.length - 6), -1);
    for (const t of items) {
      if (t.right < arrow.box.left - 12 || t.left > arrow.box.right + 12 || t.bottom < arrow.box.top - 12 || t.top > arrow.box.bottom + 12) continue;
      const inBox = (m) => ([x, y]) => x > t.left + 1 - m && x < t.right - 1 + m && y > t.top + 1 - m && y < t.bottom - 1 + m;
      if (line.some(inBox(0)) || head.some(inBox(1.5))) {
        arrowsOverText.push({ arrow: arrow.where, text: t.text, where: t.where });
      }
    }
  }
  // two arrows on top of each other: over 6 px of one (4 samples in a row, its ends left out)
  // within 1.5 px of the other's samples
  const arrowsOverArrows = [];
  const near = (p, pts) => pts.some(([x, y]) => Math.abs(x - p[0]) <= 1.5 && Math.abs(y - p[1]) <= 1.5);
  for (let i = 0; i < arrows.length; i++) {
    for (let j = i + 1; j < arrows.length; j++) {
      const a = arrows[i], b = arrows[j];
      if (a.box.right < b.box.left - 2 || b.box.right < a.box.left - 2 || a.box.bottom < b.box.top - 2 || b.box.bottom < a.box.top - 2) continue;
      let run = 0, most = 0;
      for (const p of a.points.slice(3, -3)) {
        run = near(p, b.points) ? run + 1 : 0;
        most = Math.max(most, run);
      }
      if (most >= 4) arrowsOverArrows.push({ a: a.where, b: b.where, px: most * 2 });
    }
  }
  const texts = items.map((t) => ({
    text: t.text, where: t.where, colour: t.colour, halo: t.halo, opacity: t.opacity,
    left: t.left - rootBox.left, top: t.top - rootBox.top, right: t.right - rootBox.left, bottom: t.bottom - rootBox.top,
  }));
  return {
    texts, overlaps, clipped, arrows: arrows.length, arrows_over_text: arrowsOverText,
    arrows_over_arrows: arrowsOverArrows, width: rootBox.width, height: rootBox.height,
  };
}
"""

# Glyphs transparent, everything else as drawn: what the screenshot shows is each text's backdrop.
_HIDE_GLYPHS = """
.sw-lint-hide text, .sw-lint-hide tspan { fill: transparent !important; stroke: transparent !important; }
.sw-lint-hide, .sw-lint-hide * { -webkit-text-fill-color: transparent !important;
  text-shadow: none !important; text-decoration-color: transparent !important; caret-color: transparent !important; }
"""


def _blend(colour: dict, alpha: float, backdrop: tuple[float, float, float]) -> tuple:
    a = colour["alpha"] * alpha
    return tuple(a * c / 255 + (1 - a) * b for c, b in zip(colour["rgb"], backdrop))


def _backdrops(image: Any, box: dict, scale: float) -> list[tuple[float, float, float]]:
    """Colours covering ≥ 1/4 of ``box`` in the glyph-less screenshot (else the most common)."""
    left, top = max(0, int(box["left"] * scale)), max(0, int(box["top"] * scale))
    right = min(image.width, max(left + 1, int(box["right"] * scale + 0.5)))
    bottom = min(image.height, max(top + 1, int(box["bottom"] * scale + 0.5)))
    if right <= left or bottom <= top:
        return []
    crop = image.crop((left, top, right, bottom))
    colours = crop.getcolors(crop.width * crop.height) or []
    total = sum(n for n, _ in colours)
    main = [rgb for n, rgb in colours if n * 4 >= total] or [max(colours)[1]]
    return [tuple(c / 255 for c in rgb[:3]) for rgb in main]


def lint(
    page: Any, selector: str, *, min_contrast: float = MIN_CONTRAST, slack: float = 1.0
) -> dict[str, Any]:
    """Lint the picture at ``selector`` on ``page``: overlapping, clipped and low-contrast texts and
    the root's size (see the module docstring).  Returns ``{"texts", "overlaps", "clipped",
    "low_contrast", "width", "height"}``; each problem entry names the text(s) and where they are.
    """
    from PIL import Image

    root = page.locator(selector).first
    root.scroll_into_view_if_needed()
    found = root.evaluate(f"(root) => ({_COLLECT})([root, {slack}])")
    page.add_style_tag(content=_HIDE_GLYPHS)
    root.evaluate("(root) => root.classList.add('sw-lint-hide')")
    try:
        image = Image.open(io.BytesIO(root.screenshot(animations="disabled"))).convert("RGB")
    finally:
        root.evaluate("(root) => root.classList.remove('sw-lint-hide')")
    scale = image.width / found["width"] if found["width"] else 1.0
    low = []
    for text in found["texts"]:
        if text["colour"] is None:  # a pattern or gradient fill: no single text colour to check
            low.append({**text, "ratio": None, "why": "text colour is not a plain colour"})
            continue
        backdrops = _backdrops(image, text, scale)
        if text["halo"] is not None:
            backdrops = [_blend(text["halo"], text["opacity"], b) for b in backdrops]
        ratios = [
            (contrast_ratio(_blend(text["colour"], text["opacity"], b), b), b) for b in backdrops
        ]
        if not ratios:
            continue
        ratio, backdrop = min(ratios)
        if ratio < min_contrast:
            low.append(
                {
                    "text": text["text"],
                    "where": text["where"],
                    "ratio": round(ratio, 2),
                    "colour": text["colour"]["rgb"],
                    "backdrop": [round(c * 255) for c in backdrop],
                }
            )
    return {**found, "low_contrast": low}


def counts(result: dict[str, Any]) -> dict[str, Any]:
    """The numbers the issue asks for: problems by kind, texts checked and the root's height."""
    return {
        "texts": len(result["texts"]),
        "overlaps": len(result["overlaps"]),
        "clipped": len(result["clipped"]),
        "low_contrast": len(result["low_contrast"]),
        "arrows_over_text": len(result["arrows_over_text"]),
        "arrows_over_arrows": len(result["arrows_over_arrows"]),
        "height": round(result["height"]),
    }


def summary_line(name: str, result: dict[str, Any]) -> str:
    """One printable line per linted picture (the test prints these as its table)."""
    c = counts(result)
    return (
        f"{name:<32} texts {c['texts']:>4}  overlaps {c['overlaps']:>3}  clipped {c['clipped']:>3}  "
        f"low-contrast {c['low_contrast']:>3}  arrows over text {c['arrows_over_text']:>2}  "
        f"over arrows {c['arrows_over_arrows']:>2}  height {c['height']:>5}px"
    )
