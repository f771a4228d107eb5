// Builds, in the browser, a scene in the format of stridewidget/scene/build.py (js/core/types.js) for
// the playground's current setting, so the main widget's renderers (js/widget/storage.js,
// js/widget/logical.js, js/widget/facts.js) draw it.  The storage values come from the page
// (embedded once); all addresses are computed here.

import { LIMITS, mergedArrows, panelsFor, suggestWrap } from "../core/rules.js";
import { address, isChannelsLast, isDense, numel, span, tupleText } from "../core/strides.js";
import { touches } from "./math.js";

/** @typedef {import("../core/types.js").Scene} Scene */

export { LIMITS };
/** Storage elements drawn when the page has no values (meta tensors). */
const MAX_DRAWN_CELLS = 512;

function shownIndices(n, elide) {
  if (!elide || n <= 2 * LIMITS.edge_items + 1) return [...Array(n).keys()];
  const e = LIMITS.edge_items;
  return [...Array(e).keys(), null, ...Array.from({ length: e }, (_, k) => n - e + k)];
}

/** The logical window: 2-d slices of the last two dims, leading dims listed up to max_slices. */
export function logicalWindow(size, stride, offset) {
  const ndim = size.length;
  const summarize = numel(size) > LIMITS.threshold;
  const perDim = size.map((n) => shownIndices(n, summarize || n > LIMITS.max_dim_items));
  const rowDim = ndim >= 2 ? ndim - 2 : null;
  const colDim = ndim >= 1 ? ndim - 1 : null;
  const rows = rowDim === null ? null : perDim[rowDim];
  const cols = colDim === null ? null : perDim[colDim];
  const slices = [];
  if (numel(size) > 0) {
    const leads = [];
    const leadDims = perDim.slice(0, Math.max(ndim - 2, 0)).map((shown) => shown.filter((i) => i !== null));
    const total = leadDims.reduce((p, shown) => p * shown.length, 1);
    const walk = (prefix, d) => {
      if (leads.length > LIMITS.max_slices) return;
      if (d === leadDims.length) {
        leads.push(prefix);
        return;
      }
      for (const i of leadDims[d]) walk([...prefix, i], d + 1);
    };
    walk([], 0);
    const keep = total > LIMITS.max_slices ? leads.slice(0, LIMITS.max_slices - 1) : leads;
    for (const lead of keep) slices.push(slice(stride, offset, lead, rows, cols));
    if (total > LIMITS.max_slices) {
      slices.push({ kind: "gap", dim: null, count: total - LIMITS.max_slices, lead: null });
      const last = leadDims.map((shown) => shown[shown.length - 1]);
      slices.push(slice(stride, offset, last, rows, cols));
    }
  }
  const elided = perDim.some((shown) => shown.includes(null));
  return { shape: [...size], ndim, elided, row_dim: rowDim, col_dim: colDim, panels: panelsFor(ndim), slices };
}

function slice(stride, offset, lead, rows, cols) {
  const rowList = rows ?? [0];
  const colList = cols ?? [0];
  const addr = rowList.map((r) =>
    colList.map((c) => {
      if (r === null || c === null) return null;
      const index = [...lead];
      if (rows !== null) index.push(r);
      if (cols !== null) index.push(c);
      return address(stride, offset, index);
    }),
  );
  const ndim = lead.length + (rows !== null) + (cols !== null);
  const parts = [...lead.map(String), ...Array(ndim - lead.length).fill(":")];
  return { kind: "slice", lead: [...lead], label: `[${parts.join(", ")}]`, rows, cols, addr };
}

function arrows(size, stride, offset, itemsize) {
  return mergedArrows(size, stride, itemsize, (index) => address(stride, offset, index));
}

/** Python's str(Layout) for the view: 'int64 (6,4):(1,6) +0 · storage 24 · F-contiguous'. */
export function layoutText(state, facts) {
  const t = (values) => `(${values.join(",")})`;
  const flags = [];
  if (facts.isContiguous) flags.push("contiguous");
  else if (facts.isFContiguous) flags.push("F-contiguous");
  if (facts.isDense && flags.length === 0) flags.push("dense");
  if (facts.hasOverlap) flags.push("overlapping");
  return `${state.dtype} ${t(state.size)}:${t(state.stride)} +${state.offset} · storage ${state.storageSize} · ${flags.join(", ") || "strided"}`;
}

function touchesOf(counts, cells, size, stride, offset) {
  if (counts) return cells.map((cell) => counts.get(cell) ?? 0);
  const reach = span(size, stride, offset);
  if (reach && isDense(size, stride)) return cells.map((cell) => (cell >= reach[0] && cell <= reach[1] ? 1 : 0));
  return cells.map(() => null);
}

/**
 * How often x reads each storage element: null when x is dense (each element of its span once,
 * no need to enumerate), else the counts (null beyond the enumeration limit).  x never changes
 * in a playground, so the caller computes this once.
 */
export function baseTouchCounts(state) {
  if (isDense(state.baseShape, state.baseStrides)) return null;
  return touches(state.baseShape, state.baseStrides, state.baseOffset).counts;
}

/** Does x read a storage element twice?  null when its counts were too costly to take. */
function baseOverlaps(base, baseCounts) {
  if (isDense(base.shape, base.strides)) return false;
  if (!baseCounts) return null;
  return [...baseCounts.values()].some((count) => count > 1);
}

/**
 * The scene for the current setting: one storage, the base `x` (order 0) and the view (order 1).
 * `facts` is math.analyse() of a valid setting, or null when the setting is refused;
 * `baseCounts` is baseTouchCounts(state).
 * @returns {Scene}
 */
export function playgroundScene(state, facts, explain, baseCounts = baseTouchCounts(state)) {
  // Long on purpose: it writes out one scene literal, field by field, in the order of build_scene's.
  const { storageSize, cellText, cellValue } = state;
  const hasValues = cellText.length > 0;
  // The embedded window [start, start + shown); the rest of the storage is drawn as gaps.
  const shown = Math.min(storageSize, hasValues ? cellText.length : MAX_DRAWN_CELLS);
  const start = Math.max(0, Math.min(state.cellStart ?? 0, storageSize - shown));
  const cells = Array.from({ length: shown }, (_, i) => start + i);
  const reach = facts ? facts.span : null;
  const inSpan = (lo, hi) => reach !== null && reach[0] <= hi && lo <= reach[1];
  const segments = [];
  if (start > 0) segments.push({ kind: "gap", start: 0, stop: start, in_span: inSpan(0, start - 1) });
  if (shown > 0) segments.push({ kind: "cells", start, stop: start + shown });
  if (storageSize > start + shown) {
    segments.push({ kind: "gap", start: start + shown, stop: storageSize, in_span: inSpan(start + shown, storageSize - 1) });
  }
  const finite = hasValues ? cellValue.slice(0, shown).filter((v) => v !== null) : [];
  const base = { shape: state.baseShape, strides: state.baseStrides, offset: state.baseOffset };
  const storage = {
    id: "s0",
    dtype: state.dtype,
    itemsize: state.itemsize,
    unit: state.itemsize,
    device: state.device,
    size: storageSize,
    nbytes: storageSize * state.itemsize,
    has_values: hasValues,
    wrap: suggestWrap([{ ...base, hasOverlap: baseOverlaps(base, baseCounts) }], storageSize),
    segments,
    cells: { index: cells, text: hasValues ? cellText.slice(0, shown) : null, value: hasValues ? cellValue.slice(0, shown) : null },
    value_range: finite.length ? [Math.min(...finite), Math.max(...finite)] : null,
    text_width: hasValues ? Math.max(0, ...cellText.slice(0, shown).map((t) => t.length)) : 0,
    tensors: facts ? ["t0", "t1"] : ["t0"],
  };
  const x = {
    id: "t0",
    name: "x",
    storage: "s0",
    mark: "x",
    order: 0,
    layout: { text: `x: shape ${tupleText(base.shape)}, stride ${tupleText(base.strides)}, offset ${base.offset}` },
    logical: logicalWindow(base.shape, base.strides, base.offset),
    touch: touchesOf(baseCounts, cells, base.shape, base.strides, base.offset),
    arrows: arrows(base.shape, base.strides, base.offset, state.itemsize),
  };
  const tensors = [x];
  if (facts) {
    const { size, stride, offset, itemsize } = state;
    tensors.push({
      id: "t1",
      name: "view",
      storage: "s0",
      mark: "V",
      order: 1,
      layout: {
        shape: size,
        strides: stride,
        byte_strides: stride.map((s) => s * itemsize),
        offset,
        itemsize,
        unit: itemsize,
        dtype: state.dtype,
        device: state.device,
        numel: facts.numel,
        storage_size: storageSize,
        storage_nbytes: storageSize * itemsize,
        span: facts.span,
        touched: facts.touched ?? facts.numel,
        touched_exact: facts.exact,
        in_bounds: true,
        is_contiguous: facts.isContiguous,
        is_f_contiguous: facts.isFContiguous,
        is_channels_last: isChannelsLast(size, stride),
        is_dense: facts.isDense,
        has_overlap: Boolean(facts.hasOverlap),
        notes: [],
        text: layoutText(state, facts),
        explain,
      },
      logical: logicalWindow(size, stride, offset),
      touch: touchesOf(facts.counts, cells, size, stride, offset),
      arrows: arrows(size, stride, offset, itemsize),
    });
  }
  return { version: 2, storages: [storage], tensors, limits: LIMITS };
}
