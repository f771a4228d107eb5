// The playground's DOM against a fake anywidget model: edits sync and get their verdict at once,
// refusals keep the widget usable, presets load Python's settings, strings are text, cleanup
// removes everything.  The picture is Python's (js/fixtures/picture_playground*.json, written by
// js/fixtures/make_fixtures.py from sw.playground): painted as listed, with its setting (`drawn`).
// Oracles: torch's values of the views (the fixture's base is arange(24): value = storage index),
// brute force over the indices for the cells past the end.
import { afterEach, describe, expect, it } from "vitest";
import cases from "./cases.json";
import start from "../fixtures/picture_playground.json";
import broadcast from "../fixtures/picture_playground_broadcast.json";
import refused from "../fixtures/picture_playground_refused.json";
import { fakeModel } from "../widget/testing.js";
import widget, { codeText, pictureIsCurrent, staleText, verdict } from "./index.js";

afterEach(() => {
  document.body.replaceChildren();
});

const base = cases.bases.find((b) => b.name === "contiguous 4x6");

function setup(overrides = {}, { kernelFree = false } = {}) {
  const model = fakeModel({
    base_shape: [4, 6],
    base_strides: [6, 1],
    base_offset: 0,
    storage_size: 24,
    dtype: "int64",
    itemsize: 8,
    device: "cpu",
    size: [4, 6],
    stride: [6, 1],
    offset: 0,
    hovered: null,
    picture: start.picture,
    drawn: start.drawn,
    ...overrides,
  });
  if (kernelFree) model.kernelFree = true;
  const el = document.createElement("div");
  document.body.appendChild(el);
  const cleanup = widget.render({ model, el });
  return { model, el, cleanup };
}

/** What Python does on an edit: lay the picture out for the new setting and say which it is. */
function pythonDraws(model, fixture) {
  model.set("picture", fixture.picture);
  model.set("drawn", fixture.drawn);
}

const type = (input, value) => {
  input.value = value;
  input.dispatchEvent(new Event("input"));
};
/** The values the view's painted logical cells show, in row-major order. */
const viewValues = (el) =>
  [...el.querySelectorAll('.pg-picture g.sws-lcell[data-tensor="t1"]')].map((g) => g.querySelector("text.sws-role-v").textContent);
const expected = (stride) => Array.from({ length: 24 }, (_, k) => String(Math.floor(k / 6) * stride[0] + (k % 6) * stride[1]));

describe("playground DOM", () => {
  it("paints Python's picture of x itself and says so", () => {
    const { el, cleanup } = setup();
    expect(el.querySelector(".pg-message").textContent).toContain("This is x itself");
    expect(el.querySelector(".pg-code").textContent).toBe("torch.as_strided(x, size=(4, 6), stride=(6, 1), storage_offset=0)");
    expect(viewValues(el)).toEqual(expected([6, 1]));
    expect(el.querySelectorAll('.pg-picture g.sws-scell[data-storage="s0"]')).toHaveLength(24);
    expect(el.querySelector(".pg-stale").textContent).toBe("");
    expect(el.querySelectorAll(".pg-dim")).toHaveLength(2);
    cleanup();
  });

  it("a stride edit syncs and names the op at once; the picture follows Python's", () => {
    const { el, model, cleanup } = setup();
    type(el.querySelector('.pg-dim[data-dim="1"] .pg-stride'), "0");
    expect(model.state.stride).toEqual([6, 0]);
    expect(model.save_changes).toHaveBeenCalled();
    expect(el.querySelector(".pg-op").textContent).toBe("x[:, 0:1].expand(4, 6)");
    expect(el.querySelector(".pg-overlap").textContent).toContain("storage[0] is read by (0, 0), (0, 1), (0, 2), (0, 3) and 2 more");
    // until Python answers, the picture says it is the old setting's
    expect(el.querySelector(".pg-stale").textContent).toContain("stride=(6, 1)");
    expect(viewValues(el)).toEqual(expected([6, 1]));
    pythonDraws(model, broadcast);
    expect(el.querySelector(".pg-stale").textContent).toBe("");
    expect(viewValues(el)).toEqual(expected([6, 0]));
    cleanup();
  });

  it("refuses an out-of-bounds stride with Python's message; Python's picture has the cells past the end", () => {
    const { el, model, cleanup } = setup();
    type(el.querySelector('.pg-dim[data-dim="0"] .pg-stride'), "7");
    const message = el.querySelector(".pg-message");
    expect(message.classList.contains("pg-refused")).toBe(true);
    expect(message.textContent).toContain(refused.error);
    expect(el.querySelector(".pg-escape").textContent).toBe(
      "3 of the 24 logical indices map past the end of the storage (element 23 is its last).",
    );
    pythonDraws(model, refused);
    expect(el.querySelector(".pg-stale").textContent).toBe("");
    expect(viewValues(el)).toEqual([]); // refused: no view drawn
    expect(el.querySelectorAll('.pg-picture g.sws-scell[data-storage="s0"]')).toHaveLength(24);
    // the cells past the end: exactly the addresses >= 24 that some index reaches (brute force)
    const escaping = new Set();
    for (let i = 0; i < 4; i += 1) for (let j = 0; j < 6; j += 1) if (i * 7 + j >= 24) escaping.add(i * 7 + j);
    const phantoms = [...el.querySelectorAll(".pg-picture g.sws-phantom")].map((g) => Number(g.dataset.cell));
    expect(phantoms).toEqual([...escaping].sort((a, b) => a - b));
    type(el.querySelector('.pg-dim[data-dim="0"] .pg-stride'), "6");
    expect(el.querySelector(".pg-message").classList.contains("pg-refused")).toBe(false);
    cleanup();
  });

  it("in a page with no kernel the verdict still follows the edit and the picture says it needs a kernel", () => {
    const { el, cleanup } = setup({}, { kernelFree: true });
    type(el.querySelector('.pg-dim[data-dim="1"] .pg-stride'), "0");
    expect(el.querySelector(".pg-op").textContent).toBe("x[:, 0:1].expand(4, 6)");
    const stale = el.querySelector(".pg-stale").textContent;
    expect(stale).toContain("needs a running kernel");
    expect(stale).toContain("stride=(6, 1)");
    expect(el.querySelector(".pg-root").dataset.pictureCurrent).toBe("false");
    type(el.querySelector('.pg-dim[data-dim="1"] .pg-stride'), "1"); // back to the drawn setting
    expect(el.querySelector(".pg-stale").textContent).toBe("");
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

  it("hover on a painted logical cell lights the storage cell it reads and reports it", () => {
    const { el, model, cleanup } = setup();
    pythonDraws(model, broadcast);
    const cell = el.querySelector('.pg-picture g.sws-lcell[data-tensor="t1"][data-r="2"][data-c="3"]');
    cell.querySelector("rect").dispatchEvent(new MouseEvent("mouseover", { bubbles: true }));
    const lit = [...el.querySelectorAll(".pg-picture g.sws-scell.sw-hl")].map((g) => Number(g.dataset.cell));
    expect(lit).toEqual([12]); // view[2, 3] = storage[0 + 2·6 + 3·0]
    expect(model.state.hovered).toMatchObject({ index: [2, 3] });
    expect(el.querySelector(".pg-status").textContent).toContain("storage[12]");
    cleanup();
  });

  it("shows strings from Python as text, never as markup", () => {
    const { el, cleanup } = setup({ dtype: "<img src=x onerror=alert(1)>", base_shape: [4, "<b>6</b>"] });
    expect(el.querySelector("img")).toBeNull();
    expect(el.querySelector("b")).toBeNull();
    expect(el.querySelector(".pg-title").textContent).toContain("<img src=x onerror=alert(1)>");
    cleanup();
  });

  it("cleanup removes the DOM and every listener", () => {
    const { el, model, cleanup } = setup();
    expect(model.listenerCount()).toBe(5);
    cleanup();
    expect(model.listenerCount()).toBe(0);
    expect(el.children).toHaveLength(0);
  });

  it("codeText and verdict are pure", () => {
    expect(codeText({ size: [3], stride: [2], offset: 1 })).toBe("torch.as_strided(x, size=(3,), stride=(2,), storage_offset=1)");
    const state = { baseShape: [4, 6], baseStrides: [6, 1], baseOffset: 0, storageSize: 24, size: [6, 4], stride: [1, 6], offset: 0 };
    expect(verdict(state).names[0]).toBe("x.t()");
    expect(verdict(state, "size of dim 0 is 1.5").refused).toMatch(/whole numbers \(size of dim 0 is 1.5\)/);
    expect(pictureIsCurrent({ size: [6, 4], stride: [1, 6], offset: 0 }, { size: [6, 4], stride: [1, 6], offset: 0 })).toBe(true);
    expect(pictureIsCurrent({ size: [6, 4], stride: [1, 6], offset: 1 }, { size: [6, 4], stride: [1, 6], offset: 0 })).toBe(false);
    expect(pictureIsCurrent({ size: [6], stride: [1], offset: 0 }, {})).toBe(false);
    expect(staleText({ size: [2], stride: [1], offset: 0 }, true)).toContain("storage_offset=0), the setting saved with this page");
  });
});

describe("edge bases", () => {
  it.each([
    ["a 0-d tensor", { base_shape: [], base_strides: [], storage_size: 1, size: [], stride: [] }],
    ["an empty storage", { base_shape: [0], base_strides: [1], storage_size: 0, size: [0], stride: [1] }],
    ["no picture yet", { picture: {}, drawn: {} }],
  ])("%s draws without errors and stays editable", (_, overrides) => {
    const { el, model, cleanup } = setup(overrides);
    expect(el.querySelector(".pg-message").classList.contains("pg-refused")).toBe(false);
    el.querySelector(".pg-add").click();
    expect(model.state.size.length).toBe(overrides.size ? overrides.size.length + 1 : 3);
    cleanup();
  });
});
