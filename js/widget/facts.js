// The facts panel: what sw.inspect() knows about one tensor, as text (never as HTML).
import { groupDigits, htmlEl } from "./dom.js";

/** @typedef {import("../core/types.js").Tensor} Tensor */
/** @typedef {import("../core/types.js").LayoutDict} LayoutDict */

const tuple = (values) => `(${values.join(", ")}${values.length === 1 ? "," : ""})`;

/**
 * Rows of [label, text] for a tensor's layout dict (Layout.to_dict()).
 * @param {LayoutDict} layout
 * @returns {[string, string][]}
 */
export function factRows(layout) {
  const touched = `${layout.touched_exact ? "" : "≤ "}${groupDigits(layout.touched)} of ${groupDigits(layout.storage_size)} storage elements`;
  const span = layout.span ? `storage[${layout.span[0]} … ${layout.span[1]}]` : "none (empty)";
  return [
    ["shape", tuple(layout.shape)],
    ["strides", `${tuple(layout.strides)} elements · ${tuple(layout.byte_strides)} bytes`],
    ["offset", `${groupDigits(layout.offset)} elements (${groupDigits(layout.offset * layout.unit)} B)`],
    ["dtype", `${layout.dtype} (${layout.itemsize} B) · ${layout.device}`],
    ["storage", `${groupDigits(layout.storage_size)} elements (${groupDigits(layout.storage_nbytes)} B)`],
    ["elements", groupDigits(layout.numel)],
    ["touched", `${touched} · span ${span}`],
  ];
}

const FLAGS = [
  ["is_contiguous", "C-contiguous"],
  ["is_f_contiguous", "F-contiguous"],
  ["is_channels_last", "channels-last"],
  ["is_dense", "dense"],
  ["has_overlap", "overlap"],
];

/**
 * The flags that mean something for a tensor of `ndim` dims: channels-last only for 4-D,
 * channels-last-3d only for 5-D, F-contiguous from 2-D on.
 */
export function flagsFor(ndim) {
  return FLAGS.filter(([key]) => (key !== "is_channels_last" || ndim === 4 || ndim === 5) && (key !== "is_f_contiguous" || ndim >= 2)).map(([key, label]) =>
    key === "is_channels_last" && ndim === 5 ? [key, "channels-last-3d"] : [key, label],
  );
}

/**
 * The facts of the summary line, in order: shape, strides, offset, dtype, then only the flags that
 * hold (and "overlap" when it does); the layout class in words.
 *
 * summaryParts({ shape: [3, 4], strides: [4, 1], offset: 0, dtype: "float32", is_contiguous: true, has_overlap: false, is_dense: true })
 * // → ["shape (3, 4)", "strides (4, 1)", "offset 0", "float32", "contiguous"]
 * @param {LayoutDict} layout
 * @returns {string[]}
 */
export function summaryParts(layout) {
  const words = [];
  if (layout.is_contiguous) words.push("contiguous");
  else if (layout.is_f_contiguous && layout.shape.filter((n) => n > 1).length >= 2) words.push("F-contiguous (transposed)");
  else if (layout.is_channels_last && layout.shape.length === 4) words.push("channels-last");
  else if (layout.is_dense) words.push("dense, permuted");
  // has_overlap is null when the display's time budget ran out before overlap was decided
  if (layout.has_overlap === null) words.push("overlap not decided");
  else if (layout.has_overlap) words.push("overlapping");
  else if (!layout.is_dense) words.push("gaps between elements");
  return [`shape ${tuple(layout.shape)}`, `strides ${tuple(layout.strides)}`, `offset ${groupDigits(layout.offset)}`, layout.dtype, ...words];
}

/** One line: `shape (3, 4) · strides (4, 1) · offset 0 · float32 · contiguous` (see summaryParts). */
export function summaryLine(layout) {
  return summaryParts(layout).join(" · ");
}

/**
 * The facts card of a tensor: the summary line, the details behind it, the flags and the explanation.
 * @param {Tensor} tensor
 * @returns {HTMLElement}
 */
export function drawFacts(tensor) {
  const panel = htmlEl("div", "sw-facts");
  // the summary line is the expander's own label: one line of facts, the rest one click away
  const details = htmlEl("details", "sw-details");
  // each fact is one piece that keeps its " ·": a narrow card wraps the line between facts, never
  // inside one ("dense, / permuted") nor before a "·"
  const line = htmlEl("summary", "sw-facts-line");
  const parts = summaryParts(tensor.layout);
  parts.forEach((part, i) => {
    if (i > 0) line.append(" ");
    line.appendChild(htmlEl("span", "sw-fact", i < parts.length - 1 ? `${part} ·` : part));
  });
  line.title = "strides: how many storage elements one step along each dim moves; offset: the storage element of the first logical element — click for details";
  details.appendChild(line);
  const list = htmlEl("dl", "sw-facts-list");
  for (const [label, text] of factRows(tensor.layout)) {
    list.append(htmlEl("dt", "", label), htmlEl("dd", "", text));
  }
  list.append(htmlEl("dt", "", "flags"));
  const flags = htmlEl("dd", "sw-flags");
  for (const [key, label] of flagsFor(tensor.layout.shape.length)) {
    const value = tensor.layout[key];
    // ✓/✗/? in the text: the state is readable without colour (null: not decided in the budget)
    const mark = value === null ? "?" : value ? "✓" : "✗";
    const state = value === null ? "sw-flag-off" : value ? "sw-flag-on" : "sw-flag-off";
    flags.appendChild(htmlEl("span", `sw-flag ${state}`, `${mark} ${label}${value === null ? " (not decided)" : ""}`));
  }
  list.appendChild(flags);
  if (tensor.layout.notes.length) list.append(htmlEl("dt", "", "notes"), htmlEl("dd", "", tensor.layout.notes.join(", ")));
  details.appendChild(list);
  details.appendChild(htmlEl("p", "sw-explain", tensor.layout.explain));
  panel.appendChild(details);
  return panel;
}
