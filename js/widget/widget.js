// stridewidget front end (anywidget ESM): paints the picture Python laid out and links it.
//
// Python decides every layout (stridewidget/render/, sent as the `picture` trait: a display list,
// stridewidget/render/listing.py); this module paints it (js/paint/paint.js), links hover from its
// keys (js/paint/link.js) and offers the controls that change it: the storage row width (the
// `wrap` trait, Python lays out again) and what cells show (a class switch, nothing re-laid out).
// It tells Python the px it has (the `width` trait, debounced); Python lays out again when that
// changes by a cell or more.  Bundled by esbuild into stridewidget/notebook/static/widget.js.
//
// Stable DOM for tests (browser tests select on these):
//   .sw-root                       one per rendered widget
//   .sw-status                     the hovered cell's hover line (and its index walk)
//   svg.sws-picture                the painted picture: the same groups as the static SVG —
//     g.sws-scell[data-storage][data-cell], g.sws-lcell[data-tensor][data-slice][data-r][data-c]
//     [data-addr][data-index], g.sws-arrow[data-tensor][data-dim], g.sws-gap, ...
//   .sw-hl / .sw-hl-source / .sw-walk[data-hop]   lit cells (source = the hovered one; the walk)
//   .sw-mode-button[data-mode]     cells show both / values / storage index
//   input.sw-wrap                  storage row width (sets the `wrap` trait; Enter applies)
//   .sw-pick select/input/button   the slice picker (sets the `picked` trait; js/widget/picker.js)
import "./widget.css";
import { htmlEl } from "./dom.js";
import { followHostScheme } from "./theme.js";
import { pictureView } from "../paint/view.js";
import { pickerControl } from "./picker.js";

let instances = 0;

export const CELL_MODES = ["both", "values", "index"];
const MODE_LABELS = { both: "both", values: "values", index: "storage index" };

/** The px the picture may use: the root's content width (0 when not laid out). */
function availableWidth(root) {
  const width = root.clientWidth;
  if (!width) return 0;
  const style = getComputedStyle(root);
  return Math.floor(width - (parseFloat(style.paddingLeft) || 0) - (parseFloat(style.paddingRight) || 0));
}

/** The segmented control "cells show: both | values | storage index". */
function modeControl(root) {
  const group = htmlEl("div", "sw-mode");
  group.setAttribute("role", "radiogroup");
  group.setAttribute("aria-label", "what the cells show");
  group.appendChild(htmlEl("span", "sw-mode-title", "cells show "));
  const buttons = CELL_MODES.map((option) => {
    const button = htmlEl("button", "sw-mode-button", MODE_LABELS[option]);
    button.type = "button";
    button.dataset.mode = option;
    button.setAttribute("role", "radio");
    group.appendChild(button);
    return button;
  });
  const choose = (mode) => {
    for (const button of buttons) {
      const on = button.dataset.mode === mode;
      button.classList.toggle("sw-mode-on", on);
      button.setAttribute("aria-checked", String(on));
    }
    for (const option of CELL_MODES) root.classList.toggle(`sw-mode-${option}`, option === mode);
  };
  for (const button of buttons) button.addEventListener("click", () => choose(button.dataset.mode));
  choose("both");
  return group;
}

/** The storage row width input (the `wrap` trait: Python lays the strip out again). */
function wrapControl(model) {
  const label = htmlEl("label", "sw-wrap-label", "storage row width ");
  const input = htmlEl("input", "sw-wrap");
  input.type = "number";
  input.min = "1";
  input.max = "256";
  input.placeholder = "auto";
  input.setAttribute("aria-label", "storage cells per row (empty: automatic)");
  if (model.kernelFree) {
    // a page without a kernel (python -m stridewidget --html): Python lays the strip out, not this page
    input.disabled = true;
    input.title = "needs a running kernel: Python lays the picture out";
    label.append(input, htmlEl("span", "sw-needs-kernel", " (needs a kernel)"));
    input.value = model.get("wrap") ?? "";
    return { label, show: () => {} };
  }
  const show = () => {
    input.value = model.get("wrap") ?? "";
  };
  const apply = () => {
    const n = Number.parseInt(input.value, 10);
    const wrap = Number.isFinite(n) && n > 0 ? Math.min(n, 256) : null;
    if (wrap === (model.get("wrap") ?? null)) return;
    model.set("wrap", wrap);
    model.save_changes();
  };
  input.addEventListener("change", apply);
  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter") apply();
  });
  label.appendChild(input);
  show();
  return { label, show };
}

function render({ model, el }) {
  instances += 1;
  const uid = `sw${instances}`; // keeps SVG pattern/marker ids unique per view on a page
  const root = htmlEl("div", "sw-root");
  const stopFollowingScheme = followHostScheme(root, el);
  el.appendChild(root);

  const toolbar = htmlEl("div", "sw-toolbar");
  const wrap = wrapControl(model);
  const status = htmlEl("div", "sw-status");
  status.setAttribute("aria-live", "polite");
  const idle = "hover a cell: logical → storage address, storage → the elements that read it";
  const setStatus = (text) => {
    status.textContent = text ?? idle;
  };
  const picker = pickerControl(model, { say: setStatus });
  toolbar.append(modeControl(root), wrap.label, picker.node, status);
  const holder = htmlEl("div", "sw-picture");
  root.append(toolbar, holder);
  setStatus(null);

  const view = pictureView({ root, holder, model, uid, onStatus: setStatus, measure: () => availableWidth(root) });
  const paint = () => {
    view.paint();
    picker.refresh();
  };

  model.on("change:picture", paint);
  model.on("change:wrap", wrap.show);
  paint();

  return () => {
    stopFollowingScheme();
    view.detach();
    model.off("change:picture", paint);
    model.off("change:wrap", wrap.show);
    root.remove();
  };
}

export default { render };
