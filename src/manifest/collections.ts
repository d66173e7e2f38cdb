/**
 * One collection definition (WIRE §5.2, spec A "Collection definition"): its name, row
 * schema, permission lists and every per-collection behaviour key. The result is the
 * normalised `CompiledCollection` the AppStore and the permission engine read, with
 * defaults filled in so no later code has to know what "absent" meant.
 */
import { checkField } from "./conditions";
import { compileList, listsNameRelation, RESERVED_NAMES, ROLE_NAME } from "./permissions";
import {
  at, expectArray, expectBoolean, expectEnum, expectInteger, expectObject, expectString, expectStringList, fail,
  FIELD_NAME, onlyKeys, own,
} from "./read";
import { compileCollectionSchema, propertyTypes } from "./schema";
import type { CompiledCollection, CompiledRole, JsonObject, Relation, ResolvedLimits, ServerSetRule } from "./types";

export const COLLECTION_NAME = /^[a-z][a-z0-9_-]{0,63}$/;

const COLLECTION_KEYS = [
  "schema", "read", "write", "update", "delete", "countRead", "relations", "keyClaim", "immutable", "serverSet",
  "appendOnly", "unique", "retention", "mirror", "anonWriteBudget", "antiAbuse", "seedOnInstall", "storage",
];

const MAX_RELATIONS = 8;
const MAX_IMMUTABLE = 16;
const MAX_SERVER_SET = 8;

export function compileCollection(
  name: string,
  value: unknown,
  defs: JsonObject | undefined,
  roles: Record<string, CompiledRole>,
  limits: ResolvedLimits,
  path: string,
): CompiledCollection {
  if (!COLLECTION_NAME.test(name)) {
    fail("collection_name_invalid", path, "collection names start with a lowercase letter, then lowercase letters, digits, _ or -, at most 64 characters");
  }
  const def = expectObject(value, path, "manifest_invalid");
  onlyKeys(def, COLLECTION_KEYS, path, "manifest_invalid");

  const storage = def.storage === undefined ? "default" : (expectEnum(def.storage, ["document"], at(path, "storage"), "manifest_invalid") as "document");
  const maxRowBytes = storage === "document" ? limits.MAX_DOCUMENT_ROW_DATA_BYTES : limits.MAX_ROW_DATA_BYTES;
  const schema = def.schema === undefined
    ? null
    : compileCollectionSchema(def.schema, defs, at(path, "schema"), name, { maxSchemaBytes: limits.MAX_SCHEMA_BYTES, maxRowBytes });

  // A stub with the facts field checks need, filled in as we go.
  const collection: CompiledCollection = {
    name, schema,
    permissions: { read: [], write: [], update: [], updateInherited: true, delete: [], countRead: null },
    appendOnly: false, appendOnlyExcept: [], unique: [], relations: {}, keyClaim: "free", immutable: [], serverSet: {},
    retention: null, mirror: "auto", anonWriteBudget: null, antiAbuse: null, seedOnInstall: false, storage, maxRowBytes,
  };

  collection.relations = compileRelations(def.relations, collection, roles, at(path, "relations"));

  // Permission lists.
  const ctx = { roles, relations: collection.relations };
  const p = collection.permissions;
  if (def.write === undefined) fail("permission_role_invalid", at(path, "write"), "is required (a non-empty list)");
  p.write = compileList(def.write, "write", ctx, at(path, "write"), { nonEmpty: true });
  const appendOnlyDeclared = def.appendOnly !== undefined && def.appendOnly !== false;
  if (def.update !== undefined) {
    if (appendOnlyDeclared) fail("permission_role_invalid", at(path, "update"), "update cannot be declared on an appendOnly collection");
    p.update = compileList(def.update, "update", ctx, at(path, "update"), { nonEmpty: false });
    p.updateInherited = false;
  } else {
    if (!appendOnlyDeclared && p.write.some((s) => s.subject === "anyone")) {
      fail("permission_role_invalid", at(path, "update"), 'is required when write contains "anyone" (say who may update: e.g. ["creator"], ["owner"], [] or ["anyone"])');
    }
    p.update = p.write;
  }
  if (def.delete === undefined) fail("permission_role_invalid", at(path, "delete"), "is required (a non-empty list)");
  p.delete = compileList(def.delete, "delete", ctx, at(path, "delete"), { nonEmpty: true });
  if (def.read === undefined) fail("permission_role_invalid", at(path, "read"), "is required on every deploy (it may be an empty list)");
  p.read = compileList(def.read, "read", ctx, at(path, "read"), { nonEmpty: false });
  if (def.countRead !== undefined) p.countRead = compileList(def.countRead, "countRead", ctx, at(path, "countRead"), { nonEmpty: false });

  // A relation named by any permission list must say who may set it.
  for (const [relName, rel] of Object.entries(collection.relations)) {
    if (rel.set === null && listsNameRelation([p.read, p.write, p.update, p.delete], relName)) {
      fail("permission_role_invalid", at(at(at(path, "relations"), relName), "set"), `is required because a permission list names relation "${relName}"`);
    }
  }

  if (appendOnlyDeclared) {
    const aPath = at(path, "appendOnly");
    collection.appendOnly = true;
    if (def.appendOnly !== true) {
      const ao = expectObject(def.appendOnly, aPath, "manifest_invalid", "true, false or { except: [\"owner\"] }");
      onlyKeys(ao, ["except"], aPath, "manifest_invalid");
      collection.appendOnlyExcept = expectStringList(ao.except, at(aPath, "except"), "permission_role_invalid", {}, (entry, entryPath) => {
        if (entry !== "owner") fail("permission_role_invalid", entryPath, 'only "owner" may be named in appendOnly.except');
      });
    }
  } else if (def.appendOnly !== undefined) {
    expectBoolean(def.appendOnly, at(path, "appendOnly"), "manifest_invalid");
  }

  if (def.unique !== undefined) {
    collection.unique = expectStringList(def.unique, at(path, "unique"), "manifest_invalid", {}, (field, fPath) => {
      checkField(field, collection, fPath, "manifest_invalid");
    });
  }

  if (def.keyClaim !== undefined) collection.keyClaim = expectEnum(def.keyClaim, ["free", "server", "caller"], at(path, "keyClaim"), "manifest_invalid");

  if (def.immutable !== undefined) {
    collection.immutable = expectStringList(def.immutable, at(path, "immutable"), "manifest_invalid", { max: MAX_IMMUTABLE }, (field, fPath) => {
      checkField(field, collection, fPath, "manifest_invalid");
    });
  }

  if (def.serverSet !== undefined) compileServerSet(def.serverSet, collection, at(path, "serverSet"));

  if (def.retention !== undefined) {
    const rPath = at(path, "retention");
    const r = expectObject(def.retention, rPath, "manifest_invalid");
    onlyKeys(r, ["maxRows", "maxAgeDays"], rPath, "manifest_invalid");
    if (r.maxRows === undefined && r.maxAgeDays === undefined) fail("manifest_invalid", rPath, "needs maxRows, maxAgeDays or both");
    collection.retention = {
      maxRows: r.maxRows === undefined ? null : expectInteger(r.maxRows, at(rPath, "maxRows"), "manifest_invalid", { min: 1 }),
      maxAgeDays: r.maxAgeDays === undefined ? null : expectInteger(r.maxAgeDays, at(rPath, "maxAgeDays"), "manifest_invalid", { min: 1 }),
    };
  }

  if (def.mirror !== undefined) collection.mirror = expectEnum(def.mirror, ["auto", "eager", "server"], at(path, "mirror"), "manifest_invalid");

  const anyoneWrites = p.write.some((s) => s.who === "anyone");
  if (def.anonWriteBudget !== undefined) {
    const bPath = at(path, "anonWriteBudget");
    if (!anyoneWrites) fail("manifest_invalid", bPath, 'is only allowed when write includes "anyone"');
    const b = expectObject(def.anonWriteBudget, bPath, "manifest_invalid");
    onlyKeys(b, ["perIpPerDay", "perAppPerDay"], bPath, "manifest_invalid");
    for (const k of ["perIpPerDay", "perAppPerDay"]) if (b[k] === undefined) fail("manifest_invalid", at(bPath, k), "is required (0 means unlimited)");
    collection.anonWriteBudget = {
      perIpPerDay: expectInteger(b.perIpPerDay, at(bPath, "perIpPerDay"), "manifest_invalid", { min: 0 }),
      perAppPerDay: expectInteger(b.perAppPerDay, at(bPath, "perAppPerDay"), "manifest_invalid", { min: 0 }),
    };
  }

  if (def.antiAbuse !== undefined) {
    const aPath = at(path, "antiAbuse");
    expectEnum(def.antiAbuse, ["turnstile", "challenge"], aPath, "manifest_invalid");
    if (!anyoneWrites) fail("manifest_invalid", aPath, 'is only allowed when write includes "anyone"');
    if (!limits.ANTI_ABUSE_ENABLED) fail("manifest_invalid", aPath, "this relay has no bot challenge configured");
    collection.antiAbuse = "turnstile";
  }

  if (def.seedOnInstall !== undefined) collection.seedOnInstall = expectBoolean(def.seedOnInstall, at(path, "seedOnInstall"), "manifest_invalid");

  return collection;
}

function compileRelations(value: unknown, collection: CompiledCollection, roles: Record<string, CompiledRole>, path: string): Record<string, Relation> {
  if (value === undefined) return {};
  const map = expectObject(value, path, "manifest_invalid");
  const names = Object.keys(map);
  if (names.length > MAX_RELATIONS) fail("manifest_invalid", path, `at most ${MAX_RELATIONS} relations per collection`, { limit: MAX_RELATIONS });
  const out: Record<string, Relation> = {};
  for (const name of names) {
    const rPath = at(path, name);
    if (RESERVED_NAMES.includes(name) || name === "own") fail("permission_role_invalid", rPath, `"${name}" is a built-in subject and cannot name a relation`);
    if (Object.hasOwn(roles, name)) fail("permission_role_invalid", rPath, `"${name}" is already a custom role`);
    if (!ROLE_NAME.test(name)) fail("permission_role_invalid", rPath, "relation names start with a lowercase letter, then lowercase letters, digits, _ or -");
    const rel = expectObject(map[name], rPath, "manifest_invalid");
    onlyKeys(rel, ["field", "set"], rPath, "manifest_invalid");
    const fPath = at(rPath, "field");
    if (rel.field === undefined) fail("manifest_invalid", fPath, "is required");
    const field = checkField(rel.field, collection, fPath, "manifest_invalid");
    const types = propertyTypes(collection.schema, field);
    if (types && !types.includes("string")) fail("manifest_invalid", fPath, `"${field}" must be a string property to hold a principal id`);
    const set = rel.set === undefined ? null : expectEnum(rel.set, ["caller", "writer"], at(rPath, "set"), "manifest_invalid");
    out[name] = { field, set };
  }
  return out;
}

function compileServerSet(value: unknown, collection: CompiledCollection, path: string): void {
  const map = expectObject(value, path, "manifest_invalid");
  const fields = Object.keys(map);
  if (fields.length > MAX_SERVER_SET) fail("manifest_invalid", path, `at most ${MAX_SERVER_SET} serverSet fields per collection`, { limit: MAX_SERVER_SET });
  const earlier: string[] = [];
  for (const field of fields) {
    const fPath = at(path, field);
    checkField(field, collection, fPath, "manifest_invalid");
    const spec = expectObject(map[field], fPath, "manifest_invalid", "{ from, keyField, take }, { product: [...] } or { sum: [...] }");
    let rule: ServerSetRule;
    if ("from" in spec || "keyField" in spec || "take" in spec) {
      onlyKeys(spec, ["from", "keyField", "take"], fPath, "manifest_invalid");
      for (const k of ["from", "keyField", "take"]) if (spec[k] === undefined) fail("manifest_invalid", at(fPath, k), "is required");
      const from = expectString(spec.from, at(fPath, "from"), "manifest_invalid");
      const keyField = checkField(spec.keyField, collection, at(fPath, "keyField"), "manifest_invalid");
      const take = expectString(spec.take, at(fPath, "take"), "manifest_invalid", { pattern: FIELD_NAME, patternHint: "a top-level field name" });
      rule = { kind: "lookup", from, keyField, take };
    } else if ("product" in spec || "sum" in spec) {
      const kind = "product" in spec ? "product" : "sum";
      onlyKeys(spec, [kind], fPath, "manifest_invalid");
      const oPath = at(fPath, kind);
      const operands = expectArray(spec[kind], oPath, "manifest_invalid", { nonEmpty: true }).map((op, i) => {
        const opPath = at(oPath, i);
        const name = expectString(op, opPath, "manifest_invalid", { pattern: FIELD_NAME, patternHint: "a top-level field name" });
        if (Object.hasOwn(map, name) && !earlier.includes(name)) fail("manifest_invalid", opPath, `serverSet field "${name}" must be declared before it is used`);
        if (name === field) fail("manifest_invalid", opPath, "a serverSet field cannot use itself");
        if (!earlier.includes(name)) checkField(name, collection, opPath, "manifest_invalid");
        return name;
      });
      rule = { kind, operands };
    } else {
      return fail("manifest_invalid", fPath, "must be { from, keyField, take }, { product: [...] } or { sum: [...] }");
    }
    collection.serverSet[field] = rule;
    earlier.push(field);
  }
}

/** Second pass, once every collection exists: lookups must name a declared collection. */
export function linkServerSet(collections: Record<string, CompiledCollection>, root: string): void {
  for (const collection of Object.values(collections)) {
    for (const [field, rule] of Object.entries(collection.serverSet)) {
      if (rule.kind !== "lookup") continue;
      const fPath = at(at(at(at(root, collection.name), "serverSet"), field), "from");
      const from = own(collections, rule.from);
      if (!from) fail("manifest_invalid", fPath, `names an undeclared collection "${rule.from}"`);
      if (from.schema && !from.schema.properties.includes(rule.take)) {
        fail("manifest_invalid", at(at(at(at(root, collection.name), "serverSet"), field), "take"), `"${rule.take}" is not a property of collection "${rule.from}"'s schema`);
      }
      // A lookup's keyField is implicitly immutable.
      if (!collection.immutable.includes(rule.keyField)) collection.immutable.push(rule.keyField);
    }
  }
}
