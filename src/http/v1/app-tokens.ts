/**
 * Tokens the owner (or their agent) mints so someone can open an app without going
 * through a person's sign-in (spec A "Access"; shapes ours, WIRE §2.13):
 * - preview tokens: an anonymous viewer opens a PRIVATE app through `preview_url`
 *   (mint, list, revoke; see src/apps/preview.ts);
 * - test-session tokens: a headless client trades one, once, for an owner app session
 *   (see src/apps/test-session.ts).
 */
import type { Hono } from "hono";
import * as z from "zod";
import { defineRoute } from "../routes";
import type { AppEnv } from "../types";
import { config } from "../../config";
import { RelayError } from "../../errors";
import { appUrl } from "../../apps/urls";
import { PREVIEW_DEFAULT_TTL_SECONDS, PREVIEW_MAX_TTL_SECONDS, listPreviews, mintPreview, revokePreview } from "../../apps/preview";
import { TEST_SESSION_TTL_SECONDS, mintTestSessionToken } from "../../apps/test-session";
import { signingKeys } from "../../auth/signing-keys";
import { ownedApp, requireLive } from "./app-access";
import { errors, isoTime } from "./schemas";

const previewSchema = z.object({
  id: z.string(), label: z.string().nullable(), status: z.enum(["active", "expired", "revoked"]),
  created_at: isoTime, expires_at: isoTime, revoked_at: isoTime.nullable(),
}).meta({ title: "PreviewToken" });

const label = z.string().trim().max(100).refine((s) => !/[\u0000-\u001f\u007f]/.test(s), "must not contain control characters");
const soft = { 410: { description: "soft_deleted: the app is in the trash" } };

function originOf(url: string): string {
  return url.replace(/\/$/, "");
}

export function appTokenRoutes(app: Hono<AppEnv>): void {
  defineRoute(app, {
    method: "post", path: "/v1/apps/:id/preview-tokens", tag: "previews", auth: "owner",
    summary: `Mint a preview token for a private app: whoever opens preview_url (the token rides in its #k= fragment) sees the app as an anonymous visitor until it expires (ttl_seconds, default ${PREVIEW_DEFAULT_TTL_SECONDS}, clamped to ${PREVIEW_MAX_TTL_SECONDS}) or is revoked. The token is shown once. Public and link apps need none (conflict)`,
    body: z.strictObject({ label: label.nullable().optional(), ttl_seconds: z.number().int().min(60).optional() }), bodyOptional: true,
    responses: {
      201: { description: "The token, shown once", schema: previewSchema.extend({ token: z.string(), preview_url: z.string() }) },
      ...errors(400, 401, 403, 404, 409), ...soft,
    },
  }, async (c, { body }) => {
    const target = requireLive(await ownedApp(c, c.req.param("id")!));
    if (target.visibility !== "private") {
      throw new RelayError("conflict", `Only private apps take preview tokens; this app is ${target.visibility}, so its URL${target.visibility === "link" ? " (share link)" : ""} already opens it.`, { visibility: target.visibility });
    }
    const minted = await mintPreview(c.env, target.id, {
      label: body.label ? body.label : null, ttlSeconds: body.ttl_seconds ?? PREVIEW_DEFAULT_TTL_SECONDS, agentId: c.get("actor")?.agentId ?? null,
    });
    return c.json({ ...minted.view, token: minted.token, preview_url: `${appUrl(config(c.env), target.slug)}#k=${minted.token}` }, 201);
  });

  defineRoute(app, {
    method: "get", path: "/v1/apps/:id/preview-tokens", tag: "previews", auth: "owner",
    summary: "The app's preview tokens, newest first, with their status (never the tokens)",
    responses: { 200: { description: "Preview tokens", schema: z.object({ items: z.array(previewSchema), next_cursor: z.null() }) }, ...errors(401, 404), ...soft },
  }, async (c) => {
    const target = requireLive(await ownedApp(c, c.req.param("id")!));
    return c.json({ items: await listPreviews(c.env, target.id), next_cursor: null });
  });

  defineRoute(app, {
    method: "delete", path: "/v1/apps/:id/preview-tokens/:tokenId", tag: "previews", auth: "owner",
    summary: "Revoke a preview token (idempotent); its URL stops opening the app on the next request",
    responses: { 204: { description: "Revoked" }, ...errors(401, 403, 404), ...soft },
  }, async (c) => {
    const target = requireLive(await ownedApp(c, c.req.param("id")!));
    await revokePreview(c.env, target.id, c.req.param("tokenId")!);
    return c.body(null, 204);
  });

  defineRoute(app, {
    method: "post", path: "/v1/apps/:id/test-session-tokens", tag: "previews", auth: "owner",
    summary: `A single-use token (${TEST_SESSION_TTL_SECONDS / 60} minutes) a headless client redeems for an OWNER app session: POST session_url with { grant: token }, or open open_url in a browser. Spent, expired, other-app and forged tokens answer 401 grant_invalid`,
    body: z.strictObject({}), bodyOptional: true,
    responses: {
      201: {
        description: "The token, shown once",
        schema: z.object({ token: z.string(), expires_at: isoTime, app_id: z.string(), session_url: z.string(), open_url: z.string() }),
      },
      ...errors(400, 401, 403, 404), ...soft,
      503: { description: "auth_provider_unavailable: the relay has no APP_SESSION_SECRET, so it cannot sign app sessions" },
    },
  }, async (c) => {
    const target = requireLive(await ownedApp(c, c.req.param("id")!));
    if (!signingKeys(c.env)) {
      throw new RelayError("auth_provider_unavailable", "App sessions are not set up on this relay yet: the operator must set APP_SESSION_SECRET.", { reason: "app_session_secret_missing" });
    }
    const minted = await mintTestSessionToken(c.env, target.id, target.ownerHumanId);
    const url = appUrl(config(c.env), target.slug);
    return c.json({
      token: minted.token, expires_at: minted.expiresAt, app_id: target.id,
      session_url: `${originOf(url)}/_svc/session`, open_url: `${url}#svc_grant=${minted.token}`,
    }, 201);
  });
}
