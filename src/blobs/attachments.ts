/**
 * Attachments (WIRE §2.9): files an agent or an app page uploads, kept in R2 under
 * `attachments/<id>` with a D1 row saying whose they are. Every way in (multipart,
 * inline base64, a fetched URL, a confirmed presigned upload) goes through one pipeline
 * (preparedUpload): sniff against the allowlist, the per-file cap chosen by the sniffed
 * type, the expansion check, the stored form of a picture (originals.ts: re-encoded
 * without metadata, SVG as PNG), then the per-app and per-account quotas on what will be
 * stored, and only then a write. Type, size, sha256 and pixel size recorded are those of
 * the stored bytes. A refusal anywhere stores nothing. Deleting frees the bytes; the row
 * stays, deleted.
 */
import { and, desc, eq, inArray, isNull, lt, or, sql } from "drizzle-orm";
import { config } from "../config";
import { RelayError } from "../errors";
import { db } from "../db/client";
import { apps } from "../db/apps-schema";
import { attachments, attachmentTokens, type AttachmentScope } from "../db/attachments-schema";
import { newId } from "../auth/tokens";
import { sha256Bytes } from "./store";
import { isMedia, sniffAttachment } from "./sniff";
import { checkExpansion } from "./expansion";
import { storedOriginal, type StoredOriginal } from "./originals";

export type AttachmentRow = typeof attachments.$inferSelect;

/** Who sends the bytes, and whose quota they count against. */
export interface Uploader {
  /** The owning human, or the agent itself while unclaimed. */
  accountId: string;
  /** The agent that owns the attachment; null for an upload from an app page. */
  ownerAgentId: string | null;
  kind: "agent" | "human" | "visitor" | "anon";
  id: string | null;
  anonAddressHash?: string | null;
}

/** Where the attachment lives: with its agent, or with an app (and dies with it). */
export interface Placement {
  scope: AttachmentScope;
  appId: string | null;
}

export interface Described {
  declaredMime?: string | null;
  filename?: string | null;
  /** A further admission check on the sniffed type and size (anonymous uploads), before the quotas. */
  admit?: (mime: string, size: number) => Promise<void>;
}

export const ATTACHMENT_ID_PREFIX = "att_";
const ID_PATTERN = /^att_[a-z0-9]{10,40}$/;

export function isAttachmentId(value: string): boolean {
  return ID_PATTERN.test(value);
}

export function objectKey(id: string): string {
  return `attachments/${id}`;
}

/** The per-file cap for a (sniffed or declared) type: media get the larger one. */
export function perFileCap(env: object, mime: string): number {
  const { limits } = config(env);
  return isMedia(mime) ? limits.MAX_MEDIA_BLOB_BYTES : limits.MAX_BLOB_BYTES;
}

/** The largest any single attachment may be, whatever its type. */
export function largestFileCap(env: object): number {
  const { limits } = config(env);
  return Math.max(limits.MAX_MEDIA_BLOB_BYTES, limits.MAX_BLOB_BYTES);
}

export function requireWithinFileCap(env: object, mime: string, size: number): void {
  const cap = perFileCap(env, mime);
  if (size > cap) throw new RelayError("attachment_size_exceeded", `The ${mime} file is ${size} bytes; the cap for its type is ${cap}.`, { size, limit: cap, mime });
}

async function bytesHeld(env: Env, where: ReturnType<typeof eq>, excludeId?: string): Promise<number> {
  const [row] = await db(env).select({ total: sql<number>`coalesce(sum(${attachments.size}), 0)` }).from(attachments)
    .where(and(where, isNull(attachments.deletedAt), excludeId ? sql`${attachments.id} <> ${excludeId}` : undefined));
  return Number(row?.total ?? 0);
}

/** Refuses `size` more bytes over the app's or the account's attachment quota. */
export async function requireQuota(env: Env, accountId: string, placement: Placement, size: number, excludeId?: string): Promise<void> {
  const { limits } = config(env);
  if (placement.appId) {
    const held = await bytesHeld(env, eq(attachments.appId, placement.appId), excludeId);
    if (held + size > limits.MAX_BLOBS_PER_APP_BYTES) {
      throw new RelayError("quota_exceeded", `The app holds ${held} attachment bytes; ${size} more would pass its ${limits.MAX_BLOBS_PER_APP_BYTES}.`, { scope: "app", held, size, limit: limits.MAX_BLOBS_PER_APP_BYTES });
    }
  }
  const held = await bytesHeld(env, eq(attachments.accountId, accountId), excludeId);
  if (held + size > limits.MAX_BLOBS_PER_ACCOUNT_BYTES) {
    throw new RelayError("account_quota_exceeded", `The account holds ${held} attachment bytes; ${size} more would pass its ${limits.MAX_BLOBS_PER_ACCOUNT_BYTES}.`, { scope: "account", held, size, limit: limits.MAX_BLOBS_PER_ACCOUNT_BYTES });
  }
}

/** What R2 will keep of an upload, with its sha256. */
export interface PreparedUpload extends StoredOriginal {
  sha256: string;
}

/**
 * The checks every upload passes, in order, and the form it is stored in: the sniffed
 * type, the per-file cap and the expansion check on the uploaded bytes, then the stored
 * form (a picture re-encoded without metadata), whose size must fit the cap too.
 */
export async function preparedUpload(env: Env, bytes: Uint8Array, described: Described): Promise<PreparedUpload> {
  if (bytes.length === 0) throw new RelayError("invalid_request", "The file is empty.", { field: "file" });
  if (bytes.length > largestFileCap(env)) {
    throw new RelayError("attachment_size_exceeded", `The file is ${bytes.length} bytes; no attachment may pass ${largestFileCap(env)}.`, { size: bytes.length, limit: largestFileCap(env) });
  }
  const mime = await sniffAttachment(bytes, described.declaredMime, described.filename, config(env).blobMimeAllowlist);
  requireWithinFileCap(env, mime, bytes.length);
  const stored = await storedOriginal(env, mime, bytes, checkExpansion(mime, bytes));
  requireWithinFileCap(env, stored.mime, stored.bytes.length);
  return { ...stored, sha256: await sha256Bytes(stored.bytes) };
}

/** A filename as kept: the last path segment, trimmed, at most 255 characters, or null. */
export function cleanFilename(name: string | null | undefined): string | null {
  const base = (name ?? "").split(/[\\/]/).pop()!.replace(/[\u0000-\u001f\u007f]/g, "").trim().slice(0, 255);
  return base === "" ? null : base;
}

/** Runs the pipeline and stores the bytes as a ready attachment. */
export async function storeAttachment(env: Env, uploader: Uploader, placement: Placement, bytes: Uint8Array, described: Described): Promise<AttachmentRow> {
  const prepared = await preparedUpload(env, bytes, described);
  await described.admit?.(prepared.mime, prepared.bytes.length);
  await requireQuota(env, uploader.accountId, placement, prepared.bytes.length);
  const id = newId(ATTACHMENT_ID_PREFIX);
  await env.BLOBS.put(objectKey(id), prepared.bytes, { httpMetadata: { contentType: prepared.mime }, sha256: prepared.sha256 });
  const now = Date.now();
  const row: AttachmentRow = {
    id, scope: placement.scope, accountId: uploader.accountId, ownerAgentId: uploader.ownerAgentId, appId: placement.appId,
    uploaderKind: uploader.kind, uploaderId: uploader.id, anonAddressHash: uploader.anonAddressHash ?? null,
    filename: cleanFilename(described.filename), mime: prepared.mime, size: prepared.bytes.length, sha256: prepared.sha256, status: "ready",
    uploadSecretHash: null, uploadExpiresAt: null, width: prepared.width, height: prepared.height, createdAt: now, confirmedAt: now, deletedAt: null,
  };
  await db(env).insert(attachments).values(row);
  return row;
}

export async function attachmentById(env: Env, id: string): Promise<AttachmentRow | undefined> {
  if (!isAttachmentId(id)) return undefined;
  return db(env).select().from(attachments).where(eq(attachments.id, id)).get();
}

/** The agent's view of who may act on an attachment: its own, or an app-scoped one of its owner's apps. */
export interface AgentView {
  agentId: string;
  ownerHumanId: string | null;
}

async function appOwnedBy(env: Env, appId: string, ownerHumanId: string | null): Promise<boolean> {
  if (!ownerHumanId) return false;
  const app = await db(env).select({ owner: apps.ownerHumanId }).from(apps).where(eq(apps.id, appId)).get();
  return app?.owner === ownerHumanId;
}

export async function mayManage(env: Env, who: AgentView, row: AttachmentRow): Promise<boolean> {
  if (row.ownerAgentId === who.agentId) return true;
  return row.scope === "app" && row.appId !== null && await appOwnedBy(env, row.appId, who.ownerHumanId);
}

function notFound(id: string): RelayError {
  return new RelayError("attachment_not_found", `No attachment "${id.slice(0, 100)}" is yours.`, { attachment_id: id.slice(0, 100) });
}

/** A live attachment the agent may act on (pending ones too, when `pendingToo`), else attachment_not_found. */
export async function attachmentFor(env: Env, who: AgentView, id: string, pendingToo = false): Promise<AttachmentRow> {
  const row = await attachmentById(env, id);
  if (!row || row.deletedAt !== null || (!pendingToo && row.status !== "ready") || !(await mayManage(env, who, row))) throw notFound(id);
  return row;
}

function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}

/** The AttachmentRef of WIRE §2.9. */
export function attachmentRef(env: object, row: AttachmentRow) {
  return {
    attachment_id: row.id, scope: row.scope, mime: row.mime, size: row.size, sha256: row.sha256,
    url: `${config(env).apiOrigin}/v1/attachments/${row.id}`,
    width: row.width, height: row.height, filename: row.filename, status: row.status, app_id: row.appId,
    created_at: iso(row.createdAt)!, confirmed_at: iso(row.confirmedAt), deleted_at: iso(row.deletedAt),
  };
}
export type AttachmentRef = ReturnType<typeof attachmentRef>;

/** `<createdAt>.<id>` of the last item of a page. */
function cursorOf(row: AttachmentRow): string {
  return `${row.createdAt}.${row.id}`;
}

function parseCursor(cursor: string): { createdAt: number; id: string } {
  const match = /^(\d{1,15})\.(att_[a-z0-9]{10,40})$/.exec(cursor);
  if (!match) throw new RelayError("invalid_request", "The cursor is not one this list gave out.", { field: "cursor" });
  return { createdAt: Number(match[1]), id: match[2] };
}

/** The agent's own non-deleted attachments, newest first. */
export async function listAttachments(env: Env, who: AgentView, limit: number, cursor?: string): Promise<{ items: AttachmentRow[]; next_cursor: string | null }> {
  const after = cursor === undefined ? null : parseCursor(cursor);
  // The same set mayManage admits: the agent's own, and app-scoped ones of its owner's
  // apps (uploads from an app's pages have no agent, but belong to the app's owner).
  const ownersApps = who.ownerHumanId === null ? undefined
    : and(eq(attachments.scope, "app"), inArray(attachments.appId, db(env).select({ id: apps.id }).from(apps).where(eq(apps.ownerHumanId, who.ownerHumanId))));
  const rows = await db(env).select().from(attachments).where(and(
    or(eq(attachments.ownerAgentId, who.agentId), ownersApps), isNull(attachments.deletedAt), eq(attachments.status, "ready"),
    after ? or(lt(attachments.createdAt, after.createdAt), and(eq(attachments.createdAt, after.createdAt), lt(attachments.id, after.id))) : undefined,
  )).orderBy(desc(attachments.createdAt), desc(attachments.id)).limit(limit + 1);
  const items = rows.slice(0, limit);
  return { items, next_cursor: rows.length > limit ? cursorOf(items[items.length - 1]) : null };
}

/** Removes the stored bytes of these attachments (and any cached thumbnails). */
export async function deleteStoredBytes(env: Env, ids: string[]): Promise<void> {
  for (const id of ids) {
    const keys = [objectKey(id)];
    const variants = await env.BLOBS.list({ prefix: `${objectKey(id)}/` });
    keys.push(...variants.objects.map((object) => object.key));
    await env.BLOBS.delete(keys);
  }
}

/** Soft delete: the row stays, marked deleted; the bytes go, so tokens and references stop working. Idempotent. */
export async function softDeleteAttachment(env: Env, row: AttachmentRow): Promise<void> {
  if (row.deletedAt === null) {
    await db(env).update(attachments).set({ deletedAt: Date.now() }).where(and(eq(attachments.id, row.id), isNull(attachments.deletedAt)));
  }
  await deleteStoredBytes(env, [row.id]);
}

/** A purged app takes its app-scoped attachments with it: bytes, rows and tokens. */
export async function purgeAppAttachments(env: Env, appId: string): Promise<number> {
  const rows = await db(env).select({ id: attachments.id }).from(attachments).where(and(eq(attachments.appId, appId), eq(attachments.scope, "app")));
  const ids = rows.map((row) => row.id);
  await deleteStoredBytes(env, ids);
  for (let at = 0; at < ids.length; at += 50) {
    const chunk = ids.slice(at, at + 50);
    await db(env).batch([
      db(env).delete(attachmentTokens).where(inArray(attachmentTokens.attachmentId, chunk)),
      db(env).delete(attachments).where(inArray(attachments.id, chunk)),
    ]);
  }
  return ids.length;
}
