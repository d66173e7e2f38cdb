/**
 * The authorization server's protocol endpoints on the API origin, handed to the provider
 * library as they are: RFC 8414 metadata, RFC 7591 registration, and the token endpoint
 * (code and refresh grants, RFC 7009 revocation). Only these paths reach the library, so it
 * never takes over the relay's other routes; the body is size-capped first. Their errors are
 * OAuth's own `{ error, error_description }` form (RFC 6749 §5.2, RFC 7591 §3.2.2), which
 * OAuth clients parse, like the device-token poll's RFC 8628 form. The approval page is the
 * console's (src/http/console/mcp-authorize.tsx).
 */
import type { Hono } from "hono";
import { readBodyBytes } from "../../http/body";
import { rateLimit } from "../../http/middleware/rate-limit";
import { notePageRoute } from "../../http/routes";
import type { AppContext, AppEnv } from "../../http/types";
import { AUTHORIZATION_SERVER_METADATA_PATH, OAUTH_REGISTER_PATH, OAUTH_TOKEN_PATH, authorizationServer } from "./authorization-server";
import { aroundRevocation } from "./grant-keys";

/** Registration metadata and token forms are small. */
const MAX_OAUTH_BODY_BYTES = 65_536;

async function toLibrary(c: AppContext): Promise<Response> {
  const hasBody = c.req.method === "POST";
  const body = hasBody ? await readBodyBytes(c, MAX_OAUTH_BODY_BYTES) : undefined;
  const request = new Request(c.req.url, { method: c.req.method, headers: c.req.raw.headers, body });
  const revocation = body !== undefined && c.req.path === OAUTH_TOKEN_PATH ? await aroundRevocation(c.env, body) : null;
  const response = await (await authorizationServer(c.env)).fetch(request, c.env, c.executionCtx as unknown as ExecutionContext);
  if (revocation && response.ok) await revocation.after();
  return response;
}

export function oauthRoutes(app: Hono<AppEnv>): void {
  const served: Array<[path: string, methods: Array<"get" | "post">]> = [
    [AUTHORIZATION_SERVER_METADATA_PATH, ["get"]],
    [OAUTH_REGISTER_PATH, ["post"]],
    [OAUTH_TOKEN_PATH, ["post"]],
  ];
  // Anyone may register a client, and each one is stored: registrations share the per-address
  // budget of agent registration (RATE_LIMIT_REGISTER).
  app.post(OAUTH_REGISTER_PATH, rateLimit("register"));
  for (const [path, methods] of served) {
    for (const method of methods) notePageRoute(method, path);
    // OPTIONS: browser-based MCP clients preflight these; the library answers CORS itself.
    app.on([...methods.map((method) => method.toUpperCase()), "OPTIONS"], path, toLibrary);
  }
}
