// The document around the extension, the `app` block and manifest-wide keys.
import { describe, expect } from "vitest";
import { manifest, table, withNotes, X } from "./helpers";

describe("manifest document", () => {
  table([
    { name: "minimal manifest", input: manifest({}, null), check: (m) => expect(m.collections).toEqual({}) },
    { name: "manifest given as JSON text", input: JSON.stringify(manifest()), check: (m) => expect(m.app.name).toBe("Test app") },
    { name: "$schema may be omitted", input: { "x-service-manifest": { app: { name: "A" } } } },
    { name: "other JSON Schema keys at the top are fine", input: { title: "x", ...manifest() } },
    { name: "empty collections map", input: manifest({ collections: {} }) },
    { name: "an array", input: [], code: "manifest_invalid", path: "" },
    { name: "not JSON text", input: "{nope", code: "manifest_invalid", path: "" },
    { name: "a number", input: 5, code: "manifest_invalid", path: "" },
    { name: "over MAX_MANIFEST_BYTES", input: manifest(), limits: { MAX_MANIFEST_BYTES: 50 }, code: "manifest_too_large", path: "" },
    { name: "draft-07 $schema", input: { ...manifest(), $schema: "http://json-schema.org/draft-07/schema#" }, code: "manifest_invalid", path: "$schema" },
    { name: "$defs not an object", input: { ...manifest(), $defs: [] }, code: "manifest_invalid", path: "$defs" },
    { name: "no extension key", input: { $defs: {} }, code: "manifest_invalid", path: X },
    { name: "extension not an object", input: { [X]: [] }, code: "manifest_invalid", path: X },
    { name: "unknown top-level key", input: manifest({ visibility: "public" }), code: "manifest_invalid", path: `${X}.visibility` },
    { name: "too many collections", input: manifest({ collections: { a: {}, b: {}, c: {} } }), limits: { MAX_COLLECTIONS_PER_APP: 2 }, code: "too_many_collections", path: `${X}.collections` },
    { name: "a __proto__ collection in JSON text", input: '{"x-service-manifest": {"app": {"name": "A"}, "collections": {"__proto__": {"read": [], "write": ["owner"], "delete": ["owner"]}}}}', code: "collection_name_invalid", path: `${X}.collections.__proto__` },
    { name: "a __proto__ role in JSON text", input: '{"x-service-manifest": {"app": {"name": "A"}, "roles": {"__proto__": {"label": "x"}}}}', code: "permission_role_invalid", path: `${X}.roles.__proto__` },
    { name: "collections not a map", input: manifest({ collections: [] }), code: "manifest_invalid", path: `${X}.collections` },
    { name: "cdn not boolean", input: manifest({ cdn: "yes" }), code: "manifest_invalid", path: `${X}.cdn` },
    { name: "offline with cdn", input: manifest({ cdn: true, offline: true }), code: "manifest_invalid", path: `${X}.offline` },
    { name: "offline alone", input: manifest({ offline: true }), check: (m) => expect(m.offline).toBe(true) },
  ]);
});

describe("app identity", () => {
  const app = (a: unknown) => ({ [X]: { app: a } });
  table([
    { name: "full app block", input: app({ name: "Notes", description: "Shared notes", icon: "📝", indexable: true, ogImage: "https://cdn.example.com/og.png" }), check: (m) => expect(m.app).toEqual({ name: "Notes", description: "Shared notes", icon: "📝", indexable: true, ogImage: "https://cdn.example.com/og.png" }) },
    { name: "emoji with skin tone", input: app({ name: "A", icon: "👍🏽" }) },
    { name: "flag emoji", input: app({ name: "A", icon: "🇫🇷" }) },
    { name: "ZWJ family emoji", input: app({ name: "A", icon: "👨‍👩‍👧" }) },
    { name: "missing app", input: { [X]: {} }, code: "manifest_invalid", path: `${X}.app` },
    { name: "missing name", input: app({}), code: "manifest_invalid", path: `${X}.app.name` },
    { name: "blank name", input: app({ name: "  " }), code: "manifest_invalid", path: `${X}.app.name` },
    { name: "name over 80", input: app({ name: "n".repeat(81) }), code: "manifest_invalid", path: `${X}.app.name` },
    { name: "description over 280", input: app({ name: "A", description: "d".repeat(281) }), code: "manifest_invalid", path: `${X}.app.description` },
    { name: "icon is a letter", input: app({ name: "A", icon: "A" }), code: "manifest_invalid", path: `${X}.app.icon` },
    { name: "icon is a digit", input: app({ name: "A", icon: "7" }), code: "manifest_invalid", path: `${X}.app.icon` },
    { name: "two emoji", input: app({ name: "A", icon: "😀😀" }), code: "manifest_invalid", path: `${X}.app.icon` },
    { name: "emoji with text", input: app({ name: "A", icon: "😀a" }), code: "manifest_invalid", path: `${X}.app.icon` },
    { name: "indexable not boolean", input: app({ name: "A", indexable: 1 }), code: "manifest_invalid", path: `${X}.app.indexable` },
    { name: "ogImage over http", input: app({ name: "A", ogImage: "http://cdn.example.com/og.png" }), code: "manifest_invalid", path: `${X}.app.ogImage` },
    { name: "unknown app key", input: app({ name: "A", theme: "dark" }), code: "manifest_invalid", path: `${X}.app.theme` },
  ]);
});

describe("settingsCollection", () => {
  table([
    { name: "owner-only write", input: withNotes({}, { settingsCollection: "notes" }), check: (m) => expect(m.settingsCollection).toBe("notes") },
    { name: "undeclared", input: withNotes({}, { settingsCollection: "ghost" }), code: "manifest_invalid", path: `${X}.settingsCollection` },
    { name: "write not exactly owner", input: withNotes({ write: ["owner", "member"] }, { settingsCollection: "notes" }), code: "manifest_invalid", path: `${X}.settingsCollection` },
  ]);
});
