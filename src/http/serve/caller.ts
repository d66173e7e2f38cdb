/**
 * Reading a page data path's credentials on an app origin (`/_svc/c/...`, `/_svc/count/...`,
 * `/_svc/members` and the `/_svc/ws` socket): from headers for HTTP, from subprotocol
 * tokens for the socket (a browser cannot put headers on a WebSocket). Who those
 * credentials make the caller is decided once, in src/auth/page-caller.ts (the table of
 * credentials and where each rides is there); `resolveCaller` adds only the app origin's
 * 503 when the relay has no APP_SESSION_SECRET to check an app session with. The origin
 * check for the data paths is here too.
 */
import type { Context } from "hono";
import { RelayError } from "../../errors";
import { bearerOf } from "../../auth/bearer";
import { isGrantHolderToken } from "../../auth/grant-holder";
import { resolvePageCaller, type PageCaller, type PageCredentials } from "../../auth/page-caller";
import type { ServedApp, ServedPolicy } from "./context";
import { SHARE_HEADER, requireKeys } from "./viewer";

export const VISITOR_HEADER = "x-service-visitor";

/** The credentials of an HTTP request to an app origin. */
export function credentialsFromHeaders(c: Context): PageCredentials {
  const creds: PageCredentials = {};
  const bearer = bearerOf(c.req.header("authorization"));
  if (bearer !== undefined) {
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

/** The caller of a page data path, or the refusal (401 unauthorized / invalid_api_key, 404 app_not_found, 503 without a signing secret). */
export function resolveCaller(env: Env, served: ServedApp, policy: ServedPolicy, creds: PageCredentials, ip: string): Promise<PageCaller> {
  return resolvePageCaller(env, served, policy.visitorIdentity, creds, ip, () => requireKeys(env));
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
