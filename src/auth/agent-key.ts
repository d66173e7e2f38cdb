/**
 * Agent keys (`Bearer svc_…`) resolved to the agent behind them. The relay API and the
 * app origins take the same key and refuse it the same way: an unknown, revoked or paused
 * key is 401 `invalid_api_key` with its reason, and a paused key stops on the very next
 * request. On the relay API the lookup also finds the app a `/v1/apps/:id/…` path names
 * (one D1 read on the hot path, DESIGN §7) and may be reused for a few seconds on the
 * collection endpoints (agent-key-cache.ts); on an app origin the key reaches the app only
 * when the human who claimed the agent owns it. The middleware (src/http/middleware/auth.ts)
 * and the page caller (src/http/serve/caller.ts) only read the header and call these.
 */
import { RelayError } from "../errors";
import { findAgentByKey, touchKey, type AgentKeyRow, type KeyLookup } from "../db/agents";
import type { AppRow } from "../db/apps";
import { reusableAgentLookup } from "./agent-key-cache";
import type { AgentCaller } from "./callers";
import { SECRET_KINDS, lastUseDue } from "./tokens";

/** A lookup whose key holds. */
export type HeldAgentKey = Extract<KeyLookup, { ok: true }>;

const REFUSALS = {
  unknown: "This API key is not known to the relay.",
  revoked: "This API key was revoked.",
  paused: "This agent's key is paused by its owner.",
} as const;

/**
 * The agent key a relay-API bearer carries. No credential, a malformed header, another
 * scheme or a bearer that is not an agent key is a missing credential for the route
 * (spec B: "missing or invalid bearer token" → 401 `unauthorized`).
 */
export function agentKeyOf(bearer: string | null): string {
  if (bearer === null) throw new RelayError("unauthorized", "This route needs `Authorization: Bearer <api-key>`.");
  if (!bearer.startsWith(SECRET_KINDS.agentKey)) throw new RelayError("unauthorized", "The Authorization header does not carry an agent key (`Bearer svc_…`).");
  return bearer;
}

/**
 * The key's lookup, with the app `appRef` names among its owner's apps. `reuseUntil`: a
 * lookup read in the last few seconds may serve, and is read again after the request near
 * its end (collection endpoints only, whose store calls are re-judged; null elsewhere).
 * `checkedAt` is when the lookup was read from D1.
 */
export async function lookupAgentKey(
  env: { DB: D1Database }, apiKey: string, appRef: string | undefined, reuseUntil: ((work: Promise<unknown>) => void) | null,
): Promise<{ found: KeyLookup; checkedAt: number }> {
  const checkedAt = Date.now();
  return reuseUntil && appRef !== undefined
    ? reusableAgentLookup(env, apiKey, appRef, reuseUntil)
    : { found: await findAgentByKey(env, apiKey, appRef), checkedAt };
}

/** The lookup if its key holds; otherwise 401 `invalid_api_key` with the reason. */
export function heldAgentKey(found: KeyLookup): HeldAgentKey {
  if (!found.ok) throw new RelayError("invalid_api_key", REFUSALS[found.reason], { reason: found.reason });
  return found;
}

export function agentPrincipal({ agent, key }: HeldAgentKey): AgentCaller {
  return { kind: "agent", agentId: agent.id, keyId: key.id, keyPrefix: key.keyPrefix, name: agent.name, ownerHumanId: agent.ownerHumanId };
}

/** Records the key's use (at most once a minute, after the response). */
export function touchAgentKey(env: { DB: D1Database }, key: AgentKeyRow, waitUntil: (work: Promise<unknown>) => void): void {
  if (!lastUseDue(key.lastUsedAt)) return;
  waitUntil(touchKey(env, key.id));
  // A reused lookup shares this row: it must not touch the key on every request.
  key.lastUsedAt = new Date().toISOString();
}

/**
 * An agent key presented on an app origin: the agent's id. Same rule as the agent API: an
 * agent reaches the apps of the human who claimed it, and nothing else exists for it
 * (404 `app_not_found`).
 */
export async function agentOnApp(env: { DB: D1Database }, apiKey: string, app: AppRow, slug: string): Promise<string> {
  const { agent } = heldAgentKey(await findAgentByKey(env, apiKey));
  if (!agent.ownerHumanId || agent.ownerHumanId !== app.ownerHumanId) {
    throw new RelayError("app_not_found", `No app "${slug}" is visible to you.`, { app: slug });
  }
  return agent.id;
}
