/**
 * Row values as the store keeps them: the stored row and its wire views, the key rule,
 * the checks on data no schema can express (finite numbers only), unique slots, and the
 * restore window. Shared by the row verbs, the feed's visibility and the sweeps, so each
 * rule is written once.
 */
import { RelayError } from "../../src/errors";
import type { Author, RowContext } from "../../src/permissions";
import type { RowView } from "./contract";

/** A row of `_svc_rows`. */
export type StoredRow = {
  rid: number;
  collection: string;
  key: string;
  data: string;
  version: number;
  bytes: number;
  creator_kind: string;
  creator_id: string;
  editor_kind: string;
  editor_id: string;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
  deleter_kind: string | null;
  deleter_id: string | null;
  purged: number;
};

export const RESTORE_WINDOW_DAYS = 30;
const DAY_MS = 86_400_000;

/**
 * Rows soft-deleted before this instant (ISO, like `deleted_at`) are past the restore
 * window: restore answers restore_expired, the deleted list leaves them out, and the
 * store's sweep removes them (retention.ts).
 */
export function restoreCutoff(now: number): string {
  return new Date(now - RESTORE_WINDOW_DAYS * DAY_MS).toISOString();
}

/** When a row deleted at `deletedAt` stops being restorable. */
export function recoverableUntil(deletedAt: string): string {
  return new Date(Date.parse(deletedAt) + RESTORE_WINDOW_DAYS * DAY_MS).toISOString();
}

const KEY_PATTERN = /^[A-Za-z0-9_.:@-]{1,128}$/;
/** Keys that name a collection route (`…/count`, `…/deleted`, …): a row there could never be reached. */
const RESERVED_KEYS = new Set(["count", "deleted", "batch", "retention"]);

export function checkKey(key: string): void {
  if (!KEY_PATTERN.test(key)) {
    throw new RelayError("invalid_request", "A row key is 1–128 characters of A–Z, a–z, 0–9 and _ . : @ -.", { field: "key" });
  }
  if (RESERVED_KEYS.has(key)) {
    throw new RelayError("invalid_request", `"${key}" names a collection route and cannot be a row key.`, { field: "key" });
  }
}

const BASE36 = "0123456789abcdefghijklmnopqrstuvwxyz";

/** A fresh server-minted key: time-ordered, then random. */
export function mintKey(): string {
  let key = `r${Date.now().toString(36).padStart(9, "0")}`;
  for (const byte of crypto.getRandomValues(new Uint8Array(10))) key += BASE36[byte % 36];
  return key;
}

/**
 * Where `value` holds a number JSON cannot (NaN, ±Infinity: `1e400` parses to Infinity),
 * as property names and array indexes from the top, or null when it holds none. Stored
 * through JSON.stringify such a number would silently become null. The caller bounds the
 * depth first (MAX_DATA_DEPTH), so the walk cannot run away.
 */
export function nonFiniteAt(value: unknown): string[] | null {
  if (typeof value === "number") return Number.isFinite(value) ? null : [];
  if (typeof value !== "object" || value === null) return null;
  const entries: Array<[string, unknown]> = Array.isArray(value) ? value.map((child, index) => [String(index), child]) : Object.entries(value);
  for (const [name, child] of entries) {
    const below = nonFiniteAt(child);
    if (below) return [name, ...below];
  }
  return null;
}

/**
 * A unique value's slot, or null when it claims none (null, absent, empty, non-scalar):
 * strings trimmed and case-folded. Folding is NFKC, then upper, then lower case, which
 * folds what lower-casing alone misses ("Straße" = "STRASSE", final sigma, compatibility
 * forms like "ﬁ"). Changing this changes UNIQUE_SLOT_FORMAT.
 */
export function uniqueSlot(value: unknown): string | null {
  if (typeof value === "string") {
    const folded = value.normalize("NFKC").trim().toUpperCase().toLowerCase();
    return folded === "" ? null : `s:${folded}`;
  }
  if (typeof value === "number" && Number.isFinite(value)) return `n:${value}`;
  if (typeof value === "boolean") return `b:${value}`;
  return null;
}

const UTF8 = new TextEncoder();

export function byteLength(text: string): number {
  return UTF8.encode(text).byteLength;
}

export const authorFrom = (kind: string, id: string) => ({ kind, id }) as Author;

export function viewRow(row: StoredRow): RowView {
  const editor = authorFrom(row.editor_kind, row.editor_id);
  return {
    key: row.key, data: JSON.parse(row.data), version: row.version, author: editor,
    creator: authorFrom(row.creator_kind, row.creator_id), editor, created_at: row.created_at, updated_at: row.updated_at,
    deleted_at: row.deleted_at,
  };
}

/** The row as the permission engine judges it. */
export function rowContext(row: StoredRow): RowContext {
  return { key: row.key, creator: authorFrom(row.creator_kind, row.creator_id), editor: authorFrom(row.editor_kind, row.editor_id), data: JSON.parse(row.data) };
}

/** The stored row of `collection` at `key`, live, deleted or purged. */
export function findRow(sql: SqlStorage, collection: string, key: string): StoredRow | null {
  return sql.exec<StoredRow>("SELECT * FROM _svc_rows WHERE collection = ? AND key = ?", collection, key).toArray()[0] ?? null;
}
