// DOM/SVG helpers.  Every string from Python goes in through textContent or setAttribute,
// never innerHTML: a tensor named `<img onerror=...>` is shown as text.

import style from "../../stridewidget/style.json";

export const SVG_NS = "http://www.w3.org/2000/svg";

/** An SVG element with attributes (values are stringified, never parsed as markup). */
export function svgEl(tag, attrs = {}, text) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value !== undefined && value !== null) node.setAttribute(key, String(value));
  }
  if (text !== undefined) node.textContent = String(text);
  return node;
}

/** An HTML element with a class and optional text content. */
export function htmlEl(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = String(text);
  return node;
}

/** Okabe-Ito colours (distinguishable with the common colour-vision deficiencies), from the one style. */
export const TENSOR_COLOURS = style.tensor_colours;

/** Fill patterns, one per tensor, so tensors differ by more than hue. */
const PATTERNS = style.patterns;

export function tensorColour(order) {
  return TENSOR_COLOURS[order % TENSOR_COLOURS.length];
}

/** The `<pattern>` id for a tensor, unique per widget instance (`uid`). */
export function patternId(uid, order) {
  return `${uid}-p${order}`;
}

/** `<defs>` with one pattern per tensor (colour + texture). */
export function patternDefs(uid, tensors) {
  const defs = svgEl("defs");
  for (const tensor of tensors) {
    const colour = tensorColour(tensor.order);
    const kind = PATTERNS[tensor.order % PATTERNS.length];
    const pattern = svgEl("pattern", {
      id: patternId(uid, tensor.order),
      width: 6,
      height: 6,
      patternUnits: "userSpaceOnUse",
    });
    pattern.appendChild(svgEl("rect", { width: 6, height: 6, fill: colour }));
    const ink = style.themes.light.pattern_ink;
    const path = style.pattern_paths[kind];
    if (path) pattern.appendChild(svgEl("path", { d: path, stroke: ink, "stroke-width": 1.2 }));
    if (kind === "dots") pattern.appendChild(svgEl("circle", { cx: 3, cy: 3, r: 1.3, fill: ink }));
    defs.appendChild(pattern);
  }
  return defs;
}

const hexChannels = (hex) => [1, 3, 5].map((i) => Number.parseInt(hex.slice(i, i + 2), 16));
// viridis (perceptually ordered, colour-blind safe), its stops taken from matplotlib by the style
const VIRIDIS = style.viridis.stops.map(hexChannels);

/** Colour for `value` on a [lo, hi] scale; null value -> null (drawn neutral). */
function scalePosition(value, range) {
  if (value === null || value === undefined || !range) return null;
  const [lo, hi] = range;
  const t = hi > lo ? Math.min(1, Math.max(0, (value - lo) / (hi - lo))) : 0.5;
  return t * (VIRIDIS.length - 1);
}

/** Text colour readable (>= 4.5:1) on `scaleColour(value, range)`'s fill, from the style. */
export function scaleInk(value, range) {
  const position = scalePosition(value, range);
  return position === null ? null : style.viridis.text[Math.round(position)];
}

export function scaleColour(value, range) {
  const position = scalePosition(value, range);
  if (position === null) return null;
  const k = Math.min(VIRIDIS.length - 2, Math.floor(position));
  const f = position - k;
  const mix = VIRIDIS[k].map((c, i) => Math.round(c + (VIRIDIS[k + 1][i] - c) * f));
  return `rgb(${mix[0]},${mix[1]},${mix[2]})`;
}

/** 1234567 -> "1,234,567" (locale-independent, so tests and screenshots are stable). */
export function groupDigits(n) {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}
