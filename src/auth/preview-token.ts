/**
 * Preview tokens (`prv_…`, minted by src/apps/preview.ts) resolved on an app origin: a
 * live token of the app — unexpired, unrevoked — admits an anonymous viewer to a private
 * app in place of an app session. It is sent like a link app's share pass
 * (`x-service-share`, `service.share.<token>`); its id and expiry go with the caller, so
 * a feed socket opened with it closes when it expires or is revoked.
 */
import { and, eq, gt, isNull } from "drizzle-orm";
import { db } from "../db/client";
import { previewTokens } from "../db/account-schema";
import { nowIso, sha256Hex } from "./tokens";

export const PREVIEW_PREFIX = "prv_";
const PATTERN = /^prv_[0-9a-f]{32}$/;

export function isPreviewToken(value: string): boolean {
  return PATTERN.test(value);
}

/** A live preview token: its id and when it expires (ISO time). */
export interface LivePreview {
  id: string;
  expiresAt: string;
}

/** The live (unexpired, unrevoked) preview token of `appId` that `token` is, or null. */
export async function livePreview(env: { DB: D1Database }, appId: string, token: string): Promise<LivePreview | null> {
  if (!isPreviewToken(token)) return null;
  const row = (await db(env).select({ id: previewTokens.id, expiresAt: previewTokens.expiresAt }).from(previewTokens)
    .where(and(eq(previewTokens.tokenHash, await sha256Hex(token)), eq(previewTokens.appId, appId), isNull(previewTokens.revokedAt), gt(previewTokens.expiresAt, nowIso())))
    .limit(1))[0];
  return row ?? null;
}

/** Whether `token` is a live (unexpired, unrevoked) preview token of `appId`. */
export async function previewTokenValid(env: { DB: D1Database }, appId: string, token: string): Promise<boolean> {
  return (await livePreview(env, appId, token)) !== null;
}
