// The slice picker: a tensor of 3-D or more whose picture leaves slices out can show any other
// slice.  The browser only checks the index against the sizes the picture lists (`pick.lead`) and
// sets the `picked` trait (tensor name -> leading indices); Python draws the picture again with that
// slice in it.  In a page with no kernel it says so instead.
import { htmlEl } from "./dom.js";
import { pictureOf } from "../paint/view.js";

/** "3, 1" -> [3, 1] when it is a slice of leading sizes `lead`; else the reason (a string), at
 * most two lines of the status line (`MAX_REASON` characters) whatever was typed or however many
 * dims the tensor has. */
export function parsePick(text, lead) {
  const parts = text.split(/[\s,]+/).filter((p) => p !== "");
  if (parts.length !== lead.length) {
    return `give ${lead.length} ${lead.length === 1 ? "index" : "indices"} (leading sizes ${sizesText(lead)})`;
  }
  // plain decimal digits only: Number() would take "0x3", "3.0", "1e0", "+3" (Python refuses
  // negative picks: "-1" is said to be out of range)
  for (let d = 0; d < parts.length; d += 1) {
    if (!/^-?[0-9]+$/.test(parts[d])) return `index ${cut(parts[d], 12)} of dim ${d} is no whole number (digits 0-9)`;
  }
  const index = parts.map(Number);
  for (let d = 0; d < index.length; d += 1) {
    if (!Number.isSafeInteger(index[d]) || parts[d].startsWith("-") || index[d] >= lead[d]) {
      return `index ${cut(parts[d], 12)} of dim ${d} is outside 0..${lead[d] - 1}`;
    }
  }
  return index;
}

/** Characters a refused pick's reason ("show slice: " and it) takes at most: two lines of the
 * status line in a 400 px window (their height is in the picture's budget:
 * stridewidget.render.picture.controls_height). */
export const MAX_REASON = 80;

/** `text` cut to `most` characters, an ellipsis where it was cut. */
function cut(text, most) {
  return text.length <= most ? text : `${text.slice(0, most - 1)}…`;
}

/** "6 × 4"; many dims: the first and last sizes around an ellipsis ("3 × 3 × 3 × … × 3, 15 dims"),
 * or their count alone. */
function sizesText(lead) {
  const all = lead.join(" × ");
  const ends = `${lead.slice(0, 3).join(" × ")} × … × ${lead[lead.length - 1]}, ${lead.length} dims`;
  for (const text of [all, ends]) if (text.length <= 36) return text;
  return `${lead.length} dims`;
}

/** The control, or null when every slice is drawn; `refresh()` follows a new picture.  A pick
 * refused is said with `say(text)` (the widget's status line, whose two lines the height budget
 * keeps): the picker's own row never grows, so the toolbar keeps the rows it was budgeted. */
export function pickerControl(model, { say = () => {} } = {}) {
  const box = htmlEl("span", "sw-pick");
  const refresh = () => {
    box.replaceChildren();
    const list = pictureOf(model);
    // a model without the trait (the graph widget's pane) has no picker
    const pickable = model.get("picked") === undefined ? [] : (list?.tensors ?? []).filter((t) => t.pick);
    box.hidden = pickable.length === 0;
    if (!pickable.length) return;
    const select = htmlEl("select", "sw-pick-tensor");
    select.setAttribute("aria-label", "tensor whose slice to show");
    for (const t of pickable) {
      const option = htmlEl("option", "", `${t.mark} ${t.name}`);
      option.value = t.name;
      select.appendChild(option);
    }
    const input = htmlEl("input", "sw-pick-index");
    input.type = "text";
    input.placeholder = pickable[0].pick.lead.map(() => "0").join(", ");
    input.setAttribute("aria-label", "leading indices of the slice to show");
    const show = htmlEl("button", "sw-pick-show", "show");
    show.type = "button";
    const note = htmlEl("span", "sw-pick-note");
    box.append(htmlEl("span", "sw-pick-title", "show slice "), select, input, show, note);
    const tensor = () => pickable.find((t) => t.name === select.value) ?? pickable[0];
    const describe = () => {
      // grouped as the picture's own counts are ("9,998 slices not shown")
      note.textContent = ` (${tensor().pick.left_out.toLocaleString("en-US")} not drawn)`;
      input.placeholder = tensor().pick.lead.map(() => "0").join(", ");
    };
    select.addEventListener("change", describe);
    describe();
    if (model.kernelFree) {
      for (const node of [select, input, show]) node.disabled = true;
      show.title = "needs a running kernel: Python lays the picture out";
      note.textContent = " (needs a kernel)";
      return;
    }
    const apply = () => {
      const index = parsePick(input.value, tensor().pick.lead);
      input.setAttribute("aria-invalid", String(typeof index === "string"));
      if (typeof index === "string") {
        say(`show slice: ${index}`);
        return;
      }
      const picked = { ...(model.get("picked") ?? {}) };
      picked[tensor().name] = [...(picked[tensor().name] ?? []), index];
      model.set("picked", picked);
      model.save_changes();
    };
    show.addEventListener("click", apply);
    input.addEventListener("keydown", (event) => {
      if (event.key === "Enter") apply();
    });
  };
  refresh();
  return { node: box, refresh };
}
