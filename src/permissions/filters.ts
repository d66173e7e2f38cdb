/**
 * Row filters: what a list (or a watcher, or a pinned count) may see, said as data. The
 * engine never runs a query; it hands the AppStore a `RowFilter` that the SQL query
 * builder turns into a WHERE clause, and the same filter evaluates in memory
 * (`matchesFilter`) for feed fan-out and for single-row checks. One description, two
 * evaluators, so the list path and the get path cannot disagree about a row.
 *
 * Shape: `{ all: true }`, or `{ all: false, anyOf, allOf }` meaning
 * `(anyOf[0] OR anyOf[1] OR …) AND allOf[0] AND allOf[1] AND …`, where `anyOf: null` puts
 * no OR restriction (every row passes that half). `anyOf` is never an empty array.
 */
import type { Scalar } from "../manifest";
import { sameAuthor, type Author, type Cond, type CondOp, type GrantPin } from "./principal";

/** The row facts permission decisions read. `creator` never moves; `editor` is the last writer. */
export interface RowContext {
  key: string;
  creator: Author;
  editor: Author;
  data: unknown;
}

export type RowTerm =
  /** The row's creator is exactly this author (creator_kind, creator_id). */
  | { kind: "creator"; author: Author }
  /** The row's last writer is exactly this author (editor_kind, editor_id). */
  | { kind: "editor"; author: Author }
  /** The row key equals (a key-pinned grant link). */
  | { kind: "key"; equals: string }
  /** A top-level data field compared as in the row-query grammar; `relation` names the relation it came from. */
  | { kind: "field"; field: string; op: CondOp; value: Scalar | Scalar[]; relation?: string };

export type RowFilter = { all: true } | { all: false; anyOf: RowTerm[] | null; allOf: RowTerm[] };

export const ALL_ROWS: RowFilter = { all: true };

/** Builds the normal form: `{ all: true }` when nothing restricts. */
export function makeFilter(anyOf: RowTerm[] | null, allOf: RowTerm[]): RowFilter {
  if (anyOf === null && allOf.length === 0) return ALL_ROWS;
  return { all: false, anyOf, allOf };
}

export function matchesFilter(filter: RowFilter, row: RowContext): boolean {
  if (filter.all) return true;
  if (filter.anyOf !== null && !filter.anyOf.some((t) => matchesTerm(t, row))) return false;
  return filter.allOf.every((t) => matchesTerm(t, row));
}

export function matchesTerm(term: RowTerm, row: Pick<RowContext, "key" | "creator" | "editor" | "data">): boolean {
  switch (term.kind) {
    case "creator":
      return sameAuthor(row.creator, term.author);
    case "editor":
      return sameAuthor(row.editor, term.author);
    case "key":
      return row.key === term.equals;
    case "field":
      return matchesCond({ field: term.field, op: term.op, value: term.value }, row.data);
  }
}

/** The terms a grant pin adds to every filter (ANDed). */
export function pinTerms(pin: GrantPin | null): RowTerm[] {
  if (!pin) return [];
  if ("key" in pin) return [{ kind: "key", equals: pin.key }];
  return pin.where.map((c) => ({ kind: "field", field: c.field, op: c.op, value: c.value }));
}

/**
 * One row-query condition against row data (WIRE §2.3): comparisons never coerce across
 * types, a missing or null field (or an array or object) matches nothing, for every
 * operator, `neq` and `notIn` included; `in` is "eq some value" and `notIn` "neq every
 * value", so a value of another type than the field's never counts as "not equal"; only
 * strings and numbers order (`gt`… on booleans match nothing), strings by code point.
 * The list query's SQL (durable-objects/app-store/query.ts `compareSql`) matches exactly
 * the same rows.
 */
export function matchesCond(cond: Cond, data: unknown): boolean {
  if (typeof data !== "object" || data === null || Array.isArray(data)) return false;
  if (!Object.hasOwn(data, cond.field)) return false;
  const actual = (data as Record<string, unknown>)[cond.field];
  if (!isScalar(actual)) return false;
  const same = (v: Scalar) => typeof v === typeof actual;
  const v = cond.value;
  switch (cond.op) {
    case "eq":
      return !Array.isArray(v) && same(v) && actual === v;
    case "neq":
      return !Array.isArray(v) && same(v) && actual !== v;
    case "in":
      return Array.isArray(v) && v.some((x) => same(x) && x === actual);
    case "notIn":
      return Array.isArray(v) && v.every((x) => same(x)) && !v.includes(actual);
    case "gt":
    case "lt":
    case "gte":
    case "lte": {
      if (Array.isArray(v) || !same(v) || typeof actual === "boolean") return false;
      const order = typeof actual === "string" ? compareCodePoints(actual, v as string) : Math.sign((actual as number) - (v as number));
      if (cond.op === "gt") return order > 0;
      if (cond.op === "lt") return order < 0;
      if (cond.op === "gte") return order >= 0;
      return order <= 0;
    }
  }
}

function isScalar(value: unknown): value is Scalar {
  return typeof value === "string" || typeof value === "boolean" || (typeof value === "number" && Number.isFinite(value));
}

/**
 * Strings in code point order, as SQLite compares their UTF-8 bytes (JavaScript's `<`
 * compares UTF-16 code units, which puts U+E000–U+FFFF after every astral character).
 */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    if (x >= 0xd800 && y >= 0xd800) {
      // Surrogates (astral characters) sort after U+E000–U+FFFF.
      x = x >= 0xe000 ? x - 0x800 : x + 0x2000;
      y = y >= 0xe000 ? y - 0x800 : y + 0x2000;
    }
    return x - y;
  }
  return a.length - b.length;
}
