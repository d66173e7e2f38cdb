/**
 * A write's side of the unique index: claiming a row's unique slots as it is written (a
 * slot another live row holds is a unique_conflict) and finding the live row that holds a
 * value (for an upsert by a unique field). Keeping the index in step with redeploys is
 * unique.ts's work; this is only what a single write needs.
 */
import { RelayError } from "../../src/errors";
import type { CompiledCollection } from "../../src/manifest";
import { liveRow } from "./rows-scope";
import { uniqueSlot, type StoredRow } from "./values";

function slotHolder(sql: SqlStorage, collection: string, field: string, slot: string): { key: string } | undefined {
  return sql.exec<{ key: string }>("SELECT key FROM _svc_unique WHERE collection = ? AND field = ? AND value = ?", collection, field, slot).toArray()[0];
}

/** The live row holding `data`'s value of the unique `field`, if any. */
export function holderOf(sql: SqlStorage, col: CompiledCollection, field: string, data: unknown): StoredRow | null {
  const slot = uniqueSlot((data as Record<string, unknown> | null)?.[field]);
  const holder = slot ? slotHolder(sql, col.name, field, slot) : undefined;
  return holder ? liveRow(sql, col.name, holder.key) : null;
}

/** Takes the row's unique slots (releasing its old ones); a slot held by another live row is a conflict. */
export function claimUnique(sql: SqlStorage, col: CompiledCollection, key: string, data: unknown): void {
  // No unique field, no slot to release: the manifest's load dropped any an older version kept (unique.ts).
  if (col.unique.length === 0) return;
  sql.exec("DELETE FROM _svc_unique WHERE collection = ? AND key = ?", col.name, key);
  for (const field of col.unique) {
    const slot = uniqueSlot((data as Record<string, unknown> | null)?.[field]);
    if (!slot) continue;
    if (slotHolder(sql, col.name, field, slot)) {
      throw new RelayError("unique_conflict", `Another row already has this "${field}"; upsert with on: "${field}" to update it instead.`, { field, collection: col.name });
    }
    sql.exec("INSERT INTO _svc_unique (collection, field, value, key) VALUES (?, ?, ?, ?)", col.name, field, slot, key);
  }
}
