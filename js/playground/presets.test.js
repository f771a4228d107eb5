// Presets against Python: each trick's setting is what torch / sw.tricks built on the same base,
// each seed formula's setting is the article's, with sw.as_strided's verdict (cases.json).
import { describe, expect, it } from "vitest";
import cases from "./cases.json";
import { checkView } from "../core/strides.js";
import { presets } from "./presets.js";

describe.each(cases.bases.map((entry) => [entry.name, entry]))("base %s", (_, entry) => {
  const list = presets(entry.base);
  const byId = new Map(list.map((p) => [p.id, p]));

  it.each(Object.entries(entry.presets))("%s loads Python's setting", (id, expected) => {
    const preset = byId.get(id);
    expect(preset, `preset ${id}`).toBeDefined();
    expect(preset.settings).toEqual({ size: expected.size, stride: expected.stride, offset: expected.offset });
    const { size, stride, offset } = preset.settings;
    expect(checkView(size, stride, offset, entry.base.storage_size)).toBe(expected.refusal);
  });

  it("offers no trick Python could not build as a view", () => {
    for (const preset of list) {
      if (preset.settings !== null) expect(Object.keys(entry.presets)).toContain(preset.id);
      else expect(preset.unavailable).toBeTruthy();
    }
  });
});
