// Stride arrows and the index walk over the storage strip.
//
// Arrows: one per distinct stride (the scene merges equal strides, "d0,d1 +1"), from the tensor's
// first element to its neighbour along those dims, each in its own lane of the band reserved above
// the row where they start, so arcs never cross text and no two labels share a line.  A stride-0
// dim is a small loop on its cell in the lowest lane.  An arrow to a later row leaves the band to
// the right, runs down the channel right of the strip and enters its cell through the gap above
// that row.
// The index walk: hovering a logical cell draws offset → +i·s0 → +j·s1 … → the cell it reads.
import { htmlEl, svgEl } from "./dom.js";
import { STORAGE_GEOMETRY } from "../core/geometry.js";

/** @typedef {import("../core/types.js").Tensor} Tensor */

/** The y of lane `lane` of the band above `row`, or of the gap above it when it has no band. */
function laneY(row, lane, g) {
  if (row.bandTop === null) return row.y - g.rowGap / 2;
  return row.y - g.bandPad / 2 - (lane + 0.5) * g.laneH;
}

/** SVG path from storage cell item `from` to `to`, leaving through lane `lane`. */
export function routeArrow(from, to, lane, layout, g = STORAGE_GEOMETRY) {
  const x1 = from.x + from.w / 2;
  const x2 = to.x + to.w / 2;
  const top = from.y;
  const ly = laneY(from.row, lane, g);
  if (from.cell === to.cell) {
    const r = 7;
    return { d: `M ${x1 - 5} ${top} C ${x1 - 5 - r} ${ly}, ${x1 + 5 + r} ${ly}, ${x1 + 5} ${top}`, labelX: x1 + 5 + r + 3, labelY: ly + 2, anchor: "start" };
  }
  const bend = 4;
  if (from.row === to.row) {
    const sign = x2 > x1 ? 1 : -1;
    const d = `M ${x1} ${top} V ${ly + bend} Q ${x1} ${ly} ${x1 + sign * bend} ${ly} H ${x2 - sign * bend} Q ${x2} ${ly} ${x2} ${ly + bend} V ${to.y}`;
    return { d, labelX: (x1 + x2) / 2, labelY: ly, anchor: "middle" };
  }
  // another row: right along the lane, down (or up) the channel, in through the gap above that row
  const channel = layout.channelX + 4 * lane;
  const entry = (to.row.bandTop ?? to.y) - g.rowGap / 2;
  const d = `M ${x1} ${top} V ${ly + bend} Q ${x1} ${ly} ${x1 + bend} ${ly} H ${channel} V ${entry} H ${x2} V ${to.y}`;
  return { d, labelX: (x1 + channel) / 2, labelY: ly, anchor: "middle" };
}

function strideText(stride) {
  return stride >= 0 ? `+${stride}` : `−${-stride}`;
}

function label(group, text, x, y, anchor, g) {
  const w = text.length * g.boldCharW + 6;
  const left = anchor === "start" ? x - 2 : x - w / 2;
  group.appendChild(svgEl("rect", { x: left, y: y - g.laneH / 2 + 1, width: w, height: g.laneH - 2, rx: 5, class: "sw-arrow-badge-bg" }));
  group.appendChild(svgEl("text", { x: anchor === "start" ? x + 1 : x, y: y + 3.5, class: "sw-arrow-badge", "text-anchor": anchor }, text));
}

/**
 * The arrows of one tensor on its storage strip (`layout` from layoutStorage).  The legend (an
 * HTML element, optional) says where they start and lists every arrow with its stride.
 * @param {SVGGElement} group
 * @param {Tensor | null | undefined} tensor
 */
export function drawArrows(group, tensor, layout, { legend = null, geometry = STORAGE_GEOMETRY } = {}) {
  group.replaceChildren();
  legend?.replaceChildren();
  if (!tensor || tensor.arrows.length === 0) return;
  const origin = tensor.arrows[0];
  legend?.appendChild(
    htmlEl("span", "sw-arrow-intro", `stride arrows of ${tensor.name}, from ${tensor.name}[${origin.from_index.join(",")}] = storage[${origin.from}]: `),
  );
  for (const arrow of tensor.arrows) {
    const entry = htmlEl("span", "sw-arrow-label", arrow.label);
    entry.dataset.dim = arrow.dim;
    entry.title = `one step along ${arrow.dims.map((d) => `dim ${d}`).join(" or ")} moves ${strideText(arrow.stride)} storage elements (${strideText(arrow.byte_stride)} bytes)`;
    legend?.appendChild(entry);
    const from = layout.positions.get(arrow.from);
    const to = layout.positions.get(arrow.to);
    if (!from || !to) {
      legend?.appendChild(htmlEl("span", "sw-arrow-note", " (its target is not shown)"));
      continue;
    }
    const g = svgEl("g", { class: "sw-arrow", "data-dim": arrow.dim });
    const route = routeArrow(from, to, arrow.lane, layout, geometry);
    g.appendChild(svgEl("path", { d: route.d, class: "sw-arrow-line", "marker-end": `url(#${group.dataset.marker})` }));
    label(g, arrow.label, route.labelX, route.labelY, route.anchor, geometry);
    group.appendChild(g);
  }
}

/**
 * The hops of the address formula for logical index `index` of `tensor`: from the offset, one hop
 * per dim with a non-zero index, [{from, to, dim, text}].  Pure.
 * @param {Tensor} tensor
 * @param {number[]} index
 */
export function walkHops(tensor, index) {
  const { strides, offset } = tensor.layout;
  const hops = [];
  let at = offset;
  index.forEach((i, dim) => {
    if (i === 0 || strides[dim] === 0) return;
    const next = at + i * strides[dim];
    hops.push({ from: at, to: next, dim, text: `+${i}·${strides[dim]}` });
    at = next;
  });
  return hops;
}

/**
 * Draw the index walk of `index` (replacing the stride arrows).  Returns the walk spelled out,
 * for the status line (the legend keeps its size: a hover never moves the cells under the pointer).
 */
export function walkText(tensor, index) {
  const parts = [`${tensor.name}[${index.join(",")}]: start at the offset ${tensor.layout.offset}`];
  for (const hop of walkHops(tensor, index)) parts.push(`${hop.text} (dim ${hop.dim}) → ${hop.to}`);
  return parts.join(" ");
}

export function drawWalk(group, tensor, index, layout, { geometry = STORAGE_GEOMETRY } = {}) {
  group.replaceChildren();
  const hops = walkHops(tensor, index);
  hops.forEach((hop, k) => {
    const from = layout.positions.get(hop.from);
    const to = layout.positions.get(hop.to);
    if (!from || !to) return;
    const route = routeArrow(from, to, Math.min(k, Math.max(0, layout.lanes - 1)), layout, geometry);
    const g = svgEl("g", { class: "sw-walk", "data-hop": k });
    g.appendChild(svgEl("path", { d: route.d, class: "sw-walk-line", "marker-end": `url(#${group.dataset.marker})` }));
    group.appendChild(g);
  });
  return hops;
}
