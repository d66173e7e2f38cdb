/**
 * Who is calling. `requireAgent` resolves `Authorization: Bearer svc_…` into an
 * AgentCaller (401 `unauthorized` with no credential or a header that carries no
 * agent key, `invalid_api_key` for an unknown, revoked or paused key — a paused key
 * stops on the very next request).
 * `requireHuman` resolves the session cookie and applies the CSRF origin check to every
 * mutating request that rides on it.
 * Each records when its D1 read began (`authCheckedAt`), so the collection endpoints can
 * tell the app's store how old the check is (CallContext.checkedAt); there, and only
 * there, an agent key's lookup may be reused for a few seconds (src/auth/agent-key-cache.ts).
 * Resolving each credential is src/auth's (agent-key.ts, human-session.ts,
 * service-credential.ts); this file reads the request, keeps the results on the Hono
 * context and decides which credential a route takes.
 */
import type { MiddlewareHandler } from "hono";
import { getCookie } from "hono/cookie";
import { RelayError } from "../../errors";
import { config } from "../../config";
import { forgetAgentLookup } from "../../auth/agent-key-cache";
import { agentKeyOf, agentPrincipal, heldAgentKey, lookupAgentKey, touchAgentKey } from "../../auth/agent-key";
import { humanOfSession, sessionCookieName } from "../../auth/human-session";
import { isServiceCredential, resolveServiceCredential } from "../../auth/service-credential";
import { isLeaseCredential, resolveLeaseCredential } from "../../auth/lease-credential";
import { bearerOf } from "../../auth/bearer";
import type { AppRow } from "../../db/apps";
import type { AppContext, AppEnv, HumanCaller } from "../types";
import { assertSameOrigin } from "./csrf";

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

function waitUntilOf(c: AppContext): (work: Promise<unknown>) => void {
  return (work) => c.executionCtx.waitUntil(work);
}

/** The bearer token; null with no Authorization header, "" when the header carries no `Bearer <token>`. */
export function bearerToken(c: AppContext): string | null {
  const header = c.req.header("authorization");
  if (!header) return null;
  return bearerOf(header) ?? "";
}

export const requireAgent: MiddlewareHandler<AppEnv> = async (c, next) => {
  await admitAgentKey(c, agentKeyOf(bearerToken(c)));
  await next();
};

/**
 * Makes `apiKey`'s agent the request's caller, or refuses it (401 `invalid_api_key`). The
 * key is the header's, or (at `/mcp`) the key an OAuth access token stands for.
 */
export async function admitAgentKey(c: AppContext, apiKey: string): Promise<void> {
  const ref = appRefOf(c);
  const lookup = await lookupAgentKey(c.env, apiKey, ref, c.get("reuseAgentLookup") ? waitUntilOf(c) : null);
  c.set("authCheckedAt", lookup.checkedAt);
  const held = heldAgentKey(lookup.found);
  rememberApp(c, ref, held.agent.ownerHumanId === null ? null : held.app);
  c.set("agent", agentPrincipal(held));
  touchAgentKey(c.env, held.key, waitUntilOf(c));
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

export async function resolveHuman(c: AppContext): Promise<HumanCaller | null> {
  const ref = appRefOf(c);
  const found = await humanOfSession(c.env, getCookie(c, sessionCookieName(config(c.env).apiOrigin)), ref);
  if (!found) return null;
  rememberApp(c, ref, found.app);
  return found.human;
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
  if (isLeaseCredential(token)) {
    await requireLeaseActor(c, token, next);
    return;
  }
  if (!isServiceCredential(token)) {
    await requireOwnerActor(c, next);
    return;
  }
  c.set("authCheckedAt", Date.now());
  const found = await resolveServiceCredential(c.env, token, waitUntilOf(c));
  const ref = appRefOf(c);
  // A credential reaches its own app only: any other reference is no app at all.
  rememberApp(c, ref, ref === found.app.id || ref === found.app.slug ? found.app : null);
  c.set("credential", found.credential);
  c.set("actor", { kind: "credential", ownerHumanId: found.ownerHumanId, agentId: null });
  await next();
};

/**
 * An agent task's lease credential (`Bearer svcc_…`) on a collection endpoint: the rule's
 * reads and writes on the task's app, for as long as the lease holds. Like a service
 * credential it reaches its own app only.
 */
async function requireLeaseActor(c: AppContext, token: string, next: () => Promise<void>): Promise<void> {
  c.set("authCheckedAt", Date.now());
  const found = await resolveLeaseCredential(c.env, token);
  const ref = appRefOf(c);
  rememberApp(c, ref, ref === found.app.id || ref === found.app.slug ? found.app : null);
  c.set("lease", found.lease);
  c.set("actor", { kind: "credential", ownerHumanId: found.ownerHumanId, agentId: null });
  await next();
}
