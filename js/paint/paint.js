// The painter: a display list from Python (stridewidget/render/listing.py) as SVG DOM.
//
// Python decides every position, word and colour; this only turns the list's primitives into
// elements, the way stridewidget/render/svg.py writes them into the saved SVG, so the widget and
// the static picture draw the same thing.  Every string goes in through textContent or
// setAttribute, never innerHTML: a tensor named `<img onerror=...>` is drawn as text.
//
// Colours: a theme role token ("@text") becomes a CSS variable (--sws-text) whose value is
// light-dark(<light>, <dark>) from style.json, so the picture follows the host's colour scheme
// (js/widget/theme.css sets color-scheme) without being painted again.
import style from "../../stridewidget/style.json";

export const SVG_NS = "http://www.w3.org/2000/svg";
/** The display list format this painter paints (listing.VERSION). */
export const LIST_VERSION = 1;

function el(tag, attrs) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value !== undefined && value !== null) node.setAttribute(key, String(value));
  }
  return node;
}

/** The CSS value of a colour from the list: a role token as its variable, else as it is. */
export function colourOf(value) {
  if (typeof value === "string" && value.startsWith("@")) {
    const role = value.slice(1);
    if (!(role in style.themes.light)) throw new Error(`unknown colour role ${value}`);
    return `var(--sws-${role})`;
  }
  return value;
}

/** Each theme role as a custom property: light-dark(<light value>, <dark value>). */
export function roleVariables() {
  const { light, dark } = style.themes;
  return Object.keys(light).map((role) => [`--sws-${role}`, `light-dark(${light[role]}, ${dark[role]})`]);
}

function setPaint(node, property, value) {
  // a CSS property, not the presentation attribute: var() is resolved in CSS properties
  if (value === null || value === undefined) node.style.setProperty(property, "none");
  else node.style.setProperty(property, colourOf(value));
}

/** One pattern per tensor (colour + texture), ids prefixed by `uid`, as svg.py writes them. */
function patternDefs(defs, uid, tensors) {
  for (const tensor of tensors) {
    const order = tensor.order;
    const colours = style.tensor_colours.length;
    // one texture further on each round of the colours, as labels.tensor_pattern picks it
    const kind = style.patterns[(order + Math.floor(order / colours)) % style.patterns.length];
    const colour = style.tensor_colours[order % colours];
    const pattern = el("pattern", { id: `${uid}-p${order}`, width: 6, height: 6, patternUnits: "userSpaceOnUse" });
    pattern.appendChild(el("rect", { width: 6, height: 6, fill: colour }));
    const path = style.pattern_paths[kind];
    if (path) {
      const ink = el("path", { d: path, "stroke-width": 1.2 });
      setPaint(ink, "stroke", "@pattern_ink");
      pattern.appendChild(ink);
    }
    if (kind === "dots") {
      const dot = el("circle", { cx: 3, cy: 3, r: 1.3 });
      setPaint(dot, "fill", "@pattern_ink");
      pattern.appendChild(dot);
    }
    defs.appendChild(pattern);
  }
}

function markerFor(state, stroke) {
  let id = state.markers.get(stroke);
  if (id) return id;
  id = `${state.uid}-m${state.markers.size}`;
  state.markers.set(stroke, id);
  const marker = el("marker", {
    id, viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse",
  });
  const head = el("path", { d: "M 0 0 L 10 5 L 0 10 z", stroke: "#000000", "stroke-width": 0.8 });
  setPaint(head, "fill", stroke);
  marker.appendChild(head);
  state.defs.appendChild(marker);
  return id;
}

function paintItems(parent, items, state) {
  const font = style.geometry.font_size;
  for (const item of items) {
    const kind = item[0];
    if (kind === "r") {
      const [, x, y, w, h, fill, stroke, strokeWidth, dash, rx] = item;
      const node = el("rect", { x, y, width: w, height: h, rx: rx || null });
      if (typeof fill === "string" && /^p\d+$/.test(fill)) node.setAttribute("fill", `url(#${state.uid}-${fill})`);
      else setPaint(node, "fill", fill);
      if (stroke) {
        setPaint(node, "stroke", stroke);
        if (strokeWidth !== 1) node.setAttribute("stroke-width", strokeWidth);
        if (dash) node.setAttribute("stroke-dasharray", dash);
      }
      parent.appendChild(node);
    } else if (kind === "t") {
      const [, x, y, text, size, fill, anchor, bold, halo, role] = item;
      const node = el("text", { x, y, "text-anchor": anchor, "font-size": size === font ? null : size });
      if (bold) node.setAttribute("font-weight", "bold");
      setPaint(node, "fill", fill);
      if (halo) {
        setPaint(node, "stroke", halo);
        node.setAttribute("stroke-width", 2.5);
        node.setAttribute("paint-order", "stroke");
      }
      if (role) node.classList.add(`sws-role-${role}`);
      node.textContent = String(text);
      parent.appendChild(node);
    } else if (kind === "p") {
      const [, d, stroke, width, dash, arrow, fill] = item;
      const node = el("path", { d, "stroke-width": width, "stroke-dasharray": dash });
      setPaint(node, "fill", fill);
      setPaint(node, "stroke", stroke);
      if (arrow) node.setAttribute("marker-end", `url(#${markerFor(state, stroke)})`);
      parent.appendChild(node);
    } else if (kind === "g") {
      const [, cls, data, title, children] = item;
      const node = el("g", { class: cls });
      for (const [key, value] of Object.entries(data ?? {})) {
        if (value !== null && value !== undefined) node.setAttribute(`data-${key}`, String(value));
      }
      if (title) node.dataset.hover = title; // the hover line: the linker shows it in the status line
      paintItems(node, children, state);
      parent.appendChild(node);
    } else {
      throw new Error(`stridewidget: unknown display-list item ${JSON.stringify(kind)}`);
    }
  }
}

/**
 * The display list `list` as an <svg> element; `uid` prefixes its pattern and marker ids (unique
 * per view on a page).  It keeps the list's px size and scales down (viewBox) in a narrower box.
 */
export function paintPicture(list, uid) {
  if (!list || list.v !== LIST_VERSION) {
    throw new Error(`stridewidget: a display list of version ${LIST_VERSION} is needed, got ${list?.v}`);
  }
  const { width, height } = list;
  const svg = el("svg", {
    class: "sws-picture", role: "img", width, height, viewBox: `0 0 ${width} ${height}`,
    "font-family": style.geometry.font_family, "font-size": style.geometry.font_size,
  });
  svg.setAttribute("aria-label", list.title);
  for (const [name, value] of roleVariables()) svg.style.setProperty(name, value);
  const title = el("title", {});
  title.textContent = list.title;
  svg.appendChild(title);
  const background = el("rect", { width: "100%", height: "100%" });
  setPaint(background, "fill", "@background");
  svg.appendChild(background);
  const defs = el("defs", {});
  svg.appendChild(defs);
  patternDefs(defs, uid, list.tensors);
  const body = el("g", { "text-anchor": "middle" });
  setPaint(body, "fill", "@text");
  svg.appendChild(body);
  paintItems(body, list.items, { uid, defs, markers: new Map() });
  return svg;
}
