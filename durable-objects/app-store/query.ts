/**
 * All SQL the store builds from parts: `where` conditions, `sort` and keyset cursors of a
 * collection's list, and the permission engine's row filters (`filterSql`), composed with
 * the `fragment` template so a value is always bound. Pure: it reads the compiled collection to check field names
 * and types, and returns SQL text plus values. Field names and values never enter the SQL
 * text: the builders leave `?` placeholders, and `compactParams` gathers every distinct
 * value into ONE bound JSON array that the statement reads back with
 * `json_extract(?1, '$[i]')`. So a statement binds a single parameter however many
 * conditions, relations, pin terms and sort fields it combines (the store refuses a
 * statement with more than 100), and a number reaches SQLite through the same JSON parser
 * as the stored row data, so values JavaScript calls equal compare equal in SQL too.
 *
 * Semantics (WIRE §2.3), exactly those of the in-memory evaluator `matchesCond`
 * (src/permissions/filters.ts) that single-row reads and the feed socket use: conditions
 * are ANDed; a condition matches only a field holding a string, number or boolean of the
 * condition value's own type (never across types, for `neq` and `notIn` too: `notIn` is
 * "neq every value", so a list mixing types matches nothing); a missing or null field, an
 * array or an object matches nothing; booleans never order. Strings compare by code
 * point. Sort defaults to ascending; ties break by the row's insertion order, so a cursor
 * is stable. A cursor is bound to the app, the collection and the sort that produced it.
 * Pages (rows, deleted rows, feed entries) also stop at PAGE_BYTES of data, so a page of
 * large rows always fits through RPC.
 */
import { RelayError } from "../../src/errors";
import { propertyTypes } from "../../src/manifest/schema";
import type { CompiledCollection, Scalar } from "../../src/manifest";
import type { Cond, CondOp, RowFilter, RowTerm } from "../../src/permissions";

export type { Cond };

export interface Sort {
  field: string;
  dir?: "asc" | "desc";
}

export interface SqlFragment {
  sql: string;
  params: unknown[];
}

function isFragment(value: unknown): value is SqlFragment {
  return typeof value === "object" && value !== null && !Array.isArray(value) && typeof (value as SqlFragment).sql === "string" && Array.isArray((value as SqlFragment).params);
}

/**
 * SQL as a template: a spliced fragment keeps its text and values, any other spliced value
 * becomes a `?` bound to it. So a value can only ever be bound, never concatenated, and
 * the text of a statement comes from this file's constants and the compiled manifest.
 */
export function fragment(strings: TemplateStringsArray, ...values: unknown[]): SqlFragment {
  let text = strings[0];
  const params: unknown[] = [];
  values.forEach((value, index) => {
    if (isFragment(value)) {
      text += value.sql;
      params.push(...value.params);
    } else {
      text += "?";
      params.push(value);
    }
    text += strings[index + 1];
  });
  return { sql: text, params };
}

const ALWAYS: SqlFragment = { sql: "1", params: [] };
const NEVER: SqlFragment = { sql: "0", params: [] };

const FIELD = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
const MAX_CONDITIONS = 20;
const MAX_SORT = 4;
const MAX_IN_VALUES = 100;

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

type Kind = "string" | "number" | "boolean";

function kindOf(value: Scalar): Kind {
  return typeof value as Kind;
}

/** The JSON types (`json_type`) a field holds when it has this kind; constants of this file, never input. */
function typesOf(kind: Kind, booleans?: readonly boolean[]): string {
  if (kind === "string") return "('text')";
  if (kind === "number") return "('integer', 'real')";
  const names = [...new Set(booleans ?? [true, false])].map((b) => (b ? "'true'" : "'false'"));
  return `(${names.join(", ")})`;
}

const TYPE = "json_type(data, ?)";
const VALUE = "json_extract(data, ?)";

/** The field holds a value of this kind (so it is present, not null, not an array or object). */
function hasKind(path: string, kind: Kind): SqlFragment {
  return { sql: `${TYPE} IN ${typesOf(kind)}`, params: [path] };
}

/** The field equals one of `values`, all of one kind (booleans by their JSON type). */
function equalsOneOf(path: string, kind: Kind, values: Scalar[]): SqlFragment {
  if (kind === "boolean") return { sql: `${TYPE} IN ${typesOf("boolean", values as boolean[])}`, params: [path] };
  // The list travels as one JSON array, so its numbers go through the same parser as the row's.
  return { sql: `(${TYPE} IN ${typesOf(kind)} AND ${VALUE} IN (SELECT value FROM json_each(?)))`, params: [path, path, values] };
}

/**
 * A checked (field, op, value) as SQL over `data`. Also used for permission filter terms
 * (relations, grant pins), whose fields come from the compiled manifest. It matches
 * exactly the rows `matchesCond` accepts.
 */
export function compareSql(field: string, op: CondOp, value: Scalar | Scalar[]): SqlFragment {
  const path = `$.${field}`;
  if (op === "in" || op === "notIn") {
    const list = Array.isArray(value) ? value : [value];
    const kinds = [...new Set(list.map(kindOf))];
    if (op === "in") {
      const any = kinds.map((k) => equalsOneOf(path, k, list.filter((v) => kindOf(v) === k)));
      return any.length === 0 ? NEVER : { sql: `(${any.map((a) => a.sql).join(" OR ")})`, params: any.flatMap((a) => a.params) };
    }
    // "neq every value": a value of another type than the field's makes it false.
    if (kinds.length !== 1) return NEVER;
    const has = hasKind(path, kinds[0]);
    const any = equalsOneOf(path, kinds[0], list);
    return { sql: `(${has.sql} AND NOT (${any.sql}))`, params: [...has.params, ...any.params] };
  }
  if (Array.isArray(value)) return NEVER;
  const kind = kindOf(value);
  if (kind === "boolean") {
    // eq true: the JSON type is true; neq true: it is false. Booleans never order.
    if (op === "eq" || op === "neq") return { sql: `${TYPE} = ?`, params: [path, (op === "eq") === value ? "true" : "false"] };
    return NEVER;
  }
  const sqlOp = op === "eq" ? "=" : op === "neq" ? "!=" : comparators[op];
  return { sql: `(${TYPE} IN ${typesOf(kind)} AND ${VALUE} ${sqlOp} ?)`, params: [path, path, value] };
}

export function whereSql(collection: CompiledCollection, where: unknown): SqlFragment {
  if (where === undefined) return ALWAYS;
  if (!Array.isArray(where) || where.length > MAX_CONDITIONS) {
    throw new RelayError("invalid_request", `q.where must be an array of at most ${MAX_CONDITIONS} conditions.`, { field: "q.where" });
  }
  if (where.length === 0) return ALWAYS;
  const parts = where.map((c, i) => condition(collection, c, i));
  return { sql: parts.map((p) => p.sql).join(" AND "), params: parts.flatMap((p) => p.params) };
}

export interface ResolvedSort {
  fields: { field: string; dir: "asc" | "desc" }[];
  /** Identifies the sort inside a cursor. */
  signature: string;
  /** The collection listed: a cursor answers only for it. */
  collection: string;
  /** The app whose store is listed (its id), when known: a cursor answers only for it. */
  app: string | null;
}

/** Checks a `sort` for `collection`; `app` (the app's id) binds the cursors it makes to that app. */
export function resolveSort(collection: CompiledCollection, sort: unknown, app: string | null = null): ResolvedSort {
  const bound = { collection: collection.name, app };
  if (sort === undefined) return { fields: [], signature: "", ...bound };
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
  return { fields, signature: fields.map((f) => `${f.field}:${f.dir}`).join(","), ...bound };
}

/** ORDER BY: each sort field (nulls first ascending, last descending), then insertion order. */
export function orderSql(sort: ResolvedSort): SqlFragment {
  const parts = sort.fields.map((f) => `json_extract(data, ?) ${f.dir.toUpperCase()}`);
  return { sql: [...parts, "rid ASC"].join(", "), params: sort.fields.map((f) => `$.${f.field}`) };
}

/** What a cursor carries: the app and collection listed, the sort's signature, the last row's sort values and rid. */
interface CursorState {
  app: string | null;
  collection: string;
  signature: string;
  values: unknown[];
  rid: number;
}

/** The cursor's JSON keeps one letter per field, so cursors stay short in URLs. */
interface EncodedCursor {
  a: string | null;
  c: string;
  s: string;
  v: unknown[];
  r: number;
}

export function encodeCursor(sort: ResolvedSort, values: unknown[], rid: number): string {
  const json = JSON.stringify({ a: sort.app, c: sort.collection, s: sort.signature, v: values, r: rid } satisfies EncodedCursor);
  return btoa(String.fromCharCode(...new TextEncoder().encode(json))).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function decodeCursor(cursor: string): CursorState {
  try {
    const binary = atob(cursor.replace(/-/g, "+").replace(/_/g, "/"));
    const encoded = JSON.parse(new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(Uint8Array.from(binary, (ch) => ch.charCodeAt(0)))) as EncodedCursor;
    // Only what encodeCursor writes: sort values are null, strings or finite numbers.
    const sortValue = (value: unknown) => value === null || typeof value === "string" || (typeof value === "number" && Number.isFinite(value));
    if (typeof encoded === "object" && encoded !== null && (encoded.a === null || typeof encoded.a === "string") && typeof encoded.c === "string"
      && typeof encoded.s === "string" && Array.isArray(encoded.v) && encoded.v.every(sortValue) && Number.isSafeInteger(encoded.r) && encoded.r >= 0) {
      return { app: encoded.a, collection: encoded.c, signature: encoded.s, values: encoded.v, rid: encoded.r };
    }
  } catch { /* fall through */ }
  throw new RelayError("invalid_request", "This cursor was not issued by the relay (or by an older version of it); list again without since.", { field: "since" });
}

/**
 * Rows strictly after the cursor in the given order. A null sort value is the smallest
 * (SQLite's order), so "after" is spelt out per direction instead of row-value syntax.
 */
export function afterCursorSql(sort: ResolvedSort, cursor: string): SqlFragment {
  const state = decodeCursor(cursor);
  if (state.app !== sort.app) {
    throw new RelayError("invalid_request", "This cursor belongs to another app's list; list again without since.", { field: "since" });
  }
  if (state.collection !== sort.collection) {
    throw new RelayError("invalid_request", "This cursor belongs to another collection's list; list again without since.", { field: "since" });
  }
  if (state.signature !== sort.signature || state.values.length !== sort.fields.length) {
    throw new RelayError("invalid_request", "This cursor was made with another sort; send the same sort again or start over.", { field: "since" });
  }
  const alternatives: SqlFragment[] = [];
  const equalPrefix: SqlFragment[] = [];
  sort.fields.forEach((f, i) => {
    const path = `$.${f.field}`;
    const v = state.values[i];
    const after: SqlFragment | null = v === null
      ? (f.dir === "asc" ? { sql: "json_extract(data, ?) IS NOT NULL", params: [path] } : null)
      : f.dir === "asc"
        ? { sql: "json_extract(data, ?) > ?", params: [path, v] }
        : { sql: "(json_extract(data, ?) IS NULL OR json_extract(data, ?) < ?)", params: [path, path, v] };
    if (after) alternatives.push(join([...equalPrefix, after]));
    equalPrefix.push({ sql: "json_extract(data, ?) IS ?", params: [path, v] });
  });
  alternatives.push(join([...equalPrefix, { sql: "rid > ?", params: [state.rid] }]));
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
 * Turns a fragment's `?` placeholders into ONE bound parameter: every distinct value goes
 * once into a JSON array, and each placeholder becomes `json_extract(?1, '$[i]')`. SQLite
 * evaluates such a constant expression once per statement, not per row. Values are
 * strings, finite numbers, null, or arrays of strings and numbers (read with `json_each`);
 * a number comes back through SQLite's JSON parser, exactly as the stored data's numbers do.
 */
export function compactParams(fragment: SqlFragment): SqlFragment {
  const slots = new Map<string, number>();
  const values: unknown[] = [];
  let next = 0;
  const sql = fragment.sql.replace(/\?/g, () => {
    if (next >= fragment.params.length) throw new Error(`compactParams: more placeholders than the ${fragment.params.length} parameters`);
    const value = fragment.params[next++];
    if (!packable(value)) throw new Error(`compactParams: cannot bind ${String(value)}`);
    const id = `${typeof value}:${JSON.stringify(value)}`;
    let slot = slots.get(id);
    if (slot === undefined) {
      slot = values.length;
      values.push(value);
      slots.set(id, slot);
    }
    return `json_extract(?1, '$[${slot}]')`;
  });
  if (next !== fragment.params.length) throw new Error(`compactParams: ${next} placeholders for ${fragment.params.length} parameters`);
  return { sql, params: values.length ? [JSON.stringify(values)] : [] };
}

function packable(value: unknown): boolean {
  const plain = (v: unknown) => typeof v === "string" || (typeof v === "number" && Number.isFinite(v));
  return value === null || plain(value) || (Array.isArray(value) && value.every(plain));
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

/** A permission RowFilter as SQL over the stored row's columns and data. */
export function filterSql(filter: RowFilter): SqlFragment {
  if (filter.all) return ALWAYS;
  const parts: SqlFragment[] = [];
  if (filter.anyOf) {
    const any = filter.anyOf.map(termSql);
    parts.push({ sql: `(${any.map((a) => `(${a.sql})`).join(" OR ")})`, params: any.flatMap((a) => a.params) });
  }
  parts.push(...filter.allOf.map(termSql));
  return parts.length ? { sql: parts.map((p) => `(${p.sql})`).join(" AND "), params: parts.flatMap((p) => p.params) } : ALWAYS;
}

function termSql(term: RowTerm): SqlFragment {
  switch (term.kind) {
    case "creator":
      return fragment`creator_kind = ${term.author.kind} AND creator_id = ${term.author.id}`;
    case "editor":
      return fragment`editor_kind = ${term.author.kind} AND editor_id = ${term.author.id}`;
    case "key":
      return fragment`key = ${term.equals}`;
    case "field":
      return compareSql(term.field, term.op, term.value);
  }
}
