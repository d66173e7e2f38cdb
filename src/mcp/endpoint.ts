/**
 * `/mcp` on the API origin (WIRE §2.12, WIRE-MCP §1.6): MCP's Streamable HTTP transport,
 * stateless — a fresh server per request, so nothing is lost when an isolate is recycled.
 * Before the SDK sees anything the request passes the relay's own checks: a browser
 * `Origin` other than the API origin is refused (DNS rebinding), the caller is resolved
 * by the same auth as `/v1` — an agent key, or an OAuth access token from the relay's own
 * authorization server (src/mcp/oauth/), which stands for a key of the agent the person
 * chose — (a missing or bad credential is 401 with `WWW-Authenticate` naming the
 * protected-resource metadata, RFC 9728, served here too), and the body is capped.
 * The SDK answers malformed JSON and JSON-RPC with JSON-RPC errors.
 */
import type { Hono, MiddlewareHandler } from "hono";
import { config } from "../config";
import { RelayError } from "../errors";
import { readBodyBytes } from "../http/body";
import { admitAgentKey, bearerToken } from "../http/middleware/auth";
import { agentKeyOf } from "../auth/agent-key";
import { SECRET_KINDS } from "../auth/tokens";
import { MCP_SCOPE, agentKeyOfAccessToken } from "./oauth/authorization-server";
import { notePageRoute } from "../http/routes";
import type { AppContext, AppEnv } from "../http/types";
import { oauthRoutes } from "./oauth/routes";

export const MCP_PATH = "/mcp";
export const RESOURCE_METADATA_PATH = "/.well-known/oauth-protected-resource";

function resourceMetadata(apiOrigin: string) {
  return {
    resource: `${apiOrigin}${MCP_PATH}`,
    authorization_servers: [apiOrigin],
    scopes_supported: [MCP_SCOPE],
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

/**
 * The agent key the caller presents: an agent key as it is, or the key an OAuth access
 * token stands for. A token that does not hold is 401 `oauth_token_invalid`; so is one
 * whose agent was paused or had its keys revoked since (the key it stands for is refused).
 */
async function admitCaller(c: AppContext): Promise<string> {
  const bearer = bearerToken(c);
  if (bearer === null || bearer === "" || bearer.startsWith(SECRET_KINDS.agentKey)) {
    const apiKey = agentKeyOf(bearer);
    await admitAgentKey(c, apiKey);
    return apiKey;
  }
  const apiKey = await agentKeyOfAccessToken(c.env, bearer);
  if (apiKey === null) throw new RelayError("oauth_token_invalid", "This OAuth access token is unknown, expired or revoked.", { reason: "token" });
  try {
    await admitAgentKey(c, apiKey);
  } catch (err) {
    if (!(err instanceof RelayError) || err.code !== "invalid_api_key") throw err;
    throw new RelayError("oauth_token_invalid", "The agent this token acts as was paused, or its keys were revoked.", err.details);
  }
  return apiKey;
}

/** The caller's agent key; a 401 tells an MCP client where the metadata is (and, for a token that does not hold, that it is invalid). */
async function admitWithChallenge(c: AppContext): Promise<string> {
  try {
    return await admitCaller(c);
  } catch (err) {
    if (!(err instanceof RelayError) || err.status !== 401) throw err;
    const metadata = `${config(c.env).apiOrigin}${RESOURCE_METADATA_PATH}`;
    const invalid = err.code === "oauth_token_invalid" ? 'error="invalid_token", ' : "";
    throw new RelayError(err.code, err.message, err.details, { ...err.headers, "WWW-Authenticate": `Bearer ${invalid}resource_metadata="${metadata}"` });
  }
}

/**
 * The MCP SDK and the tools, loaded on the first `/mcp` request of an isolate. Building
 * the SDK's protocol schemas is the heaviest thing any of the relay's modules do when they
 * load (megabytes of heap, a large share of the start); an isolate that never serves
 * `/mcp` — every app store, and most Workers — never pays it. The module system runs each
 * once; later requests get the same modules.
 */
async function mcpServing() {
  const [{ createMcpHandler }, { buildServer }] = await Promise.all([import("agents/mcp/server"), import("./server")]);
  return { createMcpHandler, buildServer };
}

/** The request handed to the SDK: the capped body, and a Host header (the SDK needs one). */
function forSdk(c: AppContext, body: Uint8Array | undefined): Request {
  const url = new URL(c.req.url);
  const headers = new Headers(c.req.raw.headers);
  if (!headers.has("host")) headers.set("host", url.host);
  return new Request(url, { method: c.req.method, headers, body });
}

export function mcpRoutes(app: Hono<AppEnv>): void {
  oauthRoutes(app);
  for (const path of [RESOURCE_METADATA_PATH, `${RESOURCE_METADATA_PATH}${MCP_PATH}`]) {
    notePageRoute("get", path);
    app.get(path, (c) => c.json(resourceMetadata(config(c.env).apiOrigin)));
  }
  for (const method of ["get", "post", "delete"] as const) notePageRoute(method, MCP_PATH);
  app.on(["GET", "POST", "DELETE"], MCP_PATH, sameOriginOnly, async (c) => {
    const agentKey = await admitWithChallenge(c);
    const cfg = config(c.env);
    const body = c.req.method === "POST" ? await readBodyBytes(c, cfg.maxDeployBodyBytes) : undefined;
    // The tools' in-process route calls carry the agent key itself, whichever credential came in.
    const forwarded = new Headers({ authorization: `Bearer ${agentKey}` });
    const clientIp = c.req.header("cf-connecting-ip");
    if (clientIp) forwarded.set("cf-connecting-ip", clientIp);
    const { createMcpHandler, buildServer } = await mcpServing();
    const host = { relay: { app, env: c.env, executionCtx: c.executionCtx, apiOrigin: cfg.apiOrigin, forwarded }, caller: c.get("agent") };
    const handler = createMcpHandler(() => buildServer(host), {
      route: MCP_PATH, corsOptions: false, allowedOriginHostnames: "*", allowedHostnames: [new URL(c.req.url).hostname],
    });
    return handler(forSdk(c, body), c.env, c.executionCtx as unknown as ExecutionContext);
  });
}
