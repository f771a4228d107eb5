// Test helpers: a stand-in for the anywidget model and a mounted widget.
import { vi } from "vitest";
import widget from "./widget.js";

/** Minimal anywidget model proxy: get/set/on/off/save_changes/send, set emits change:<key>. */
export function fakeModel(initial) {
  const state = { hovered: null, wrap: null, ...initial };
  const handlers = new Map();
  const emit = (name, ...args) => (handlers.get(name) ?? []).forEach((cb) => cb(...args));
  return {
    state,
    emit,
    get: (k) => state[k],
    set: (k, v) => {
      state[k] = v;
      emit(`change:${k}`);
    },
    on: (name, cb) => handlers.set(name, [...(handlers.get(name) ?? []), cb]),
    off: (name, cb) => handlers.set(name, (handlers.get(name) ?? []).filter((h) => h !== cb)),
    save_changes: vi.fn(),
    send: vi.fn(),
    listenerCount: () => [...handlers.values()].reduce((n, l) => n + l.length, 0),
  };
}

export function mount(picture, extra = {}) {
  const model = fakeModel({ picture, ...extra });
  const el = document.createElement("div");
  document.body.appendChild(el);
  const cleanup = widget.render({ model, el });
  return { model, el, cleanup };
}

export function hover(node) {
  node.dispatchEvent(new MouseEvent("mouseover", { bubbles: true }));
}
