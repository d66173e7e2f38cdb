// The redeploy compatibility gate: each way to strand rows or widen disclosure trips it
// (with the path named), and each narrowing or loosening does not.
import { describe, expect, it } from "vitest";
import { compatGate, parseManifest, schemaTightenings } from "../../../src/manifest";
import { C, manifest, notes, X } from "./helpers";

type Obj = Record<string, unknown>;
const NOTE = {
  type: "object",
  required: ["title"],
  properties: {
    title: { type: "string", maxLength: 100, minLength: 1 },
    body: { type: "string" },
    price: { type: "number", minimum: 0, maximum: 1000 },
    qty: { type: "integer" },
    status: { type: "string", enum: ["open", "done"] },
    owner_id: { type: "string" },
    slug: { type: "string" },
    tags: { type: "array", items: { type: "string" } },
  },
};
const BASE = { collections: { notes: notes({ read: ["member"], relations: { assignee: { field: "owner_id", set: "writer" } } }) }, roles: { staff: { label: "Staff" }, lead: { label: "Lead" } } };

function build(ext: Obj = {}, note: Obj = NOTE, collections?: Obj) {
  const merged: Obj = { ...BASE, ...ext };
  if (collections) merged.collections = collections;
  return parseManifest(manifest(merged, { Note: note }));
}
const withProps = (props: Obj, extra: Obj = {}) => ({ ...NOTE, properties: { ...NOTE.properties, ...props }, ...extra });
const notesWith = (over: Obj) => ({ notes: notes({ read: ["member"], relations: { assignee: { field: "owner_id", set: "writer" } }, ...over }) });
const D = "$defs.Note";

interface Case { name: string; prev?: ReturnType<typeof build>; next: ReturnType<typeof build>; breaks: string[] }

const hookRule = (url: string) => [{ on: "create", collection: "notes", url }];
const route = (r: Obj = {}) => ({ path: "/p/:slug", collection: "notes", matchOn: "slug", title: "{title}", ...r });
const publicNotes = (over: Obj = {}) => notesWith({ read: ["anyone"], unique: ["slug"], ...over });

const cases: Case[] = [
  // --- nothing changed ---
  { name: "identical manifests", next: build(), breaks: [] },

  // --- strands rows ---
  { name: "collection removed", next: build({}, NOTE, {}), breaks: [C] },
  { name: "schema added to a schemaless collection", prev: build({}, NOTE, notesWith({ schema: undefined })), next: build(), breaks: [`${C}.schema`] },
  { name: "new required field", next: build({}, { ...NOTE, required: ["title", "body"] }), breaks: [`${D}.required`] },
  { name: "type narrowed number → integer", next: build({}, withProps({ price: { type: "integer", minimum: 0, maximum: 1000 } })), breaks: [`${D}.properties.price.type`] },
  { name: "type added where none was", prev: build({}, withProps({ extra: {} })), next: build({}, withProps({ extra: { type: "string" } })), breaks: [`${D}.properties.extra.type`] },
  { name: "enum lost a value", next: build({}, withProps({ status: { type: "string", enum: ["open"] } })), breaks: [`${D}.properties.status.enum`] },
  { name: "enum added", next: build({}, withProps({ body: { type: "string", enum: ["a"] } })), breaks: [`${D}.properties.body.enum`] },
  { name: "const added", next: build({}, withProps({ body: { type: "string", const: "a" } })), breaks: [`${D}.properties.body.const`] },
  { name: "maxLength lowered", next: build({}, withProps({ title: { type: "string", maxLength: 50, minLength: 1 } })), breaks: [`${D}.properties.title.maxLength`] },
  { name: "minLength raised", next: build({}, withProps({ title: { type: "string", maxLength: 100, minLength: 3 } })), breaks: [`${D}.properties.title.minLength`] },
  { name: "maximum lowered", next: build({}, withProps({ price: { type: "number", minimum: 0, maximum: 999 } })), breaks: [`${D}.properties.price.maximum`] },
  { name: "minimum raised", next: build({}, withProps({ price: { type: "number", minimum: 1, maximum: 1000 } })), breaks: [`${D}.properties.price.minimum`] },
  { name: "exclusiveMaximum added", next: build({}, withProps({ qty: { type: "integer", exclusiveMaximum: 10 } })), breaks: [`${D}.properties.qty.exclusiveMaximum`] },
  { name: "multipleOf made stricter", prev: build({}, withProps({ qty: { type: "integer", multipleOf: 5 } })), next: build({}, withProps({ qty: { type: "integer", multipleOf: 10 } })), breaks: [`${D}.properties.qty.multipleOf`] },
  { name: "pattern added", next: build({}, withProps({ slug: { type: "string", pattern: "^[a-z]+$" } })), breaks: [`${D}.properties.slug.pattern`] },
  { name: "format added", next: build({}, withProps({ body: { type: "string", format: "email" } })), breaks: [`${D}.properties.body.format`] },
  { name: "items narrowed", next: build({}, withProps({ tags: { type: "array", items: { type: "string", maxLength: 5 } } })), breaks: [`${D}.properties.tags.items.maxLength`] },
  { name: "maxItems added", next: build({}, withProps({ tags: { type: "array", items: { type: "string" }, maxItems: 3 } })), breaks: [`${D}.properties.tags.maxItems`] },
  { name: "uniqueItems added", next: build({}, withProps({ tags: { type: "array", items: { type: "string" }, uniqueItems: true } })), breaks: [`${D}.properties.tags.uniqueItems`] },
  { name: "additionalProperties false added", next: build({}, { ...NOTE, additionalProperties: false }), breaks: [`${D}.additionalProperties`] },
  { name: "property removed under additionalProperties false", prev: build({}, { ...NOTE, additionalProperties: false }), next: build({}, { ...NOTE, additionalProperties: false, properties: { ...NOTE.properties, body: undefined } }), breaks: [`${D}.properties.body`] },
  { name: "anyOf changed", prev: build({}, withProps({ body: { anyOf: [{ type: "string" }, { type: "null" }] } })), next: build({}, withProps({ body: { anyOf: [{ type: "string" }] } })), breaks: [`${D}.properties.body.anyOf`] },
  { name: "document storage dropped", prev: build({}, NOTE, notesWith({ storage: "document" })), next: build(), breaks: [`${C}.storage`] },
  { name: "made append-only", next: build({}, NOTE, notesWith({ appendOnly: true })), breaks: [`${C}.appendOnly`] },
  { name: "made append-only with an owner exception", next: build({}, NOTE, notesWith({ appendOnly: { except: ["owner"] } })), breaks: [`${C}.appendOnly`] },
  { name: "keyClaim loosened to free", prev: build({}, NOTE, notesWith({ keyClaim: "server" })), next: build(), breaks: [`${C}.keyClaim`] },
  { name: "keyClaim caller loosened to free", prev: build({}, NOTE, notesWith({ keyClaim: "caller" })), next: build({}, NOTE, notesWith({ keyClaim: "free" })), breaks: [`${C}.keyClaim`] },

  // --- widens disclosure ---
  { name: "read member → anyone", next: build({}, NOTE, notesWith({ read: ["anyone"] })), breaks: [`${C}.read`] },
  { name: "read gains a role", next: build({}, NOTE, notesWith({ read: ["member", "staff"] })), breaks: [`${C}.read`] },
  { name: "read creator → member", prev: build({}, NOTE, notesWith({ read: ["creator"] })), next: build(), breaks: [`${C}.read`] },
  { name: "read member:own → member", prev: build({}, NOTE, notesWith({ read: ["member:own"] })), next: build(), breaks: [`${C}.read`] },
  { name: "read member → creator (anonymous creators now read their rows)", next: build({}, NOTE, notesWith({ read: ["creator"] })), breaks: [`${C}.read`] },
  { name: "read creator → editor", prev: build({}, NOTE, notesWith({ read: ["creator"] })), next: build({}, NOTE, notesWith({ read: ["editor"] })), breaks: [`${C}.read`] },
  { name: "relation now reads a different field", prev: build({}, NOTE, notesWith({ read: ["assignee"] })), next: build({}, NOTE, notesWith({ read: ["assignee"], relations: { assignee: { field: "slug", set: "writer" } } })), breaks: [`${C}.read`] },
  { name: "a role now included by another role", prev: build({}, NOTE, notesWith({ read: ["staff"] })), next: build({ roles: { staff: { label: "Staff" }, lead: { label: "Lead", includes: ["staff"] } } }, NOTE, notesWith({ read: ["staff"] })), breaks: [`${C}.read`] },
  { name: "countRead added", next: build({}, NOTE, notesWith({ countRead: ["anyone"] })), breaks: [`${C}.countRead`] },
  { name: "countRead widened", prev: build({}, NOTE, notesWith({ countRead: ["member"] })), next: build({}, NOTE, notesWith({ countRead: ["anyone"] })), breaks: [`${C}.countRead`] },
  { name: "capability added", next: build({ capabilities: ["camera"] }), breaks: [`${X}.capabilities[0]`] },
  { name: "cdn turned on", next: build({ cdn: true }), breaks: [`${X}.cdn`] },
  { name: "new external host", prev: build({ externalHosts: ["https://a.example.com"] }), next: build({ externalHosts: ["https://a.example.com", "https://b.example.com"] }), breaks: [`${X}.externalHosts[1]`] },
  { name: "host widened to a wildcard", prev: build({ externalHosts: ["https://a.example.com"] }), next: build({ externalHosts: ["https://*.example.com"] }), breaks: [`${X}.externalHosts[0]`] },
  { name: "new embed", next: build({ embeds: ["https://www.youtube.com"] }), breaks: [`${X}.embeds[0]`] },
  { name: "new embed ancestor", next: build({ embedAncestors: ["https://partner.example.com"] }), breaks: [`${X}.embedAncestors[0]`] },
  { name: "new webhook target", prev: build({ webhooks: hookRule("https://hooks.example.com/a") }), next: build({ webhooks: [...hookRule("https://hooks.example.com/a"), ...hookRule("https://other.example.net/b")] }), breaks: [`${X}.webhooks[1].url`] },
  { name: "first webhook", next: build({ webhooks: hookRule("https://hooks.example.com/a") }), breaks: [`${X}.webhooks[0].url`] },
  { name: "schedule webhook target", next: build({ schedules: [{ collection: "notes", dateField: "slug", url: "https://hooks.example.com/due" }] }), breaks: [`${X}.schedules[0].url`] },
  { name: "route added", prev: build({}, NOTE, publicNotes()), next: build({ routes: [route()] }, NOTE, publicNotes()), breaks: [`${X}.routes[0]`] },
  { name: "route made indexable", prev: build({ routes: [route()] }, NOTE, publicNotes()), next: build({ routes: [route({ indexable: true })] }, NOTE, publicNotes()), breaks: [`${X}.routes[0]`] },
  { name: "route renders more fields", prev: build({ routes: [route()] }, NOTE, publicNotes()), next: build({ routes: [route({ summary: ["body"] })] }, NOTE, publicNotes()), breaks: [`${X}.routes[0]`] },
  { name: "route matches on key instead", prev: build({ routes: [route()] }, NOTE, publicNotes()), next: build({ routes: [route({ path: "/p/:key", matchOn: "key" })] }, NOTE, publicNotes()), breaks: [`${X}.routes[0]`] },

  // --- narrowing or loosening: never a break ---
  { name: "optional property added", next: build({}, withProps({ extra: { type: "string", maxLength: 5 } })), breaks: [] },
  { name: "required field dropped", next: build({}, { ...NOTE, required: [] }), breaks: [] },
  { name: "maxLength raised", next: build({}, withProps({ title: { type: "string", maxLength: 500, minLength: 1 } })), breaks: [] },
  { name: "maximum removed", next: build({}, withProps({ price: { type: "number", minimum: 0 } })), breaks: [] },
  { name: "type widened integer → number", next: build({}, withProps({ qty: { type: ["number", "null"] } })), breaks: [] },
  { name: "enum widened", next: build({}, withProps({ status: { type: "string", enum: ["open", "done", "archived"] } })), breaks: [] },
  { name: "additionalProperties false removed", prev: build({}, { ...NOTE, additionalProperties: false }), next: build(), breaks: [] },
  { name: "property added under additionalProperties false", prev: build({}, { ...NOTE, additionalProperties: false }), next: build({}, { ...withProps({ extra: { type: "string" } }), additionalProperties: false }), breaks: [] },
  { name: "multipleOf loosened", prev: build({}, withProps({ qty: { type: "integer", multipleOf: 10 } })), next: build({}, withProps({ qty: { type: "integer", multipleOf: 5 } })), breaks: [] },
  { name: "annotations changed", next: build({}, withProps({ title: { type: "string", maxLength: 100, minLength: 1, description: "The title", title: "Title" } })), breaks: [] },
  { name: "schema renamed but equal", next: parseManifest(manifest({ ...BASE, collections: notesWith({ schema: { $ref: "#/$defs/Note2" } }) }, { Note2: NOTE })), breaks: [] },
  { name: "schema removed", next: build({}, NOTE, notesWith({ schema: undefined })), breaks: [] },
  { name: "unique added", next: build({}, NOTE, notesWith({ unique: ["slug"] })), breaks: [] },
  { name: "update: [creator] added", next: build({}, NOTE, notesWith({ update: ["creator"] })), breaks: [] },
  { name: "read narrowed anyone → member", prev: build({}, NOTE, notesWith({ read: ["anyone"] })), next: build(), breaks: [] },
  { name: "read narrowed member → member:own", next: build({}, NOTE, notesWith({ read: ["member:own"] })), breaks: [] },
  { name: "read narrowed anyone → creator", prev: build({}, NOTE, notesWith({ read: ["anyone"] })), next: build({}, NOTE, notesWith({ read: ["creator"] })), breaks: [] },
  { name: "read emptied", next: build({}, NOTE, notesWith({ read: [] })), breaks: [] },
  { name: "owner added beside member", next: build({}, NOTE, notesWith({ read: ["member", "owner"] })), breaks: [] },
  { name: "member:own added beside member", next: build({}, NOTE, notesWith({ read: ["member", "member:own"] })), breaks: [] },
  { name: "countRead removed", prev: build({}, NOTE, notesWith({ countRead: ["anyone"] })), next: build(), breaks: [] },
  { name: "write widened (not disclosure)", next: build({}, NOTE, notesWith({ write: ["member"] })), breaks: [] },
  { name: "append-only removed", prev: build({}, NOTE, notesWith({ appendOnly: true })), next: build(), breaks: [] },
  { name: "keyClaim free → server", next: build({}, NOTE, notesWith({ keyClaim: "server" })), breaks: [] },
  { name: "document storage added", next: build({}, NOTE, notesWith({ storage: "document" })), breaks: [] },
  { name: "collection added", next: build({}, NOTE, { ...notesWith({}), extra: { read: ["owner"], write: ["owner"], delete: ["owner"] } }), breaks: [] },
  { name: "capability removed", prev: build({ capabilities: ["camera"] }), next: build(), breaks: [] },
  { name: "cdn turned off", prev: build({ cdn: true }), next: build(), breaks: [] },
  { name: "host covered by an existing wildcard", prev: build({ externalHosts: ["https://*.example.com"] }), next: build({ externalHosts: ["https://*.example.com", "https://api.example.com", "https://*.eu.example.com"] }), breaks: [] },
  { name: "host removed", prev: build({ externalHosts: ["https://a.example.com"] }), next: build(), breaks: [] },
  { name: "webhook to the same origin, new path", prev: build({ webhooks: hookRule("https://hooks.example.com/a") }), next: build({ webhooks: hookRule("https://hooks.example.com/b?x=1") }), breaks: [] },
  { name: "webhook removed", prev: build({ webhooks: hookRule("https://hooks.example.com/a") }), next: build(), breaks: [] },
  { name: "route removed", prev: build({ routes: [route()] }, NOTE, publicNotes()), next: build({}, NOTE, publicNotes()), breaks: [] },
  { name: "route param renamed, title shortened", prev: build({ routes: [route({ summary: ["body"] })] }, NOTE, publicNotes()), next: build({ routes: [route({ path: "/p/:s", title: "Note" })] }, NOTE, publicNotes()), breaks: [] },
];

describe("compatGate", () => {
  for (const c of cases) {
    it(`${c.name} → ${c.breaks.length === 0 ? "clean" : c.breaks.join(", ")}`, () => {
      const result = compatGate(c.prev ?? build(), c.next);
      expect(result.breaks.map((b) => b.path)).toEqual(c.breaks);
      for (const b of result.breaks) expect(b.message.length).toBeGreaterThan(10);
    });
  }

  it("messages say what changed", () => {
    const { breaks } = compatGate(build(), build({}, NOTE, notesWith({ read: ["anyone"] })));
    expect(breaks[0].message).toMatch(/read of collection "notes" now reaches further .*was \[member\], now \[anyone\]/);
  });
});

describe("schemaTightenings", () => {
  it("boolean schemas", () => {
    expect(schemaTightenings(true, false, "s")).toEqual([{ path: "s", message: "schema now refuses every value" }]);
    expect(schemaTightenings(false, { type: "string" }, "s")).toEqual([]);
    expect(schemaTightenings({ type: "string" }, true, "s")).toEqual([]);
  });
});
