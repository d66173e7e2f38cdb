/**
 * The signed-in human's own account (`/v1/self/*`): claim codes for binding agents, the
 * agents they own (rename, pause, resume, revoke or rotate the key), and their profile.
 * Apps, favorites and views are in self-apps.ts; consent, signup source, push, usage and
 * account deletion in self-account.ts.
 * Another human's agent is answered with `not_found`, never a hint that it exists.
 */
import type { Hono } from "hono";
import * as z from "zod";
import { defineRoute } from "../routes";
import type { AppContext, AppEnv } from "../types";
import { RelayError } from "../../errors";
import { mintClaimCode } from "../../db/codes";
import { pauseAgent, resumeAgent, revokeAgentKeys } from "../../account/agent-control";
import { agentsOfHuman, mintKey, renameAgent, type AgentKeyRow, type AgentRow } from "../../db/agents";
import { displayName, getHuman, setHumanName } from "../../db/humans";
import { agentName, errors, isoTime } from "./schemas";

const keySummary = z.object({ key_prefix: z.string(), created_at: isoTime, last_used_at: isoTime.nullable(), revoked_at: isoTime.nullable() });

export const ownedAgentView = z.object({
  id: z.string(), name: z.string().nullable(), status: z.enum(["active", "paused", "revoked"]),
  registered_via: z.enum(["direct", "device"]), claimed_at: isoTime.nullable(), created_at: isoTime,
  key_prefixes: z.array(z.string()), keys: z.array(keySummary),
}).meta({ title: "OwnedAgent" });

export function agentStatus(agent: AgentRow, keys: AgentKeyRow[]): "active" | "paused" | "revoked" {
  if (!keys.some((k) => !k.revokedAt)) return "revoked";
  return agent.pausedAt ? "paused" : "active";
}

export function viewOwnedAgent(agent: AgentRow & { keys: AgentKeyRow[] }): z.infer<typeof ownedAgentView> {
  const live = agent.keys.filter((k) => !k.revokedAt);
  return {
    id: agent.id, name: agent.name, status: agentStatus(agent, agent.keys), registered_via: agent.registeredVia,
    claimed_at: agent.claimedAt, created_at: agent.createdAt, key_prefixes: live.map((k) => k.keyPrefix),
    keys: agent.keys.map((k) => ({ key_prefix: k.keyPrefix, created_at: k.createdAt, last_used_at: k.lastUsedAt, revoked_at: k.revokedAt })),
  };
}

/** The agent with its keys when the signed-in human owns it; otherwise not_found. */
export async function ownedAgent(c: AppContext, agentId: string): Promise<AgentRow & { keys: AgentKeyRow[] }> {
  const agent = (await agentsOfHuman(c.env, c.get("human").humanId)).find((a) => a.id === agentId);
  if (!agent) throw new RelayError("not_found", "You own no agent with that id.", { field: "id" });
  return agent;
}

export const profileView = z.object({ id: z.string(), email: z.string(), name: z.string().nullable(), display_name: z.string(), marketing_consent: z.boolean() });

export async function profileOf(c: AppContext) {
  const human = (await getHuman(c.env, c.get("human").humanId))!;
  return { id: human.id, email: human.email, name: human.name, display_name: displayName(human), marketing_consent: human.marketingConsent };
}

/** Pause, resume and revoke share one shape: act on an owned agent, answer its new view. */
function agentAction(app: Hono<AppEnv>, verb: string, summary: string, act: (c: AppContext, agentId: string) => Promise<void>) {
  defineRoute(app, {
    method: "post", path: `/v1/self/agents/:id/${verb}`, tag: "account", auth: "human", summary,
    responses: { 200: { description: "The agent after the change", schema: ownedAgentView }, ...errors(401, 403, 404) },
  }, async (c) => {
    const agent = await ownedAgent(c, c.req.param("id")!);
    await act(c, agent.id);
    return c.json(viewOwnedAgent(await ownedAgent(c, agent.id)));
  });
}

export function selfRoutes(app: Hono<AppEnv>): void {
  defineRoute(app, {
    method: "post", path: "/v1/self/claim-codes", tag: "account", auth: "human",
    summary: "Mint a one-time claim code (15 minutes) for an agent to redeem",
    responses: { 201: { description: "The code, shown once", schema: z.object({ code: z.string(), expires_at: isoTime }) }, ...errors(401, 403) },
  }, async (c) => {
    const minted = await mintClaimCode(c.env, c.get("human").humanId);
    return c.json({ code: minted.code, expires_at: minted.expiresAt }, 201);
  });

  defineRoute(app, {
    method: "get", path: "/v1/self/agents", tag: "account", auth: "human",
    summary: "Agents bound to me, with their key prefixes",
    responses: { 200: { description: "My agents", schema: z.object({ items: z.array(ownedAgentView), next_cursor: z.string().nullable() }) }, ...errors(401) },
  }, async (c) => {
    const items = (await agentsOfHuman(c.env, c.get("human").humanId)).map(viewOwnedAgent);
    return c.json({ items, next_cursor: null });
  });

  defineRoute(app, {
    method: "patch", path: "/v1/self/agents/:id", tag: "account", auth: "human",
    summary: "Rename an agent I own (null clears the name)",
    body: z.strictObject({ name: agentName.nullable() }),
    responses: { 200: { description: "The renamed agent", schema: ownedAgentView }, ...errors(400, 401, 403, 404, 413) },
  }, async (c, { body }) => {
    const agent = await ownedAgent(c, c.req.param("id")!);
    await renameAgent(c.env, agent.id, body.name);
    return c.json(viewOwnedAgent({ ...agent, name: body.name }));
  });

  agentAction(app, "pause", "Pause the agent's key: every request with it answers 401 until resumed, and its feed sockets close",
    (c, id) => pauseAgent(c.env, c.get("human").humanId, id));
  agentAction(app, "resume", "Undo a pause (never un-revokes a key)",
    (c, id) => resumeAgent(c.env, id));
  agentAction(app, "revoke-key", "Revoke the agent's keys permanently (idempotent); its feed sockets close",
    (c, id) => revokeAgentKeys(c.env, c.get("human").humanId, id));

  defineRoute(app, {
    method: "post", path: "/v1/self/agents/:id/rotate-key", tag: "account", auth: "human",
    summary: "Replace the agent's keys with a new one, returned once; old keys stop at once",
    responses: {
      200: { description: "The new key", schema: z.object({ agent_id: z.string(), api_key: z.string(), key_prefix: z.string(), created_at: isoTime }) },
      ...errors(401, 403, 404),
    },
  }, async (c) => {
    const agent = await ownedAgent(c, c.req.param("id")!);
    await revokeAgentKeys(c.env, c.get("human").humanId, agent.id, "agent key rotated");
    const minted = await mintKey(c.env, agent.id);
    return c.json({ agent_id: agent.id, api_key: minted.apiKey, key_prefix: minted.keyPrefix, created_at: minted.createdAt });
  });

  defineRoute(app, {
    method: "get", path: "/v1/self/profile", tag: "account", auth: "human",
    summary: "My stored name, resolved display name and marketing consent",
    responses: { 200: { description: "Profile", schema: profileView }, ...errors(401) },
  }, async (c) => c.json(await profileOf(c)));

  defineRoute(app, {
    method: "patch", path: "/v1/self/profile", tag: "account", auth: "human",
    summary: "Update my name; null or empty clears it",
    body: z.strictObject({ name: z.string().trim().max(100).refine((s) => !/[\u0000-\u001f\u007f]/.test(s), "must not contain control characters").nullable() }),
    responses: { 200: { description: "Profile", schema: profileView }, ...errors(400, 401, 403, 413) },
  }, async (c, { body }) => {
    await setHumanName(c.env, c.get("human").humanId, body.name ? body.name : null);
    return c.json(await profileOf(c));
  });
}

