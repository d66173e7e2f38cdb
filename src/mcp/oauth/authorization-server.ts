/**
 * The relay as its own OAuth 2.1 authorization server for `/mcp` (issue 15 item 2), for MCP
 * clients that cannot send an agent key in a header. The protocol is the maintained
 * provider library's (`@cloudflare/workers-oauth-provider`): RFC 8414 metadata, RFC 7591
 * dynamic registration, the token endpoint (PKCE S256, rotating refresh tokens), RFC 7009
 * revocation and RFC 8707 audiences, all kept in the `OAUTH_KV` namespace with tokens stored
 * as hashes. The relay owns only what is its own: the approval page (who signs in, which
 * agent the client acts as) and what a token means at `/mcp`.
 *
 * What a grant carries: the approval mints a key of the chosen agent and stores it in the
 * grant's props, which the library encrypts with material only the token holder can
 * unwrap. A token therefore acts exactly as that agent's key would — same permissions, never
 * more — and dies with it: pausing the agent, revoking or rotating its keys, or the client
 * revoking its own key through the `key` tool.
 */
import type { OAuthAuthorizationServer, OAuthHelpers } from "@cloudflare/workers-oauth-provider";
import { config } from "../../config";
import { findAgentByKey } from "../../db/agents";

export const OAUTH_AUTHORIZE_PATH = "/oauth/authorize";
export const OAUTH_TOKEN_PATH = "/oauth/token";
export const OAUTH_REGISTER_PATH = "/oauth/register";
export const AUTHORIZATION_SERVER_METADATA_PATH = "/.well-known/oauth-authorization-server";

/** The one scope a grant holds: act at `/mcp` as the chosen agent. */
export const MCP_SCOPE = "mcp";

/** What the approval stores in a grant (encrypted by the library; only a token unwraps it). */
export interface McpGrantProps {
  agentId: string;
  keyId: string;
  /** The agent key minted for this grant: the token is this key at `/mcp`. */
  agentKey: string;
}

/** What the grant shows unencrypted, so a later approval or revocation can find the key to retire. */
export interface McpGrantMetadata {
  agentId: string;
  keyId: string;
}

/** The canonical resource every token is bound to (RFC 8707 audience). */
export function mcpResource(apiOrigin: string): string {
  return `${apiOrigin}/mcp`;
}

/**
 * The library, loaded on first use: it imports `cloudflare:workers`, which only the Worker
 * runtime has, and the route registry is also built in Node (docs/api.md is generated there).
 */
export function oauthLibrary() {
  return import("@cloudflare/workers-oauth-provider");
}

/** Built per request from the settings (the issuer is the API origin, which differs per deployment); construction only checks options. */
export async function authorizationServer(env: Env): Promise<OAuthAuthorizationServer<Env>> {
  const { apiOrigin } = config(env);
  const { OAuthAuthorizationServer, OAuthError } = await oauthLibrary();
  return new OAuthAuthorizationServer<Env>({
    issuer: apiOrigin,
    resources: [mcpResource(apiOrigin)],
    authorizeEndpoint: OAUTH_AUTHORIZE_PATH,
    tokenEndpoint: OAUTH_TOKEN_PATH,
    clientRegistrationEndpoint: OAUTH_REGISTER_PATH,
    scopesSupported: [MCP_SCOPE],
    // A refresh for a grant whose key was revoked (or rotated away) is refused, and the
    // library then ends the grant: the client goes back to the person at once instead of
    // holding tokens that /mcp refuses. A paused agent still refreshes: resuming it revives them.
    tokenExchangeCallback: async ({ grantType, props }) => {
      if (grantType !== "refresh_token") return;
      const found = await findAgentByKey(env, (props as McpGrantProps).agentKey);
      if (!found.ok && found.reason !== "paused") {
        throw new OAuthError("invalid_grant", { description: "The agent key this grant acted with was revoked; authorize again." });
      }
    },
  });
}

export async function oauthHelpers(env: Env): Promise<OAuthHelpers> {
  return (await authorizationServer(env)).getOAuthApi(env);
}

/** The agent key an OAuth access token stands for at `/mcp`, or null when the token is unknown, expired, revoked or for another audience. */
export async function agentKeyOfAccessToken(env: Env, token: string): Promise<string | null> {
  const validated = await (await authorizationServer(env)).validateToken<McpGrantProps>(mcpResource(config(env).apiOrigin), token, env);
  return validated?.props.agentKey ?? null;
}
