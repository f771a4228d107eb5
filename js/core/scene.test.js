// Lookups over a scene and the address formula, on a scene Python built (js/fixtures/aliases.json).
import { describe, expect, it } from "vitest";
import aliases from "../fixtures/aliases.json";
import { addressFormula, indexScene, storageFormula } from "./scene.js";

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
