/**
 * Managing an app's outbound connections (WIRE §2.6): create (within the app's cap, a
 * free name), set (the page script's create-or-replace), list, delete (idempotent), the
 * Connection shape the API shows (never a secret, only its fingerprint), and the owner's
 * oauth2 consent: where to send the owner, and what to do when the provider sends them
 * back to `/oauth/connections/callback`. The routes (src/http/v1/connections.ts and the
 * app origin's /_svc/connections) only resolve who may act on which app.
 */
import { RelayError } from "../errors";
import { config } from "../config";
import type { AppRow } from "../db/apps";
import {
  clearExpiredAuthorizations, deleteConnection, findAuthorization, getConnection, getConnectionById, insertAuthorization,
  insertConnectionWithinCap, listConnections, replaceConnection, storeTokens, takeAuthorization, type ConnectionRow, type TokenFields,
} from "../db/connections";
import { isoIn, newId, nowIso, sha256Hex } from "../auth/tokens";
import { connectionSettings, type ConnectionBody, type ConnectionSettings } from "./connection-body";
import { callbackUrl, consentStart, exchangeCode } from "./oauth";
import { fingerprint, seal, sealedPlace, unseal } from "./sealing";
import { issuedTokenFields, providerOf } from "./tokens";

/** How long the owner has at the provider's consent page before the `state` is forgotten. */
const CONSENT_TTL_SECONDS = 600;

export interface ConnectionView {
  id: string;
  name: string;
  kind: "static" | "oauth2";
  provider: string | null;
  label: string | null;
  allowedHost: string;
  headerName: string;
  status: "pending_auth" | "active" | "needs_reauth";
  authScheme: string | null;
  instanceBaseUrl: string | null;
  scopes: string | null;
  expiresAt: string | null;
  secretFingerprint: string;
  createdAt: string;
}

export function connectionView(row: ConnectionRow): ConnectionView {
  return {
    id: row.id, name: row.name, kind: row.kind, provider: row.provider, label: row.label, allowedHost: row.allowedHost,
    headerName: row.headerName, status: row.status, authScheme: row.authScheme, instanceBaseUrl: row.instanceBaseUrl,
    scopes: row.scopes, expiresAt: row.expiresAt, secretFingerprint: row.secretFingerprint, createdAt: row.createdAt,
  };
}

/** The stored row for `settings` under connection id `id`: its secret sealed, oauth2 waiting for consent. */
async function rowFor(env: Env, appId: string, id: string, settings: ConnectionSettings, createdAt: string): Promise<ConnectionRow> {
  const secret = settings.kind === "static" ? settings.headerValue : settings.clientSecret;
  const oauth2 = settings.kind === "oauth2" ? settings : null;
  return {
    id, appId, name: settings.name, kind: settings.kind, provider: settings.provider, label: settings.label,
    allowedHost: settings.allowedHost, headerName: settings.headerName, authScheme: oauth2?.authScheme ?? null,
    status: oauth2 ? "pending_auth" : "active",
    secretSealed: await seal(env, sealedPlace(id, "secret"), secret), secretFingerprint: await fingerprint(secret),
    authorizeUrl: oauth2?.authorizeUrl ?? null, tokenEndpoint: oauth2?.tokenEndpoint ?? null, clientId: oauth2?.clientId ?? null,
    scopes: oauth2?.scopes ?? null, instanceField: oauth2?.instanceField ?? null,
    authParamsJson: oauth2 ? JSON.stringify(oauth2.authParams) : null, tokenParamsJson: oauth2 ? JSON.stringify(oauth2.tokenParams) : null,
    accessTokenSealed: null, refreshTokenSealed: null, expiresAt: null, instanceBaseUrl: null,
    tokenGeneration: 0, createdAt, updatedAt: nowIso(),
  };
}

async function insertNew(env: Env, app: AppRow, settings: ConnectionSettings): Promise<ConnectionRow> {
  const cap = config(env).limits.MAX_CONNECTIONS_PER_APP;
  const row = await rowFor(env, app.id, newId("conn_"), settings, nowIso());
  const outcome = await insertConnectionWithinCap(env, row, cap);
  if (outcome === "duplicate") {
    throw new RelayError("conflict", `The app already has a connection named "${settings.name}"; connections have no update: delete it and create it again.`, { name: settings.name });
  }
  if (outcome === "cap") {
    throw new RelayError("connection_limit_reached", `The app already has ${cap} connections (MAX_CONNECTIONS_PER_APP).`, { limit: cap });
  }
  return row;
}

/** `POST /v1/apps/:id/connections`: a new connection (static: active at once; oauth2: pending_auth). */
export async function createConnection(env: Env, app: AppRow, body: ConnectionBody): Promise<ConnectionRow> {
  return insertNew(env, app, connectionSettings(body, config(env).development));
}

/**
 * The page script's `connections.set(name, settings)`: creates the connection, or replaces
 * every setting and secret of the one with that name (an oauth2 one then waits for
 * consent again). `created` says which.
 */
export async function setConnection(env: Env, app: AppRow, body: ConnectionBody): Promise<{ row: ConnectionRow; created: boolean }> {
  const settings = connectionSettings(body, config(env).development);
  const existing = await getConnection(env, app.id, settings.name);
  if (existing) {
    const replaced = await replaceConnection(env, await rowFor(env, app.id, existing.id, settings, existing.createdAt));
    if (replaced) return { row: replaced, created: false };
  }
  return { row: await insertNew(env, app, settings), created: true };
}

export function connectionsOf(env: Env, app: AppRow): Promise<ConnectionRow[]> {
  return listConnections(env, app.id);
}

export async function connectionOf(env: Env, app: AppRow, name: string): Promise<ConnectionRow> {
  const row = await getConnection(env, app.id, name);
  if (!row) throw new RelayError("connection_not_found", `The app has no connection named "${name.slice(0, 64)}".`, { name: name.slice(0, 64) });
  return row;
}

export function removeConnection(env: Env, app: AppRow, name: string): Promise<void> {
  return deleteConnection(env, app.id, name);
}

/** Where the owner gives an oauth2 connection consent: `GET …/connections/:name/authorize` on the API origin. */
export function consentUrl(apiOrigin: string, appId: string, name: string): string {
  return `${apiOrigin}/v1/apps/${encodeURIComponent(appId)}/connections/${encodeURIComponent(name)}/authorize`;
}

/**
 * Starts the owner's consent for the oauth2 connection `name`: remembers the `state`
 * (its hash) and the PKCE verifier (sealed) for ten minutes, and returns the provider's
 * authorization URL to redirect to.
 */
export async function startConsent(env: Env, app: AppRow, name: string, humanId: string): Promise<string> {
  const row = await connectionOf(env, app, name);
  if (row.kind !== "oauth2") throw new RelayError("connection_invalid", `Connection "${row.name}" is static: there is nothing to authorize.`, { field: "kind" });
  const start = await consentStart(await providerOf(env, row), callbackUrl(config(env).apiOrigin));
  const stateHash = await sha256Hex(start.state);
  await clearExpiredAuthorizations(env);
  await insertAuthorization(env, {
    stateHash, connectionId: row.id, appId: app.id, humanId,
    codeVerifierSealed: await seal(env, sealedPlace(stateHash, "verifier"), start.codeVerifier),
    expiresAt: isoIn(CONSENT_TTL_SECONDS), createdAt: nowIso(),
  });
  return start.url;
}

export type ConsentResult =
  | { ok: true; connection: ConnectionRow }
  | { ok: false; status: 400 | 403 | 404 | 502; reason: string; connection?: ConnectionRow };

/** Stores the issued tokens over whatever generation the connection is at now (a new consent always wins). */
async function storeConsentTokens(env: Env, row: ConnectionRow, fields: Partial<TokenFields>): Promise<ConnectionRow | undefined> {
  let current: ConnectionRow | undefined = row;
  while (current) {
    const stored = await storeTokens(env, current.id, current.tokenGeneration, fields);
    if (stored) return stored;
    current = await getConnectionById(env, row.id);
  }
  return undefined;
}

/**
 * The provider sent the owner back with `callback` (its query). The `state` must be one
 * this relay handed out, unexpired, to the person now signed in (`humanId`); it is spent
 * whatever happens next. The code is exchanged for tokens and the connection becomes
 * active; a refusal leaves it as it was and says why.
 */
export async function completeConsent(env: Env, callback: URLSearchParams, humanId: string | null): Promise<ConsentResult> {
  const state = callback.get("state");
  if (!state) return { ok: false, status: 400, reason: "The provider's answer carries no state, so it cannot be matched to a consent this relay started." };
  const stateHash = await sha256Hex(state);
  const pending = await findAuthorization(env, stateHash);
  if (!pending || Date.parse(pending.expiresAt) <= Date.now()) {
    return { ok: false, status: 400, reason: "This consent is unknown, already used or expired. Start again from the connection's authorize link." };
  }
  if (humanId !== pending.humanId) {
    return { ok: false, status: 403, reason: "This consent was started by another account. Sign in as the app's owner and start again." };
  }
  if (!await takeAuthorization(env, stateHash)) return { ok: false, status: 400, reason: "This consent was already used. Start again from the connection's authorize link." };
  const row = await getConnectionById(env, pending.connectionId);
  if (!row || row.kind !== "oauth2") return { ok: false, status: 404, reason: "The connection was deleted while you were at the provider." };

  const codeVerifier = await unseal(env, sealedPlace(stateHash, "verifier"), pending.codeVerifierSealed);
  const outcome = await exchangeCode(await providerOf(env, row), callback, state, codeVerifier, callbackUrl(config(env).apiOrigin), config(env).development);
  // The owner declining (or the provider refusing the code) is an answer; a provider that failed is a bad gateway.
  if (outcome.kind !== "issued") return { ok: false, status: outcome.kind === "grant_refused" ? 400 : 502, reason: `No tokens: ${outcome.error}.`, connection: row };
  const stored = await storeConsentTokens(env, row, await issuedTokenFields(env, row, outcome.tokens));
  if (!stored) return { ok: false, status: 404, reason: "The connection was deleted while you were at the provider." };
  return { ok: true, connection: stored };
}
