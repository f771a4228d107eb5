// The playground's DOM against a fake anywidget model: edits redraw and sync, refusals keep the
// widget usable, presets load Python's settings, strings are text, cleanup removes everything.
import { describe, expect, it } from "vitest";
import cases from "./cases.json";
import { fakeModel } from "../widget/testing.js";
import widget, { codeText, verdict } from "./index.js";


const base = cases.bases.find((b) => b.name === "contiguous 4x6");

function setup(overrides = {}) {
  const model = fakeModel({
    base_shape: [4, 6],
    base_strides: [6, 1],
    base_offset: 0,
    storage_size: 24,
    dtype: "int64",
    itemsize: 8,
    device: "cpu",
    cell_text: Array.from({ length: 24 }, (_, i) => String(i)),
    cell_value: Array.from({ length: 24 }, (_, i) => i),
    size: [4, 6],
    stride: [6, 1],
    offset: 0,
    hovered: null,
    ...overrides,
  });
  const el = document.createElement("div");
  document.body.appendChild(el);
  const cleanup = widget.render({ model, el });
  return { model, el, cleanup };
}

const type = (input, value) => {
  input.value = value;
  input.dispatchEvent(new Event("input"));
};
const logicalTexts = (el) => [...el.querySelectorAll(".pg-view .sw-cell-text")].map((t) => t.textContent);

describe("playground DOM", () => {
  it("draws x itself and says so", () => {
    const { el, cleanup } = setup();
    expect(el.querySelector(".pg-message").textContent).toContain("This is x itself");
    expect(el.querySelector(".pg-code").textContent).toBe("torch.as_strided(x, size=(4, 6), stride=(6, 1), storage_offset=0)");
    expect(logicalTexts(el)).toEqual(Array.from({ length: 24 }, (_, i) => String(i)));
    expect(el.querySelectorAll(".pg-dim")).toHaveLength(2);
    cleanup();
  });

  it("a stride edit syncs, redraws and names the op", () => {
    const { el, model, cleanup } = setup();
    type(el.querySelector('.pg-dim[data-dim="1"] .pg-stride'), "0");
    expect(model.state.stride).toEqual([6, 0]);
    expect(model.save_changes).toHaveBeenCalled();
    expect(el.querySelector(".pg-op").textContent).toBe("x[:, 0:1].expand(4, 6)");
    expect(el.querySelector(".pg-overlap").textContent).toContain("storage[0] is read by (0, 0), (0, 1), (0, 2), (0, 3) and 2 more");
    expect(logicalTexts(el)).toEqual(["0", "0", "0", "0", "0", "0", "6", "6", "6", "6", "6", "6", "12", "12", "12", "12", "12", "12", "18", "18", "18", "18", "18", "18"]);
    // each of the four storage elements read six times says by whom and how often ("V×6", not a
    // bare "×6"), after the base x that reads it once: too narrow for a piece each, run together
    expect([...el.querySelectorAll(".sw-storage .sw-count")].map((t) => t.textContent)).toEqual(["xV×6", "xV×6", "xV×6", "xV×6"]);
    cleanup();
  });

  it("refuses an out-of-bounds stride with Python's message and stays usable", () => {
    const { el, model, cleanup } = setup();
    type(el.querySelector('.pg-dim[data-dim="0"] .pg-stride'), "7");
    const message = el.querySelector(".pg-message");
    expect(message.classList.contains("pg-refused")).toBe(true);
    expect(message.textContent).toContain(
      "as_strided: index (3, 3) maps to storage element 24, but the storage has only 24 elements (valid: 0..23)",
    );
    expect(el.querySelector(".pg-escape").textContent).toBe(
      "3 of the 24 logical indices map past the end of the storage (element 23 is its last).",
    );
    expect(el.querySelector(".pg-view")).toBeNull();
    expect(el.querySelectorAll(".sw-scell")).toHaveLength(24); // the storage is still drawn
    // phantom cells past the end: exactly the addresses >= 24 that some index reaches (brute force)
    const { size, stride, offset } = model.state;
    const escaping = new Set();
    for (let i = 0; i < size[0]; i += 1) {
      for (let j = 0; j < size[1]; j += 1) {
        const address = offset + i * stride[0] + j * stride[1];
        if (address >= 24) escaping.add(address);
      }
    }
    const phantoms = [...el.querySelectorAll(".sw-phantom")].map((n) => Number(n.dataset.phantom));
    expect(phantoms).toEqual([...escaping].sort((a, b) => a - b));
    expect(el.querySelector(".pg-phantom-caption").textContent).toContain("past the end of the storage");
    type(el.querySelector('.pg-dim[data-dim="0"] .pg-stride'), "1");
    type(el.querySelector('.pg-dim[data-dim="1"] .pg-stride'), "4");
    expect(model.state.stride).toEqual([1, 4]);
    expect(el.querySelector(".pg-message").classList.contains("pg-refused")).toBe(false);
    expect(el.querySelector(".sw-phantom")).toBeNull(); // in bounds again: no phantoms
    cleanup();
  });

  it("keeps a non-number in the browser and refuses it", () => {
    const { el, model, cleanup } = setup();
    const calls = model.save_changes.mock.calls.length;
    const input = el.querySelector(".pg-offset");
    type(input, "");
    expect(model.save_changes.mock.calls.length).toBe(calls);
    expect(model.state.offset).toBe(0);
    expect(input.getAttribute("aria-invalid")).toBe("true");
    expect(el.querySelector(".pg-message").textContent).toContain("must be whole numbers (storage offset is empty)");
    type(input, "2");
    expect(model.state.offset).toBe(2);
    expect(el.querySelector(".pg-message").textContent).toContain("index (3, 4) maps to storage element 24");
    cleanup();
  });

  it("adds and removes dims", () => {
    const { el, model, cleanup } = setup();
    el.querySelector(".pg-add").click();
    expect(model.state.size).toEqual([4, 6, 1]);
    expect(el.querySelectorAll(".pg-dim")).toHaveLength(3);
    el.querySelector('.pg-dim[data-dim="0"] .pg-remove').click();
    expect(model.state.size).toEqual([6, 1]);
    expect(model.state.stride).toEqual([1, 1]);
    expect(el.querySelectorAll(".pg-dim")).toHaveLength(2);
    cleanup();
  });

  it.each(Object.entries(base.presets))("preset %s loads Python's setting and verdict", (id, expected) => {
    const { el, model, cleanup } = setup();
    el.querySelector(`button[data-preset="${id}"]`).click();
    expect([model.state.size, model.state.stride, model.state.offset]).toEqual([expected.size, expected.stride, expected.offset]);
    expect(el.querySelector(".pg-message").classList.contains("pg-refused")).toBe(expected.refusal !== null);
    expect(el.querySelector(".pg-note").textContent.length).toBeGreaterThan(20);
    expect([...el.querySelectorAll(".pg-stride")].map((i) => Number(i.value))).toEqual(expected.stride);
    cleanup();
  });

  it("follows settings changed from Python, even in the input just edited", () => {
    const { el, model, cleanup } = setup();
    const stride = el.querySelector('.pg-dim[data-dim="0"] .pg-stride');
    stride.focus();
    type(stride, "9");
    expect(el.querySelector(".pg-message").classList.contains("pg-refused")).toBe(true);
    model.set("size", [6, 4]);
    model.set("stride", [1, 6]);
    expect(el.querySelector(".pg-op").textContent).toBe("x.t()");
    expect([...el.querySelectorAll(".pg-size")].map((i) => i.value)).toEqual(["6", "4"]);
    expect([...el.querySelectorAll(".pg-stride")].map((i) => i.value)).toEqual(["1", "6"]);
    cleanup();
  });

  it("hover on a logical cell highlights its storage cell and reports it", () => {
    const { el, model, cleanup } = setup({ size: [6, 4], stride: [1, 6] });
    const cell = el.querySelector('.pg-view .sw-lcell[data-r="1"][data-c="2"]');
    cell.dispatchEvent(new MouseEvent("mouseover", { bubbles: true }));
    expect(el.querySelector('.sw-scell[data-cell="13"]').classList.contains("sw-hl")).toBe(true);
    expect(model.state.hovered).toMatchObject({ index: [1, 2], cell: 13 });
    cleanup();
  });

  it("shows strings from Python as text, never as markup", () => {
    const { el, cleanup } = setup({ dtype: "<img src=x onerror=alert(1)>", cell_text: Array(24).fill("<b>1</b>") });
    expect(el.querySelector("img")).toBeNull();
    expect(el.querySelector("b")).toBeNull();
    expect(el.querySelector(".pg-title").textContent).toContain("<img src=x onerror=alert(1)>");
    cleanup();
  });

  it("cleanup removes the DOM and every listener", () => {
    const { el, model, cleanup } = setup();
    expect(model.listenerCount()).toBe(3);
    cleanup();
    expect(model.listenerCount()).toBe(0);
    expect(el.children).toHaveLength(0);
  });

  it("codeText and verdict are pure", () => {
    expect(codeText({ size: [3], stride: [2], offset: 1 })).toBe("torch.as_strided(x, size=(3,), stride=(2,), storage_offset=1)");
    const state = { baseShape: [4, 6], baseStrides: [6, 1], baseOffset: 0, storageSize: 24, size: [6, 4], stride: [1, 6], offset: 0 };
    expect(verdict(state).names[0]).toBe("x.t()");
    expect(verdict(state, "size of dim 0 is 1.5").refused).toMatch(/whole numbers \(size of dim 0 is 1.5\)/);
  });
});

describe("a window of a big storage", () => {
  it("draws the embedded window where x lives, the rest as gaps, with the right values", () => {
    const start = 5000; // 4-digit values fit in the cells as text
    const { el, cleanup } = setup({
      base_offset: start,
      storage_size: 100000,
      cell_start: start,
      cell_text: Array.from({ length: 32 }, (_, i) => String(start + i)),
      cell_value: Array.from({ length: 32 }, (_, i) => start + i),
      size: [2, 3],
      stride: [6, 1],
      offset: start + 1,
    });
    expect(el.querySelectorAll(".sw-scell")).toHaveLength(32);
    expect(el.querySelector(".sw-scell").getAttribute("data-cell")).toBe(String(start));
    expect(el.querySelectorAll(".sw-gap-box")).toHaveLength(2); // before and after the window
    expect(logicalTexts(el)).toEqual(["5001", "5002", "5003", "5007", "5008", "5009"]);
    cleanup();
  });
});

describe("edge bases", () => {
  it.each([
    ["a 0-d tensor", { base_shape: [], base_strides: [], storage_size: 1, cell_text: ["5."], cell_value: [5], size: [], stride: [] }],
    ["an empty storage", { base_shape: [0], base_strides: [1], storage_size: 0, cell_text: [], cell_value: [], size: [0], stride: [1] }],
    ["a meta tensor (no values)", { cell_text: [], cell_value: [] }],
  ])("%s draws without errors and stays editable", (_, overrides) => {
    const { el, model, cleanup } = setup(overrides);
    expect(el.querySelector(".pg-message").classList.contains("pg-refused")).toBe(false);
    el.querySelector(".pg-add").click();
    expect(model.state.size.length).toBe(overrides.size ? overrides.size.length + 1 : 3);
    cleanup();
  });
});
