// The model a standard anywidget module talks to (get/set/on/off/save_changes/send), held in the
// page itself: a static page has no kernel, so the state lives here and changes stay local.
// Events follow anywidget's (Backbone's) contract: set(k, v) with a new value emits "change:k",
// then "change"; a handler registered for "change:k" gets no arguments it relies on.

/** Widget state of one view in a page without a kernel. */
export class PageModel {
  /** @param {Record<string, unknown>} state the widget's synced traits (JSON) */
  constructor(state) {
    this.state = { ...state };
    this.handlers = new Map();
    /** No kernel behind this model: a view that needs Python to lay out again says so. */
    this.kernelFree = true;
  }

  get(name) {
    return this.state[name];
  }

  set(name, value) {
    if (Object.is(this.state[name], value)) return;
    this.state[name] = value;
    this.emit(`change:${name}`, this, value);
    this.emit("change", this);
  }

  on(event, handler) {
    const list = this.handlers.get(event) ?? [];
    list.push(handler);
    this.handlers.set(event, list);
  }

  off(event, handler) {
    if (event === undefined) {
      this.handlers.clear();
      return;
    }
    if (handler === undefined) {
      this.handlers.delete(event);
      return;
    }
    this.handlers.set(event, (this.handlers.get(event) ?? []).filter((h) => h !== handler));
  }

  // No kernel to send to: a change is already applied locally by set().
  save_changes() {}

  send() {}

  emit(event, ...args) {
    for (const handler of [...(this.handlers.get(event) ?? [])]) handler(...args);
  }

  /** How many handlers are registered (tests check that cleanup removes them all). */
  listenerCount() {
    let count = 0;
    for (const list of this.handlers.values()) count += list.length;
    return count;
  }
}
