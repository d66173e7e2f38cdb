/**
 * The checks a row write passes before it touches storage: the version the caller read
 * (if_match), the bot challenge, the data itself (depth, finite numbers, schema, size),
 * the app's quotas and the anonymous write budget. Each throws the catalogue error that
 * names what failed; a write that passes them all is then written whole. Shared by every
 * write verb (rows-write.ts, rows-remove.ts, rows-place.ts), so they sit apart from all.
 */
import { RelayError } from "../../src/errors";
import { anonBudgetExceeded } from "../../src/permissions";
import { validateRow, type CompiledCollection, type CompiledManifest } from "../../src/manifest";
import { MAX_DATA_DEPTH, nestsDeeperThan } from "./contract";
import { readUsage } from "./schema";
import type { RowScope, WriteContext } from "./rows-scope";
import { byteLength, nonFiniteAt, viewRow, type StoredRow } from "./values";

export function checkIfMatch(row: StoredRow, ifMatch: number | undefined): void {
  if (ifMatch !== undefined && ifMatch !== row.version) {
    throw new RelayError("conflict", `The row is at version ${row.version}, not ${ifMatch}; rebase on details.current and retry.`, { current: viewRow(row) });
  }
}

export function checkChallenge(needed: boolean, ctx: WriteContext): void {
  if (!needed) return;
  if (ctx.challenge === "absent") throw new RelayError("turnstile_required", "This collection needs a bot-challenge token with each anonymous write.");
  if (ctx.challenge === "failed") throw new RelayError("turnstile_verification_failed", "The bot-challenge token was rejected.");
}

/** The row's data as stored (its JSON text), once it passes depth, finiteness, the schema and the size limit. */
export function checkData(manifest: CompiledManifest, col: CompiledCollection, data: unknown): string {
  if (data === undefined) throw new RelayError("invalid_request", "A row needs `data`.", { field: "data" });
  if (nestsDeeperThan(data, MAX_DATA_DEPTH)) {
    throw new RelayError("invalid_request", `Row data may nest at most ${MAX_DATA_DEPTH} arrays or objects deep.`, { field: "data", limit: MAX_DATA_DEPTH });
  }
  const at = nonFiniteAt(data);
  if (at) {
    // Named like the route's field errors (`data.a.0`) and, as a JSON pointer, like schema errors.
    throw new RelayError("invalid_request", "Row data may hold only finite numbers: JSON has no NaN or Infinity (a number like 1e400 is out of range).", {
      field: ["data", ...at].join("."), path: at.map((p) => `/${p.replace(/~/g, "~0").replace(/\//g, "~1")}`).join(""),
    });
  }
  const result = validateRow(manifest, col.name, data);
  if (!result.ok) {
    throw new RelayError("row_schema_violation", `The row does not match the schema of "${col.name}": ${result.errors[0]?.path || "/"} ${result.errors[0]?.message ?? ""}`.trim(),
      { collection: col.name, errors: result.errors });
  }
  const text = JSON.stringify(data);
  const bytes = byteLength(text);
  if (bytes > col.maxRowBytes) {
    throw new RelayError("row_size_exceeded", `The row's data is ${bytes} bytes; "${col.name}" takes at most ${col.maxRowBytes}.`, { limit: col.maxRowBytes, bytes });
  }
  return text;
}

export function checkQuota(scope: RowScope, addedBytes: number, addedRows: number): void {
  const { limits } = scope;
  const usage = readUsage(scope.sql);
  if (addedRows > 0) {
    const rows = usage.liveRows;
    if (rows + addedRows > limits.maxRows) {
      throw new RelayError("app_quota_exceeded", `This app holds ${rows} rows, the most it may hold.`, { limit: limits.maxRows, resource: "rows" });
    }
  }
  if (addedBytes > 0) {
    const used = usage.storedBytes;
    if (used + addedBytes > limits.maxStorageBytes) {
      throw new RelayError("app_quota_exceeded", `This app's rows use ${used} bytes of ${limits.maxStorageBytes}.`, { limit: limits.maxStorageBytes, resource: "storage" });
    }
  }
}

/** Counts an anonymous write against its per-app and per-IP daily caps; refuses it when either is spent. */
export function spendBudget(sql: SqlStorage, collection: string, budget: { perIpPerDay: number; perAppPerDay: number; ip: string | null } | null, now: string): void {
  if (!budget) return;
  const day = now.slice(0, 10);
  const axes: Array<["perIpPerDay" | "perAppPerDay", number, string]> = [
    ["perAppPerDay", budget.perAppPerDay, "app"],
    ["perIpPerDay", budget.perIpPerDay, budget.ip ?? "unknown"],
  ];
  for (const [scope, cap, subject] of axes) {
    if (cap === 0) continue;
    const used = sql.exec<{ used: number }>(
      "SELECT used FROM _svc_anon_budget WHERE collection = ? AND scope = ? AND subject = ? AND day = ?", collection, scope, subject, day,
    ).toArray()[0]?.used ?? 0;
    if (used >= cap) {
      throw anonBudgetExceeded(collection, scope, cap);
    }
  }
  for (const [scope, cap, subject] of axes) {
    if (cap === 0) continue;
    sql.exec(
      `INSERT INTO _svc_anon_budget (collection, scope, subject, day, used) VALUES (?, ?, ?, ?, 1)
       ON CONFLICT (collection, scope, subject, day) DO UPDATE SET used = used + 1`, collection, scope, subject, day,
    );
  }
}
