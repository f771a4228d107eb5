// The playground's scene rules against scenes Python built, and every fixture against the schema.
import { readFileSync } from "node:fs";
import Ajv2020 from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
import schema from "../../stridewidget/scene/schema.json";
import aliases from "../fixtures/aliases.json";
import copies from "../fixtures/copies.json";
import expand from "../fixtures/expand.json";
import five from "../fixtures/five.json";
import hd from "../fixtures/hd.json";
import meta from "../fixtures/meta.json";
import unfold from "../fixtures/unfold.json";
import wide from "../fixtures/wide.json";
import xss from "../fixtures/xss.json";
import { playgroundScene } from "../playground/scene.js";
import style from "../../stridewidget/style.json";
import { LIMITS, mergedArrows, panelsFor, suggestWrap } from "./rules.js";

const fixtures = { aliases, copies, expand, five, hd, meta, unfold, wide, xss };
const validate = new Ajv2020({ allErrors: true, strict: false }).compile(schema);

describe("the scene schema", () => {
  it.each(Object.entries(fixtures))("%s matches it", (_, scene) => {
    expect(validate(scene), JSON.stringify(validate.errors)).toBe(true);
  });

  it("rejects a broken scene (it does check)", () => {
    const broken = structuredClone(aliases);
    delete broken.tensors[0].arrows[0].lane;
    expect(validate(broken)).toBe(false);
    expect(validate({ ...aliases, version: 1 })).toBe(false);
  });
});

describe("the playground follows the same rules as build_scene", () => {
  const address = (layout) => (index) => index.reduce((a, i, d) => a + i * layout.strides[d], layout.offset);

  it.each(Object.entries(fixtures))("%s: arrows, panels, limits", (_, scene) => {
    expect(LIMITS).toEqual(scene.limits);
    for (const tensor of scene.tensors) {
      const { shape, strides, itemsize } = tensor.layout;
      expect(mergedArrows(shape, strides, itemsize, address(tensor.layout))).toEqual(tensor.arrows);
      expect(panelsFor(shape.length)).toEqual(tensor.logical.panels);
    }
  });

  it.each(Object.entries(fixtures))("%s: the storage row", (_, scene) => {
    for (const storage of scene.storages) {
      const members = scene.tensors.filter((t) => t.storage === storage.id);
      const layouts = members.map((t) => ({ shape: t.layout.shape, strides: t.layout.strides, hasOverlap: t.layout.has_overlap }));
      expect(suggestWrap(layouts, storage.size)).toBe(storage.wrap);
    }
  });

  it("the playground's scene keeps the schema's shape for the view", () => {
    const state = {
      baseShape: [4, 6], baseStrides: [6, 1], baseOffset: 0, storageSize: 24, dtype: "int64", itemsize: 8, device: "cpu",
      cellStart: 0, cellText: [...Array(24).keys()].map(String), cellValue: [...Array(24).keys()], size: [6, 4], stride: [1, 6], offset: 0,
    };
    const scene = playgroundScene(state, null, "");
    expect(scene.version).toBe(2);
    expect(scene.storages[0].wrap).toBe(24);
    expect(scene.tensors[0].arrows.map((a) => a.label)).toEqual(["d0 +6", "d1 +1"]);
  });
});

describe("colours the CSS repeats from the style", () => {
  it("the playground's phantom cells use the style's phantom colours, per theme", () => {
    const playgroundCss = readFileSync("js/playground/playground.css", "utf8"); // vitest runs from the repo root
    const [light, dark] = playgroundCss.split("@media (prefers-color-scheme: dark)");
    for (const [css, theme] of [
      [light, style.themes.light],
      [dark, style.themes.dark],
    ]) {
      const block = css.slice(css.indexOf("--pg-phantom-bg"));
      expect(block).toContain(`--pg-phantom-bg: ${theme.phantom_bg};`);
      expect(block).toContain(`--pg-phantom-stroke: ${theme.phantom_stroke};`);
      expect(block).toContain(`--pg-phantom-text: ${theme.phantom_text};`);
    }
  });
});
