/**
 * Capability tokens for attachments (WIRE §2.9, spec B): `/b/<token>` fetches the bytes
 * with no key, on the API origin and on app origins. A token's lifetime defaults to 30
 * days for an app-scoped attachment and 24 hours for an agent-scoped one, and a mint may
 * only shorten it; a `once` token is spent by its first successful GET; revoking is
 * idempotent. Only the token's sha256 is stored; each use is counted.
 */
import { and, desc, eq, isNull, or, sql } from "drizzle-orm";
import { config } from "../config";
import { RelayError } from "../errors";
import { db } from "../db/client";
import { attachmentTokens } from "../db/attachments-schema";
import { newId, randomHex, sha256Hex } from "../auth/tokens";
import { attachmentById, type AttachmentRow } from "./attachments";

export const TOKEN_PREFIX = "sbt_";
const TOKEN_PATTERN = /^sbt_[0-9a-f]{48}$/;
const DAY_SECONDS = 86_400;

type TokenRow = typeof attachmentTokens.$inferSelect;

export function defaultTokenSeconds(row: AttachmentRow): number {
  return row.scope === "app" ? 30 * DAY_SECONDS : DAY_SECONDS;
}

function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}

export async function mintToken(env: Env, row: AttachmentRow, input: { ttl_seconds?: number; once?: boolean }) {
  const seconds = Math.min(input.ttl_seconds ?? defaultTokenSeconds(row), defaultTokenSeconds(row));
  const token = `${TOKEN_PREFIX}${randomHex(24)}`;
  const now = Date.now();
  const minted = {
    id: newId("atk_"), attachmentId: row.id, tokenHash: await sha256Hex(token), tokenPrefix: token.slice(0, 10),
    once: input.once ?? false, expiresAt: now + seconds * 1000, createdAt: now,
  };
  await db(env).insert(attachmentTokens).values(minted);
  return {
    token_id: minted.id, token, token_prefix: minted.tokenPrefix, url: `${config(env).apiOrigin}/b/${token}`,
    expires_at: iso(minted.expiresAt)!, once: minted.once,
  };
}

function tokenView(row: TokenRow) {
  return {
    token_id: row.id, token_prefix: row.tokenPrefix, expires_at: iso(row.expiresAt)!, once: row.once, created_at: iso(row.createdAt)!,
    last_used_at: iso(row.lastUsedAt), use_count: row.useCount, revoked_at: iso(row.revokedAt),
  };
}

export async function listTokens(env: Env, attachmentId: string) {
  const rows = await db(env).select().from(attachmentTokens).where(eq(attachmentTokens.attachmentId, attachmentId)).orderBy(desc(attachmentTokens.createdAt));
  return { attachment_id: attachmentId, items: rows.map(tokenView) };
}

export async function revokeToken(env: Env, attachmentId: string, tokenId: string) {
  const found = await db(env).select().from(attachmentTokens).where(and(eq(attachmentTokens.id, tokenId.slice(0, 100)), eq(attachmentTokens.attachmentId, attachmentId))).get();
  if (!found) throw new RelayError("attachment_token_not_found", `No token "${tokenId.slice(0, 100)}" belongs to this attachment.`, { token_id: tokenId.slice(0, 100), attachment_id: attachmentId });
  if (found.revokedAt === null) await db(env).update(attachmentTokens).set({ revokedAt: Date.now() }).where(eq(attachmentTokens.id, found.id));
  return { token_id: found.id, revoked: true as const };
}

function invalid(): RelayError {
  return new RelayError("attachment_token_invalid", "This link is unknown, expired, revoked or already used.");
}

/**
 * The attachment a token opens, counting the use. A `once` token is claimed by the same
 * UPDATE that counts it, so two racing GETs cannot both get the bytes.
 */
export async function redeemToken(env: Env, token: string, now = Date.now()): Promise<AttachmentRow> {
  if (!TOKEN_PATTERN.test(token)) throw invalid();
  const hash = await sha256Hex(token);
  const found = await db(env).select().from(attachmentTokens).where(eq(attachmentTokens.tokenHash, hash)).get();
  if (!found || found.revokedAt !== null || found.expiresAt <= now || (found.once && found.useCount > 0)) throw invalid();
  const attachment = await attachmentById(env, found.attachmentId);
  if (!attachment || attachment.deletedAt !== null || attachment.status !== "ready") throw invalid();
  const counted = await db(env).update(attachmentTokens).set({ useCount: sql`${attachmentTokens.useCount} + 1`, lastUsedAt: now })
    .where(and(eq(attachmentTokens.id, found.id), isNull(attachmentTokens.revokedAt), or(eq(attachmentTokens.once, false), eq(attachmentTokens.useCount, 0))))
    .returning({ id: attachmentTokens.id });
  if (counted.length === 0) throw invalid();
  return attachment;
}
