// DOM helpers.  Every string from Python goes in through textContent or setAttribute, never
// innerHTML: a tensor named `<img onerror=...>` is shown as text.  (The picture's SVG is made by
// js/paint/paint.js.)

/** An HTML element with a class and optional text content. */
export function htmlEl(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = String(text);
  return node;
}
