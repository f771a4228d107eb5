// The linker's walk against brute force: the storage cells a logical index visits end at
// offset + Σ index·stride, for every index of small random layouts.
import { describe, expect, it } from "vitest";
import { walkCells, walkText } from "./link.js";

function* indices(shape) {
  const index = shape.map(() => 0);
  if (shape.some((n) => n === 0)) return;
  for (;;) {
    yield [...index];
    let d = shape.length - 1;
    while (d >= 0 && ++index[d] === shape[d]) index[d--] = 0;
    if (d < 0) return;
  }
}

describe("walkCells", () => {
  it("ends at the address formula and steps one nonzero term at a time", () => {
    let seed = 7;
    const random = (n) => (seed = (seed * 1103515245 + 12345) % 2147483648) % n;
    for (let trial = 0; trial < 200; trial += 1) {
      const ndim = 1 + random(4);
      const shape = Array.from({ length: ndim }, () => 1 + random(4));
      const strides = Array.from({ length: ndim }, () => random(9) - 2);
      const offset = random(20) + 8;
      for (const index of indices(shape)) {
        const cells = walkCells({ offset, strides }, index);
        const end = index.reduce((sum, i, d) => sum + i * strides[d], offset);
        expect(cells[0]).toBe(offset);
        expect(cells[cells.length - 1]).toBe(end);
        expect(cells.length).toBe(1 + index.filter((i, d) => i !== 0 && strides[d] !== 0).length);
      }
    }
  });

  it("has no walk without a basis or for an index of another rank", () => {
    expect(walkCells(null, [1])).toBeNull();
    expect(walkCells({ offset: 0, strides: [1, 2] }, [1])).toBeNull();
    expect(walkText(null, [1])).toBeNull();
  });

  it("says the walk in words, negative strides with a minus", () => {
    expect(walkText({ offset: 11, strides: [4, -1] }, [2, 3])).toBe("storage[11] → +2·4 → −3·1 = storage[16]");
    expect(walkText({ offset: 5, strides: [0, 1] }, [3, 0])).toBe("storage[5] = storage[5]");
  });

  it("groups the digits of large indices and strides as the picture does (issue 36)", () => {
    expect(walkText({ offset: 999999999990, strides: [7, 1000] }, [1, 2])).toBe(
      "storage[999,999,999,990] → +1·7 → +2·1,000 = storage[1,000,000,001,997]",
    );
  });
});
