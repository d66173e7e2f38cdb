/**
 * Who is calling. `requireAgent` resolves `Authorization: Bearer svc_…` into an
 * AgentPrincipal (401 `unauthorized` with no credential or a header that carries no
 * agent key, `invalid_api_key` for an unknown, revoked or paused key — a paused key
 * stops on the very next request).
 * `requireHuman` resolves the session cookie and applies the CSRF origin check to every
 * mutating request that rides on it.
 * Each records when its D1 read began (`authCheckedAt`), so the collection endpoints can
 * tell the app's store how old the check is (CallContext.checkedAt); there, and only
 * there, an agent key's lookup may be reused for a few seconds (agent-key-cache.ts).
 */
import type { MiddlewareHandler } from "hono";
import { getCookie } from "hono/cookie";
import { RelayError } from "../../errors";
import { findAgentByKey, touchKey, type KeyLookup } from "../../db/agents";
import { forgetAgentLookup, reusableAgentLookup } from "./agent-key-cache";
import { findSession } from "../../db/humans";
import { findCredentialByToken, touchCredential } from "../../db/credentials";
import { SECRET_KINDS } from "../../auth/tokens";
import type { CredentialGrant } from "../../permissions";
import type { AppRow } from "../../db/apps";
import type { AppContext, AppEnv, HumanPrincipal } from "../types";
import { assertSameOrigin } from "./csrf";

export const SESSION_COOKIE = "relay_session";
const TOUCH_AFTER_MS = 60_000;

/**
 * The app a `/v1/apps/:id/…` request names, so the auth lookup can find it in the same
 * D1 read as the caller (DESIGN §7: one D1 read on the hot path). `ownedApp` uses the
 * result when it is asked for the same reference.
 */
function appRefOf(c: AppContext): string | undefined {
  if (!c.req.path.startsWith("/v1/apps/")) return undefined;
  const ref = c.req.param("id");
  return ref ? ref : undefined;
}

function rememberApp(c: AppContext, ref: string | undefined, app: AppRow | null | undefined): void {
  if (ref !== undefined && app !== undefined) c.set("appLookup", { ref, app });
}

export function bearerToken(c: AppContext): string | null {
  const header = c.req.header("authorization");
  if (!header) return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1] : "";
}

export const requireAgent: MiddlewareHandler<AppEnv> = async (c, next) => {
  const token = bearerToken(c);
  if (token === null) throw new RelayError("unauthorized", "This route needs `Authorization: Bearer <api-key>`.");
  // A malformed header, another scheme or a bearer that is not an agent key is a missing
  // credential for this route (spec B: "missing or invalid bearer token" → unauthorized).
  if (!token.startsWith("svc_")) throw new RelayError("unauthorized", "The Authorization header does not carry an agent key (`Bearer svc_…`).");
  const ref = appRefOf(c);
  const checkedAt = Date.now();
  const lookup = c.get("reuseAgentLookup") && ref !== undefined
    ? await reusableAgentLookup(c.env, token, ref)
    : { found: await findAgentByKey(c.env, token, ref), checkedAt };
  c.set("authCheckedAt", lookup.checkedAt);
  await actAsAgent(c, lookup.found, ref, next);
};

async function actAsAgent(c: AppContext, found: KeyLookup, ref: string | undefined, next: () => Promise<void>): Promise<void> {
  if (!found.ok) {
    const message = {
      unknown: "This API key is not known to the relay.",
      revoked: "This API key was revoked.",
      paused: "This agent's key is paused by its owner.",
    }[found.reason];
    throw new RelayError("invalid_api_key", message, { reason: found.reason });
  }
  const { agent, key } = found;
  rememberApp(c, ref, agent.ownerHumanId === null ? null : found.app);
  c.set("agent", { kind: "agent", agentId: agent.id, keyId: key.id, keyPrefix: key.keyPrefix, name: agent.name, ownerHumanId: agent.ownerHumanId });
  if (!key.lastUsedAt || Date.now() - Date.parse(key.lastUsedAt) > TOUCH_AFTER_MS) {
    c.executionCtx.waitUntil(touchKey(c.env, key.id));
    // A reused lookup shares this row: it must not touch the key on every request.
    key.lastUsedAt = new Date().toISOString();
  }
  await next();
}

/** Collection endpoints: the store re-judges their calls (CallContext.checkedAt), so an agent key's lookup may be reused. */
export const allowAgentLookupReuse: MiddlewareHandler<AppEnv> = async (c, next) => {
  c.set("reuseAgentLookup", true);
  await next();
};

/**
 * The store turned a collection call away (access changed since it was checked): check
 * the caller again from D1, reusing nothing. Throws the caller's refusal if they no longer
 * may; otherwise the request's variables describe them as they are now.
 */
export async function recheckRowActor(c: AppContext): Promise<void> {
  const token = bearerToken(c);
  const ref = appRefOf(c);
  if (token && ref !== undefined) forgetAgentLookup(token, ref);
  c.set("reuseAgentLookup", false);
  c.set("appLookup", null);
  await requireRowActor(c, async () => {});
}

export async function resolveHuman(c: AppContext): Promise<HumanPrincipal | null> {
  const token = getCookie(c, SESSION_COOKIE);
  if (!token) return null;
  const ref = appRefOf(c);
  const found = await findSession(c.env, token, ref);
  if (found) rememberApp(c, ref, found.app);
  return found ? { kind: "human", humanId: found.human.id, sessionId: found.sessionId, email: found.human.email } : null;
}

export const requireHuman: MiddlewareHandler<AppEnv> = async (c, next) => {
  c.set("authCheckedAt", Date.now());
  const human = await resolveHuman(c);
  if (!human) throw new RelayError("unauthorized", "This route needs a signed-in session; sign in through the console first.");
  assertSameOrigin(c);
  c.set("human", human);
  await next();
};

/**
 * Agent key or owner session (spec A's AKO): a request carrying an Authorization header
 * is judged as an agent; otherwise the session cookie is required. Either way the
 * resolved `actor` names the human whose apps are in reach.
 */
export const requireOwnerActor: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (c.req.header("authorization") !== undefined) {
    await requireAgent(c, async () => {
      const agent = c.get("agent");
      c.set("actor", { kind: "agent", ownerHumanId: agent.ownerHumanId, agentId: agent.agentId });
      await next();
    });
    return;
  }
  await requireHuman(c, async () => {
    c.set("actor", { kind: "human", ownerHumanId: c.get("human").humanId, agentId: null });
    await next();
  });
};

const CREDENTIAL_REFUSALS = {
  unknown: "This service credential is not known to the relay.",
  revoked: "This service credential was revoked.",
  expired: "This service credential has expired (or it is a rotated-out token past its overlap window).",
  paused: "This service credential is paused by the app's owner.",
} as const;

/**
 * The collection endpoints (auth kind "rows"): an agent key, the owner's session, or a
 * service credential (`Bearer svcs_…`). A credential acts for its app's owner, narrowed
 * by its allowlist; `ownedApp` keeps it to its own app and `principalOf` turns it into
 * the `credential` principal. The member directory reads the same way when the
 * credential's `members` flag is on (member-directory.ts); every other route keeps
 * `requireOwnerActor`, whose agent check refuses a credential with 401 `unauthorized`. A credential that does not hold
 * (unknown, revoked, expired, paused) is refused with 401 `unauthorized` and its reason.
 */
export const requireRowActor: MiddlewareHandler<AppEnv> = async (c, next) => {
  const token = bearerToken(c);
  if (token === null || !token.startsWith(SECRET_KINDS.serviceCredential)) {
    await requireOwnerActor(c, next);
    return;
  }
  c.set("authCheckedAt", Date.now());
  const found = await findCredentialByToken(c.env, token);
  if (!found.ok) throw new RelayError("unauthorized", CREDENTIAL_REFUSALS[found.reason], { reason: found.reason, credential: "service" });
  const { credential } = found;
  const ref = appRefOf(c);
  // A credential reaches its own app only: any other reference is no app at all.
  rememberApp(c, ref, ref === found.app.id || ref === found.app.slug ? found.app : null);
  c.set("credential", {
    credentialId: credential.id,
    appId: credential.appId,
    mode: credential.mode,
    grants: JSON.parse(credential.grantsJson) as CredentialGrant[],
    members: credential.members,
  });
  c.set("actor", { kind: "credential", ownerHumanId: found.ownerHumanId, agentId: null });
  if (!credential.lastUsedAt || Date.now() - Date.parse(credential.lastUsedAt) > TOUCH_AFTER_MS) {
    c.executionCtx.waitUntil(touchCredential(c.env, credential.id));
  }
  await next();
};
