/**
 * Outbound connections and their consents in progress, in D1. A new connection is
 * inserted only while the app is under its cap and the name is free, in one statement, so
 * two creates racing cannot pass the cap together. Token changes are conditional on the
 * generation they were computed from (see `tokenGeneration` in connections-schema.ts).
 * A consent is spent by deleting it: the callback that deletes it is the only one to use it.
 */
import { and, asc, eq, lt, getTableColumns, sql } from "drizzle-orm";
import { db } from "./client";
import { appConnections, connectionAuthorizations } from "./connections-schema";
import { nowIso } from "../auth/tokens";

type Env = { DB: D1Database };
export type ConnectionRow = typeof appConnections.$inferSelect;
export type AuthorizationRow = typeof connectionAuthorizations.$inferSelect;

/**
 * Inserts `row` when the app has fewer than `cap` connections and none named `row.name`.
 * `duplicate` and `cap` say which condition refused it.
 */
export async function insertConnectionWithinCap(env: Env, row: ConnectionRow, cap: number): Promise<"inserted" | "duplicate" | "cap"> {
  const columns = Object.entries(getTableColumns(appConnections));
  const names = columns.map(([, column]) => `"${column.name}"`).join(", ");
  const values = columns.map(([key]) => (row as Record<string, unknown>)[key] ?? null);
  const placeholders = values.map((_, i) => `?${i + 1}`).join(", ");
  const appIdParam = values.length + 1;
  const capParam = values.length + 2;
  const result = await env.DB.prepare(
    `INSERT INTO app_connections (${names}) SELECT ${placeholders} `
    + `WHERE (SELECT count(*) FROM app_connections WHERE app_id = ?${appIdParam}) < ?${capParam} ON CONFLICT DO NOTHING`,
  ).bind(...values, row.appId, cap).run();
  if (result.meta.changes > 0) return "inserted";
  return (await getConnection(env, row.appId, row.name)) ? "duplicate" : "cap";
}

/**
 * Replaces everything about the app's connection `row.name` but its id and creation
 * time (a page's `connections.set` on an existing name); pending consents for the old
 * settings are dropped. Undefined when there is no such connection.
 */
export async function replaceConnection(env: Env, row: ConnectionRow): Promise<ConnectionRow | undefined> {
  const { id: _id, appId: _appId, name: _name, createdAt: _createdAt, tokenGeneration: _generation, ...fields } = row;
  const [replaced] = await db(env).update(appConnections)
    .set({ ...fields, tokenGeneration: sql`${appConnections.tokenGeneration} + 1` })
    .where(and(eq(appConnections.appId, row.appId), eq(appConnections.name, row.name)))
    .returning();
  if (replaced) await db(env).delete(connectionAuthorizations).where(eq(connectionAuthorizations.connectionId, replaced.id));
  return replaced;
}

/** The app's connections, oldest first. */
export async function listConnections(env: Env, appId: string): Promise<ConnectionRow[]> {
  return db(env).select().from(appConnections).where(eq(appConnections.appId, appId)).orderBy(asc(appConnections.createdAt), asc(appConnections.id));
}

export async function getConnection(env: Env, appId: string, name: string): Promise<ConnectionRow | undefined> {
  return (await db(env).select().from(appConnections)
    .where(and(eq(appConnections.appId, appId), eq(appConnections.name, name))).limit(1))[0];
}

export async function getConnectionById(env: Env, id: string): Promise<ConnectionRow | undefined> {
  return (await db(env).select().from(appConnections).where(eq(appConnections.id, id)).limit(1))[0];
}

/** Deletes the app's connection `name` and its pending consents; nothing to delete is fine. */
export async function deleteConnection(env: Env, appId: string, name: string): Promise<void> {
  const [deleted] = await db(env).delete(appConnections)
    .where(and(eq(appConnections.appId, appId), eq(appConnections.name, name))).returning({ id: appConnections.id });
  if (deleted) await db(env).delete(connectionAuthorizations).where(eq(connectionAuthorizations.connectionId, deleted.id));
}

/** Every connection of the app and its pending consents, when the app is purged. */
export async function deleteAppConnections(env: Env, appId: string): Promise<void> {
  await env.DB.batch([
    env.DB.prepare("DELETE FROM connection_authorizations WHERE app_id = ?1").bind(appId),
    env.DB.prepare("DELETE FROM app_connections WHERE app_id = ?1").bind(appId),
  ]);
}

export type TokenFields = Pick<ConnectionRow, "status" | "accessTokenSealed" | "refreshTokenSealed" | "expiresAt" | "instanceBaseUrl">;

/**
 * Writes new token state over generation `generation` only, moving to the next one.
 * Undefined when someone else changed the tokens first (or the connection is gone).
 */
export async function storeTokens(env: Env, id: string, generation: number, fields: Partial<TokenFields>): Promise<ConnectionRow | undefined> {
  const [stored] = await db(env).update(appConnections)
    .set({ ...fields, tokenGeneration: generation + 1, updatedAt: nowIso() })
    .where(and(eq(appConnections.id, id), eq(appConnections.tokenGeneration, generation)))
    .returning();
  return stored;
}

export async function insertAuthorization(env: Env, row: AuthorizationRow): Promise<void> {
  await db(env).insert(connectionAuthorizations).values(row);
}

export async function findAuthorization(env: Env, stateHash: string): Promise<AuthorizationRow | undefined> {
  return (await db(env).select().from(connectionAuthorizations).where(eq(connectionAuthorizations.stateHash, stateHash)).limit(1))[0];
}

/** Spends the consent with this state hash: deleted and returned, or undefined when unknown or already spent. */
export async function takeAuthorization(env: Env, stateHash: string): Promise<AuthorizationRow | undefined> {
  const [taken] = await db(env).delete(connectionAuthorizations).where(eq(connectionAuthorizations.stateHash, stateHash)).returning();
  return taken;
}

/** Forgets consents that ran out before anyone came back with them. */
export async function clearExpiredAuthorizations(env: Env, now = nowIso()): Promise<void> {
  await db(env).delete(connectionAuthorizations).where(lt(connectionAuthorizations.expiresAt, now));
}
