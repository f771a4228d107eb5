// The as_strided playground (anywidget ESM): edit a view's size / stride / storage offset per dim,
// load the five tricks and the seed article's versions of them.  The verdict on a setting (refused
// or not, the op it is, its layout words, its overlap) is computed here as you type (math.js,
// recognise.js, js/core/strides.js: twins of Python's checks), so it answers at once, also in a page
// with no kernel.  The picture is Python's (the `picture` trait, laid out by
// stridewidget/notebook/playground.py), painted and linked by the widget's painter (js/paint/);
// in a page with no kernel it stays the one saved with the page and says so when the setting moves
// away from it (`drawn`).
// Bundled into stridewidget/notebook/static/playground.js (+ playground.css) by `npm run build`.
import "../widget/widget.css";
import "./playground.css";
import { htmlEl } from "../widget/dom.js";
import { followHostScheme } from "../widget/theme.js";
import { pictureView } from "../paint/view.js";
import { numel, tupleText } from "../core/strides.js";
import { analyse, overlapText, pastTheEnd } from "./math.js";
import { presets } from "./presets.js";
import { layoutWords, recognise } from "./recognise.js";

let instances = 0;

/** The model's state as plain data. */
export function readState(model) {
  return {
    baseShape: model.get("base_shape") ?? [],
    baseStrides: model.get("base_strides") ?? [],
    baseOffset: model.get("base_offset") ?? 0,
    storageSize: model.get("storage_size") ?? 0,
    dtype: model.get("dtype") ?? "",
    itemsize: model.get("itemsize") ?? 1,
    device: model.get("device") ?? "cpu",
    size: model.get("size") ?? [],
    stride: model.get("stride") ?? [],
    offset: model.get("offset") ?? 0,
  };
}

/** The exact torch call for a setting (the same text as Playground.code in Python). */
export function codeText({ size, stride, offset }) {
  return `torch.as_strided(x, size=${tupleText(size)}, stride=${tupleText(stride)}, storage_offset=${offset})`;
}

/** What the playground says about a setting: refusal, or the op it is and its layout words. */
export function verdict(state, badInput = null) {
  if (badInput !== null) {
    // Not a whole number: kept in the browser (never synced), refused like any other setting.
    const refused = `as_strided: size, stride and storage_offset must be whole numbers (${badInput})`;
    return { facts: null, refused, escape: "", names: [], words: [], overlap: "" };
  }
  const { size, stride, offset, storageSize } = state;
  const facts = analyse(size, stride, offset, storageSize);
  if (!facts.valid) {
    let escape = "";
    if ([...size, ...stride, offset].every((v) => v >= 0)) {
      const past = pastTheEnd(size, stride, offset, storageSize);
      if (past) escape = `${past} of the ${numel(size)} logical indices map past the end of the storage (element ${storageSize - 1} is its last).`;
    }
    return { facts: null, refused: facts.message, escape, names: [], words: [], overlap: "" };
  }
  const base = { shape: state.baseShape, strides: state.baseStrides, offset: state.baseOffset };
  const view = { size: state.size, stride: state.stride, offset: state.offset };
  return {
    facts,
    refused: null,
    escape: "",
    names: recognise(base, view),
    words: layoutWords(view, facts),
    overlap: overlapText(facts.shared),
  };
}

/** Whether the picture shows the setting being edited (`drawn` is the one Python laid out). */
export function pictureIsCurrent(state, drawn) {
  if (!drawn || !drawn.size) return false;
  const same = (a, b) => a.length === b.length && a.every((v, i) => v === b[i]);
  return same(state.size, drawn.size) && same(state.stride, drawn.stride) && state.offset === drawn.offset;
}

/** What the picture area says when the picture is not of the edited setting. */
export function staleText(drawn, kernelFree) {
  const shown = drawn?.size ? codeText(drawn) : "no setting";
  return kernelFree
    ? `The picture shows ${shown}, the setting saved with this page: drawing another needs a running kernel (Python lays the picture out). The verdict above is for the setting you typed.`
    : `drawing the new setting… (the picture still shows ${shown})`;
}

function numberInput(value, label, onInput) {
  const input = htmlEl("input", "pg-number");
  input.type = "number";
  input.step = "1";
  input.value = String(value);
  input.setAttribute("aria-label", label);
  input.addEventListener("input", () => onInput(input.value === "" ? Number.NaN : Number(input.value), input));
  return input;
}

function render({ model, el }) {
  // Long on purpose: one closure owns the view state (the edited setting, bad inputs, the hover) that every control's handler reads.
  instances += 1;
  const uid = `pg${instances}`;
  const root = htmlEl("div", "sw-root pg-root");
  const stopFollowingScheme = followHostScheme(root, el);
  el.appendChild(root);

  const title = htmlEl("div", "pg-title");
  const presetBar = htmlEl("div", "pg-presets");
  const presetNote = htmlEl("p", "pg-note");
  const controls = htmlEl("div", "pg-controls");
  const message = htmlEl("div", "pg-message");
  message.setAttribute("aria-live", "polite");
  const codeRow = htmlEl("div", "pg-code-row");
  const code = htmlEl("code", "pg-code");
  const copy = htmlEl("button", "pg-button pg-copy", "copy");
  copy.type = "button";
  copy.addEventListener("click", () => navigator.clipboard?.writeText(code.textContent));
  codeRow.append(code, copy);
  const status = htmlEl("div", "sw-status pg-status");
  status.setAttribute("aria-live", "polite");
  const stale = htmlEl("div", "pg-stale");
  const picture = htmlEl("div", "pg-picture");
  root.append(title, presetBar, presetNote, controls, message, codeRow, status, stale, picture);

  const idleStatus = "hover a cell: logical → storage address, storage → the elements that read it";
  const setStatus = (text) => {
    status.textContent = text ?? idleStatus;
  };

  // --- editing ----------------------------------------------------------------------------------
  const badInputs = new Map(); // input label -> what was typed, while it is not a whole number
  const commit = (changes) => {
    for (const [key, value] of Object.entries(changes)) model.set(key, value);
    model.save_changes();
  };
  /** Only whole numbers reach the model (and so Python); anything else is refused here. */
  const accept = (input, value) => {
    const label = input.getAttribute("aria-label");
    input.setAttribute("aria-invalid", String(!Number.isSafeInteger(value)));
    if (Number.isSafeInteger(value)) {
      badInputs.delete(label);
      return true;
    }
    badInputs.set(label, input.value === "" ? `${label} is empty` : `${label} is ${input.value}`);
    draw();
    return false;
  };
  // A changed value redraws through the model's change event; an unchanged one (typed again
  // after a refused entry) only has to clear that refusal.
  const editDim = (key, d, value, input) => {
    if (!accept(input, value)) return;
    const list = [...model.get(key)];
    if (list[d] === value) {
      draw();
      return;
    }
    list[d] = value;
    commit({ [key]: list });
  };

  const buildControls = () => {
    badInputs.clear();
    const { size, stride, offset } = readState(model);
    const table = htmlEl("table", "pg-dims");
    const head = htmlEl("tr");
    for (const text of ["dim", "size", "stride", ""]) head.appendChild(htmlEl("th", "", text));
    table.appendChild(head);
    size.forEach((n, d) => {
      const row = htmlEl("tr", "pg-dim");
      row.dataset.dim = d;
      const cell = (child) => {
        const td = htmlEl("td");
        td.appendChild(child);
        return td;
      };
      const sizeInput = numberInput(n, `size of dim ${d}`, (v, input) => editDim("size", d, v, input));
      sizeInput.classList.add("pg-size");
      sizeInput.min = "0";
      const strideInput = numberInput(stride[d], `stride of dim ${d}`, (v, input) => editDim("stride", d, v, input));
      strideInput.classList.add("pg-stride");
      const remove = htmlEl("button", "pg-button pg-remove", "remove");
      remove.type = "button";
      remove.title = `remove dim ${d}`;
      remove.addEventListener("click", () => {
        const s = readState(model);
        commit({ size: s.size.filter((_, k) => k !== d), stride: s.stride.filter((_, k) => k !== d) });
        buildControls();
      });
      row.append(htmlEl("td", "pg-dim-label", String(d)), cell(sizeInput), cell(strideInput), cell(remove));
      table.appendChild(row);
    });
    const add = htmlEl("button", "pg-button pg-add", "+ add dim");
    add.type = "button";
    add.addEventListener("click", () => {
      const s = readState(model);
      commit({ size: [...s.size, 1], stride: [...s.stride, 1] });
      buildControls();
    });
    const offsetLabel = htmlEl("label", "pg-offset-label", "storage_offset ");
    const offsetInput = numberInput(offset, "storage offset", (v, input) => {
      if (!accept(input, v)) return;
      if (model.get("offset") === v) draw();
      else commit({ offset: v });
    });
    offsetInput.classList.add("pg-offset");
    offsetLabel.appendChild(offsetInput);
    const side = htmlEl("div", "pg-side");
    side.append(add, offsetLabel);
    controls.replaceChildren(table, side);
  };

  const buildPresets = () => {
    const state = readState(model);
    const base = { shape: state.baseShape, strides: state.baseStrides, offset: state.baseOffset };
    presetBar.replaceChildren();
    const groups = [
      ["start", "start:"],
      ["trick", "tricks:"],
      ["seed", "⚠ the seed article's versions:"],
    ];
    for (const [kind, caption] of groups) {
      const group = htmlEl("div", "pg-preset-group");
      group.appendChild(htmlEl("span", "pg-preset-caption", caption));
      for (const preset of presets(base).filter((p) => p.kind === kind)) {
        const button = htmlEl("button", `pg-button pg-preset pg-${kind}`, preset.label);
        button.type = "button";
        button.dataset.preset = preset.id;
        if (!preset.settings) {
          button.disabled = true;
          button.title = preset.unavailable;
        } else {
          button.title = preset.note;
          button.addEventListener("click", () => {
            presetNote.textContent = preset.note;
            commit({ size: [...preset.settings.size], stride: [...preset.settings.stride], offset: preset.settings.offset });
            buildControls();
          });
        }
        group.appendChild(button);
      }
      presetBar.appendChild(group);
    }
  };

  // --- the verdict (here, as you type) and the picture (Python's) ---------------------------
  const draw = () => {
    const state = readState(model);
    title.textContent =
      `as_strided playground · x: ${state.dtype} shape ${tupleText(state.baseShape)}, ` +
      `stride ${tupleText(state.baseStrides)}, offset ${state.baseOffset} · storage of ${state.storageSize} elements`;
    code.textContent = codeText(state);
    const result = verdict(state, badInputs.size ? [...badInputs.values()].join(", ") : null);
    message.classList.toggle("pg-refused", result.refused !== null);
    root.dataset.valid = String(result.refused === null);
    if (result.refused !== null) {
      message.replaceChildren(htmlEl("div", "pg-refusal", `Refused (never sent to torch.as_strided): ${result.refused}`));
      if (result.escape) message.appendChild(htmlEl("div", "pg-escape", result.escape));
    } else {
      message.replaceChildren();
      const lead = htmlEl("div", "pg-recognised");
      if (result.names.length) {
        lead.append("This is ", htmlEl("code", "pg-op", result.names[0]));
        if (result.names[0] === "x") lead.append(" itself");
        if (result.names.length > 1) lead.append(` (also ${result.names.slice(1, 3).join(", ")})`);
      } else {
        lead.textContent = "No standard op on x gives exactly this view.";
      }
      message.appendChild(lead);
      if (result.words.length) message.appendChild(htmlEl("div", "pg-words", `Layout: ${result.words.join(", ")}.`));
      if (result.overlap) message.appendChild(htmlEl("div", "pg-overlap", result.overlap));
      if (result.facts.hasOverlap === null) message.appendChild(htmlEl("div", "pg-words", "Too many elements to check for overlap in the browser."));
    }
    const drawn = model.get("drawn");
    const current = !badInputs.size && pictureIsCurrent(state, drawn);
    stale.textContent = current ? "" : staleText(drawn, Boolean(model.kernelFree));
    root.dataset.pictureCurrent = String(current);
  };

  const view = pictureView({
    root, holder: picture, model, uid, onStatus: setStatus,
    measure: () => Math.floor(picture.clientWidth), afterPaint: () => draw(),
  });
  const paint = view.paint;

  // Changes from Python (pg.stride = ...) move the controls.  An input already showing the
  // model's value is left alone (our own edits: the cursor stays), and so is one holding a
  // not-yet-valid entry the user is typing.
  const syncInputs = () => {
    const { size, stride, offset } = readState(model);
    const rows = controls.querySelectorAll(".pg-dim");
    if (rows.length !== size.length) {
      buildControls();
      return;
    }
    const show = (input, value) => {
      if (badInputs.has(input.getAttribute("aria-label"))) return;
      if (input.value === "" || Number(input.value) !== value) input.value = String(value);
    };
    rows.forEach((row, d) => {
      show(row.querySelector(".pg-size"), size[d]);
      show(row.querySelector(".pg-stride"), stride[d]);
    });
    show(controls.querySelector(".pg-offset"), offset);
  };
  const onSetting = () => {
    syncInputs();
    draw();
  };
  model.on("change:size", onSetting);
  model.on("change:stride", onSetting);
  model.on("change:offset", onSetting);
  model.on("change:picture", paint);
  model.on("change:drawn", draw);
  buildPresets();
  buildControls();
  paint();

  return () => {
    stopFollowingScheme();
    view.detach();
    model.off("change:size", onSetting);
    model.off("change:stride", onSetting);
    model.off("change:offset", onSetting);
    model.off("change:picture", paint);
    model.off("change:drawn", draw);
    root.remove();
  };
}

export default { render };
