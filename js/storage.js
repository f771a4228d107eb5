// The storage grid: the real buffer, one cell per storage element, wrapped into rows.
// Cells never touched are greyed, each tensor's cells carry its colour + pattern + mark, cells read
// more than once show the count, long runs are collapsed into gap rows.
import { groupDigits, htmlEl, patternDefs, patternId, scaleColour, svgEl } from "./dom.js";
import { STORAGE_GEOMETRY } from "./geometry.js";

// drawArrows lives in arrows.js; re-exported here for callers that import it with drawStorage.
export { drawArrows } from "./arrows.js";
export { STORAGE_GEOMETRY };


/**
 * Where each shown cell and gap goes for a row width `wrap`: pure, no DOM.
 * A cells segment starts a new row at column (start % wrap), so columns keep their meaning
 * (rows of C for a contiguous (R, C) base); a gap is a row of its own.
 */
export function layoutStorage(storage, wrap, geometry = STORAGE_GEOMETRY) {
  const { cellW, cellH, rowGap, labelW, topPad, gapH } = geometry;
  const items = [];
  const rowLabels = [];
  const positions = new Map();
  let y = topPad;
  let rowOpen = false; // the row at y already holds cells
  let position = 0; // index into storage.cells
  const closeRow = () => {
    if (rowOpen) y += cellH + rowGap;
    rowOpen = false;
  };
  for (const segment of storage.segments) {
    closeRow();
    if (segment.kind === "gap") {
      items.push({ kind: "gap", segment, x: labelW, y, w: wrap * cellW - 2, h: gapH - 2 });
      y += gapH + rowGap;
      continue;
    }
    let col = segment.start % wrap;
    rowLabels.push({ y, text: groupDigits(segment.start - col) });
    for (let cell = segment.start; cell < segment.stop; cell++, position++) {
      if (col === wrap) {
        closeRow();
        col = 0;
        rowLabels.push({ y, text: groupDigits(cell) });
      }
      const item = { kind: "cell", cell, i: position, x: labelW + col * cellW, y, w: cellW - 2, h: cellH - 2 };
      items.push(item);
      positions.set(cell, item);
      rowOpen = true;
      col += 1;
    }
  }
  closeRow();
  return { items, rowLabels, positions, width: labelW + wrap * cellW + 8, height: y + 4 };
}

/** Above this many shown storage cells, strips carry no mark letters (colour + pattern only). */
export const MAX_LABELLED_CELLS = 240;

/** Number of characters that fit in a storage cell. */
export function charsThatFit(geometry = STORAGE_GEOMETRY) {
  return Math.floor((geometry.cellW - 4) / geometry.charW);
}

/**
 * One storage: header (dtype, size, which tensors) and the grid SVG.
 * Returns {node, cells: Map(cell -> <rect>), positions, arrows: <g>, arrowLegend: <div>}.
 */
export function drawStorage(storage, tensors, wrap, uid, geometry = STORAGE_GEOMETRY) {
  const { cellW, cellH, stripH, labelW } = geometry;
  const node = htmlEl("div", "sw-storage");
  node.dataset.storage = storage.id;
  const header = htmlEl("div", "sw-storage-header");
  const title = htmlEl("span", "sw-storage-title", `storage ${storage.id}`);
  const facts = htmlEl(
    "span",
    "sw-storage-facts",
    ` · ${storage.dtype} · ${groupDigits(storage.size)} elements × ${storage.itemsize} B = ${groupDigits(storage.nbytes)} B · ${storage.device}`,
  );
  header.append(title, facts);
  if (storage.same_memory?.length) {
    header.appendChild(htmlEl("span", "sw-storage-facts", ` · same memory as ${storage.same_memory.join(", ")} (viewed as another dtype)`));
  }
  node.appendChild(header);

  const members = tensors.filter((t) => t.storage === storage.id);
  const layout = layoutStorage(storage, wrap, geometry);
  const svg = svgEl("svg", {
    class: "sw-storage-grid",
    width: layout.width,
    height: layout.height,
    viewBox: `0 0 ${layout.width} ${layout.height}`,
    role: "img",
  });
  svg.appendChild(svgEl("title", {}, `storage ${storage.id}: ${storage.dtype}, ${storage.size} elements`));
  svg.appendChild(patternDefs(uid, members));
  const defs = svgEl("defs");
  const markerId = `${uid}-${storage.id}-arrowhead`;
  const marker = svgEl("marker", { id: markerId, viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" });
  marker.appendChild(svgEl("path", { d: "M 0 0 L 10 5 L 0 10 z", class: "sw-arrowhead" }));
  defs.appendChild(marker);
  svg.appendChild(defs);

  for (const label of layout.rowLabels) {
    svg.appendChild(svgEl("text", { x: 44, y: label.y + cellH / 2 + 4, class: "sw-row-label", "text-anchor": "end" }, label.text));
  }

  const texts = storage.cells.text;
  const values = storage.cells.value;
  const showText = texts !== null && storage.text_width <= charsThatFit(geometry);
  const cells = new Map();
  // Strips are one <path> per tensor (thousands of cells stay a handful of nodes).
  const strips = new Map(members.map((t) => [t.id, []]));
  const labelStrips = storage.cells.index.length <= MAX_LABELLED_CELLS;
  // layers, bottom to top: cells, strips, labels
  const cellLayer = svgEl("g", { class: "sw-cells" });
  const stripLayer = svgEl("g", { class: "sw-strips" });
  const labelLayer = svgEl("g", { class: "sw-labels" });
  svg.append(cellLayer, stripLayer, labelLayer);
  for (const item of layout.items) {
    if (item.kind === "gap") {
      cellLayer.appendChild(svgEl("rect", { x: item.x, y: item.y, width: item.w, height: item.h, rx: 4, class: "sw-gap-box" }));
      const count = item.segment.stop - item.segment.start;
      const what = item.segment.in_span ? "cells not shown" : "cells untouched";
      const text = `⋯ ${groupDigits(count)} ${what} [${groupDigits(item.segment.start)} … ${groupDigits(item.segment.stop - 1)}] ⋯`;
      labelLayer.appendChild(svgEl("text", { x: item.x + item.w / 2, y: item.y + item.h / 2 + 4, class: "sw-gap-label", "text-anchor": "middle" }, text));
      continue;
    }
    const readers = members.map((t) => ({ tensor: t, count: t.touch[item.i] })).filter((r) => r.count !== 0);
    const touched = readers.length > 0;
    // The cell is one <rect> carrying its data; labels are siblings that ignore the pointer
    // (fewer nodes: the largest default view must lay out fast).
    let cls = touched ? "sw-scell sw-cell-bg" : "sw-scell sw-cell-bg sw-untouched";
    const maxCount = Math.max(0, ...readers.map((r) => r.count ?? 0));
    if (maxCount > 1) cls += " sw-multi";
    const rect = svgEl("rect", { x: item.x, y: item.y, width: item.w, height: item.h, rx: 3, class: cls, "data-storage": storage.id, "data-cell": item.cell });
    const value = values ? values[item.i] : null;
    const fill = !showText && values && touched ? scaleColour(value, storage.value_range) : null;
    if (fill) rect.setAttribute("style", `fill:${fill}`);
    cellLayer.appendChild(rect);
    cells.set(item.cell, rect);
    // one strip piece per tensor that reads the cell: colour + pattern (+ mark and count when
    // the view is small enough for labels to stay cheap and legible)
    if (touched) {
      const pieceW = item.w / readers.length;
      readers.forEach((reader, k) => {
        const x = item.x + k * pieceW;
        strips.get(reader.tensor.id).push(`M${x} ${item.y}h${pieceW}v${stripH}h${-pieceW}z`);
        if (!labelStrips) return;
        let mark = reader.tensor.mark;
        if (reader.count === null) mark += "?";
        else if (reader.count > 1) mark += `×${reader.count}`;
        if (pieceW >= mark.length * 5.5 + 2) {
          labelLayer.appendChild(svgEl("text", { x: x + pieceW / 2, y: item.y + stripH - 2, class: "sw-strip-label", "text-anchor": "middle" }, mark));
        }
      });
    }
    if (maxCount > 1) {
      labelLayer.appendChild(svgEl("text", { x: item.x + item.w - 3, y: item.y + item.h - 3, class: "sw-count", "text-anchor": "end" }, `×${maxCount}`));
    }
    const textY = item.y + stripH + (item.h - stripH) / 2 + 4;
    if (showText) {
      const textCls = touched ? "sw-cell-text" : "sw-cell-text sw-untouched-text";
      labelLayer.appendChild(svgEl("text", { x: item.x + item.w / 2, y: textY, class: textCls, "text-anchor": "middle" }, texts[item.i]));
    } else if (texts === null) {
      // no values (meta tensor, pure layout): the cell's index is the useful label
      labelLayer.appendChild(svgEl("text", { x: item.x + item.w / 2, y: textY, class: "sw-addr-text", "text-anchor": "middle" }, `@${item.cell}`));
    }
  }
  for (const tensor of members) {
    const d = strips.get(tensor.id).join("");
    if (d) stripLayer.appendChild(svgEl("path", { d, fill: `url(#${patternId(uid, tensor.order)})`, class: "sw-strip", "data-strip": tensor.id }));
  }
  const arrows = svgEl("g", { class: "sw-arrows" });
  arrows.dataset.marker = markerId;
  svg.appendChild(arrows);
  const arrowLegend = htmlEl("div", "sw-arrow-legend");
  node.append(arrowLegend, svg);
  if (!showText && texts !== null) {
    const [lo, hi] = storage.value_range ?? [null, null];
    const note = htmlEl("div", "sw-scale-note", "values too wide for the cells: colour scale ");
    const bar = htmlEl("span", "sw-scale-bar");
    bar.setAttribute("style", `background:linear-gradient(to right, ${[0, 0.25, 0.5, 0.75, 1].map((t) => scaleColour(t, [0, 1])).join(", ")})`);
    const short = (v) => (v === null ? "?" : String(Number(v.toPrecision(4))));
    note.append(htmlEl("span", "sw-scale-end", short(lo)), bar, htmlEl("span", "sw-scale-end", short(hi)), document.createTextNode(" (viridis) — hover a cell for its value"));
    node.appendChild(note);
  }
  return { node, cells, positions: layout.positions, arrows, arrowLegend };
}
