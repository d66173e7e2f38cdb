/**
 * The inbound hook URL itself (WIRE §2.7, §6.3; spec B "Inbound hook outcomes"): the
 * outside world POSTs JSON to `{API}/v1/ingest/<hookId>/<secret>` and the body becomes a
 * row of the hook's collection. No credential: the URL secret (and, when the rule says
 * `verify`, the signature) is the authority. The guard checks answer their own statuses
 * in this order: the per-IP limiter (429), the hook (404), the media type (415), the
 * size (413), the signature (401, never journaled), the handshake (echoed, never
 * journaled), the app's hourly cap (429). Every delivery past them is journaled and
 * answered 200 `{ ok: true }`, accepted, duplicate or failed alike, except a write the
 * app's quota refuses (503) and an `if_match` that does not match (409).
 *
 * GET with `?challenge=` is the other handshake form (spec A; CONTRACT §6).
 */
import type { Hono } from "hono";
import * as z from "zod";
import { defineRoute } from "../routes";
import type { AppContext, AppEnv } from "../types";
import { errorEnvelope, errors, ok } from "./schemas";
import { config } from "../../config";
import { RelayError } from "../../errors";
import { readBodyBytes } from "../body";
import { noteActivity } from "../../apps/activity";
import type { JsonValue } from "../../manifest";
import { HOUR_MS, hookForUrl } from "../../effects/ingest/hooks";
import { requireSignature, SIGNATURE_HEADER } from "../../effects/ingest/signing";
import { challengeOf } from "../../effects/ingest/mapping";
import { deliver } from "../../effects/ingest/deliver";
import { afterAcceptedDelivery } from "../../effects/ingest/wake";

const UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** The body as text and parsed JSON; undefined for either when it is not (the delivery is then journaled failed). */
function parseBody(bytes: Uint8Array): { text: string; body: JsonValue | undefined } {
  let text: string;
  try {
    text = UTF8.decode(bytes);
  } catch {
    return { text: `[${bytes.byteLength} bytes that are not UTF-8]`, body: undefined };
  }
  try {
    return { text, body: JSON.parse(text) as JsonValue };
  } catch {
    return { text, body: undefined };
  }
}

async function readCapped(c: AppContext): Promise<Uint8Array> {
  const limit = config(c.env).limits.INGEST_MAX_BODY_BYTES;
  try {
    return await readBodyBytes(c, limit);
  } catch (err) {
    if (err instanceof RelayError && err.code === "payload_too_large") throw new RelayError("ingest_payload_too_large", `The body is over ${limit} bytes.`, { limit });
    throw err;
  }
}

/** 429 once the app's journal holds INGEST_APP_HOURLY_CAP live deliveries of this clock hour. */
function hourlyBrake(c: AppContext, liveThisHour: number, now = Date.now()): void {
  const cap = config(c.env).limits.INGEST_APP_HOURLY_CAP;
  if (liveThisHour >= cap) {
    const retryAfter = Math.max(1, Math.ceil((HOUR_MS - (now % HOUR_MS)) / 1000));
    throw new RelayError("rate_limited", `This app takes at most ${cap} inbound deliveries an hour; try again in ${retryAfter} s.`, { retry_after: retryAfter, limit: cap }, { "Retry-After": String(retryAfter) });
  }
}

const hookParams = "/v1/ingest/:hookId/:secret";

export function ingestRoutes(app: Hono<AppEnv>): void {
  defineRoute(app, {
    method: "post", path: hookParams, tag: "ingest", auth: "none", rateLimit: "ingest",
    summary: "Receive a JSON delivery into the hook's collection (no credential: the URL secret, and the signature when the rule verifies). 200 { ok: true } for accepted, duplicate and failed deliveries alike; a handshake hook echoes a body's string `challenge`",
    responses: {
      200: { description: "Journaled (accepted, dropped_duplicate or failed), or the handshake's challenge as text/plain", schema: ok },
      401: { description: "ingest_signature_invalid: missing, malformed or wrong signature, or no signing secret set yet (not journaled)", schema: errorEnvelope },
      404: { description: "ingest_not_found: unknown hook, wrong secret or disabled hook", schema: errorEnvelope },
      409: { description: "conflict: if_match does not match the row's version (journaled failed)", schema: errorEnvelope },
      413: { description: "ingest_payload_too_large: over INGEST_MAX_BODY_BYTES", schema: errorEnvelope },
      415: { description: "ingest_unsupported_media_type: not application/json", schema: errorEnvelope },
      429: { description: "rate_limited: too many deliveries from this address (RATE_LIMIT_INGEST) or to this app this hour (INGEST_APP_HOURLY_CAP)", schema: errorEnvelope },
      503: { description: "ingest_write_unavailable: the app is at its row or storage quota (journaled failed; retryable)", schema: errorEnvelope },
    },
  }, async (c) => {
    const { hook, app: target, liveThisHour } = await hookForUrl(c.env, c.req.param("hookId")!, c.req.param("secret")!);
    const type = c.req.header("content-type") ?? "";
    if (!/^application\/(.+\+)?json\s*(;|$)/i.test(type)) {
      throw new RelayError("ingest_unsupported_media_type", `Inbound hooks take application/json, not ${type.slice(0, 100) || "a body without a content type"}.`);
    }
    const bytes = await readCapped(c);
    if (hook.rule.verify) await requireSignature(hook, c.req.header(SIGNATURE_HEADER) ?? null, bytes);
    const { text, body } = parseBody(bytes);
    const challenge = hook.rule.handshake === "echo" && body !== undefined ? challengeOf(body) : null;
    if (challenge !== null) return c.text(challenge, 200);
    hourlyBrake(c, liveThisHour);
    const outcome = await deliver(c.env, {
      app: { id: target.id, version: target.currentVersion! }, hook, source: "live", rawBody: text, body, headers: c.req.raw.headers, dedupe: true,
      defer: (work) => c.executionCtx.waitUntil(work), usageOf: target.ownerHumanId,
    });
    if (outcome.status === "accepted") {
      noteActivity(c.env, (work) => c.executionCtx.waitUntil(work), target.id);
      await afterAcceptedDelivery(c.env, target, hook);
    }
    if (outcome.error?.code === "app_quota_exceeded") {
      throw new RelayError("ingest_write_unavailable", "The app is at its quota; the delivery was journaled as failed.", { delivery_id: outcome.deliveryId });
    }
    if (outcome.error?.code === "conflict") {
      const current = (outcome.error.details?.current as { version?: number } | undefined)?.version;
      throw new RelayError("conflict", outcome.error.message, { delivery_id: outcome.deliveryId, ...(current !== undefined ? { current_version: current } : {}) });
    }
    return c.json({ ok: true as const });
  });

  defineRoute(app, {
    method: "get", path: hookParams, tag: "ingest", auth: "none", rateLimit: "ingest",
    summary: "URL-verification handshake of a hook with handshake echo: answers the challenge query parameter as text/plain (nothing journaled)",
    query: z.object({ challenge: z.string().min(1).max(2048) }),
    responses: {
      200: { description: "The challenge, as it was sent", contentType: "text/plain" },
      ...errors(400, 429),
      404: { description: "ingest_not_found: unknown hook, wrong secret, disabled hook, or a hook without handshake echo", schema: errorEnvelope },
    },
  }, async (c, { query }) => {
    const { hook } = await hookForUrl(c.env, c.req.param("hookId")!, c.req.param("secret")!);
    if (hook.rule.handshake !== "echo") throw new RelayError("ingest_not_found", "This hook answers no handshake: its rule has no handshake echo.");
    return c.text(query.challenge, 200);
  });
}
