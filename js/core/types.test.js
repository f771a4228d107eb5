// The scene's JSDoc typedefs (js/core/types.js) against its JSON Schema: every property the schema
// names is in the matching typedef, with nothing extra but the fields the browser adds, and a
// property is optional in the typedef exactly when the schema does not require it.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import schema from "../../stridewidget/scene/schema.json";

const source = readFileSync("js/core/types.js", "utf8"); // vitest runs from the repo root

/** typedef name -> Map(property -> optional?) */
function typedefs(text) {
  const found = new Map();
  for (const block of text.split("/**").slice(1)) {
    const name = block.match(/@typedef \{object\} (\w+)/)?.[1];
    if (!name) continue;
    const props = new Map();
    for (const match of block.matchAll(/@property \{.*?\} (\[?)(\w+)\]?/g)) props.set(match[2], match[1] === "[");
    found.set(name, props);
  }
  return found;
}

const defs = schema.$defs;
const tensor = defs.tensor.properties;
const readsObject = tensor.reads.oneOf.find((s) => s.type === "object");
const SCHEMA_OBJECTS = {
  Scene: schema,
  Limits: schema.properties.limits,
  Storage: defs.storage,
  Segment: defs.storage.properties.segments.items,
  StorageCells: defs.storage.properties.cells,
  Tensor: defs.tensor,
  LayoutDict: tensor.layout,
  Logical: tensor.logical,
  Panels: tensor.logical.properties.panels,
  Slice: defs.slice,
  SliceGap: defs.slice_gap,
  Arrow: defs.arrow,
  Reads: readsObject,
};
/** Fields the browser adds to a scene it was given (never sent by Python). */
const BROWSER_ONLY = { Slice: ["picked", "filled"] };

describe("the scene's typedefs follow its schema", () => {
  const found = typedefs(source);
  it("has a typedef for each object of the schema, and no other", () => {
    expect([...found.keys()].sort()).toEqual(Object.keys(SCHEMA_OBJECTS).sort());
  });
  it.each(Object.entries(SCHEMA_OBJECTS))("%s: the same properties, optional where not required", (name, object) => {
    const props = found.get(name);
    const required = new Set(object.required ?? []);
    const expected = Object.keys(object.properties).map((key) => [key, !required.has(key)]);
    for (const key of BROWSER_ONLY[name] ?? []) expected.push([key, true]);
    expect([...props.entries()].sort()).toEqual(expected.sort());
  });
});
