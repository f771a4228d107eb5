// Each tensor's pattern tile (colour + texture) as the static SVG writes it: no two of the first
// 49 tensors share one (the palette's 7 colours and 7 textures, one texture further each round).
import { describe, expect, it } from "vitest";
import { paintPicture } from "./paint.js";

describe("patternDefs", () => {
  it("gives the eighth tensor another texture than the first, in the first one's colour", () => {
    const tensors = Array.from({ length: 49 }, (_, order) => ({ order }));
    const svg = paintPicture({ v: 1, width: 10, height: 10, title: "t", tensors, items: [] }, "u");
    const tiles = [...svg.querySelectorAll("pattern")].map((p) => p.innerHTML);
    expect(tiles).toHaveLength(49);
    expect(new Set(tiles).size).toBe(49);
    const fill = (order) => svg.querySelector(`#u-p${order} rect`).getAttribute("fill");
    expect(fill(7)).toBe(fill(0));
  });
});
