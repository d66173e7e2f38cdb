/**
 * Presigned uploads (WIRE §2.9): presign reserves a `pending` attachment and answers an
 * upload URL that is the relay's own — `PUT /v1/attachments/<id>/upload?secret=…` on the
 * Worker, short-lived and good for one attachment — so no third-party storage is needed.
 * The secret is kept only as its sha256. Confirm re-reads what was stored, checks it
 * against the presigned size and sha256, and runs the whole upload pipeline on it (the
 * stored type is the sniffed one, never the presign's; a picture is replaced by its
 * re-encoded form, whose size and sha256 the attachment then records); a failure leaves
 * the attachment pending, and the sweep removes pending uploads nobody confirmed.
 */
import { and, eq, lt } from "drizzle-orm";
import { config } from "../config";
import { RelayError } from "../errors";
import { db } from "../db/client";
import { attachments } from "../db/attachments-schema";
import { constantTimeEqual, newId, randomHex, sha256Hex } from "../auth/tokens";
import {
  ATTACHMENT_ID_PREFIX, attachmentById, cleanFilename, deleteStoredBytes, objectKey, preparedUpload, requireQuota, requireWithinFileCap,
  type AttachmentRow, type Placement, type Uploader,
} from "./attachments";
import { normaliseMime } from "./sniff";
import { sha256Bytes } from "./store";

/** How long an upload URL works. */
export const UPLOAD_URL_SECONDS = 15 * 60;
/** How long after its URL lapsed an unconfirmed upload is swept (room to confirm a finished PUT). */
export const PENDING_GRACE_SECONDS = 60 * 60;

export interface PresignInput {
  mime: string;
  size: number;
  sha256: string;
  filename?: string;
}

export async function presignUpload(env: Env, uploader: Uploader, placement: Placement, input: PresignInput) {
  const mime = normaliseMime(input.mime);
  if (!config(env).blobMimeAllowlist.has(mime)) {
    throw new RelayError("mime_disallowed", `${mime.slice(0, 100)} is not an allowed attachment type.`, { declared: mime.slice(0, 100), allowed: [...config(env).blobMimeAllowlist] });
  }
  requireWithinFileCap(env, mime, input.size);
  await requireQuota(env, uploader.accountId, placement, input.size);
  const id = newId(ATTACHMENT_ID_PREFIX);
  const secret = randomHex(24);
  const now = Date.now();
  const expiresAt = now + UPLOAD_URL_SECONDS * 1000;
  await db(env).insert(attachments).values({
    id, scope: placement.scope, accountId: uploader.accountId, ownerAgentId: uploader.ownerAgentId, appId: placement.appId,
    uploaderKind: uploader.kind, uploaderId: uploader.id, filename: cleanFilename(input.filename), mime, size: input.size,
    sha256: input.sha256.toLowerCase(), status: "pending", uploadSecretHash: await sha256Hex(secret), uploadExpiresAt: expiresAt, createdAt: now,
  });
  return {
    attachment_id: id,
    upload_url: `${config(env).apiOrigin}/v1/attachments/${id}/upload?secret=${secret}`,
    expires_at: new Date(expiresAt).toISOString(),
  };
}

function invalidUrl(): RelayError {
  return new RelayError("upload_url_invalid", "This upload URL is unknown, expired or its attachment was already confirmed.");
}

/** The pending attachment an upload URL names, or upload_url_invalid. */
export async function pendingForUpload(env: Env, id: string, secret: string, now = Date.now()): Promise<AttachmentRow> {
  const row = await attachmentById(env, id);
  if (!row || row.status !== "pending" || row.deletedAt !== null || row.uploadSecretHash === null || (row.uploadExpiresAt ?? 0) < now) throw invalidUrl();
  if (!constantTimeEqual(await sha256Hex(secret), row.uploadSecretHash)) throw invalidUrl();
  return row;
}

/** Stores the PUT's bytes for a pending attachment; at most the presigned size is accepted. */
export async function receiveUpload(env: Env, row: AttachmentRow, bytes: Uint8Array): Promise<void> {
  if (bytes.length > row.size) {
    throw new RelayError("attachment_size_exceeded", `The upload is ${bytes.length} bytes; it was presigned for ${row.size}.`, { size: bytes.length, limit: row.size });
  }
  await env.BLOBS.put(objectKey(row.id), bytes, { httpMetadata: { contentType: "application/octet-stream" } });
}

/** Confirms a pending upload of the agent's own; a ready one is answered as it is. */
export async function confirmUpload(env: Env, agentId: string, id: string): Promise<AttachmentRow> {
  const row = await attachmentById(env, id);
  if (!row || row.deletedAt !== null || row.ownerAgentId !== agentId) {
    throw new RelayError("attachment_not_found", `No attachment "${id.slice(0, 100)}" is yours.`, { attachment_id: id.slice(0, 100) });
  }
  if (row.status === "ready") return row;
  const stored = await env.BLOBS.get(objectKey(row.id));
  if (!stored) throw new RelayError("attachment_not_uploaded", "Nothing was uploaded to this attachment's URL yet.", { attachment_id: row.id });
  const bytes = new Uint8Array(await stored.arrayBuffer());
  const sha256 = await sha256Bytes(bytes);
  if (bytes.length !== row.size || sha256 !== row.sha256) {
    throw new RelayError("attachment_checksum_mismatch", "The uploaded bytes differ from what was presigned; the attachment stays pending.", {
      expected: { size: row.size, sha256: row.sha256 }, received: { size: bytes.length, sha256 },
    });
  }
  const prepared = await preparedUpload(env, bytes, { declaredMime: row.mime, filename: row.filename });
  await requireQuota(env, row.accountId, { scope: row.scope, appId: row.appId }, prepared.bytes.length, row.id);
  const confirmedAt = Date.now();
  await env.BLOBS.put(objectKey(row.id), prepared.bytes, { httpMetadata: { contentType: prepared.mime }, sha256: prepared.sha256 });
  const update = {
    status: "ready" as const, mime: prepared.mime, size: prepared.bytes.length, sha256: prepared.sha256, width: prepared.width, height: prepared.height,
    confirmedAt, uploadSecretHash: null, uploadExpiresAt: null,
  };
  await db(env).update(attachments).set(update).where(and(eq(attachments.id, row.id), eq(attachments.status, "pending")));
  return { ...row, ...update };
}

/** Removes pending uploads whose URL lapsed more than the grace ago: bytes and rows. */
export async function sweepPendingUploads(env: Env, now = Date.now(), batch = 200): Promise<number> {
  const cutoff = now - PENDING_GRACE_SECONDS * 1000;
  const due = await db(env).select({ id: attachments.id }).from(attachments)
    .where(and(eq(attachments.status, "pending"), lt(attachments.uploadExpiresAt, cutoff))).limit(batch);
  const ids = due.map((row) => row.id);
  await deleteStoredBytes(env, ids);
  for (const id of ids) await db(env).delete(attachments).where(and(eq(attachments.id, id), eq(attachments.status, "pending")));
  return ids.length;
}
