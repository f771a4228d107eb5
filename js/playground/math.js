// Index math of the as_strided playground, run in the browser so that edits work with no kernel
// (a static HTML export).  Ported from stridewidget/layout/layout.py (flags, span) and
// stridewidget/adapters/inspect.py (`as_strided`'s checks and their messages); js/playground/cases.json,
// generated from Python by tests/make_playground_cases.py, keeps the two in step.

/** Views with at most this many elements are enumerated for touch counts and overlap groups. */
export const ENUMERATION_LIMIT = 200_000;

/** Python's repr of a tuple of ints: "()", "(3,)", "(1, 2)". */
export function tupleText(values) {
  if (values.length === 1) return `(${values[0]},)`;
  return `(${values.join(", ")})`;
}

export function numel(size) {
  return size.reduce((product, n) => product * n, 1);
}

/** Storage element of a logical index: offset + sum(index[d] * stride[d]). */
export function address(stride, offset, index) {
  let position = offset;
  for (let d = 0; d < index.length; d += 1) position += index[d] * stride[d];
  return position;
}

/** Inclusive [lo, hi] range of storage elements the view touches; null when it is empty. */
export function span(size, stride, offset) {
  if (numel(size) === 0) return null;
  let lo = offset;
  let hi = offset;
  size.forEach((n, d) => {
    const reach = stride[d] * (n - 1);
    if (reach < 0) lo += reach;
    else hi += reach;
  });
  return [lo, hi];
}

function denseInOrder(size, stride, order) {
  let expected = 1;
  for (const d of order) {
    if (size[d] !== 1) {
      if (stride[d] !== expected) return false;
      expected *= size[d];
    }
  }
  return true;
}

const range = (n) => Array.from({ length: n }, (_, i) => i);

/** Row-major contiguous by PyTorch's rule (size-1 dims' strides don't matter; empty is). */
export function isContiguous(size, stride) {
  return numel(size) === 0 || denseInOrder(size, stride, range(size.length).reverse());
}

export function isFContiguous(size, stride) {
  return numel(size) === 0 || denseInOrder(size, stride, range(size.length));
}

/** Channels-last (NHWC, 4-d) or channels-last-3d (NDHWC, 5-d) contiguous, PyTorch's rule. */
export function isChannelsLast(size, stride) {
  if (size.length === 4) return denseInOrder(size, stride, [1, 3, 2, 0]);
  if (size.length === 5) return denseInOrder(size, stride, [1, 4, 3, 2, 0]);
  return false;
}

/** Covers a gap-free block with no element twice, in some order of the dims. */
export function isDense(size, stride) {
  if (isContiguous(size, stride)) return true;
  const pairs = size
    .map((n, d) => [Math.abs(stride[d]), n])
    .filter(([, n]) => n !== 1)
    .sort((a, b) => a[0] - b[0]);
  let expected = 1;
  for (const [s, n] of pairs) {
    if (s !== expected) return false;
    expected *= n;
  }
  return true;
}

/**
 * The first logical index, in row-major order, whose storage element is >= storageSize
 * (strides are non-negative here, so addresses grow along every dim): the port of
 * `_first_out_of_bounds` in stridewidget/adapters/inspect.py, so both name the same index.
 */
export function firstOutOfBounds(size, stride, offset, storageSize) {
  const reach = size.map((n, d) => stride[d] * (n - 1));
  const total = reach.reduce((a, b) => a + b, 0);
  if (offset + total < storageSize) return null;
  const index = [];
  let position = offset;
  for (let d = 0; d < size.length; d += 1) {
    const rest = reach.slice(d + 1).reduce((a, b) => a + b, 0);
    let i = 0;
    if (stride[d] !== 0) {
      const need = storageSize - position - rest;
      i = Math.max(0, Math.ceil(need / stride[d]));
    }
    index.push(Math.min(i, size[d] - 1));
    position += stride[d] * index[index.length - 1];
  }
  return index;
}

const isWhole = (v) => Number.isSafeInteger(v);
const INT64_MAX = 2n ** 63n - 1n;

/**
 * The checks `sw.as_strided` makes before torch ever sees a view, with the same messages.
 * Returns null when the view is valid, else the refusal message.
 */
export function refusal(size, stride, offset, storageSize) {
  if (![...size, ...stride, offset].every(isWhole)) {
    return "as_strided: size, stride and storage_offset must be whole numbers";
  }
  if (size.length !== stride.length) {
    return (
      `as_strided: size ${tupleText(size)} has ${size.length} dims ` +
      `but stride ${tupleText(stride)} has ${stride.length}`
    );
  }
  if (size.some((n) => n < 0)) return `as_strided: size ${tupleText(size)} has a negative entry`;
  if (stride.some((s) => s < 0)) {
    return (
      `as_strided: stride ${tupleText(stride)} has a negative entry; torch views cannot step ` +
      "backwards (use `torch.flip`, which copies)"
    );
  }
  if (offset < 0) return `as_strided: storage_offset ${offset} is negative`;
  // torch counts elements in an int64: exact with BigInt (Numbers round past 2**53)
  const count = size.reduce((product, n) => product * BigInt(n), 1n);
  if (count > INT64_MAX) {
    return (
      `as_strided: size ${tupleText(size)} has ${count} elements, more than torch's limit of ` +
      "2**63 - 1 (its element count is a 64-bit int); use fewer or smaller dimensions"
    );
  }
  if (numel(size) > 0) {
    const bad = firstOutOfBounds(size, stride, offset, storageSize);
    if (bad !== null) {
      return (
        `as_strided: index ${tupleText(bad)} maps to storage element ${address(stride, offset, bad)}, ` +
        `but the storage has only ${storageSize} elements (valid: 0..${storageSize - 1}); ` +
        `size ${tupleText(size)}, stride ${tupleText(stride)}, storage_offset ${offset}`
      );
    }
  }
  return null;
}

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
  const message = refusal(size, stride, offset, storageSize);
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
