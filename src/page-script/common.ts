/**
 * Browser helpers shared by the gate shell and the SDK bundle: where the app-session
 * token, the remembered share pass and the visitor token live (localStorage of this
 * app's own origin; app origins never use cookies, WIRE §4.4), reading and stripping the
 * `#k=` / `#svc_grant=` / `#g=` fragment, exchanging a one-time grant for an app session
 * and a grant link for a holder credential (WIRE §4.4), and the credentials for
 * same-origin `/_svc/*` endpoints and the gated document (headers) and for the feed
 * socket (subprotocol tokens, since a WebSocket cannot carry headers).
 *
 * Only one bearer rides on a request: the owner's or member's app session when the
 * browser has one, otherwise the grant holder credential.
 */

export const SESSION_KEY = "service.session";
export const SHARE_KEY = "service.share";
export const VISITOR_KEY = "service.visitor";
/** The grant-link holder credential (`grh_…`) this browser got from `POST /_svc/grant`. */
export const GRANT_KEY = "service.grant";
export const SHARE_HEADER = "x-service-share";
export const VISITOR_HEADER = "x-service-visitor";
/** A bot-challenge token on an anonymous create or upsert (challenge.ts). */
export const CHALLENGE_HEADER = "x-service-challenge";

function store(): Storage | null {
  try {
    return window.localStorage;
  } catch {
    return null;
  }
}

export function readStored(key: string): string | null {
  try {
    return store()?.getItem(key) ?? null;
  } catch {
    return null;
  }
}

export function writeStored(key: string, value: string | null): void {
  try {
    const s = store();
    if (!s) return;
    if (value === null) s.removeItem(key);
    else s.setItem(key, value);
  } catch {
    // Storage full or blocked: the page still works for this visit.
  }
}

/**
 * Takes the named parameters out of the URL fragment (`#k=…&svc_grant=…`) and rewrites
 * the address with history.replaceState so the secret leaves the address bar, the
 * history entry and anything the page copies from location. Other fragments are kept.
 */
export function takeFragment(names: string[]): Record<string, string> {
  const hash = window.location.hash.slice(1);
  if (!hash.includes("=")) return {};
  const params = new URLSearchParams(hash);
  const found: Record<string, string> = {};
  for (const name of names) {
    const value = params.get(name);
    if (value !== null) {
      found[name] = value;
      params.delete(name);
    }
  }
  if (Object.keys(found).length === 0) return {};
  const rest = params.toString();
  const url = window.location.pathname + window.location.search + (rest ? `#${rest}` : "");
  try {
    window.history.replaceState(window.history.state, "", url);
  } catch {
    // Sandboxed documents may refuse; the secret is still consumed below.
  }
  return found;
}

/** Headers carrying whatever credential this browser holds for the app. */
export function credentialHeaders(): Record<string, string> {
  const headers: Record<string, string> = {};
  const token = readStored(SESSION_KEY) ?? readStored(GRANT_KEY);
  if (token) headers.authorization = `Bearer ${token}`;
  const share = readStored(SHARE_KEY);
  if (share) headers[SHARE_HEADER] = share;
  const visitor = readStored(VISITOR_KEY);
  if (visitor) headers[VISITOR_HEADER] = visitor;
  return headers;
}

/** The same credentials as feed socket subprotocol tokens, after `service.v1` (a token that is not a valid subprotocol is left out). */
export function socketProtocols(): string[] {
  const protocols = ["service.v1"];
  const bearer: [string, string] = readStored(SESSION_KEY) ? [SESSION_KEY, "session"] : [GRANT_KEY, "grant"];
  for (const [key, prefix] of [bearer, [SHARE_KEY, "share"], [VISITOR_KEY, "visitor"]]) {
    const value = readStored(key);
    if (value && /^[\w.~-]+$/.test(value)) protocols.push(`service.${prefix}.${value}`);
  }
  return protocols;
}

export interface SessionInfo {
  kind: "owner" | "member" | "anonymous";
  humanId: string | null;
  visitorId: string | null;
  displayName: string | null;
  /** Present when the browser holds a grant link: the link's role and this browser's holder id. */
  grant?: { role: string; holderId: string };
  app: {
    slug: string;
    name: string;
    description: string | null;
    icon: string | null;
    visibility: "private" | "link" | "public";
    collections?: { name: string; appendOnly: boolean; mirror: "auto" | "eager" | "server" }[];
  };
  /** This app gives anonymous browsers a visitor identity (mint one at POST /_svc/visitor). */
  visitorIdentity?: boolean;
  auth: { authorize_url: string };
}

/** Trades a one-time grant from /authorize for an app-session token and stores it. */
export async function exchangeGrant(grant: string): Promise<SessionInfo> {
  const res = await fetch("/_svc/session", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ grant }),
    credentials: "omit",
    cache: "no-store",
  });
  if (!res.ok) throw new Error(`grant exchange failed (${res.status})`);
  const body = (await res.json()) as { token: string; session: SessionInfo };
  writeStored(SESSION_KEY, body.token);
  return body.session;
}

/**
 * Trades a grant link's `#g=` token for a holder credential and remembers it (WIRE §4.4).
 * A remembered credential rides along, so a browser that already claimed this link gets
 * the same one back without spending a use. A link that does not hold (`grant_invalid`)
 * makes the browser forget its remembered credential.
 */
export async function exchangeGrantLink(grant: string): Promise<void> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  const remembered = readStored(GRANT_KEY);
  if (remembered) headers.authorization = `Bearer ${remembered}`;
  const res = await fetch("/_svc/grant", { method: "POST", headers, body: JSON.stringify({ grant }), credentials: "omit", cache: "no-store" });
  if (res.ok) {
    const body = (await res.json()) as { token: string };
    writeStored(GRANT_KEY, body.token);
    return;
  }
  const code = res.status === 401 ? ((await res.json().catch(() => null)) as { error?: { code?: string } } | null)?.error?.code : undefined;
  if (code === "grant_invalid") writeStored(GRANT_KEY, null);
  throw new Error(`grant link exchange failed (${res.status}${code ? ` ${code}` : ""})`);
}

/** The address to come back to after /authorize: this page, without secrets in the fragment. */
export function returnUrl(): string {
  return window.location.href.split("#")[0];
}

export function authorizeUrl(base: string, slug: string): string {
  return `${base}?app=${encodeURIComponent(slug)}&return=${encodeURIComponent(returnUrl())}`;
}
