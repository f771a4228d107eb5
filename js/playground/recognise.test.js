// The recogniser against layouts torch produced (js/playground/cases.json, from Python): every op
// in the table is named, and every name it gives for a table setting is one that torch, given that
// name, builds exactly that view with (the generator evaluated each one).
import { describe, expect, it } from "vitest";
import cases from "./cases.json";
import { analyse } from "./math.js";
import { layoutWords, recognise, sameMapping } from "./recognise.js";

const asView = (op) => ({ size: op.size, stride: op.stride, offset: op.offset });

describe.each(cases.bases.map((entry) => [entry.name, entry]))("base %s", (_, entry) => {
  const known = new Map(entry.ops.map((op) => [op.expr, asView(op)]));

  it.each(entry.ops.map((op) => [op.expr, op]))("names %s", (expr, op) => {
    const names = recognise(entry.base, asView(op));
    expect(names).toContain(expr);
    // The name shown first is one torch confirmed, with this very layout.
    for (const name of names.filter((n) => known.has(n))) {
      expect(sameMapping(known.get(name), asView(op))).toBe(true);
    }
  });

  it("gives exactly the names torch confirmed, for every valid setting in the table", () => {
    const named = [...entry.layouts, ...entry.ops, ...Object.values(entry.presets)].filter((c) => c.names);
    expect(named.length).toBeGreaterThan(20);
    for (const c of named) {
      expect(c.wrong_names).toEqual([]);
      expect(recognise(entry.base, asView(c))).toEqual(c.names);
    }
  });

  it("names no table op for a setting torch gives differently", () => {
    for (const layout of entry.layouts.filter((l) => !l.refusal)) {
      for (const name of recognise(entry.base, layout)) {
        if (known.has(name)) expect(sameMapping(known.get(name), layout)).toBe(true);
      }
    }
  });
});

describe("the tricks by name", () => {
  const base = cases.bases.find((b) => b.name === "contiguous 4x6");
  const first = (view) => recognise(base.base, view)[0];
  it.each([
    ["transpose", "x.t()"],
    ["broadcast", "x[:, 0:1].expand(4, 6)"],
    ["sliding", "x.unfold(1, 3, 1)"],
    ["merge", "x.flatten()"],
    ["checkerboard", "sw.tricks.checkerboard(x)"],
    ["blocks", "sw.tricks.blocks(x, 2, 2)"],
  ])("%s is %s", (preset, expr) => {
    expect(first(base.presets[preset])).toBe(expr);
  });
  it("the seed's column 1 is column 0", () => {
    expect(first(base.presets.column)).toBe("x[:, 1]");
    expect(first(base.presets["seed-column"])).toBe("x[:, 0]");
  });
  it("the seed's broken views are no standard op", () => {
    expect(recognise(base.base, base.presets["seed-broadcast"])).toEqual([]);
    expect(recognise(base.base, base.presets["seed-checkerboard"])).toEqual([]);
  });
  it("the seed's sliding window is right for the 1-d contiguous x.flatten()", () => {
    expect(recognise(base.base, { size: [22, 3], stride: [1, 1], offset: 0 })).toContain("x.flatten().unfold(0, 3, 1)");
  });
});

describe("layout words", () => {
  const words = (size, stride, offset, storage) => layoutWords({ size, stride, offset }, analyse(size, stride, offset, storage));
  it("says contiguous, transposed, broadcast, overlapping, gapped", () => {
    expect(words([4, 6], [6, 1], 0, 24)).toEqual(["contiguous"]);
    expect(words([6, 4], [1, 6], 0, 24)).toEqual(["transposed (column-major / F-contiguous)"]);
    expect(words([4, 6], [6, 0], 0, 24)).toEqual(["broadcast (a stride is 0)", "overlapping"]);
    expect(words([3, 2], [6, 2], 0, 24)).toEqual(["gapped"]);
  });
});
