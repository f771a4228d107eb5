import { describe, expect, it } from "vitest";
import { drawArrows } from "./arrows.js";
import { svgEl } from "./dom.js";
import { layoutStorage, STORAGE_GEOMETRY } from "./storage.js";
import { addressFormula, indexScene, storageFormula } from "./scene.js";
import aliases from "./fixtures/aliases.json";
import meta from "./fixtures/meta.json";

describe("layoutStorage", () => {
  it("keeps columns meaningful: cell k sits in column k % wrap", () => {
    const { positions } = layoutStorage(meta.storages[0], 7);
    for (const [cell, item] of positions) {
      expect((item.x - STORAGE_GEOMETRY.labelW) / STORAGE_GEOMETRY.cellW).toBe(cell % 7);
    }
  });

  it("puts every gap on a row of its own, in storage order", () => {
    const { items } = layoutStorage(meta.storages[0], 10);
    let lastY = -1;
    for (const item of items) {
      expect(item.y).toBeGreaterThanOrEqual(lastY);
      if (item.kind === "gap") {
        expect(item.y).toBeGreaterThan(lastY);
      }
      lastY = item.y;
    }
    expect(items.filter((i) => i.kind === "gap").length).toBe(meta.storages[0].segments.filter((s) => s.kind === "gap").length);
  });
});

describe("formulas", () => {
  it("names the terms and substitutes the strides", () => {
    const indexed = indexScene(aliases);
    const cols = indexed.tensors.get("t2");
    expect(addressFormula(indexed, cols, [2, 1], 10)).toBe(
      "cols[2,1] → storage[off + 2·s0 + 1·s1] = storage[0 + 2·4 + 1·2] = storage[10] = 10.",
    );
    expect(storageFormula(indexed, "s0", 3)).toBe("storage[3] = 3. ← x[0,3], xt[3,0]");
    expect(storageFormula(indexed, "s0", 1)).toBe("storage[1] = 1. ← x[0,1], xt[1,0]");
  });
});

describe("drawArrows", () => {
  const tensor = aliases.tensors[1]; // xt: strides (1, 4)
  const { positions } = layoutStorage(aliases.storages[0], 4);

  it("puts short badges on the grid and the labels in the legend", () => {
    const group = svgEl("g");
    const legend = document.createElement("div");
    drawArrows(group, tensor, positions, { legend });
    expect([...group.querySelectorAll(".sw-arrow-badge")].map((n) => n.textContent)).toEqual(["d0", "d1"]);
    expect([...legend.querySelectorAll(".sw-arrow-label")].map((n) => n.textContent)).toEqual(["dim 0: +1", "dim 1: +4"]);
  });

  it("without a legend, the badges carry the whole label", () => {
    const group = svgEl("g");
    drawArrows(group, tensor, positions);
    expect([...group.querySelectorAll(".sw-arrow-badge")].map((n) => n.textContent)).toEqual(["dim 0: +1", "dim 1: +4"]);
  });
});
