/**
 * The RFC 8628 device flow. An agent asks for a code, a human approves it in the console
 * at /device?code=…, and the agent's poll that first sees the approval receives the key
 * (created then, so it is never stored). Successes are exactly 200; pending, slow-down,
 * denied and expired answers use the RFC's string `error` form, which the CLI reads first.
 */
import type { Hono } from "hono";
import * as z from "zod";
import { defineRoute } from "../routes";
import type { AppContext, AppEnv } from "../types";
import { config } from "../../config";
import { RelayError } from "../../errors";
import { createAgent } from "../../db/agents";
import { consumeDeviceCode, findDeviceCode, recordDevicePoll, startDeviceFlow } from "../../db/codes";
import { newId, sha256Hex } from "../../auth/tokens";
import { agentName, errors } from "./schemas";

const SLOW_DOWN_STEP_SECONDS = 5;

type RfcError = "authorization_pending" | "slow_down" | "access_denied" | "expired_token";

const rfcText: Record<RfcError, string> = {
  authorization_pending: "The human has not approved this request yet; keep polling at the interval.",
  slow_down: "Polling too fast; add 5 seconds to your interval.",
  access_denied: "The human denied this request.",
  expired_token: "The device code expired; start again.",
};

function rfcError(c: AppContext, error: RfcError): Response {
  return c.json({ error, error_description: rfcText[error] }, 400);
}

export function deviceRoutes(app: Hono<AppEnv>): void {
  defineRoute(app, {
    method: "post", path: "/v1/device/code", tag: "identity", auth: "none", rateLimit: "deviceCode",
    summary: "Start a device authorization (RFC 8628)",
    body: z.strictObject({ name: agentName }),
    responses: {
      200: {
        description: "Codes for the agent and the human",
        schema: z.object({
          device_code: z.string(), user_code: z.string(), verification_uri: z.string(),
          verification_uri_complete: z.string(), expires_in: z.number().int(), interval: z.number().int(),
        }),
      },
      ...errors(400, 413, 426, 429),
    },
  }, async (c, { body }) => {
    const origin = config(c.env).apiOrigin;
    const flow = await startDeviceFlow(c.env, body.name);
    return c.json({
      device_code: flow.deviceCode,
      user_code: flow.userCode,
      verification_uri: `${origin}/device`,
      verification_uri_complete: `${origin}/device?code=${flow.userCode}`,
      expires_in: flow.expiresIn,
      interval: flow.interval,
    }, 200);
  });

  defineRoute(app, {
    method: "post", path: "/v1/device/token", tag: "identity", auth: "none", rateLimit: "deviceToken",
    summary: "Poll a device authorization; returns the agent key once, after approval",
    body: z.strictObject({ device_code: z.string().min(1).max(200) }),
    responses: {
      200: { description: "Approved: the agent and its key (once)", schema: z.object({ agent_id: z.string(), agent_key: z.string(), name: z.string() }) },
      400: {
        description: "RFC 8628 string error (authorization_pending, slow_down, access_denied, expired_token), or the envelope for an unknown code",
        schema: z.object({ error: z.enum(["authorization_pending", "slow_down", "access_denied", "expired_token"]), error_description: z.string() }),
      },
      ...errors(413, 426, 429),
    },
  }, async (c, { body }) => {
    const row = await findDeviceCode(c.env, body.device_code);
    if (!row) throw new RelayError("device_code_invalid", "This device code is not known to the relay.", { field: "device_code" });
    if (row.status === "consumed") throw new RelayError("device_code_invalid", "This device code was already exchanged for a key.", { field: "device_code" });
    if (Date.parse(row.expiresAt) <= Date.now()) return rfcError(c, "expired_token");
    if (row.status === "denied") return rfcError(c, "access_denied");

    const now = Date.now();
    const tooSoon = row.lastPolledAt !== null && now - row.lastPolledAt < row.intervalSeconds * 1000;
    const hash = await sha256Hex(body.device_code);
    await recordDevicePoll(c.env, hash, now, tooSoon ? row.intervalSeconds + SLOW_DOWN_STEP_SECONDS : row.intervalSeconds);
    if (row.status === "pending") return rfcError(c, tooSoon ? "slow_down" : "authorization_pending");

    // Approved: only the poll that flips it to consumed creates the agent and gets the key.
    const agentId = newId();
    if (!(await consumeDeviceCode(c.env, hash, agentId))) {
      throw new RelayError("device_code_invalid", "This device code was already exchanged for a key.", { field: "device_code" });
    }
    const { agent, key } = await createAgent(c.env, { id: agentId, name: row.name, ownerHumanId: row.humanId, via: "device" });
    return c.json({ agent_id: agent.id, agent_key: key.apiKey, name: row.name }, 200);
  });
}
