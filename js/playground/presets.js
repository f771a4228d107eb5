// Presets: the five as_strided tricks done right, and the seed article's versions of them.
// Every preset is computed from the base's own layout (shape, strides, offset), as
// stridewidget.tricks does, so it stays right on sliced and transposed bases.  The seed versions
// copy the article's formulas (hard-coded strides and all); tests/make_playground_cases.py runs
// both through torch and sw.as_strided, and presets.test.js checks these settings against that.

import { tupleText } from "../core/strides.js";

function preset(id, label, kind, note, settings, why = null) {
  return { id, label, kind, note, settings, unavailable: settings ? null : why };
}

const setting = (size, stride, offset) => ({ size, stride, offset });

/**
 * Presets for a base layout {shape, strides, offset}.  `settings` is null (with `unavailable`
 * saying why) when a trick needs a shape the base does not have.
 */
export function presets(base) {
  // Long on purpose: a table, one entry per preset, each with its note and why (no logic to split).
  const { shape, strides, offset } = base;
  const nd = shape.length;
  const two = nd === 2;
  const [H, W] = two ? shape : [0, 0];
  const [s0, s1] = two ? strides : [0, 0];
  const list = [];
  const needs2d = "needs a 2-d base x";

  list.push(
    preset("base", "x itself", "start", "The base tensor's own layout.", setting([...shape], [...strides], offset)),
  );

  // 0. the seed's opening example: a column as a strided view (stride as a memory map)
  if (two && W >= 2) {
    list.push(
      preset(
        "column",
        "column 1",
        "trick",
        `x[:, 1]: one element per row, so the stride is the row stride ${s0}, starting at x[0, 1] = storage[${offset + s1}].`,
        setting([H], [s0], offset + s1),
      ),
      preset(
        "seed-column",
        "seed: column 1",
        "seed",
        `The seed's as_strided(x, size=(${H},), stride=(${W},)) for "the odd column" x[:, 1] forgets storage_offset=1: it starts at x[0, 0] and reads column 0.`,
        setting([H], [W], offset),
      ),
    );
  }

  // 1. broadcast
  if (two) {
    list.push(
      preset(
        "broadcast",
        "broadcast",
        "trick",
        `Column 0 of x repeated across ${W} columns: stride 0 along dim 1 reads one element again and again (x[:, 0:1].expand(${H}, ${W}), no copy).`,
        setting([H, W], [s0, 0], offset),
      ),
      preset(
        "seed-broadcast",
        "seed: broadcast",
        "seed",
        `The seed writes stride (1, 0), right only for a contiguous (n, 1) tensor. On the column x[:, 0:1], whose stride is (${s0}, ${s1}), it reads storage ${offset}, ${offset + 1}, ${offset + 2}, … instead of the column. (The seed's other claim, that expand copies, is also wrong: expand is this same stride-0 view.)`,
        setting([H, W], [1, 0], offset),
      ),
    );
  } else if (nd === 1) {
    list.push(
      preset(
        "broadcast",
        "broadcast",
        "trick",
        `x repeated as 3 rows: the new leading dim has stride 0 (x.expand(3, ${shape[0]})).`,
        setting([3, shape[0]], [0, strides[0]], offset),
      ),
    );
  } else {
    list.push(preset("broadcast", "broadcast", "trick", "", null, "needs a 1-d or 2-d base x"));
  }

  // 2. sliding window (window 3, step 1, along the last dim)
  const window = 3;
  if (nd >= 1 && shape[nd - 1] >= window) {
    const last = nd - 1;
    const size = [...shape];
    const stride = [...strides];
    size[last] = shape[last] - window + 1;
    size.push(window);
    stride.push(strides[last]);
    list.push(
      preset(
        "sliding",
        "sliding window",
        "trick",
        `Windows of ${window} along dim ${last}, step 1: x.unfold(${last}, ${window}, 1). Neighbouring windows share elements (overlap by design).`,
        setting(size, stride, offset),
      ),
    );
    const length = shape[0];
    list.push(
      preset(
        "seed-sliding",
        "seed: sliding window",
        "seed",
        `The seed's sliding_window_view(x, ${window}) uses size (x.size(0) - ${window} + 1, ${window}) and stride (1, 1): right only for a 1-d contiguous x. ${nd === 1 && strides[0] === 1 ? "Here x is 1-d and contiguous, so it is right." : `Here x has shape ${tupleText(shape)} and strides ${tupleText(strides)}, so it reads the wrong elements.`}`,
        setting([length - window + 1, window], [1, 1], offset),
      ),
    );
  } else {
    list.push(preset("sliding", "sliding window", "trick", "", null, `needs a last dim of at least ${window}`));
  }

  // 3. transpose
  if (two) {
    list.push(
      preset("transpose", "transpose", "trick", "x.t(): swap the sizes and the strides; no data moves.", setting([W, H], [s1, s0], offset)),
      preset(
        "seed-transpose",
        "seed: transpose",
        "seed",
        `The seed hard-codes stride (1, x.size(1)) = (1, ${W}): right only when x is contiguous (here x's strides are ${tupleText(strides)}).`,
        setting([W, H], [1, W], offset),
      ),
    );
  } else {
    list.push(preset("transpose", "transpose", "trick", "", null, needs2d));
  }

  // 4. merged dims (flatten dims 0 and 1)
  if (nd >= 2) {
    const mergedSize = [shape[0] * shape[1], ...shape.slice(2)];
    const mergeable = shape[1] === 1 || shape[0] === 1 || strides[0] === strides[1] * shape[1];
    const innerStride = shape[1] === 1 ? strides[0] : strides[1];
    list.push(
      preset(
        "merge",
        "merge dims",
        "trick",
        mergeable
          ? `Dims 0 and 1 merged into one of ${shape[0] * shape[1]}: the merged dim steps by the inner stride ${innerStride} (x.flatten(0, 1)).`
          : "",
        mergeable ? setting(mergedSize, [innerStride, ...strides.slice(2)], offset) : null,
        "dims 0 and 1 of x are not evenly spaced in storage: merging them needs a copy",
      ),
      preset(
        "seed-merge",
        "seed: merge dims",
        "seed",
        "The seed's batch merge gives the merged dim the OUTER stride and shifts the others (stride(3*224*224, 224*224, 224) for a (32, 3, 224, 224) batch): it runs past the end of the storage.",
        setting(mergedSize, strides.slice(0, mergedSize.length), offset),
      ),
    );
  } else {
    list.push(preset("merge", "merge dims", "trick", "", null, "needs a base with at least 2 dims"));
  }

  // 5. checkerboard and blocks
  if (two && H % 2 === 0 && W % 2 === 0) {
    list.push(
      preset(
        "checkerboard",
        "checkerboard",
        "trick",
        "result[a, b] == x[a::2, b::2]: the phase dims step one element, the sub-grid dims two (sw.tricks.checkerboard(x)).",
        setting([2, 2, H / 2, W / 2], [s0, s1, 2 * s0, 2 * s1], offset),
      ),
      preset(
        "seed-checkerboard",
        "seed: checkerboard",
        "seed",
        `The seed's size (2, H//2, W//2), stride (2*W, 2, 2) = (${2 * W}, 2, 2): two dims share stride 2, so it overlaps itself and is no checkerboard.`,
        setting([2, H / 2, W / 2], [2 * W, 2, 2], offset),
      ),
      preset(
        "blocks",
        "2×2 blocks",
        "trick",
        "Non-overlapping 2×2 tiles: result[i, j] is the block at block-row i, block-column j (sw.tricks.blocks(x, 2, 2)).",
        setting([H / 2, W / 2, 2, 2], [2 * s0, 2 * s1, s0, s1], offset),
      ),
    );
  } else {
    list.push(preset("checkerboard", "checkerboard", "trick", "", null, "needs a 2-d base x with even H and W"));
  }
  return list;
}
