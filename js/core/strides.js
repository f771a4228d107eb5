// Pure layout math on size / stride / offset, ints in and answers out: the browser's twin of
// stridewidget/layout/strides.py (address, span, the contiguity flags, first_out_of_bounds, and
// check_view: the checks of `sw.as_strided`, with its messages), so edits in the playground work
// with no kernel.  checkView also refuses numbers that are not whole (the playground's inputs are
// typed in; Python's `sw.as_strided` has turned its arguments into ints before it checks them).
// js/playground/cases.json, generated from Python by tests/make_playground_cases.py, keeps the two in
// step (js/core/strides.test.js, js/playground/math.test.js).

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

/**
 * Covers a gap-free block with no element twice, in some order of the dims (Python's
 * `Layout.is_dense`; an empty view is dense, as it is contiguous).  The one rule for the
 * playground's facts and for the scene rules' storage row (js/core/rules.js).
 */
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
 * (strides are non-negative here, so addresses grow along every dim): the port of Python's
 * `first_out_of_bounds` (stridewidget/layout/strides.py), so both name the same index.
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
 * The checks `sw.as_strided` makes before torch ever sees a view (Python's `check_view`), with the
 * same messages and the same argument order (size, stride, storage_offset, storage_size).
 * Returns null when the view is valid, else the refusal message.
 *
 * checkView([4], [3], 1, 10)
 * // → "as_strided: index (3,) maps to storage element 10, but the storage has only 10 elements (valid: 0..9); size (4,), stride (3,), storage_offset 1"
 *
 * @param {number[]} size
 * @param {number[]} stride
 * @param {number} offset the storage offset, counted from the start of the storage
 * @param {number} storageSize storage elements
 * @returns {string | null}
 */
export function checkView(size, stride, offset, storageSize) {
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
