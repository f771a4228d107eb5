import { describe, expect, it } from "vitest";
import { drawFacts, summaryLine, summaryParts } from "./facts.js";
import aliases from "../fixtures/aliases.json";

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

describe("the summary line", () => {
  it("is one piece per fact, so a narrow card wraps it between facts, never inside 'dense, permuted' nor before a '·'", () => {
    const permuted = { ...aliases.tensors[0].layout, is_contiguous: false, is_f_contiguous: false, is_channels_last: false, is_dense: true, has_overlap: false };
    const line = drawFacts({ ...aliases.tensors[0], layout: permuted }).querySelector(".sw-facts-line");
    const pieces = [...line.querySelectorAll(".sw-fact")].map((node) => node.textContent);
    expect(pieces.map((piece) => piece.replace(/ ·$/, ""))).toEqual(summaryParts(permuted));
    expect(pieces.at(-1)).toBe("dense, permuted");
    expect(line.textContent).toBe(summaryLine(permuted));
    expect(line.textContent).toBe(pieces.join(" "));
  });
});
