/**
 * Row queries as parameterised SQL: `where` conditions, `sort`, and keyset cursors, for
 * the list endpoint of one collection. Pure: it reads the compiled collection to check
 * field names and types, and returns SQL text plus bound values. Field names never enter
 * the SQL text; they travel as bound JSON paths (`$.field`).
 *
 * Semantics (WIRE §2.3): conditions are ANDed; comparisons never coerce across types (a
 * condition only matches rows whose field has the condition value's JSON type); a
 * missing or null field matches nothing; sort defaults to ascending; ties break by the
 * row's insertion order, so a cursor is stable. A cursor is valid only with the sort
 * that produced it. Pages (rows, deleted rows, feed entries) also stop at PAGE_BYTES of
 * data, so a page of large rows always fits through RPC.
 */
import { RelayError } from "../../src/errors";
import { propertyTypes } from "../../src/manifest/schema";
import type { CompiledCollection } from "../../src/manifest";

export type Scalar = string | number | boolean;
export type CondOp = "eq" | "neq" | "in" | "notIn" | "gt" | "lt" | "gte" | "lte";

export interface Cond {
  field: string;
  op: CondOp;
  value: Scalar | Scalar[];
}

export interface Sort {
  field: string;
  dir?: "asc" | "desc";
}

export interface SqlFragment {
  sql: string;
  params: unknown[];
}

const FIELD = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
const MAX_CONDITIONS = 20;
const MAX_SORT = 4;
const MAX_IN_VALUES = 100;

function jsonTypesOf(value: Scalar): string[] {
  if (typeof value === "string") return ["text"];
  if (typeof value === "boolean") return [value ? "true" : "false"];
  return ["integer", "real"];
}

function schemaTypeOf(value: Scalar): string {
  return typeof value === "string" ? "string" : typeof value === "boolean" ? "boolean" : "number";
}

function isScalar(value: unknown): value is Scalar {
  return typeof value === "string" || typeof value === "boolean" || (typeof value === "number" && Number.isFinite(value));
}

function checkField(collection: CompiledCollection, field: unknown, where: string): string {
  if (typeof field !== "string" || !FIELD.test(field)) {
    throw new RelayError("invalid_request", `${where}: a field name is letters, digits and _ (got ${JSON.stringify(field)?.slice(0, 80)}).`, { field: where });
  }
  if (collection.schema && !collection.schema.properties.includes(field)) {
    throw new RelayError("invalid_request", `${where}: "${field}" is not a field of collection "${collection.name}".`, { field: where });
  }
  return field;
}

function checkType(collection: CompiledCollection, field: string, value: Scalar, where: string): void {
  const declared = propertyTypes(collection.schema, field);
  if (!declared) return;
  const wanted = schemaTypeOf(value);
  const ok = declared.includes(wanted) || (wanted === "number" && declared.includes("integer"));
  if (!ok) {
    throw new RelayError("invalid_request", `${where}: "${field}" holds ${declared.join(" or ")}; compare it with a value of that type, not a ${wanted}.`, { field: where });
  }
}

const comparators: Record<"gt" | "lt" | "gte" | "lte", string> = { gt: ">", lt: "<", gte: ">=", lte: "<=" };

/** One condition as SQL over the row's JSON `data`. */
function condition(collection: CompiledCollection, cond: unknown, index: number): SqlFragment {
  const where = `q.where.${index}`;
  if (typeof cond !== "object" || cond === null || Array.isArray(cond)) throw new RelayError("invalid_request", `${where} must be { field, op, value }.`, { field: where });
  const { field: rawField, op, value, ...rest } = cond as Record<string, unknown>;
  if (Object.keys(rest).length) throw new RelayError("invalid_request", `${where}: unknown key "${Object.keys(rest)[0]}".`, { field: where });
  const field = checkField(collection, rawField, `${where}.field`);
  if (op === "in" || op === "notIn") {
    if (!Array.isArray(value) || value.length === 0 || value.length > MAX_IN_VALUES || !value.every(isScalar)) {
      throw new RelayError("invalid_request", `${where}.value: "${op}" takes a non-empty array of at most ${MAX_IN_VALUES} strings, numbers or booleans.`, { field: `${where}.value` });
    }
    for (const v of value) checkType(collection, field, v, `${where}.value`);
    return compareSql(field, op, value);
  }
  if (!isScalar(value)) throw new RelayError("invalid_request", `${where}.value must be a string, number or boolean.`, { field: `${where}.value` });
  checkType(collection, field, value, `${where}.value`);
  if ((op === "gt" || op === "lt" || op === "gte" || op === "lte") && typeof value === "boolean") {
    throw new RelayError("invalid_request", `${where}: "${op}" compares strings or numbers, not booleans.`, { field: `${where}.op` });
  }
  if (op === "eq" || op === "neq" || op === "gt" || op === "lt" || op === "gte" || op === "lte") return compareSql(field, op, value);
  throw new RelayError("invalid_request", `${where}.op must be one of eq, neq, in, notIn, gt, lt, gte, lte.`, { field: `${where}.op` });
}

const PRESENT = "(json_type(data, ?) IS NOT NULL AND json_type(data, ?) != 'null')";

/**
 * A checked (field, op, value) as SQL over `data`. Also used for permission filter
 * terms, whose fields come from the compiled manifest. A boolean never orders.
 */
export function compareSql(field: string, op: CondOp, value: Scalar | Scalar[]): SqlFragment {
  const path = `$.${field}`;
  if (op === "in" || op === "notIn") {
    // The whole list travels as ONE bound JSON array, so a long list never runs into the
    // store's cap on bound parameters; each element matches only its own JSON type.
    const any = {
      sql: `EXISTS (SELECT 1 FROM json_each(?) AS v WHERE (v.type = json_type(data, ?) OR (v.type IN ('integer', 'real') AND json_type(data, ?) IN ('integer', 'real'))) AND v.value = json_extract(data, ?))`,
      params: [JSON.stringify(value), path, path, path],
    };
    return op === "in"
      ? { sql: `(${any.sql})`, params: any.params }
      : { sql: `(${PRESENT} AND NOT (${any.sql}))`, params: [path, path, ...any.params] };
  }
  const scalar = value as Scalar;
  if (op === "eq") return equalsSql(path, scalar);
  if (op === "neq") {
    const eq = equalsSql(path, scalar);
    return { sql: `(${PRESENT} AND NOT (${eq.sql}))`, params: [path, path, ...eq.params] };
  }
  if (typeof scalar === "boolean") return { sql: "0", params: [] };
  const types = jsonTypesOf(scalar);
  return {
    sql: `(json_type(data, ?) IN (${types.map(() => "?").join(", ")}) AND json_extract(data, ?) ${comparators[op]} ?)`,
    params: [path, ...types, path, scalar],
  };
}

function equalsSql(path: string, value: Scalar): SqlFragment {
  if (typeof value === "boolean") return { sql: "json_type(data, ?) = ?", params: [path, value ? "true" : "false"] };
  const types = jsonTypesOf(value);
  return { sql: `(json_type(data, ?) IN (${types.map(() => "?").join(", ")}) AND json_extract(data, ?) = ?)`, params: [path, ...types, path, value] };
}

export function whereSql(collection: CompiledCollection, where: unknown): SqlFragment {
  if (where === undefined) return { sql: "1", params: [] };
  if (!Array.isArray(where) || where.length > MAX_CONDITIONS) {
    throw new RelayError("invalid_request", `q.where must be an array of at most ${MAX_CONDITIONS} conditions.`, { field: "q.where" });
  }
  if (where.length === 0) return { sql: "1", params: [] };
  const parts = where.map((c, i) => condition(collection, c, i));
  return { sql: parts.map((p) => p.sql).join(" AND "), params: parts.flatMap((p) => p.params) };
}

export interface ResolvedSort {
  fields: { field: string; dir: "asc" | "desc" }[];
  /** Identifies the sort inside a cursor. */
  signature: string;
}

export function resolveSort(collection: CompiledCollection, sort: unknown): ResolvedSort {
  if (sort === undefined) return { fields: [], signature: "" };
  if (!Array.isArray(sort) || sort.length > MAX_SORT) {
    throw new RelayError("invalid_request", `q.sort must be an array of at most ${MAX_SORT} entries.`, { field: "q.sort" });
  }
  const fields = sort.map((s, i) => {
    const where = `q.sort.${i}`;
    if (typeof s !== "object" || s === null || Array.isArray(s)) throw new RelayError("invalid_request", `${where} must be { field, dir? }.`, { field: where });
    const { field, dir, ...rest } = s as Record<string, unknown>;
    if (Object.keys(rest).length) throw new RelayError("invalid_request", `${where}: unknown key "${Object.keys(rest)[0]}".`, { field: where });
    if (dir !== undefined && dir !== "asc" && dir !== "desc") throw new RelayError("invalid_request", `${where}.dir must be "asc" or "desc".`, { field: `${where}.dir` });
    return { field: checkField(collection, field, `${where}.field`), dir: (dir ?? "asc") as "asc" | "desc" };
  });
  return { fields, signature: fields.map((f) => `${f.field}:${f.dir}`).join(",") };
}

/** ORDER BY: each sort field (nulls first ascending, last descending), then insertion order. */
export function orderSql(sort: ResolvedSort): SqlFragment {
  const parts = sort.fields.map((f) => `json_extract(data, ?) ${f.dir.toUpperCase()}`);
  return { sql: [...parts, "rid ASC"].join(", "), params: sort.fields.map((f) => `$.${f.field}`) };
}

interface CursorState {
  s: string;
  v: unknown[];
  r: number;
}

export function encodeCursor(sort: ResolvedSort, values: unknown[], rid: number): string {
  const json = JSON.stringify({ s: sort.signature, v: values, r: rid } satisfies CursorState);
  return btoa(String.fromCharCode(...new TextEncoder().encode(json))).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function decodeCursor(cursor: string): CursorState {
  try {
    const binary = atob(cursor.replace(/-/g, "+").replace(/_/g, "/"));
    const state = JSON.parse(new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(Uint8Array.from(binary, (ch) => ch.charCodeAt(0)))) as CursorState;
    // Only what encodeCursor writes: sort values are null, strings or finite numbers.
    const value = (v: unknown) => v === null || typeof v === "string" || (typeof v === "number" && Number.isFinite(v));
    if (typeof state === "object" && state !== null && typeof state.s === "string" && Array.isArray(state.v) && state.v.every(value)
      && Number.isSafeInteger(state.r) && state.r >= 0) return state;
  } catch { /* fall through */ }
  throw new RelayError("invalid_request", "This cursor was not issued by the relay.", { field: "since" });
}

/**
 * Rows strictly after the cursor in the given order. A null sort value is the smallest
 * (SQLite's order), so "after" is spelt out per direction instead of row-value syntax.
 */
export function afterCursorSql(sort: ResolvedSort, cursor: string): SqlFragment {
  const state = decodeCursor(cursor);
  if (state.s !== sort.signature || state.v.length !== sort.fields.length) {
    throw new RelayError("invalid_request", "This cursor was made with another sort; send the same sort again or start over.", { field: "since" });
  }
  const alternatives: SqlFragment[] = [];
  const equalPrefix: SqlFragment[] = [];
  sort.fields.forEach((f, i) => {
    const path = `$.${f.field}`;
    const v = state.v[i];
    const after: SqlFragment | null = v === null
      ? (f.dir === "asc" ? { sql: "json_extract(data, ?) IS NOT NULL", params: [path] } : null)
      : f.dir === "asc"
        ? { sql: "json_extract(data, ?) > ?", params: [path, v] }
        : { sql: "(json_extract(data, ?) IS NULL OR json_extract(data, ?) < ?)", params: [path, path, v] };
    if (after) alternatives.push(join([...equalPrefix, after]));
    equalPrefix.push({ sql: "json_extract(data, ?) IS ?", params: [path, v] });
  });
  alternatives.push(join([...equalPrefix, { sql: "rid > ?", params: [state.r] }]));
  return { sql: `(${alternatives.map((a) => `(${a.sql})`).join(" OR ")})`, params: alternatives.flatMap((a) => a.params) };
}

function join(parts: SqlFragment[]): SqlFragment {
  return { sql: parts.map((p) => p.sql).join(" AND "), params: parts.flatMap((p) => p.params) };
}

/** The values a row contributes to its cursor, in sort order. */
export function cursorValues(sort: ResolvedSort, data: unknown): unknown[] {
  return sort.fields.map((f) => {
    const v = typeof data === "object" && data !== null ? (data as Record<string, unknown>)[f.field] : undefined;
    if (v === undefined || v === null) return null;
    if (typeof v === "boolean") return v ? 1 : 0;
    return typeof v === "object" ? JSON.stringify(v) : v;
  });
}

/**
 * The store binds at most 100 parameters per statement. Field paths, JSON type names and
 * values repeat across conditions, so each distinct value is bound once and referred to
 * by number (`?N`). Returns the same query with numbered, de-duplicated parameters.
 */
export function compactParams(fragment: SqlFragment): SqlFragment {
  const slots = new Map<string, number>();
  const params: unknown[] = [];
  let next = 0;
  const sql = fragment.sql.replace(/\?/g, () => {
    const value = fragment.params[next++];
    const id = `${value === null ? "null" : typeof value}:${String(value)}`;
    let slot = slots.get(id);
    if (slot === undefined) {
      params.push(value);
      slot = params.length;
      slots.set(id, slot);
    }
    return `?${slot}`;
  });
  if (next !== fragment.params.length) throw new Error(`compactParams: ${next} placeholders for ${fragment.params.length} parameters`);
  return { sql, params };
}

/**
 * Row data one page may carry. RPC values are capped at 32 MiB and a page of 1000 rows
 * at the row cap would be far over it, so a page stops early (has_more / next_before
 * say there is more); it always holds at least one row.
 */
export const PAGE_BYTES = 8 * 1024 * 1024;

/**
 * Up to `limit` items from a query cursor, stopping early once `PAGE_BYTES` of data are
 * taken (never before the first item); `more` says whether anything was left behind.
 * The cursor is read lazily, so a large page is never held in memory at once.
 */
export function takePage<T>(cursor: Iterable<T>, limit: number, bytesOf: (item: T) => number): { page: T[]; more: boolean } {
  const page: T[] = [];
  let bytes = 0;
  for (const item of cursor) {
    const size = bytesOf(item);
    if (page.length >= limit || (page.length > 0 && bytes + size > PAGE_BYTES)) return { page, more: true };
    page.push(item);
    bytes += size;
  }
  return { page, more: false };
}
