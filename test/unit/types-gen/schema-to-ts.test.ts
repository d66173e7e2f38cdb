// One schema at a time: what each keyword becomes, and what falls back to unknown.
import { describe, expect, it } from "vitest";
import { pascalCase, schemaToType } from "../../../src/types-gen";
import type { JsonValue } from "../../../src/manifest";

const noRefs = () => undefined;

describe("schemaToType", () => {
  it.each([
    [true, "unknown"],
    [false, "never"],
    [{ type: "integer" }, "number"],
    [{ type: "string", format: "uuid" }, "string"],
    [{ const: 3 }, "3"],
    [{ const: { a: 1 } }, "unknown /* non-scalar const */"],
    [{ enum: ["a", 1, null] }, '"a" | 1 | null'],
    [{ type: "array" }, "unknown[]"],
    [{ type: "array", items: { type: ["string", "null"] } }, "Array<string | null>"],
    [{ type: "array", prefixItems: [{ type: "string" }, { type: "number" }], items: false }, "[string, number]"],
    [{ allOf: [{ type: "string" }, { enum: ["x"] }] }, '(string) & ("x")'],
    [{ $ref: "#/$defs/Missing" }, "unknown /* unsupported $ref #/$defs/Missing */"],
    [{ $ref: "https://example.com/s" }, "unknown /* unsupported $ref https://example.com/s */"],
    [{ if: {}, then: {} }, 'unknown /* "if" has no TypeScript equivalent */'],
    [{ type: "object", additionalProperties: false }, "{}"],
    [{ type: "object" }, "{\n  [key: string]: unknown;\n}"],
  ])("%j → %s", (schema, expected) => {
    expect(schemaToType(schema as JsonValue, noRefs)).toBe(expected);
  });

  it("never lets a comment end early", () => {
    expect(schemaToType({ $ref: "x*/y" }, noRefs)).toBe("unknown /* unsupported $ref x* /y */");
  });
});

describe("pascalCase", () => {
  it.each([
    ["todos", "Todos"],
    ["todo-items", "TodoItems"],
    ["todo_items", "TodoItems"],
    ["9lives", "T9lives"],
  ])("%s → %s", (name, expected) => {
    expect(pascalCase(name)).toBe(expected);
  });
});
