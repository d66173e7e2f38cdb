/**
 * Human sign-in by magic link (CONTRACT §4). request-link mails a single-use link that
 * lives 15 minutes; opening it sets an HttpOnly SameSite=Lax session cookie (Secure and
 * `__Host-` prefixed on https) and redirects back into the console. Logout revokes the session server-side.
 */
import type { Hono } from "hono";
import * as z from "zod";
import { setCookie, deleteCookie } from "hono/cookie";
import { defineRoute } from "../routes";
import type { AppContext, AppEnv } from "../types";
import { config } from "../../config";
import { RelayError } from "../../errors";
import { consumeMagicLink, createMagicLink, createSession, normaliseEmail, revokeSession, SESSION_TTL_SECONDS } from "../../db/humans";
import { mailer } from "../../mail/mailer";
import { magicLinkMail } from "../../mail/templates";
import { resolveHuman } from "../middleware/auth";
import { sessionCookieName } from "../../auth/human-session";
import { assertSameOrigin } from "../middleware/csrf";
import { errors } from "./schemas";

/**
 * Only paths on the API origin may be returned to; anything else is refused. The value is
 * resolved the way a browser would (which drops tabs and newlines and reads `\` as `/`),
 * and the result must not start with `//`, which a browser would read as another host.
 */
export function safeReturnTo(value: string | undefined | null, apiOrigin: string): string | null {
  if (!value) return null;
  // Control characters and backslashes: browsers rewrite them, and CR/LF cannot go in a header.
  if (/[\u0000-\u001f\u007f\\]/.test(value)) return null;
  try {
    const url = value.startsWith("/") ? new URL(value, apiOrigin) : new URL(value);
    if (url.origin !== apiOrigin) return null;
    const path = url.pathname + url.search + url.hash;
    return path.startsWith("//") ? null : path;
  } catch {
    return null;
  }
}

/** The session cookie's name and whether it is Secure, from the API origin's scheme. */
function sessionCookieOf(c: AppContext): { name: string; secure: boolean } {
  const { apiOrigin } = config(c.env);
  return { name: sessionCookieName(apiOrigin), secure: apiOrigin.startsWith("https://") };
}

export function setSessionCookie(c: AppContext, token: string): void {
  const { name, secure } = sessionCookieOf(c);
  setCookie(c, name, token, { httpOnly: true, sameSite: "Lax", path: "/", maxAge: SESSION_TTL_SECONDS, secure });
}

/** Clears the session cookie (sign-out, account deletion). */
export function clearSessionCookie(c: AppContext): void {
  const { name, secure } = sessionCookieOf(c);
  deleteCookie(c, name, { path: "/", secure });
}

/** Starts a login session for the human and sets its cookie: the last step of every way of signing in. */
export async function signInAs(c: AppContext, humanId: string): Promise<void> {
  const session = await createSession(c.env, humanId);
  setSessionCookie(c, session.token);
}

export async function sendMagicLink(c: AppContext, email: string, returnTo: string | null): Promise<void> {
  const cfg = config(c.env);
  const token = await createMagicLink(c.env, email, returnTo);
  const link = `${cfg.apiOrigin}/v1/auth/verify?token=${encodeURIComponent(token)}`;
  await mailer(c.env).send(magicLinkMail(normaliseEmail(email), link));
}

export function humanAuthRoutes(app: Hono<AppEnv>): void {
  defineRoute(app, {
    method: "post", path: "/v1/auth/request-link", tag: "sign-in", auth: "none", rateLimit: "requestLink",
    summary: "Email a single-use sign-in link (15 minutes)",
    body: z.strictObject({ email: z.email().max(254), return_to: z.string().max(2000).optional() }),
    responses: { 200: { description: "Sent (always, so addresses cannot be probed)", schema: z.object({ ok: z.literal(true) }) }, ...errors(400, 413, 429) },
  }, async (c, { body }) => {
    const returnTo = safeReturnTo(body.return_to, config(c.env).apiOrigin);
    if (body.return_to && !returnTo) {
      throw new RelayError("invalid_request", "return_to must be a path on this relay.", { field: "return_to" });
    }
    await sendMagicLink(c, body.email, returnTo);
    return c.json({ ok: true });
  });

  defineRoute(app, {
    method: "get", path: "/v1/auth/verify", tag: "sign-in", auth: "none",
    summary: "Open a sign-in link: sets the session cookie and redirects",
    query: z.object({ token: z.string().min(1).max(200) }),
    responses: { 302: { description: "Signed in; redirect to return_to or the console; an unusable link redirects to the sign-in page" }, ...errors(400) },
  }, async (c, { query }) => {
    const spent = await consumeMagicLink(c.env, query.token);
    if (!spent) return c.redirect("/signin?error=link_invalid", 302);
    await signInAs(c, spent.human.id);
    return c.redirect(spent.returnTo ?? "/", 302);
  });

  defineRoute(app, {
    method: "get", path: "/v1/auth/status", tag: "sign-in", auth: "none",
    summary: "Which sign-in methods this relay offers",
    responses: { 200: { description: "Methods", schema: z.object({ magic_link: z.boolean(), idp: z.boolean() }) } },
  }, (c) => c.json({ magic_link: true, idp: config(c.env).idp !== null }));

  defineRoute(app, {
    method: "post", path: "/v1/auth/logout", tag: "sign-in", auth: "none",
    summary: "Revoke the session and clear its cookie",
    responses: { 204: { description: "Signed out (also when no session was present)" }, ...errors(403) },
  }, async (c) => {
    const human = await resolveHuman(c);
    if (human) {
      assertSameOrigin(c);
      await revokeSession(c.env, human.sessionId);
    }
    clearSessionCookie(c);
    return c.body(null, 204);
  });
}
