/**
 * The MCP clients a person connected through OAuth, as the console shows them: which client
 * (its self-declared name), acting as which of their agents, since when and until when; and
 * disconnecting one, which ends its grant (every token of it) and revokes the agent key the
 * grant held, so nothing of it keeps working.
 */
import { revokeKey } from "../../db/agents";
import { oauthHelpers, type McpGrantMetadata } from "./authorization-server";
import { grantsOf, keyIdOf } from "./grant-keys";

export interface ConnectedClient {
  grantId: string;
  clientName: string;
  redirectHost: string | null;
  agentId: string | null;
  /** ISO-8601. */
  connectedAt: string;
  /** ISO-8601; null when the grant has no end of its own. */
  expiresAt: string | null;
}

function isoOf(seconds: number | undefined): string | null {
  return seconds === undefined ? null : new Date(seconds * 1000).toISOString();
}

function hostOf(uri: string | undefined): string | null {
  if (!uri) return null;
  try {
    return new URL(uri).host;
  } catch {
    return null;
  }
}

export async function connectedClients(env: Env, humanId: string): Promise<ConnectedClient[]> {
  const helpers = await oauthHelpers(env);
  const grants = await grantsOf(env, humanId);
  const clients = await Promise.all(grants.map((grant) => helpers.lookupClient(grant.clientId).catch(() => null)));
  return grants.map((grant, index) => ({
    grantId: grant.id,
    clientName: clients[index]?.clientName?.trim() || grant.clientId,
    redirectHost: hostOf(grant.redirectUri),
    agentId: (grant.metadata as Partial<McpGrantMetadata> | undefined)?.agentId ?? null,
    connectedAt: isoOf(grant.createdAt)!,
    expiresAt: isoOf(grant.expiresAt),
  })).sort((a, b) => b.connectedAt.localeCompare(a.connectedAt));
}

/** Ends one of the person's grants and revokes its key; false when they hold no grant with that id. */
export async function disconnectClient(env: Env, humanId: string, grantId: string): Promise<boolean> {
  const grant = (await grantsOf(env, humanId)).find((candidate) => candidate.id === grantId);
  if (!grant) return false;
  await (await oauthHelpers(env)).revokeGrant(grant.id, humanId);
  const keyId = keyIdOf(grant);
  if (keyId !== undefined) await revokeKey(env, keyId);
  return true;
}
