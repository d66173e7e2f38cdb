// A manifest that exercises every schema feature the type generator handles, shared by the
// unit tests and the node test that compiles the generated file with tsc.
import { parseManifest, type CompiledManifest } from "../../../src/manifest";

const owner = { read: ["owner"], write: ["owner"], delete: ["owner"] };

export const TYPES_MANIFEST = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  $defs: {
    Todo: {
      type: "object",
      required: ["title", "status"],
      additionalProperties: false,
      properties: {
        title: { type: "string", description: "What to do" },
        status: { enum: ["open", "done"] },
        kind: { const: "todo" },
        due: { type: "string", format: "date" },
        estimate: { type: ["number", "null"] },
        note: { type: "string", nullable: true },
        tags: { type: "array", items: { type: "string" } },
        assignee: { type: "object", required: ["name"], properties: { name: { type: "string" } } },
        ref: { anyOf: [{ type: "string" }, { type: "integer" }] },
        shape: { oneOf: [{ type: "object", properties: { radius: { type: "number" } }, required: ["radius"], additionalProperties: false }, { type: "boolean" }] },
        weird: { not: { type: "string" } },
        "odd-key": { type: "boolean" },
      },
    },
    Person: {
      type: "object",
      required: ["name"],
      properties: { name: { type: "string" }, email: { type: "string", format: "email" } },
    },
    Scores: { type: "object", additionalProperties: { type: "number" } },
  },
  "x-service-manifest": {
    app: { name: "Typed app" },
    collections: {
      todos: { schema: { $ref: "#/$defs/Todo" }, ...owner },
      people: { schema: { $ref: "#/$defs/Person" }, ...owner },
      row: { schema: { $ref: "#/$defs/Scores" }, ...owner },
      todo_items: { schema: { $ref: "#/$defs/Todo" }, ...owner },
      "todo-items": { schema: { $ref: "#/$defs/Person" }, ...owner },
    },
  },
};

export function typesManifest(): CompiledManifest {
  return parseManifest(TYPES_MANIFEST);
}
