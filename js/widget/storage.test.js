import { describe, expect, it } from "vitest";
import { drawArrows, drawWalk, walkHops, walkText } from "./arrows.js";
import { svgEl } from "./dom.js";
import { cellWidth, STORAGE_GEOMETRY } from "../core/geometry.js";
import { cellsCaption, compactMarks, drawStorage, fittedWrap, layoutStorage, storageCellPlan } from "./storage.js";
import aliases from "../fixtures/aliases.json";
import crowd from "../fixtures/crowd.json";
import expand from "../fixtures/expand.json";
import meta from "../fixtures/meta.json";
import readers from "../fixtures/readers.json";
import readersOracle from "../fixtures/readers_oracle.json";
import unfold from "../fixtures/unfold.json";

describe("layoutStorage", () => {
  it("clamps a bad wrap to one cell per row instead of looping or laying out NaN", () => {
    const storage = { segments: [{ kind: "cells", start: 0, stop: 3 }], cells: { index: [0, 1, 2] } };
    for (const wrap of [0, -3, Number.NaN]) {
      const layout = layoutStorage(storage, wrap);
      expect(layout.items.every((item) => Number.isFinite(item.x) && Number.isFinite(item.y))).toBe(true);
      expect(layout).toEqual(layoutStorage(storage, 1));
    }
  });

  it("keeps columns meaningful without collapsed runs: cell k sits in column k % wrap", () => {
    const storage = { segments: [{ kind: "cells", start: 0, stop: 40 }], cells: { index: [...Array(40).keys()] } };
    const layout = layoutStorage(storage, 7, { cellW: 40 });
    expect(layout.flow).toBe(false);
    for (const [cell, item] of layout.positions) {
      expect((item.x - layout.labelW) / 40).toBe(cell % 7);
      expect(item.row.start).toBe(cell - (cell % 7));
    }
  });

  it("a collapsed run is one marked item in the flow, in storage order; no row passes the room", () => {
    const storage = meta.storages[0];
    const room = 500;
    const { items, rows, flow } = layoutStorage(storage, 10, { cellW: 40, room });
    expect(flow).toBe(true);
    const order = items.map((item) => (item.kind === "gap" ? item.segment.start : item.cell));
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(items.filter((i) => i.kind === "gap").length).toBe(storage.segments.filter((s) => s.kind === "gap").length);
    // as tall as a cell, not a row of its own
    for (const gap of items.filter((i) => i.kind === "gap")) expect(gap.h).toBe(STORAGE_GEOMETRY.cellH - 2);
    for (const row of rows) {
      const mine = items.filter((item) => item.row === row);
      expect(Math.max(...mine.map((item) => item.x + item.w))).toBeLessThanOrEqual(room + 2);
      expect(mine.filter((item) => item.kind === "cell").length).toBeLessThanOrEqual(10);
    }
  });
  it("reserves a band of lanes above the row where arrows start, and only there", () => {
    const g = STORAGE_GEOMETRY;
    const layout = layoutStorage(meta.storages[0], 10, { lanes: 3, bandCells: [0] });
    const first = layout.rows[0];
    expect(first.y - first.bandTop).toBe(3 * g.laneH + g.bandPad);
    expect(layout.rows.slice(1).every((row) => row.bandTop === null)).toBe(true);
  });

  it("row labels hold every digit of a 10^12-element storage", () => {
    // a big flowing window (no index under each cell): each row is labelled with its first cell
    const layout = layoutStorage(meta.storages[0], 10, { indexUnder: false });
    const lastRow = layout.rows.at(-1);
    const start = layout.items.find((item) => item.kind === "cell" && item.row === lastRow).cell;
    expect(layout.rowLabels.at(-1).text).toBe(String(start).replace(/\B(?=(\d{3})+(?!\d))/g, ","));
    expect(layout.labelW).toBeGreaterThanOrEqual(layout.rowLabels.at(-1).text.length * STORAGE_GEOMETRY.charW);
  });
});

describe("cell plans", () => {
  it("sizes cells to their text and halves automatic rows that would be too wide", () => {
    expect(cellWidth(2)).toBe(STORAGE_GEOMETRY.minCellW);
    expect(cellWidth(100)).toBe(STORAGE_GEOMETRY.maxCellW);
    expect(fittedWrap(32, 34)).toBe(32);
    const wrap = fittedWrap(32, 64);
    expect(wrap * 64).toBeLessThanOrEqual(STORAGE_GEOMETRY.maxWidth);
    expect(32 % wrap).toBe(0); // rows still start on multiples of the natural row
  });

  it("a big window reads indices from row labels and column offsets, not one text per cell", () => {
    const many = 300;
    const big = { ...aliases.storages[0], cells: { index: [...Array(many).keys()], text: Array(many).fill("0."), value: Array(many).fill(0) } };
    expect(storageCellPlan(aliases.storages[0], "both").indexUnder).toBe(true);
    expect(storageCellPlan(big, "both").indexUnder).toBe(false);
    expect(cellsCaption(storageCellPlan(big, "both"))).toBe(
      "cells show values; storage index = row label + column offset; tensor cells: value over @address",
    );
  });

  it("a storage without values shows indices whatever the mode", () => {
    expect(storageCellPlan(meta.storages[0], "values").mode).toBe("index");
    expect(storageCellPlan(aliases.storages[0], "values").mode).toBe("values");
  });
});

function arrowsOf(scene, tensorIndex) {
  const storage = scene.storages[0];
  const tensor = scene.tensors[tensorIndex];
  const layout = layoutStorage(storage, storage.wrap, { lanes: 4, bandCells: [tensor.arrows[0].from] });
  const group = svgEl("g");
  const legend = document.createElement("div");
  drawArrows(group, tensor, layout, { legend });
  return { group, legend, layout, tensor };
}

const labelBoxes = (group) =>
  [...group.querySelectorAll(".sw-arrow-badge-bg")].map((n) => ({ y: Number(n.getAttribute("y")), h: Number(n.getAttribute("height")) }));

describe("drawArrows", () => {
  it("labels each arrow on the strip and in the legend", () => {
    const { group, legend } = arrowsOf(aliases, 1); // xt: strides (1, 4)
    expect([...group.querySelectorAll(".sw-arrow-badge")].map((n) => n.textContent)).toEqual(["d0 +1", "d1 +4"]);
    expect([...legend.querySelectorAll(".sw-arrow-label")].map((n) => n.textContent)).toEqual(["d0 +1", "d1 +4"]);
  });

  it("merges equal strides into one arrow: never two labels on one arc", () => {
    const { group } = arrowsOf(unfold, 0); // unfold(0, 4, 1): strides (1, 1)
    expect([...group.querySelectorAll(".sw-arrow-badge")].map((n) => n.textContent)).toEqual(["d0,d1 +1"]);
  });

  it("no two labels share a lane, and every lane lies in the band above the cells", () => {
    for (const [scene, t] of [
      [aliases, 0],
      [aliases, 1],
      [aliases, 2],
      [expand, 0],
    ]) {
      const { group, layout, tensor } = arrowsOf(scene, t);
      const boxes = labelBoxes(group);
      expect(boxes.length).toBe(tensor.arrows.length);
      const row = layout.positions.get(tensor.arrows[0].from).row;
      boxes.forEach((box, i) => {
        expect(box.y).toBeGreaterThanOrEqual(row.bandTop);
        expect(box.y + box.h).toBeLessThanOrEqual(row.y);
        boxes.slice(i + 1).forEach((other) => expect(box.y + box.h <= other.y || other.y + other.h <= box.y).toBe(true));
      });
    }
  });

  it("draws a stride-0 dim as a loop on its cell", () => {
    const { group } = arrowsOf(expand, 0);
    const loop = group.querySelector('.sw-arrow[data-dim="0"] path').getAttribute("d");
    expect(loop).toMatch(/^M .* C /);
    expect(group.querySelector('.sw-arrow[data-dim="0"] .sw-arrow-badge').textContent).toBe("d0 ×0");
  });
});

describe("the index walk", () => {
  it("hops from the offset by index·stride per dim and lands on the cell the formula names", () => {
    const cols = aliases.tensors[2]; // x[:, ::2]: strides (4, 2)
    const hops = walkHops(cols, [2, 1]);
    expect(hops.map((h) => [h.from, h.to, h.text])).toEqual([
      [0, 8, "+2·4"],
      [8, 10, "+1·2"],
    ]);
    const slice = cols.logical.slices[0];
    expect(hops.at(-1).to).toBe(slice.addr[2][1]);
  });

  it("draws one path per hop and spells the walk out", () => {
    const { group, layout, tensor } = arrowsOf(aliases, 1);
    drawWalk(group, tensor, [3, 2], layout);
    expect(group.querySelectorAll(".sw-walk").length).toBe(2);
    expect(group.querySelectorAll(".sw-arrow").length).toBe(0);
    expect(walkText(tensor, [3, 2])).toBe("xt[3,2]: start at the offset 0 +3·1 (dim 0) → 3 +2·4 (dim 1) → 11");
  });
});

// The marks on one storage cell's strip: per-piece texts, or one compact text ("AB×2CD", "A+5").
function stripNames(drawn, cell) {
  const rect = drawn.cells.get(cell);
  const [x, y, w] = ["x", "y", "width"].map((k) => Number(rect.getAttribute(k)));
  const texts = [...drawn.node.querySelectorAll(".sw-strip-label")].filter((t) => {
    const tx = Number(t.getAttribute("x"));
    return tx > x && tx < x + w && Number(t.getAttribute("y")) < y + STORAGE_GEOMETRY.stripH;
  });
  const marks = [];
  let rest = 0;
  for (const t of texts) {
    const match = t.textContent.match(/^((?:[A-Z]\d*(?:×\d+|\?)?)*)(?:\+(\d+))?$/);
    expect(match && t.textContent.length > 0, t.textContent).toBeTruthy();
    marks.push(...(match[1].match(/[A-Z]\d*(?:×\d+|\?)?/g) ?? []));
    rest += match[2] ? Number(match[2]) : 0;
    // inside its own cell, so never over a neighbour's marks
    expect(t.textContent.length * STORAGE_GEOMETRY.boldCharW + 2).toBeLessThanOrEqual(w);
  }
  return { marks, rest, texts: texts.length };
}

// The oracle: the marks of the tensors torch says read storage[cell] (js/fixtures/make_fixtures.py
// finds them by data_ptr over every index), in the scene's tensor order.
function oracleMarks(scene, oracle, cell) {
  return scene.tensors.flatMap((t) => {
    const n = oracle[t.name][String(cell)] ?? 0;
    if (!n) return [];
    return [n > 1 ? `${t.mark}×${n}` : t.mark];
  });
}

describe("cells read by several tensors (issue 22 §4)", () => {
  it("name every reader of a cell read by 4, 5 and 6 tensors, or the first ones and +N", () => {
    const storage = readers.storages[0];
    const drawn = drawStorage(storage, readers.tensors, storage.wrap, "t");
    const crowded = new Set();
    for (const cell of storage.cells.index) {
      const want = oracleMarks(readers, readersOracle, cell);
      const { marks, rest } = stripNames(drawn, cell);
      if (want.length >= 4) crowded.add(want.length);
      expect(marks.length, `storage[${cell}]`).toBeGreaterThan(0);
      expect(marks, `storage[${cell}]`).toEqual(want.slice(0, marks.length));
      expect(marks.length + rest, `storage[${cell}]`).toBe(want.length);
    }
    expect([...crowded].sort()).toEqual([4, 5, 6]);
  });

  it("say whose read repeats when the marks do not fit, never a bare ×2", () => {
    const drawn = drawStorage(crowd.storages[0], crowd.tensors, crowd.storages[0].wrap, "t");
    // the oracle: d = x[0].expand(2, 4) reads each of storage[0..3] twice, a, b, c once each
    expect(crowd.tensors[3].touch.slice(0, 4)).toEqual([2, 2, 2, 2]);
    for (const cell of [0, 1, 2, 3]) {
      const readersOf = crowd.tensors.filter((t) => t.touch[cell] !== 0);
      const want = readersOf.map((t) => (t.touch[cell] > 1 ? `${t.mark}×${t.touch[cell]}` : t.mark));
      const { marks, rest } = stripNames(drawn, cell);
      expect(marks).toEqual(want.slice(0, marks.length));
      expect(marks.length + rest).toBe(want.length);
    }
    for (const n of drawn.node.querySelectorAll(".sw-count")) expect(n.textContent).not.toMatch(/^×/);
  });

  it("run the marks together while they fit, then keep the first ones and count the rest", () => {
    const w = (chars) => chars * STORAGE_GEOMETRY.boldCharW + 2;
    expect(compactMarks(["A", "B×2", "C?", "D"], w(7))).toBe("AB×2C?D");
    expect(compactMarks(["A", "B", "C", "D", "E", "F"], w(5))).toBe("ABC+3");
    expect(compactMarks(["A", "B", "C", "D", "E", "F"], 1)).toBe("+6");
  });
});

describe("collapsed runs (issue 22: it fits)", () => {
  it("a run is one marked item standing for exactly its cells; every read cell is drawn", () => {
    const storage = meta.storages[0];
    const members = meta.tensors.filter((t) => t.storage === storage.id);
    const layout = layoutStorage(storage, 10, { cellW: 40, room: 600 });
    const gaps = layout.items.filter((item) => item.kind === "gap");
    const drawn = layout.items.filter((item) => item.kind === "cell").length;
    // brute force over the storage: drawn cells and the runs' lengths cover it exactly once
    expect(drawn + gaps.reduce((n, g) => n + g.segment.stop - g.segment.start, 0)).toBe(storage.size);
    for (const gap of gaps) expect(gap.label).toBe(`⋯ ${(gap.segment.stop - gap.segment.start).toLocaleString("en-US")} cells`);
    storage.cells.index.forEach((cell, i) => {
      if (members.some((t) => t.touch[i] !== 0)) expect(layout.positions.has(cell)).toBe(true);
    });
  });
});
