/**
 * Ownership transfer over the API (spec A "Access"; shapes ours, WIRE §2.13): the owner
 * or their agent reads, offers and withdraws; the recipient accepts with the mailed
 * token as the signed-in person (the console page `/transfer?token=` does the same with
 * a form). Accepting revokes the app's service credentials (see src/account/transfers.ts).
 * Another owner's app is `app_not_found`.
 */
import type { Hono } from "hono";
import * as z from "zod";
import { defineRoute } from "../routes";
import type { AppEnv } from "../types";
import { config } from "../../config";
import { acceptTransfer, offerTransfer, pendingTransfer, transferView, withdrawTransfer } from "../../account/transfers";
import { appUrl } from "../../apps/urls";
import { ownedApp, requireLive } from "./app-access";
import { errors, inviteLimited, isoTime } from "./schemas";

export const transferSchema = z.object({
  id: z.string(), app_id: z.string(), status: z.enum(["pending", "accepted", "withdrawn", "expired"]),
  to_email: z.string(), keep_as_member: z.boolean(), created_at: isoTime, expires_at: isoTime, resolved_at: isoTime.nullable(),
}).meta({ title: "Transfer" });

const soft = { 410: { description: "soft_deleted: the app is in the trash" } };

export function transferRoutes(app: Hono<AppEnv>): void {
  defineRoute(app, {
    method: "get", path: "/v1/apps/:id/transfer", tag: "transfer", auth: "owner",
    summary: "The pending ownership transfer, or null (an expired offer is no longer pending)",
    responses: { 200: { description: "The pending offer or null", schema: z.object({ transfer: transferSchema.nullable() }) }, ...errors(401, 404), ...soft },
  }, async (c) => {
    const target = requireLive(await ownedApp(c, c.req.param("id")!));
    const pending = await pendingTransfer(c.env, target.id);
    return c.json({ transfer: pending ? transferView(pending) : null });
  });

  defineRoute(app, {
    method: "post", path: "/v1/apps/:id/transfer", tag: "transfer", auth: "owner", rateLimit: "invite",
    summary: "Offer the app to an email address (mailed a single-use link, 7 days); ownership moves only when that address accepts. keep_as_member (default true) keeps the current owner on the app as a member afterwards; false removes them. Limited per address and, for the mail, per owner per day",
    body: z.strictObject({ email: z.email().max(254), keep_as_member: z.boolean().optional() }),
    responses: {
      201: { description: "The pending offer", schema: z.object({ transfer: transferSchema }) },
      ...errors(400, 401, 403, 404, 409), ...soft, ...inviteLimited,
      503: { description: "auth_provider_unavailable: the relay cannot send mail" },
    },
  }, async (c, { body }) => {
    const target = requireLive(await ownedApp(c, c.req.param("id")!));
    const transfer = await offerTransfer(c.env, target, { email: body.email, keepAsMember: body.keep_as_member ?? true, agentId: c.get("actor")?.agentId ?? null });
    return c.json({ transfer }, 201);
  });

  defineRoute(app, {
    method: "delete", path: "/v1/apps/:id/transfer", tag: "transfer", auth: "owner",
    summary: "Withdraw the pending transfer; its link stops working at once (404 not_found when none is pending)",
    responses: { 200: { description: "The withdrawn offer", schema: z.object({ transfer: transferSchema }) }, ...errors(401, 403, 404), ...soft },
  }, async (c) => {
    const target = requireLive(await ownedApp(c, c.req.param("id")!));
    return c.json({ transfer: await withdrawTransfer(c.env, target.id) });
  });

  defineRoute(app, {
    method: "post", path: "/v1/self/transfers/accept", tag: "transfer", auth: "human",
    summary: "Accept an ownership transfer as the signed-in person (the account's address must be the offered one). Every live service credential of the app is revoked in the same step (credentials_revoked counts them) and its outbound connections are deleted (their secrets were the previous owner's); grant links keep working",
    body: z.strictObject({ token: z.string().min(1).max(200) }),
    responses: {
      200: {
        description: "The app is mine now",
        schema: z.object({
          app_id: z.string(), slug: z.string(), url: z.string(), role: z.literal("owner"), transfer: transferSchema,
          credentials_revoked: z.number().int().min(0),
        }),
      },
      ...errors(400, 401, 403, 409),
      410: { description: "gone: the offer is unknown, accepted, withdrawn or expired, or the app was deleted" },
    },
  }, async (c, { body }) => {
    const human = c.get("human");
    const done = await acceptTransfer(c.env, body.token, { humanId: human.humanId, email: human.email }, (p) => c.executionCtx.waitUntil(p));
    return c.json({
      app_id: done.app.id, slug: done.app.slug, url: appUrl(config(c.env), done.app.slug), role: "owner" as const, transfer: done.transfer,
      credentials_revoked: done.credentialsRevoked,
    });
  });
}
