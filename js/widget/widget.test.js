// The widget paints the display list Python laid out (js/fixtures/picture_*.json, written by
// js/fixtures/make_fixtures.py from stridewidget.notebook.picture) and links hover from its keys.
// Oracles: the list itself (every group, text and position painted as listed) and the address
// formula offset + Σ index·stride of the fixture's tensors, worked out here independently.
import { afterEach, describe, expect, it } from "vitest";
import aliases from "../fixtures/picture_aliases.json";
import xss from "../fixtures/picture_xss.json";
import deep from "../fixtures/picture_deep.json";
import { MAX_REASON, parsePick } from "./picker.js";
import { fakeModel, hover } from "./testing.js";
import widget from "./widget.js";

afterEach(() => {
  document.body.replaceChildren();
});

function mount(picture, extra = {}) {
  const model = fakeModel({ picture, ...extra });
  const el = document.createElement("div");
  document.body.appendChild(el);
  const cleanup = widget.render({ model, el });
  return { model, el, cleanup };
}

/** Every item of a display list, groups flattened, in paint order. */
function flat(items, out = []) {
  for (const item of items) {
    out.push(item);
    if (item[0] === "g") flat(item[4], out);
  }
  return out;
}

// x = arange(12).reshape(3, 4): strides (4, 1); xt = x.t(): (1, 4); cols = x[:, ::2]: (4, 2); offset 0
const STRIDES = { x: [4, 1], xt: [1, 4], cols: [4, 2] };
const address = (name, index) => index.reduce((sum, i, d) => sum + i * STRIDES[name][d], 0);

describe("painting", () => {
  it("paints every group of the list with its keys, and every text where the list puts it", () => {
    const { el } = mount(aliases);
    const listed = flat(aliases.items);
    const groups = listed.filter((i) => i[0] === "g");
    const painted = el.querySelectorAll("svg.sws-picture g[class]");
    expect(painted.length).toBe(groups.length);
    painted.forEach((g, k) => {
      expect(g.getAttribute("class")).toBe(groups[k][1]);
      for (const [key, value] of Object.entries(groups[k][2])) expect(g.dataset[key]).toBe(String(value));
    });
    const texts = listed.filter((i) => i[0] === "t");
    const paintedTexts = [...el.querySelectorAll("svg.sws-picture text")];
    expect(paintedTexts.map((t) => [Number(t.getAttribute("x")), Number(t.getAttribute("y")), t.textContent])).toEqual(
      texts.map((t) => [t[1], t[2], t[3]]),
    );
    // the list's rects, the background, one swatch rect in each tensor's pattern
    expect(el.querySelectorAll("svg.sws-picture rect").length).toBe(listed.filter((i) => i[0] === "r").length + 1 + aliases.tensors.length);
  });

  it("keeps the list's px size and scales down (viewBox)", () => {
    const { el } = mount(aliases);
    const svg = el.querySelector("svg.sws-picture");
    expect(svg.getAttribute("viewBox")).toBe(`0 0 ${aliases.width} ${aliases.height}`);
    expect(svg.getAttribute("width")).toBe(String(aliases.width));
  });

  it("turns theme roles into CSS variables with both themes' values; no token is left", () => {
    const { el } = mount(aliases);
    const svg = el.querySelector("svg.sws-picture");
    expect(svg.style.getPropertyValue("--sws-text")).toMatch(/^light-dark\(#1f1f1f, #[0-9a-f]{6}\)$/);
    expect(svg.outerHTML).not.toMatch(/"@|:\s*@/);
    expect(svg.querySelector("g.sws-scell rect").style.getPropertyValue("fill")).toBe("var(--sws-cell_bg)");
  });

  it("shows strings from Python as text, never markup", () => {
    const { el } = mount(xss);
    expect(el.querySelector("img")).toBeNull();
    expect([...el.querySelectorAll("text")].some((t) => t.textContent.includes("<img src=x onerror=alert(1)>"))).toBe(true);
  });

  it("says it cannot paint a list of another version, in one line", () => {
    const { el } = mount({ ...aliases, v: 99 });
    expect(el.querySelector(".sw-error").textContent).toMatch(/version 1 is needed, got 99/);
  });

  it("paints the list Python syncs as one JSON text the same as the object, and never runs it", () => {
    const asObject = mount(aliases).el.querySelector("svg").outerHTML;
    const { el } = mount(JSON.stringify(aliases));
    expect(el.querySelector("svg").outerHTML.replace(/sw\d+/g, "")).toBe(asObject.replace(/sw\d+/g, ""));
    const hostile = mount(JSON.stringify(xss)).el;
    expect(hostile.querySelector("img")).toBeNull();
  });

  it("paints the new list when Python lays the picture out again", () => {
    const { el, model } = mount(xss);
    model.set("picture", aliases);
    expect(el.querySelectorAll("g.sws-lcell").length).toBe(flat(aliases.items).filter((i) => i[1] === "sws-lcell").length);
  });
});

describe("hover linking", () => {
  const lit = (el) => [...el.querySelectorAll(".sw-hl")].map((g) => (g.classList.contains("sws-scell") ? `s${g.dataset.cell}` : `${g.dataset.tensor}:${g.dataset.index}`));

  it("a logical cell lights its storage cell and every shown cell that reads it, with its walk", () => {
    const { el, model } = mount(aliases);
    const names = Object.fromEntries(aliases.tensors.map((t) => [t.name, t.id]));
    const cell = el.querySelector(`g.sws-lcell[data-tensor="${names.cols}"][data-index="2,1"]`);
    hover(cell.querySelector("rect"));
    const target = address("cols", [2, 1]);
    expect(Number(cell.dataset.addr)).toBe(target);
    const expected = [`s${target}`];
    for (const [name, id] of Object.entries(names)) {
      for (const g of el.querySelectorAll(`g.sws-lcell[data-tensor="${id}"]`)) {
        if (address(name, g.dataset.index.split(",").map(Number)) === target) expected.push(`${id}:${g.dataset.index}`);
      }
    }
    expect(lit(el).sort()).toEqual(expected.sort());
    expect(cell.classList.contains("sw-hl-source")).toBe(true);
    const status = el.querySelector(".sw-status").textContent;
    expect(status).toContain(`cols[2, 1] → storage[${target}]`);
    expect(status).toContain(`walk: storage[0] → +2·4 → +1·2 = storage[${target}]`);
    expect([...el.querySelectorAll(".sw-walk")].map((g) => [Number(g.dataset.cell), Number(g.dataset.hop)])).toEqual([[0, 0], [8, 1], [10, 2]]);
    expect(model.get("hovered")).toEqual({ tensor: names.cols, name: "cols", index: [2, 1], storage: "s0", cell: target });
  });

  it("a stride arrow, or its label, lights the arrow and its label and says its hover line", () => {
    const { el, model } = mount(aliases);
    const arrows = [...el.querySelectorAll("g.sws-arrow")];
    expect(arrows.length).toBeGreaterThan(0);
    for (const arrow of arrows) {
      const { tensor, dim } = arrow.dataset;
      const label = el.querySelector(`g.sws-arrow-label[data-tensor="${tensor}"][data-dim="${dim}"]`);
      for (const target of [arrow.querySelector("path"), label.querySelector("rect")]) {
        hover(target);
        // the hover line Python wrote on the arrow's group (its title), e.g. "x: d0 +4 — one step …"
        expect(el.querySelector(".sw-status").textContent).toBe(arrow.dataset.hover);
        expect(arrow.dataset.hover).toContain(label.querySelector("text").textContent);
        expect([...el.querySelectorAll(".sw-hl")]).toEqual([arrow, label]);
        expect(model.get("hovered")).toEqual({ tensor, dim });
        expect(el.querySelector(".sw-root").classList.contains("sw-hovering")).toBe(false);
      }
    }
  });

  it("a storage cell lights every logical cell that reads it, across tensors", () => {
    const { el, model } = mount(aliases);
    hover(el.querySelector('g.sws-scell[data-cell="4"] rect'));
    const names = Object.fromEntries(aliases.tensors.map((t) => [t.id, t.name]));
    const readers = [...el.querySelectorAll("g.sws-lcell.sw-hl")].map((g) => address(names[g.dataset.tensor], g.dataset.index.split(",").map(Number)));
    expect(readers).toEqual([4, 4, 4]);
    expect(model.get("hovered")).toEqual({ storage: "s0", cell: 4 });
  });

  it("a new picture laid out under the pointer keeps the hovered cell lit", () => {
    const { el, model } = mount(aliases);
    hover(el.querySelector('g.sws-scell[data-cell="4"] rect'));
    model.set("picture", { ...aliases }); // Python laid it out again (another width)
    const lit = el.querySelector('g.sws-scell[data-cell="4"]');
    expect(lit.classList.contains("sw-hl-source")).toBe(true);
    expect(el.querySelectorAll("g.sws-lcell.sw-hl").length).toBe(3);
    expect(el.querySelector(".sw-status").textContent).toContain("storage[4]");
  });

  it("moving on clears the old highlight; leaving clears all and sends null", () => {
    const { el, model } = mount(aliases);
    hover(el.querySelector('g.sws-scell[data-cell="4"] rect'));
    hover(el.querySelector('g.sws-scell[data-cell="5"] rect'));
    expect(el.querySelector('g.sws-scell[data-cell="4"]').classList.contains("sw-hl")).toBe(false);
    el.querySelector("svg.sws-picture").dispatchEvent(new MouseEvent("mouseleave"));
    expect(el.querySelectorAll(".sw-hl, .sw-walk, [data-hop]").length).toBe(0);
    expect(model.get("hovered")).toBeNull();
  });
});

describe("controls", () => {
  it("cells show both / values / storage index: a class switch, nothing laid out again", () => {
    const { el } = mount(aliases);
    const root = el.querySelector(".sw-root");
    const before = el.querySelector("svg.sws-picture");
    expect(root.classList.contains("sw-mode-both")).toBe(true);
    el.querySelector('.sw-mode-button[data-mode="values"]').click();
    expect(root.classList.contains("sw-mode-values")).toBe(true);
    expect(el.querySelector('.sw-mode-button[data-mode="values"]').getAttribute("aria-checked")).toBe("true");
    expect(el.querySelector("svg.sws-picture")).toBe(before);
    expect(el.querySelectorAll("text.sws-role-v").length).toBeGreaterThan(0);
    expect(el.querySelectorAll("text.sws-role-i").length).toBeGreaterThan(0);
  });

  it("the row width input sets the wrap trait for Python to lay out again", () => {
    const { el, model } = mount(aliases);
    const input = el.querySelector("input.sw-wrap");
    input.value = "5";
    input.dispatchEvent(new Event("change"));
    expect(model.get("wrap")).toBe(5);
    expect(model.save_changes).toHaveBeenCalled();
  });

  it("cleanup removes every listener and the view", () => {
    const { el, model, cleanup } = mount(aliases);
    cleanup();
    expect(model.listenerCount()).toBe(0);
    expect(el.querySelector(".sw-root")).toBeNull();
  });
});

describe("slice picker", () => {
  // d = arange(120).reshape(10, 3, 4): the picture lists 8 of its 10 slices
  it("is offered only where the picture leaves slices out", () => {
    expect(mount(aliases, { picked: {} }).el.querySelector(".sw-pick").hidden).toBe(true);
    expect(mount(deep).el.querySelector(".sw-pick").hidden).toBe(true); // no such trait (the graph pane)
    const { el } = mount(deep, { picked: {} });
    const pick = el.querySelector(".sw-pick");
    expect(pick.hidden).toBe(false);
    expect([...pick.querySelectorAll("option")].map((o) => o.value)).toEqual(["d"]);
    expect(pick.querySelector(".sw-pick-note").textContent).toBe(` (${deep.tensors[0].pick.left_out} not drawn)`);
  });

  it("groups its count's digits as the picture's own counts are", () => {
    const many = { ...deep, tensors: [{ ...deep.tensors[0], pick: { ...deep.tensors[0].pick, left_out: 9998 } }] };
    const { el } = mount(many, { picked: {} });
    expect(el.querySelector(".sw-pick-note").textContent).toBe(" (9,998 not drawn)");
  });

  it("sets `picked` for a slice of the tensor and refuses one outside it, in the browser", () => {
    const { el, model } = mount(deep, { picked: {} });
    const input = el.querySelector(".sw-pick-index");
    input.value = "10";
    el.querySelector(".sw-pick-show").click();
    expect(model.state.picked).toEqual({});
    // said in the status line (its two lines are budgeted), not in the picker's row: the toolbar
    // keeps its rows (a reason in the picker added a row, 25 px, past the height budget)
    expect(el.querySelector(".sw-status").textContent).toContain("outside 0..9");
    expect(el.querySelector(".sw-pick-note").textContent).toBe(` (${deep.tensors[0].pick.left_out} not drawn)`);
    input.value = "8";
    input.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter" }));
    expect(model.state.picked).toEqual({ d: [[8]] });
    expect(model.save_changes).toHaveBeenCalled();
  });

  it("says it needs a kernel in a page without one", () => {
    const model = fakeModel({ picture: deep, picked: {} });
    model.kernelFree = true;
    const el = document.createElement("div");
    document.body.appendChild(el);
    widget.render({ model, el });
    expect(el.querySelector(".sw-pick-show").disabled).toBe(true);
    expect(el.querySelector(".sw-pick-note").textContent).toContain("needs a kernel");
  });

  it("parsePick checks the count and the bounds of each index", () => {
    expect(parsePick("3, 1", [6, 4])).toEqual([3, 1]);
    expect(parsePick("3 1", [6, 4])).toEqual([3, 1]);
    expect(parsePick("3", [6, 4])).toMatch(/give 2 indices/);
    expect(parsePick("3, 4", [6, 4])).toMatch(/index 4 of dim 1 is outside 0..3/);
    expect(parsePick("-1, 0", [6, 4])).toMatch(/outside/);
    expect(parsePick("1.5, 0", [6, 4])).toMatch(/index 1.5 of dim 0 is no whole number/);
  });

  it("parsePick takes plain decimal integers alone (Python refuses negative picks)", () => {
    for (const typed of ["0x3", "3.0", "1e0", "+3", "0b1", "3.", ".5", "Infinity", "٣"]) {
      expect(parsePick(`${typed}, 0`, [6, 4])).toMatch(/of dim 0 is no whole number/);
      expect(parsePick(`0 ${typed}`, [6, 4])).toMatch(/of dim 1 is no whole number/);
    }
    expect(parsePick("-0, 0", [6, 4])).toMatch(/outside 0..5/);
    expect(parsePick("003, 0", [6, 4])).toEqual([3, 0]);
  });

  it("says a refused pick in at most MAX_REASON characters, whatever was typed", () => {
    const leads = [[6, 4], Array(15).fill(3), Array(15).fill(2 ** 53), [2 ** 53, 2 ** 53]];
    const typed = ["3", "9".repeat(300), "x, ".repeat(100), `0, ${"7".repeat(40)}`, ""];
    for (const lead of leads) {
      for (const text of typed) {
        const reason = parsePick(text, lead);
        if (typeof reason === "string") expect(`show slice: ${reason}`.length).toBeLessThanOrEqual(MAX_REASON);
      }
    }
    expect(parsePick("1", Array(15).fill(3))).toBe("give 15 indices (leading sizes 3 × 3 × 3 × … × 3, 15 dims)");
  });
});
