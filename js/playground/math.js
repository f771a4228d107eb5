// The playground's facts about one setting, run in the browser so that edits work with no kernel
// (a static HTML export): touch counts and overlap groups by enumeration (what
// stridewidget/layout/touch.py counts for a scene), the cells past the end, and the sentences
// about them.  The layout math and `as_strided`'s checks are in js/core/strides.js;
// js/playground/cases.json, generated from Python by tests/make_playground_cases.py, keeps the two
// in step.
import { checkView, isChannelsLast, isContiguous, isDense, isFContiguous, numel, span, tupleText } from "../core/strides.js";

/** Views with at most this many elements are enumerated for touch counts and overlap groups. */
export const ENUMERATION_LIMIT = 200_000;

/** Calls fn(index, address, ordinal) for every logical index, in row-major order. */
export function forEachIndex(size, stride, offset, fn) {
  const total = numel(size);
  if (total === 0) return;
  const index = size.map(() => 0);
  let position = offset;
  for (let k = 0; k < total; k += 1) {
    fn(index, position, k);
    for (let d = size.length - 1; d >= 0; d -= 1) {
      index[d] += 1;
      position += stride[d];
      if (index[d] < size[d]) break;
      position -= stride[d] * size[d];
      index[d] = 0;
    }
  }
}

/** The logical index with row-major ordinal k. */
function unravel(size, k) {
  const index = size.map(() => 0);
  for (let d = size.length - 1, rest = k; d >= 0; d -= 1) {
    index[d] = rest % size[d];
    rest = Math.floor(rest / size[d]);
  }
  return index;
}

/** Spans up to this many elements are tallied in typed arrays (fast); longer ones in Maps. */
const TALLY_SPAN_LIMIT = 1 << 20;

/**
 * How often each storage element is read (`counts`: Map element -> count), and the logical
 * indices that share an element (`shared`: up to `keepIndices` indices each), in one walk.
 * Exact by enumeration up to ENUMERATION_LIMIT elements; beyond that `exact` is false and only
 * the cheap exact facts (stride 0, dense) decide `hasOverlap` (null when undecided).
 */
export function touches(size, stride, offset, { keepIndices = 4 } = {}) {
  const total = numel(size);
  if (total > ENUMERATION_LIMIT) {
    const zeroStride = size.some((n, d) => n > 1 && stride[d] === 0);
    const hasOverlap = zeroStride ? true : isDense(size, stride) ? false : null;
    return { exact: false, counts: null, touched: null, hasOverlap, shared: [] };
  }
  const reach = span(size, stride, offset) ?? [0, -1];
  const lo = reach[0];
  const length = reach[1] - lo + 1;
  const typed = length <= TALLY_SPAN_LIMIT;
  // per storage element: how many reads, and the ordinal of the first one
  const tally = typed ? new Uint32Array(length) : new Map();
  const first = typed ? new Int32Array(length) : new Map();
  const groups = new Map();
  forEachIndex(size, stride, offset, (index, position, ordinal) => {
    const slot = position - lo;
    const count = (typed ? tally[slot] : (tally.get(slot) ?? 0)) + 1;
    if (typed) tally[slot] = count;
    else tally.set(slot, count);
    if (count === 1) {
      if (typed) first[slot] = ordinal;
      else first.set(slot, ordinal);
    } else if (count === 2) {
      const firstIndex = unravel(size, typed ? first[slot] : first.get(slot));
      groups.set(position, { cell: position, count, indices: [firstIndex, index.slice()].slice(0, keepIndices) });
    } else {
      const group = groups.get(position);
      group.count = count;
      if (group.indices.length < keepIndices) group.indices.push(index.slice());
    }
  });
  const counts = new Map();
  if (typed) {
    tally.forEach((count, slot) => {
      if (count) counts.set(lo + slot, count);
    });
  } else {
    [...tally.keys()].sort((a, b) => a - b).forEach((slot) => counts.set(lo + slot, tally.get(slot)));
  }
  const shared = [...groups.values()].sort((a, b) => a.cell - b.cell);
  return { exact: true, counts, touched: counts.size, hasOverlap: shared.length > 0, shared };
}

/**
 * How many logical indices of a setting with non-negative entries map to storage element
 * storageSize or beyond (null when the view is too big to enumerate).
 */
export function pastTheEnd(size, stride, offset, storageSize) {
  if (numel(size) > ENUMERATION_LIMIT) return null;
  let count = 0;
  forEachIndex(size, stride, offset, (_, position) => {
    if (position >= storageSize) count += 1;
  });
  return count;
}

/** Everything the playground says about one setting, computed without a kernel. */
export function analyse(size, stride, offset, storageSize) {
  const message = checkView(size, stride, offset, storageSize);
  if (message !== null) return { valid: false, message };
  const touch = touches(size, stride, offset);
  return {
    valid: true,
    message: null,
    numel: numel(size),
    span: span(size, stride, offset),
    isContiguous: isContiguous(size, stride),
    isFContiguous: isFContiguous(size, stride),
    isDense: isDense(size, stride),
    isChannelsLast: isChannelsLast(size, stride),
    ...touch,
  };
}

/** Plain-English overlap sentence: which logical indices share a storage element. */
export function overlapText(shared, { maxCells = 3 } = {}) {
  if (shared.length === 0) return "";
  const examples = shared.slice(0, maxCells).map(({ cell, count, indices }) => {
    const names = indices.map(tupleText).join(", ");
    const more = count > indices.length ? ` and ${count - indices.length} more` : "";
    return `storage[${cell}] is read by ${names}${more}`;
  });
  const more = shared.length - maxCells;
  const rest = more > 0 ? `; ${more} more shared element${more === 1 ? "" : "s"}` : "";
  return (
    `Overlaps itself: ${shared.length === 1 ? "1 storage element is" : `${shared.length} storage elements are`} ` +
    `read more than once — ${examples.join("; ")}${rest}. ` +
    "In-place writes through this view would hit them more than once."
  );
}

/**
 * The storage elements past the end (>= storageSize) that a setting with non-negative entries
 * would read: the first `limit` of them in storage order, with the first logical index reading
 * each, and how many there are in all (`total`, distinct elements).  null when the view is too big
 * to enumerate.
 */
export function escapingCells(size, stride, offset, storageSize, limit = 16) {
  if (numel(size) > ENUMERATION_LIMIT) return null;
  const readers = new Map();
  forEachIndex(size, stride, offset, (index, position) => {
    if (position >= storageSize && !readers.has(position)) readers.set(position, index.slice());
  });
  const cells = [...readers.keys()].sort((a, b) => a - b);
  return { total: cells.length, cells: cells.slice(0, limit).map((cell) => ({ cell, index: readers.get(cell) })) };
}
