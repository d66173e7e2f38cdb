/**
 * The page script's `connections.set` and `connections.status` on the app origin (spec A
 * item 6, spec B: owner or owning agent only, not configurable by the manifest), so an app
 * can offer its owner a settings page where the owner's own secret goes straight to the
 * relay, never through the agent:
 *
 * | method | path | body | answer |
 * |---|---|---|---|
 * | GET | `/_svc/connections/<name>` | | `{ connection, authorizeUrl }` |
 * | PUT | `/_svc/connections/<name>` | the create body of `POST /v1/apps/:id/connections`, without `name` | 201 (created) or 200 (replaced) `{ connection, authorizeUrl }` |
 *
 * `authorizeUrl` is where the owner gives an oauth2 connection consent (on the API
 * origin; null for a static one). Reading the status of an oauth2 connection whose access
 * token is about to expire refreshes it first, so the answer is the truth: `active` with a
 * new expiry, or `needs_reauth` when the provider refused. Anyone but the owner's app
 * session or the owner's agent key is `connection_status_forbidden`.
 */
import type { Hono } from "hono";
import { RelayError } from "../../errors";
import { config } from "../../config";
import { readJsonBody } from "../body";
import { parseWith } from "../plain-issues";
import type { AppContext } from "../types";
import { connectionBody } from "../../connections/connection-body";
import { connectionOf, connectionView, consentUrl, setConnection } from "../../connections/manage";
import { freshAccessToken } from "../../connections/tokens";
import type { ConnectionRow } from "../../db/connections";
import { assertSameOrigin, clientIp, credentialsFromHeaders, resolveCaller } from "./caller";
import type { ServeContext, ServeEnv } from "./context";
import { envelope } from "./errors";

const setBody = connectionBody.omit({ name: true });

/** The served app, once the caller is its owner (app session) or the owner's agent (agent key). */
async function ownerTarget(c: ServeContext) {
  const served = c.get("served");
  assertSameOrigin(c, served);
  const live = await served.live();
  const caller = await resolveCaller(c.env, served, live.policy, credentialsFromHeaders(c), clientIp(c));
  const kind = caller.principal.kind;
  if (kind !== "owner" && kind !== "agent") {
    throw new RelayError("connection_status_forbidden", "Only the app's owner (or the owner's agent) may set or read its connections.");
  }
  return served.app;
}

function answer(c: ServeContext, row: ConnectionRow, status: 200 | 201 = 200): Response {
  const url = row.kind === "oauth2" ? consentUrl(config(c.env).apiOrigin, row.appId, row.name) : null;
  const res = c.json({ connection: connectionView(row), authorizeUrl: url }, status);
  res.headers.set("Cache-Control", "no-store");
  return res;
}

export function connectionRoutes(app: Hono<ServeEnv>): void {
  app.get("/_svc/connections/:name", async (c) => {
    const target = await ownerTarget(c);
    const row = await connectionOf(c.env, target, c.req.param("name"));
    if (row.kind === "oauth2" && row.status === "active") return answer(c, (await freshAccessToken(c.env, row)).row);
    return answer(c, row);
  });

  app.put("/_svc/connections/:name", async (c) => {
    const target = await ownerTarget(c);
    const raw = await readJsonBody(c as unknown as AppContext, false, config(c.env).maxJsonBodyBytes);
    const settings = parseWith(setBody, raw, "body", [], "connection_invalid");
    const name = parseWith(connectionBody.shape.name, c.req.param("name"), "body", ["name"], "connection_invalid");
    const { row, created } = await setConnection(c.env, target, { ...settings, name });
    return answer(c, row, created ? 201 : 200);
  });

  app.all("/_svc/connections/:name", (c) => {
    const path = new URL(c.req.url).pathname;
    return envelope(c, new RelayError("method_not_allowed", `${c.req.method} is not supported on ${path}; use GET, PUT.`,
      { method: c.req.method, allow: ["GET", "HEAD", "PUT"] }, { Allow: "GET, HEAD, PUT" }));
  });
}
