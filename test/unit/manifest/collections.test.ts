// Collection definitions: names, row schemas, and every per-collection key of the grammar.
import { describe, expect } from "vitest";
import { C, manifest, notes, table, withNotes, X } from "./helpers";

const defsWith = (props: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ Note: { type: "object", properties: props, ...extra } });
const withDef = (def: unknown, over: Record<string, unknown> = {}) => manifest({ collections: { notes: notes(over) } }, { Note: def });

describe("collection names", () => {
  const named = (name: string) => manifest({ collections: { [name]: notes({ schema: undefined }) } });
  table([
    { name: "lowercase with digits, _ and -", input: named("a-b_c1") },
    { name: "64 characters", input: named("a".repeat(64)) },
    { name: "uppercase", input: named("Notes"), code: "collection_name_invalid", path: `${X}.collections.Notes` },
    { name: "starts with a digit", input: named("1notes"), code: "collection_name_invalid", path: `${X}.collections.1notes` },
    { name: "starts with _", input: named("_notes"), code: "collection_name_invalid", path: `${X}.collections._notes` },
    { name: "has a dot", input: named("no.dots"), code: "collection_name_invalid", path: `${X}.collections.no.dots` },
    { name: "65 characters", input: named("a".repeat(65)), code: "collection_name_invalid", path: `${X}.collections.${"a".repeat(65)}` },
    { name: "definition not an object", input: manifest({ collections: { notes: [] } }), code: "manifest_invalid", path: C },
    { name: "unknown key", input: withNotes({ permissions: {} }), code: "manifest_invalid", path: `${C}.permissions` },
  ]);
});

describe("row schema", () => {
  table([
    { name: "a $ref into $defs", input: withNotes(), check: (m) => expect(m.collections.notes.schema).toMatchObject({ ref: "#/$defs/Note", def: "Note", required: ["title"] }) },
    { name: "no schema (schemaless)", input: withNotes({ schema: undefined }), check: (m) => expect(m.collections.notes.schema).toBeNull() },
    { name: "pointer-escaped $defs name", input: manifest({ collections: { notes: notes({ schema: { $ref: "#/$defs/A~1B" } }) } }, { "A/B": { type: "object" } }) },
    { name: "schema inline instead of $ref", input: withNotes({ schema: { type: "object" } }), code: "collection_schema_invalid", path: `${C}.schema` },
    { name: "schema is a string", input: withNotes({ schema: "#/$defs/Note" }), code: "collection_schema_invalid", path: `${C}.schema` },
    { name: "$ref with siblings", input: withNotes({ schema: { $ref: "#/$defs/Note", type: "object" } }), code: "collection_schema_invalid", path: `${C}.schema` },
    { name: "$ref to definitions", input: withNotes({ schema: { $ref: "#/definitions/Note" } }), code: "collection_schema_invalid", path: `${C}.schema.$ref` },
    { name: "$ref to an external document", input: withNotes({ schema: { $ref: "https://example.com/s.json" } }), code: "collection_schema_invalid", path: `${C}.schema.$ref` },
    { name: "$ref to a missing def", input: withNotes({ schema: { $ref: "#/$defs/Missing" } }), code: "collection_schema_invalid", path: `${C}.schema.$ref` },
    { name: "no $defs at all", input: manifest({ collections: { notes: notes() } }, null), code: "collection_schema_invalid", path: `${C}.schema.$ref` },
    { name: "def is a boolean", input: withDef(true), code: "collection_schema_invalid", path: "$defs.Note" },
    { name: "ref to a sibling def", input: manifest({ collections: { notes: notes() } }, { Note: { type: "object", properties: { tag: { $ref: "#/$defs/Tag" } } }, Tag: { type: "string" } }), code: "collection_schema_invalid", path: "$defs.Note.properties.tag.$ref" },
    { name: "unknown type name", input: withDef({ type: "text" }), code: "collection_schema_invalid", path: "$defs.Note.type" },
    { name: "repeated type", input: withDef({ type: ["string", "string"] }), code: "collection_schema_invalid", path: "$defs.Note.type" },
    { name: "bad regex", input: withDef(defsWith({ title: { type: "string", pattern: "[" } }).Note), code: "collection_schema_invalid", path: "$defs.Note.properties.title.pattern" },
    { name: "bad patternProperties regex", input: withDef({ type: "object", patternProperties: { "(": {} } }), code: "collection_schema_invalid", path: "$defs.Note.patternProperties.(" },
    { name: "array-form items", input: withDef(defsWith({ tags: { type: "array", items: [{ type: "string" }] } }).Note), code: "collection_schema_invalid", path: "$defs.Note.properties.tags.items" },
    { name: "required not an array", input: withDef({ type: "object", required: "title" }), code: "collection_schema_invalid", path: "$defs.Note.required" },
    { name: "negative minLength", input: withDef(defsWith({ title: { type: "string", minLength: -1 } }).Note), code: "collection_schema_invalid", path: "$defs.Note.properties.title.minLength" },
    { name: "multipleOf zero", input: withDef(defsWith({ n: { type: "number", multipleOf: 0 } }).Note), code: "collection_schema_invalid", path: "$defs.Note.properties.n.multipleOf" },
    { name: "draft-04 dependencies", input: withDef({ type: "object", dependencies: { a: ["b"] } }), code: "collection_schema_invalid", path: "$defs.Note.dependencies" },
    { name: "non-schema inside anyOf", input: withDef({ anyOf: [5] }), code: "collection_schema_invalid", path: "$defs.Note.anyOf[0]" },
    { name: "maxLength at the row cap", input: withDef(defsWith({ title: { type: "string", maxLength: 65536 } }).Note) },
    { name: "maxLength over the row cap", input: withDef(defsWith({ title: { type: "string", maxLength: 65537 } }).Note), code: "collection_schema_invalid", path: "$defs.Note.properties.title.maxLength" },
    { name: "nested maxLength over the cap", input: withDef(defsWith({ tags: { type: "array", items: { type: "string", maxLength: 100000 } } }).Note), code: "collection_schema_invalid", path: "$defs.Note.properties.tags.items.maxLength" },
    { name: "document storage raises the cap", input: withDef(defsWith({ body: { type: "string", maxLength: 200000 } }).Note, { storage: "document" }), check: (m) => expect(m.collections.notes.maxRowBytes).toBe(262144) },
    { name: "over the document cap", input: withDef(defsWith({ body: { type: "string", maxLength: 300000 } }).Note, { storage: "document" }), code: "collection_schema_invalid", path: "$defs.Note.properties.body.maxLength" },
    { name: "row schema over MAX_SCHEMA_BYTES", input: withNotes(), limits: { MAX_SCHEMA_BYTES: 50 }, code: "manifest_too_large", path: "$defs.Note" },
    { name: "unused big def does not count", input: manifest({ collections: { notes: notes() } }, { Note: { type: "object" }, Big: { description: "x".repeat(200) } }), limits: { MAX_SCHEMA_BYTES: 50 } },
    { name: "2020-12 keywords", input: withDef({ type: "object", properties: { pair: { type: "array", prefixItems: [{ type: "string" }, { type: "number" }], items: false }, when: { type: "string", format: "date" } }, unevaluatedProperties: false, dependentRequired: { a: ["b"] } }) },
    { name: "storage value", input: withNotes({ storage: "blob" }), code: "manifest_invalid", path: `${C}.storage` },
  ]);
});

describe("permission lists", () => {
  const roles = { staff: { label: "Staff" } };
  table([
    { name: "owner only", input: withNotes(), check: (m) => expect(m.collections.notes.permissions.update).toEqual(m.collections.notes.permissions.write) },
    { name: "write missing", input: withNotes({ write: undefined }), code: "permission_role_invalid", path: `${C}.write` },
    { name: "write empty", input: withNotes({ write: [] }), code: "permission_role_invalid", path: `${C}.write` },
    { name: "write a string", input: withNotes({ write: "owner" }), code: "permission_role_invalid", path: `${C}.write` },
    { name: "write holds a number", input: withNotes({ write: [1] }), code: "permission_role_invalid", path: `${C}.write[0]` },
    { name: "agent in write", input: withNotes({ write: ["agent"] }), code: "permission_role_invalid", path: `${C}.write[0]` },
    { name: "agent in read", input: withNotes({ read: ["owner", "agent"] }), code: "permission_role_invalid", path: `${C}.read[1]` },
    { name: "creator in write", input: withNotes({ write: ["creator"] }), code: "permission_role_invalid", path: `${C}.write[0]` },
    { name: "editor in write", input: withNotes({ write: ["owner", "editor"] }), code: "permission_role_invalid", path: `${C}.write[1]` },
    { name: "author in write", input: withNotes({ write: ["author"] }), code: "permission_role_invalid", path: `${C}.write[0]` },
    { name: "member:own in write (spec A)", input: withNotes({ write: ["member:own"] }), check: (m) => expect(m.collections.notes.permissions.write[0]).toEqual({ subject: "member:own", who: "member", scope: "editor" }) },
    { name: "anyone in write without update", input: withNotes({ write: ["anyone"] }), code: "permission_role_invalid", path: `${C}.update` },
    { name: "anyone in write with update", input: withNotes({ write: ["anyone"], update: ["creator"] }), check: (m) => expect(m.collections.notes.permissions.updateInherited).toBe(false) },
    { name: "anyone in write, append-only", input: withNotes({ write: ["anyone"], appendOnly: true }) },
    { name: "anyone:creator in write needs no update", input: withNotes({ write: ["anyone:creator"] }) },
    { name: "update empty list", input: withNotes({ update: [] }), check: (m) => expect(m.collections.notes.permissions.update).toEqual([]) },
    { name: "update with appendOnly", input: withNotes({ update: ["owner"], appendOnly: true }), code: "permission_role_invalid", path: `${C}.update` },
    { name: "update with appendOnly except", input: withNotes({ update: [], appendOnly: { except: ["owner"] } }), code: "permission_role_invalid", path: `${C}.update` },
    { name: "update with appendOnly false", input: withNotes({ update: ["owner"], appendOnly: false }) },
    { name: "delete missing", input: withNotes({ delete: undefined }), code: "permission_role_invalid", path: `${C}.delete` },
    { name: "delete empty", input: withNotes({ delete: [] }), code: "permission_role_invalid", path: `${C}.delete` },
    { name: "read missing", input: withNotes({ read: undefined }), code: "permission_role_invalid", path: `${C}.read` },
    { name: "read empty", input: withNotes({ read: [] }) },
    { name: "undeclared role", input: withNotes({ read: ["staff"] }), code: "permission_role_invalid", path: `${C}.read[0]` },
    { name: "declared role", input: withNotes({ read: ["staff"] }, { roles }) },
    { name: "role:own", input: withNotes({ read: ["staff:own"], update: ["staff:creator"] }, { roles }) },
    { name: "undeclared role:own", input: withNotes({ read: ["ghost:own"] }), code: "permission_role_invalid", path: `${C}.read[0]` },
    { name: "owner:own", input: withNotes({ read: ["owner:own"] }), code: "permission_role_invalid", path: `${C}.read[0]` },
    { name: "unknown narrowing", input: withNotes({ read: ["member:everything"] }), code: "permission_role_invalid", path: `${C}.read[0]` },
    { name: "two colons", input: withNotes({ read: ["member:own:x"] }), code: "permission_role_invalid", path: `${C}.read[0]` },
    { name: "every row-scoped form in read", input: withNotes({ read: ["creator", "editor", "author", "anyone:own", "member:creator", "anyone:creator"] }) },
    { name: "row-scoped in delete", input: withNotes({ delete: ["creator"] }) },
    { name: "countRead", input: withNotes({ countRead: ["anyone", "member"] }), check: (m) => expect(m.collections.notes.permissions.countRead?.map((s) => s.subject)).toEqual(["anyone", "member"]) },
    { name: "countRead with a role", input: withNotes({ countRead: ["staff"] }, { roles }) },
    { name: "countRead row-scoped", input: withNotes({ countRead: ["creator"] }), code: "permission_role_invalid", path: `${C}.countRead[0]` },
    { name: "countRead member:own", input: withNotes({ countRead: ["member:own"] }), code: "permission_role_invalid", path: `${C}.countRead[0]` },
    { name: "duplicates are folded", input: withNotes({ read: ["owner", "owner"] }), check: (m) => expect(m.collections.notes.permissions.read).toHaveLength(1) },
  ]);
});

describe("relations", () => {
  const rel = (r: unknown, over: Record<string, unknown> = {}) => withNotes({ relations: r, ...over });
  table([
    { name: "relation as subject", input: rel({ assignee: { field: "owner_id", set: "writer" } }, { read: ["assignee", "member:assignee"], update: ["assignee"] }), check: (m) => expect(m.collections.notes.permissions.read[1]).toEqual({ subject: "member:assignee", who: "member", scope: "relation", relation: "assignee" }) },
    { name: "unnamed relation needs no set", input: rel({ assignee: { field: "owner_id" } }), check: (m) => expect(m.collections.notes.relations.assignee.set).toBeNull() },
    { name: "named relation without set", input: rel({ assignee: { field: "owner_id" } }, { read: ["assignee"] }), code: "permission_role_invalid", path: `${C}.relations.assignee.set` },
    { name: "relation in write", input: rel({ assignee: { field: "owner_id", set: "caller" } }, { write: ["assignee"] }), code: "permission_role_invalid", path: `${C}.write[0]` },
    { name: "relation in countRead", input: rel({ assignee: { field: "owner_id", set: "caller" } }, { countRead: ["assignee"] }), code: "permission_role_invalid", path: `${C}.countRead[0]` },
    { name: "named like a built-in", input: rel({ creator: { field: "owner_id" } }), code: "permission_role_invalid", path: `${C}.relations.creator` },
    { name: "named like a role", input: manifest({ roles: { staff: { label: "S" } }, collections: { notes: notes({ relations: { staff: { field: "owner_id" } } }) } }), code: "permission_role_invalid", path: `${C}.relations.staff` },
    { name: "field not in schema", input: rel({ assignee: { field: "nope" } }), code: "manifest_invalid", path: `${C}.relations.assignee.field` },
    { name: "field not a string", input: rel({ assignee: { field: "price" } }), code: "manifest_invalid", path: `${C}.relations.assignee.field` },
    { name: "field missing", input: rel({ assignee: { set: "writer" } }), code: "manifest_invalid", path: `${C}.relations.assignee.field` },
    { name: "set value", input: rel({ assignee: { field: "owner_id", set: "anyone" } }), code: "manifest_invalid", path: `${C}.relations.assignee.set` },
    { name: "unknown key", input: rel({ assignee: { field: "owner_id", kind: "x" } }), code: "manifest_invalid", path: `${C}.relations.assignee.kind` },
    { name: "nine relations", input: withNotes({ schema: undefined, relations: Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`r${i}`, { field: `f${i}` }])) }), code: "manifest_invalid", path: `${C}.relations` },
  ]);
});

describe("collection behaviour keys", () => {
  const two = (notesOver: Record<string, unknown>) => manifest({
    collections: {
      notes: notes(notesOver),
      products: { schema: { $ref: "#/$defs/Product" }, read: ["anyone"], write: ["owner"], delete: ["owner"] },
    },
  }, { Note: { type: "object", properties: { slug: { type: "string" }, price: { type: "number" }, qty: { type: "integer" }, total: { type: "number" }, title: { type: "string" } } }, Product: { type: "object", properties: { price: { type: "number" } } } });
  table([
    { name: "appendOnly true", input: withNotes({ appendOnly: true }), check: (m) => expect(m.collections.notes.appendOnly).toBe(true) },
    { name: "appendOnly except owner", input: withNotes({ appendOnly: { except: ["owner"] } }), check: (m) => expect(m.collections.notes.appendOnlyExcept).toEqual(["owner"]) },
    { name: "appendOnly except member", input: withNotes({ appendOnly: { except: ["member"] } }), code: "permission_role_invalid", path: `${C}.appendOnly.except[0]` },
    { name: "appendOnly string", input: withNotes({ appendOnly: "yes" }), code: "manifest_invalid", path: `${C}.appendOnly` },
    { name: "appendOnly unknown key", input: withNotes({ appendOnly: { only: [] } }), code: "manifest_invalid", path: `${C}.appendOnly.only` },
    { name: "unique", input: withNotes({ unique: ["slug", "email"] }), check: (m) => expect(m.collections.notes.unique).toEqual(["slug", "email"]) },
    { name: "unique undeclared field", input: withNotes({ unique: ["nope"] }), code: "manifest_invalid", path: `${C}.unique[0]` },
    { name: "unique repeated", input: withNotes({ unique: ["slug", "slug"] }), code: "manifest_invalid", path: `${C}.unique[1]` },
    { name: "unique a path", input: withNotes({ schema: undefined, unique: ["a.b"] }), code: "manifest_invalid", path: `${C}.unique[0]` },
    { name: "unique on a schemaless collection", input: withNotes({ schema: undefined, unique: ["anything"] }) },
    { name: "keyClaim caller", input: withNotes({ keyClaim: "caller" }), check: (m) => expect(m.collections.notes.keyClaim).toBe("caller") },
    { name: "keyClaim default", input: withNotes(), check: (m) => expect(m.collections.notes.keyClaim).toBe("free") },
    { name: "keyClaim value", input: withNotes({ keyClaim: "loose" }), code: "manifest_invalid", path: `${C}.keyClaim` },
    { name: "immutable", input: withNotes({ immutable: ["slug"] }) },
    { name: "immutable undeclared", input: withNotes({ immutable: ["nope"] }), code: "manifest_invalid", path: `${C}.immutable[0]` },
    { name: "immutable over 16", input: withNotes({ schema: undefined, immutable: Array.from({ length: 17 }, (_, i) => `f${i}`) }), code: "manifest_invalid", path: `${C}.immutable` },
    { name: "serverSet lookup and product", input: two({ serverSet: { price: { from: "products", keyField: "slug", take: "price" }, total: { product: ["price", "qty"] } } }), check: (m) => {
      expect(m.collections.notes.serverSet.total).toEqual({ kind: "product", operands: ["price", "qty"] });
      expect(m.collections.notes.immutable).toContain("slug");
    } },
    { name: "serverSet sum", input: two({ serverSet: { total: { sum: ["price", "qty"] } } }) },
    { name: "lookup from undeclared", input: two({ serverSet: { price: { from: "ghost", keyField: "slug", take: "price" } } }), code: "manifest_invalid", path: `${C}.serverSet.price.from` },
    { name: "lookup take not in source", input: two({ serverSet: { price: { from: "products", keyField: "slug", take: "cost" } } }), code: "manifest_invalid", path: `${C}.serverSet.price.take` },
    { name: "lookup keyField undeclared", input: two({ serverSet: { price: { from: "products", keyField: "sku", take: "price" } } }), code: "manifest_invalid", path: `${C}.serverSet.price.keyField` },
    { name: "lookup missing take", input: two({ serverSet: { price: { from: "products", keyField: "slug" } } }), code: "manifest_invalid", path: `${C}.serverSet.price.take` },
    { name: "operand declared later", input: two({ serverSet: { total: { product: ["price", "qty"] }, price: { from: "products", keyField: "slug", take: "price" } } }), code: "manifest_invalid", path: `${C}.serverSet.total.product[0]` },
    { name: "empty product", input: two({ serverSet: { total: { product: [] } } }), code: "manifest_invalid", path: `${C}.serverSet.total.product` },
    { name: "mixed forms", input: two({ serverSet: { total: { product: ["qty"], from: "products" } } }), code: "manifest_invalid", path: `${C}.serverSet.total.product` },
    { name: "unknown form", input: two({ serverSet: { total: { max: ["qty"] } } }), code: "manifest_invalid", path: `${C}.serverSet.total` },
    { name: "serverSet field undeclared", input: two({ serverSet: { nope: { sum: ["qty"] } } }), code: "manifest_invalid", path: `${C}.serverSet.nope` },
    { name: "retention", input: withNotes({ retention: { maxRows: 500, maxAgeDays: 30 } }), check: (m) => expect(m.collections.notes.retention).toEqual({ maxRows: 500, maxAgeDays: 30 }) },
    { name: "retention one axis", input: withNotes({ retention: { maxAgeDays: 7 } }), check: (m) => expect(m.collections.notes.retention).toEqual({ maxRows: null, maxAgeDays: 7 }) },
    { name: "retention empty", input: withNotes({ retention: {} }), code: "manifest_invalid", path: `${C}.retention` },
    { name: "retention zero rows", input: withNotes({ retention: { maxRows: 0 } }), code: "manifest_invalid", path: `${C}.retention.maxRows` },
    { name: "retention unknown key", input: withNotes({ retention: { maxBytes: 5 } }), code: "manifest_invalid", path: `${C}.retention.maxBytes` },
    { name: "mirror", input: withNotes({ mirror: "server" }) },
    { name: "mirror value", input: withNotes({ mirror: "lazy" }), code: "manifest_invalid", path: `${C}.mirror` },
    { name: "anonWriteBudget", input: withNotes({ write: ["anyone"], update: [], anonWriteBudget: { perIpPerDay: 5, perAppPerDay: 0 } }), check: (m) => expect(m.collections.notes.anonWriteBudget).toEqual({ perIpPerDay: 5, perAppPerDay: 0 }) },
    { name: "anonWriteBudget without anyone", input: withNotes({ anonWriteBudget: { perIpPerDay: 5, perAppPerDay: 10 } }), code: "manifest_invalid", path: `${C}.anonWriteBudget` },
    { name: "anonWriteBudget missing axis", input: withNotes({ write: ["anyone"], update: [], anonWriteBudget: { perIpPerDay: 5 } }), code: "manifest_invalid", path: `${C}.anonWriteBudget.perAppPerDay` },
    { name: "anonWriteBudget negative", input: withNotes({ write: ["anyone"], update: [], anonWriteBudget: { perIpPerDay: -1, perAppPerDay: 1 } }), code: "manifest_invalid", path: `${C}.anonWriteBudget.perIpPerDay` },
    { name: "antiAbuse challenge (spec)", input: withNotes({ write: ["anyone"], update: [], antiAbuse: "challenge" }), check: (m) => expect(m.collections.notes.antiAbuse).toBe("turnstile") },
    { name: "antiAbuse turnstile (wire)", input: withNotes({ write: ["anyone"], update: [], antiAbuse: "turnstile" }) },
    { name: "antiAbuse value", input: withNotes({ write: ["anyone"], update: [], antiAbuse: "captcha" }), code: "manifest_invalid", path: `${C}.antiAbuse` },
    { name: "antiAbuse without anyone", input: withNotes({ antiAbuse: "turnstile" }), code: "manifest_invalid", path: `${C}.antiAbuse` },
    { name: "antiAbuse when the relay has none", input: withNotes({ write: ["anyone"], update: [], antiAbuse: "turnstile" }), limits: { ANTI_ABUSE_ENABLED: false }, code: "manifest_invalid", path: `${C}.antiAbuse` },
    { name: "seedOnInstall", input: withNotes({ seedOnInstall: true }) },
    { name: "seedOnInstall value", input: withNotes({ seedOnInstall: "yes" }), code: "manifest_invalid", path: `${C}.seedOnInstall` },
  ]);
});
