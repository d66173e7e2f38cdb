/**
 * Outbound connections over the agent API (WIRE §2.6, spec A): create, list and delete
 * (the owner's agent key or the owner's session; another owner's app is `app_not_found`),
 * the owner's oauth2 consent (`GET …/connections/:name/authorize`, a browser with the
 * owner's session only: an agent key is refused with `consent_owner_only`, someone signed
 * out is sent to sign in first) and the provider's way back, `/oauth/connections/callback`
 * on the API origin, which answers a small HTML page. Connection rows are camelCase on the
 * wire (WIRE §1.7) and never carry a secret, only its fingerprint. Every field a create
 * body gets wrong is `connection_invalid`.
 */
import type { Hono, MiddlewareHandler } from "hono";
import * as z from "zod";
import { RelayError } from "../../errors";
import { defineRoute } from "../routes";
import type { AppContext, AppEnv } from "../types";
import { resolveHuman } from "../middleware/auth";
import { escapeHtml } from "../serve/html";
import { PAGE_HEADERS } from "../console/page";
import { connectionBody } from "../../connections/connection-body";
import {
  completeConsent, connectionView, connectionsOf, createConnection, removeConnection, startConsent, type ConsentResult,
} from "../../connections/manage";
import { ownedApp, requireLive } from "./app-access";
import { errors, isoTime } from "./schemas";

const P = "/v1/apps/:id/connections";

export const connectionSchema = z.object({
  id: z.string(), name: z.string(), kind: z.enum(["static", "oauth2"]), provider: z.string().nullable(), label: z.string().nullable(),
  allowedHost: z.string(), headerName: z.string(), status: z.enum(["pending_auth", "active", "needs_reauth"]),
  authScheme: z.string().nullable(), instanceBaseUrl: z.string().nullable(), scopes: z.string().nullable(),
  expiresAt: isoTime.nullable(), secretFingerprint: z.string().meta({ description: "The first 8 hex of the sha256 of the secret given (header value or client secret)" }),
  createdAt: isoTime,
}).meta({ title: "Connection" });

const gone = { 410: { description: "soft_deleted: the app is in the trash" } };

async function app(c: AppContext) {
  return requireLive(await ownedApp(c, c.req.param("id")!));
}

/**
 * Consent is the owner's, in a browser (spec B): an agent key is refused outright, and a
 * browser without a session is sent to sign in and brought back here.
 */
const ownerInBrowser: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (c.req.header("authorization") !== undefined) {
    throw new RelayError("consent_owner_only", "Consent for an oauth2 connection is given by the app's owner in a browser; an agent key cannot open this link. Hand the URL to your human (`service connections authorize-url`).");
  }
  const human = await resolveHuman(c);
  if (!human) {
    const here = new URL(c.req.url);
    return c.redirect(`/signin?return_to=${encodeURIComponent(here.pathname + here.search)}`, 302);
  }
  c.set("human", human);
  c.set("actor", { kind: "human", ownerHumanId: human.humanId, agentId: null });
  await next();
};

/** The page the owner lands on after the provider, with the outcome in plain words. */
function consentPage(c: AppContext, result: ConsentResult): Response {
  const title = result.ok ? "Connected" : "Not connected";
  const message = result.ok
    ? `The connection <strong>${escapeHtml(result.connection.name)}</strong> is active; the app's webhooks can use it now.`
    : escapeHtml(result.reason);
  const appId = result.ok ? result.connection.appId : result.connection?.appId;
  const back = appId ? `<p><a href="/console/apps/${encodeURIComponent(appId)}">Back to the app</a></p>` : `<p><a href="/">Back to the console</a></p>`;
  const body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">`
    + `<title>${title}</title></head><body><main><h1 id="consent-outcome">${title}</h1><p id="consent-message">${message}</p>${back}</main></body></html>`;
  return c.html(body, result.ok ? 200 : result.status, { ...PAGE_HEADERS, "Referrer-Policy": "no-referrer" });
}

export function connectionRoutes(hono: Hono<AppEnv>): void {
  defineRoute(hono, {
    method: "post", path: P, tag: "connections", auth: "owner",
    summary: "Create a connection bound to one allowed host: static (a header name and value, active at once) or oauth2 (pending_auth until the owner consents at …/authorize); at most MAX_CONNECTIONS_PER_APP per app; no update verb (delete and create again). Secrets are never returned, only a fingerprint",
    body: connectionBody, bodyRefusal: "connection_invalid",
    responses: {
      201: { description: "The new connection", schema: z.object({ connection: connectionSchema }) },
      400: { description: "connection_invalid: a field is wrong (details.field names it)" },
      409: { description: "conflict: the name is taken; connection_limit_reached: the app has MAX_CONNECTIONS_PER_APP connections" },
      501: { description: "not_implemented: the relay has no CONNECTIONS_KEY to seal secrets with" },
      ...errors(401, 404), ...gone,
    },
  }, async (c, { body }) => {
    const target = await app(c);
    return c.json({ connection: connectionView(await createConnection(c.env, target, body)) }, 201);
  });

  defineRoute(hono, {
    method: "get", path: P, tag: "connections", auth: "owner",
    summary: "The app's connections, oldest first: metadata and the secret's fingerprint, never a secret",
    responses: { 200: { description: "Connections", schema: z.object({ connections: z.array(connectionSchema) }) }, ...errors(401, 404), ...gone },
  }, async (c) => {
    const target = await app(c);
    return c.json({ connections: (await connectionsOf(c.env, target)).map(connectionView) });
  });

  defineRoute(hono, {
    method: "delete", path: `${P}/:name`, tag: "connections", auth: "owner",
    summary: "Delete a connection and forget its secrets (idempotent); webhooks naming it stop sending it at once",
    responses: { 204: { description: "No such connection (any more)" }, ...errors(401, 404), ...gone },
  }, async (c) => {
    const target = await app(c);
    await removeConnection(c.env, target, c.req.param("name")!);
    return c.body(null, 204);
  });

  defineRoute(hono, {
    method: "get", path: `${P}/:name/authorize`, tag: "connections", auth: "none", guard: ownerInBrowser,
    summary: "Browser only, the owner's session: redirects to the provider's consent page (PKCE S256 and state; the provider sends the owner back to /oauth/connections/callback). An agent key is refused (consent_owner_only); signed out, the browser is sent to sign in first",
    responses: {
      302: { description: "To the provider's authorization endpoint, or to /signin when signed out" },
      403: { description: "consent_owner_only: an agent key was presented" },
      400: { description: "connection_invalid: the connection is static" },
      ...errors(404), ...gone,
    },
  }, async (c) => {
    const target = await app(c);
    return c.redirect(await startConsent(c.env, target, c.req.param("name")!, c.get("human").humanId), 302);
  });

  defineRoute(hono, {
    method: "get", path: "/oauth/connections/callback", tag: "connections", auth: "none",
    summary: "The oauth2 redirect URI to register with a provider: checks state (issued to the signed-in owner, unexpired, single use), exchanges the code with its PKCE verifier, stores the tokens sealed and makes the connection active; answers a small HTML page saying what happened",
    responses: {
      200: { description: "Connected", contentType: "text/html" },
      400: { description: "Unknown, used or expired state, or the owner declined (the provider's error is shown)", contentType: "text/html" },
      403: { description: "Signed in as someone other than the owner who started", contentType: "text/html" },
      404: { description: "The connection was deleted meanwhile", contentType: "text/html" },
      502: { description: "The provider's token endpoint failed or could not be reached", contentType: "text/html" },
    },
  }, async (c) => {
    const human = await resolveHuman(c);
    return consentPage(c, await completeConsent(c.env, new URL(c.req.url).searchParams, human?.humanId ?? null));
  });
}
