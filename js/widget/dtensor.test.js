// A DTensor's live picture (js/fixtures/picture_dtensor.json: sw.show(d) of arange(8).reshape(2, 4)
// over a 2×2 mesh, [Shard(1), Replicate()]) linked by its keys (js/paint/link.js, keyed groups).
// Oracle, worked out here from torch's split alone: columns 0–1 are on ranks 0 and 1, columns 2–3
// on ranks 2 and 3 (Shard(1) over mesh dim 0, replicated over mesh dim 1); element [i, j] is at
// local storage index 2·i + j mod 2 of each holder (its (2, 2) contiguous local tensor).  One
// strip per distinct share is drawn: ranks 0 and 2 (ranks 1 and 3 are their replicas).
import { afterEach, describe, expect, it } from "vitest";
import dtensor from "../fixtures/picture_dtensor.json";
import { hover, mount } from "./testing.js";

afterEach(() => {
  document.body.replaceChildren();
});

const holders = (j) => (j < 2 ? [0, 1] : [2, 3]);
const local = (i, j) => 2 * i + (j % 2);
const drawn = [0, 2];
const lit = (el, cls) => [...el.querySelectorAll(`g.${cls}.sw-hl`)].map((g) => g.dataset.key).sort();

describe("a DTensor's picture", () => {
  it("lights, for each global element, the storage cell holding it on every holder, and its holders", () => {
    const { el } = mount(dtensor);
    for (let i = 0; i < 2; i += 1) {
      for (let j = 0; j < 4; j += 1) {
        const cell = el.querySelector(`g.sws-dcell[data-index="${i},${j}"]`);
        hover(cell);
        const strips = holders(j).filter((r) => drawn.includes(r));
        expect(lit(el, "sws-scell")).toEqual(strips.map((r) => `r${r}:${local(i, j)}`).sort());
        expect(lit(el, "sws-mesh-rank")).toEqual(holders(j).map((r) => `r${r}`));
        expect(lit(el, "sws-dcell")).toEqual([`e${i},${j}`]); // itself only
        expect(cell.classList.contains("sw-hl-source")).toBe(true);
        const status = el.querySelector(".sw-status").textContent;
        expect(status).toContain("replicated on 2 ranks");
        for (const r of holders(j)) expect(status).toContain(`rank ${r} at`);
        for (const r of holders(j)) expect(status).toContain(`local storage[${local(i, j)}]`);
        expect(status).toContain(`rank ${holders(j)[1]} at (${holders(j)[1] >> 1}, 1) local storage[${local(i, j)}] (storage not drawn)`);
      }
    }
  });

  it.each(["sws-mesh-rank", "sws-rank-head"])("lights a rank's elements and storage when its %s is hovered", (cls) => {
    const { el } = mount(dtensor);
    for (const r of cls === "sws-mesh-rank" ? [0, 1, 2, 3] : drawn) {
      hover(el.querySelector(`g.${cls}[data-rank="${r}"]`));
      const mine = [];
      for (let i = 0; i < 2; i += 1) for (let j = 0; j < 4; j += 1) if (holders(j).includes(r)) mine.push(`e${i},${j}`);
      expect(lit(el, "sws-dcell")).toEqual(mine.sort());
      expect(lit(el, "sws-scell")).toEqual(drawn.includes(r) ? [0, 1, 2, 3].map((c) => `r${r}:${c}`) : []);
      const status = el.querySelector(".sw-status").textContent;
      expect(status).toContain(`rank ${r} at`);
      expect(status.includes(`rank ${r}'s storage is not drawn`)).toBe(!drawn.includes(r));
    }
  });

  it("lights the global elements a rank's storage cell holds, and keeps the hover over a new picture", () => {
    const { el, model } = mount(dtensor);
    hover(el.querySelector('g.sws-scell[data-key="r2:3"]'));
    expect(lit(el, "sws-dcell")).toEqual(["e1,3"]);
    expect(el.querySelector(".sw-status").textContent).toContain("holds d[1, 3]");
    expect(lit(el, "sws-mesh-rank")).toEqual(["r2"]);
    expect(model.get("hovered")).toEqual({ key: "r2:3" });
    model.set("picture", JSON.parse(JSON.stringify(dtensor))); // Python laid it out again
    expect(lit(el, "sws-dcell")).toEqual(["e1,3"]);
    el.querySelector("svg.sws-picture").dispatchEvent(new MouseEvent("mouseleave"));
    expect(el.querySelectorAll(".sw-hl").length).toBe(0);
  });
});
