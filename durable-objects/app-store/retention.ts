/**
 * Row retention per collection (WIRE §2.3, §5.2): the manifest's author default, an owner
 * override kept in the store (so it survives redeploys), the effective bound per axis
 * (override, else default; maxRows capped at MAX_ROWS_PER_APP), how many live rows the
 * next sweep would prune, and the sweep itself. Pruning hard-deletes live rows without
 * feed entries; the app's starter rows (creator `system`) are never pruned nor counted.
 * The feed floor moves to the head so every watcher resyncs.
 *
 * The same sweep removes soft-deleted rows past the restore window (`restoreCutoff` in
 * values.ts), which nothing can restore any more: scrubbed as a purge scrubs them,
 * but feed-silent, and with no resync, since no reader saw them after their delete.
 */
import { RelayError } from "../../src/errors";
import type { RetentionAxes, RetentionView } from "./contract";
import type { CompiledManifest } from "../../src/manifest";
import { readMeta, writeMeta } from "./schema";
import { headSeq } from "./feed";
import { restoreCutoff } from "./values";

type Axes = RetentionAxes;

const NONE: Axes = { maxRows: null, maxAgeDays: null };
const DAY_MS = 86_400_000;

function overrideOf(sql: SqlStorage, collection: string): Axes {
  const raw = readMeta(sql, `retention:${collection}`);
  return raw ? { ...NONE, ...(JSON.parse(raw) as Partial<Axes>) } : { ...NONE };
}

function authorDefaultOf(manifest: CompiledManifest, collection: string): Axes {
  const declared = manifest.collections[collection]?.retention;
  return declared ? { maxRows: declared.maxRows, maxAgeDays: declared.maxAgeDays } : { ...NONE };
}

export function effectiveOf(manifest: CompiledManifest, sql: SqlStorage, collection: string, maxRowsPerApp: number): Axes {
  const o = overrideOf(sql, collection);
  const d = authorDefaultOf(manifest, collection);
  const maxRows = o.maxRows ?? d.maxRows;
  return { maxRows: maxRows === null ? null : Math.min(maxRows, maxRowsPerApp), maxAgeDays: o.maxAgeDays ?? d.maxAgeDays };
}

/** Seed rows (WIRE §2.14: author kind `system`) are outside retention (WIRE §5.2: "live non-seed rows"). */
const PRUNABLE = "collection = ? AND deleted_at IS NULL AND creator_kind != 'system'";

/** Live non-seed rows over either bound: beyond the newest maxRows, or created more than maxAgeDays ago. */
function prunableRids(sql: SqlStorage, collection: string, bounds: Axes, now: number): number[] {
  const rids = new Set<number>();
  if (bounds.maxRows !== null) {
    for (const r of sql.exec<{ rid: number }>(
      `SELECT rid FROM _svc_rows WHERE ${PRUNABLE} ORDER BY created_at DESC, rid DESC LIMIT -1 OFFSET ?`, collection, bounds.maxRows,
    )) rids.add(Number(r.rid));
  }
  if (bounds.maxAgeDays !== null) {
    const cutoff = new Date(now - bounds.maxAgeDays * DAY_MS).toISOString();
    for (const r of sql.exec<{ rid: number }>(
      `SELECT rid FROM _svc_rows WHERE ${PRUNABLE} AND created_at < ?`, collection, cutoff,
    )) rids.add(Number(r.rid));
  }
  return [...rids];
}

export function retentionView(manifest: CompiledManifest, sql: SqlStorage, collection: string, maxRowsPerApp: number, now = Date.now()): RetentionView {
  const effective = effectiveOf(manifest, sql, collection, maxRowsPerApp);
  return {
    effective, authorDefault: authorDefaultOf(manifest, collection), override: overrideOf(sql, collection),
    wouldPrune: prunableRids(sql, collection, effective, now).length,
  };
}

/** Numbers set an axis, null clears it, omitted leaves it. */
export function setOverride(sql: SqlStorage, collection: string, patch: Partial<Axes>): void {
  for (const [axis, value] of Object.entries(patch)) {
    if (value !== null && value !== undefined && (!Number.isInteger(value) || value < 1 || value > 1_000_000)) {
      throw new RelayError("invalid_request", `${axis} must be a whole number from 1 to 1000000, or null to clear it.`, { field: axis });
    }
  }
  const next = { ...overrideOf(sql, collection), ...patch };
  writeMeta(sql, `retention:${collection}`, next.maxRows === null && next.maxAgeDays === null ? null : JSON.stringify(next));
}

/** Whether any collection has an effective bound, so the sweep alarm is worth setting. */
export function anyRetention(manifest: CompiledManifest, sql: SqlStorage, maxRowsPerApp: number): boolean {
  return Object.keys(manifest.collections).some((c) => {
    const e = effectiveOf(manifest, sql, c, maxRowsPerApp);
    return e.maxRows !== null || e.maxAgeDays !== null;
  });
}

/** Soft-deleted rows past the restore window (purged ones are already scrubbed: their marker answers restore_expired). */
const EXPIRED = "deleted_at IS NOT NULL AND purged = 0 AND deleted_at < ?";

/** Whether the sweep has work to come: a retention bound, or a tombstone that will expire. */
export function sweepDue(manifest: CompiledManifest, sql: SqlStorage, maxRowsPerApp: number): boolean {
  return anyRetention(manifest, sql, maxRowsPerApp)
    || sql.exec("SELECT 1 FROM _svc_rows WHERE deleted_at IS NOT NULL AND purged = 0 LIMIT 1").toArray().length > 0;
}

/**
 * Removes tombstones past the restore window for good: the row goes (the usage triggers
 * free its bytes) and its earlier feed entries keep their place with data null (JSON
 * null, as a purge leaves them, so none reads as an audited purge) and no previous state.
 * Nothing is appended.
 */
function dropExpired(sql: SqlStorage, now: number): number {
  const cutoff = restoreCutoff(now);
  const n = Number(sql.exec<{ n: number }>(`SELECT count(*) AS n FROM _svc_rows WHERE ${EXPIRED}`, cutoff).one().n);
  if (n === 0) return 0;
  sql.exec(
    `UPDATE _svc_feed SET data = 'null', prev = NULL WHERE (data IS NOT NULL OR prev IS NOT NULL)
       AND (collection, key) IN (SELECT collection, key FROM _svc_rows WHERE ${EXPIRED})`, cutoff,
  );
  sql.exec(`DELETE FROM _svc_rows WHERE ${EXPIRED}`, cutoff);
  return n;
}

/**
 * Drops the anonymous write budgets (`_svc_anon_budget`, one counter per collection, caller
 * and UTC day) of days before `now`'s: only today's are ever read, and without this the
 * table kept one row per anonymous caller and day for good.
 */
export function dropSpentBudgets(sql: SqlStorage, now: number): void {
  sql.exec("DELETE FROM _svc_anon_budget WHERE day < ?", new Date(now).toISOString().slice(0, 10));
}

/**
 * Hard-deletes every row over its collection's bounds, drops expired tombstones and past
 * days' write budgets; returns how many live rows were pruned (watchers must resync: rows
 * left their lists).
 */
export function sweep(manifest: CompiledManifest, sql: SqlStorage, maxRowsPerApp: number, now = Date.now()): number {
  dropExpired(sql, now);
  dropSpentBudgets(sql, now);
  let pruned = 0;
  for (const collection of Object.keys(manifest.collections)) {
    const rids = prunableRids(sql, collection, effectiveOf(manifest, sql, collection, maxRowsPerApp), now);
    for (const rid of rids) {
      const row = sql.exec<{ key: string }>("SELECT key FROM _svc_rows WHERE rid = ?", rid).toArray()[0];
      if (!row) continue;
      sql.exec("DELETE FROM _svc_unique WHERE collection = ? AND key = ?", collection, row.key);
      sql.exec("DELETE FROM _svc_rows WHERE rid = ?", rid);
      pruned += 1;
    }
  }
  if (pruned > 0) writeMeta(sql, "feed_floor", String(headSeq(sql)));
  return pruned;
}
