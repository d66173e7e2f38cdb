/**
 * POST /v1/register: an agent gets a key without a human in the loop. Gated by
 * REGISTRATION_MODE: `closed` answers 404 (so the CLI knows to use the device flow),
 * `secret` needs the operator's registration secret as the bearer, `open` needs nothing.
 * The agent starts unclaimed and must be claimed before it can deploy.
 */
import type { Hono, MiddlewareHandler } from "hono";
import * as z from "zod";
import { defineRoute } from "../routes";
import type { AppEnv } from "../types";
import { config } from "../../config";
import { RelayError } from "../../errors";
import { createAgent } from "../../db/agents";
import { constantTimeEqual } from "../../auth/tokens";
import { bearerToken } from "../middleware/auth";
import { agentName, errors } from "./schemas";

/** Closed and secret modes refuse before the body is read (after the per-IP limiter). */
const registrationGate: MiddlewareHandler<AppEnv> = async (c, next) => {
  const cfg = config(c.env);
  if (cfg.registrationMode === "closed") {
    throw new RelayError("not_found", "Direct registration is closed on this relay; use the device flow (POST /v1/device/code).");
  }
  if (cfg.registrationMode === "secret") {
    const presented = bearerToken(c);
    if (!presented || !cfg.registrationSecret || !constantTimeEqual(presented, cfg.registrationSecret)) {
      throw new RelayError("unauthorized", "This relay needs its registration secret as `Authorization: Bearer <secret>`.");
    }
  }
  await next();
};

export function registerRoutes(app: Hono<AppEnv>): void {
  defineRoute(app, {
    method: "post", path: "/v1/register", tag: "identity", auth: "registration", rateLimit: "register", guard: registrationGate,
    summary: "Register an unclaimed agent and receive its API key once",
    body: z.strictObject({ name: agentName.optional() }), bodyOptional: true,
    responses: {
      201: { description: "The new agent and its key (shown once)", schema: z.object({ agent_id: z.string(), api_key: z.string(), key_prefix: z.string() }) },
      ...errors(400, 401, 404, 413, 426, 429),
    },
  }, async (c, { body }) => {
    const { agent, key } = await createAgent(c.env, { name: body.name ?? null, ownerHumanId: null, via: "direct" });
    return c.json({ agent_id: agent.id, api_key: key.apiKey, key_prefix: key.keyPrefix }, 201);
  });
}
