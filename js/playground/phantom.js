// Phantom cells: where an out-of-bounds setting would read past the storage's end, drawn as
// marked cells after its last element, so the escape is seen and not only read about.
import { groupDigits, htmlEl, svgEl } from "../widget/dom.js";
import { cellWidth, STORAGE_GEOMETRY } from "../core/geometry.js";

/**
 * `escaping`: escapingCells(...) of the setting.  Returns an element with a caption and one
 * strip: the storage's last element, an elision when the first escape is further on, then a
 * phantom cell (dashed, "past the end") per escaping element, its index under it.
 */
export function drawPhantoms(escaping, storageSize, g = STORAGE_GEOMETRY) {
  const node = htmlEl("div", "pg-phantoms");
  const shown = escaping.cells.length;
  const more = escaping.total > shown ? ` (the first ${shown} of ${groupDigits(escaping.total)})` : "";
  node.appendChild(htmlEl("div", "pg-phantom-caption", `past the end of the storage: the elements this setting would read${more}, after element ${groupDigits(storageSize - 1)}`));
  const lastChars = String(escaping.cells.at(-1)?.cell ?? storageSize).length;
  const cellW = cellWidth(lastChars, g, g.smallCharW);
  const items = [{ kind: "last", cell: storageSize - 1 }];
  let previous = storageSize - 1;
  for (const { cell, index } of escaping.cells) {
    if (cell > previous + 1) items.push({ kind: "skip", count: cell - previous - 1 });
    items.push({ kind: "phantom", cell, index });
    previous = cell;
  }
  const svg = svgEl("svg", { class: "pg-phantom-strip", role: "img" });
  svg.appendChild(svgEl("title", {}, "storage elements past the end that the view would read"));
  const rowH = g.cellH + g.indexH + g.rowGap;
  let x = 0;
  let y = 0;
  let width = 0;
  for (const item of items) {
    const itemW = item.kind === "skip" ? 2 * cellW : cellW;
    if (x + itemW > g.maxWidth) {
      x = 0;
      y += rowH; // wrap like the storage strip: one continuing line
    }
    width = Math.max(width, x + itemW);
    if (item.kind === "skip") {
      svg.appendChild(svgEl("text", { x: x + itemW / 2, y: y + g.cellH / 2 + 4, class: "sw-gap-label", "text-anchor": "middle" }, `⋯ ${groupDigits(item.count)} ⋯`));
      x += itemW;
      continue;
    }
    const rect = svgEl("rect", { x, y, width: cellW - 2, height: g.cellH - 2, rx: 3, class: item.kind === "last" ? "sw-cell-bg" : "sw-phantom" });
    if (item.kind === "phantom") {
      rect.dataset.phantom = item.cell;
      rect.appendChild(svgEl("title", {}, `storage[${item.cell}] does not exist: view[${item.index.join(",")}] would read it`));
      svg.appendChild(rect);
      svg.appendChild(svgEl("text", { x: x + (cellW - 2) / 2, y: y + g.cellH / 2 + 3, class: "sw-phantom-mark", "text-anchor": "middle" }, "✗"));
    } else {
      svg.appendChild(rect);
      svg.appendChild(svgEl("text", { x: x + (cellW - 2) / 2, y: y + g.cellH / 2 + 3, class: "sw-muted-text", "text-anchor": "middle" }, "last"));
    }
    svg.appendChild(svgEl("text", { x: x + (cellW - 2) / 2, y: y + g.cellH + g.indexH - 3, class: "sw-cell-index", "text-anchor": "middle" }, String(item.cell)));
    x += cellW;
  }
  const height = y + g.cellH + g.indexH + 4;
  svg.setAttribute("width", width + 2);
  svg.setAttribute("height", height);
  svg.setAttribute("viewBox", `0 0 ${width + 2} ${height}`);
  node.appendChild(svg);
  return node;
}
