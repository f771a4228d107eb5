// DOM/SVG helpers.  Every string from Python goes in through textContent or setAttribute,
// never innerHTML: a tensor named `<img onerror=...>` is shown as text.

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

/** Okabe-Ito colours: distinguishable with the common colour-vision deficiencies. */
export const TENSOR_COLOURS = ["#E69F00", "#56B4E9", "#009E73", "#CC79A7", "#0072B2", "#D55E00", "#F0E442"];

/** Fill patterns, one per tensor, so tensors differ by more than hue. */
const PATTERNS = ["solid", "diagonal", "dots", "vertical", "cross", "horizontal", "antidiagonal"];

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
    const ink = { stroke: "rgba(0,0,0,0.55)", "stroke-width": 1.2 };
    if (kind === "diagonal") pattern.appendChild(svgEl("path", { d: "M0,6 L6,0", ...ink }));
    if (kind === "antidiagonal") pattern.appendChild(svgEl("path", { d: "M0,0 L6,6", ...ink }));
    if (kind === "vertical") pattern.appendChild(svgEl("path", { d: "M3,0 L3,6", ...ink }));
    if (kind === "horizontal") pattern.appendChild(svgEl("path", { d: "M0,3 L6,3", ...ink }));
    if (kind === "cross") pattern.appendChild(svgEl("path", { d: "M0,3 L6,3 M3,0 L3,6", ...ink }));
    if (kind === "dots") pattern.appendChild(svgEl("circle", { cx: 3, cy: 3, r: 1.3, fill: "rgba(0,0,0,0.55)" }));
    defs.appendChild(pattern);
  }
  return defs;
}

// viridis at 5 stops: perceptually ordered and colour-blind safe.
const VIRIDIS = [
  [68, 1, 84],
  [59, 82, 139],
  [33, 145, 140],
  [94, 201, 98],
  [253, 231, 37],
];

/** Colour for `value` on a [lo, hi] scale; null value -> null (drawn neutral). */
export function scaleColour(value, range) {
  if (value === null || value === undefined || !range) return null;
  const [lo, hi] = range;
  const t = hi > lo ? Math.min(1, Math.max(0, (value - lo) / (hi - lo))) : 0.5;
  const position = t * (VIRIDIS.length - 1);
  const k = Math.min(VIRIDIS.length - 2, Math.floor(position));
  const f = position - k;
  const mix = VIRIDIS[k].map((c, i) => Math.round(c + (VIRIDIS[k + 1][i] - c) * f));
  return `rgb(${mix[0]},${mix[1]},${mix[2]})`;
}

/** 1234567 -> "1,234,567" (locale-independent, so tests and screenshots are stable). */
export function groupDigits(n) {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}
