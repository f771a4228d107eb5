// stridewidget graph front end (anywidget ESM): the nodes of an sw.graph as a table; the selected
// node's layout drawn beside its inputs' by the tensor widget (js/widget/widget.js), mounted once
// on this same model (its `scene`, `wrap` and `hovered` traits).  Bundled by esbuild into
// stridewidget/notebook/static/graph.js (npm run build).
//
// Only `selected` goes to Python (a node's position, an int): the kernel builds that node's scene on
// demand, so a graph of thousands of nodes sends one scene, not thousands.  Every string from Python
// goes in through textContent (htmlEl), never innerHTML.
//
// Stable DOM for tests:
//   .sw-graph                         one per rendered graph widget
//   .sw-graph-table tr.sw-graph-row[data-index][data-kind]   one row per node; .sw-graph-selected
//                                     (aria-selected="true") on the selected one; the selected row
//                                     is the one in the tab order (roving tabindex)
//   .sw-graph-caption                 what the picture below shows (data-drawn: its node's position)
//   .sw-graph-picture .sw-root        the tensor widget drawing the selected node and its inputs
import "./graph.css";
import widget from "../widget/widget.js";
import { htmlEl } from "../widget/dom.js";
import { followHostScheme } from "../widget/theme.js";

const COLUMNS = ["node", "kind", "op", "layout", "bytes moved", "where"];

/** The next row position for a navigation key, or null when the key is not one. */
export function nextIndex(key, current, count) {
  if (count === 0) return null;
  const at = current ?? -1;
  if (key === "ArrowDown") return Math.min(count - 1, at + 1);
  if (key === "ArrowUp") return Math.max(0, at - 1);
  if (key === "Home") return 0;
  if (key === "End") return count - 1;
  if (key === "PageDown") return Math.min(count - 1, at + 10);
  if (key === "PageUp") return Math.max(0, at - 10);
  return null;
}

/** The caption over the picture: which node is drawn, beside which inputs, and what is left out. */
export function captionText(row, scene) {
  if (!row) return "select a node to draw its layout beside its inputs'";
  const drawn = (scene?.tensors ?? []).map((t) => t.name);
  const self = `%${row.name}`;
  const inputs = drawn.filter((name) => name !== self);
  const head = drawn.includes(self) ? `${self} (${row.kind}, ${row.op})` : `${self} (${row.kind}) has no single layout`;
  const parts = [head];
  if (inputs.length) parts.push(`beside its input${inputs.length > 1 ? "s" : ""} ${inputs.join(", ")}`);
  else if (row.inputs.length === 0) parts.push("no inputs");
  const missing = new Set(row.inputs.map((name) => `%${name}`).filter((name) => !drawn.includes(name))).size;
  if (missing) parts.push(`${missing} input${missing > 1 ? "s" : ""} not drawn (no single layout, or past the first few)`);
  if (row.reason) parts.push(`copies: ${row.reason}`);
  return parts.join(" · ");
}

/** Text split where a line may break inside it without breaking a word: after ':' and '/'
 * (a layout's `(2, 3):(3, 1)`, a path's `dir/file.py:12`); spaces break anyway.  Pure. */
export function breakPoints(text) {
  return String(text ?? "").split(/(?<=[:/])/);
}

/** A cell whose text wraps at spaces, ':' and '/' only (a <wbr> after each ':' and '/'). */
function breakableCell(className, text) {
  const td = htmlEl("td", className);
  breakPoints(text).forEach((part, i) => {
    if (i) td.appendChild(document.createElement("wbr"));
    td.appendChild(document.createTextNode(part));
  });
  return td;
}

/** How far to scroll the table (px, + down) so a row shows below the sticky header: 0 when it
 * is in view.  Rects are {top, bottom} in the same coordinates.  Pure. */
export function scrollToShow(wrap, row, headHeight) {
  const top = wrap.top + headHeight;
  if (row.top < top) return row.top - top;
  if (row.bottom > wrap.bottom) return Math.min(row.bottom - wrap.bottom, row.top - top);
  return 0;
}

function rowNode(row, index) {
  const tr = htmlEl("tr", "sw-graph-row");
  tr.dataset.index = String(index);
  tr.dataset.kind = row.kind;
  tr.tabIndex = -1;
  tr.setAttribute("aria-selected", "false");
  const op = htmlEl("td", "sw-graph-op", row.op);
  if (row.reason) op.append(htmlEl("div", "sw-graph-reason", `↳ ${row.reason}`));
  tr.append(htmlEl("td", "sw-graph-name", row.name), htmlEl("td", "sw-graph-kind", row.kind), op);
  tr.append(breakableCell("sw-graph-layout", row.layout), htmlEl("td", "sw-graph-bytes", row.bytes), breakableCell("sw-graph-where", row.where));
  return tr;
}

/** The widget's fixed parts: title, hint, the (empty) table, the caption and the picture's mount. */
function scaffold(title) {
  const root = htmlEl("div", "sw-root sw-graph");
  const tableWrap = htmlEl("div", "sw-graph-table-wrap");
  const table = htmlEl("table", "sw-graph-table");
  table.setAttribute("role", "grid");
  table.setAttribute("aria-label", "the graph's nodes: click a row, or use the arrow keys, to draw its layout beside its inputs'");
  const headRow = htmlEl("tr");
  for (const name of COLUMNS) headRow.appendChild(htmlEl("th", "", name));
  const thead = htmlEl("thead");
  thead.appendChild(headRow);
  const tbody = htmlEl("tbody");
  table.append(thead, tbody);
  tableWrap.appendChild(table);
  const hint = htmlEl("div", "sw-graph-hint", "click a node (or move with ↑ ↓ Home End) to draw its layout beside its inputs'");
  const caption = htmlEl("div", "sw-graph-caption");
  caption.setAttribute("aria-live", "polite");
  const picture = htmlEl("div", "sw-graph-picture");
  const mount = htmlEl("div", "sw-graph-mount");
  picture.append(caption, mount);
  root.append(htmlEl("div", "sw-graph-title", title), hint, tableWrap, picture);
  return { root, tableWrap, thead, tbody, caption, mount };
}

function render({ model, el }) {
  const { root, tableWrap, thead, tbody, caption, mount } = scaffold(model.get("title") ?? "");
  const stopFollowingScheme = followHostScheme(root, el);
  el.appendChild(root);

  const rows = model.get("rows") ?? [];
  const trs = rows.map(rowNode);
  tbody.append(...trs);

  const showSelected = () => {
    const selected = model.get("selected");
    trs.forEach((tr, i) => {
      const on = i === selected;
      tr.classList.toggle("sw-graph-selected", on);
      tr.setAttribute("aria-selected", String(on));
      tr.tabIndex = on ? 0 : -1;
    });
    if (!trs.some((tr) => tr.tabIndex === 0) && trs.length) trs[0].tabIndex = 0;
    keepSelectedInView();
  };
  // the selected row stays in view (a selection from Python, a resize that rewraps the rows):
  // only the table scrolls, never the page around it
  const keepSelectedInView = () => {
    const tr = trs[model.get("selected")];
    if (!tr || !tableWrap.isConnected) return;
    const delta = scrollToShow(tableWrap.getBoundingClientRect(), tr.getBoundingClientRect(), thead.getBoundingClientRect().height);
    if (delta) tableWrap.scrollTop += delta;
  };
  const resized = typeof ResizeObserver === "undefined" ? null : new ResizeObserver(() => keepSelectedInView());
  resized?.observe(tableWrap);
  const showCaption = () => {
    const selected = model.get("selected");
    const drawn = model.get("drawn");
    if (selected !== null && selected !== undefined && selected !== drawn) {
      caption.textContent = `drawing %${rows[selected]?.name ?? "?"} …`;
      caption.dataset.drawn = "";
      return;
    }
    caption.textContent = captionText(rows[drawn], model.get("scene"));
    caption.dataset.drawn = drawn === null || drawn === undefined ? "" : String(drawn);
  };
  const select = (index, focus) => {
    if (!Number.isInteger(index) || index < 0 || index >= rows.length) return;
    if (focus) trs[index].focus({ preventScroll: true });
    if (model.get("selected") === index) return;
    model.set("selected", index);
    model.save_changes();
  };
  tbody.addEventListener("click", (event) => {
    const tr = event.target.closest?.("tr.sw-graph-row");
    if (tr) select(Number(tr.dataset.index), true);
  });
  tbody.addEventListener("keydown", (event) => {
    const tr = event.target.closest?.("tr.sw-graph-row");
    if (!tr) return;
    const here = Number(tr.dataset.index);
    if (event.key === "Enter" || event.key === " ") {
      event.preventDefault();
      select(here, true);
      return;
    }
    const next = nextIndex(event.key, here, rows.length);
    if (next === null) return;
    event.preventDefault();
    select(next, true);
  });

  const cleanupPicture = widget.render({ model, el: mount });
  const onSelected = () => {
    showSelected();
    showCaption();
  };
  model.on("change:selected", onSelected);
  model.on("change:drawn", showCaption);
  model.on("change:scene", showCaption);
  onSelected();

  return () => {
    resized?.disconnect();
    stopFollowingScheme();
    cleanupPicture();
    model.off("change:selected", onSelected);
    model.off("change:drawn", showCaption);
    model.off("change:scene", showCaption);
    root.remove();
  };
}

export default { render };
