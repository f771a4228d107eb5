// stridewidget front end (anywidget ESM): storage grid(s), logical grid(s), stride arrows, facts,
// hover linking both ways.  Bundled by esbuild into stridewidget/notebook/static/widget.js (npm run build).
//
// Stable DOM for tests and for the static export (browser tests select on these):
//   .sw-root                      one per rendered widget
//   .sw-status                    hover formula line
//   .sw-storage[data-storage=s0]  one per storage; its cells: rect.sw-scell[data-storage][data-cell]
//   .sw-tensor[data-tensor=t0]    one card per tensor; its cells:
//                                 rect.sw-lcell[data-tensor][data-slice][data-r][data-c][data-addr]
//   .sw-hl / .sw-hl-source        highlighted cells (source = the hovered one)
//   .sw-untouched, .sw-count      cells no shown tensor reads; "×n" read counts
//   .sw-arrow-label               "d0,d1 +1" stride legend; .sw-arrow[data-dim] arrows on the strip
//   .sw-walk[data-hop]            the index walk of the hovered logical cell
//   .sw-mode-button[data-mode]    cells show both / values / storage index
//   .sw-panel, .sw-slice-select   panels of 3-D+ tensors; the outer-slice selector (5-D+: every index)
//   .sw-panel-filled              a panel the scene did not list, drawn from the storage window
//   .sw-left-out                  the scene's words for the slices it left out ("⋯ 40 slices not shown: x[…]")
//   .sw-slice-index, .sw-picked   "show any slice" inputs (when the scene left slices out); its panel
//   input.sw-wrap                 storage row width (sets the `wrap` trait; Enter applies)
import "./widget.css";
import { htmlEl } from "./dom.js";
import { followHostScheme } from "./theme.js";
import { drawFacts } from "./facts.js";
import { attachHover } from "./hover.js";
import { drawLogical, panelGrid, swatch, tensorHeader } from "./logical.js";
import { indexScene, withPickedSlices } from "../core/scene.js";
import { drawArrows, drawWalk, walkText } from "./arrows.js";
import { CELL_MODES, cellsCaption, drawStorage, fittedWrap, storageCellPlan } from "./storage.js";

let instances = 0;

/** Px a strip needs beside its cells (row labels, the channel and lanes of cross-row arrows). */
const STRIP_MARGIN = 90;
/** Px a card needs beside its grid (border, padding, row indices, the panel group's frame). */
const CARD_MARGIN = 44;
/** A width change smaller than this does not re-lay the picture out. */
const RELAYOUT_PX = 24;
/** Without a laid-out page (a detached element, a test DOM) the picture assumes this width. */
const DEFAULT_ROOM = 1200;

/** The px the picture may use: the root's content width. */
function availableWidth(root) {
  const width = root.clientWidth;
  if (!width) return DEFAULT_ROOM;
  const style = getComputedStyle(root);
  return Math.max(240, width - (parseFloat(style.paddingLeft) || 0) - (parseFloat(style.paddingRight) || 0));
}

const EMPTY_SCENE = { storages: [], tensors: [] };

/**
 * The slices the browser adds to each tensor's list: the reader's picked one, and for 5-D and more
 * the empty positions of the shown panel grid (the selected outer index may be one the scene did
 * not list): tensorId -> {picked, filled} for withPickedSlices.
 */
function addedSlices(scene, selected, picked) {
  const added = new Map();
  for (const tensor of scene.tensors ?? []) {
    const outer = (tensor.logical.panels?.select_dims ?? []).length > 0 && tensor.logical.slices.length > 0;
    const filled = outer ? panelGrid(tensor.logical, selected.get(tensor.id) ?? null).missing : [];
    const lead = picked.get(tensor.id) ?? null;
    if (filled.length || lead) added.set(tensor.id, { picked: lead, filled });
  }
  return added;
}

const MODE_LABELS = { both: "both", values: "values", index: "storage index" };

/** The segmented control "cells show: both | values | storage index". */
function modeControl(mode, onChange) {
  const group = htmlEl("div", "sw-mode");
  group.setAttribute("role", "radiogroup");
  group.setAttribute("aria-label", "what the cells show");
  group.appendChild(htmlEl("span", "sw-mode-title", "cells show "));
  for (const option of CELL_MODES) {
    const button = htmlEl("button", option === mode ? "sw-mode-button sw-mode-on" : "sw-mode-button", MODE_LABELS[option]);
    button.type = "button";
    button.dataset.mode = option;
    button.setAttribute("role", "radio");
    button.setAttribute("aria-checked", String(option === mode));
    button.addEventListener("click", () => onChange(option));
    group.appendChild(button);
  }
  return group;
}

function render({ model, el }) {
  // Long on purpose: one closure owns the view state (cell mode, chosen and picked slices, active card, walk) that draw and the handlers share.
  instances += 1;
  const uid = `sw${instances}`; // keeps SVG pattern/marker ids unique per widget on a page
  const root = htmlEl("div", "sw-root");
  const stopFollowingScheme = followHostScheme(root, el);
  el.appendChild(root);

  // view state that stays in the browser (no trait): what cells show, the chosen outer slices
  let mode = "both";
  const selectedSlices = new Map();
  const pickedSlices = new Map(); // tensor id -> leading index of a slice the scene left out
  let current = { indexed: null, views: null, scene: EMPTY_SCENE, active: new Map() };
  const status = htmlEl("div", "sw-status");
  status.setAttribute("aria-live", "polite");
  const idleStatus = "hover a cell: logical → storage address, storage → the elements that read it";
  const setStatus = (text) => {
    status.textContent = text ?? idleStatus;
  };

  const redrawArrows = (storageId) => {
    const view = current.views?.storages.get(storageId);
    if (!view) return;
    const tensor = current.indexed.tensors.get(current.active.get(storageId));
    drawArrows(view.arrows, tensor, view.layout, { legend: view.arrowLegend });
  };
  const setActive = (tensorId) => {
    const tensor = current.indexed?.tensors.get(tensorId);
    if (!tensor || current.active.get(tensor.storage) === tensorId) return;
    current.active.set(tensor.storage, tensorId);
    redrawArrows(tensor.storage);
    for (const card of root.querySelectorAll(`.sw-tensor[data-storage="${tensor.storage}"]`)) {
      const on = card.dataset.tensor === tensorId;
      card.classList.toggle("sw-active", on);
      const hint = card.querySelector(".sw-click-hint");
      if (hint) hint.textContent = on ? "its strides are drawn" : "click: show its strides";
    }
  };
  // hovering a logical cell turns the arrows into its walk to the cell it reads (the active card,
  // chosen by a click, keeps its arrows: a hover changes no layout, so nothing moves under the pointer)
  let walking = null;
  const onTarget = (target) => {
    if (walking) redrawArrows(walking);
    walking = null;
    if (target?.kind !== "logical") return;
    const view = current.views?.storages.get(target.storage);
    if (!view) return;
    drawWalk(view.arrows, target.tensor, target.index, view.layout);
    status.append("\n", htmlEl("span", "sw-walk-text", `walk: ${walkText(target.tensor, target.index)}`));
    walking = target.storage;
  };

  const draw = () => {
    // Long on purpose: redraws the whole widget (toolbar, then per storage its strip, legend and cards) and rebuilds the views hover reads.
    const scene = withPickedSlices(model.get("scene") ?? EMPTY_SCENE, addedSlices(model.get("scene") ?? EMPTY_SCENE, selectedSlices, pickedSlices));
    const indexed = indexScene(scene);
    const wrapOverride = model.get("wrap");
    const views = { storages: new Map(), storageCells: new Map(), logicalCells: new Map() };
    const active = new Map();
    root.replaceChildren();

    const toolbar = htmlEl("div", "sw-toolbar");
    const label = htmlEl("label", "sw-wrap-label", "storage row width ");
    const input = htmlEl("input", "sw-wrap");
    input.type = "number";
    input.min = "1";
    input.max = "256";
    input.value = wrapOverride ?? "";
    input.placeholder = "auto";
    input.setAttribute("aria-label", "storage cells per row (empty: automatic)");
    const applyWrap = () => {
      const n = Number.parseInt(input.value, 10);
      const wrap = Number.isFinite(n) && n > 0 ? Math.min(n, 256) : null;
      if (wrap === (model.get("wrap") ?? null)) return;
      model.set("wrap", wrap);
      model.save_changes();
    };
    input.addEventListener("change", applyWrap);
    input.addEventListener("keydown", (event) => {
      if (event.key === "Enter") applyWrap();
    });
    label.appendChild(input);
    toolbar.append(
      modeControl(mode, (next) => {
        mode = next;
        draw();
      }),
      label,
    );
    toolbar.appendChild(status);
    root.append(toolbar);
    setStatus(null);

    // the page's room: strips and grids are laid out to fit it, nothing hides behind a scroll
    const room = availableWidth(root);
    drawnRoom = room;
    for (const storage of scene.storages ?? []) {
      const block = htmlEl("section", "sw-storage-block");
      const members = (scene.tensors ?? []).filter((t) => t.storage === storage.id);
      const wrap = wrapOverride ?? fittedWrap(storage.wrap, storageCellPlan(storage, mode).cellW, undefined, room - STRIP_MARGIN);
      const drawn = drawStorage(storage, scene.tensors ?? [], wrap, uid, { mode, room: room - STRIP_MARGIN });
      const legend = htmlEl("div", "sw-legend");
      for (const tensor of members) {
        const chip = htmlEl("span", "sw-chip");
        chip.append(swatch(tensor, `${uid}-legend`), htmlEl("span", "sw-mark", tensor.mark), htmlEl("span", "sw-name", tensor.name));
        legend.appendChild(chip);
      }
      // one line under the storage's name: who lives here, the arrows' legend, what the numbers are
      legend.append(drawn.arrowLegend, htmlEl("span", "sw-caption", cellsCaption(drawn.plan, drawn.flow)));
      drawn.node.children[0].appendChild(legend);
      views.storages.set(storage.id, drawn);
      views.storageCells.set(storage.id, drawn.cells);
      block.appendChild(drawn.node);

      const cards = htmlEl("div", "sw-tensors");
      for (const tensor of members) {
        const card = htmlEl("div", "sw-tensor");
        card.dataset.tensor = tensor.id;
        card.dataset.storage = storage.id;
        const header = tensorHeader(tensor, uid);
        card.addEventListener("click", () => setActive(tensor.id));
        const body = htmlEl("div", "sw-tensor-body");
        const logical = drawLogical(tensor, indexed, {
          mode,
          room: room - CARD_MARGIN,
          selected: selectedSlices.get(tensor.id) ?? null,
          onSelect: (outer) => {
            selectedSlices.set(tensor.id, outer);
            draw();
          },
          onPick: (lead) => {
            pickedSlices.set(tensor.id, lead);
            draw();
          },
        });
        for (const [key, node] of logical.cells) views.logicalCells.set(key, node);
        const logicalWrap = htmlEl("div", "sw-logical-wrap");
        logicalWrap.appendChild(logical.node);
        body.append(logicalWrap, drawFacts(tensor));
        // a conj/neg view or a quantized tensor reads other values than the strip shows: say so
        const readNotes = (tensor.reads?.notes ?? []).map((note) => htmlEl("div", "sw-reads-note", note));
        card.append(header, ...readNotes, body);
        cards.appendChild(card);
      }
      block.appendChild(cards);
      root.appendChild(block);
      if (members.length) active.set(storage.id, members[0].id);
    }
    for (const name of scene.released ?? []) {
      root.appendChild(htmlEl("div", "sw-released", `${name}: a snapshot — the tensor was a temporary and is gone; the widget holds no reference to it`));
    }
    current = { indexed, views, scene, active: new Map() };
    walking = null;
    hover.reset();
    for (const tensorId of active.values()) setActive(tensorId);
  };

  const hover = attachHover(root, model, () => current, { onStatus: setStatus, onTarget });
  // a notebook column that grows or shrinks re-lays the picture out to its new width
  let drawnRoom = null;
  let pending = 0;
  const resized = typeof ResizeObserver === "undefined" ? null : new ResizeObserver(() => {
    if (pending) return;
    pending = requestAnimationFrame(() => {
      pending = 0;
      if (drawnRoom !== null && Math.abs(availableWidth(root) - drawnRoom) >= RELAYOUT_PX) draw();
    });
  });
  resized?.observe(root);
  // a new scene may hold other tensors under the same ids: a picked index would not fit them
  const onScene = () => {
    pickedSlices.clear();
    selectedSlices.clear();
    draw();
  };
  model.on("change:scene", onScene);
  model.on("change:wrap", draw);
  draw();

  return () => {
    stopFollowingScheme();
    resized?.disconnect();
    if (pending) cancelAnimationFrame(pending);
    hover.detach();
    model.off("change:scene", onScene);
    model.off("change:wrap", draw);
    root.remove();
  };
}

export default { render };
