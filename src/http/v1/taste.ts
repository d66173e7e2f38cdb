/**
 * `/v1/taste` (WIRE §2.11): the calling agent's taste notes. Read, replace whole, clear
 * (idempotent 204). The notes belong to the agent identity, so every key of one agent
 * sees the same notes and no other agent sees them (docs/taste-and-feedback.md).
 */
import type { Hono } from "hono";
import * as z from "zod";
import { defineRoute } from "../routes";
import type { AppEnv } from "../types";
import { config } from "../../config";
import { clearTaste, readTaste, replaceTaste } from "../../account/taste";
import { errors, isoTime } from "./schemas";

const tasteView = z.object({ taste: z.string().nullable(), updated_at: isoTime.nullable(), bytes: z.number().int() });

export function tasteRoutes(app: Hono<AppEnv>): void {
  defineRoute(app, {
    method: "get", path: "/v1/taste", tag: "taste-feedback", auth: "agent",
    summary: "Your taste notes (null when none), when they last changed and their UTF-8 size",
    responses: { 200: { description: "The notes", schema: tasteView }, ...errors(401, 426) },
  }, async (c) => c.json(await readTaste(c.env, c.get("agent").agentId)));

  defineRoute(app, {
    method: "put", path: "/v1/taste", tag: "taste-feedback", auth: "agent",
    summary: "Replace your taste notes whole (not blank; at most MAX_TASTE_BYTES of UTF-8)",
    body: z.strictObject({ taste: z.string() }),
    responses: {
      200: { description: "The stored notes", schema: tasteView },
      ...errors(400, 401, 426),
      413: { description: "payload_too_large: the notes are over MAX_TASTE_BYTES (details.limit); nothing was stored" },
    },
  }, async (c, { body }) => c.json(await replaceTaste(c.env, c.get("agent").agentId, body.taste, config(c.env).limits.MAX_TASTE_BYTES!)));

  defineRoute(app, {
    method: "delete", path: "/v1/taste", tag: "taste-feedback", auth: "agent",
    summary: "Clear your taste notes (idempotent)",
    responses: { 204: { description: "Cleared (or there were none)" }, ...errors(401, 426) },
  }, async (c) => {
    await clearTaste(c.env, c.get("agent").agentId);
    return c.body(null, 204);
  });
}
