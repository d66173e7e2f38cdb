/**
 * Each MCP OAuth grant holds an agent key minted at approval (authorization-server.ts).
 * When the library ends a grant — a new approval for the same client replaces the old one,
 * or the client revokes its refresh token (RFC 7009) — that key would stay valid with no one
 * able to use it. These helpers note the grants' keys before such a step and revoke the
 * keys of the grants that are gone after it, so a key lives exactly as long as its grant.
 */
import { revokeKey } from "../../db/agents";
import type { GrantSummary } from "@cloudflare/workers-oauth-provider";
import { oauthHelpers, type McpGrantMetadata } from "./authorization-server";

interface GrantKey {
  grantId: string;
  keyId: string;
}

/** A person's live grants, every page of them. */
export async function grantsOf(env: Env, humanId: string): Promise<GrantSummary[]> {
  const helpers = await oauthHelpers(env);
  const found: GrantSummary[] = [];
  let cursor: string | undefined;
  do {
    const page = await helpers.listUserGrants(humanId, cursor === undefined ? {} : { cursor });
    found.push(...page.items);
    cursor = page.cursor;
  } while (cursor);
  return found;
}

/** The key a grant holds, from its unencrypted metadata; undefined for a grant the relay did not make. */
export function keyIdOf(grant: GrantSummary): string | undefined {
  const keyId = (grant.metadata as Partial<McpGrantMetadata> | undefined)?.keyId;
  return typeof keyId === "string" ? keyId : undefined;
}

/** The keys of a person's live grants (all clients, or one). */
export async function grantKeysOf(env: Env, humanId: string, clientId?: string): Promise<GrantKey[]> {
  return (await grantsOf(env, humanId)).flatMap((grant) => {
    const keyId = keyIdOf(grant);
    return keyId !== undefined && (clientId === undefined || grant.clientId === clientId) ? [{ grantId: grant.id, keyId }] : [];
  });
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
