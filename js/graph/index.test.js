// The graph widget against the state stridewidget.graph.GraphWidget makes (js/fixtures/graph.json:
// a dynamic-batch transpose + reshape, its rows and the scene each selection draws).  A stand-in
// kernel answers a selection the way Python does: it sets that node's scene and `drawn`.
import { afterEach, describe, expect, it } from "vitest";
import fixture from "../fixtures/graph.json";
import { fakeModel } from "../widget/testing.js";
import graph, { breakPoints, captionText, nextIndex, scrollToShow } from "./index.js";

afterEach(() => {
  document.body.replaceChildren();
});

/** Mount the widget on a fake model; `kernel: true` answers selections like GraphWidget does. */
function mountGraph({ selected = 3, kernel = true } = {}) {
  const model = fakeModel({
    rows: fixture.rows, title: fixture.title, selected, drawn: selected,
    scene: fixture.scenes[String(selected)], picture: fixture.pictures[String(selected)],
  });
  if (kernel) {
    model.save_changes.mockImplementation(() => {
      const index = model.get("selected");
      model.set("scene", fixture.scenes[String(index)]);
      model.set("picture", fixture.pictures[String(index)]);
      model.set("drawn", index);
    });
  }
  const el = document.createElement("div");
  document.body.appendChild(el);
  const cleanup = graph.render({ model, el });
  return { model, el, cleanup };
}

const row = (el, i) => el.querySelector(`tr.sw-graph-row[data-index="${i}"]`);
// the painted picture names the tensors it draws (its title: "memory layout of a: <layout>; b: <layout>;
// both over storage s0")
const drawnNames = (el) =>
  el.querySelector(".sw-graph-picture svg.sws-picture").getAttribute("aria-label").replace("memory layout of ", "")
    .split("; ").filter((part) => part.includes(": ")).map((part) => part.slice(0, part.indexOf(": ")));
const paintedTexts = (el) => [...el.querySelectorAll(".sw-graph-picture svg.sws-picture text")].map((t) => t.textContent);
const paintedStorages = (el) => new Set([...el.querySelectorAll(".sw-graph-picture g.sws-scell")].map((g) => g.dataset.storage));
const key = (node, name) => node.dispatchEvent(new KeyboardEvent("keydown", { key: name, bubbles: true }));

describe("the table", () => {
  it("has one row per node, escaped, with the copy's reason under its op", () => {
    const { el } = mountGraph();
    const rows = el.querySelectorAll("tbody tr.sw-graph-row");
    expect(rows.length).toBe(fixture.rows.length);
    expect([...rows].map((r) => r.querySelector(".sw-graph-name").textContent)).toEqual(fixture.rows.map((r) => r.name));
    expect(row(el, 3).querySelector(".sw-graph-reason").textContent).toBe(`↳ ${fixture.rows[3].reason}`);
    expect(row(el, 3).dataset.kind).toBe("copy");
  });

  it("marks the selected row and keeps only it in the tab order", () => {
    const { el } = mountGraph();
    expect(row(el, 3).getAttribute("aria-selected")).toBe("true");
    expect([...el.querySelectorAll("tr.sw-graph-row")].map((r) => r.tabIndex)).toEqual([-1, -1, -1, 0, -1]);
  });

  it("shows strings from Python as text, never markup", () => {
    const evil = '<img src=x onerror="window.__pwned=1">';
    const rows = fixture.rows.map((r) => ({ ...r, name: evil, where: evil, reason: evil }));
    const model = fakeModel({ rows, title: evil, selected: null, drawn: null, scene: { storages: [], tensors: [] } });
    const el = document.createElement("div");
    graph.render({ model, el });
    expect(el.querySelector("img")).toBeNull();
    expect(el.querySelector(".sw-graph-title").textContent).toBe(evil);
  });
});

describe("selecting a node", () => {
  it("a click sends the row's position, and the kernel's scene draws that node beside its inputs", () => {
    const { el, model } = mountGraph();
    expect(drawnNames(el)).toEqual(["%reshape", "%transpose"]);
    row(el, 2).querySelector(".sw-graph-layout").dispatchEvent(new MouseEvent("click", { bubbles: true }));
    expect(model.save_changes).toHaveBeenCalledTimes(1);
    expect(model.get("selected")).toBe(2);
    expect(drawnNames(el)).toEqual(["%transpose", "%x"]);
    expect(el.querySelector(".sw-graph-caption").textContent).toBe("%transpose (view, aten.transpose) · beside its input %x");
    expect(el.querySelector(".sw-graph-caption").dataset.drawn).toBe("2");
  });

  it("a view is drawn over its input's storage strip, the copy over its own", () => {
    const { el } = mountGraph({ selected: 3 });
    expect(paintedStorages(el).size).toBe(2);
    row(el, 2).dispatchEvent(new MouseEvent("click", { bubbles: true }));
    expect(drawnNames(el)).toEqual(["%transpose", "%x"]);
    expect(paintedStorages(el).size).toBe(1);
  });

  it("symbolic layouts are drawn with their symbols", () => {
    const { el } = mountGraph({ selected: 2 });
    const symbolic = fixture.scenes["2"].tensors.map((t) => t.layout.symbolic);
    const headers = paintedTexts(el).filter((text) => symbolic.includes(text));
    expect(headers).toEqual(symbolic);
    expect(headers[0]).toMatch(/^float32 \((s\d+),4,3\):\(12,1,4\) .* drawn at \1=2$/);
  });

  it("works from the keyboard: arrows move the selection, Enter selects the focused row", () => {
    const { el, model } = mountGraph({ selected: 3 });
    key(row(el, 3), "ArrowUp");
    expect(model.get("selected")).toBe(2);
    expect(document.activeElement).toBe(row(el, 2));
    expect(drawnNames(el)).toEqual(["%transpose", "%x"]);
    key(row(el, 2), "Home");
    expect(model.get("selected")).toBe(0);
    key(row(el, 0), "End");
    expect(model.get("selected")).toBe(4);
    expect(el.querySelector(".sw-graph-caption").textContent).toBe("%output (output) has no single layout · beside its input %reshape");
    row(el, 1).focus();
    key(row(el, 1), "Enter");
    expect(model.get("selected")).toBe(1);
  });

  it("says it is drawing until the kernel's scene arrives", () => {
    const { el, model } = mountGraph({ kernel: false });
    row(el, 0).dispatchEvent(new MouseEvent("click", { bubbles: true }));
    expect(el.querySelector(".sw-graph-caption").textContent).toBe("drawing %x …");
    expect(drawnNames(el)).toEqual(["%reshape", "%transpose"]); // the old picture stays meanwhile
    model.set("scene", fixture.scenes["0"]);
    model.set("picture", fixture.pictures["0"]);
    model.set("drawn", 0);
    expect(el.querySelector(".sw-graph-caption").textContent).toBe("%x (input, x) · no inputs");
  });

  it("cleans up every listener", () => {
    const { model, cleanup } = mountGraph();
    expect(model.listenerCount()).toBeGreaterThan(0);
    cleanup();
    expect(model.listenerCount()).toBe(0);
  });
});

describe("helpers", () => {
  it("nextIndex clamps to the table and ignores other keys", () => {
    expect(nextIndex("ArrowDown", 4, 5)).toBe(4);
    expect(nextIndex("ArrowUp", 0, 5)).toBe(0);
    expect(nextIndex("ArrowDown", null, 5)).toBe(0);
    expect(nextIndex("PageDown", 2, 30)).toBe(12);
    expect(nextIndex("a", 2, 5)).toBeNull();
    expect(nextIndex("ArrowDown", 0, 0)).toBeNull();
  });

  it("captionText counts the inputs it could not draw", () => {
    const rowWithSym = fixture.rows[3];
    expect(captionText(rowWithSym, fixture.scenes["3"])).toBe(
      `%reshape (copy, aten.reshape) · beside its input %transpose · 1 input not drawn (no single layout, or past the first few) · copies: ${rowWithSym.reason}`,
    );
  });

  it("breakPoints keeps every character and breaks only after ':' and '/'", () => {
    const text = "(s0, 3, 4):(12, 4, 1) dir/file.py:12";
    const parts = breakPoints(text);
    expect(parts.join("")).toBe(text);
    expect(parts).toEqual(["(s0, 3, 4):", "(12, 4, 1) dir/", "file.py:", "12"]);
    expect(breakPoints("")).toEqual([""]);
  });

  it("scrollToShow scrolls only as far as the row needs, below the sticky header", () => {
    const wrap = { top: 100, bottom: 400 };
    expect(scrollToShow(wrap, { top: 200, bottom: 220 }, 20)).toBe(0); // in view
    expect(scrollToShow(wrap, { top: 410, bottom: 430 }, 20)).toBe(30); // below: up to its bottom
    expect(scrollToShow(wrap, { top: 90, bottom: 110 }, 20)).toBe(-30); // under the header
    expect(scrollToShow(wrap, { top: 500, bottom: 900 }, 20)).toBe(380); // taller: its top shows
  });
});

describe("layout cells", () => {
  it("wrap at <wbr> after ':' and '/', with the text unchanged", () => {
    const { el } = mountGraph();
    const cell = el.querySelector("tr.sw-graph-row[data-index='3'] .sw-graph-layout");
    expect(cell.textContent).toBe(fixture.rows[3].layout);
    expect(cell.querySelectorAll("wbr").length).toBe((fixture.rows[3].layout.match(/[:/]/g) ?? []).length);
  });
});
