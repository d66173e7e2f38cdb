/**
 * Each MCP OAuth grant holds an agent key minted at approval (authorization-server.ts).
 * When the library ends a grant — a new approval for the same client replaces the old one,
 * or the client revokes its refresh token (RFC 7009) — that key would stay valid with no one
 * able to use it. These helpers note the grants' keys before such a step and revoke the
 * keys of the grants that are gone after it, so a key lives exactly as long as its grant.
 */
import { revokeKey } from "../../db/agents";
import { oauthHelpers, type McpGrantMetadata } from "./authorization-server";

interface GrantKey {
  grantId: string;
  keyId: string;
}

/** The keys of a person's live grants (all clients, or one). */
export async function grantKeysOf(env: Env, humanId: string, clientId?: string): Promise<GrantKey[]> {
  const helpers = await oauthHelpers(env);
  const found: GrantKey[] = [];
  let cursor: string | undefined;
  do {
    const page = await helpers.listUserGrants(humanId, cursor === undefined ? {} : { cursor });
    for (const grant of page.items) {
      const keyId = (grant.metadata as Partial<McpGrantMetadata> | undefined)?.keyId;
      if (typeof keyId === "string" && (clientId === undefined || grant.clientId === clientId)) found.push({ grantId: grant.id, keyId });
    }
    cursor = page.cursor;
  } while (cursor);
  return found;
}

/** Revokes the key of every grant in `before` that no longer exists. */
export async function retireKeysOfEndedGrants(env: Env, humanId: string, before: GrantKey[]): Promise<void> {
  if (before.length === 0) return;
  const live = new Set((await grantKeysOf(env, humanId)).map((grant) => grant.grantId));
  for (const grant of before) if (!live.has(grant.grantId)) await revokeKey(env, grant.keyId);
}

/** The grant a revocation request names (`token=<user>:<grant>:<secret>`, no `grant_type`), or null for other token-endpoint requests. */
function revokedGrantOf(body: Uint8Array): { humanId: string; grantId: string } | null {
  const form = new URLSearchParams(new TextDecoder().decode(body));
  const parts = (form.get("token") ?? "").split(":");
  if (form.has("grant_type") || parts.length !== 3) return null;
  return { humanId: parts[0], grantId: parts[1] };
}

/**
 * Around a token-endpoint request: the keys a revocation may end, read before it runs
 * (`before`), then retired once the library has answered (`after`).
 */
export async function aroundRevocation(env: Env, body: Uint8Array): Promise<{ after: () => Promise<void> }> {
  const named = revokedGrantOf(body);
  if (!named) return { after: async () => {} };
  const before = (await grantKeysOf(env, named.humanId)).filter((grant) => grant.grantId === named.grantId);
  return { after: () => retireKeysOfEndedGrants(env, named.humanId, before) };
}
