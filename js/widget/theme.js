// Follow the host's colour scheme when the host states one (marimo sets `color-scheme` on its root
// and draws widgets in a shadow root, where theme classes on <body> cannot be selected).  Reads
// the computed `color-scheme` around the widget and records it as data-sw-scheme on the widget's
// root; js/widget/theme.css turns that into the light or dark palette.  Without a stated scheme the
// widget follows the OS.  Re-checked when the page's theme classes change.

function statedScheme(el) {
  const scheme = getComputedStyle(el).colorScheme ?? "";
  const words = scheme.split(/\s+/);
  if (words.includes("dark") && !words.includes("light")) return "dark";
  if (words.includes("light") && !words.includes("dark")) return "light";
  return null;
}

/** Keep root.dataset.swScheme in step with the scheme the host states around `el`; returns a stop function. */
export function followHostScheme(root, el) {
  const update = () => {
    const scheme = statedScheme(el);
    if (scheme) root.dataset.swScheme = scheme;
    else delete root.dataset.swScheme;
  };
  update();
  if (typeof MutationObserver === "undefined") return () => {};
  const observer = new MutationObserver(update);
  for (const node of [document.documentElement, document.body]) {
    if (node) observer.observe(node, { attributes: true, attributeFilter: ["class", "data-theme", "style"] });
  }
  return () => observer.disconnect();
}
