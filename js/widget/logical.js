// The logical grid(s): the tensor as the user indexes it.  0-d, 1-d and 2-d directly; 3-D and
// 4-D as a grid of small 2-D panels (rows × columns of slices, e.g. N×C of H×W); outer dims of
// 5-D and more are picked with a slice selector.  Each cell shows its value, the storage address
// it reads ("@6"), or both.
import { readAt } from "../core/scene.js";
import { htmlEl, patternDefs, patternId, scaleColour, scaleInk, svgEl } from "./dom.js";
import { cellWidth } from "../core/geometry.js";

/** @typedef {import("../core/types.js").Tensor} Tensor */
/** @typedef {import("../core/types.js").Logical} Logical */
/** @typedef {import("../core/scene.js").IndexedScene} IndexedScene */

export const LOGICAL_GEOMETRY = {
  cellH: 26,
  cellHBoth: 28, // value + address
  ellipsisW: 20,
  ellipsisH: 16,
  headerH: 16,
  charW: 6.7,
  smallCharW: 5.9,
  labelPad: 12,
  maxCellW: 96,
};

/** A small swatch (colour + pattern) identifying a tensor; `uid` keeps pattern ids unique. */
export function swatch(tensor, uid) {
  const svg = svgEl("svg", { width: 16, height: 16, class: "sw-swatch", "aria-hidden": "true" });
  const scope = `${uid}-sw-${tensor.id}`;
  svg.appendChild(patternDefs(scope, [tensor]));
  svg.appendChild(svgEl("rect", { x: 1, y: 1, width: 14, height: 14, rx: 3, fill: `url(#${patternId(scope, tensor.order)})`, class: "sw-swatch-box" }));
  return svg;
}

/**
 * Where each 2-D slice goes: {choices, selected, panels, rows, cols, missing, gaps}.  `choices`:
 * per outer dim (the panels' select_dims) its size and the indices the scene listed — a reader may
 * pick any index 0 … size − 1; `selected`: the outer index shown (default: the first listed).
 * `rows`/`cols`: the row/column dim's indices any listed slice has; `panels`: [{s, row, col}] for
 * the slices (listed, or added in the browser as `filled`) at the selected outer index;
 * `missing`: the leading index of each grid position no such slice fills; `gaps`: the scene's
 * gap markers.  Pure.
 * @param {Logical} logical
 * @param {number[] | null} [selected]
 */
export function panelGrid(logical, selected = null) {
  const { row_dim: rowDim, col_dim: colDim, select_dims: selectDims } = logical.panels ?? { row_dim: null, col_dim: null, select_dims: [] };
  const keyOf = (slice) => selectDims.map((d) => slice.lead[d]);
  const listed = logical.slices.filter((slice) => slice.kind === "slice" && !slice.picked && !slice.filled);
  const choices = selectDims.map((d) => ({ dim: d, size: logical.shape[d], listed: [...new Set(listed.map((slice) => slice.lead[d]))].sort((a, b) => a - b) }));
  const chosenOuter = selected ?? (listed[0] ? keyOf(listed[0]) : []);
  const chosen = JSON.stringify(chosenOuter);
  const distinct = (values) => [...new Set(values)].sort((a, b) => a - b);
  const rowValues = distinct(listed.map((slice) => (rowDim === null ? 0 : slice.lead[rowDim])));
  const colValues = distinct(listed.map((slice) => (colDim === null ? 0 : slice.lead[colDim])));
  const panels = [];
  logical.slices.forEach((slice, s) => {
    if (slice.kind !== "slice" || slice.picked || JSON.stringify(keyOf(slice)) !== chosen) return;
    const rowValue = rowDim === null ? 0 : slice.lead[rowDim];
    const colValue = colDim === null ? 0 : slice.lead[colDim];
    const row = rowValues.indexOf(rowValue);
    const col = colValues.indexOf(colValue);
    if (row < 0 || col < 0 || panels.some((p) => p.row === row && p.col === col)) return;
    panels.push({ s, rowValue, colValue, row, col });
  });
  const missing = [];
  rowValues.forEach((rowValue, row) =>
    colValues.forEach((colValue, col) => {
      if (panels.some((p) => p.row === row && p.col === col)) return;
      const lead = Array(Math.max(logical.ndim - 2, 0)).fill(0);
      selectDims.forEach((d, k) => (lead[d] = chosenOuter[k]));
      if (rowDim !== null) lead[rowDim] = rowValue;
      if (colDim !== null) lead[colDim] = colValue;
      missing.push(lead);
    }),
  );
  const gaps = logical.slices.filter((slice) => slice.kind === "gap");
  return { choices, selected: chosenOuter, panels, rows: rowValues, cols: colValues, rowDim, colDim, missing, gaps };
}

/** What a picture writes for slices the scene left out (the same words as render/labels.py gap_note). */
export function gapNote(gap) {
  const note = `⋯ ${gap.count.toLocaleString("en-US")} slice${gap.count === 1 ? "" : "s"} not shown`;
  return gap.text ? `${note}: ${gap.text}` : note;
}

/** Outer dims up to this size get a drop-down of every index; longer ones a number field. */
export const MAX_SELECT_OPTIONS = 512;

/**
 * The cell plan of a tensor's logical grids: width and what the cells hold.  Pure.
 * @param {Tensor} tensor
 * @param {IndexedScene} indexed
 * @param {"both" | "values" | "index"} mode
 */
export function logicalCellPlan(tensor, indexed, mode, g = LOGICAL_GEOMETRY) {
  const storage = indexed.storages.get(tensor.storage)?.storage;
  const hasValues = Boolean(storage && storage.cells.text !== null);
  const effective = hasValues ? mode : "index";
  const addresses = tensor.logical.slices.flatMap((slice) => (slice.kind === "slice" ? slice.addr.flat() : [])).filter((a) => a !== null);
  const addrChars = 1 + Math.max(1, ...addresses.map((a) => String(a).length));
  const readTexts = tensor.reads?.text?.filter((text) => text !== null) ?? [];
  const valueChars = hasValues ? Math.max(storage.text_width, ...readTexts.map((text) => text.length)) : 0;
  // addresses are drawn in the small font; a 10^12-element storage's still fit (wider cells)
  const valueW = effective === "index" ? 0 : cellWidth(Math.max(valueChars, 2));
  const addrW = effective === "values" ? 0 : cellWidth(addrChars, undefined, g.smallCharW, g.maxCellW);
  const cellW = Math.max(valueW, addrW);
  return {
    mode: effective,
    cellW,
    cellH: effective === "both" ? g.cellHBoth : g.cellH,
    valuesFit: hasValues && valueChars * g.charW + 6 <= cellW,
    addrFits: addrChars * g.smallCharW + 4 <= cellW,
  };
}

/**
 * The columns of a grid, in blocks that each fit `room` px (`left`: the row indices' width): like
 * torch's print of a wide matrix, a grid too wide for the page continues below, never behind a
 * scroll.  [[k, ...], ...] positions into `cols`.  Pure.
 */
export function columnBlocks(cols, left, cellW, room, g = LOGICAL_GEOMETRY) {
  const blocks = [[]];
  let x = left;
  cols.forEach((col, k) => {
    const w = col === null ? g.ellipsisW : cellW;
    if (blocks.at(-1).length && x + w > room) {
      blocks.push([]);
      x = left;
    }
    blocks.at(-1).push(k);
    x += w;
  });
  return blocks;
}

function drawSlice(tensor, indexed, slice, s, plan, cells, g, { columnHeader = true, room = Infinity } = {}) {
  // Long on purpose: one SVG grid drawn top to bottom (headers, cells, elisions), sharing its running coordinates.
  const storageEntry = indexed.storages.get(tensor.storage);
  const storage = storageEntry?.storage;
  const svg = svgEl("svg", { class: "sw-logical-grid", role: "img" });
  svg.appendChild(svgEl("title", {}, `${tensor.name}${tensor.logical.ndim > 2 ? slice.label : ""}: logical view, shape (${tensor.logical.shape.join(", ")})`));
  const cols = slice.cols ?? [null];
  const rows = slice.rows ?? [null];
  const colsReal = slice.cols !== null;
  const rowsReal = slice.rows !== null;
  const rowChars = rowsReal ? Math.max(...rows.map((r) => (r === null ? 1 : String(r).length))) : 0;
  const left = rowsReal ? rowChars * g.charW + g.labelPad : 0;
  const blocks = colsReal ? columnBlocks(cols, left, plan.cellW, room, g) : [[0]];
  let y = 0;
  let width = 0;
  blocks.forEach((block, b) => {
    if (b > 0) y += BLOCK_GAP;
    const xs = new Map();
    let x = left;
    for (const k of block) {
      xs.set(k, x);
      x += colsReal && cols[k] === null ? g.ellipsisW : plan.cellW;
    }
    width = Math.max(width, x);
    if (colsReal && (columnHeader || b > 0)) {
      for (const k of block) {
        const w = cols[k] === null ? g.ellipsisW : plan.cellW;
        svg.appendChild(svgEl("text", { x: xs.get(k) + w / 2, y: y + 12, class: "sw-index-label", "text-anchor": "middle" }, cols[k] === null ? "⋯" : cols[k]));
      }
      y += g.headerH;
    }
    rows.forEach((row, r) => {
      if (rowsReal && row === null) {
        svg.appendChild(svgEl("text", { x: left - 6, y: y + 12, class: "sw-index-label", "text-anchor": "end" }, "⋮"));
        y += g.ellipsisH;
        return;
      }
      if (rowsReal) {
        svg.appendChild(svgEl("text", { x: left - 6, y: y + plan.cellH / 2 + 4, class: "sw-index-label", "text-anchor": "end" }, row));
      }
      for (const c of block) {
        if (colsReal && cols[c] === null) {
          svg.appendChild(svgEl("text", { x: xs.get(c) + g.ellipsisW / 2, y: y + plan.cellH / 2 + 4, class: "sw-index-label", "text-anchor": "middle" }, "⋯"));
          continue;
        }
        drawCell(svg, tensor, indexed, storage, slice, s, r, c, xs.get(c), y, plan, cells);
      }
      y += plan.cellH;
    });
  });
  width = Math.max(width + 2, 40);
  svg.setAttribute("width", width);
  svg.setAttribute("height", y + 2);
  svg.setAttribute("viewBox", `0 0 ${width} ${y + 2}`);
  return svg;
}

/** Px between two column blocks of one wide grid. */
const BLOCK_GAP = 8;

/** One logical cell (r, c) of a slice at (x, y): its <rect> carrying its data, value and address. */
function drawCell(svg, tensor, indexed, storage, slice, s, r, c, x, y, plan, cells) {
  const address = slice.addr[r][c];
  const key = `${tensor.id}:${s}:${r}:${c}`;
  // one <rect> per cell carrying its data; the labels are siblings that ignore the pointer
  const cell = svgEl("rect", {
    x,
    y,
    width: plan.cellW - 2,
    height: plan.cellH - 2,
    rx: 3,
    class: "sw-lcell sw-cell-bg",
    "data-key": key,
    "data-tensor": tensor.id,
    "data-slice": s,
    "data-r": r,
    "data-c": c,
    "data-addr": address,
  });
  svg.appendChild(cell);
  const cx = x + (plan.cellW - 2) / 2;
  const text = readAt(indexed, tensor, address);
  const addrText = plan.addrFits ? `@${address}` : "@…";
  if (plan.mode === "index") {
    svg.appendChild(svgEl("text", { x: cx, y: y + plan.cellH / 2 + 3, "text-anchor": "middle", class: "sw-addr-text sw-addr-small" }, addrText));
  } else {
    const valueY = plan.mode === "both" ? y + 11 : y + plan.cellH / 2 + 3;
    if (plan.valuesFit && text !== null) {
      svg.appendChild(svgEl("text", { x: cx, y: valueY, "text-anchor": "middle", class: "sw-cell-text" }, text));
    }
    let ink = null;
    if (!(plan.valuesFit && text !== null) && storage) {
      const value = readAt(indexed, tensor, address, "value");
      const range = tensor.reads?.value_range ?? storage.value_range;
      const fill = scaleColour(value, range);
      if (fill) cell.setAttribute("style", `fill:${fill}`);
      ink = fill ? scaleInk(value, range) : null;
    }
    if (plan.mode === "both") {
      // on a colour-scale fill the address takes the scale's own readable ink
      const addr = svgEl("text", { x: cx, y: y + plan.cellH - 5.5, "text-anchor": "middle", class: "sw-addr-text sw-addr-small" }, addrText);
      if (ink) addr.setAttribute("style", `fill:${ink}`);
      svg.appendChild(addr);
    }
  }
  cells.set(key, cell);
}

/** Advance of one character of a panel's title (600 11.5px monospace), with a little slack. */
const LABEL_CHAR_W = 7.2;

/** Px a panel needs beside its grid (its left rule and padding, the group's frame). */
const PANEL_MARGIN = 24;

const leadText = (tensor, slice) => `${tensor.name}${slice.label}`;

/**
 * The logical grids of one tensor.  Returns {node, cells: Map(key -> <rect>)} where a key is
 * "tensorId:slice:r:c" (the same keys js/core/scene.js uses).  `selected`: the outer index shown for
 * 5-D and more; `onSelect(outer)` is called when the reader picks another.  When the scene left
 * slices out, `onPick(lead)` is called with any leading index the reader asks for.
 * @param {Tensor} tensor
 * @param {IndexedScene} indexed
 */
export function drawLogical(tensor, indexed, { mode = "both", selected = null, onSelect = null, onPick = null, geometry = LOGICAL_GEOMETRY, room = Infinity } = {}) {
  const g = geometry;
  const cells = new Map();
  const node = htmlEl("div", "sw-logical");
  const { logical } = tensor;
  if (logical.slices.length === 0) {
    node.appendChild(htmlEl("div", "sw-muted", "empty tensor: no elements"));
    return { node, cells };
  }
  const plan = logicalCellPlan(tensor, indexed, mode, g);
  if (logical.ndim <= 2) {
    node.appendChild(drawSlice(tensor, indexed, logical.slices[0], 0, plan, cells, g, { room }));
    return { node, cells };
  }
  const grid = panelGrid(logical, selected);
  if (grid.choices.length) node.appendChild(outerPicker(grid, onSelect));
  const dimName = (d) => (d === null ? null : `dim ${d}`);
  const axes = [dimName(grid.rowDim) && `a group per index of ${dimName(grid.rowDim)}`, dimName(grid.colDim) && `across it ${dimName(grid.colDim)}`, `each panel: dims ${logical.ndim - 2}, ${logical.ndim - 1}`]
    .filter(Boolean)
    .join(" · ");
  node.appendChild(htmlEl("div", "sw-panel-axes", `panels — ${axes}`));
  // Panel groups (one per index of the row dim) flow and wrap, and so do the panels in a group:
  // a grid wider than the page continues below, never behind a scroll.
  const table = htmlEl("div", grid.rowDim === null ? "sw-panels" : "sw-panels sw-panel-groups");
  const boxes = [];
  grid.rows.forEach((rowValue, r) => {
    const group = htmlEl("div", "sw-panel-row");
    group.dataset.row = String(r);
    grid.cols.forEach((colValue, c) => {
      const panel = grid.panels.find((p) => p.row === r && p.col === c);
      const box = htmlEl("div", panel ? "sw-panel" : "sw-panel sw-panel-missing");
      box.dataset.row = String(r);
      box.dataset.col = String(c);
      if (panel) {
        const slice = logical.slices[panel.s];
        if (slice.filled) box.classList.add("sw-panel-filled");
        box.appendChild(htmlEl("div", "sw-slice-label", leadText(tensor, slice)));
        // equal panels keep their columns: the first group names them, the others line up below
        const filledPlan = slice.filled && !valuesShown(indexed, tensor, slice) ? { ...plan, mode: "index", cellH: g.cellH } : plan;
        const grid2 = drawSlice(tensor, indexed, slice, panel.s, filledPlan, cells, g, { columnHeader: r === 0, room: room - PANEL_MARGIN });
        box.appendChild(grid2);
        if (slice.filled) box.appendChild(htmlEl("div", "sw-gap-note sw-filled-note", filledPlan === plan ? "drawn from storage" : "storage indices only"));
        boxes.push({ box, w: Math.max(Number(grid2.getAttribute("width")), leadText(tensor, slice).length * LABEL_CHAR_W + 4) });
      } else {
        // a grid position whose slice the scene thinned out says which slice is missing: a panel
        // is never dropped silently
        const lead = grid.missing.find((m) => (grid.rowDim === null || m[grid.rowDim] === rowValue) && (grid.colDim === null || m[grid.colDim] === colValue));
        const label = `${tensor.name}[${[...lead, ":", ":"].join(", ")}]`;
        box.append(htmlEl("div", "sw-slice-label", label), htmlEl("div", "sw-gap-note", "not in this picture: show it below"));
        boxes.push({ box, w: label.length * LABEL_CHAR_W + 4, missing: true });
      }
      group.appendChild(box);
    });
    table.appendChild(group);
  });
  // equal panel widths keep the panels of wrapped rows in columns
  const panelW = Math.ceil(Math.max(...boxes.map((b) => b.w)));
  for (const { box } of boxes) box.style.width = `${panelW}px`;
  node.appendChild(table);
  if (grid.panels.some((p) => logical.slices[p.s].filled)) {
    const values = grid.panels.every((p) => !logical.slices[p.s].filled || valuesShown(indexed, tensor, logical.slices[p.s]));
    node.appendChild(htmlEl("div", "sw-gap-note sw-filled-legend", `panels marked “${values ? "drawn from storage" : "storage indices only"}” are slices the scene did not list, ${values ? "read here from the storage window it holds" : "whose values the bounded storage window does not hold (no kernel is asked): their cells show the storage index each reads"}`));
  }
  // the scene's own words for what it left out (a filled panel above is one of them, drawn here)
  for (const gap of grid.gaps) node.appendChild(htmlEl("div", "sw-gap-note sw-left-out", gapNote(gap)));
  if (grid.gaps.length) node.appendChild(slicePicker(tensor, indexed, plan, cells, g, onPick, room));
  return { node, cells };
}

/** Whether the storage window holds the value of every cell of `slice`. */
function valuesShown(indexed, tensor, slice) {
  const shown = indexed.storages.get(tensor.storage)?.position;
  return !slice.addr.flat().some((a) => a !== null && !shown?.has(a));
}

/**
 * "slice of dim 0: [0 ▾]": one control per outer dim offering every index (a drop-down up to
 * MAX_SELECT_OPTIONS, else a number field); indices the scene did not list are marked and drawn
 * in the browser (js/core/scene.js sliceAt).
 */
function outerPicker(grid, onSelect) {
  const picker = htmlEl("div", "sw-slice-picker sw-outer-picker");
  picker.appendChild(htmlEl("span", "", `slice of dim${grid.choices.length > 1 ? "s" : ""} ${grid.choices.map((c) => c.dim).join(", ")}: `));
  const controls = grid.choices.map((choice, k) => {
    const listed = new Set(choice.listed);
    let control;
    if (choice.size <= MAX_SELECT_OPTIONS) {
      control = htmlEl("select", "sw-slice-select");
      for (let i = 0; i < choice.size; i += 1) {
        const option = htmlEl("option", listed.has(i) ? "" : "sw-unlisted", listed.has(i) ? String(i) : `${i} (drawn here)`);
        option.value = String(i);
        control.appendChild(option);
      }
      control.value = String(grid.selected[k]);
    } else {
      control = htmlEl("input", "sw-slice-select");
      control.type = "number";
      control.min = "0";
      control.max = String(choice.size - 1);
      control.value = String(grid.selected[k]);
    }
    control.dataset.dim = String(choice.dim);
    control.setAttribute("aria-label", `index along dim ${choice.dim} (0 to ${choice.size - 1})`);
    control.addEventListener("click", (event) => event.stopPropagation());
    picker.append(htmlEl("span", "", `dim ${choice.dim} `), control, " ");
    return control;
  });
  const apply = () => {
    const outer = controls.map((control) => Number(control.value));
    if (outer.every((i, k) => Number.isInteger(i) && i >= 0 && i < grid.choices[k].size)) onSelect?.(outer);
  };
  for (const control of controls) control.addEventListener("change", apply);
  return picker;
}

/**
 * "show slice [i0] [i1] …": any slice the bounded scene left out, drawn as one extra panel.  Its
 * addresses are exact (sliceAt); its values only where the storage window holds them, and the
 * panel says so plainly when it does not (the scene is bounded: nothing is fetched).
 */
function slicePicker(tensor, indexed, plan, cells, g, onPick, room) {
  const box = htmlEl("div", "sw-slice-picker");
  const leadDims = tensor.logical.ndim - 2;
  const pickedIndex = tensor.logical.slices.findIndex((slice) => slice.picked);
  const pickedSlice = pickedIndex < 0 ? null : tensor.logical.slices[pickedIndex];
  const inputs = [];
  box.appendChild(htmlEl("span", "", "show any slice: "));
  for (let d = 0; d < leadDims; d += 1) {
    const input = htmlEl("input", "sw-slice-index");
    input.type = "number";
    input.min = "0";
    input.max = String(tensor.logical.shape[d] - 1);
    input.value = String(pickedSlice?.lead[d] ?? 0);
    input.setAttribute("aria-label", `index along dim ${d} (0 to ${tensor.logical.shape[d] - 1})`);
    inputs.push(input);
    box.append(htmlEl("span", "", `dim ${d} `), input, " ");
  }
  const button = htmlEl("button", "sw-slice-show", "show");
  button.type = "button";
  const error = htmlEl("span", "sw-slice-error", "");
  const apply = () => {
    const lead = inputs.map((input) => Number(input.value));
    const valid = lead.every((i, d) => Number.isInteger(i) && i >= 0 && i < tensor.logical.shape[d]);
    error.textContent = valid ? "" : " each index must be a whole number from 0 to its dim's size − 1";
    if (valid) onPick?.(lead);
  };
  button.addEventListener("click", (event) => {
    event.stopPropagation(); // a click inside the card must not count as "switch the arrows"
    apply();
  });
  for (const input of inputs) {
    input.addEventListener("click", (event) => event.stopPropagation());
    input.addEventListener("keydown", (event) => {
      if (event.key === "Enter") apply();
    });
  }
  box.append(button, error);
  if (!pickedSlice) return box;
  const wrap = htmlEl("div", "sw-panel sw-picked");
  wrap.appendChild(htmlEl("div", "sw-slice-label", `${leadText(tensor, pickedSlice)} (picked)`));
  const shown = indexed.storages.get(tensor.storage)?.position;
  const missing = pickedSlice.addr.flat().some((a) => a !== null && !shown?.has(a));
  // values the storage window does not hold cannot be shown: the panel shows addresses instead
  const pickedPlan = missing ? { ...plan, mode: "index", cellH: g.cellH } : plan;
  wrap.appendChild(drawSlice(tensor, indexed, pickedSlice, pickedIndex, pickedPlan, cells, g, { room: room - PANEL_MARGIN }));
  if (missing) {
    wrap.appendChild(htmlEl("div", "sw-gap-note sw-picked-note", "its values are not in this picture (it holds a bounded window of the storage): cells show the storage index each one reads"));
  }
  const outer = htmlEl("div", "sw-slice-picked");
  outer.append(box, wrap);
  return outer;
}

/**
 * Header line of a tensor card: swatch, mark, name, one-line layout, the click hint.
 * @param {Tensor} tensor
 * @param {string} uid
 */
export function tensorHeader(tensor, uid) {
  const header = htmlEl("div", "sw-tensor-header");
  const { shape, strides, offset } = tensor.layout;
  // a symbolic layout is drawn at its example sizes: its header says the symbols (and the sizes drawn at)
  const concrete = shape ? `(${shape.join(",")}):(${strides.join(",")}) +${offset}` : tensor.layout.text;
  const summary = htmlEl("span", "sw-summary", tensor.layout.symbolic ?? concrete);
  summary.title = "shape:strides +offset — (3,4):(4,1) +0 means shape (3, 4), one step along dim 0 moves 4 storage elements, along dim 1 moves 1, starting at storage element 0";
  const hint = htmlEl("span", "sw-click-hint", "click: show its strides");
  header.append(swatch(tensor, uid), htmlEl("span", "sw-mark", tensor.mark), htmlEl("span", "sw-name", tensor.name), summary, hint);
  return header;
}
