/**
 * The agent's own identity: redeem a claim code (one-way binding to a human) and manage
 * its keys. `GET /v1/keys` returns the caller's key, not a list; `DELETE /v1/keys/:id`
 * takes the caller's own agent id and revokes the key it was called with.
 */
import type { Hono } from "hono";
import * as z from "zod";
import { defineRoute } from "../routes";
import type { AppEnv } from "../types";
import { endAgentSockets } from "../../apps/sockets";
import { RelayError } from "../../errors";
import { claimAgent, getAgent, getKey, mintKey, revokeKey } from "../../db/agents";
import { findLiveClaimCode, releaseClaimCode, spendClaimCode } from "../../db/codes";
import { errors, isoTime } from "./schemas";

const keyView = z.object({
  agent_id: z.string(), name: z.string().nullable(), key_prefix: z.string(),
  created_at: isoTime, last_used_at: isoTime.nullable(), revoked_at: isoTime.nullable(),
});

export function agentRoutes(app: Hono<AppEnv>): void {
  defineRoute(app, {
    method: "post", path: "/v1/agents/claim", tag: "identity", auth: "agent", rateLimit: "claim",
    summary: "Redeem a claim code and bind this agent to the human who minted it",
    body: z.strictObject({ code: z.string().trim().min(1).max(200) }),
    responses: {
      200: { description: "Claimed", schema: z.object({ ok: z.literal(true), owner_human_id: z.string(), claimed_at: isoTime }) },
      ...errors(400, 401, 409, 413, 426, 429),
    },
  }, async (c, { body }) => {
    const caller = c.get("agent");
    if (caller.ownerHumanId) throw new RelayError("agent_already_claimed", "This agent is already bound to a human.", { owner_human_id: caller.ownerHumanId });
    const code = await findLiveClaimCode(c.env, body.code);
    if (!code) throw new RelayError("claim_code_invalid", "This claim code is unknown, expired or already used.", { field: "code" });
    if (!(await spendClaimCode(c.env, code.codeHash, caller.agentId))) {
      throw new RelayError("claim_code_invalid", "This claim code was just used by another agent.", { field: "code" });
    }
    const claimedAt = await claimAgent(c.env, caller.agentId, code.humanId);
    if (!claimedAt) {
      // A concurrent claim bound the agent first: give the code back so it is not wasted.
      await releaseClaimCode(c.env, code.codeHash, caller.agentId);
      throw new RelayError("agent_already_claimed", "This agent was claimed by a concurrent request.");
    }
    return c.json({ ok: true, owner_human_id: code.humanId, claimed_at: claimedAt }, 200);
  });

  defineRoute(app, {
    method: "get", path: "/v1/keys", tag: "identity", auth: "agent",
    summary: "The caller's own key and identity",
    responses: { 200: { description: "The caller's key", schema: keyView }, ...errors(401, 426) },
  }, async (c) => {
    const caller = c.get("agent");
    const key = await getKey(c.env, caller.keyId);
    return c.json({
      agent_id: caller.agentId, name: caller.name, key_prefix: caller.keyPrefix,
      created_at: key!.createdAt, last_used_at: key!.lastUsedAt, revoked_at: key!.revokedAt,
    });
  });

  defineRoute(app, {
    method: "post", path: "/v1/keys", tag: "identity", auth: "agent",
    summary: "Mint a sibling key for the same agent (returned once)",
    body: z.strictObject({}), bodyOptional: true,
    responses: {
      201: {
        description: "The new key",
        schema: z.object({ agent_id: z.string(), api_key: z.string(), key_prefix: z.string(), name: z.string().nullable(), created_at: isoTime }),
      },
      ...errors(400, 401, 426),
    },
  }, async (c) => {
    const caller = c.get("agent");
    const minted = await mintKey(c.env, caller.agentId);
    const agent = await getAgent(c.env, caller.agentId);
    return c.json({ agent_id: caller.agentId, api_key: minted.apiKey, key_prefix: minted.keyPrefix, name: agent?.name ?? null, created_at: minted.createdAt }, 201);
  });

  defineRoute(app, {
    method: "delete", path: "/v1/keys/:id", tag: "identity", auth: "agent",
    summary: "Revoke the key this request is made with; :id is the caller's agent id",
    responses: { 204: { description: "Revoked" }, ...errors(401, 403, 426) },
  }, async (c) => {
    const caller = c.get("agent");
    if (c.req.param("id") !== caller.agentId) throw new RelayError("forbidden", "You can only revoke your own key: use your agent_id from GET /v1/keys.");
    await revokeKey(c.env, caller.keyId);
    // Sockets do not remember which key opened them: all of the agent's reconnect, and only those with a live key come back.
    await endAgentSockets(c.env, caller.ownerHumanId, caller.agentId, "agent key revoked");
    return c.body(null, 204);
  });
}
