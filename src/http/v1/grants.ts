/**
 * Grant links over the agent API (WIRE §2.5): mint, list and revoke. Only the owner's
 * agent key or the owner's session manages them; a service credential is refused (401).
 * The link's token appears once, in the `#g=` fragment of `grant_url` (the app's own URL);
 * the list never carries token material. The exchange itself happens on the app origin
 * (src/http/serve/grant-exchange.ts).
 */
import type { Hono } from "hono";
import * as z from "zod";
import { defineRoute } from "../routes";
import type { AppContext, AppEnv } from "../types";
import { requireLiveManifest } from "../../apps/live-manifest";
import { grantView, mintGrantLink, revokeGrant } from "../../apps/grant-links";
import { listGrantLinks } from "../../db/grant-links";
import { ownedApp, requireLive } from "./app-access";
import { mintedBy } from "./credentials";
import { errors, isoTime, unrestrictedRevocation } from "./schemas";
import { revocationNotice, revokeUnrestricted } from "../../apps/unrestricted";

const P = "/v1/apps/:id/grants";
const FIELD = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
const ROW_KEY = /^[A-Za-z0-9_.:@-]{1,128}$/;

const scalar = z.union([z.string().max(1000), z.number().refine(Number.isFinite, "must be finite"), z.boolean()]);
const cond = z.strictObject({
  field: z.string().regex(FIELD, "must be a field name: a letter or _, then letters, digits and _ (at most 64)"),
  op: z.enum(["eq", "neq", "in", "notIn", "gt", "lt", "gte", "lte"]),
  value: z.union([scalar, z.array(scalar).min(1).max(100)]),
}).superRefine((c, ctx) => {
  const list = c.op === "in" || c.op === "notIn";
  if (list !== Array.isArray(c.value)) {
    ctx.addIssue({ code: "custom", path: ["value"], message: list ? `must be a non-empty array for "${c.op}"` : `must be a string, number or boolean for "${c.op}"` });
  }
});

const pin = z.union([
  z.strictObject({ row_key: z.string().regex(ROW_KEY, "must be 1–128 characters of A–Z, a–z, 0–9 and _ . : @ -") }),
  z.strictObject({ where: z.array(cond).min(1).max(20) }),
], { error: "must be either { row_key } or { where: [conditions] }, not both" });

const label = z.string().trim().max(200).refine((s) => !/[\u0000-\u001f\u007f]/.test(s), "must not contain control characters")
  .transform((s) => (s === "" ? null : s));

export const mintBody = z.strictObject({
  role: z.string().min(1).max(64),
  mode: z.enum(["once", "multi"]).optional(),
  max_uses: z.number().int().min(1).max(1_000_000).nullable().optional(),
  label: label.nullable().optional(),
  ttl_seconds: z.number().int().min(1).optional(),
  pin: pin.nullable().optional(),
});

const condOut = z.object({ field: z.string(), op: z.string(), value: z.unknown() });
const view = z.object({
  id: z.string(), role: z.string(), mode: z.enum(["once", "multi"]), max_uses: z.number().int().nullable(),
  use_count: z.number().int(), claim_count: z.number().int(), pin_row_key: z.string().nullable(), pin_where: z.array(condOut).nullable(),
  label: z.string().nullable(), active: z.boolean(), expires_at: isoTime, revoked_at: isoTime.nullable(), created_at: isoTime,
});

async function app(c: AppContext) {
  return requireLive(await ownedApp(c, c.req.param("id")!));
}

export function grantRoutes(hono: Hono<AppEnv>): void {
  defineRoute(hono, {
    method: "post", path: P, tag: "grants", auth: "owner",
    summary: "Mint a grant link for a declared custom role (once or multi, max_uses, ttl default 30 days clamped, optional pin); grant_url carries the token in #g=, shown once",
    body: mintBody,
    responses: {
      201: {
        description: "Minted; grant_url shown once",
        schema: view.extend({ grant_url: z.string(), ...unrestrictedRevocation }),
      },
      ...errors(400, 401, 404, 409),
    },
  }, async (c, { body }) => {
    const target = await app(c);
    const manifest = await requireLiveManifest(c.env, target);
    const { row, url } = await mintGrantLink(c.env, target, manifest, body, mintedBy(c));
    return c.json({ ...grantView(row), grant_url: url, ...revocationNotice(await revokeUnrestricted(c.env, target.id)) }, 201);
  });

  defineRoute(hono, {
    method: "get", path: P, tag: "grants", auth: "owner",
    summary: "The app's grant links with usage counts, newest first (never token material)",
    responses: { 200: { description: "Grant links", schema: z.object({ grants: z.array(view) }) }, ...errors(401, 404) },
  }, async (c) => {
    const target = await app(c);
    const now = Date.now();
    return c.json({ grants: (await listGrantLinks(c.env, target.id)).map((r) => grantView(r, now)) });
  });

  defineRoute(hono, {
    method: "delete", path: `${P}/:grantId`, tag: "grants", auth: "owner",
    summary: "Revoke a grant link (idempotent); the link and every holder it admitted are refused from the next request on",
    responses: { 200: { description: "The revoked link", schema: view }, ...errors(401, 404) },
  }, async (c) => {
    const target = await app(c);
    return c.json(grantView(await revokeGrant(c.env, target, c.req.param("grantId")!)));
  });
}
