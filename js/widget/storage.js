// The storage strip: the real buffer as one line of memory, one cell per storage element, each
// with its storage index under it.  When it must wrap, rows are the storage's natural row (the
// scene's `wrap`), labelled with their start index and read as one continuing line.  Cells never
// touched are greyed, each tensor's cells carry its colour + pattern + mark, cells read more than
// once show the count, long runs are explicit gap rows.
import { groupDigits, htmlEl, patternDefs, patternId, scaleColour, svgEl } from "./dom.js";
import { cellWidth, STORAGE_GEOMETRY } from "../core/geometry.js";

// drawArrows lives in arrows.js; re-exported here for callers that import it with drawStorage.
export { drawArrows } from "./arrows.js";
export { STORAGE_GEOMETRY };

/** @typedef {import("../core/types.js").Storage} Storage */
/** @typedef {import("../core/types.js").Tensor} Tensor */

/** What the cells show: "values", "index" (storage index / address) or "both". */
export const CELL_MODES = ["both", "values", "index"];

/** Strips up to this tall (px) stay in view while the page scrolls past their cards. */
export const STICKY_MAX_HEIGHT = 320;

/** A flowing strip's cells widen up to this to hold a 10^12-element storage's indices. */
const FLOW_MAX_CELL_W = 96;

/** Above this many shown storage cells, strips carry no mark letters (colour + pattern only). */
export const MAX_LABELLED_CELLS = 240;

/**
 * Cell width and what goes where for one storage in one mode: pure, no DOM.
 * @param {Storage} storage
 * @param {"both" | "values" | "index"} mode
 */
export function storageCellPlan(storage, mode, g = STORAGE_GEOMETRY) {
  const hasValues = storage.cells.text !== null;
  const effective = hasValues ? mode : "index";
  const lastIndex = storage.cells.index.length ? storage.cells.index[storage.cells.index.length - 1] : 0;
  const indexChars = String(lastIndex).length;
  const valueChars = hasValues ? storage.text_width : 0;
  // indices are drawn in the small font, values in the cell font
  let cellW = effective === "index" ? cellWidth(indexChars, g, g.smallCharW) : cellWidth(Math.max(valueChars, 2), g);
  // collapsed runs make the cells flow without columns: each cell then carries its own index
  const flow = storage.segments.some((segment) => segment.kind === "gap");
  if (flow) cellW = Math.max(cellW, cellWidth(indexChars, g, g.smallCharW, FLOW_MAX_CELL_W));
  return {
    mode: effective,
    cellW,
    valuesFit: hasValues && valueChars * g.charW + 6 <= cellW,
    indexFits: indexChars * g.smallCharW + 4 <= cellW,
    // a big window's cells are read by row label + column offset: thousands of index texts would
    // make the first render several times slower (SVG text layout dominates it)
    indexUnder: effective === "both" && storage.cells.index.length <= MAX_LABELLED_CELLS,
  };
}

/**
 * The row width actually drawn: the scene's row when it fits `maxWidth` px (the page's room), else
 * its largest divisor that fits and still reads as a strip (rows keep starting on its multiples),
 * else as many cells as fit.
 */
export function fittedWrap(wrap, cellW, g = STORAGE_GEOMETRY, maxWidth = g.maxWidth) {
  const fits = Math.max(1, Math.floor(Math.min(maxWidth, g.maxWidth) / cellW));
  if (wrap <= fits) return Math.max(1, wrap);
  for (let d = fits; d >= 8; d -= 1) if (wrap % d === 0) return d;
  return fits;
}

/** The text of a collapsed run: its count, and its range when that fits in `w` px. */
export function gapLabel(segment, w, g = STORAGE_GEOMETRY) {
  const count = segment.stop - segment.start;
  const what = segment.in_span ? "cells not shown" : "cells untouched";
  const long = `⋯ ${groupDigits(count)} ${what} [${groupDigits(segment.start)} … ${groupDigits(segment.stop - 1)}]`;
  return long.length * g.charW + 10 <= w ? long : `⋯ ${groupDigits(count)} cells`;
}

/**
 * Rows of a storage whose window has collapsed runs: cells and runs flow left to right, a run is
 * one marked cell ("⋯ 36 cells", as wide as its text), and a row breaks when the next item would
 * pass `room` px or the row holds `wrap` cells.  [{items: [{kind, ..., x, w}]}]  Pure.
 */
export function flowRows(storage, wrap, cellW, room, g = STORAGE_GEOMETRY) {
  const rows = [[]];
  let x = 0;
  let count = 0;
  let position = 0;
  const place = (item) => {
    const full = rows.at(-1).length > 0 && (x + item.w > room || (item.kind === "cell" && count >= wrap));
    if (full) {
      rows.push([]);
      x = 0;
      count = 0;
    }
    rows.at(-1).push({ ...item, x });
    x += item.w;
    if (item.kind === "cell") count += 1;
  };
  for (const segment of storage.segments) {
    if (segment.kind === "gap") {
      const label = gapLabel(segment, 0, g);
      place({ kind: "gap", segment, label, w: Math.max(2 * cellW, Math.ceil(label.length * g.charW + 12)) });
      continue;
    }
    for (let cell = segment.start; cell < segment.stop; cell++, position++) place({ kind: "cell", cell, i: position, w: cellW });
  }
  return rows.filter((row) => row.length);
}

/**
 * Where each shown cell, gap and label goes for a row width `wrap`: pure, no DOM.
 * Without collapsed runs, a row starts at a multiple of `wrap`, so columns keep their meaning
 * (column header +0 … and row labels).  With them, cells and runs flow (flowRows): each cell has its
 * index under it, or (a big window) each row its first cell's index as label.
 * Rows holding a cell in `bandCells` (where arrows start) get a band of `lanes` arrow lanes above
 * them, so arcs and their labels never cross text.
 * @param {Storage} storage
 * @param {number} requestedWrap
 */
export function layoutStorage(storage, requestedWrap, { geometry = STORAGE_GEOMETRY, cellW = geometry.minCellW, indexUnder = true, lanes = 0, bandCells = [], room = geometry.maxWidth } = {}) {
  // Long on purpose: the two row rules (columns, flow) share one pass that places rows, bands and labels.
  const g = geometry;
  // Python validates wrap; a hand-edited one (0, negative, NaN) must not loop forever here
  const wrap = Math.max(1, Math.floor(Number(requestedWrap)) || 1);
  const flow = storage.segments.some((segment) => segment.kind === "gap");
  const bandSet = new Set(bandCells);
  const bandH = lanes > 0 ? lanes * g.laneH + g.bandPad : 0;
  const cellH = g.cellH;
  const rowH = cellH + (indexUnder ? g.indexH : 0);
  // each drawn row's items, x relative to the cells' left edge
  let planned;
  if (flow) {
    // the row labels (a big window's) take room too
    const last = storage.cells.index.at(-1) ?? 0;
    const labelRoom = indexUnder ? 0 : Math.ceil(groupDigits(last).length * g.charW + g.labelPad);
    planned = flowRows(storage, wrap, cellW, room - labelRoom, g);
  } else {
    planned = [];
    let position = 0;
    for (const segment of storage.segments) {
      for (let cell = segment.start; cell < segment.stop; cell++, position++) {
        const col = cell % wrap;
        const last = planned.at(-1);
        if (!last || cell - col !== last.start) planned.push(Object.assign([], { start: cell - col }));
        planned.at(-1).push({ kind: "cell", cell, i: position, col, x: col * cellW, w: cellW });
      }
    }
  }
  const firstCell = (row) => row.find((item) => item.kind === "cell")?.cell ?? null;
  const labelled = !flow || !indexUnder;
  const labels = planned.map((row) => (flow ? firstCell(row) : row.start)).map((start) => (labelled && start !== null ? groupDigits(start) : ""));
  const labelW = labelled ? Math.ceil(Math.max(...labels.map((text) => text.length), 1) * g.charW + g.labelPad) : 0;
  const wrapped = !flow && storage.cells.index.length > wrap;
  const items = [];
  const rowLabels = [];
  const rows = [];
  const positions = new Map();
  let y = wrapped ? g.headerH : 0;
  const headerY = y;
  let right = 0;
  planned.forEach((cells, r) => {
    const banded = cells.some((item) => item.kind === "cell" && bandSet.has(item.cell));
    const row = { start: flow ? firstCell(cells) : cells.start, bandTop: banded ? y : null, y: banded ? y + bandH : y };
    y = row.y + rowH + g.rowGap;
    rows.push(row);
    if (labels[r]) rowLabels.push({ y: row.y, text: labels[r] });
    for (const planItem of cells) {
      const x = labelW + planItem.x;
      right = Math.max(right, x + planItem.w);
      if (planItem.kind === "gap") {
        items.push({ kind: "gap", segment: planItem.segment, label: planItem.label, row, x, y: row.y, w: planItem.w - 2, h: cellH - 2 });
        continue;
      }
      const col = planItem.col ?? null;
      const item = { kind: "cell", cell: planItem.cell, i: planItem.i, col, row, x, y: row.y, w: cellW - 2, h: cellH - 2 };
      items.push(item);
      positions.set(planItem.cell, item);
    }
  });
  const stripRight = flow ? right : labelW + wrap * cellW;
  return {
    items,
    rowLabels,
    rows,
    positions,
    labelW,
    cellW,
    wrap,
    wrapped,
    flow,
    headerY,
    stripRight,
    lanes,
    channelX: stripRight + g.channelW / 2,
    width: stripRight + g.channelW + 4 * lanes + 8,
    height: y,
  };
}

function colourScaleNote(storage) {
  const [lo, hi] = storage.value_range ?? [null, null];
  const note = htmlEl("div", "sw-scale-note", "values too wide for the cells: colour scale ");
  const bar = htmlEl("span", "sw-scale-bar");
  bar.setAttribute("style", `background:linear-gradient(to right, ${[0, 0.25, 0.5, 0.75, 1].map((t) => scaleColour(t, [0, 1])).join(", ")})`);
  const short = (v) => (v === null ? "?" : String(Number(v.toPrecision(4))));
  note.append(htmlEl("span", "sw-scale-end", short(lo)), bar, htmlEl("span", "sw-scale-end", short(hi)), document.createTextNode(" (viridis) — hover a cell for its value"));
  return note;
}

/**
 * The caption saying what the numbers in every grid are in the current mode (`plan`:
 * storageCellPlan's): storage cells and the tensors' (logical) cells differ in "index" and "both".
 */
export function cellsCaption(plan, flow = false) {
  if (plan.mode === "index") return "cells show storage indices; tensor cells: the @address each reads";
  if (plan.mode === "values") return "cells show values";
  let storageIndex = plan.indexUnder ? "small numbers are storage indices" : "storage index = row label + column offset";
  if (flow && !plan.indexUnder) storageIndex = "a row's label is its first cell's storage index";
  return `cells show values; ${storageIndex}; tensor cells: value over @address`;
}

/**
 * A crowded cell's readers as one text that fits `width` px: their marks run together ("AB×2C?D":
 * a mark is a letter, its digits and its count), or the first marks that fit plus how many are
 * left ("ABC+3"), or at worst "+N": never nothing.  The static picture's `compact_marks`
 * (stridewidget/render/labels.py) follows the same rule.  Pure.
 */
export function compactMarks(marks, width, charW = STORAGE_GEOMETRY.boldCharW) {
  const fits = (text) => text.length * charW + 2 <= width;
  for (let k = marks.length; k > 0; k--) {
    const text = marks.slice(0, k).join("") + (k < marks.length ? `+${marks.length - k}` : "");
    if (fits(text)) return text;
  }
  return `+${marks.length}`;
}

/**
 * One storage: header (dtype, size), the strip SVG and the arrow legend, with as many arrow lanes
 * reserved as any member needs; `mode`: see CELL_MODES.
 * Returns {node, cells: Map(cell -> <rect>), positions, layout, arrows: <g>, arrowLegend: <div>}.
 * @param {Storage} storage
 * @param {Tensor[]} tensors the scene's tensors (those over other storages are skipped)
 * @param {number} wrap cells per row
 * @param {string} uid the widget's id, for its SVG pattern ids
 */
export function drawStorage(storage, tensors, wrap, uid, { mode = "both", geometry = STORAGE_GEOMETRY, room = geometry.maxWidth } = {}) {
  // Long on purpose: one SVG strip drawn row by row (labels, cells, marks, counts, gaps) from one layout.
  const g = geometry;
  const node = htmlEl("div", "sw-storage");
  node.dataset.storage = storage.id;
  const header = htmlEl("div", "sw-storage-header");
  const title = htmlEl("span", "sw-storage-title", `storage ${storage.id}`);
  const facts = htmlEl(
    "span",
    "sw-storage-facts",
    ` · one flat line of ${groupDigits(storage.size)} ${storage.dtype} elements × ${storage.itemsize} B = ${groupDigits(storage.nbytes)} B · ${storage.device}`,
  );
  header.append(title, facts);
  if (storage.same_memory?.length) {
    header.appendChild(htmlEl("span", "sw-storage-facts", ` · same memory as ${storage.same_memory.join(", ")} (viewed as another dtype)`));
  }
  node.appendChild(header);

  const members = tensors.filter((t) => t.storage === storage.id);
  const plan = storageCellPlan(storage, mode, g);
  // a lane per arrow, and per hop of the index walk (one per dim of size > 1)
  const lanes = Math.max(0, ...members.map((t) => Math.max(t.arrows.length, t.logical.shape.filter((n) => n > 1).length)));
  const bandCells = members.flatMap((t) => (t.arrows.length ? [t.arrows[0].from] : []));
  const layout = layoutStorage(storage, wrap, { geometry: g, cellW: plan.cellW, indexUnder: plan.indexUnder, lanes, bandCells, room });
  const svg = svgEl("svg", {
    class: "sw-storage-grid",
    width: layout.width,
    height: layout.height,
    viewBox: `0 0 ${layout.width} ${layout.height}`,
    role: "img",
  });
  svg.appendChild(svgEl("title", {}, `storage ${storage.id}: ${storage.dtype}, ${storage.size} elements in one line`));
  svg.appendChild(patternDefs(uid, members));
  const defs = svgEl("defs");
  const markerId = `${uid}-${storage.id}-arrowhead`;
  // a fixed 7 px head (not scaled by the line width): it must not reach the indices above the cell
  const marker = svgEl("marker", { id: markerId, viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, markerUnits: "userSpaceOnUse", orient: "auto-start-reverse" });
  marker.appendChild(svgEl("path", { d: "M 0 0 L 10 5 L 0 10 z", class: "sw-arrowhead" }));
  defs.appendChild(marker);
  svg.appendChild(defs);

  if (layout.wrapped) {
    for (let col = 0; col < wrap; col++) {
      svg.appendChild(svgEl("text", { x: layout.labelW + col * plan.cellW + (plan.cellW - 2) / 2, y: layout.headerY - 4, class: "sw-col-label", "text-anchor": "middle" }, `+${col}`));
    }
  }
  for (const label of layout.rowLabels) {
    svg.appendChild(svgEl("text", { x: layout.labelW - 8, y: label.y + g.cellH / 2 + 3, class: "sw-row-label", "text-anchor": "end" }, label.text));
  }

  const texts = storage.cells.text;
  const values = storage.cells.value;
  const cells = new Map();
  // Strips are one <path> per tensor (thousands of cells stay a handful of nodes).
  const strips = new Map(members.map((t) => [t.id, []]));
  const labelStrips = storage.cells.index.length <= MAX_LABELLED_CELLS;
  // layers, bottom to top: cells, strips, labels
  const cellLayer = svgEl("g", { class: "sw-cells" });
  const stripLayer = svgEl("g", { class: "sw-strips" });
  const labelLayer = svgEl("g", { class: "sw-labels" });
  svg.append(cellLayer, stripLayer, labelLayer);
  const indexText = (item) => (plan.indexFits ? String(item.cell) : item.col === null ? "…" : `+${item.col}`);
  for (const item of layout.items) {
    if (item.kind === "gap") {
      const box = svgEl("rect", { x: item.x, y: item.y, width: item.w, height: item.h, rx: 4, class: "sw-gap-box", "data-start": item.segment.start, "data-stop": item.segment.stop });
      box.appendChild(svgEl("title", {}, gapLabel(item.segment, Infinity, g)));
      cellLayer.appendChild(box);
      const text = item.label ?? gapLabel(item.segment, item.w, g);
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
    const showValue = plan.mode !== "index" && plan.valuesFit;
    const fill = plan.mode !== "index" && !plan.valuesFit && values && touched ? scaleColour(values[item.i], storage.value_range) : null;
    if (fill) rect.setAttribute("style", `fill:${fill}`);
    cellLayer.appendChild(rect);
    cells.set(item.cell, rect);
    // one strip piece per tensor that reads the cell: colour + pattern (+ mark and count when
    // the view is small enough for labels to stay cheap and legible)
    if (touched) {
      const pieceW = item.w / readers.length;
      const marks = readers.map((reader) => {
        if (reader.count === null) return `${reader.tensor.mark}?`;
        return reader.count > 1 ? `${reader.tensor.mark}×${reader.count}` : reader.tensor.mark;
      });
      const marksFit = labelStrips && marks.every((mark) => pieceW >= mark.length * g.boldCharW + 2);
      readers.forEach((reader, k) => {
        const x = item.x + k * pieceW;
        strips.get(reader.tensor.id).push(`M${x} ${item.y}h${pieceW}v${g.stripH}h${-pieceW}z`);
        if (!marksFit) return;
        const cls = reader.count > 1 ? "sw-strip-label sw-count" : "sw-strip-label";
        labelLayer.appendChild(svgEl("text", { x: x + pieceW / 2, y: item.y + g.stripH - 1.5, class: cls, "text-anchor": "middle" }, marks[k]));
      });
      // too narrow for every mark: all of them as one centred text ("AB×2CD", "ABC+3"); hovering
      // the cell still lights every reader's cells.  A big view labels only the cells read more than once
      // (one text each stays cheap).
      if (!marksFit && (labelStrips || maxCount > 1)) {
        const cls = maxCount > 1 ? "sw-strip-label sw-compact sw-count" : "sw-strip-label sw-compact";
        labelLayer.appendChild(svgEl("text", { x: item.x + item.w / 2, y: item.y + g.stripH - 1.5, class: cls, "text-anchor": "middle" }, compactMarks(marks, item.w, g.boldCharW)));
      }
    }
    const textY = item.y + g.stripH + (item.h - g.stripH) / 2 + 4;
    const textCls = touched ? "" : " sw-untouched-text";
    if (showValue) {
      labelLayer.appendChild(svgEl("text", { x: item.x + item.w / 2, y: textY, class: `sw-cell-text${textCls}`, "text-anchor": "middle" }, texts[item.i]));
    } else if (plan.mode === "index") {
      labelLayer.appendChild(svgEl("text", { x: item.x + item.w / 2, y: textY, class: `sw-cell-text sw-index-in-cell${textCls}`, "text-anchor": "middle" }, indexText(item)));
    }
    if (plan.indexUnder) {
      labelLayer.appendChild(svgEl("text", { x: item.x + item.w / 2, y: item.y + item.h + g.indexH - 3, class: "sw-cell-index", "text-anchor": "middle" }, indexText(item)));
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
  // a short strip stays in view (sticky) while the reader hovers cards further down; a tall one
  // would hide them, so it scrolls
  if (layout.height <= STICKY_MAX_HEIGHT) node.classList.add("sw-sticky");
  if (plan.mode !== "index" && !plan.valuesFit && texts !== null) node.appendChild(colourScaleNote(storage));
  return { node, cells, positions: layout.positions, layout, arrows, arrowLegend, plan, flow: layout.flow };
}
