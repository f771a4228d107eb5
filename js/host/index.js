// Host for a standard anywidget ES module in a static HTML page (`python -m stridewidget --html`):
// no kernel, no require.js, no widget manager.  The page holds, per view, a JSON payload
//   <script type="application/vnd.stridewidget.view+json">{"esm": "...", "state": {...}}</script>
// inside a <div class="stridewidget-view">; this script imports each module from a blob: URL (the
// way anywidget itself loads `_esm`), gives it a PageModel over the state and calls its render.
// The ES module is the package's own bundle, written into the page by Python; nothing in the state
// is executed or inserted as HTML.
import { PageModel } from "./model.js";

export { PageModel };

const VIEW_SELECTOR = 'script[type="application/vnd.stridewidget.view+json"]';

async function importSource(source) {
  const url = URL.createObjectURL(new Blob([source], { type: "text/javascript" }));
  try {
    return await import(/* @vite-ignore */ url);
  } finally {
    URL.revokeObjectURL(url);
  }
}

/**
 * Render one anywidget module into `el` with a page-held model; returns the model and cleanup.
 * @param {HTMLElement} el
 * @param {{render: Function, initialize?: Function}} widget the module's default export
 * @param {Record<string, unknown>} state
 */
export async function mountWidget(el, widget, state) {
  if (typeof widget?.render !== "function") {
    throw new TypeError("stridewidget page: the widget module has no default export with render()");
  }
  const model = new PageModel(state);
  const initCleanup = await widget.initialize?.({ model });
  const renderCleanup = await widget.render({ model, el });
  const cleanup = () => {
    if (typeof renderCleanup === "function") renderCleanup();
    if (typeof initCleanup === "function") initCleanup();
  };
  return { model, cleanup };
}

/** Mount every view payload found under `root`; a failing view shows its error as text. */
export async function mountAll(root = document) {
  const mounted = [];
  for (const payload of root.querySelectorAll(VIEW_SELECTOR)) {
    const el = document.createElement("div");
    payload.after(el);
    try {
      const { esm, state } = JSON.parse(payload.textContent);
      const module = await importSource(esm);
      mounted.push(await mountWidget(el, module.default, state));
    } catch (error) {
      el.className = "stridewidget-error";
      el.textContent = `stridewidget: this view could not be drawn (${error})`;
      console.error(error);
    }
  }
  return mounted;
}

if (typeof document !== "undefined" && document.querySelector(VIEW_SELECTOR)) {
  mountAll().then((mounted) => {
    // For scripts and tests that read the state the page's controls changed.
    globalThis.stridewidgetViews = mounted.map(({ model }) => model);
  });
}
