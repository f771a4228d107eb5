import { describe, expect, it } from "vitest";
import { drawFacts, summaryLine } from "./facts.js";
import aliases from "./fixtures/aliases.json";

// a layout whose overlap the display budget did not decide: Layout.to_dict() gives null
const undecided = { ...aliases.tensors[0].layout, has_overlap: null, is_dense: false };

describe("facts when overlap is not decided", () => {
  it("says so in the summary line instead of 'gaps' or nothing", () => {
    const line = summaryLine(undecided);
    expect(line).toContain("overlap not decided");
    expect(line).not.toContain("gaps between elements");
    expect(summaryLine({ ...undecided, has_overlap: true })).toContain("overlapping");
  });

  it("marks the flag with ? rather than ✗", () => {
    const panel = drawFacts({ ...aliases.tensors[0], layout: undecided });
    const flag = [...panel.querySelectorAll(".sw-flag")].find((el) => el.textContent.includes("overlap"));
    expect(flag.textContent).toBe("? overlap (not decided)");
  });
});
