// Lookups over a scene (the format: stridewidget/scene/build.py, typed in js/core/types.js) and the
// address formula.  Addresses come from Python (Layout.address); the one exception is `sliceAt`, a
// slice the reader picks that the bounded scene does not hold: its addresses are the address formula
// itself.

/** @typedef {import("./types.js").Scene} Scene */
/** @typedef {import("./types.js").Tensor} Tensor */
/** @typedef {import("./types.js").Storage} Storage */
/** @typedef {import("./types.js").Slice} Slice */

/**
 * A logical cell that a storage cell's reader list names.
 * @typedef {object} Reader
 * @property {Tensor} tensor
 * @property {number[]} index its logical index
 * @property {string} key "t0:slice:r:c", the data-key of its cell
 */

/**
 * The index maps of a scene (indexScene): storages by id (with each shown cell's position in
 * storage.cells), tensors by id, and the shown logical cells reading each storage cell ("s0:7").
 * @typedef {object} IndexedScene
 * @property {Map<string, {storage: Storage, position: Map<number, number>}>} storages
 * @property {Map<string, Tensor>} tensors
 * @property {Map<string, Reader[]>} logicalByCell
 */

/**
 * Logical index of cell (r, c) of a slice: lead + [rows[r]] + [cols[c]] where present.
 * @param {Slice} slice
 * @param {number} r
 * @param {number} c
 * @returns {number[]}
 */
export function logicalIndex(slice, r, c) {
  const index = [...slice.lead];
  if (slice.rows !== null) index.push(slice.rows[r]);
  if (slice.cols !== null) index.push(slice.cols[c]);
  return index;
}

/**
 * The 2-D slice of `tensor` at leading index `lead`, in the scene's slice format, for a slice the
 * scene left out: rows/cols as in the scene's listed slices, each address offset + Σ index·stride.
 * @param {Tensor} tensor
 * @param {number[]} lead
 * @returns {Slice}
 */
export function sliceAt(tensor, lead) {
  const { shape, strides, offset } = tensor.layout;
  const template = tensor.logical.slices.find((slice) => slice.kind === "slice");
  const leadAddress = lead.reduce((sum, i, d) => sum + i * strides[d], offset);
  const rowStride = template.rows === null ? 0 : strides[lead.length];
  const colStride = template.cols === null ? 0 : strides[shape.length - 1];
  const addr = (template.rows ?? [0]).map((r) =>
    (template.cols ?? [0]).map((c) => (r === null || c === null ? null : leadAddress + r * rowStride + c * colStride)),
  );
  const label = `[${[...lead.map(String), ...Array(shape.length - lead.length).fill(":")].join(", ")}]`;
  return { kind: "slice", lead: [...lead], label, rows: template.rows, cols: template.cols, addr, picked: true };
}

/**
 * The scene with slices the browser adds to a tensor's list appended to its slices; pure.  Each
 * Map value (tensorId -> …) is a leading index (the reader's picked slice, drawn below the grid)
 * or {picked, filled}: `filled` lists leading indices drawn in the panel grid's empty positions
 * (marked `filled`), `picked` the reader's slice or null.
 * @param {Scene} scene
 * @param {Map<string, number[] | {picked: number[] | null, filled: number[][]}>} picked
 * @returns {Scene}
 */
export function withPickedSlices(scene, picked) {
  if (!picked.size) return scene;
  const tensors = (scene.tensors ?? []).map((tensor) => {
    const entry = picked.get(tensor.id);
    if (!entry) return tensor;
    const { picked: lead, filled } = Array.isArray(entry) ? { picked: entry, filled: [] } : entry;
    const added = filled.map((at) => ({ ...sliceAt(tensor, at), picked: false, filled: true }));
    if (lead) added.push(sliceAt(tensor, lead));
    if (!added.length) return tensor;
    return { ...tensor, logical: { ...tensor.logical, slices: [...tensor.logical.slices, ...added] } };
  });
  return { ...scene, tensors };
}

/**
 * Index maps used by rendering and hover.
 * @param {Scene} scene
 * @returns {IndexedScene}
 */
export function indexScene(scene) {
  const storages = new Map();
  const tensors = new Map();
  const logicalByCell = new Map(); // "s0:7" -> [{tensor, index, key}]
  for (const storage of scene.storages ?? []) {
    const position = new Map();
    storage.cells.index.forEach((cell, i) => position.set(cell, i));
    storages.set(storage.id, { storage, position });
  }
  for (const tensor of scene.tensors ?? []) {
    tensors.set(tensor.id, tensor);
    tensor.logical.slices.forEach((slice, s) => {
      if (slice.kind !== "slice") return;
      slice.addr.forEach((row, r) =>
        row.forEach((address, c) => {
          if (address === null) return;
          const entry = { tensor, index: logicalIndex(slice, r, c), key: `${tensor.id}:${s}:${r}:${c}` };
          const cellKey = `${tensor.storage}:${address}`;
          if (!logicalByCell.has(cellKey)) logicalByCell.set(cellKey, []);
          logicalByCell.get(cellKey).push(entry);
        }),
      );
    });
  }
  return { storages, tensors, logicalByCell };
}

/**
 * Display text of storage cell `cell` (null if not shown or no values).
 * @param {IndexedScene} indexed
 * @param {string} storageId
 * @param {number} cell
 * @returns {string | null}
 */
export function cellText(indexed, storageId, cell) {
  const entry = indexed.storages.get(storageId);
  if (!entry) return null;
  const i = entry.position.get(cell);
  if (i === undefined || !entry.storage.cells.text) return null;
  return entry.storage.cells.text[i];
}

/**
 * What `tensor` reads at storage cell `cell` (`what`: "text" or "value"): a conj/neg view or a
 * quantized tensor reads other values than memory holds (its `reads`), else the stored value.
 * @param {IndexedScene} indexed
 * @param {Tensor} tensor
 * @param {number} cell
 * @param {"text" | "value"} [what]
 * @returns {string | number | null}
 */
export function readAt(indexed, tensor, cell, what = "text") {
  const reads = tensor.reads;
  if (!reads || !reads[what]) {
    if (what === "text") return cellText(indexed, tensor.storage, cell);
    const entry = indexed.storages.get(tensor.storage);
    const i = entry?.position.get(cell);
    return i === undefined || !entry.storage.cells.value ? null : entry.storage.cells.value[i];
  }
  const i = indexed.storages.get(tensor.storage)?.position.get(cell);
  return i === undefined ? null : reads[what][i];
}

const name = (tensor) => tensor.name;

/**
 * `x[1,2] → storage[off + 1·s0 + 2·s1] = storage[0 + 1·4 + 2·1] = storage[6] = 6.`
 * The symbolic part names the terms; the numeric part substitutes them.
 * @param {IndexedScene} indexed
 * @param {Tensor} tensor
 * @param {number[]} index
 * @param {number} address the storage cell `index` reads
 * @returns {string}
 */
export function addressFormula(indexed, tensor, index, address) {
  const { strides, offset } = tensor.layout;
  const symbolic = ["off", ...index.map((i, d) => `${i}·s${d}`)].join(" + ");
  const numeric = [String(offset), ...index.map((i, d) => `${i}·${strides[d]}`)].join(" + ");
  let text = `${name(tensor)}[${index.join(",")}] → storage[${symbolic}] = storage[${numeric}] = storage[${address}]`;
  const value = readAt(indexed, tensor, address);
  if (value !== null) text += ` = ${value}`;
  return text;
}

/**
 * `storage[6] = 6. ← x[1,2], xt[2,1]` (the shown logical cells that read it).
 * @param {IndexedScene} indexed
 * @param {string} storageId
 * @param {number} cell
 * @returns {string}
 */
export function storageFormula(indexed, storageId, cell) {
  let text = `storage[${cell}]`;
  const value = cellText(indexed, storageId, cell);
  if (value !== null) text += ` = ${value}`;
  const readers = indexed.logicalByCell.get(`${storageId}:${cell}`) ?? [];
  if (readers.length) {
    const shown = readers.slice(0, 8).map((r) => `${name(r.tensor)}[${r.index.join(",")}]`);
    if (readers.length > 8) shown.push(`… ${readers.length - 8} more`);
    text += ` ← ${shown.join(", ")}`;
  } else {
    text += " ← no shown element";
  }
  return text;
}
