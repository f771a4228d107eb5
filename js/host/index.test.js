// The page host: its model keeps anywidget's contract, and it draws the real widget with it.
import { afterEach, describe, expect, it, vi } from "vitest";
import aliases from "../fixtures/picture_aliases.json";
import widget from "../widget/widget.js";
import { mountAll, mountWidget, PageModel } from "./index.js";

afterEach(() => {
  document.body.replaceChildren();
});

describe("PageModel", () => {
  it("emits change:<name> then change on a new value, and nothing for the same value", () => {
    const model = new PageModel({ wrap: null });
    const calls = [];
    model.on("change:wrap", (m, value) => calls.push(["change:wrap", value]));
    model.on("change", () => calls.push(["change"]));
    model.set("wrap", 6);
    model.set("wrap", 6);
    expect(calls).toEqual([["change:wrap", 6], ["change"]]);
    expect(model.get("wrap")).toBe(6);
  });

  it("off removes one handler, every handler of an event, or all of them", () => {
    const model = new PageModel({});
    const first = vi.fn();
    const second = vi.fn();
    model.on("change:a", first);
    model.on("change:a", second);
    model.on("change:b", first);
    model.off("change:a", first);
    model.set("a", 1);
    expect([first.mock.calls.length, second.mock.calls.length]).toEqual([0, 1]);
    model.off("change:a");
    model.set("a", 2);
    expect(second.mock.calls.length).toBe(1);
    model.off();
    expect(model.listenerCount()).toBe(0);
  });

  it("does not share state with the object it was made from", () => {
    const state = { wrap: 3 };
    const model = new PageModel(state);
    model.set("wrap", 4);
    expect(state.wrap).toBe(3);
  });
});

describe("mountWidget", () => {
  it("paints the widget; a control that needs Python says it needs a kernel", async () => {
    const el = document.createElement("div");
    document.body.appendChild(el);
    const { model, cleanup } = await mountWidget(el, widget, { picture: aliases, wrap: null, hovered: null });
    const listed = JSON.stringify(aliases.items).match(/"sws-scell[^"]*"/g).length;
    expect(el.querySelectorAll("g.sws-scell").length).toBe(listed);
    const input = el.querySelector("input.sw-wrap");
    expect(input.disabled).toBe(true);
    expect(el.querySelector(".sw-needs-kernel").textContent).toMatch(/needs a kernel/);
    el.querySelector('.sw-mode-button[data-mode="index"]').click(); // the toggle needs no kernel
    expect(el.querySelector(".sw-root").classList.contains("sw-mode-index")).toBe(true);
    cleanup();
    expect(model.listenerCount()).toBe(0);
    expect(el.querySelector(".sw-root")).toBeNull();
  });

  it("calls initialize before render, and refuses a module without render", async () => {
    const order = [];
    const module = {
      initialize: ({ model }) => order.push(["initialize", model.get("x")]),
      render: ({ el }) => order.push(["render", el.tagName]),
    };
    await mountWidget(document.createElement("div"), module, { x: 1 });
    expect(order).toEqual([["initialize", 1], ["render", "DIV"]]);
    await expect(mountWidget(document.createElement("div"), {}, {})).rejects.toThrow(/render/);
  });
});

describe("mountAll", () => {
  it("shows a view it cannot draw as text, never as markup", async () => {
    const holder = document.createElement("div");
    const payload = document.createElement("script");
    payload.type = "application/vnd.stridewidget.view+json";
    payload.textContent = "<img src=x onerror=alert(1)>";  // not JSON
    holder.appendChild(payload);
    document.body.appendChild(holder);
    vi.spyOn(console, "error").mockImplementation(() => {});
    expect(await mountAll(holder)).toEqual([]);
    const error = holder.querySelector(".stridewidget-error");
    expect(error.textContent).toMatch(/could not be drawn/);
    expect(holder.querySelector("img")).toBeNull();
  });
});
