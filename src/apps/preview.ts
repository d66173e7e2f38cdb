/**
 * Preview tokens: let an anonymous viewer open one private app without an account, until
 * the token expires or the owner (or their agent) revokes it. The token is `prv_` + 128
 * random bits (sha256 stored) and rides in the preview URL's `#k=` fragment, the same
 * place a link app's share token rides, so the gate shell and the page script carry it
 * unchanged (`x-service-share` header, `service.share.<token>` socket subprotocol). On a
 * private app the app origin accepts such a token in place of an app session and treats
 * the holder as an anonymous visitor: what the manifest grants `anyone` is what they get.
 * Transferring the app revokes its preview tokens. A feed socket opened with a token
 * carries the token's id and expiry: the store closes it when the token expires, and
 * revoking the token closes it at once. This module mints, lists and revokes; checking a
 * presented token is src/auth/preview-token.ts.
 */
import { and, desc, eq, isNull } from "drizzle-orm";
import { RelayError } from "../errors";
import { db } from "../db/client";
import { previewTokens } from "../db/account-schema";
import { isoIn, newId, nowIso, randomHex, sha256Hex } from "../auth/tokens";
import { endSockets } from "./sockets";
import { PREVIEW_PREFIX } from "../auth/preview-token";

type Row = typeof previewTokens.$inferSelect;

export const PREVIEW_DEFAULT_TTL_SECONDS = 7 * 24 * 3600;
export const PREVIEW_MAX_TTL_SECONDS = 30 * 24 * 3600;

export interface PreviewView {
  id: string;
  label: string | null;
  status: "active" | "expired" | "revoked";
  created_at: string;
  expires_at: string;
  revoked_at: string | null;
}

function view(row: Row, now = nowIso()): PreviewView {
  const status = row.revokedAt ? "revoked" : row.expiresAt <= now ? "expired" : "active";
  return { id: row.id, label: row.label, status, created_at: row.createdAt, expires_at: row.expiresAt, revoked_at: row.revokedAt };
}

export async function mintPreview(env: Env, appId: string, input: { label: string | null; ttlSeconds: number; agentId: string | null }): Promise<{ token: string; view: PreviewView }> {
  const token = PREVIEW_PREFIX + randomHex(16);
  const ttl = Math.min(input.ttlSeconds, PREVIEW_MAX_TTL_SECONDS);
  const row: Row = {
    id: newId("pv_"), appId, tokenHash: await sha256Hex(token), label: input.label, createdByAgentId: input.agentId,
    createdAt: nowIso(), expiresAt: isoIn(ttl), revokedAt: null,
  };
  await db(env).insert(previewTokens).values(row);
  return { token, view: view(row) };
}

export async function listPreviews(env: Env, appId: string): Promise<PreviewView[]> {
  const rows = await db(env).select().from(previewTokens).where(eq(previewTokens.appId, appId)).orderBy(desc(previewTokens.createdAt), desc(previewTokens.id));
  const now = nowIso();
  return rows.map((r) => view(r, now));
}

/**
 * Revokes (idempotent) and closes the feed sockets the token let in; 404 `not_found` when
 * the app has no token with that id.
 */
export async function revokePreview(env: Env, appId: string, id: string): Promise<void> {
  const d = db(env);
  const row = (await d.select().from(previewTokens).where(and(eq(previewTokens.appId, appId), eq(previewTokens.id, id))).limit(1))[0];
  if (!row) throw new RelayError("not_found", "This app has no preview token with that id.", { field: "tokenId" });
  if (!row.revokedAt) await d.update(previewTokens).set({ revokedAt: nowIso() }).where(and(eq(previewTokens.id, id), isNull(previewTokens.revokedAt)));
  await endSockets(env, appId, { previewTokenId: id }, "preview token revoked");
}
