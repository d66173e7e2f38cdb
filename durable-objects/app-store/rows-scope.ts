/**
 * What every row verb works in, and the lookups they all share. A verb is a plain function
 * of a RowScope (the store's SQL, the compiled manifest of the call's version, the app's
 * quotas, the effect kinds the caller keeps quiet) so each concern can sit in a file of its
 * own: rows-read.ts (get, list, count, the deleted list), rows-write.ts (create, update,
 * inbound-hook writes), rows-remove.ts (delete, purge, restore), rows-place.ts (starter and
 * imported rows), checked by rows-checks.ts, rows-field-rules.ts and rows-unique.ts.
 * Each write runs inside one synchronous SQLite transaction the caller opens, so it writes
 * the row, its unique slots, its feed entry and its effects together or nothing. Failures
 * are thrown as RelayError; the AppStore turns them into Outcomes at the RPC edge.
 */
import type { RelayError } from "../../src/errors";
import type { Principal } from "../../src/permissions";
import type { CompiledManifest } from "../../src/manifest";
import type { EffectKind } from "../../src/rules/match";
import type { Challenge } from "./contract";
import { findRow, type StoredRow } from "./values";

export interface Limits {
  maxRows: number;
  maxStorageBytes: number;
}

/** Who writes and when: the principal, the bot challenge the Worker checked, and the write's timestamp. */
export interface WriteContext {
  principal: Principal;
  challenge: Challenge;
  now: string;
}

export interface RowScope {
  readonly sql: SqlStorage;
  readonly manifest: CompiledManifest;
  readonly limits: Limits;
  /** Effect kinds this caller asked to keep quiet (batch imports); recorded, not emitted. */
  readonly suppressed: ReadonlySet<EffectKind>;
}

/** Throws a refused permission decision's error. */
export function fail(decision: { ok: false; error: RelayError }): never {
  throw decision.error;
}

/** The row at `key` unless it is deleted or purged. */
export function liveRow(sql: SqlStorage, collection: string, key: string): StoredRow | null {
  const row = findRow(sql, collection, key);
  return row && row.deleted_at === null ? row : null;
}
