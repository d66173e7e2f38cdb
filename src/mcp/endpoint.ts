/**
 * `/mcp` on the API origin (WIRE §2.12, WIRE-MCP §1.6): MCP's Streamable HTTP transport,
 * stateless — a fresh server per request, so nothing is lost when an isolate is recycled.
 * Before the SDK sees anything the request passes the relay's own checks: a browser
 * `Origin` other than the API origin is refused (DNS rebinding), the agent key is resolved
 * by the same auth as `/v1` (a missing or bad key is 401 with `WWW-Authenticate` naming
 * the protected-resource metadata, RFC 9728, served here too), and the body is capped.
 * The SDK answers malformed JSON and JSON-RPC with JSON-RPC errors.
 */
import type { Hono, MiddlewareHandler } from "hono";
import { createMcpHandler } from "agents/mcp/server";
import { config } from "../config";
import { RelayError } from "../errors";
import { readBodyBytes } from "../http/body";
import { requireAgent } from "../http/middleware/auth";
import { notePageRoute } from "../http/routes";
import type { AppContext, AppEnv } from "../http/types";
import { buildServer } from "./server";

export const MCP_PATH = "/mcp";
export const RESOURCE_METADATA_PATH = "/.well-known/oauth-protected-resource";

function resourceMetadata(apiOrigin: string) {
  return {
    resource: `${apiOrigin}${MCP_PATH}`,
    bearer_methods_supported: ["header"],
    resource_name: "service relay MCP endpoint",
    resource_documentation: `${apiOrigin}/docs/mcp`,
  };
}

/** A browser may call only from the API origin; clients that send no Origin are not browsers. */
const sameOriginOnly: MiddlewareHandler<AppEnv> = async (c, next) => {
  const origin = c.req.header("origin");
  const apiOrigin = config(c.env).apiOrigin;
  if (origin !== undefined && origin !== apiOrigin) {
    throw new RelayError("csrf_origin_mismatch", `The MCP endpoint does not take calls from ${origin.slice(0, 200)}.`, { origin: origin.slice(0, 200) });
  }
  await next();
};

/** The relay's agent-key auth; its 401 tells an MCP client where the metadata is. */
const agentKeyWithChallenge: MiddlewareHandler<AppEnv> = async (c, next) => {
  try {
    await requireAgent(c, next);
  } catch (err) {
    if (!(err instanceof RelayError) || err.status !== 401) throw err;
    const metadata = `${config(c.env).apiOrigin}${RESOURCE_METADATA_PATH}`;
    throw new RelayError(err.code, err.message, err.details, { ...err.headers, "WWW-Authenticate": `Bearer resource_metadata="${metadata}"` });
  }
};

/** The request handed to the SDK: the capped body, and a Host header (the SDK needs one). */
function forSdk(c: AppContext, body: Uint8Array | undefined): Request {
  const url = new URL(c.req.url);
  const headers = new Headers(c.req.raw.headers);
  if (!headers.has("host")) headers.set("host", url.host);
  return new Request(url, { method: c.req.method, headers, body });
}

export function mcpRoutes(app: Hono<AppEnv>): void {
  for (const path of [RESOURCE_METADATA_PATH, `${RESOURCE_METADATA_PATH}${MCP_PATH}`]) {
    notePageRoute("get", path);
    app.get(path, (c) => c.json(resourceMetadata(config(c.env).apiOrigin)));
  }
  for (const method of ["get", "post", "delete"] as const) notePageRoute(method, MCP_PATH);
  app.on(["GET", "POST", "DELETE"], MCP_PATH, sameOriginOnly, agentKeyWithChallenge, async (c) => {
    const cfg = config(c.env);
    const body = c.req.method === "POST" ? await readBodyBytes(c, cfg.maxDeployBodyBytes) : undefined;
    const forwarded = new Headers({ authorization: c.req.header("authorization")! });
    const clientIp = c.req.header("cf-connecting-ip");
    if (clientIp) forwarded.set("cf-connecting-ip", clientIp);
    const host = { relay: { app, env: c.env, executionCtx: c.executionCtx, apiOrigin: cfg.apiOrigin, forwarded }, caller: c.get("agent") };
    const handler = createMcpHandler(() => buildServer(host), {
      route: MCP_PATH, corsOptions: false, allowedOriginHostnames: "*", allowedHostnames: [new URL(c.req.url).hostname],
    });
    return handler(forSdk(c, body), c.env, c.executionCtx as unknown as ExecutionContext);
  });
}
