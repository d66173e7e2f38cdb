/**
 * Row schemas: resolving a collection's `schema: { "$ref": "#/$defs/<Name>" }`, checking
 * that the `$defs` entry is a JSON Schema 2020-12 document @cfworker/json-schema can run
 * (that library interprets schemas without code generation, which workerd forbids), and
 * validating row data against it. Validators are built lazily from the serialisable
 * compiled manifest and cached per manifest object, so each version compiles them once.
 */
import { Validator } from "@cfworker/json-schema";
import { RelayError } from "../errors";
import { at, fail, isObject, own } from "./read";
import { utf8Bytes } from "../bytes";
import type { CompiledManifest, CompiledSchema, JsonObject, JsonValue } from "./types";
import { declaredCollection } from "./declared";

const TYPES = ["array", "boolean", "integer", "null", "number", "object", "string"];
const SUBSCHEMA = ["additionalProperties", "unevaluatedProperties", "items", "unevaluatedItems", "contains", "propertyNames", "not", "if", "then", "else"];
const SUBSCHEMA_MAP = ["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"];
const SUBSCHEMA_LIST = ["prefixItems", "allOf", "anyOf", "oneOf"];
const NON_NEGATIVE_INT = ["maxLength", "minLength", "maxItems", "minItems", "maxProperties", "minProperties", "maxContains", "minContains"];
const NUMBERS = ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"];
const REFS = ["$ref", "$dynamicRef", "$recursiveRef"];

function decodePointerSegment(segment: string): string {
  let decoded: string;
  try {
    decoded = decodeURIComponent(segment);
  } catch {
    decoded = segment;
  }
  return decoded.replace(/~1/g, "/").replace(/~0/g, "~");
}

/**
 * Resolves and checks one collection's `schema` value. `defs` is the document's root
 * `$defs` (or undefined). Throws collection_schema_invalid / manifest_too_large.
 */
export function compileCollectionSchema(
  value: unknown,
  defs: JsonObject | undefined,
  path: string,
  collection: string,
  limits: { maxSchemaBytes: number; maxRowBytes: number },
): CompiledSchema {
  const extra = { collection };
  if (!isObject(value)) fail("collection_schema_invalid", path, 'must be { "$ref": "#/$defs/<Name>" }', extra);
  const keys = Object.keys(value);
  if (keys.length !== 1 || keys[0] !== "$ref" || typeof value.$ref !== "string") {
    fail("collection_schema_invalid", path, 'must be exactly { "$ref": "#/$defs/<Name>" }', extra);
  }
  const ref = value.$ref as string;
  const match = /^#\/\$defs\/([^/]+)$/.exec(ref);
  if (!match) fail("collection_schema_invalid", at(path, "$ref"), 'must point into the root $defs: "#/$defs/<Name>"', extra);
  const name = decodePointerSegment(match[1]);
  if (!defs || !Object.hasOwn(defs, name)) {
    fail("collection_schema_invalid", at(path, "$ref"), `no $defs entry named "${name}"`, extra);
  }
  const defPath = at("$defs", name);
  const def = defs[name];
  if (!isObject(def)) fail("collection_schema_invalid", defPath, "a row schema must be a JSON object", extra);
  const bytes = utf8Bytes(JSON.stringify(def));
  if (bytes > limits.maxSchemaBytes) {
    fail("manifest_too_large", defPath, `row schema is ${bytes} bytes, over MAX_SCHEMA_BYTES (${limits.maxSchemaBytes})`, { ...extra, limit: limits.maxSchemaBytes });
  }
  checkSchemaNode(def, defPath, collection, limits.maxRowBytes);
  let validator: Validator;
  try {
    validator = new Validator(structuredClone(def) as never, "2020-12", false);
    validator.validate({});
    validator.validate(null);
  } catch (err) {
    fail("collection_schema_invalid", defPath, `does not compile as JSON Schema 2020-12: ${(err as Error).message.split("\n")[0]}`, extra);
  }
  const properties = isObject(def.properties) ? Object.keys(def.properties) : [];
  const required = Array.isArray(def.required) ? def.required.filter((r): r is string => typeof r === "string") : [];
  return { ref, def: name, schema: structuredClone(def), properties, required };
}

function checkSchemaNode(node: JsonValue, path: string, collection: string, maxRowBytes: number): void {
  const extra = { collection };
  if (typeof node === "boolean") return;
  if (!isObject(node)) fail("collection_schema_invalid", path, "a schema must be an object or a boolean", extra);
  for (const [key, value] of Object.entries(node)) {
    const keyPath = at(path, key);
    if (REFS.includes(key)) {
      fail("collection_schema_invalid", keyPath, "references inside a row schema are not resolved; inline the definition", extra);
    }
    if (key === "type") {
      const list = Array.isArray(value) ? value : [value];
      if (list.length === 0 || list.some((t) => typeof t !== "string" || !TYPES.includes(t)) || new Set(list).size !== list.length) {
        fail("collection_schema_invalid", keyPath, `must be one of ${TYPES.join(", ")} or a list of distinct ones`, extra);
      }
    } else if (SUBSCHEMA.includes(key)) {
      if (key === "items" && Array.isArray(value)) {
        fail("collection_schema_invalid", keyPath, "array-form items is not JSON Schema 2020-12; use prefixItems", extra);
      }
      checkSchemaNode(value, keyPath, collection, maxRowBytes);
    } else if (SUBSCHEMA_MAP.includes(key)) {
      if (!isObject(value)) fail("collection_schema_invalid", keyPath, "must be an object of schemas", extra);
      for (const [name, sub] of Object.entries(value)) {
        if (key === "patternProperties") checkPattern(name, at(keyPath, name), collection);
        checkSchemaNode(sub, at(keyPath, name), collection, maxRowBytes);
      }
    } else if (SUBSCHEMA_LIST.includes(key)) {
      if (!Array.isArray(value) || value.length === 0) fail("collection_schema_invalid", keyPath, "must be a non-empty array of schemas", extra);
      value.forEach((sub, i) => checkSchemaNode(sub, at(keyPath, i), collection, maxRowBytes));
    } else if (NON_NEGATIVE_INT.includes(key)) {
      if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
        fail("collection_schema_invalid", keyPath, "must be a non-negative integer", extra);
      }
      if (key === "maxLength" && value > maxRowBytes) {
        fail("collection_schema_invalid", keyPath, `maxLength ${value} is over the row byte cap (${maxRowBytes})`, { ...extra, limit: maxRowBytes });
      }
    } else if (NUMBERS.includes(key)) {
      if (typeof value !== "number" || !Number.isFinite(value)) fail("collection_schema_invalid", keyPath, "must be a number", extra);
    } else if (key === "multipleOf") {
      if (typeof value !== "number" || !(value > 0)) fail("collection_schema_invalid", keyPath, "must be a number above 0", extra);
    } else if (key === "required") {
      if (!Array.isArray(value) || value.some((r) => typeof r !== "string") || new Set(value).size !== value.length) {
        fail("collection_schema_invalid", keyPath, "must be an array of distinct property names", extra);
      }
    } else if (key === "enum") {
      if (!Array.isArray(value)) fail("collection_schema_invalid", keyPath, "must be an array", extra);
    } else if (key === "pattern") {
      if (typeof value !== "string") fail("collection_schema_invalid", keyPath, "must be a string", extra);
      checkPattern(value, keyPath, collection);
    } else if (key === "format") {
      if (typeof value !== "string") fail("collection_schema_invalid", keyPath, "must be a string", extra);
    } else if (key === "uniqueItems") {
      if (typeof value !== "boolean") fail("collection_schema_invalid", keyPath, "must be true or false", extra);
    } else if (key === "dependentRequired") {
      if (!isObject(value) || Object.values(value).some((v) => !Array.isArray(v) || v.some((r) => typeof r !== "string"))) {
        fail("collection_schema_invalid", keyPath, "must map property names to arrays of property names", extra);
      }
    } else if (key === "dependencies" || key === "additionalItems") {
      fail("collection_schema_invalid", keyPath, `"${key}" is not JSON Schema 2020-12 (use dependentRequired/dependentSchemas, prefixItems/items)`, extra);
    }
  }
}

function checkPattern(pattern: string, path: string, collection: string): void {
  try {
    new RegExp(pattern, "u");
  } catch {
    fail("collection_schema_invalid", path, "is not a valid regular expression", { collection });
  }
}

/** JSON types a top-level property may hold, or null when its schema does not say. */
export function propertyTypes(schema: CompiledSchema | null, field: string): string[] | null {
  if (!schema) return null;
  const props = schema.schema.properties;
  if (!isObject(props)) return null;
  const prop = props[field];
  if (!isObject(prop)) return null;
  if (typeof prop.type === "string") return [prop.type];
  if (Array.isArray(prop.type)) return prop.type.filter((t): t is string => typeof t === "string");
  return null;
}

// --- row validation -----------------------------------------------------------------

export interface RowError {
  /** JSON Pointer into the row's data ("" is the whole value). */
  path: string;
  message: string;
  keyword: string;
}

export type RowValidation = { ok: true } | { ok: false; errors: RowError[] };

/** Keywords whose error only says "a subschema failed"; the subschema's own error follows. */
const WRAPPERS = new Set(["properties", "patternProperties", "additionalProperties", "unevaluatedProperties", "items", "prefixItems", "additionalItems", "unevaluatedItems", "$ref", "$recursiveRef", "dependentSchemas", "then", "else", "allOf"]);

function pointer(instanceLocation: string): string {
  return instanceLocation.replace(/^#/, "");
}

/** Turns the library's nested output into one entry per real failure. */
export function normaliseErrors(raw: { instanceLocation: string; keyword: string; error: string }[]): RowError[] {
  const out: RowError[] = [];
  const seen = new Set<string>();
  let lastWrapper = "";
  for (const e of raw) {
    if (WRAPPERS.has(e.keyword)) {
      lastWrapper = e.keyword;
      continue;
    }
    let { keyword } = e;
    let message = e.error;
    let path = pointer(e.instanceLocation);
    if (keyword === "false") {
      keyword = lastWrapper || "false";
      message = keyword === "additionalProperties" || keyword === "unevaluatedProperties" ? "Property is not allowed." : "Value is not allowed.";
    } else if (keyword === "required") {
      const missing = /required property "(.*)"\.?$/.exec(e.error);
      if (missing) path = `${path}/${missing[1].replace(/~/g, "~0").replace(/\//g, "~1")}`;
    }
    const id = `${path}\u0000${keyword}\u0000${message}`;
    if (seen.has(id)) continue;
    seen.add(id);
    out.push({ path, message, keyword });
  }
  if (out.length === 0) {
    // Never report "invalid" with nothing to show.
    return raw.map((e) => ({ path: pointer(e.instanceLocation), message: e.error, keyword: e.keyword }));
  }
  return out;
}

const validatorCache = new WeakMap<CompiledManifest, Map<string, Validator | null>>();

function validatorFor(compiled: CompiledManifest, collection: string): Validator | null {
  let perManifest = validatorCache.get(compiled);
  if (!perManifest) {
    perManifest = new Map();
    validatorCache.set(compiled, perManifest);
  }
  if (perManifest.has(collection)) return perManifest.get(collection)!;
  const def = declaredCollection(compiled, collection);
  const validator = def.schema ? new Validator(structuredClone(def.schema.schema) as never, "2020-12", false) : null;
  perManifest.set(collection, validator);
  return validator;
}

/**
 * Validates row data against the collection's schema. A schemaless collection accepts any
 * JSON value. An undeclared collection throws collection_not_found.
 */
export function validateRow(compiled: CompiledManifest, collection: string, data: unknown): RowValidation {
  const validator = validatorFor(compiled, collection);
  if (!validator) return { ok: true };
  const result = validator.validate(data);
  if (result.valid) return { ok: true };
  return { ok: false, errors: normaliseErrors(result.errors) };
}

export interface RowValidator {
  readonly manifest: CompiledManifest;
  validateRow(collection: string, data: unknown): RowValidation;
}

/** The compiled manifest bound to its (lazily built, cached) validators. */
export function rowValidator(compiled: CompiledManifest): RowValidator {
  return { manifest: compiled, validateRow: (collection, data) => validateRow(compiled, collection, data) };
}

export interface InputRow {
  key: string | null;
  data: JsonValue;
}

/**
 * Checks a deploy's `input_data` (`{ "<collection>": [ { key?, data } ] }`, CONTRACT §6)
 * against the compiled manifest: declared collections, row shape, row byte cap, schema.
 * All-or-nothing: any failure throws input_schema_violation (or row_size_exceeded) listing
 * every failing path; success returns the rows per collection.
 */
export function validateInputData(compiled: CompiledManifest, input: unknown): Record<string, InputRow[]> {
  const base = "input_data";
  function refuse(path: string, message: string): never {
    return fail("input_schema_violation", path, message);
  }
  if (!isObject(input)) refuse(base, "must be an object mapping collection names to arrays of rows");
  const out: Record<string, InputRow[]> = {};
  const errors: { path: string; message: string; keyword: string }[] = [];
  for (const [name, rows] of Object.entries(input as JsonObject)) {
    const cPath = at(base, name);
    const collection = own(compiled.collections, name);
    if (!collection) refuse(cPath, `the manifest declares no collection "${name}"`);
    if (!Array.isArray(rows)) refuse(cPath, "must be an array of { key?, data }");
    const keys = new Set<string>();
    out[name] = (rows as JsonValue[]).map((row, i) => {
      const rPath = at(cPath, i);
      if (!isObject(row)) refuse(rPath, "must be an object { key?, data }");
      for (const k of Object.keys(row)) if (k !== "key" && k !== "data") refuse(at(rPath, k), `unknown key "${k}" (allowed: key, data)`);
      if (!("data" in row)) refuse(at(rPath, "data"), "is required");
      let key: string | null = null;
      if (row.key !== undefined) {
        if (typeof row.key !== "string" || row.key === "") refuse(at(rPath, "key"), "must be a non-empty string");
        key = row.key as string;
        if (keys.has(key)) refuse(at(rPath, "key"), `duplicate key "${key}"`);
        keys.add(key);
      }
      const bytes = utf8Bytes(JSON.stringify(row.data));
      if (bytes > collection.maxRowBytes) {
        fail("row_size_exceeded", at(rPath, "data"), `row data is ${bytes} bytes, over the cap of ${collection.maxRowBytes}`, { limit: collection.maxRowBytes });
      }
      const result = validateRow(compiled, name, row.data);
      if (!result.ok) for (const e of result.errors) errors.push({ ...e, path: `${at(rPath, "data")}${e.path}` });
      return { key, data: row.data as JsonValue };
    });
  }
  if (errors.length > 0) {
    throw new RelayError("input_schema_violation", `${errors[0].path}: ${errors[0].message}`, { path: errors[0].path, errors });
  }
  return out;
}
