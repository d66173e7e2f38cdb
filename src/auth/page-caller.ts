/**
 * Who is calling the page's data paths on an app origin (`/_svc/c/...`, `/_svc/count/...`,
 * `/_svc/members` and the `/_svc/ws` socket), as a permission Principal. ONE function
 * decides it for every one of those paths; only where the credentials are read from
 * differs (headers for HTTP, subprotocol tokens for the socket, because a browser cannot
 * put headers on a WebSocket; src/http/serve/caller.ts reads both):
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
import { RelayError } from "../errors";
import { config } from "../config";
import type { AppRow } from "../db/apps";
import { shareTokenMatches } from "../apps/share";
import { grantInvalid } from "../apps/grant-links";
import { authorizeUrl } from "../apps/urls";
import type { Principal } from "../permissions";
import { agentOnApp } from "./agent-key";
import { appSessionAccess } from "./app-session";
import { grantHoldingFor } from "./grant-holder";
import { livePreview, type LivePreview } from "./preview-token";
import type { SigningKeys } from "./signing-keys";
import { presentedVisitorId } from "./visitor-token";

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

/** The app being served, as far as resolving its callers goes (the serve context's ServedApp fits). */
export interface PageApp {
  slug: string;
  app: AppRow;
}

/**
 * The caller of a page data path, or the refusal (401 unauthorized / invalid_api_key /
 * grant_invalid, 404 app_not_found). `visitorIdentity`: the app mints visitor ids, so a
 * visitor token is recognised. `sessionKeys`: the keys an app session is checked with, or
 * the app origin's refusal when the relay has none (asked only when a session is presented).
 */
export async function resolvePageCaller(
  env: Env, served: PageApp, visitorIdentity: boolean, creds: PageCredentials, ip: string, sessionKeys: () => Promise<SigningKeys>,
): Promise<PageCaller> {
  const app = served.app;

  if (creds.agentKey !== undefined) {
    const agentId = await agentOnApp(env, creds.agentKey, app, served.slug);
    return { principal: { kind: "agent", agentId }, session: { kind: "owner", humanId: app.ownerHumanId, visitorId: null } };
  }

  if (creds.session !== undefined) {
    const held = creds.session === null ? null : await appSessionAccess(env, await sessionKeys(), app, creds.session);
    if (!held) {
      throw new RelayError("unauthorized", "The app session is expired, revoked or for another app; sign in again.", { authorize_url: authorizeUrl(config(env), served.slug) });
    }
    const { claims, access } = held;
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

  // A live preview token (src/auth/preview-token.ts, sent like a share pass) admits an anonymous viewer to a private app.
  let preview: LivePreview | null = null;
  if (app.visibility === "private") {
    preview = creds.share !== undefined ? await livePreview(env, app.id, creds.share) : null;
    if (!preview) throw new RelayError("unauthorized", "This app is private: sign in through /authorize to get an app session.", { authorize_url: authorizeUrl(config(env), served.slug) });
  }
  const admitted = preview ? { expiresAt: preview.expiresAt, previewTokenId: preview.id } : {};
  if (app.visibility === "link" && !(creds.share !== undefined && await shareTokenMatches(creds.share, app.shareTokenHash))) {
    throw new RelayError("unauthorized", "This share link is not valid (it may have been rotated), and no app session with access was presented.");
  }

  if (visitorIdentity && creds.visitor) {
    const visitorId = await presentedVisitorId(env, creds.visitor, app.id);
    if (visitorId) return { principal: { kind: "visitor", visitorId, ip }, session: { kind: "anonymous", humanId: null, visitorId }, ...admitted };
  }
  return { principal: { kind: "anonymous", ip }, session: { kind: "anonymous", humanId: null, visitorId: null }, ...admitted };
}
