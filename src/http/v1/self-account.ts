/**
 * The rest of `/v1/self` (spec A "Account"; shapes ours): marketing consent, the
 * one-time signup answer, browser push (VAPID public key, save and delete a
 * subscription), usage meters and flow series, and deleting the account after an
 * emailed confirmation.
 */
import type { Hono } from "hono";
import * as z from "zod";
import { defineRoute } from "../routes";
import type { AppContext, AppEnv } from "../types";
import { config } from "../../config";
import { RelayError } from "../../errors";
import { setMarketingConsent } from "../../db/humans";
import { recordSignupSource } from "../../account/signup-source";
import { publicVapidKey } from "../../account/vapid";
import { endpointBody, namedEndpoint, subscriptionBody, subscriptionInput } from "../../account/push-subscription-body";
import { deleteSubscription, saveSubscription } from "../../account/push";
import { FLOW_METRICS, usageSeries, usageSummary } from "../../account/usage";
import { requestDeletion } from "../../account/deletion";
import { profileView, profileOf } from "./self";
import { errors, isoTime } from "./schemas";

function humanId(c: AppContext): string {
  return c.get("human").humanId;
}

const text = (max: number) => z.string().trim().max(max).refine((s) => !/[\u0000-\u001f\u007f]/.test(s), "must not contain control characters");

const signupSchema = z.object({ source: z.string(), detail: z.string().nullable(), recorded_at: isoTime }).meta({ title: "SignupSource" });

const subscriptionSchema = z.object({ id: z.string(), endpoint: z.string(), expires_at: isoTime.nullable(), created_at: isoTime, updated_at: isoTime }).meta({ title: "PushSubscription" });

const flows = z.record(z.string(), z.number().int());
const month = z.object({ start: isoTime, flows });

export function selfAccountRoutes(app: Hono<AppEnv>): void {
  defineRoute(app, {
    method: "put", path: "/v1/self/marketing-consent", tag: "account", auth: "human",
    summary: "Turn product-update email on or off",
    body: z.strictObject({ marketing_consent: z.boolean() }),
    responses: { 200: { description: "Profile", schema: profileView }, ...errors(400, 401, 403) },
  }, async (c, { body }) => {
    await setMarketingConsent(c.env, humanId(c), body.marketing_consent);
    return c.json(await profileOf(c));
  });

  defineRoute(app, {
    method: "post", path: "/v1/self/signup-source", tag: "account", auth: "human",
    summary: "Record the optional one-time answer to how I heard of the service (a second answer is a conflict)",
    body: z.strictObject({ source: text(64).pipe(z.string().min(1)), detail: text(500).nullable().optional() }),
    responses: { 201: { description: "The answer", schema: signupSchema }, ...errors(400, 401, 403, 409) },
  }, async (c, { body }) => {
    const row = await recordSignupSource(c.env, humanId(c), body.source, body.detail ? body.detail : null);
    return c.json({ source: row.source, detail: row.detail, recorded_at: row.createdAt }, 201);
  });

  defineRoute(app, {
    method: "get", path: "/v1/self/push-subscription/vapid-public-key", tag: "account", auth: "human",
    summary: "The relay's VAPID public key (base64url, 65-byte uncompressed P-256 point) for pushManager.subscribe",
    responses: {
      200: { description: "The key", schema: z.object({ public_key: z.string() }) }, ...errors(401),
      501: { description: "not_implemented: browser push is not configured (VAPID_PRIVATE_KEY missing or invalid)" },
    },
  }, async (c) => {
    return c.json({ public_key: await publicVapidKey(c.env) });
  });

  defineRoute(app, {
    method: "post", path: "/v1/self/push-subscriptions", tag: "account", auth: "human",
    summary: "Save a browser push subscription (PushSubscription.toJSON()); the same endpoint again updates it (200)",
    body: subscriptionBody,
    responses: {
      201: { description: "Saved", schema: subscriptionSchema }, 200: { description: "Updated", schema: subscriptionSchema },
      ...errors(400, 401, 403),
    },
  }, async (c, { body }) => {
    const saved = await saveSubscription(c.env, humanId(c), subscriptionInput(c.env, body));
    return c.json(saved.subscription, saved.created ? 201 : 200);
  });

  defineRoute(app, {
    method: "delete", path: "/v1/self/push-subscriptions", tag: "account", auth: "human",
    summary: "Delete my subscription for an endpoint, named by ?endpoint= or a { endpoint } body (idempotent)",
    query: z.object({ endpoint: z.string().max(2048).optional() }),
    body: endpointBody, bodyOptional: true,
    responses: { 204: { description: "Gone (or never there)" }, ...errors(400, 401, 403) },
  }, async (c, { body, query }) => {
    await deleteSubscription(c.env, humanId(c), namedEndpoint(query.endpoint ?? body.endpoint));
    return c.body(null, 204);
  });

  defineRoute(app, {
    method: "get", path: "/v1/self/usage", tag: "account", auth: "human",
    summary: `Usage meters beside their limits (apps owned; rows and bytes per live app and summed), and this UTC month's flow totals (${FLOW_METRICS.join(", ")})`,
    responses: {
      200: {
        description: "Usage",
        schema: z.object({
          meters: z.object({
            apps: z.object({ used: z.number().int(), limit: z.number().int() }),
            rows: z.object({ used: z.number().int(), limit_per_app: z.number().int() }),
            storage_bytes: z.object({ used: z.number().int(), limit_per_app: z.number().int() }),
          }),
          apps: z.array(z.object({ app_id: z.string(), slug: z.string(), rows: z.number().int(), row_limit: z.number().int(), storage_bytes: z.number().int(), storage_limit: z.number().int() })),
          month,
        }),
      },
      ...errors(401),
    },
  }, async (c) => c.json(await usageSummary(c.env, config(c.env), humanId(c))));

  defineRoute(app, {
    method: "get", path: "/v1/self/usage/series", tag: "account", auth: "human",
    summary: "Flow series: granularity day (default; days 1–90, default 30) or hour (days 1–7, default 1), every bucket present, plus month-to-date totals",
    query: z.object({ granularity: z.enum(["day", "hour"]).optional(), days: z.coerce.number().int().min(1).max(90).optional() }),
    responses: {
      200: {
        description: "Series",
        schema: z.object({
          granularity: z.enum(["day", "hour"]), start: isoTime, end: isoTime,
          points: z.array(z.object({ start: isoTime, flows })), month_to_date: month,
        }),
      },
      ...errors(400, 401),
    },
  }, async (c, { query }) => {
    const granularity = query.granularity ?? "day";
    const days = query.days ?? (granularity === "day" ? 30 : 1);
    if (granularity === "hour" && days > 7) throw new RelayError("invalid_request", "Hourly series cover at most 7 days.", { field: "days" });
    return c.json(await usageSeries(c.env, humanId(c), granularity, days));
  });

  defineRoute(app, {
    method: "delete", path: "/v1/self", tag: "account", auth: "human",
    summary: "Ask to delete my account: mails my address a confirmation link (one hour; asking again replaces it). Nothing is deleted until the link's page is confirmed — see the account-deletion section above for exactly what goes",
    responses: {
      202: { description: "Confirmation mailed", schema: z.object({ ok: z.literal(true), email: z.string(), expires_at: isoTime }) },
      ...errors(401, 403),
      503: { description: "auth_provider_unavailable: the relay cannot send mail" },
    },
  }, async (c) => {
    const asked = await requestDeletion(c.env, humanId(c));
    return c.json({ ok: true as const, email: asked.email, expires_at: asked.expiresAt }, 202);
  });
}
