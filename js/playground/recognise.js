// Recognises a view (size, stride, storage offset) as a standard torch op on the base `x`:
// "this is `x.t()`", "this is `x.unfold(1, 3, 1)`", "this is `x[:, 0:1].expand(4, 6)`".
// Each candidate op's layout is computed with torch's own stride rules; tests in
// recognise.test.js check these rules against layouts torch produced (js/playground/cases.json).

import { isContiguous, numel } from "../core/strides.js";

/** Do two layouts read the same storage element at every logical index? */
export function sameMapping(a, b) {
  if (a.size.length !== b.size.length) return false;
  if (a.size.some((n, d) => n !== b.size[d])) return false;
  if (numel(a.size) === 0) return true;
  if (a.offset !== b.offset) return false;
  return a.size.every((n, d) => n === 1 || a.stride[d] === b.stride[d]);
}

const args = (values) => values.join(", ");
/** How many leading indices are tried for `x[i]` and `x[:, j:j+1]` sources. */
const MAX_SOURCE_INDEX = 64;
/** Steps tried for `unfold`. */
const MAX_STEP = 64;

function layout(expr, size, stride, offset) {
  return { expr, size, stride, offset };
}

/** Views of `x` that the ops below start from: x, x.flatten(), x[i], x[:, j], x[:, j:j+1]. */
function sources(base) {
  const x = layout("x", base.shape, base.strides, base.offset);
  const list = [x];
  if (base.shape.length >= 1) {
    for (let i = 0; i < Math.min(base.shape[0], MAX_SOURCE_INDEX); i += 1) {
      list.push(
        layout(`x[${i}]`, base.shape.slice(1), base.strides.slice(1), base.offset + i * base.strides[0]),
      );
    }
  }
  if (base.shape.length === 2) {
    for (let j = 0; j < Math.min(base.shape[1], MAX_SOURCE_INDEX); j += 1) {
      list.push(layout(`x[:, ${j}]`, [base.shape[0]], [base.strides[0]], base.offset + j * base.strides[1]));
    }
    for (let j = 0; j < Math.min(base.shape[1], MAX_SOURCE_INDEX); j += 1) {
      list.push(
        layout(`x[:, ${j}:${j + 1}]`, [base.shape[0], 1], base.strides, base.offset + j * base.strides[1]),
      );
    }
  }
  // last: an index or slice of x itself reads better than one of its flattened storage
  if (base.shape.length > 1 && isContiguous(base.shape, base.strides)) {
    list.push(layout("x.flatten()", [numel(base.shape)], [1], base.offset));
  }
  return list;
}

function permutations(items) {
  if (items.length <= 1) return [items];
  return items.flatMap((item, k) =>
    permutations([...items.slice(0, k), ...items.slice(k + 1)]).map((rest) => [item, ...rest]),
  );
}

function permuted(source, order, expr) {
  return layout(
    expr,
    order.map((d) => source.size[d]),
    order.map((d) => source.stride[d]),
    source.offset,
  );
}

/** torch's Tensor.expand(size): new leading dims and size-1 dims get stride 0. */
export function expandLayout(source, size) {
  const lead = size.length - source.size.length;
  if (lead < 0) return null;
  const stride = [];
  for (let d = 0; d < size.length; d += 1) {
    if (d < lead) {
      stride.push(0);
      continue;
    }
    const have = source.size[d - lead];
    if (have === size[d]) stride.push(source.stride[d - lead]);
    else if (have === 1) stride.push(0);
    else return null;
  }
  return layout(`${source.expr}.expand(${args(size)})`, size, stride, source.offset);
}

/** torch's Tensor.diagonal(offset) of a 2-d source: one stride, the sum of both. */
export function diagonalLayout(source, k) {
  const [H, W] = source.size;
  const [s0, s1] = source.stride;
  const length = Math.max(0, k >= 0 ? Math.min(H, W - k) : Math.min(H + k, W));
  const start = k >= 0 ? source.offset + k * s1 : source.offset - k * s0;
  return layout(`${source.expr}.diagonal(${k === 0 ? "" : k})`, [length], [s0 + s1], start);
}

/** torch's Tensor.unfold(dim, size, step). */
export function unfoldLayout(source, dim, size, step) {
  const n = source.size[dim];
  if (size > n || step < 1) return null;
  const shape = [...source.size];
  const stride = [...source.stride];
  shape[dim] = Math.floor((n - size) / step) + 1;
  stride[dim] = source.stride[dim] * step;
  return layout(
    `${source.expr}.unfold(${dim}, ${size}, ${step})`,
    [...shape, size],
    [...stride, source.stride[dim]],
    source.offset,
  );
}

/** torch's Tensor.flatten(start, end) when it is a view (the merged dims evenly spaced). */
export function flattenLayout(source, start, end) {
  const kept = [];
  for (let d = start; d <= end; d += 1) if (source.size[d] !== 1) kept.push(d);
  for (let k = 0; k + 1 < kept.length; k += 1) {
    const outer = kept[k];
    const inner = kept[k + 1];
    if (source.stride[outer] !== source.stride[inner] * source.size[inner]) return null;
  }
  const merged = source.size.slice(start, end + 1).reduce((a, b) => a * b, 1);
  const mergedStride = kept.length ? source.stride[kept[kept.length - 1]] : 1;
  const all = start === 0 && end === source.size.length - 1;
  return layout(
    all ? `${source.expr}.flatten()` : `${source.expr}.flatten(${start}, ${end})`,
    [...source.size.slice(0, start), merged, ...source.size.slice(end + 1)],
    [...source.stride.slice(0, start), mergedStride, ...source.stride.slice(end + 1)],
    source.offset,
  );
}

/** Work bound of the search for slice starts (the views drawn here are small). */
const MAX_SLICE_WORK = 20_000;

/** Python's text of one basic slice `a:b:k` over a dim of length n, shortest form. */
function sliceText(start, count, step, n) {
  const last = start + (count - 1) * step;
  const open = last + 1 === n || (step > 1 && last + step >= n);
  return `${start || ""}:${open ? "" : last + 1}${step > 1 ? `:${step}` : ""}`;
}

/**
 * The basic slice `source[a:b:k, c:d:l, ...]` that reads `view`, if there is one: each dim's step
 * is the view's stride over the source's, and the starts are found by a bounded search for
 * sum(start_d * stride_d) == view.offset - source.offset.
 */
function sliceOf(source, view) {
  const nd = source.size.length;
  if (view.size.length !== nd || nd === 0 || numel(view.size) === 0) return null;
  const steps = [];
  for (let d = 0; d < nd; d += 1) {
    const s = source.stride[d];
    if (s <= 0) return null;
    const step = view.size[d] === 1 ? 1 : view.stride[d] / s;
    if (!Number.isInteger(step) || step < 1) return null;
    steps.push(step);
  }
  const starts = [];
  let work = 0;
  const search = (d, remainder) => {
    if (d === nd) return remainder === 0;
    const s = source.stride[d];
    const highest = source.size[d] - 1 - (view.size[d] - 1) * steps[d];
    for (let start = 0; start <= highest && start * s <= remainder; start += 1) {
      work += 1;
      if (work > MAX_SLICE_WORK) return false;
      starts[d] = start;
      if (search(d + 1, remainder - start * s)) return true;
    }
    return false;
  };
  if (!search(0, view.offset - source.offset)) return null;
  const parts = starts.map((start, d) => sliceText(start, view.size[d], steps[d], source.size[d]));
  while (parts.length && parts[parts.length - 1] === ":") parts.pop();
  if (parts.length === 0) return null; // the whole source: identity, said elsewhere
  return layout(`${source.expr}[${parts.join(", ")}]`, view.size, view.stride, view.offset);
}

/** Candidate layouts from one source that could equal `view` (cheap: driven by the view). */
function candidates(source, view, isBase) {
  const out = [];
  const nd = source.size.length;
  out.push(source);
  if (nd === 2) out.push(permuted(source, [1, 0], `${source.expr}.t()`));
  if (nd > 2) {
    for (let i = 0; i < nd; i += 1) {
      for (let j = i + 1; j < nd; j += 1) {
        const order = [...Array(nd).keys()];
        [order[i], order[j]] = [order[j], order[i]];
        out.push(permuted(source, order, `${source.expr}.transpose(${i}, ${j})`));
      }
    }
  }
  if (nd >= 3 && nd <= 4) {
    for (const order of permutations([...Array(nd).keys()])) {
      out.push(permuted(source, order, `${source.expr}.permute(${args(order)})`));
    }
  }
  if (nd === 2 && view.size.length === 1) {
    const [H, W] = source.size;
    for (let k = -(H - 1); k <= W - 1; k += 1) {
      out.push(diagonalLayout(source, k));
    }
  }
  const expanded = expandLayout(source, view.size);
  if (expanded && !sameMapping(expanded, source)) out.push(expanded);
  if (view.size.length === nd + 1) {
    const window = view.size[nd];
    for (let dim = 0; dim < nd; dim += 1) {
      for (let step = 1; step <= Math.min(MAX_STEP, source.size[dim]); step += 1) {
        const unfolded = unfoldLayout(source, dim, window, step);
        if (unfolded) out.push(unfolded);
      }
    }
  }
  if (nd === 2 && view.size.length === 4 && view.size[2] > 0 && view.size[3] > 0) {
    // stridewidget's own names first where they apply (they need exact tiling), then torch's
    const [H, W] = source.size;
    const [bh, bw] = [view.size[2], view.size[3]];
    const rows = unfoldLayout(source, 0, bh, bh);
    const blocks = rows && unfoldLayout(rows, 1, bw, bw);
    if (blocks && isBase && H % bh === 0 && W % bw === 0) {
      out.push({ ...blocks, expr: `sw.tricks.blocks(x, ${bh}, ${bw})` });
    }
    if (blocks) out.push(blocks);
    const pairs = unfoldLayout(source, 0, 2, 2);
    const grid = pairs && unfoldLayout(pairs, 1, 2, 2);
    const board = grid && permuted(grid, [2, 3, 0, 1], `${grid.expr}.permute(2, 3, 0, 1)`);
    if (board && isBase && H % 2 === 0 && W % 2 === 0) out.push({ ...board, expr: "sw.tricks.checkerboard(x)" });
    if (board) out.push(board);
  }
  if (isBase) {
    for (let start = 0; start < nd; start += 1) {
      for (let end = start + 1; end < nd; end += 1) {
        const flat = flattenLayout(source, start, end);
        if (flat) out.push(flat);
      }
    }
    if (
      isContiguous(source.size, source.stride) &&
      isContiguous(view.size, view.stride) &&
      numel(view.size) === numel(source.size) &&
      view.offset === source.offset
    ) {
      out.push(layout(`${source.expr}.view(${args(view.size)})`, view.size, view.stride, view.offset));
    }
  }
  const sliced = sliceOf(source, view);
  if (sliced) out.push(sliced);
  return out;
}

/**
 * Standard-op expressions on `x` (the playground's base) that give exactly `view`, best first.
 * `base`: {shape, strides, offset}; `view`: {size, stride, offset}.
 */
export function recognise(base, view) {
  const found = [];
  const seen = new Set();
  sources(base).forEach((source, k) => {
    for (const candidate of candidates(source, view, k === 0)) {
      if (!seen.has(candidate.expr) && sameMapping(candidate, view)) {
        seen.add(candidate.expr);
        found.push(candidate.expr);
      }
    }
  });
  return found;
}

/** Words for the layout itself: contiguous, transposed (F-contiguous), broadcast... */
export function layoutWords(view, facts) {
  const words = [];
  const big = view.size.filter((n) => n > 1).length;
  if (facts.isContiguous) words.push("contiguous");
  else if (facts.isFContiguous && big >= 2) words.push("transposed (column-major / F-contiguous)");
  else if (facts.isDense) words.push("dense but permuted");
  if (view.size.some((n, d) => n > 1 && view.stride[d] === 0)) words.push("broadcast (a stride is 0)");
  if (facts.hasOverlap) words.push("overlapping");
  else if (!facts.isDense && facts.hasOverlap === false) words.push("gapped");
  return words;
}
