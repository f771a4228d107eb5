// Hover linking both ways:
//   logical cell -> its storage cell + every aliasing logical cell, and the address formula;
//   storage cell -> every shown logical cell (of every tensor over that storage) that reads it.
// The hovered item is written to the model's `hovered` trait so that it reaches Python.
import { addressFormula, logicalIndex, storageFormula } from "../core/scene.js";
import { hoveredValue } from "../paint/link.js";

/** @typedef {import("../core/scene.js").IndexedScene} IndexedScene */

/**
 * What a pointer target stands for, or null.  `views` maps nodes back to scene items.
 * @param {Element} node
 * @param {IndexedScene} indexed
 */
export function describeTarget(node, indexed) {
  const logical = node.closest?.("[data-key]");
  if (logical) {
    const tensor = indexed.tensors.get(logical.dataset.tensor);
    if (!tensor) return null;
    const slice = tensor.logical.slices[Number(logical.dataset.slice)];
    const r = Number(logical.dataset.r);
    const c = Number(logical.dataset.c);
    const cell = slice.addr[r][c];
    const index = logicalIndex(slice, r, c);
    return { kind: "logical", tensor, index, storage: tensor.storage, cell, key: logical.dataset.key };
  }
  const storageCell = node.closest?.("[data-cell]");
  if (storageCell) {
    return { kind: "storage", storage: storageCell.dataset.storage, cell: Number(storageCell.dataset.cell) };
  }
  return null;
}

// The synced `hovered` value for a target: the linker's, one rule for the widget and the playground.
export { hoveredValue };

function sameHovered(a, b) {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}

/**
 * Apply the highlight for `target`; returns {nodes, status} so the caller can clear it later.
 * `views.storageCells`: Map(storageId -> Map(cell -> node)); `views.logicalCells`: Map(key -> node).
 * @param {IndexedScene} indexed
 */
export function highlight(target, indexed, views) {
  const nodes = [];
  const mark = (node, cls) => {
    if (!node) return;
    node.classList.add(cls);
    nodes.push([node, cls]);
  };
  const readers = indexed.logicalByCell.get(`${target.storage}:${target.cell}`) ?? [];
  for (const reader of readers) mark(views.logicalCells.get(reader.key), "sw-hl");
  mark(views.storageCells.get(target.storage)?.get(target.cell), "sw-hl");
  let status;
  if (target.kind === "logical") {
    mark(views.logicalCells.get(target.key), "sw-hl-source");
    status = addressFormula(indexed, target.tensor, target.index, target.cell);
  } else {
    mark(views.storageCells.get(target.storage)?.get(target.cell), "sw-hl-source");
    status = storageFormula(indexed, target.storage, target.cell);
  }
  return { nodes, status };
}

export function clearHighlight(nodes) {
  for (const [node, cls] of nodes) node.classList.remove(cls);
}

/** Attach hover handling to `root`; `state()` returns the current {indexed, views}. */
export function attachHover(root, model, state, { onStatus, onTarget = () => {} }) {
  let lit = [];
  let current = null;
  const publish = (value) => {
    if (sameHovered(model.get("hovered"), value)) return;
    model.set("hovered", value);
    model.save_changes();
  };
  const onOver = (event) => {
    const { indexed, views } = state();
    if (!indexed) return;
    const target = describeTarget(event.target, indexed);
    if (!target) return;
    const value = hoveredValue(target);
    if (current && sameHovered(hoveredValue(current), value)) return;
    clearHighlight(lit);
    const { nodes, status } = highlight(target, indexed, views);
    lit = nodes;
    current = target;
    onStatus(status);
    root.classList.add("sw-hovering");
    onTarget(target);
    publish(value);
  };
  const onLeave = () => {
    clearHighlight(lit);
    lit = [];
    current = null;
    onStatus(null);
    root.classList.remove("sw-hovering");
    onTarget(null);
    publish(null);
  };
  root.addEventListener("mouseover", onOver);
  root.addEventListener("mouseleave", onLeave);
  return {
    reset() {
      lit = [];
      current = null;
    },
    detach() {
      root.removeEventListener("mouseover", onOver);
      root.removeEventListener("mouseleave", onLeave);
    },
  };
}
