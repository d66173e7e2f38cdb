/**
 * Small readers for untrusted JSON. Each one either returns the value with the type the
 * caller asked for or throws ONE RelayError whose `details.path` names the offending JSON
 * path, so every rule of the grammar reports failures the same way. Paths are dotted
 * (`x-service-manifest.collections.notes.write`) with `[i]` for array indexes.
 */
import { RelayError, type ErrorCode } from "../errors";
import { jsonKind } from "../json-kind";
import type { JsonObject, JsonValue } from "./types";

export const ROOT = "x-service-manifest";

export function at(path: string, key: string | number): string {
  if (typeof key === "number") return `${path}[${key}]`;
  return path === "" ? key : `${path}.${key}`;
}

export function fail(code: ErrorCode, path: string, message: string, extra?: Record<string, unknown>): never {
  throw new RelayError(code, path ? `${path}: ${message}` : message, { path, ...extra });
}

/** A value of the wrong kind: "is required" when it is missing, else what it must be and what it is. */
function failKind(code: ErrorCode, path: string, value: unknown, what: string): never {
  fail(code, path, value === undefined ? "is required" : `must be ${what}, not ${jsonKind(value)}`);
}

/** A map entry only when it is the map's own (never `constructor`, `__proto__`…). */
export function own<T>(map: Record<string, T>, key: string): T | undefined {
  return Object.hasOwn(map, key) ? map[key] : undefined;
}

export function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function expectObject(value: unknown, path: string, code: ErrorCode, what = "an object"): JsonObject {
  if (!isObject(value)) failKind(code, path, value, what);
  return value;
}

/** Unknown keys are a hard error everywhere inside the extension. */
export function onlyKeys(obj: JsonObject, allowed: readonly string[], path: string, code: ErrorCode): void {
  for (const key of Object.keys(obj)) {
    if (!allowed.includes(key)) fail(code, at(path, key), `unknown key "${key}" (allowed: ${allowed.join(", ")})`);
  }
}

export function expectArray(value: unknown, path: string, code: ErrorCode, opts: { nonEmpty?: boolean; max?: number } = {}): JsonValue[] {
  if (!Array.isArray(value)) failKind(code, path, value, "an array");
  if (opts.nonEmpty && value.length === 0) fail(code, path, "must not be empty");
  if (opts.max !== undefined && value.length > opts.max) fail(code, path, `must have at most ${opts.max} entries`, { limit: opts.max });
  return value as JsonValue[];
}

// Control characters other than tab, newline and carriage return.
const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/;

export function expectString(
  value: unknown,
  path: string,
  code: ErrorCode,
  opts: { max?: number; nonBlank?: boolean; pattern?: RegExp; patternHint?: string; singleLine?: boolean } = {},
): string {
  if (typeof value !== "string") failKind(code, path, value, "a string");
  if (opts.nonBlank && value.trim() === "") fail(code, path, "must not be empty");
  if (opts.max !== undefined && [...value].length > opts.max) fail(code, path, `must be at most ${opts.max} characters`, { limit: opts.max });
  if (CONTROL.test(value) || (opts.singleLine && /[\r\n\t]/.test(value))) fail(code, path, "must not contain control characters");
  if (opts.pattern && !opts.pattern.test(value)) fail(code, path, `must match ${opts.patternHint ?? String(opts.pattern)}`);
  return value;
}

export function expectBoolean(value: unknown, path: string, code: ErrorCode): boolean {
  if (typeof value !== "boolean") failKind(code, path, value, "true or false");
  return value;
}

export function expectInteger(value: unknown, path: string, code: ErrorCode, opts: { min?: number; max?: number } = {}): number {
  if (typeof value !== "number") failKind(code, path, value, "an integer");
  if (!Number.isSafeInteger(value)) fail(code, path, "must be an integer");
  if (opts.min !== undefined && value < opts.min) fail(code, path, `must be at least ${opts.min}`);
  if (opts.max !== undefined && value > opts.max) fail(code, path, `must be at most ${opts.max}`);
  return value;
}

export function expectEnum<T extends string>(value: unknown, allowed: readonly T[], path: string, code: ErrorCode): T {
  if (typeof value !== "string" || !(allowed as readonly string[]).includes(value)) {
    if (value === undefined) fail(code, path, "is required");
    fail(code, path, `must be one of ${allowed.map((a) => JSON.stringify(a)).join(", ")}`);
  }
  return value as T;
}

/** An array of distinct strings; `check` validates each entry. */
export function expectStringList(
  value: unknown,
  path: string,
  code: ErrorCode,
  opts: { nonEmpty?: boolean; max?: number; unique?: boolean } = {},
  check?: (entry: string, entryPath: string) => void,
): string[] {
  const list = expectArray(value, path, code, opts);
  const seen = new Set<string>();
  return list.map((entry, i) => {
    const entryPath = at(path, i);
    if (typeof entry !== "string") failKind(code, entryPath, entry, "a string");
    if (opts.unique !== false && seen.has(entry)) fail(code, entryPath, `duplicate entry "${entry}"`);
    seen.add(entry);
    check?.(entry, entryPath);
    return entry;
  });
}

/** Field names the manifest refers to: simple identifiers, like query field names. */
export const FIELD_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

/** Deterministic JSON: object keys sorted, so equal values give equal text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (isObject(value)) {
    return `{${Object.keys(value).sort().filter((k) => value[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k])}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

export function deepEqual(a: unknown, b: unknown): boolean {
  return canonicalJson(a) === canonicalJson(b);
}

/** A short stable hash (cyrb53, hex) used for rule identities. Not a security primitive. */
export function stableHash(value: unknown): string {
  const text = canonicalJson(value);
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return (h2 >>> 0).toString(16).padStart(8, "0") + (h1 >>> 0).toString(16).padStart(8, "0");
}
