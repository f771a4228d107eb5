// Stride arrows over the storage grid: for each dim, element 0 -> its neighbour along that dim,
// so the arrow's length in cells is the stride (a loop for stride 0).
import { htmlEl, svgEl } from "./dom.js";
import { STORAGE_GEOMETRY } from "./geometry.js";

function strideLabel(stride) {
  return stride >= 0 ? `+${stride}` : `−${-stride}`;
}

/**
 * The arrows of one tensor: element 0 → its neighbour along each dim.  On the grid each arrow
 * carries a small "d<k>" badge; the full labels ("dim 0: +4") go in `legend` (an HTML element,
 * optional), where they never collide with cells or with each other.
 */
export function drawArrows(group, tensor, positions, { legend = null, geometry = STORAGE_GEOMETRY } = {}) {
  group.replaceChildren();
  legend?.replaceChildren();
  if (!tensor || tensor.arrows.length === 0) return;
  const { cellW, cellH } = geometry;
  const origin = tensor.arrows[0];
  legend?.appendChild(
    htmlEl("span", "sw-arrow-intro", `stride arrows of ${tensor.name}, from ${tensor.name}[${origin.from_index.join(",")}] = storage[${origin.from}]: `),
  );
  tensor.arrows.forEach((arrow, k) => {
    const label = `dim ${arrow.dim}: ${strideLabel(arrow.stride)}`;
    const from = positions.get(arrow.from);
    const to = positions.get(arrow.to);
    const entry = htmlEl("span", "sw-arrow-label", label);
    entry.dataset.dim = arrow.dim;
    legend?.appendChild(entry);
    if (!from || !to) {
      legend?.appendChild(htmlEl("span", "sw-arrow-note", " (its target is not shown)"));
      return;
    }
    const g = svgEl("g", { class: "sw-arrow", "data-dim": arrow.dim });
    let badgeX;
    let badgeY;
    let d;
    if (arrow.from === arrow.to) {
      // stride 0: a loop on the cell
      const cx = from.x + cellW / 2;
      const top = from.y;
      const r = 10 + 3 * k;
      d = `M ${cx - 6} ${top} C ${cx - 6 - r} ${top - 2 * r - 8}, ${cx + 6 + r} ${top - 2 * r - 8}, ${cx + 6} ${top}`;
      badgeX = cx - r - 12;
      badgeY = top - r - 2;
    } else if (from.y === to.y) {
      // same row: an arc above
      const x1 = from.x + cellW / 2;
      const x2 = to.x + cellW / 2;
      const lift = 14 + 9 * k + Math.min(24, Math.abs(x2 - x1) / 8);
      const top = from.y;
      d = `M ${x1} ${top} Q ${(x1 + x2) / 2} ${top - 2 * lift}, ${x2} ${top}`;
      badgeX = (x1 + x2) / 2;
      badgeY = top - lift;
    } else {
      // another row: a curve out into the channel left of the grid and back
      const x1 = from.x + 4;
      const y1 = from.y + cellH / 2;
      const x2 = to.x + 4;
      const y2 = to.y + cellH / 2;
      const bend = Math.min(x1, x2) - 34 - 14 * k;
      d = `M ${x1} ${y1} C ${bend} ${y1}, ${bend} ${y2}, ${x2} ${y2}`;
      badgeX = bend + 8;
      badgeY = (y1 + y2) / 2;
    }
    g.appendChild(svgEl("path", { d, class: "sw-arrow-line", "marker-end": `url(#${group.dataset.marker})` }));
    // without a legend the badge carries the whole label
    const badge = legend ? `d${arrow.dim}` : label;
    const badgeW = badge.length * 6 + 8;
    g.appendChild(svgEl("rect", { x: badgeX - badgeW / 2, y: badgeY - 7, width: badgeW, height: 13, rx: 6, class: "sw-arrow-badge-bg" }));
    g.appendChild(svgEl("text", { x: badgeX, y: badgeY + 3.5, class: "sw-arrow-badge", "text-anchor": "middle" }, badge));
    group.appendChild(g);
  });
}

