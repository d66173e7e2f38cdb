/**
 * `routes[]` (WIRE §5.3): server-rendered pages for single rows of a publicly readable
 * collection (`/p/:slug` → the row whose `slug` matches). They disclose row data to the
 * whole web, so the grammar is strict and the compat gate treats any new or wider route
 * as a break; this file owns the grammar and the normalised `RouteRule`.
 */
import { checkField } from "./conditions";
import { at, expectArray, expectBoolean, expectEnum, expectObject, expectString, expectStringList, fail, onlyKeys, own } from "./read";
import { propertyTypes } from "./schema";
import type { CompiledCollection, RouteRule } from "./types";

const MAX_ROUTES = 8;
const MAX_SUMMARY = 12;
const ROUTE_KEYS = ["path", "collection", "matchOn", "title", "description", "summary", "schemaType", "indexable"];
const RESERVED_FIRST_SEGMENTS = ["_svc", "b"];
const LITERAL = /^[A-Za-z0-9._~-]+$/;
const PARAM = /^:([A-Za-z_][A-Za-z0-9_]*)$/;
const SCALAR_TYPES = ["string", "number", "integer", "boolean", "null"];

function checkTokens(text: string, collection: CompiledCollection, path: string): string[] {
  const fields: string[] = [];
  const rest = text.replace(/\{([^{}]*)\}/g, (_m, token: string) => {
    if (token === "app.name" || token === "app.slug") return "";
    checkField(token, collection, path, "manifest_invalid");
    fields.push(token);
    return "";
  });
  if (/[{}]/.test(rest)) fail("manifest_invalid", path, "has an unbalanced { or }");
  return fields;
}

/** Fields a route renders (title/description tokens and summary), for the compat gate. */
export function routeFields(route: RouteRule): string[] {
  const fields = new Set(route.summary);
  for (const text of [route.title, route.description ?? ""]) {
    for (const m of text.matchAll(/\{([^{}]*)\}/g)) if (m[1] !== "app.name" && m[1] !== "app.slug") fields.add(m[1]);
  }
  return [...fields].sort();
}

export function compileRoutes(value: unknown, collections: Record<string, CompiledCollection>, root: string): RouteRule[] {
  if (value === undefined) return [];
  const path = at(root, "routes");
  const list = expectArray(value, path, "manifest_invalid", { max: MAX_ROUTES });
  const shapes = new Set<string>();
  return list.map((raw, i) => {
    const rPath = at(path, i);
    const route = expectObject(raw, rPath, "manifest_invalid");
    onlyKeys(route, ROUTE_KEYS, rPath, "manifest_invalid");
    for (const k of ["path", "collection", "matchOn", "title"]) if (route[k] === undefined) fail("manifest_invalid", at(rPath, k), "is required");

    const pPath = at(rPath, "path");
    const routePath = expectString(route.path, pPath, "manifest_invalid");
    if (!routePath.startsWith("/")) fail("manifest_invalid", pPath, "must start with /");
    const segments = routePath.slice(1).split("/");
    let param: string | null = null;
    const shapeSegments = segments.map((segment) => {
      const m = PARAM.exec(segment);
      if (m) {
        if (param !== null) fail("manifest_invalid", pPath, "must hold exactly one :param");
        param = m[1];
        return ":";
      }
      if (!LITERAL.test(segment)) fail("manifest_invalid", pPath, `segment "${segment}" must be a literal (letters, digits, . _ ~ -) or one :param; no wildcards or patterns`);
      return segment;
    });
    if (param === null) fail("manifest_invalid", pPath, "must hold exactly one :param");
    if (RESERVED_FIRST_SEGMENTS.includes(segments[0])) fail("manifest_invalid", pPath, `/${segments[0]}/ is reserved by the relay`);
    const shape = `/${shapeSegments.join("/")}`;
    if (shapes.has(shape)) fail("manifest_invalid", pPath, `another route already has the shape ${shape}`);
    shapes.add(shape);

    const cPath = at(rPath, "collection");
    const name = expectString(route.collection, cPath, "manifest_invalid");
    const collection = own(collections, name);
    if (!collection) fail("manifest_invalid", cPath, `names an undeclared collection "${name}"`);
    if (!collection.permissions.read.some((s) => s.subject === "anyone")) {
      fail("manifest_invalid", cPath, `collection "${name}" must list "anyone" in read to be served on a route`);
    }
    const mPath = at(rPath, "matchOn");
    const matchOn = expectString(route.matchOn, mPath, "manifest_invalid");
    if (matchOn !== "key" && !collection.unique.includes(matchOn)) fail("manifest_invalid", mPath, `must be "key" or one of collection "${name}"'s unique fields`);

    const title = expectString(route.title, at(rPath, "title"), "manifest_invalid", { nonBlank: true, max: 200, singleLine: true });
    checkTokens(title, collection, at(rPath, "title"));
    let description: string | null = null;
    if (route.description !== undefined) {
      description = expectString(route.description, at(rPath, "description"), "manifest_invalid", { max: 400 });
      checkTokens(description, collection, at(rPath, "description"));
    }
    const summary = route.summary === undefined ? [] : expectStringList(route.summary, at(rPath, "summary"), "manifest_invalid", { max: MAX_SUMMARY }, (field, fPath) => {
      checkField(field, collection, fPath, "manifest_invalid");
      const types = propertyTypes(collection.schema, field);
      if (types && !types.every((t) => SCALAR_TYPES.includes(t))) fail("manifest_invalid", fPath, `"${field}" must be a scalar field`);
    });
    const schemaType = route.schemaType === undefined ? null : expectEnum(route.schemaType, ["Product", "Article", "Event", "Offer"], at(rPath, "schemaType"), "manifest_invalid");
    const indexable = route.indexable === undefined ? false : expectBoolean(route.indexable, at(rPath, "indexable"), "manifest_invalid");
    return { path: routePath, shape, param, collection: name, matchOn, title, description, summary, schemaType, indexable };
  });
}
