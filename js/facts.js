// The facts panel: what sw.inspect() knows about one tensor, as text (never as HTML).
import { groupDigits, htmlEl } from "./dom.js";

const tuple = (values) => `(${values.join(", ")}${values.length === 1 ? "," : ""})`;

/** Rows of [label, text] for a tensor's layout dict (Layout.to_dict()). */
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

export function drawFacts(tensor) {
  const panel = htmlEl("div", "sw-facts");
  const list = htmlEl("dl", "sw-facts-list");
  for (const [label, text] of factRows(tensor.layout)) {
    list.append(htmlEl("dt", "", label), htmlEl("dd", "", text));
  }
  list.append(htmlEl("dt", "", "flags"));
  const flags = htmlEl("dd", "sw-flags");
  for (const [key, label] of FLAGS) {
    const on = Boolean(tensor.layout[key]);
    // ✓/✗ in the text: the state is readable without colour
    flags.appendChild(htmlEl("span", on ? "sw-flag sw-flag-on" : "sw-flag sw-flag-off", `${on ? "✓" : "✗"} ${label}`));
  }
  list.appendChild(flags);
  if (tensor.layout.notes.length) list.append(htmlEl("dt", "", "notes"), htmlEl("dd", "", tensor.layout.notes.join(", ")));
  panel.appendChild(list);
  panel.appendChild(htmlEl("p", "sw-explain", tensor.layout.explain));
  return panel;
}
