/**
 * The owner's side of inbound hooks (WIRE §2.7; spec A notes 19–21): the app's hooks with
 * their secret URLs and counts, rotating a URL, setting and clearing the signing secret,
 * backfilling bodies (a bare array or `{ bodies }`, CONTRACT §6), and the delivery journal
 * with replay. The owner or its agents only; storage and behaviour live in
 * src/effects/ingest/.
 */
import type { Hono } from "hono";
import * as z from "zod";
import { defineRoute } from "../routes";
import type { AppEnv } from "../types";
import { ownedApp, requireLive } from "./app-access";
import { errors, isoTime } from "./schemas";
import type { Config } from "../../config";
import type { JsonValue } from "../../manifest";
import { listHooks, rotateHook } from "../../effects/ingest/hooks";
import { clearSigningSecret, setSigningSecret, SIGNING_GRACE_DEFAULT_SECONDS, SIGNING_GRACE_MAX_SECONDS } from "../../effects/ingest/signing";
import { backfill } from "../../effects/ingest/backfill";
import { listIngestDeliveries, replayIngestDelivery } from "../../effects/ingest/journal";

const gone = { 410: { description: "soft_deleted: the app is in the trash" } };
const H = "/v1/apps/:id/ingest-hooks/:name";

const hookSchema = z.object({
  name: z.string(), url: z.string(), collection: z.string().nullable(), mode: z.string().nullable(), wake: z.boolean().nullable(),
  handshake: z.string().nullable(), disabledAt: isoTime.nullable(), createdAt: isoTime,
  signingSecret: z.object({ configured: z.boolean(), fingerprint: z.string().nullable(), setAt: isoTime.nullable(), previousUntil: isoTime.nullable() }),
  verify: z.null(), deliveries: z.object({ accepted: z.number().int(), failed: z.number().int(), dropped_duplicate: z.number().int() }),
}).meta({ title: "IngestHook" });

const deliveryStatus = z.enum(["processing", "accepted", "dropped_duplicate", "failed"]);
const deliverySchema = z.object({
  id: z.string(), hook: z.string(), status: deliveryStatus, source: z.enum(["live", "backfill", "replay"]), dedupeKey: z.string().nullable(),
  rowKey: z.string().nullable(), error: z.object({ code: z.string(), message: z.string() }).nullable(), payload: z.unknown(),
  payloadTruncated: z.boolean(), replayOfId: z.string().nullable(), createdAt: isoTime,
}).meta({ title: "IngestDelivery" });

/** A backfill call may carry INGEST_BACKFILL_MAX_BODIES bodies of INGEST_MAX_BODY_BYTES each, plus the JSON around them. */
function backfillBodyBytes(cfg: Config): number {
  const { INGEST_BACKFILL_MAX_BODIES: bodies, INGEST_MAX_BODY_BYTES: each } = cfg.limits;
  return Math.max(cfg.maxJsonBodyBytes, bodies * (each + 16) + 1024);
}

export function ingestHookRoutes(app: Hono<AppEnv>): void {
  defineRoute(app, {
    method: "get", path: "/v1/apps/:id/ingest-hooks", tag: "ingest", auth: "owner",
    summary: "The app's inbound hooks: full secret URL, rule fields (null once the rule left the manifest, disabledAt set), signing secret state and delivery counts",
    responses: { 200: { description: "Hooks", schema: z.object({ hooks: z.array(hookSchema) }) }, ...errors(401, 404), ...gone },
  }, async (c) => {
    const target = requireLive(await ownedApp(c, c.req.param("id")!));
    return c.json({ hooks: await listHooks(c.env, target.id) });
  });

  defineRoute(app, {
    method: "post", path: `${H}/rotate`, tag: "ingest", auth: "owner",
    summary: "A new secret URL for the hook, returned once; the old URL answers 404 at once",
    body: z.strictObject({}), bodyOptional: true,
    responses: { 200: { description: "The new URL", schema: z.object({ hook: z.object({ name: z.string(), url: z.string() }) }) }, ...errors(400, 401, 404), ...gone },
  }, async (c) => {
    const target = requireLive(await ownedApp(c, c.req.param("id")!));
    return c.json({ hook: await rotateHook(c.env, target.id, c.req.param("name")!) });
  });

  defineRoute(app, {
    method: "put", path: `${H}/signing-secret`, tag: "ingest", auth: "owner",
    summary: "Set the hook's signing secret: supplied, or minted (ihk_…, returned once); the previous one keeps verifying for graceSeconds (default 3600, at most 86400)",
    body: z.strictObject({
      secret: z.string().min(16).max(256).refine((s) => !/[\u0000-\u001f\u007f]/.test(s), "must not contain control characters").optional(),
      graceSeconds: z.number().int().min(0).max(SIGNING_GRACE_MAX_SECONDS).optional(),
    }), bodyOptional: true,
    responses: {
      200: { description: "Minted: { secret, fingerprint, setAt }; supplied: { fingerprint, setAt }", schema: z.object({ secret: z.string().optional(), fingerprint: z.string(), setAt: isoTime }) },
      ...errors(400, 401, 404), ...gone,
    },
  }, async (c, { body }) => {
    const target = requireLive(await ownedApp(c, c.req.param("id")!));
    return c.json(await setSigningSecret(c.env, target.id, c.req.param("name")!, { secret: body.secret, graceSeconds: body.graceSeconds ?? SIGNING_GRACE_DEFAULT_SECONDS }));
  });

  defineRoute(app, {
    method: "delete", path: `${H}/signing-secret`, tag: "ingest", auth: "owner",
    summary: "Clear the hook's signing secret (current, previous and grace); idempotent. A verifying hook then refuses every delivery",
    responses: { 200: { description: "Cleared", schema: z.object({ ok: z.literal(true) }) }, ...errors(401, 404), ...gone },
  }, async (c) => {
    const target = requireLive(await ownedApp(c, c.req.param("id")!));
    await clearSigningSecret(c.env, target.id, c.req.param("name")!);
    return c.json({ ok: true as const });
  });

  defineRoute(app, {
    method: "post", path: `${H}/backfill`, tag: "ingest", auth: "owner", maxBodyBytes: backfillBodyBytes,
    summary: "Run raw provider bodies (a bare array or { bodies }) through the hook's rule: no brakes, no signature, no wake, dedupe on; one outcome per body in input order (at most INGEST_BACKFILL_MAX_BODIES)",
    body: z.union([z.array(z.unknown()), z.strictObject({ bodies: z.array(z.unknown()) })]),
    responses: {
      200: {
        description: "Counts and per-body outcomes",
        schema: z.object({ total: z.number().int(), accepted: z.number().int(), dropped_duplicate: z.number().int(), failed: z.number().int(), outcomes: z.array(z.enum(["accepted", "dropped_duplicate", "failed"])) }),
      },
      ...errors(400, 401, 404, 413), ...gone,
    },
  }, async (c, { body }) => {
    const target = requireLive(await ownedApp(c, c.req.param("id")!));
    const bodies = (Array.isArray(body) ? body : body.bodies) as JsonValue[];
    return c.json(await backfill(c.env, target, c.req.param("name")!, bodies));
  });

  defineRoute(app, {
    method: "get", path: "/v1/apps/:id/ingest/deliveries", tag: "ingest", auth: "owner",
    summary: "The inbound delivery journal, newest first (payload cut past 8 KiB, flagged payloadTruncated); filter by hook and status",
    query: z.object({
      hook: z.string().min(1).max(64).optional(), status: deliveryStatus.optional(), limit: z.coerce.number().int().min(1).max(100).optional(),
    }),
    responses: { 200: { description: "Deliveries", schema: z.object({ deliveries: z.array(deliverySchema) }) }, ...errors(400, 401, 404), ...gone },
  }, async (c, { query }) => {
    const target = requireLive(await ownedApp(c, c.req.param("id")!));
    return c.json({ deliveries: await listIngestDeliveries(c.env, target.id, { hook: query.hook, status: query.status, limit: query.limit ?? 25 }) });
  });

  defineRoute(app, {
    method: "post", path: "/v1/apps/:id/ingest/deliveries/:deliveryId/replay", tag: "ingest", auth: "owner",
    summary: "Run a journaled body again through the hook's current rule, bypassing dedupe; appends a delivery (409 when the hook's rule left the manifest)",
    body: z.strictObject({}), bodyOptional: true,
    responses: { 200: { description: "The new delivery", schema: z.object({ delivery: deliverySchema }) }, ...errors(400, 401, 404, 409), ...gone },
  }, async (c) => {
    const target = requireLive(await ownedApp(c, c.req.param("id")!));
    return c.json({ delivery: await replayIngestDelivery(c.env, target, c.req.param("deliveryId")!) });
  });
}
