/**
 * An oauth2 connection's tokens over time: sealing what a token endpoint issued (keeping
 * the old refresh token when a refresh answer carries none, capturing `instanceField`),
 * and handing out an access token that is good for at least another minute, refreshing it
 * first when it is not. A refresh the provider refuses with `invalid_grant` (revoked,
 * expired, spent) flips the connection to `needs_reauth`: only the owner's new consent
 * brings it back. Any other failure leaves it `active` and says why, for the next try.
 *
 * Two refreshes of one connection may race (two deliveries at once); each writes only over
 * the token generation it started from, and the one that loses reads the winner's tokens.
 */
import { config } from "../config";
import { getConnectionById, storeTokens, type ConnectionRow, type TokenFields } from "../db/connections";
import { refreshGrant, type OAuthProvider, type Tokens } from "./oauth";
import { sealedPlace, seal, unseal } from "./sealing";

/** How long before its expiry an access token is refreshed rather than used. */
export const REFRESH_MARGIN_MS = 60_000;
/** Rounds of "someone else refreshed first, read theirs" before giving up. */
const RACE_ROUNDS = 3;

function parsedParams(json: string | null): Record<string, string> {
  return json ? (JSON.parse(json) as Record<string, string>) : {};
}

/** The provider an oauth2 connection names, its client secret opened. */
export async function providerOf(env: Env, row: ConnectionRow): Promise<OAuthProvider> {
  return {
    authorizeUrl: row.authorizeUrl!,
    tokenEndpoint: row.tokenEndpoint!,
    clientId: row.clientId!,
    clientSecret: await unseal(env, sealedPlace(row.id, "secret"), row.secretSealed),
    scopes: row.scopes,
    authParams: parsedParams(row.authParamsJson),
    tokenParams: parsedParams(row.tokenParamsJson),
  };
}

/** The connection's token state after `tokens` were issued: active, sealed, with its expiry and instance URL. */
export async function issuedTokenFields(env: Env, row: ConnectionRow, tokens: Tokens): Promise<Partial<TokenFields>> {
  const instance = row.instanceField ? tokens[row.instanceField] : undefined;
  return {
    status: "active",
    accessTokenSealed: await seal(env, sealedPlace(row.id, "access"), tokens.access_token),
    refreshTokenSealed: tokens.refresh_token ? await seal(env, sealedPlace(row.id, "refresh"), tokens.refresh_token) : row.refreshTokenSealed,
    expiresAt: typeof tokens.expires_in === "number" ? new Date(Date.now() + tokens.expires_in * 1000).toISOString() : null,
    instanceBaseUrl: typeof instance === "string" && instance.length <= 2048 ? instance : row.instanceBaseUrl,
  };
}

/** The state that says only a new consent helps: no tokens left to try. */
export const NEEDS_REAUTH: Partial<TokenFields> = { status: "needs_reauth", accessTokenSealed: null, refreshTokenSealed: null };

export type AccessToken = { ok: true; token: string; row: ConnectionRow } | { ok: false; error: string; row: ConnectionRow };

function stale(row: ConnectionRow, now: number): boolean {
  return row.expiresAt !== null && Date.parse(row.expiresAt) - now <= REFRESH_MARGIN_MS;
}

function notUsable(row: ConnectionRow): string | null {
  if (row.status === "pending_auth") return `connection "${row.name}" is waiting for the owner's consent`;
  if (row.status === "needs_reauth") return `connection "${row.name}" needs the owner to authorize it again`;
  if (!row.accessTokenSealed) return `connection "${row.name}" holds no access token`;
  return null;
}

/**
 * An access token of the oauth2 connection `row` that is good for at least another
 * minute, refreshed first when needed; or why there is none (the row then says the
 * connection's status as it is now).
 */
export async function freshAccessToken(env: Env, initial: ConnectionRow): Promise<AccessToken> {
  let row = initial;
  for (let round = 0; round < RACE_ROUNDS; round += 1) {
    const unusable = notUsable(row);
    if (unusable !== null) return { ok: false, error: unusable, row };
    if (!stale(row, Date.now())) return { ok: true, token: await unseal(env, sealedPlace(row.id, "access"), row.accessTokenSealed!), row };

    let stored: ConnectionRow | undefined;
    let failure: string | null = null;
    let issued: string | null = null;
    if (!row.refreshTokenSealed) {
      failure = `connection "${row.name}": the access token expired and the provider gave no refresh token; the owner must authorize it again`;
      stored = await storeTokens(env, row.id, row.tokenGeneration, NEEDS_REAUTH);
    } else {
      const refreshToken = await unseal(env, sealedPlace(row.id, "refresh"), row.refreshTokenSealed);
      const outcome = await refreshGrant(await providerOf(env, row), refreshToken, config(env).development);
      if (outcome.kind === "failed") return { ok: false, error: `connection "${row.name}": the token refresh failed: ${outcome.error}`, row };
      if (outcome.kind === "grant_refused") {
        failure = `connection "${row.name}": the provider refused the refresh (${outcome.error}); the owner must authorize it again`;
        stored = await storeTokens(env, row.id, row.tokenGeneration, NEEDS_REAUTH);
      } else {
        issued = outcome.tokens.access_token;
        stored = await storeTokens(env, row.id, row.tokenGeneration, await issuedTokenFields(env, row, outcome.tokens));
      }
    }
    if (stored) {
      // A token just issued is used even when the provider gives it less than the margin to live.
      return failure !== null ? { ok: false, error: failure, row: stored } : { ok: true, token: issued!, row: stored };
    }
    // Someone changed the tokens meanwhile (a racing refresh, a new consent): judge theirs.
    const current = await getConnectionById(env, row.id);
    if (!current) return { ok: false, error: `connection "${row.name}" was deleted`, row };
    row = current;
  }
  return { ok: false, error: `connection "${row.name}": its tokens kept changing while refreshing; try again`, row };
}
