// The widget against scenes made by stridewidget.scene.build.build_scene (js/fixtures/*.json).
import { afterEach, describe, expect, it } from "vitest";
import aliases from "../fixtures/aliases.json";
import copies from "../fixtures/copies.json";
import deep from "../fixtures/deep.json";
import deepAll from "../fixtures/deep_all.json";
import expand from "../fixtures/expand.json";
import five from "../fixtures/five.json";
import hd from "../fixtures/hd.json";
import meta from "../fixtures/meta.json";
import thinned from "../fixtures/thinned.json";
import thinnedAll from "../fixtures/thinned_all.json";
import wide from "../fixtures/wide.json";
import xss from "../fixtures/xss.json";
import { hover, mount } from "./testing.js";

afterEach(() => {
  document.body.replaceChildren();
});

const lcell = (el, tensorId, r, c, slice = 0) => el.querySelector(`[data-key="${tensorId}:${slice}:${r}:${c}"]`);
const scell = (el, storageId, cell) => el.querySelector(`[data-storage="${storageId}"][data-cell="${cell}"]`);
const highlighted = (el) => [...el.querySelectorAll(".sw-hl")];

describe("rendering", () => {
  it("draws one storage grid with every storage cell and the values", () => {
    const { el } = mount(aliases);
    expect(el.querySelectorAll(".sw-storage").length).toBe(1);
    const cells = el.querySelectorAll("[data-cell]");
    expect([...cells].map((c) => Number(c.dataset.cell))).toEqual([...Array(12).keys()]);
    const texts = [...el.querySelectorAll(".sw-storage .sw-cell-text")].map((t) => t.textContent);
    expect(texts).toEqual(aliases.storages[0].cells.text);
  });

  it("draws each tensor's logical grid with the values it reads", () => {
    const { el } = mount(aliases);
    // xt = x.t(): xt[r, c] reads storage[4c + r]
    const xt = el.querySelector('.sw-tensor[data-tensor="t1"]');
    const values = [...xt.querySelectorAll(".sw-logical-grid .sw-cell-text")].map((t) => t.textContent);
    expect(values).toEqual(["0.", "4.", "8.", "1.", "5.", "9.", "2.", "6.", "10.", "3.", "7.", "11."]);
    expect(xt.querySelectorAll("[data-key]").length).toBe(12);
  });

  it("greys cells a view never touches and marks cells read more than once", () => {
    const { el } = mount(expand);
    const untouched = [...el.querySelectorAll(".sw-untouched")].map((n) => Number(n.dataset.cell));
    expect(untouched).toEqual([4, 5, 6, 7, 8, 9, 10, 11]);
    // each storage cell of the row is read 3 times: the count is in its strip, with the mark
    const counts = [...el.querySelectorAll(".sw-count")].map((n) => n.textContent);
    expect(counts).toEqual(["A×3", "A×3", "A×3", "A×3"]);
  });

  it("keeps a short storage strip in view (sticky) and lets a tall one scroll", () => {
    expect(mount(aliases).el.querySelector(".sw-storage").classList.contains("sw-sticky")).toBe(true);
    expect(mount(meta).el.querySelector(".sw-storage").classList.contains("sw-sticky")).toBe(false);
  });

  it("shows each storage cell's index under it, in storage order", () => {
    const { el } = mount(aliases);
    const indices = [...el.querySelectorAll(".sw-storage .sw-cell-index")].map((n) => n.textContent);
    expect(indices).toEqual(aliases.storages[0].cells.index.map(String));
  });

  it("draws a stride arrow per dim and a loop for stride 0", () => {
    const { el } = mount(expand);
    const labels = [...el.querySelectorAll(".sw-arrow-label")].map((n) => n.textContent);
    expect(labels).toEqual(["d0 ×0", "d1 +1"]);
    const loop = el.querySelector('.sw-arrow[data-dim="0"] path').getAttribute("d");
    expect(loop).toMatch(/^M .* C /); // a curve back to the same cell
  });

  it("switches the arrows to the card clicked, and says so on the cards; a hover does not switch them", () => {
    const { el } = mount(aliases);
    const labels = () => [...el.querySelectorAll(".sw-arrow-label")].map((n) => n.textContent);
    const hint = (t) => el.querySelector(`.sw-tensor[data-tensor="${t}"] .sw-click-hint`).textContent;
    expect(labels()).toEqual(["d0 +4", "d1 +1"]);
    expect(hint("t1")).toBe("click: show its strides");
    el.querySelector('.sw-tensor[data-tensor="t1"]').dispatchEvent(new MouseEvent("click", { bubbles: true }));
    expect(labels()).toEqual(["d0 +1", "d1 +4"]);
    expect(el.querySelector('.sw-tensor[data-tensor="t1"]').classList.contains("sw-active")).toBe(true);
    expect(hint("t1")).toBe("its strides are drawn");
    hover(lcell(el, "t2", 0, 0));
    el.querySelector(".sw-root").dispatchEvent(new MouseEvent("mouseleave"));
    expect(labels()).toEqual(["d0 +1", "d1 +4"]);
  });

  it("draws different storages separately (a clone is not a view)", () => {
    const { el } = mount(copies);
    const storages = el.querySelectorAll(".sw-storage-block");
    expect(storages.length).toBe(2);
    expect(storages[1].querySelector('.sw-tensor[data-tensor="t1"]')).not.toBeNull();
  });

  it("lays a 4-D tensor out as N×C panels of H×W, labelled, with the facts in one line + details", () => {
    const { el } = mount(hd);
    const panels = [...el.querySelectorAll(".sw-panel")].map((p) => [p.querySelector(".sw-slice-label").textContent, p.closest(".sw-panel-row").dataset.row, p.dataset.col]);
    expect(panels).toEqual([
      ["h[0, 0, :, :]", "0", "0"],
      ["h[0, 1, :, :]", "0", "1"],
      ["h[0, 2, :, :]", "0", "2"],
      ["h[1, 0, :, :]", "1", "0"],
      ["h[1, 1, :, :]", "1", "1"],
      ["h[1, 2, :, :]", "1", "2"],
    ]);
    expect(el.querySelector(".sw-panel-axes").textContent).toBe("panels — a group per index of dim 0 · across it dim 1 · each panel: dims 2, 3");
    expect(el.querySelector(".sw-facts-line").textContent).toBe("shape (2, 3, 4, 5) · strides (60, 20, 5, 1) · offset 0 · int64 · contiguous");
    const details = el.querySelector(".sw-facts details").textContent;
    expect(details).toContain("(60, 20, 5, 1) elements");
    expect(details).toContain("✓ C-contiguous");
    expect(details).toContain("channels-last"); // 4-D: the flag matters
    expect(el.querySelector(".sw-explain").textContent).toBe(hd.tensors[0].layout.explain);
  });

  it("names only the flags that matter for the ndim", () => {
    const { el } = mount(aliases);
    expect(el.querySelector(".sw-facts details").textContent).not.toContain("channels-last");
    const fiveD = mount(five).el.querySelector(".sw-flags").textContent;
    expect(fiveD).toContain("channels-last-3d");
    expect(el.querySelector(".sw-summary").title).toContain("shape:strides +offset");
  });

  it("5-D: a slice selector picks the outer index; the panels follow", () => {
    const { el } = mount(five);
    const labels = () => [...el.querySelectorAll(".sw-panel .sw-slice-label")].map((n) => n.textContent);
    expect(labels()).toEqual(["f[0, 0, 0, :, :]", "f[0, 0, 1, :, :]", "f[0, 1, 0, :, :]", "f[0, 1, 1, :, :]"]);
    const select = el.querySelector(".sw-slice-select");
    expect([...select.options].map((o) => o.textContent)).toEqual(["0", "1"]);
    select.value = "1";
    select.dispatchEvent(new Event("change"));
    expect(labels()).toEqual(["f[1, 0, 0, :, :]", "f[1, 0, 1, :, :]", "f[1, 1, 0, :, :]", "f[1, 1, 1, :, :]"]);
    // the cells of the chosen panels carry their own storage addresses (brute force: arange)
    for (const cell of el.querySelectorAll(".sw-lcell")) {
      const slice = five.tensors[0].logical.slices[Number(cell.dataset.slice)];
      expect(slice.lead[0]).toBe(1);
      expect(Number(cell.dataset.addr)).toBe(slice.addr[Number(cell.dataset.r)][Number(cell.dataset.c)]);
    }
  });

  it("3-D with more leading slices than the scene lists: any slice can be picked, with Python's addresses and values", () => {
    const { el } = mount(deep);
    const listed = new Set(deep.tensors[0].logical.slices.filter((s) => s.kind === "slice").map((s) => s.lead[0]));
    const reference = new Map(deepAll.tensors[0].logical.slices.map((s) => [s.lead[0], s]));
    for (const i of [7, 8]) {
      expect(listed.has(i)).toBe(false);
      const input = el.querySelector(".sw-slice-index");
      expect(input.max).toBe("9");
      input.value = String(i);
      el.querySelector(".sw-slice-show").click();
      const picked = el.querySelector(".sw-picked");
      expect(picked.querySelector(".sw-slice-label").textContent).toBe(`d[${i}, :, :] (picked)`);
      // addresses and values equal what build_scene lists when it lists every slice
      const want = reference.get(i);
      const cellsOf = [...picked.querySelectorAll(".sw-lcell")];
      expect(cellsOf.map((c) => Number(c.dataset.addr))).toEqual(want.addr.flat());
      const storage = deep.storages[0];
      const values = want.addr.flat().map((a) => storage.cells.text[storage.cells.index.indexOf(a)]);
      expect([...picked.querySelectorAll(".sw-cell-text")].map((t) => t.textContent)).toEqual(values);
      expect(picked.querySelector(".sw-picked-note")).toBeNull();
      // the picked cells link to the storage like any other
      hover(cellsOf[5]);
      expect(scell(el, "s0", want.addr.flat()[5]).classList.contains("sw-hl")).toBe(true);
    }
  });

  it("a picked slice outside the storage window says its values are not in the picture", () => {
    const { el } = mount(meta);
    const input = el.querySelector(".sw-slice-index");
    input.value = "500";
    input.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter" }));
    const picked = el.querySelector(".sw-picked");
    expect(picked.querySelector(".sw-picked-note").textContent).toContain("not in this picture");
    const { strides, offset } = meta.tensors[0].layout;
    const slice = meta.tensors[0].logical.slices[0];
    const want = slice.rows.flatMap((r) => slice.cols.map((c) => (r === null || c === null ? null : offset + 500 * strides[0] + r * strides[1] + c * strides[2])));
    expect([...picked.querySelectorAll(".sw-lcell")].map((c) => Number(c.dataset.addr))).toEqual(want.filter((a) => a !== null));
    const again = el.querySelector(".sw-slice-index"); // the picked slice redrew the widget
    expect(again.value).toBe("500");
    again.value = "1000";
    again.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter" }));
    expect(el.querySelector(".sw-slice-error").textContent).toContain("0 to its dim's size − 1");
    expect(el.querySelector(".sw-picked .sw-slice-label").textContent).toBe("m[500, :, :] (picked)");
  });

  it("collapses untouched runs of a huge meta tensor into gaps and shows indices, not values", () => {
    const { el } = mount(meta);
    const gaps = [...el.querySelectorAll(".sw-gap-label")].map((n) => n.textContent);
    expect(gaps.length).toBeGreaterThan(0);
    expect(gaps[0]).toMatch(/^⋯ [\d,]+ cells$/);
    expect(el.querySelector(".sw-gap-box title").textContent).toMatch(/^⋯ [\d,]+ cells (not shown|untouched) \[/);
    expect(el.querySelectorAll("[data-cell]").length).toBe(meta.storages[0].cells.index.length);
    expect(el.querySelector(".sw-storage .sw-index-in-cell").textContent).toBe("0");
    const ellipses = [...el.querySelectorAll(".sw-index-label")].filter((n) => n.textContent === "⋯");
    expect(ellipses.length).toBeGreaterThan(0);
  });
});

describe("values", () => {
  it("uses a colour scale when the values do not fit, ordered by value", () => {
    const { el } = mount(wide);
    expect(el.querySelectorAll(".sw-storage .sw-cell-text").length).toBe(0);
    const fills = [...el.querySelectorAll("[data-cell]")].map((n) => n.getAttribute("style"));
    expect(fills.every((f) => /^fill:rgb\(/.test(f))).toBe(true);
    expect(new Set(fills).size).toBe(4);
    expect(el.querySelector(".sw-scale-note").textContent).toContain("colour scale");
    // the hover formula still shows the exact text
    hover(scell(el, "s0", 3));
    expect(el.querySelector(".sw-status").textContent).toBe(`storage[3] = ${wide.storages[0].cells.text[3]} ← w[3]`);
  });

  it("lists tensors the widget no longer holds", () => {
    const { el } = mount({ ...aliases, released: ["gone<b>"] });
    expect(el.querySelector(".sw-released").textContent).toBe(
      "gone<b>: a snapshot — the tensor was a temporary and is gone; the widget holds no reference to it",
    );
    expect(el.querySelector("b")).toBeNull();
  });
});

describe("cells show values / storage index / both", () => {
  it("toggles every grid between values, addresses and both, and says what the numbers are", () => {
    const { el } = mount(aliases);
    const xt = () => el.querySelector('.sw-tensor[data-tensor="t1"]');
    const caption = () => el.querySelector(".sw-caption").textContent;
    // both (default): values, the storage index under each storage cell, "@address" in logical cells
    expect(caption()).toBe("cells show values; small numbers are storage indices; tensor cells: value over @address");
    const addresses = [...xt().querySelectorAll(".sw-addr-text")].map((n) => n.textContent);
    expect(addresses).toEqual([...xt().querySelectorAll(".sw-lcell")].map((n) => `@${n.dataset.addr}`));
    // "value over @address": in each logical cell the value's baseline is above its address's
    const values = [...xt().querySelectorAll(".sw-cell-text")];
    const addressTexts = [...xt().querySelectorAll(".sw-addr-text")];
    expect(values.length).toBe(addressTexts.length);
    values.forEach((value, i) => expect(Number(value.getAttribute("y"))).toBeLessThan(Number(addressTexts[i].getAttribute("y"))));
    const press = (mode) => el.querySelector(`.sw-mode-button[data-mode="${mode}"]`).dispatchEvent(new MouseEvent("click", { bubbles: true }));
    press("values");
    expect(caption()).toBe("cells show values");
    expect(el.querySelectorAll(".sw-addr-text, .sw-cell-index").length).toBe(0);
    expect(el.querySelector('.sw-mode-button[data-mode="values"]').getAttribute("aria-checked")).toBe("true");
    press("index");
    expect(caption()).toBe("cells show storage indices; tensor cells: the @address each reads");
    expect(xt().querySelectorAll(".sw-cell-text").length).toBe(0);
    expect([...xt().querySelectorAll(".sw-addr-text")].map((n) => n.textContent)).toEqual(addresses);
    const storageTexts = [...el.querySelectorAll(".sw-storage .sw-index-in-cell")].map((n) => n.textContent);
    expect(storageTexts).toEqual(aliases.storages[0].cells.index.map(String));
  });
});

describe("hover", () => {
  it("a logical cell draws its index walk on the storage; leaving restores the arrows", () => {
    const { el } = mount(aliases);
    hover(lcell(el, "t2", 2, 1)); // cols[2,1] = storage[0 + 2·4 + 1·2]
    const hops = [...el.querySelectorAll(".sw-walk")];
    expect(hops.length).toBe(2);
    expect(el.querySelector(".sw-status .sw-walk-text").textContent).toBe("walk: cols[2,1]: start at the offset 0 +2·4 (dim 0) → 8 +1·2 (dim 1) → 10");
    expect(el.querySelector(".sw-status").textContent.startsWith("cols[2,1] → storage[off + 2·s0 + 1·s1]")).toBe(true);
    expect(el.querySelector(".sw-arrow-legend").textContent).toContain("stride arrows of x"); // the legend stays
    el.querySelector(".sw-root").dispatchEvent(new MouseEvent("mouseleave"));
    expect(el.querySelectorAll(".sw-walk").length).toBe(0);
    expect(el.querySelectorAll(".sw-arrow").length).toBe(2);
  });

  it("dims the unlinked cells while hovering", () => {
    const { el } = mount(aliases);
    hover(lcell(el, "t0", 1, 2));
    expect(el.querySelector(".sw-root").classList.contains("sw-hovering")).toBe(true);
    el.querySelector(".sw-root").dispatchEvent(new MouseEvent("mouseleave"));
    expect(el.querySelector(".sw-root").classList.contains("sw-hovering")).toBe(false);
  });

  it("logical -> storage: highlights the storage cell and shows the address formula", () => {
    const { el, model } = mount(aliases);
    hover(lcell(el, "t0", 1, 2));
    expect(scell(el, "s0", 6).classList.contains("sw-hl")).toBe(true);
    expect(el.querySelector(".sw-status").textContent.split("\n")[0]).toBe(
      "x[1,2] → storage[off + 1·s0 + 2·s1] = storage[0 + 1·4 + 2·1] = storage[6] = 6.",
    );
    expect(model.state.hovered).toEqual({ tensor: "t0", name: "x", index: [1, 2], storage: "s0", cell: 6 });
    expect(model.save_changes).toHaveBeenCalledTimes(1);
  });

  it("logical -> aliasing cells of the other tensors over the same storage", () => {
    const { el } = mount(aliases);
    hover(lcell(el, "t0", 1, 2));
    const keys = highlighted(el).map((n) => n.dataset.key ?? `cell ${n.dataset.cell}`);
    // storage[6] is x[1,2], xt[2,1] and cols[1,1]
    expect(keys.sort()).toEqual(["cell 6", "t0:0:1:2", "t1:0:2:1", "t2:0:1:1"]);
  });

  it("storage -> every logical cell that reads it, across tensors", () => {
    const { el, model } = mount(expand);
    hover(scell(el, "s0", 2));
    const keys = highlighted(el).map((n) => n.dataset.key).filter(Boolean);
    expect(keys.sort()).toEqual(["t0:0:0:2", "t0:0:1:2", "t0:0:2:2"]);
    expect(el.querySelector(".sw-status").textContent).toBe("storage[2] = 2. ← row[0,2], row[1,2], row[2,2]");
    expect(model.state.hovered).toEqual({ storage: "s0", cell: 2 });
  });

  it("moving on clears the old highlight; leaving clears all and sends null", () => {
    const { el, model } = mount(aliases);
    hover(lcell(el, "t0", 0, 0));
    hover(lcell(el, "t0", 2, 3));
    expect(scell(el, "s0", 0).classList.contains("sw-hl")).toBe(false);
    expect(scell(el, "s0", 11).classList.contains("sw-hl")).toBe(true);
    el.querySelector(".sw-root").dispatchEvent(new MouseEvent("mouseleave"));
    expect(highlighted(el)).toEqual([]);
    expect(model.state.hovered).toBeNull();
  });

  it("does not resend an unchanged hover", () => {
    const { el, model } = mount(aliases);
    hover(lcell(el, "t0", 0, 1));
    hover(lcell(el, "t0", 0, 1));
    expect(model.save_changes).toHaveBeenCalledTimes(1);
  });
});

describe("model changes", () => {
  it("redraws on a new scene (refresh from Python)", () => {
    const { el, model } = mount(aliases);
    model.set("scene", expand);
    expect(el.querySelectorAll(".sw-tensor").length).toBe(1);
    expect(el.querySelectorAll(".sw-root").length).toBe(1);
  });

  it("wrap: the trait re-wraps the grid and the input sets the trait", () => {
    const { el, model } = mount(aliases);
    const rowY = () => new Set([...el.querySelectorAll("[data-cell]")].map((n) => n.getAttribute("y"))).size;
    expect(rowY()).toBe(1); // 12 cells: one strip of memory
    model.set("wrap", 6);
    expect(rowY()).toBe(2);
    const input = el.querySelector("input.sw-wrap");
    expect(input.value).toBe("6");
    input.value = "12";
    input.dispatchEvent(new Event("change"));
    expect(model.state.wrap).toBe(12);
    expect(rowY()).toBe(1);
    input.value = "";
    input.dispatchEvent(new Event("change"));
    expect(model.state.wrap).toBeNull();
    expect(rowY()).toBe(1);
    const again = el.querySelector("input.sw-wrap");
    again.value = "4";
    again.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter" }));
    expect(model.state.wrap).toBe(4);
    expect(rowY()).toBe(3);
  });
});

describe("safety", () => {
  it("renders a tensor name with markup as text, never as HTML", () => {
    const { el } = mount(xss);
    expect(el.querySelector("img")).toBeNull();
    const name = xss.tensors[0].name;
    const names = [...el.querySelectorAll(".sw-name")].map((n) => n.textContent);
    expect(names).toContain(name);
    hover(lcell(el, "t0", 0, 2));
    expect(el.querySelector(".sw-status").textContent.startsWith(`${name}[2] → storage[`)).toBe(true);
    expect(el.querySelector("img")).toBeNull();
  });
});

describe("cleanup", () => {
  it("removes its DOM and every model listener", () => {
    const { el, model, cleanup } = mount(aliases);
    expect(model.listenerCount()).toBeGreaterThan(0);
    cleanup();
    expect(model.listenerCount()).toBe(0);
    expect(el.children.length).toBe(0);
  });

  it("stops reacting to the pointer after cleanup", () => {
    const { el, model, cleanup } = mount(aliases);
    const cell = lcell(el, "t0", 0, 0);
    cleanup();
    el.appendChild(cell);
    hover(cell);
    expect(model.save_changes).not.toHaveBeenCalled();
  });
});

// WCAG contrast of two colours given as "rgb(r,g,b)" or "#rrggbb" (the oracle: the WCAG formula).
function contrast(a, b) {
  const channels = (colour) =>
    colour.startsWith("#") ? [1, 3, 5].map((i) => parseInt(colour.slice(i, i + 2), 16)) : colour.match(/\d+/g).map(Number);
  const luminance = (colour) => {
    const [r, g, bl] = channels(colour).map((v) => {
      const c = v / 255;
      return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * bl;
  };
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}

describe("colour-scale cells", () => {
  it("keep their @address readable (>= 4.5:1) on every viridis fill", () => {
    const { el } = mount(wide);
    const filled = [...el.querySelectorAll(".sw-lcell[style]")];
    expect(filled.length).toBeGreaterThan(0);
    for (const cell of filled) {
      const fill = cell.getAttribute("style").replace("fill:", "");
      const box = { x: Number(cell.getAttribute("x")), w: Number(cell.getAttribute("width")), y: Number(cell.getAttribute("y")), h: Number(cell.getAttribute("height")) };
      const label = [...cell.parentNode.querySelectorAll(".sw-addr-text")].find((t) => {
        const x = Number(t.getAttribute("x"));
        const y = Number(t.getAttribute("y"));
        return x > box.x && x < box.x + box.w && y > box.y && y < box.y + box.h;
      });
      expect(label).toBeTruthy();
      const ink = (label.getAttribute("style") ?? "").replace("fill:", "");
      expect(ink).not.toBe("");
      expect(contrast(ink, fill)).toBeGreaterThanOrEqual(4.5);
    }
  });
});

describe("thinned panel grids", () => {
  // the oracle: build_scene with every slice listed (max_slices=48), the same view
  const reference = new Map(thinnedAll.tensors[0].logical.slices.map((s) => [JSON.stringify(s.lead), s]));
  const storage = thinnedAll.storages[0];
  const valueAt = (a) => storage.cells.text[storage.cells.index.indexOf(a)];
  const panelsOf = (el) =>
    [...el.querySelectorAll(".sw-panel")].map((panel) => ({
      label: panel.querySelector(".sw-slice-label").textContent,
      filled: panel.classList.contains("sw-panel-filled"),
      addr: [...panel.querySelectorAll(".sw-lcell")].map((c) => Number(c.dataset.addr)),
      text: [...panel.querySelectorAll(".sw-cell-text")].map((t) => t.textContent),
    }));
  const expectGrid = (el, outer) => {
    const panels = panelsOf(el);
    const labels = [];
    for (let i = 0; i < 4; i += 1) for (let j = 0; j < 2; j += 1) labels.push(`x[${outer}, ${i}, ${j}, :, :]`);
    expect(panels.map((p) => p.label)).toEqual(labels);
    for (const [k, panel] of panels.entries()) {
      const want = reference.get(JSON.stringify([outer, Math.floor(k / 2), k % 2]));
      expect(panel.addr).toEqual(want.addr.flat());
      expect(panel.text).toEqual(want.addr.flat().map(valueAt));
    }
    expect(el.querySelector(".sw-panel-missing")).toBeNull();
    return panels;
  };

  it("draw every position of the grid: the slice the scene left out is drawn, and marked", () => {
    const { el } = mount(thinned);
    const panels = expectGrid(el, 0);
    expect(panels.filter((p) => p.filled).map((p) => p.label)).toEqual(["x[0, 3, 1, :, :]"]);
    expect(el.querySelector(".sw-panel-filled .sw-filled-note").textContent).toBe("drawn from storage");
    expect(el.querySelector(".sw-filled-legend").textContent).toContain("slices the scene did not list");
  });

  it("say which slices the scene left out, in the scene's own words", () => {
    const { el } = mount(thinned);
    const gaps = thinned.tensors[0].logical.slices.filter((s) => s.kind === "gap");
    expect([...el.querySelectorAll(".sw-left-out")].map((n) => n.textContent)).toEqual(gaps.map((g) => `⋯ ${g.count} slices not shown: ${g.text}`));
    expect(el.querySelector(".sw-left-out").textContent).toContain("x[0, 3, 1, :, :], x[1:5, :, :, :, :]");
  });

  it("the picker offers every index of the outer dim; an unlisted one draws its real values", () => {
    const { el } = mount(thinned);
    const select = el.querySelector(".sw-slice-select");
    expect([...select.options].map((o) => Number(o.value))).toEqual([0, 1, 2, 3, 4, 5]);
    expect([...select.options].filter((o) => o.classList.contains("sw-unlisted")).map((o) => Number(o.value))).toEqual([1, 2, 3, 4]);
    for (const outer of [2, 5, 4]) {
      const current = el.querySelector(".sw-slice-select");
      current.value = String(outer);
      current.dispatchEvent(new Event("change"));
      expect(el.querySelector(".sw-slice-select").value).toBe(String(outer));
      const panels = expectGrid(el, outer);
      expect(panels.every((p) => p.filled)).toBe(outer !== 5);
      // a drawn unlisted cell links to the storage like any other
      const cell = el.querySelector(".sw-panel-filled .sw-lcell");
      hover(cell);
      expect(el.querySelector(`.sw-scell[data-cell="${cell.dataset.addr}"]`).classList.contains("sw-hl")).toBe(true);
    }
  });
});
