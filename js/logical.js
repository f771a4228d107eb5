// The logical grid(s): the tensor as the user indexes it.  0-d, 1-d and 2-d directly; higher
// dims as labelled 2-d slices of the last two dims, elided like torch's print.
import { cellText } from "./scene.js";
import { htmlEl, patternDefs, patternId, scaleColour, svgEl } from "./dom.js";

export const LOGICAL_GEOMETRY = {
  cellW: 46,
  cellH: 26,
  ellipsisW: 20,
  ellipsisH: 16,
  labelW: 34,
  headerH: 16,
  sliceLabelH: 18,
  sliceGap: 10,
  gapSliceH: 20,
  charW: 6.7,
};

function columnXs(cols, g) {
  const xs = [];
  let x = g.labelW;
  for (const col of cols) {
    xs.push(x);
    x += col === null ? g.ellipsisW : g.cellW;
  }
  return { xs, right: x };
}

/** A small swatch (colour + pattern) identifying a tensor; `uid` keeps pattern ids unique. */
export function swatch(tensor, uid) {
  const svg = svgEl("svg", { width: 16, height: 16, class: "sw-swatch", "aria-hidden": "true" });
  const scope = `${uid}-sw-${tensor.id}`;
  svg.appendChild(patternDefs(scope, [tensor]));
  svg.appendChild(svgEl("rect", { x: 1, y: 1, width: 14, height: 14, rx: 3, fill: `url(#${patternId(scope, tensor.order)})`, class: "sw-swatch-box" }));
  return svg;
}

/**
 * The logical grids of one tensor as an SVG.  Returns {node, cells: Map(key -> <g>)} where a
 * key is "tensorId:slice:r:c" (the same keys scene.js uses).
 */
export function drawLogical(tensor, indexed, g = LOGICAL_GEOMETRY) {
  const storageEntry = indexed.storages.get(tensor.storage);
  const storage = storageEntry?.storage;
  const fits = storage && storage.cells.text !== null && storage.text_width <= Math.floor((g.cellW - 4) / g.charW);
  const cells = new Map();
  const svg = svgEl("svg", { class: "sw-logical-grid", role: "img" });
  svg.appendChild(svgEl("title", {}, `${tensor.name}: logical view, shape (${tensor.logical.shape.join(", ")})`));
  let y = 0;
  let width = 120;
  const { logical } = tensor;
  if (logical.slices.length === 0) {
    svg.appendChild(svgEl("text", { x: 0, y: 14, class: "sw-muted-text" }, "empty tensor: no elements"));
    y = 20;
  }
  logical.slices.forEach((slice, s) => {
    if (slice.kind === "gap") {
      const text = slice.dim === null ? `⋮ ${slice.count} more slices not shown` : `⋮ ${slice.count} slices along dim ${slice.dim} not shown`;
      svg.appendChild(svgEl("text", { x: g.labelW, y: y + 14, class: "sw-gap-label" }, text));
      y += g.gapSliceH;
      return;
    }
    if (logical.ndim > 2) {
      svg.appendChild(svgEl("text", { x: 0, y: y + 13, class: "sw-slice-label" }, `${tensor.name}${slice.label}`));
      y += g.sliceLabelH;
    }
    const cols = slice.cols ?? [null];
    const rows = slice.rows ?? [null];
    const colsReal = slice.cols !== null;
    const rowsReal = slice.rows !== null;
    const { xs, right } = colsReal ? columnXs(cols, g) : { xs: [g.labelW], right: g.labelW + g.cellW };
    width = Math.max(width, right + 4);
    if (colsReal) {
      cols.forEach((col, c) => {
        const w = col === null ? g.ellipsisW : g.cellW;
        svg.appendChild(svgEl("text", { x: xs[c] + w / 2, y: y + 12, class: "sw-index-label", "text-anchor": "middle" }, col === null ? "⋯" : col));
      });
      y += g.headerH;
    }
    rows.forEach((row, r) => {
      if (rowsReal && row === null) {
        svg.appendChild(svgEl("text", { x: g.labelW - 6, y: y + 12, class: "sw-index-label", "text-anchor": "end" }, "⋮"));
        y += g.ellipsisH;
        return;
      }
      if (rowsReal) {
        svg.appendChild(svgEl("text", { x: g.labelW - 6, y: y + g.cellH / 2 + 4, class: "sw-index-label", "text-anchor": "end" }, row));
      }
      cols.forEach((col, c) => {
        if (colsReal && col === null) {
          svg.appendChild(svgEl("text", { x: xs[c] + g.ellipsisW / 2, y: y + g.cellH / 2 + 4, class: "sw-index-label", "text-anchor": "middle" }, "⋯"));
          return;
        }
        const address = slice.addr[r][c];
        const key = `${tensor.id}:${s}:${r}:${c}`;
        // one <rect> per cell carrying its data; the label is a sibling that ignores the pointer
        const cell = svgEl("rect", {
          x: xs[c],
          y,
          width: g.cellW - 2,
          height: g.cellH - 2,
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
        const text = cellText(indexed, tensor.storage, address);
        const textAt = { x: xs[c] + (g.cellW - 2) / 2, y: y + g.cellH / 2 + 3, "text-anchor": "middle" };
        if (storage && storage.cells.text === null) {
          svg.appendChild(svgEl("text", { ...textAt, class: "sw-addr-text" }, `@${address}`));
        } else if (fits && text !== null) {
          svg.appendChild(svgEl("text", { ...textAt, class: "sw-cell-text" }, text));
        } else if (storage) {
          const i = storageEntry.position.get(address);
          const fill = scaleColour(i === undefined ? null : storage.cells.value[i], storage.value_range);
          if (fill) cell.setAttribute("style", `fill:${fill}`);
        }
        cells.set(key, cell);
      });
      y += g.cellH;
    });
    y += g.sliceGap;
  });
  svg.setAttribute("width", width);
  svg.setAttribute("height", y);
  svg.setAttribute("viewBox", `0 0 ${width} ${y}`);
  return { node: svg, cells };
}

/** Header line of a tensor card: swatch, mark, name, one-line layout. */
export function tensorHeader(tensor, uid) {
  const header = htmlEl("div", "sw-tensor-header");
  header.append(swatch(tensor, uid), htmlEl("span", "sw-mark", tensor.mark), htmlEl("span", "sw-name", tensor.name), htmlEl("span", "sw-summary", tensor.layout.text));
  return header;
}
