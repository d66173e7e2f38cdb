/**
 * Who is calling the page's data paths on an app origin (`/_svc/c/...`, `/_svc/count/...`,
 * `/_svc/members` and the `/_svc/ws` socket), as a permission Principal. ONE function
 * decides it for every one of those paths; only where the credentials are read from
 * differs (headers for HTTP, subprotocol tokens for the socket, because a browser cannot
 * put headers on a WebSocket):
 *
 * | credential | HTTP | socket subprotocol |
 * |---|---|---|
 * | agent key (the key's human owns the app) | `Authorization: Bearer svc_…` | `service.agentkey.<key>` |
 * | app-session token (owner or member) | `Authorization: Bearer <token>` | `service.session.<token>` |
 * | grant-link holder credential | `Authorization: Bearer grh_…` | `service.grant.<grh_…>` |
 * | a link app's share pass | `x-service-share: <token>` | `service.share.<token>` |
 * | visitor token (apps that mint visitor ids) | `x-service-visitor: <token>` | `service.visitor.<token>` |
 *
 * With no identity the caller is `anonymous` (its address from CF-Connecting-IP) — on a
 * public app, or on a link app with its current share pass. A private app refuses
 * anonymous callers; a presented credential that does not hold is refused, never
 * quietly downgraded (except a stale visitor token, which only means "mint a new one").
 * Permissions themselves are decided by the AppStore, as for the agent API.
 */
import type { Context } from "hono";
import { RelayError } from "../../errors";
import { config } from "../../config";
import { findAgentByKey } from "../../db/agents";
import { shareTokenMatches } from "../../apps/share";
import { livePreview, type LivePreview } from "../../apps/preview";
import { grantHoldingFor, grantInvalid, isGrantHolderToken } from "../../apps/grant-links";
import type { Principal } from "../../permissions";
import { appAccessFor } from "./access";
import type { ServedApp, ServedPolicy } from "./context";
import { signingKeys, verifyAppSession, verifyVisitor } from "./tokens";
import { SHARE_HEADER, requireKeys } from "./viewer";

export const VISITOR_HEADER = "x-service-visitor";

export interface PageCredentials {
  /** An app-session token; `null`: an Authorization header that carries no usable token. */
  session?: string | null;
  /** A grant-link holder credential (`grh_…`, from `POST /_svc/grant`). */
  grant?: string;
  agentKey?: string;
  share?: string;
  visitor?: string;
}

export interface PageSession {
  kind: "owner" | "member" | "anonymous";
  humanId: string | null;
  visitorId: string | null;
}

export interface PageCaller {
  principal: Principal;
  session: PageSession;
  /**
   * When the credential the caller presented stops holding (ISO time): an app session's
   * expiry, a grant link's, a preview token's. Each request is judged again anyway; a
   * long-lived socket is closed then.
   */
  expiresAt?: string;
  /** The preview token (its id) that let this caller into a private app, if one did. */
  previewTokenId?: string;
}

function authorizeUrl(env: object, served: ServedApp): string {
  return `${config(env).apiOrigin}/authorize?app=${encodeURIComponent(served.slug)}`;
}

/** The credentials of an HTTP request to an app origin. */
export function credentialsFromHeaders(c: Context): PageCredentials {
  const creds: PageCredentials = {};
  const authorization = c.req.header("authorization");
  if (authorization !== undefined) {
    const bearer = /^Bearer\s+(\S+)\s*$/i.exec(authorization)?.[1] ?? null;
    if (bearer?.startsWith("svc_")) creds.agentKey = bearer;
    else if (bearer !== null && isGrantHolderToken(bearer)) creds.grant = bearer;
    else creds.session = bearer;
  }
  const share = c.req.header(SHARE_HEADER);
  if (share !== undefined) creds.share = share.trim();
  const visitor = c.req.header(VISITOR_HEADER);
  if (visitor !== undefined) creds.visitor = visitor.trim();
  return creds;
}

/** The tokens offered in Sec-WebSocket-Protocol, split into the protocol version and credentials. */
export function credentialsFromProtocols(header: string | undefined): { v1: boolean; creds: PageCredentials } {
  const creds: PageCredentials = {};
  let v1 = false;
  for (const token of (header ?? "").split(",").map((t) => t.trim()).filter(Boolean)) {
    if (token === "service.v1") v1 = true;
    else if (token.startsWith("service.agentkey.")) creds.agentKey = token.slice("service.agentkey.".length);
    else if (token.startsWith("service.session.")) creds.session = token.slice("service.session.".length) || null;
    else if (token.startsWith("service.share.")) creds.share = token.slice("service.share.".length);
    else if (token.startsWith("service.grant.")) creds.grant = token.slice("service.grant.".length);
    else if (token.startsWith("service.visitor.")) creds.visitor = token.slice("service.visitor.".length);
  }
  return { v1, creds };
}

export function clientIp(c: Context): string {
  return c.req.header("cf-connecting-ip")?.trim() || "unknown";
}

/** The caller of a page data path, or the refusal (401 unauthorized / invalid_api_key, 404 app_not_found). */
export async function resolveCaller(env: Env, served: ServedApp, policy: ServedPolicy, creds: PageCredentials, ip: string): Promise<PageCaller> {
  const app = served.app;

  if (creds.agentKey !== undefined) {
    const found = await findAgentByKey(env, creds.agentKey);
    if (!found.ok) {
      throw new RelayError("invalid_api_key", { unknown: "This API key is not known to the relay.", revoked: "This API key was revoked.", paused: "This agent's key is paused by its owner." }[found.reason], { reason: found.reason });
    }
    // Same rule as the agent API: an agent reaches the apps of the human who claimed it, and nothing else exists for it.
    if (!found.agent.ownerHumanId || found.agent.ownerHumanId !== app.ownerHumanId) {
      throw new RelayError("app_not_found", `No app "${served.slug}" is visible to you.`, { app: served.slug });
    }
    return { principal: { kind: "agent", agentId: found.agent.id }, session: { kind: "owner", humanId: app.ownerHumanId, visitorId: null } };
  }

  if (creds.session !== undefined) {
    const claims = creds.session === null ? null : await verifyAppSession(await requireKeys(env), creds.session, app.id);
    const access = claims ? await appAccessFor(env, app, claims.humanId, { sessionIssuedAtMs: claims.issuedAtMs }) : null;
    if (!claims || !access) {
      throw new RelayError("unauthorized", "The app session is expired, revoked or for another app; sign in again.", { authorize_url: authorizeUrl(env, served) });
    }
    const principal: Principal = access.kind === "owner"
      ? { kind: "owner", humanId: claims.humanId }
      : { kind: "member", humanId: claims.humanId, roles: access.roles };
    return { principal, session: { kind: access.kind, humanId: claims.humanId, visitorId: null }, expiresAt: claims.expiresAt };
  }

  if (creds.grant !== undefined) {
    // A grant-link holder is anonymous but carries the link's role (and pin); the link itself is its access.
    const held = await grantHoldingFor(env, app, creds.grant, { ip });
    if (!held) throw grantInvalid("unknown");
    return { principal: held.principal, session: { kind: "anonymous", humanId: null, visitorId: null }, expiresAt: held.expiresAt };
  }

  // A live preview token (src/apps/preview.ts, sent like a share pass) admits an anonymous viewer to a private app.
  let preview: LivePreview | null = null;
  if (app.visibility === "private") {
    preview = creds.share !== undefined ? await livePreview(env, app.id, creds.share) : null;
    if (!preview) throw new RelayError("unauthorized", "This app is private: sign in through /authorize to get an app session.", { authorize_url: authorizeUrl(env, served) });
  }
  const admitted = preview ? { expiresAt: preview.expiresAt, previewTokenId: preview.id } : {};
  if (app.visibility === "link" && !(creds.share !== undefined && await shareTokenMatches(creds.share, app.shareTokenHash))) {
    throw new RelayError("unauthorized", "This share link is not valid (it may have been rotated), and no app session with access was presented.");
  }

  if (policy.visitorIdentity && creds.visitor) {
    const keys = signingKeys(env);
    const visitorId = keys ? await verifyVisitor(await keys, creds.visitor, app.id) : null;
    if (visitorId) return { principal: { kind: "visitor", visitorId, ip }, session: { kind: "anonymous", humanId: null, visitorId }, ...admitted };
  }
  return { principal: { kind: "anonymous", ip }, session: { kind: "anonymous", humanId: null, visitorId: null }, ...admitted };
}

/**
 * Browsers name the page's origin on cross-origin requests and on every WebSocket
 * handshake; another site's page may not drive this app's data paths with a visitor's
 * browser. Requests without an Origin (agents, same-origin GETs) pass.
 */
export function assertSameOrigin(c: Context, served: ServedApp): void {
  const origin = c.req.header("origin");
  if (origin !== undefined && origin !== served.origin) {
    throw new RelayError("forbidden", "This app's data paths answer only pages on the app's own origin.", { origin: origin.slice(0, 200) });
  }
}
