/**
 * An app's inbound hooks as D1 keeps them (WIRE §2.7): materialised from the manifest on
 * each deploy (a new rule gets a hook id and URL secret once; a rule that left the
 * manifest is disabled, its rule fields null, and comes back with its URL when it
 * returns), found by the receive route by id and secret, listed for the owner with their
 * delivery counts, and rotated (a new URL secret; the old URL is dead at once).
 */
import { and, eq, sql, type SQL } from "drizzle-orm";
import { config } from "../../config";
import { db, preparedPerBinding, type Db } from "../../db/client";
import { countHitIfRowStatement, hitsSoFar, windowStartOf } from "../../db/rate-limit";
import { ingestDeliveries, ingestHooks } from "../../db/ingest-schema";
import { RelayError } from "../../errors";
import { constantTimeEqual, newId, nowIso, randomHex } from "../../auth/tokens";
import type { CompiledManifest, IngestRule } from "../../manifest";
import { apps } from "../../db/apps-schema";
import type { AppRow, DeployGuard } from "../../db/apps";

export type HookRow = typeof ingestHooks.$inferSelect;

/** An enabled hook with its rule as last deployed. */
export type LiveHook = HookRow & { rule: IngestRule };

function newUrlSecret(): string {
  return randomHex(24);
}

/** The hook's full secret URL: `{API}/v1/ingest/<hookId>/<secret>`. */
export function hookUrl(env: object, hook: Pick<HookRow, "id" | "urlSecret">): string {
  return `${config(env).apiOrigin}/v1/ingest/${hook.id}/${hook.urlSecret}`;
}

/** A rule's columns, in the order the upsert below lists them. */
function ruleValues(rule: IngestRule): unknown[] {
  return [JSON.stringify(rule), rule.collection, rule.mode, rule.wake ? 1 : 0, rule.handshake, rule.verify?.scheme ?? null];
}

const RULE_COLUMNS = ["rule_json", "collection", "mode", "wake", "handshake", "verify_scheme"];

/**
 * The statements that make the app's hooks match a deployed manifest, each carrying
 * `guard` so they ride in the deploy's own D1 batch (src/db/apps.ts DeployGuard): each
 * rule's hook created (a new id and URL secret) or updated (enabled, rule fields
 * refreshed, its URL kept), every other hook of the app disabled with its rule fields
 * cleared (and back with its URL when its rule returns). Idempotent.
 */
export function hookSyncStatements(env: Env, appId: string, manifest: CompiledManifest, guard: DeployGuard): D1PreparedStatement[] {
  const now = nowIso();
  const refreshed = [...RULE_COLUMNS.map((column) => `${column} = excluded.${column}`), "disabled_at = NULL"].join(", ");
  const upserts = manifest.ingest.map((rule) => env.DB.prepare(
    `INSERT INTO ingest_hooks (id, app_id, name, url_secret, created_at, ${RULE_COLUMNS.join(", ")}, disabled_at) ` +
    `SELECT ?, ?, ?, ?, ?, ${RULE_COLUMNS.map(() => "?").join(", ")}, NULL WHERE ${guard.condition} ` +
    `ON CONFLICT (app_id, name) DO UPDATE SET ${refreshed}`,
  ).bind(newId("ih_"), appId, rule.name, newUrlSecret(), now, ...ruleValues(rule), ...guard.binds));
  const cleared = RULE_COLUMNS.map((column) => `${column} = NULL`).join(", ");
  const disable = env.DB.prepare(
    `UPDATE ingest_hooks SET ${cleared}, disabled_at = coalesce(disabled_at, ?) ` +
    `WHERE app_id = ? AND name NOT IN (SELECT value FROM json_each(?)) AND ${guard.condition}`,
  ).bind(now, appId, JSON.stringify(manifest.ingest.map((rule) => rule.name)), ...guard.binds);
  return [...upserts, disable];
}

/** The counter of an app's live deliveries per clock hour (its bucket is this and the app id), which the hourly brake reads. */
const LIVE_DELIVERIES_BUCKET = "ingest-app:";

/**
 * The statement that counts a live delivery in its app's hour, if its journal entry
 * `entryId` is there as it runs (and matches `also`, when given): it follows the statement
 * that claims the entry, in one batch, so a claim that met a conflict counts nothing. A
 * counter read in one row, where counting the hour's journal entries read up to the cap's
 * worth on every delivery.
 */
export function countLiveDelivery(d: Db, appId: string, entryId: string, now: number, also?: SQL) {
  return countHitIfRowStatement(d, `${LIVE_DELIVERIES_BUCKET}${appId}`, windowStartOf(now, HOUR_MS / 1000), ingestDeliveries, and(eq(ingestDeliveries.id, entryId), also)!);
}

/**
 * A receive URL's hook with its app, prepared once (every delivery reads it). The same
 * read takes the app's live deliveries in this clock hour from their counter, for the
 * hourly brake.
 */
const hookOfUrlOf = preparedPerBinding((d) => {
  const liveThisHour = hitsSoFar(sql`${LIVE_DELIVERIES_BUCKET} || ${apps.id}`, sql`${sql.placeholder("hourStart")}`);
  return d.select({ hook: ingestHooks, app: apps, liveThisHour }).from(ingestHooks).innerJoin(apps, eq(apps.id, ingestHooks.appId))
    .where(eq(ingestHooks.id, sql.placeholder("hookId"))).limit(1).prepare();
});

/**
 * The enabled hook a receive URL names, with its app (one read), or `ingest_not_found`:
 * an unknown id, a wrong secret, a disabled hook and an app that is gone (trashed,
 * suspended, archived) all answer alike.
 */
export async function hookForUrl(env: Env, hookId: string, secret: string, now = Date.now()): Promise<{ hook: LiveHook; app: AppRow; liveThisHour: number }> {
  const hourStart = windowStartOf(now, HOUR_MS / 1000);
  const found = (await hookOfUrlOf(env).all({ hookId, hourStart }))[0];
  // The secret is compared even for an unknown id, so both take the same time.
  const matches = constantTimeEqual(found?.hook.urlSecret ?? "-", secret);
  if (!found || !matches || found.hook.ruleJson === null || !RECEIVING.has(found.app.status) || found.app.currentVersion === null) {
    throw new RelayError("ingest_not_found", "No inbound hook answers at this URL.");
  }
  return { hook: { ...found.hook, rule: JSON.parse(found.hook.ruleJson) as IngestRule }, app: found.app, liveThisHour: Number(found.liveThisHour) };
}

export const HOUR_MS = 3_600_000;

/** App statuses whose hooks receive: a dormant app's hooks still write (and may wake it). */
const RECEIVING = new Set<AppRow["status"]>(["active", "dormant"]);

/** The app's hook of that name (enabled or not), or `ingest_not_found`. */
export async function hookByName(env: Env, appId: string, name: string): Promise<HookRow> {
  const hook = (await db(env).select().from(ingestHooks).where(and(eq(ingestHooks.appId, appId), eq(ingestHooks.name, name))).limit(1))[0];
  if (!hook) throw new RelayError("ingest_not_found", `This app has no inbound hook named "${name.slice(0, 64)}".`, { hook: name.slice(0, 64) });
  return hook;
}

/** The app's enabled hook of that name with its rule; a disabled one is `ingest_not_found`. */
export async function liveHookByName(env: Env, appId: string, name: string): Promise<LiveHook> {
  const hook = await hookByName(env, appId, name);
  if (hook.ruleJson === null) throw new RelayError("ingest_not_found", `The inbound hook "${name}" is disabled: its rule is no longer in the manifest.`, { hook: name });
  return { ...hook, rule: JSON.parse(hook.ruleJson) as IngestRule };
}

/** A new URL secret; the old URL answers 404 from now on. Answers the new URL, shown once. */
export async function rotateHook(env: Env, appId: string, name: string): Promise<{ name: string; url: string }> {
  const hook = await hookByName(env, appId, name);
  const urlSecret = newUrlSecret();
  await db(env).update(ingestHooks).set({ urlSecret }).where(eq(ingestHooks.id, hook.id));
  return { name: hook.name, url: hookUrl(env, { id: hook.id, urlSecret }) };
}

export interface HookView {
  name: string;
  url: string;
  collection: string | null;
  mode: string | null;
  wake: boolean | null;
  handshake: string | null;
  disabledAt: string | null;
  createdAt: string;
  signingSecret: { configured: boolean; fingerprint: string | null; setAt: string | null; previousUntil: string | null };
  verify: null;
  deliveries: { accepted: number; failed: number; dropped_duplicate: number };
}

/** The app's hooks as WIRE §2.7 lists them, oldest first, with their delivery counts (`verify` is always null on the wire). */
export async function listHooks(env: Env, appId: string, now = Date.now()): Promise<HookView[]> {
  const hooks = await db(env).select().from(ingestHooks).where(eq(ingestHooks.appId, appId)).orderBy(ingestHooks.createdAt, ingestHooks.name);
  if (hooks.length === 0) return [];
  const counts = await db(env).select({ hookId: ingestDeliveries.hookId, status: ingestDeliveries.status, total: sql<number>`count(*)` })
    .from(ingestDeliveries).where(eq(ingestDeliveries.appId, appId))
    .groupBy(ingestDeliveries.hookId, ingestDeliveries.status);
  return hooks.map((hook) => {
    const tally = { accepted: 0, failed: 0, dropped_duplicate: 0 };
    for (const row of counts) if (row.hookId === hook.id && row.status !== "processing") tally[row.status] = Number(row.total);
    const previousLive = hook.previousUntil !== null && Date.parse(hook.previousUntil) > now;
    return {
      name: hook.name, url: hookUrl(env, hook), collection: hook.collection, mode: hook.mode, wake: hook.wake, handshake: hook.handshake,
      disabledAt: hook.disabledAt, createdAt: hook.createdAt,
      signingSecret: { configured: hook.signingSecret !== null, fingerprint: hook.signingFingerprint, setAt: hook.signingSetAt, previousUntil: previousLive ? hook.previousUntil : null },
      verify: null, deliveries: tally,
    };
  });
}

/** A purge: the app's hooks and their journal are gone. */
export async function deleteAppHooks(env: Env, appId: string): Promise<void> {
  const d = db(env);
  await d.batch([d.delete(ingestDeliveries).where(eq(ingestDeliveries.appId, appId)), d.delete(ingestHooks).where(eq(ingestHooks.appId, appId))]);
}

