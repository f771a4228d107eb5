// The linker: hover linking over a painted display list (js/paint/paint.js), from its keys alone.
//
//   a logical cell (g.sws-lcell: data-tensor, data-addr, data-index) lights its storage cell and
//     every shown logical cell that reads the same storage cell, and draws its index walk: the
//     storage cells offset, offset + i0·s0, … it visits (data-hop on each);
//   a storage cell (g.sws-scell: data-storage, data-cell) lights every logical cell that reads it.
//   a stride arrow (g.sws-arrow: data-tensor, data-dim) or its label (g.sws-arrow-label, the same
//     keys) lights the arrow and its label and says the arrow's hover line.
//   a keyed group (g[data-key], a DTensor's picture: a global element, a rank, a rank's storage
//     cell) lights every group whose key its data-links names and every group whose data-links
//     name its key (Python writes each link once, on one side): one element to the storage cells
//     of all the ranks holding it, one rank to all its elements.
// The status line says the hovered cell's hover line (its data-hover, written by Python).  The
// hovered item goes to `onHovered` as plain JSON (the widget's `hovered` trait).

/** The storage cells a logical index visits: [offset, offset + i0·s0, …]; null without a basis. */
export function walkCells(walk, index) {
  if (!walk || index.length !== walk.strides.length) return null;
  const cells = [walk.offset];
  let at = walk.offset;
  index.forEach((i, d) => {
    if (i === 0 || walk.strides[d] === 0) return;
    at += i * walk.strides[d];
    cells.push(at);
  });
  return cells;
}

/** A number with its digits grouped as the picture groups them (Python's f"{n:,}"): 1,234,567. */
const grouped = (n) => n.toLocaleString("en-US");

/** "storage[0] → +2·4 → +1·2 = storage[10]": the walk in words, digits grouped. */
export function walkText(walk, index) {
  const cells = walkCells(walk, index);
  if (!cells) return null;
  const steps = index
    .map((i, d) => [i, walk.strides[d]])
    .filter(([i, s]) => i !== 0 && s !== 0)
    .map(([i, s]) => `${s < 0 ? "−" : "+"}${grouped(i)}·${grouped(Math.abs(s))}`);
  return [`storage[${grouped(walk.offset)}]`, ...steps].join(" → ") + ` = storage[${grouped(cells[cells.length - 1])}]`;
}

const parseIndex = (text) => (text ? text.split(",").map(Number) : []);

/** An index of the painted cells by key, for the linker. */
export function indexCells(svg, list) {
  const tensors = new Map(list.tensors.map((t) => [t.id, t]));
  const storageCells = new Map(); // "s0:12" -> g
  const readers = new Map(); // "s0:12" -> [g, …] logical cells that read storage cell 12 of s0
  for (const g of svg.querySelectorAll("g.sws-scell")) storageCells.set(`${g.dataset.storage}:${g.dataset.cell}`, g);
  for (const g of svg.querySelectorAll("g.sws-lcell")) {
    const tensor = tensors.get(g.dataset.tensor);
    if (!tensor || g.dataset.addr === undefined) continue;
    const key = `${tensor.storage}:${g.dataset.addr}`;
    if (!readers.has(key)) readers.set(key, []);
    readers.get(key).push(g);
  }
  const keyed = new Map(); // "r3" -> [g, …] groups with that data-key
  const linking = new Map(); // "r3" -> [g, …] groups whose data-links name it
  const add = (map, key, g) => {
    if (!map.has(key)) map.set(key, []);
    map.get(key).push(g);
  };
  for (const g of svg.querySelectorAll("g[data-key]")) {
    add(keyed, g.dataset.key, g);
    for (const key of linksOf(g)) add(linking, key, g);
  }
  const arrows = new Map(); // "t0:1" -> [g, …] an arrow's group and its label's
  for (const g of svg.querySelectorAll("g.sws-arrow, g.sws-arrow-label")) add(arrows, arrowKey(g), g);
  return { tensors, storageCells, readers, keyed, linking, arrows };
}

const arrowKey = (g) => `${g.dataset.tensor}:${g.dataset.dim}`;

const linksOf = (g) => (g.dataset.links ? g.dataset.links.split(" ").filter(Boolean) : []);

/** What a pointer target stands for, as the `hovered` trait says it; null off the cells. */
export function describe(node, cells) {
  const keyed = node.closest?.("g[data-key]");
  if (keyed) return { kind: "key", node: keyed, key: keyed.dataset.key };
  const logical = node.closest?.("g.sws-lcell");
  if (logical) {
    const tensor = cells.tensors.get(logical.dataset.tensor);
    if (!tensor) return null;
    const cell = logical.dataset.addr === undefined ? null : Number(logical.dataset.addr);
    return { kind: "logical", node: logical, tensor, index: parseIndex(logical.dataset.index), storage: tensor.storage, cell };
  }
  const storage = node.closest?.("g.sws-scell");
  if (storage) return { kind: "storage", node: storage, storage: storage.dataset.storage, cell: Number(storage.dataset.cell) };
  const arrow = node.closest?.("g.sws-arrow, g.sws-arrow-label");
  if (arrow && arrow.dataset.tensor !== undefined) {
    const group = (cells.arrows.get(arrowKey(arrow)) ?? []).find((g) => g.classList.contains("sws-arrow"));
    if (group) return { kind: "arrow", node: group, tensor: arrow.dataset.tensor, dim: arrow.dataset.dim };
  }
  return null;
}

export function hoveredValue(target) {
  if (!target) return null;
  if (target.kind === "key") return { key: target.key };
  if (target.kind === "arrow") return { tensor: target.tensor, dim: target.dim };
  if (target.kind === "logical") {
    return { tensor: target.tensor.id, name: target.tensor.name, index: target.index, storage: target.storage, cell: target.cell };
  }
  return { storage: target.storage, cell: target.cell };
}

/** Light `target`'s linked cells; returns the [node, class] pairs to clear and the status text. */
export function highlight(target, cells) {
  const lit = [];
  const mark = (node, cls) => {
    if (!node) return;
    node.classList.add(cls);
    lit.push([node, cls]);
  };
  if (target.kind === "key") {
    for (const key of linksOf(target.node)) for (const node of cells.keyed.get(key) ?? []) mark(node, "sw-hl");
    for (const node of cells.linking.get(target.key) ?? []) mark(node, "sw-hl");
    mark(target.node, "sw-hl");
    mark(target.node, "sw-hl-source");
    return { lit, status: target.node.dataset.hover ?? "" };
  }
  if (target.kind === "arrow") {
    for (const node of cells.arrows.get(arrowKey(target.node)) ?? []) mark(node, "sw-hl");
    return { lit, status: target.node.dataset.hover ?? "" };
  }
  const key = `${target.storage}:${target.cell}`;
  for (const reader of cells.readers.get(key) ?? []) mark(reader, "sw-hl");
  mark(cells.storageCells.get(key), "sw-hl");
  mark(target.node, "sw-hl-source");
  let status = target.node.dataset.hover ?? "";
  if (target.kind === "logical") {
    const hops = walkCells(target.tensor.walk, target.index) ?? [];
    hops.forEach((cell, hop) => {
      const node = cells.storageCells.get(`${target.storage}:${cell}`);
      if (!node) return;
      mark(node, "sw-walk");
      node.dataset.hop = String(hop);
      lit.push([node, null]);
    });
    const words = walkText(target.tensor.walk, target.index);
    if (words) status += `\nwalk: ${words}`;
  }
  return { lit, status };
}

export function clear(lit) {
  for (const [node, cls] of lit) {
    if (cls) node.classList.remove(cls);
    else delete node.dataset.hop;
  }
}

/**
 * Link the painted `svg` of `list` inside `root`: hover lights linked cells and reports.
 * Returns {detach}.  `onStatus(text|null)`, `onHovered(value|null)`.
 */
export function linkPicture(root, svg, list, { onStatus = () => {}, onHovered = () => {} } = {}) {
  const cells = indexCells(svg, list);
  let lit = [];
  let current = null;
  const onOver = (event) => {
    const target = describe(event.target, cells);
    if (!target) return;
    const value = hoveredValue(target);
    if (current && JSON.stringify(current) === JSON.stringify(value)) return;
    clear(lit);
    const shown = highlight(target, cells);
    lit = shown.lit;
    current = value;
    // over cells the others dim; over an arrow the cells stay as they are
    root.classList.toggle("sw-hovering", target.kind !== "arrow");
    onStatus(shown.status);
    onHovered(value);
  };
  const onLeave = () => {
    clear(lit);
    lit = [];
    current = null;
    root.classList.remove("sw-hovering");
    onStatus(null);
    onHovered(null);
  };
  svg.addEventListener("mouseover", onOver);
  svg.addEventListener("mouseleave", onLeave);
  return {
    /** Light the cell a `hovered` value names (after a new picture replaced the one hovered). */
    restore(value) {
      if (!value) return;
      const same = (g, pairs) => pairs.every(([key, want]) => g.dataset[key] === String(want));
      const node = value.key !== undefined
        ? [...svg.querySelectorAll("g[data-key]")].find((g) => g.dataset.key === String(value.key))
        : value.dim !== undefined
        ? [...svg.querySelectorAll("g.sws-arrow")].find((g) => same(g, [["tensor", value.tensor], ["dim", value.dim]]))
        : value.tensor !== undefined
        ? [...svg.querySelectorAll("g.sws-lcell")].find((g) => same(g, [["tensor", value.tensor], ["index", (value.index ?? []).join(",")]]))
        : [...svg.querySelectorAll("g.sws-scell")].find((g) => same(g, [["storage", value.storage], ["cell", value.cell]]));
      if (node) onOver({ target: node });
    },
    detach() {
      svg.removeEventListener("mouseover", onOver);
      svg.removeEventListener("mouseleave", onLeave);
    },
  };
}
