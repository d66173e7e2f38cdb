// Row validation against compiled schemas (inside workerd: proves no code generation is
// needed), the cached validators, and the deploy's input_data check.
import { describe, expect, it } from "vitest";
import { parseManifest, rowValidator, validateInputData, validateRow } from "../../../src/manifest";
import { errorOf, manifest, notes } from "./helpers";

const compiled = parseManifest(manifest({
  collections: {
    notes: notes(),
    strict: { schema: { $ref: "#/$defs/Strict" }, read: ["owner"], write: ["owner"], delete: ["owner"] },
    loose: { read: ["owner"], write: ["owner"], delete: ["owner"] },
  },
}, {
  Note: { type: "object", required: ["title"], properties: { title: { type: "string", maxLength: 5 }, tags: { type: "array", items: { type: "string" } }, when: { type: "string", format: "date" }, n: { anyOf: [{ type: "string" }, { type: "number" }] } } },
  Strict: { type: "object", additionalProperties: false, properties: { a: { type: "integer", minimum: 0 }, list: { type: "array", contains: { type: "string" }, prefixItems: [{}], items: false } } },
}));

describe("validateRow", () => {
  const cases: { name: string; collection: string; data: unknown; errors?: { path: string; keyword: string }[] }[] = [
    { name: "valid row", collection: "notes", data: { title: "Hi", tags: ["a"], when: "2026-11-22" } },
    { name: "missing required field", collection: "notes", data: {}, errors: [{ path: "/title", keyword: "required" }] },
    { name: "wrong type", collection: "notes", data: { title: 5 }, errors: [{ path: "/title", keyword: "type" }] },
    { name: "too long", collection: "notes", data: { title: "toolong" }, errors: [{ path: "/title", keyword: "maxLength" }] },
    { name: "array item", collection: "notes", data: { title: "a", tags: ["x", 3] }, errors: [{ path: "/tags/1", keyword: "type" }] },
    { name: "format", collection: "notes", data: { title: "a", when: "tomorrow" }, errors: [{ path: "/when", keyword: "format" }] },
    { name: "anyOf", collection: "notes", data: { title: "a", n: true }, errors: [{ path: "/n", keyword: "anyOf" }, { path: "/n", keyword: "type" }, { path: "/n", keyword: "type" }] },
    { name: "not an object", collection: "notes", data: [1], errors: [{ path: "", keyword: "type" }] },
    { name: "additional property", collection: "strict", data: { a: 1, b: 2 }, errors: [{ path: "/b", keyword: "additionalProperties" }] },
    { name: "several errors at once", collection: "strict", data: { a: -1.5, c: 0 }, errors: [{ path: "/a", keyword: "type" }, { path: "/a", keyword: "minimum" }, { path: "/c", keyword: "additionalProperties" }] },
    { name: "contains", collection: "strict", data: { list: [1] }, errors: [{ path: "/list", keyword: "contains" }] },
    { name: "items false", collection: "strict", data: { list: ["a", "b"] }, errors: [{ path: "/list/1", keyword: "items" }] },
    { name: "schemaless accepts any JSON", collection: "loose", data: "just a string" },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const result = validateRow(compiled, c.collection, c.data);
      if (!c.errors) {
        expect(result).toEqual({ ok: true });
        return;
      }
      expect(result.ok).toBe(false);
      if (result.ok) return;
      expect(result.errors.map(({ path, keyword }) => ({ path, keyword }))).toEqual(c.errors);
      for (const e of result.errors) expect(e.message).toEqual(expect.any(String));
    });
  }

  it("an undeclared collection is collection_not_found", () => {
    expect(errorOf(() => validateRow(compiled, "ghost", {})).code).toBe("collection_not_found");
    expect(errorOf(() => validateRow(compiled, "constructor", {})).code).toBe("collection_not_found");
  });

  it("a bound validator answers the same, and a JSON round trip of the compiled manifest too", () => {
    const bound = rowValidator(compiled);
    expect(bound.validateRow("notes", { title: 1 })).toEqual(validateRow(compiled, "notes", { title: 1 }));
    const revived = JSON.parse(JSON.stringify(compiled));
    expect(revived).toEqual(compiled);
    expect(validateRow(revived, "strict", { a: 1, b: 2 })).toEqual(validateRow(compiled, "strict", { a: 1, b: 2 }));
  });

  it("validating leaves the compiled manifest unchanged (serialisable)", () => {
    const before = JSON.stringify(compiled);
    validateRow(compiled, "notes", { title: "x" });
    expect(JSON.stringify(compiled)).toBe(before);
    expect(structuredClone(compiled)).toEqual(compiled);
  });
});

describe("validateInputData", () => {
  it("accepts rows for declared collections", () => {
    expect(validateInputData(compiled, { notes: [{ data: { title: "a" } }, { key: "k2", data: { title: "b" } }], loose: [{ data: 1 }] }))
      .toEqual({ notes: [{ key: null, data: { title: "a" } }, { key: "k2", data: { title: "b" } }], loose: [{ key: null, data: 1 }] });
  });

  const bad: { name: string; input: unknown; code: string; path: string }[] = [
    { name: "not an object", input: [], code: "input_schema_violation", path: "input_data" },
    { name: "undeclared collection", input: { ghost: [] }, code: "input_schema_violation", path: "input_data.ghost" },
    { name: "rows not an array", input: { notes: {} }, code: "input_schema_violation", path: "input_data.notes" },
    { name: "row not an object", input: { notes: [5] }, code: "input_schema_violation", path: "input_data.notes[0]" },
    { name: "row without data", input: { notes: [{ key: "a" }] }, code: "input_schema_violation", path: "input_data.notes[0].data" },
    { name: "row with an unknown key", input: { notes: [{ data: {}, id: 1 }] }, code: "input_schema_violation", path: "input_data.notes[0].id" },
    { name: "empty key", input: { notes: [{ key: "", data: { title: "a" } }] }, code: "input_schema_violation", path: "input_data.notes[0].key" },
    { name: "duplicate key", input: { notes: [{ key: "a", data: { title: "a" } }, { key: "a", data: { title: "b" } }] }, code: "input_schema_violation", path: "input_data.notes[1].key" },
    { name: "schema failure", input: { notes: [{ data: { title: "ok" } }, { data: { title: 7 } }] }, code: "input_schema_violation", path: "input_data.notes[1].data/title" },
    { name: "row over the byte cap", input: { loose: [{ data: "x".repeat(70000) }] }, code: "row_size_exceeded", path: "input_data.loose[0].data" },
  ];
  for (const c of bad) {
    it(`${c.name} → ${c.code} at ${c.path}`, () => {
      const err = errorOf(() => validateInputData(compiled, c.input));
      expect({ code: err.code, path: err.details?.path }).toEqual({ code: c.code, path: c.path });
    });
  }

  it("lists every failing path", () => {
    const err = errorOf(() => validateInputData(compiled, { notes: [{ data: {} }, { data: { title: "toolong" } }] }));
    expect((err.details?.errors as { path: string }[]).map((e) => e.path)).toEqual(["input_data.notes[0].data/title", "input_data.notes[1].data/title"]);
  });
});
