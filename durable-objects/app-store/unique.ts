/**
 * Keeping the unique index in step with the manifest across redeploys. A field that
 * becomes unique is backfilled from the live rows (a redeploy that would make two live
 * rows share a value is refused first with `unique_backfill_conflict`); a field that
 * stops being unique loses its slots. Which fields are indexed is remembered in the
 * store, so the work happens once per change, not once per request.
 */
import type { CompiledManifest } from "../../src/manifest";
import { readMeta, writeMeta } from "./schema";
import { uniqueSlot } from "./values";

function declared(manifest: CompiledManifest): string[] {
  return Object.values(manifest.collections).flatMap((c) => c.unique.map((f) => `${c.name}\u0000${f}`)).sort();
}

function split(pair: string): [string, string] {
  const [collection, field] = pair.split("\u0000");
  return [collection, field];
}

/** Live rows per (collection, field) newly unique in `manifest` that share a value. */
export function backfillConflicts(sql: SqlStorage, manifest: CompiledManifest): { collection: string; field: string; value: string }[] {
  // Only fields the redeploy makes unique are checked; a change of slot format is not the author's doing.
  const indexed = new Set(JSON.parse(readMeta(sql, "unique_fields") ?? "[]") as string[]);
  const conflicts: { collection: string; field: string; value: string }[] = [];
  for (const pair of declared(manifest)) {
    if (indexed.has(pair)) continue;
    const [collection, field] = split(pair);
    const seen = new Set<string>();
    for (const row of sql.exec<{ data: string }>("SELECT data FROM _svc_rows WHERE collection = ? AND deleted_at IS NULL", collection)) {
      const slot = uniqueSlot((JSON.parse(row.data) as Record<string, unknown> | null)?.[field]);
      if (!slot) continue;
      if (seen.has(slot)) {
        conflicts.push({ collection, field, value: slot.slice(2) });
        break;
      }
      seen.add(slot);
    }
  }
  return conflicts;
}

/**
 * How `uniqueSlot` folds values. Slots stored under another format are rebuilt from the
 * live rows (first row by insertion keeps a value two rows now share).
 */
const UNIQUE_SLOT_FORMAT = "2";

/** Brings the unique slots in line with `manifest`; rows that would clash keep no slot. */
export function reconcileUnique(sql: SqlStorage, manifest: CompiledManifest): void {
  const wanted = declared(manifest);
  const current = readMeta(sql, "unique_format") === UNIQUE_SLOT_FORMAT;
  if (!current) sql.exec("DELETE FROM _svc_unique");
  const indexed = current ? JSON.parse(readMeta(sql, "unique_fields") ?? "[]") as string[] : [];
  writeMeta(sql, "unique_format", UNIQUE_SLOT_FORMAT);
  if (JSON.stringify(wanted) === JSON.stringify(indexed)) {
    writeMeta(sql, "unique_fields", JSON.stringify(wanted));
    return;
  }
  for (const pair of indexed.filter((p) => !wanted.includes(p))) {
    const [collection, field] = split(pair);
    sql.exec("DELETE FROM _svc_unique WHERE collection = ? AND field = ?", collection, field);
  }
  for (const pair of wanted.filter((p) => !indexed.includes(p))) {
    const [collection, field] = split(pair);
    for (const row of sql.exec<{ key: string; data: string }>("SELECT key, data FROM _svc_rows WHERE collection = ? AND deleted_at IS NULL ORDER BY rid", collection)) {
      const slot = uniqueSlot((JSON.parse(row.data) as Record<string, unknown> | null)?.[field]);
      if (slot) sql.exec("INSERT OR IGNORE INTO _svc_unique (collection, field, value, key) VALUES (?, ?, ?, ?)", collection, field, slot, row.key);
    }
  }
  writeMeta(sql, "unique_fields", JSON.stringify(wanted));
}
