import style from "../../stridewidget/style.json";
import { isDense } from "./strides.js";

// The scene rules that the playground applies in the browser, the twins of stridewidget/scene/
// (arrows.py stride_arrows, storage.py _suggest_wrap, logical.py _panels, build.py's limits):
// js/core/rules.test.js checks them against scenes that Python built, so the playground and the
// widget draw the same picture.

/** The limits of build_scene's defaults (scene["limits"]); the shared ones come from the style. */
export const LIMITS = {
  edge_items: 3,
  threshold: 256,
  max_dim_items: 32,
  max_slices: style.limits.max_slices,
  max_storage_cells: 1024,
  max_strip_cells: style.limits.max_strip_cells,
};
/** A suggested row narrower than this reads as a column, not a strip of memory. */
const MIN_WRAP = 8;

const stepText = (stride) => (stride === 0 ? "×0" : stride > 0 ? `+${stride}` : `−${-stride}`);

/**
 * One arrow per distinct stride of the dims of size > 1, with its lane: loops first, then arcs
 * by growing |stride|.  `address(index)` maps a logical index to its storage cell.
 */
export function mergedArrows(shape, strides, itemsize, address) {
  if (shape.some((n) => n === 0)) return [];
  const byStride = new Map();
  shape.forEach((n, dim) => {
    if (n < 2) return;
    if (!byStride.has(strides[dim])) byStride.set(strides[dim], []);
    byStride.get(strides[dim]).push(dim);
  });
  const ordered = [...byStride.entries()].sort(([a, da], [b, db]) => (a !== 0) - (b !== 0) || Math.abs(a) - Math.abs(b) || da[0] - db[0]);
  const origin = shape.map(() => 0);
  const start = address(origin);
  const arrows = ordered.map(([stride, dims], lane) => {
    const dim = dims[0];
    const neighbour = shape.map((_, d) => (d === dim ? 1 : 0));
    return {
      dims,
      dim,
      stride,
      byte_stride: stride * itemsize,
      from: start,
      to: address(neighbour),
      from_index: origin,
      to_index: neighbour,
      label: `${dims.map((d) => `d${d}`).join(",")} ${stepText(stride)}`,
      lane,
    };
  });
  return arrows.sort((a, b) => a.dim - b.dim);
}

/**
 * Cells per storage row (see _suggest_wrap): the whole storage when short, else the row of the
 * natural layout of the widest dense member, widened to the largest multiple that fits.
 * `layouts`: [{shape, strides, hasOverlap}].
 */
export function suggestWrap(layouts, size) {
  const max = LIMITS.max_strip_cells;
  if (size <= max) return Math.max(size, 1);
  const numel = (lay) => lay.shape.reduce((p, n) => p * n, 1);
  const candidates = layouts.filter((lay) => numel(lay) > 0 && lay.hasOverlap === false);
  candidates.sort((a, b) => isDense(b.shape, b.strides) - isDense(a.shape, a.strides) || numel(b) - numel(a));
  for (const lay of candidates) {
    const strides = new Set(lay.shape.flatMap((n, d) => (n > 1 && lay.strides[d] !== 0 ? [Math.abs(lay.strides[d])] : [])));
    if (isDense(lay.shape, lay.strides)) strides.add(numel(lay));
    const fitting = [...strides].filter((s) => s >= 2 && s <= max);
    if (fitting.length) {
      const row = Math.max(...fitting);
      return row * Math.floor(max / row);
    }
    const wider = [...strides].filter((s) => s > max);
    if (wider.length) {
      const natural = Math.min(...wider);
      for (let d = max; d >= MIN_WRAP; d -= 1) if (natural % d === 0) return d;
    }
    break;
  }
  return max;
}

/** Which leading dims place a 2-D slice in the grid of panels (see _panels). */
export function panelsFor(ndim) {
  const lead = Math.max(ndim - 2, 0);
  if (lead === 0) return { row_dim: null, col_dim: null, select_dims: [] };
  if (lead === 1) return { row_dim: null, col_dim: 0, select_dims: [] };
  return { row_dim: lead - 2, col_dim: lead - 1, select_dims: [...Array(lead - 2).keys()] };
}
