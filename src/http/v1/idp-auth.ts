/**
 * Sign-in through the operator's identity provider (spec A "Sign-in", issue 14 item 7):
 * `GET /v1/auth/idp` sends the browser to the provider with a fresh attempt, and
 * `GET /v1/auth/idp/callback` takes it back, proves it and signs the person in exactly
 * as a magic link does (same human for the same address, same session cookie).
 *
 * The attempt is bound twice: server-side by its state's hash (spent on first use, ten
 * minutes at most; src/db/idp-attempts.ts) and to the browser by an HttpOnly cookie holding
 * the same state, so a callback link carried to another browser (login CSRF) does not
 * sign that browser in. Every failure after the browser left redirects to the sign-in
 * page with the catalogue code in `error`, and no session.
 */
import { errorLogLine } from "../../db/query-errors";
import type { Hono } from "hono";
import * as z from "zod";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { defineRoute } from "../routes";
import type { AppContext, AppEnv } from "../types";
import { config, type IdpSettings } from "../../config";
import { RelayError, type ErrorCode } from "../../errors";
import { constantTimeEqual } from "../../auth/tokens";
import { beginIdpSignIn, completeIdpSignIn, isProviderUnreachable } from "../../auth/identity-provider";
import { IDP_ATTEMPT_TTL_SECONDS, saveIdpAttempt, takeIdpAttempt } from "../../db/idp-attempts";
import { humanOfVerifiedEmail } from "../../db/humans";
import { safeReturnTo, signInAs } from "./human-auth";
import { hostBoundCookieName } from "../../auth/human-session";
import { errors } from "./schemas";

/**
 * The browser's half of an attempt: its state, read only by the callback. Over https it is
 * `__Host-relay_idp_attempt` (host-only, path-wide, as that prefix demands), so an app page
 * on a sibling host cannot plant its own attempt's state in someone's browser and sign
 * them in as itself (login forgery by cookie tossing).
 */
export const IDP_ATTEMPT_COOKIE = "relay_idp_attempt";

function attemptCookieName(apiOrigin: string): string {
  return hostBoundCookieName(IDP_ATTEMPT_COOKIE, apiOrigin);
}
const CALLBACK_PATH = "/v1/auth/idp/callback";
const MAX_STATE_LENGTH = 128;

function callbackUrl(apiOrigin: string): string {
  return `${apiOrigin}${CALLBACK_PATH}`;
}

/** The configured provider, or the catalogue's refusal when the operator set none. */
function settingsOf(c: AppContext): IdpSettings {
  const settings = config(c.env).idp;
  if (!settings) {
    throw new RelayError("auth_provider_unavailable", "This relay has no identity provider configured: sign in with the emailed link.", { reason: "idp_not_configured" });
  }
  return settings;
}

/** Back to the sign-in page, saying why (the catalogue code) and keeping where the person was going. */
function failed(c: AppContext, code: ErrorCode, returnTo: string | null): Response {
  const query = new URLSearchParams({ error: code });
  if (returnTo) query.set("return_to", returnTo);
  return c.redirect(`/signin?${query}`, 302);
}

export function idpAuthRoutes(app: Hono<AppEnv>): void {
  defineRoute(app, {
    method: "get", path: "/v1/auth/idp", tag: "sign-in", auth: "none", rateLimit: "requestLink",
    summary: "Start sign-in with the operator's identity provider: redirects to it (the sign-in link's per-address limit)",
    query: z.object({ return_to: z.string().max(2000).optional() }),
    responses: {
      302: { description: "To the provider's authorization page (state, nonce, PKCE S256); an unreachable provider redirects to /signin?error=auth_provider_unavailable" },
      ...errors(400, 429),
      503: { description: "auth_provider_unavailable: no identity provider is configured (details.reason idp_not_configured)" },
    },
  }, async (c, { query }) => {
    const settings = settingsOf(c);
    const cfg = config(c.env);
    const returnTo = safeReturnTo(query.return_to, cfg.apiOrigin);
    if (query.return_to && !returnTo) throw new RelayError("invalid_request", "return_to must be a path on this relay.", { field: "return_to" });
    let start: Awaited<ReturnType<typeof beginIdpSignIn>>;
    try {
      start = await beginIdpSignIn(settings, callbackUrl(cfg.apiOrigin), returnTo, cfg.development);
    } catch (err) {
      if (!isProviderUnreachable(err)) throw err;
      console.warn("identity provider unavailable", errorLogLine(err));
      return failed(c, "auth_provider_unavailable", returnTo);
    }
    await saveIdpAttempt(c.env, start.attempt);
    setCookie(c, attemptCookieName(cfg.apiOrigin), start.attempt.state, {
      httpOnly: true, sameSite: "Lax", path: "/", maxAge: IDP_ATTEMPT_TTL_SECONDS, secure: cfg.apiOrigin.startsWith("https://"),
    });
    return c.redirect(start.url, 302);
  });

  defineRoute(app, {
    method: "get", path: CALLBACK_PATH, tag: "sign-in", auth: "none",
    summary: "Finish sign-in with the identity provider: sets the session cookie and redirects",
    query: z.object({ state: z.string().optional(), code: z.string().optional(), error: z.string().optional() }),
    responses: {
      302: {
        description: "Signed in: to return_to or the console. Otherwise to /signin?error=<code>, no session: idp_state_invalid, "
          + "idp_access_denied, idp_token_invalid, email_not_verified or auth_provider_unavailable",
      },
      503: { description: "auth_provider_unavailable: no identity provider is configured (details.reason idp_not_configured)" },
    },
  }, async (c) => {
    const settings = settingsOf(c);
    const cfg = config(c.env);
    const params = new URL(c.req.url).searchParams;
    const state = params.get("state") ?? "";
    const attemptCookie = attemptCookieName(cfg.apiOrigin);
    const browserState = getCookie(c, attemptCookie) ?? "";
    deleteCookie(c, attemptCookie, { path: "/", secure: cfg.apiOrigin.startsWith("https://") });
    if (!state || state.length > MAX_STATE_LENGTH || !constantTimeEqual(state, browserState)) return failed(c, "idp_state_invalid", null);
    const attempt = await takeIdpAttempt(c.env, state);
    if (!attempt) return failed(c, "idp_state_invalid", null);

    const outcome = await completeIdpSignIn(settings, params, attempt, callbackUrl(cfg.apiOrigin), cfg.development);
    if (outcome.kind === "refused") {
      console.warn("identity-provider sign-in refused", outcome.code, outcome.reason);
      return failed(c, outcome.code, attempt.returnTo);
    }
    const human = await humanOfVerifiedEmail(c.env, outcome.email);
    await signInAs(c, human.id);
    return c.redirect(attempt.returnTo ?? "/", 302);
  });
}
