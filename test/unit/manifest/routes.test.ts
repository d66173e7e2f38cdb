// routes[]: server-rendered row pages of publicly readable collections.
import { describe, expect } from "vitest";
import { manifest, table, X } from "./helpers";

const R = `${X}.routes`;
const defs = { Product: { type: "object", properties: { name: { type: "string" }, slug: { type: "string" }, price: { type: "number" }, tags: { type: "array" }, notes: {} } } };
const products = (over: Record<string, unknown> = {}) => ({ schema: { $ref: "#/$defs/Product" }, read: ["anyone"], write: ["owner"], delete: ["owner"], unique: ["slug"], ...over });
const route = (r: Record<string, unknown>) => ({ path: "/p/:slug", collection: "products", matchOn: "slug", title: "{name} – {app.name}", ...r });
const routes = (list: unknown, col: Record<string, unknown> = {}) => manifest({ collections: { products: products(col), secrets: { read: ["owner"], write: ["owner"], delete: ["owner"] } }, routes: list }, defs);

describe("routes", () => {
  table([
    { name: "a product page", input: routes([route({ description: "{name} for {price}", summary: ["name", "price", "notes"], schemaType: "Product", indexable: true })]), check: (m) => expect(m.routes[0]).toEqual({
      path: "/p/:slug", shape: "/p/:", param: "slug", collection: "products", matchOn: "slug", title: "{name} – {app.name}",
      description: "{name} for {price}", summary: ["name", "price", "notes"], schemaType: "Product", indexable: true,
    }) },
    { name: "match on key", input: routes([route({ path: "/item/:id", matchOn: "key" })]) },
    { name: "param first", input: routes([route({ path: "/:slug" })]) },
    { name: "not an array", input: routes({}), code: "manifest_invalid", path: R },
    { name: "more than 8", input: routes(Array.from({ length: 9 }, (_, i) => route({ path: `/p${i}/:slug` }))), code: "manifest_invalid", path: R },
    { name: "unknown key", input: routes([route({ layout: "x" })]), code: "manifest_invalid", path: `${R}[0].layout` },
    { name: "path missing", input: routes([route({ path: undefined })]), code: "manifest_invalid", path: `${R}[0].path` },
    { name: "relative path", input: routes([route({ path: "p/:slug" })]), code: "manifest_invalid", path: `${R}[0].path` },
    { name: "no param", input: routes([route({ path: "/p" })]), code: "manifest_invalid", path: `${R}[0].path` },
    { name: "two params", input: routes([route({ path: "/p/:a/:b" })]), code: "manifest_invalid", path: `${R}[0].path` },
    { name: "wildcard", input: routes([route({ path: "/p/*" })]), code: "manifest_invalid", path: `${R}[0].path` },
    { name: "regex", input: routes([route({ path: "/p/:slug(\\d+)" })]), code: "manifest_invalid", path: `${R}[0].path` },
    { name: "trailing slash", input: routes([route({ path: "/p/:slug/" })]), code: "manifest_invalid", path: `${R}[0].path` },
    { name: "reserved /_svc/", input: routes([route({ path: "/_svc/:x" })]), code: "manifest_invalid", path: `${R}[0].path` },
    { name: "reserved /b/", input: routes([route({ path: "/b/:token" })]), code: "manifest_invalid", path: `${R}[0].path` },
    { name: "same shape twice", input: routes([route({}), route({ path: "/p/:other" })]), code: "manifest_invalid", path: `${R}[1].path` },
    { name: "undeclared collection", input: routes([route({ collection: "ghost" })]), code: "manifest_invalid", path: `${R}[0].collection` },
    { name: "collection named like a prototype member", input: routes([route({ collection: "toString" })]), code: "manifest_invalid", path: `${R}[0].collection` },
    { name: "collection not public", input: routes([route({ collection: "secrets", matchOn: "key", title: "x" })]), code: "manifest_invalid", path: `${R}[0].collection` },
    { name: "collection read row-scoped only", input: routes([route({})], { read: ["anyone:own"], update: [] }), code: "manifest_invalid", path: `${R}[0].collection` },
    { name: "matchOn not unique", input: routes([route({ matchOn: "name" })]), code: "manifest_invalid", path: `${R}[0].matchOn` },
    { name: "title missing", input: routes([route({ title: undefined })]), code: "manifest_invalid", path: `${R}[0].title` },
    { name: "title over 200", input: routes([route({ title: "t".repeat(201) })]), code: "manifest_invalid", path: `${R}[0].title` },
    { name: "title names an undeclared field", input: routes([route({ title: "{nope}" })]), code: "manifest_invalid", path: `${R}[0].title` },
    { name: "title unbalanced", input: routes([route({ title: "{name" })]), code: "manifest_invalid", path: `${R}[0].title` },
    { name: "description over 400", input: routes([route({ description: "d".repeat(401) })]), code: "manifest_invalid", path: `${R}[0].description` },
    { name: "summary over 12", input: routes([route({ summary: Array.from({ length: 13 }, () => "name") })]), code: "manifest_invalid", path: `${R}[0].summary` },
    { name: "summary of an array field", input: routes([route({ summary: ["tags"] })]), code: "manifest_invalid", path: `${R}[0].summary[0]` },
    { name: "summary undeclared", input: routes([route({ summary: ["nope"] })]), code: "manifest_invalid", path: `${R}[0].summary[0]` },
    { name: "schemaType", input: routes([route({ schemaType: "Recipe" })]), code: "manifest_invalid", path: `${R}[0].schemaType` },
    { name: "indexable", input: routes([route({ indexable: "yes" })]), code: "manifest_invalid", path: `${R}[0].indexable` },
  ]);
});
