// The picture part of a widget: paints the model's `picture` into a holder, links it, publishes the
// hovered item (the `hovered` trait) and reports the px it has (the `width` trait, debounced; Python
// lays the picture out again when that moves by a cell).  The widget and the playground use it.
import { htmlEl } from "../widget/dom.js";
import { paintPicture } from "./paint.js";
import { linkPicture } from "./link.js";

/**
 * The model's `picture` display list: Python syncs it as one JSON text (a page host or a test may
 * hand it over as the object itself).  Parsed, never evaluated.
 */
export function pictureOf(model) {
  const raw = model.get("picture");
  return typeof raw === "string" ? JSON.parse(raw) : raw;
}

/** Debounce of the width reported to Python (ms). */
export const WIDTH_DEBOUNCE_MS = 150;

/**
 * Paint and link `model.get("picture")` in `holder`; `root` gets the linker's hover classes,
 * `measure()` gives the px to report.  Returns { paint, detach }: call paint() when the picture
 * changes (it also runs `afterPaint`).
 */
export function pictureView({ root, holder, model, uid, onStatus, measure, afterPaint = () => {} }) {
  let link = null;
  const publish = (value) => {
    if (JSON.stringify(model.get("hovered") ?? null) === JSON.stringify(value)) return;
    model.set("hovered", value);
    model.save_changes();
  };
  const paint = () => {
    link?.detach();
    link = null;
    holder.replaceChildren();
    const list = pictureOf(model);
    if (list && list.v) {
      try {
        const svg = paintPicture(list, uid);
        holder.appendChild(svg);
        link = linkPicture(root, svg, list, { onStatus, onHovered: publish });
      } catch (error) {
        holder.appendChild(htmlEl("div", "sw-error", String(error.message ?? error)));
      }
    }
    onStatus(null);
    // Python laid the picture out again (a new width) under the pointer: keep what it was on lit
    link?.restore(model.get("hovered"));
    afterPaint();
  };

  let timer = 0;
  const report = () => {
    timer = 0;
    const width = measure();
    if (width > 0 && width !== model.get("width")) {
      model.set("width", width);
      model.save_changes();
    }
  };
  const resized = typeof ResizeObserver === "undefined" ? null : new ResizeObserver(() => {
    clearTimeout(timer);
    timer = setTimeout(report, WIDTH_DEBOUNCE_MS);
  });
  resized?.observe(root);

  const detach = () => {
    resized?.disconnect();
    clearTimeout(timer);
    link?.detach();
  };
  return { paint, detach };
}
