/**
 * "Is the new row schema tighter than the old one?" for the compat gate. Deciding whether
 * every value valid under schema A is valid under schema B is undecidable in general, so
 * this is a conservative structural comparison, keyword by keyword: a keyword that is
 * added or made stricter counts as tightening, a keyword removed never does, and a
 * keyword we cannot compare (a changed `anyOf`, `if`, `pattern`…) counts as tightening
 * unless it is unchanged. docs/manifest.md lists the rules.
 */
import { at, deepEqual, isObject } from "./read";
import type { JsonValue } from "./types";

export interface SchemaBreak {
  path: string;
  message: string;
}

/** Keywords that never affect validity. */
const ANNOTATIONS = new Set([
  "title", "description", "default", "examples", "$comment", "deprecated", "readOnly", "writeOnly", "$schema", "$id",
  "$anchor", "$defs", "definitions", "contentEncoding", "contentMediaType", "contentSchema", "$vocabulary",
]);

const UPPER = ["maxLength", "maxItems", "maxProperties", "maximum", "exclusiveMaximum", "maxContains"];
const LOWER = ["minLength", "minItems", "minProperties", "minimum", "exclusiveMinimum", "minContains"];
/** Compared only for equality: changed or added is tightening. */
const OPAQUE = [
  "pattern", "format", "patternProperties", "propertyNames", "dependentRequired", "dependentSchemas", "if", "then", "else",
  "allOf", "anyOf", "oneOf", "not", "contains", "unevaluatedProperties", "unevaluatedItems",
];

/** A schema that accepts every value. */
export function acceptsEverything(schema: JsonValue | undefined): boolean {
  if (schema === undefined || schema === true) return true;
  if (!isObject(schema)) return false;
  return Object.keys(schema).every((k) => ANNOTATIONS.has(k));
}

function typeSet(schema: Record<string, JsonValue>): string[] | null {
  if (typeof schema.type === "string") return [schema.type];
  if (Array.isArray(schema.type)) return schema.type.filter((t): t is string => typeof t === "string");
  return null;
}

function describe(value: JsonValue | undefined): string {
  return value === undefined ? "(none)" : JSON.stringify(value);
}

/** Lists every place where `next` may refuse a value `prev` accepted. */
export function schemaTightenings(prev: JsonValue | undefined, next: JsonValue | undefined, path: string): SchemaBreak[] {
  const out: SchemaBreak[] = [];
  compare(prev ?? true, next ?? true, path, out);
  return out;
}

function compare(prev: JsonValue, next: JsonValue, path: string, out: SchemaBreak[]): void {
  if (prev === false) return; // nothing was valid before, so nothing can be stranded
  if (acceptsEverything(next)) return;
  if (next === false) {
    out.push({ path, message: "schema now refuses every value" });
    return;
  }
  if (!isObject(next)) return;
  const p: Record<string, JsonValue> = isObject(prev) ? prev : {};

  // type
  const pTypes = typeSet(p);
  const nTypes = typeSet(next);
  if (nTypes) {
    const covered = (t: string) => nTypes.includes(t) || (t === "integer" && nTypes.includes("number"));
    if (!pTypes) out.push({ path: at(path, "type"), message: `type narrowed from any to ${nTypes.join("|")}` });
    else if (!pTypes.every(covered)) out.push({ path: at(path, "type"), message: `type narrowed from ${pTypes.join("|")} to ${nTypes.join("|")}` });
  }

  // enum / const
  if (Array.isArray(next.enum)) {
    const nEnum = next.enum;
    if (!Array.isArray(p.enum)) out.push({ path: at(path, "enum"), message: "enum added" });
    else if (!p.enum.every((v) => nEnum.some((w) => deepEqual(v, w)))) out.push({ path: at(path, "enum"), message: "enum lost values" });
  }
  if (next.const !== undefined && !(p.const !== undefined && deepEqual(p.const, next.const))) {
    out.push({ path: at(path, "const"), message: `const set to ${describe(next.const)}` });
  }

  // required
  if (Array.isArray(next.required)) {
    const pRequired = Array.isArray(p.required) ? p.required : [];
    const added = next.required.filter((r) => !pRequired.includes(r));
    if (added.length > 0) out.push({ path: at(path, "required"), message: `newly required: ${added.join(", ")}` });
  }

  // numeric bounds
  for (const key of UPPER) {
    const n = next[key];
    if (typeof n !== "number") continue;
    const v = p[key];
    if (typeof v !== "number") out.push({ path: at(path, key), message: `${key} ${n} added` });
    else if (n < v) out.push({ path: at(path, key), message: `${key} lowered from ${v} to ${n}` });
  }
  for (const key of LOWER) {
    const n = next[key];
    if (typeof n !== "number") continue;
    const v = p[key];
    if (typeof v !== "number") out.push({ path: at(path, key), message: `${key} ${n} added` });
    else if (n > v) out.push({ path: at(path, key), message: `${key} raised from ${v} to ${n}` });
  }
  if (typeof next.multipleOf === "number") {
    const v = p.multipleOf;
    const ratio = typeof v === "number" ? v / next.multipleOf : NaN;
    if (!(Number.isFinite(ratio) && Math.abs(ratio - Math.round(ratio)) < 1e-9 && Math.round(ratio) >= 1)) {
      out.push({ path: at(path, "multipleOf"), message: `multipleOf ${next.multipleOf} is stricter than ${describe(v)}` });
    }
  }
  if (next.uniqueItems === true && p.uniqueItems !== true) out.push({ path: at(path, "uniqueItems"), message: "uniqueItems added" });

  for (const key of OPAQUE) {
    if (next[key] === undefined) continue;
    if (!deepEqual(p[key], next[key])) out.push({ path: at(path, key), message: `${key} ${p[key] === undefined ? "added" : "changed"}` });
  }

  // object members
  const pProps = isObject(p.properties) ? p.properties : {};
  const nProps = isObject(next.properties) ? next.properties : {};
  const pAdditional = p.additionalProperties ?? true;
  const nAdditional = next.additionalProperties ?? true;
  for (const [name, pSchema] of Object.entries(pProps)) {
    const propPath = at(at(path, "properties"), name);
    if (Object.hasOwn(nProps, name)) compare(pSchema, nProps[name], propPath, out);
    else if (nAdditional === false) out.push({ path: propPath, message: `property "${name}" removed while additionalProperties is false` });
    else compare(pSchema, nAdditional, at(path, "additionalProperties"), out);
  }
  for (const [name, nSchema] of Object.entries(nProps)) {
    if (Object.hasOwn(pProps, name)) continue;
    // A new property was free-form before (governed by additionalProperties). When that was
    // a real schema we compare; when it allowed anything we do not flag it (see docs).
    if (isObject(pAdditional) && !acceptsEverything(pAdditional)) compare(pAdditional, nSchema, at(at(path, "properties"), name), out);
  }
  if (!deepEqual(pAdditional, nAdditional)) compare(pAdditional, nAdditional, at(path, "additionalProperties"), out);

  // array members
  const nPrefix = Array.isArray(next.prefixItems) ? next.prefixItems : [];
  const pPrefix = Array.isArray(p.prefixItems) ? p.prefixItems : [];
  const pItems = p.items ?? true;
  nPrefix.forEach((sub, i) => compare(pPrefix[i] ?? pItems, sub, at(at(path, "prefixItems"), i), out));
  if (next.items !== undefined) {
    if (nPrefix.length !== pPrefix.length && !acceptsEverything(next.items)) {
      out.push({ path: at(path, "items"), message: "items now governs different positions (prefixItems changed length)" });
    } else {
      compare(pItems, next.items, at(path, "items"), out);
    }
  }
}
