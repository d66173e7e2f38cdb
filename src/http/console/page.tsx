/**
 * Plumbing every console page shares, so page modules hold only their own content:
 * render inside the layout with safe headers, turn any failure into an HTML error page
 * with the catalogue's status (the API's `onError` would answer JSON), enforce the
 * same-origin check on every form post, read small urlencoded forms, and know who is
 * signed in.
 */
import type { Handler } from "hono";
import type { Child } from "hono/jsx";
import { RelayError, catalogue, type ErrorCode } from "../../errors";
import { withoutBoundValues } from "../../db/query-errors";
import { isOperatorEmail } from "../../community/callers";
import { readBodyText } from "../body";
import { resolveHuman } from "../middleware/auth";
import { assertSameOrigin } from "../middleware/csrf";
import { allowedMethods } from "../routes";
import type { AppContext, AppEnv, HumanCaller } from "../types";
import { Layout } from "./layout";

const MAX_FORM_BYTES = 16_384;

/**
 * The pages' content security policy. Forms post only to this origin, and `form-action`
 * also governs where a form's redirects may lead: a page whose form ends on an app's own
 * origin (through /authorize) names that origin in `formTargets`.
 */
export function pageCsp(formTargets: string[] = []): string {
  const formAction = ["'self'", ...formTargets].join(" ");
  return `default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'`;
}

/**
 * Pages carry session data and secrets: never cached, never framed, no foreign scripts.
 * Every HTML page the API origin renders outside the console's layout (the oauth2
 * connection's consent outcome) carries them too.
 */
export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  "Cache-Control": "no-store",
  "Content-Security-Policy": pageCsp(),
  "X-Frame-Options": "DENY",
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "same-origin",
};

function signedInEmail(c: AppContext): string | null {
  return (c.get("human") as HumanCaller | undefined)?.email ?? null;
}

export function renderPage(c: AppContext, status: number, title: string, body: Child, headers: Record<string, string> = {}): Response | Promise<Response> {
  for (const [name, value] of Object.entries({ ...PAGE_HEADERS, ...headers })) c.header(name, value);
  const email = signedInEmail(c);
  return c.html(<Layout title={title} signedInAs={email} operator={email !== null && isOperatorEmail(c.env, email)}>{body}</Layout>, status as 200);
}

const errorTitles: Record<number, string> = {
  400: "That request was not valid", 401: "Sign-in needed", 403: "Request refused", 404: "Not found",
  405: "Method not allowed", 409: "Already done", 410: "Expired", 413: "Too large", 429: "Too many requests",
};

/** Where the status alone would mislead (a 410 for an app in the trash is not "expired"). */
const codeTitles: Partial<Record<ErrorCode, string>> = {
  soft_deleted: "In the trash",
};

export function errorPage(c: AppContext, err: unknown): Response | Promise<Response> {
  const relayError = err instanceof RelayError ? err : new RelayError("internal_error");
  if (!(err instanceof RelayError)) console.error("console page failed", withoutBoundValues(err));
  const title = codeTitles[relayError.code] ?? errorTitles[relayError.status] ?? "Something went wrong";
  return renderPage(c, relayError.status, title, (
    <div class="error" role="alert" id="error" data-error-code={relayError.code}>
      <p>{relayError.message}</p>
      <p>{catalogue[relayError.code].hint}</p>
    </div>
  ), relayError.headers);
}

/**
 * Wraps a page handler: form posts must come from this origin (403 otherwise), and any
 * failure becomes an HTML error page instead of the API's JSON envelope.
 */
export function page(handler: (c: AppContext) => Response | Promise<Response>): Handler<AppEnv> {
  return async (c) => {
    try {
      assertSameOrigin(c);
      return await handler(c);
    } catch (err) {
      return errorPage(c, err);
    }
  };
}

/** 405 as an HTML page, with the Allow header the route registry knows. */
export const methodNotAllowed: Handler<AppEnv> = (c) => {
  const path = new URL(c.req.url).pathname;
  const allow = allowedMethods(path);
  return errorPage(c, new RelayError("method_not_allowed", `${c.req.method} is not supported on ${path}; use ${allow.join(", ")}.`,
    { method: c.req.method, allow }, { Allow: allow.join(", ") }));
};

/** The posted form (application/x-www-form-urlencoded), size-capped before parsing. */
export async function readForm(c: AppContext): Promise<URLSearchParams> {
  const type = c.req.header("content-type") ?? "";
  if (type && !/^application\/x-www-form-urlencoded\b/i.test(type)) {
    throw new RelayError("invalid_request", `Console forms post as application/x-www-form-urlencoded, not ${type}.`, { field: "content-type" });
  }
  return new URLSearchParams(await readBodyText(c, MAX_FORM_BYTES));
}

/** The signed-in human (also stored on the context for the layout and db helpers), or null. */
export async function currentHuman(c: AppContext): Promise<HumanCaller | null> {
  const human = await resolveHuman(c);
  if (human) c.set("human", human);
  return human;
}

/** Sends a signed-out visitor to the sign-in page, coming back to `returnTo` afterwards. */
export function toSignIn(c: AppContext, returnTo: string): Response {
  return c.redirect(`/signin?return_to=${encodeURIComponent(returnTo)}`, c.req.method === "GET" || c.req.method === "HEAD" ? 302 : 303);
}

/** Post/Redirect/Get: after a form post, the browser fetches the result page with GET. */
export function seeOther(c: AppContext, location: string): Response {
  return c.redirect(location, 303);
}

/** A message chosen by a query-string key; only the table's own keys count. */
export function lookup<T>(table: Record<string, T>, key: string | undefined): T | null {
  return key !== undefined && Object.hasOwn(table, key) ? table[key] : null;
}

/** The `token` of a mailed link (invitation, transfer, deletion), or a clear refusal naming what the link is. */
export function linkToken(value: string | null | undefined, what: string): string {
  const token = (value ?? "").trim();
  if (!token || token.length > 200) throw new RelayError("invalid_request", `This ${what} link is incomplete: it needs ?token=….`, { field: "token" });
  return token;
}

/** A one-button form that mails a sign-in link to `email` and comes back to `returnTo`. */
export function SignInAs({ email, returnTo, label, id }: { email: string; returnTo: string; label: string; id: string }) {
  return (
    <form method="post" action="/signin">
      <input type="hidden" name="email" value={email} />
      <input type="hidden" name="return_to" value={returnTo} />
      <button type="submit" class="primary" id={id}>{label}</button>
    </form>
  );
}
