/**
 * Service credentials over the agent API (WIRE §2.5): mint, list, pause, resume, rotate
 * and revoke. Only the owner's agent key or the owner's session manages them (auth
 * "owner"): a service credential presented here is refused with 401 like on every route
 * but the collection endpoints. Raw tokens appear once, in the mint and rotate answers;
 * the list shows prefixes only.
 */
import type { Hono } from "hono";
import * as z from "zod";
import { defineRoute } from "../routes";
import type { AppContext, AppEnv } from "../types";
import {
  credentialOf, credentialView, mintCredential, revoke, rotate, setPaused,
} from "../../apps/credentials";
import { listCredentials } from "../../db/credentials";
import { ownedApp, requireLive } from "./app-access";
import { errors, isoTime, unrestrictedRevocation } from "./schemas";
import { revocationNotice, revokeUnrestricted } from "../../apps/unrestricted";
import { requireLiveManifest } from "../../apps/live-manifest";

const P = "/v1/apps/:id/credentials";
export const OPS = ["read", "create", "update", "delete"] as const;

const grant = z.strictObject({
  collection: z.string().min(1).max(64),
  ops: z.array(z.enum(OPS)).max(4),
  scope: z.literal("own").optional(),
});

const label = z.string().trim().max(200).refine((s) => !/[\u0000-\u001f\u007f]/.test(s), "must not contain control characters")
  .transform((s) => (s === "" ? null : s));

export const mintBody = z.strictObject({
  mode: z.enum(["explicit", "following"]).optional(),
  grants: z.array(grant).max(50).optional(),
  members: z.boolean().optional(),
  label: label.nullable().optional(),
  ttl_seconds: z.number().int().min(1).nullable().optional(),
  no_expiry: z.boolean().optional(),
});

const grantOut = z.object({ collection: z.string(), ops: z.array(z.enum(OPS)), scope: z.literal("own").optional() });

const view = z.object({
  id: z.string(), label: z.string().nullable(), token_prefix: z.string(), mode: z.enum(["explicit", "following"]),
  grants: z.array(grantOut), members: z.boolean(), paused: z.boolean(), active: z.boolean(),
  expires_at: isoTime.nullable(), paused_at: isoTime.nullable(), revoked_at: isoTime.nullable(), rotated_at: isoTime.nullable(),
  previous_token_prefix: z.string().nullable(), previous_expires_at: isoTime.nullable(),
  created_at: isoTime, last_used_at: isoTime.nullable(),
});

const minted = z.object({
  id: z.string(), token: z.string(), token_prefix: z.string(), mode: z.enum(["explicit", "following"]), grants: z.array(grantOut),
  members: z.boolean(), label: z.string().nullable(), expires_at: isoTime.nullable(), created_at: isoTime, ...unrestrictedRevocation,
});

/** Who minted: `agent:<id>` or `human:<id>`. */
export function mintedBy(c: AppContext): string {
  const actor = c.get("actor");
  return actor.kind === "agent" ? `agent:${actor.agentId}` : `human:${actor.ownerHumanId}`;
}

async function app(c: AppContext) {
  return requireLive(await ownedApp(c, c.req.param("id")!));
}

export function credentialRoutes(hono: Hono<AppEnv>): void {
  defineRoute(hono, {
    method: "post", path: P, tag: "credentials", auth: "owner",
    summary: "Mint a service credential: allowlist grants (explicit or following), ttl_seconds (default 365 days, clamped; null or no_expiry: none); the token is shown once",
    body: mintBody, bodyOptional: true,
    responses: { 201: { description: "Minted; token shown once", schema: minted }, ...errors(400, 401, 404, 409) },
  }, async (c, { body }) => {
    const target = await app(c);
    const manifest = await requireLiveManifest(c.env, target);
    const { row, token } = await mintCredential(c.env, target, manifest, body, mintedBy(c));
    const v = credentialView(row);
    return c.json({
      id: v.id, token, token_prefix: v.token_prefix, mode: v.mode, grants: v.grants, members: v.members, label: v.label,
      expires_at: v.expires_at, created_at: v.created_at, ...revocationNotice(await revokeUnrestricted(c.env, target.id)),
    }, 201);
  });

  defineRoute(hono, {
    method: "get", path: P, tag: "credentials", auth: "owner",
    summary: "The app's service credentials, newest first (prefixes only, never tokens)",
    responses: { 200: { description: "Credentials", schema: z.object({ credentials: z.array(view) }) }, ...errors(401, 404) },
  }, async (c) => {
    const target = await app(c);
    const now = Date.now();
    return c.json({ credentials: (await listCredentials(c.env, target.id)).map((r) => credentialView(r, now)) });
  });

  defineRoute(hono, {
    method: "post", path: `${P}/:credentialId/pause`, tag: "credentials", auth: "owner",
    summary: "Pause a credential (idempotent); its token is refused from the next request on",
    responses: { 200: { description: "The credential", schema: view }, ...errors(401, 404, 409) },
  }, async (c) => {
    const target = await app(c);
    return c.json(credentialView(await setPaused(c.env, target, c.req.param("credentialId")!, true)));
  });

  defineRoute(hono, {
    method: "post", path: `${P}/:credentialId/resume`, tag: "credentials", auth: "owner",
    summary: "Resume a paused credential (idempotent); a revoked one stays revoked (409 conflict)",
    responses: { 200: { description: "The credential", schema: view }, ...errors(401, 404, 409) },
  }, async (c) => {
    const target = await app(c);
    return c.json(credentialView(await setPaused(c.env, target, c.req.param("credentialId")!, false)));
  });

  defineRoute(hono, {
    method: "post", path: `${P}/:credentialId/rotate`, tag: "credentials", auth: "owner",
    summary: "New token, shown once; the old one keeps working for overlap_seconds (default 1 day, clamped; 0 = stops at once)",
    body: z.strictObject({ overlap_seconds: z.number().int().min(0).optional() }), bodyOptional: true,
    responses: {
      200: {
        description: "The new token",
        schema: z.object({ id: z.string(), token: z.string(), token_prefix: z.string(), previous_token_prefix: z.string().nullable(), previous_expires_at: isoTime.nullable() }),
      },
      ...errors(400, 401, 404, 409),
    },
  }, async (c, { body }) => {
    const target = await app(c);
    const { row, token } = await rotate(c.env, target, c.req.param("credentialId")!, body.overlap_seconds);
    return c.json({ id: row.id, token, token_prefix: row.tokenPrefix, previous_token_prefix: row.previousTokenPrefix, previous_expires_at: row.previousExpiresAt });
  });

  defineRoute(hono, {
    method: "delete", path: `${P}/:credentialId`, tag: "credentials", auth: "owner",
    summary: "Revoke a credential for good (idempotent); an overlap-window token dies with it",
    responses: { 200: { description: "The revoked credential", schema: view }, ...errors(401, 404) },
  }, async (c) => {
    const target = await app(c);
    return c.json(credentialView(await revoke(c.env, target, c.req.param("credentialId")!)));
  });

  // Read one, for symmetry with the list (not in the wire; handy for checks).
  defineRoute(hono, {
    method: "get", path: `${P}/:credentialId`, tag: "credentials", auth: "owner",
    summary: "One credential (prefixes only, never the token)",
    responses: { 200: { description: "The credential", schema: view }, ...errors(401, 404) },
  }, async (c) => {
    const target = await app(c);
    return c.json(credentialView(await credentialOf(c.env, target, c.req.param("credentialId")!)));
  });
}
