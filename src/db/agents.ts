/**
 * Agents and their keys. A key is stored as sha256 only; the raw value exists once, in
 * the response that minted it. Pausing is a property of the agent (all its keys stop at
 * once); revoking is per key and permanent.
 */
import { and, eq, isNull, desc, sql } from "drizzle-orm";
import { db, preparedPerBinding } from "./client";
import { agents, agentKeys } from "./schema";
import { apps } from "./apps-schema";
import { ownedAppCondition, type AppRow } from "./apps";
import { keyPrefix, mintSecret, newId, nowIso, sha256Hex, constantTimeEqual } from "../auth/tokens";

export type AgentRow = typeof agents.$inferSelect;
export type AgentKeyRow = typeof agentKeys.$inferSelect;

export interface MintedKey {
  apiKey: string;
  keyId: string;
  keyPrefix: string;
  createdAt: string;
}

export async function mintKey(env: { DB: D1Database }, agentId: string): Promise<MintedKey> {
  const apiKey = mintSecret("agentKey");
  const row = { id: newId("key_"), agentId, keyHash: await sha256Hex(apiKey), keyPrefix: keyPrefix(apiKey), createdAt: nowIso() };
  await db(env).insert(agentKeys).values(row);
  return { apiKey, keyId: row.id, keyPrefix: row.keyPrefix, createdAt: row.createdAt };
}

export async function createAgent(
  env: { DB: D1Database },
  input: { id?: string; name: string | null; ownerHumanId: string | null; via: "direct" | "device" },
): Promise<{ agent: AgentRow; key: MintedKey }> {
  const d = db(env);
  const now = nowIso();
  const agent: AgentRow = {
    id: input.id ?? newId(), name: input.name, ownerHumanId: input.ownerHumanId, claimedAt: input.ownerHumanId ? now : null,
    pausedAt: null, registeredVia: input.via, createdAt: now,
  };
  await d.insert(agents).values(agent);
  return { agent, key: await mintKey(env, agent.id) };
}

/** The key lookup's two queries (it runs on nearly every agent request), prepared once. */
const keyLookupsOf = preparedPerBinding((d) => {
  const keyed = () => d.select().from(agentKeys).innerJoin(agents, eq(agents.id, agentKeys.agentId));
  const byHash = eq(agentKeys.keyHash, sql.placeholder("hash"));
  return {
    alone: keyed().where(byHash).limit(1).prepare(),
    withApp: keyed().leftJoin(apps, ownedAppCondition(agents.ownerHumanId, sql.placeholder("ref"))).where(byHash).limit(1).prepare(),
  };
});

export type KeyLookup =
  | { ok: true; agent: AgentRow; key: AgentKeyRow; app?: AppRow | null }
  | { ok: false; reason: "unknown" | "revoked" | "paused" };

/**
 * The agent an API key belongs to. With `appRef`, the same query also finds that app
 * among the apps of the agent's owner (`app`: null when there is none), so a request to
 * `/v1/apps/:id/…` costs one D1 read for both.
 */
export async function findAgentByKey(env: { DB: D1Database }, apiKey: string, appRef?: string): Promise<KeyLookup> {
  const hash = await sha256Hex(apiKey);
  const lookups = keyLookupsOf(env);
  const rows = appRef === undefined
    ? (await lookups.alone.all({ hash })).map((r) => ({ ...r, apps: undefined }))
    : await lookups.withApp.all({ hash, ref: appRef });
  const hit = rows[0];
  if (!hit || !constantTimeEqual(hit.agent_keys.keyHash, hash)) return { ok: false, reason: "unknown" };
  if (hit.agent_keys.revokedAt) return { ok: false, reason: "revoked" };
  if (hit.agents.pausedAt) return { ok: false, reason: "paused" };
  return { ok: true, agent: hit.agents, key: hit.agent_keys, app: hit.apps };
}

export async function touchKey(env: { DB: D1Database }, keyId: string): Promise<void> {
  await db(env).update(agentKeys).set({ lastUsedAt: nowIso() }).where(eq(agentKeys.id, keyId));
}

export async function getKey(env: { DB: D1Database }, keyId: string): Promise<AgentKeyRow | undefined> {
  return (await db(env).select().from(agentKeys).where(eq(agentKeys.id, keyId)).limit(1))[0];
}

export async function revokeKey(env: { DB: D1Database }, keyId: string): Promise<void> {
  await db(env).update(agentKeys).set({ revokedAt: nowIso() }).where(and(eq(agentKeys.id, keyId), isNull(agentKeys.revokedAt)));
}

export async function revokeAllKeys(env: { DB: D1Database }, agentId: string): Promise<void> {
  await db(env).update(agentKeys).set({ revokedAt: nowIso() }).where(and(eq(agentKeys.agentId, agentId), isNull(agentKeys.revokedAt)));
}

export async function getAgent(env: { DB: D1Database }, agentId: string): Promise<AgentRow | undefined> {
  return (await db(env).select().from(agents).where(eq(agents.id, agentId)).limit(1))[0];
}

/** Binds an unclaimed agent to a human; false when it was already claimed (one-way). */
export async function claimAgent(env: { DB: D1Database }, agentId: string, humanId: string): Promise<string | null> {
  const claimedAt = nowIso();
  const updated = await db(env).update(agents).set({ ownerHumanId: humanId, claimedAt })
    .where(and(eq(agents.id, agentId), isNull(agents.ownerHumanId))).returning({ id: agents.id });
  return updated.length === 1 ? claimedAt : null;
}

export async function agentsOfHuman(env: { DB: D1Database }, humanId: string): Promise<Array<AgentRow & { keys: AgentKeyRow[] }>> {
  const d = db(env);
  const owned = await d.select().from(agents).where(eq(agents.ownerHumanId, humanId)).orderBy(desc(agents.createdAt));
  if (owned.length === 0) return [];
  const keys = await d.select().from(agentKeys).innerJoin(agents, eq(agents.id, agentKeys.agentId))
    .where(eq(agents.ownerHumanId, humanId)).orderBy(desc(agentKeys.createdAt));
  return owned.map((agent) => ({ ...agent, keys: keys.filter((k) => k.agent_keys.agentId === agent.id).map((k) => k.agent_keys) }));
}

export async function setAgentPaused(env: { DB: D1Database }, agentId: string, paused: boolean): Promise<void> {
  await db(env).update(agents).set({ pausedAt: paused ? nowIso() : null }).where(eq(agents.id, agentId));
}

export async function renameAgent(env: { DB: D1Database }, agentId: string, name: string | null): Promise<void> {
  await db(env).update(agents).set({ name }).where(eq(agents.id, agentId));
}
