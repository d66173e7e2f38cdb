/**
 * The attachment routes of the agent API (WIRE §2.9): upload (multipart or inline
 * base64), fetch from a URL, presign → PUT → confirm, list, download, metadata, soft
 * delete, and the capability tokens behind `/b/<token>`, which answers here on the API
 * origin (app origins answer it in serve/attachments.ts). Behaviour and storage live in
 * src/blobs/; this file parses, calls and renders.
 */
import type { Hono } from "hono";
import * as z from "zod";
import { defineRoute, notePageRoute, parseWith } from "../routes";
import type { AppContext, AppEnv } from "../types";
import { RelayError } from "../../errors";
import { ownedApp, requireLive } from "./app-access";
import { errors, isoTime } from "./schemas";
import { ATTACHMENT_SCOPES } from "../../db/attachments-schema";
import {
  attachmentById, attachmentFor, attachmentRef, mayManage, largestFileCap, listAttachments, softDeleteAttachment, storeAttachment, type Placement, type Uploader,
} from "../../blobs/attachments";
import { confirmUpload, pendingForUpload, presignUpload, receiveUpload } from "../../blobs/presign";
import { fetchSource } from "../../blobs/fetch-source";
import { listTokens, mintToken, redeemToken, revokeToken } from "../../blobs/capability";
import { serveAttachment } from "../../blobs/serve";
import { decodeBase64, isMultipart, readInlineJson, readMultipartUpload } from "./attachments-body";
import { readBodyBytes } from "../body";

const scope = z.enum(ATTACHMENT_SCOPES);
const appId = z.string().min(1).max(100);
const filename = z.string().min(1).max(255);
const mime = z.string().min(1).max(255);
const where = { scope: scope.optional(), app_id: appId.optional() };

const attachmentRefSchema = z.object({
  attachment_id: z.string(), scope, mime: z.string(), size: z.number().int(), sha256: z.string(), url: z.string(),
  width: z.number().int().nullable(), height: z.number().int().nullable(), filename: z.string().nullable(),
  status: z.enum(["pending", "ready"]), app_id: z.string().nullable(), created_at: isoTime, confirmed_at: isoTime.nullable(), deleted_at: isoTime.nullable(),
}).meta({ title: "AttachmentRef" });

const inlineUpload = z.strictObject({ content_base64: z.string(), filename: filename.optional(), mime: mime.optional(), ...where });
const formFields = z.strictObject({ filename: z.string().max(255).optional(), ...where });

const tokenView = z.object({
  token_id: z.string(), token_prefix: z.string(), expires_at: isoTime, once: z.boolean(), created_at: isoTime,
  last_used_at: isoTime.nullable(), use_count: z.number().int(), revoked_at: isoTime.nullable(),
}).meta({ title: "AttachmentToken" });

function agentUploader(c: AppContext): Uploader {
  const agent = c.get("agent");
  return { accountId: agent.ownerHumanId ?? agent.agentId, ownerAgentId: agent.agentId, kind: "agent", id: agent.agentId };
}

/** scope agent (the default) keeps no app; scope app needs an app of the caller's owner. */
async function placementOf(c: AppContext, input: { scope?: "agent" | "app"; app_id?: string }): Promise<Placement> {
  if ((input.scope ?? "agent") === "agent") {
    if (input.app_id !== undefined) throw new RelayError("invalid_request", "app_id goes with scope app only.", { field: "app_id" });
    return { scope: "agent", appId: null };
  }
  if (input.app_id === undefined) throw new RelayError("invalid_request", "scope app needs app_id.", { field: "app_id" });
  return { scope: "app", appId: requireLive(await ownedApp(c, input.app_id)).id };
}

function who(c: AppContext) {
  const agent = c.get("agent");
  return { agentId: agent.agentId, ownerHumanId: agent.ownerHumanId };
}

const notes = "AttachmentRef";

export function attachmentRoutes(app: Hono<AppEnv>): void {
  defineRoute(app, {
    method: "post", path: "/v1/attachments", tag: "attachments", auth: "agent",
    summary: "Upload a file: multipart/form-data (file, scope?, app_id?, filename?) or JSON { content_base64, scope?, app_id?, filename?, mime? }; sniffed, capped by type, counted against the app's and the account's quota",
    responses: { 201: { description: notes, schema: attachmentRefSchema }, ...errors(400, 401, 404, 409, 413, 415) },
  }, async (c) => {
    let upload: { bytes: Uint8Array; declaredMime: string | null; filename: string | null; fields: { scope?: "agent" | "app"; app_id?: string } };
    if (isMultipart(c)) {
      const form = await readMultipartUpload(c, c.env);
      upload = { ...form, fields: parseWith(formFields, form.fields, "body") };
    } else {
      const body = parseWith(inlineUpload, await readInlineJson(c, c.env), "body");
      upload = { bytes: decodeBase64(body.content_base64, largestFileCap(c.env)), declaredMime: body.mime ?? null, filename: body.filename ?? null, fields: body };
    }
    const placement = await placementOf(c, upload.fields);
    const row = await storeAttachment(c.env, agentUploader(c), placement, upload.bytes, upload);
    return c.json(attachmentRef(c.env, row), 201);
  });

  defineRoute(app, {
    method: "post", path: "/v1/attachments/fetch", tag: "attachments", auth: "agent",
    summary: "Fetch a file from a public https URL (no private hosts, no redirects, capped, timed) and upload it",
    body: z.strictObject({ source_url: z.string().min(1).max(2048), mime: mime.optional(), filename: filename.optional(), ...where }),
    responses: { 201: { description: notes, schema: attachmentRefSchema }, ...errors(400, 401, 404, 409, 413, 415, 422) },
  }, async (c, { body }) => {
    const placement = await placementOf(c, body);
    const source = await fetchSource(c.env, body.source_url);
    const row = await storeAttachment(c.env, agentUploader(c), placement, source.bytes, { declaredMime: body.mime ?? null, filename: body.filename ?? source.filename });
    return c.json(attachmentRef(c.env, row), 201);
  });

  defineRoute(app, {
    method: "post", path: "/v1/attachments/presign", tag: "attachments", auth: "agent",
    summary: "Reserve a pending attachment and get a short-lived upload URL on the relay; PUT the bytes there, then confirm",
    body: z.strictObject({ mime, size: z.number().int().min(1), sha256: z.string().regex(/^[0-9a-fA-F]{64}$/), filename: filename.optional(), ...where }),
    responses: {
      201: { description: "The upload URL", schema: z.object({ attachment_id: z.string(), upload_url: z.string(), expires_at: isoTime }) },
      ...errors(400, 401, 404, 409, 413, 415),
    },
  }, async (c, { body }) => {
    const placement = await placementOf(c, body);
    return c.json(await presignUpload(c.env, agentUploader(c), placement, body), 201);
  });

  defineRoute(app, {
    method: "put", path: "/v1/attachments/:id/upload", tag: "attachments", auth: "none",
    summary: "The presigned upload URL: raw bytes, no key (the secret in the URL is the credential), at most the presigned size",
    query: z.object({ secret: z.string().min(1).max(200) }),
    responses: { 200: { description: "Stored; confirm next", schema: z.object({ attachment_id: z.string(), received: z.number().int() }) }, ...errors(400, 401, 413) },
  }, async (c, { query }) => {
    const row = await pendingForUpload(c.env, c.req.param("id")!, query.secret);
    let bytes: Uint8Array;
    try {
      bytes = await readBodyBytes(c, row.size);
    } catch (err) {
      if (err instanceof RelayError && err.code === "payload_too_large") throw new RelayError("attachment_size_exceeded", `The upload is over the presigned ${row.size} bytes.`, { limit: row.size });
      throw err;
    }
    await receiveUpload(c.env, row, bytes);
    return c.json({ attachment_id: row.id, received: bytes.length });
  });

  defineRoute(app, {
    method: "post", path: "/v1/attachments/:id/confirm", tag: "attachments", auth: "agent",
    summary: "Finish a presigned upload: the stored bytes are checked against the presigned size and sha256, sniffed, capped and counted",
    responses: { 200: { description: notes, schema: attachmentRefSchema }, ...errors(401, 404, 409, 413, 415, 422) },
  }, async (c) => c.json(attachmentRef(c.env, await confirmUpload(c.env, c.get("agent").agentId, c.req.param("id")!))));

  defineRoute(app, {
    method: "get", path: "/v1/attachments", tag: "attachments", auth: "agent",
    summary: "Your non-deleted attachments (and those of your apps), newest first",
    query: z.object({ cursor: z.string().min(1).max(200).optional(), limit: z.coerce.number().int().min(1).max(100).optional() }),
    responses: { 200: { description: "A page", schema: z.object({ items: z.array(attachmentRefSchema), next_cursor: z.string().nullable() }) }, ...errors(400, 401) },
  }, async (c, { query }) => {
    const page = await listAttachments(c.env, who(c), query.limit ?? 50, query.cursor);
    return c.json({ items: page.items.map((row) => attachmentRef(c.env, row)), next_cursor: page.next_cursor });
  });

  defineRoute(app, {
    method: "get", path: "/v1/attachments/:id", tag: "attachments", auth: "agent",
    summary: "The attachment's bytes (?w= asks for a thumbnail width)",
    query: z.object({ w: z.string().max(10).optional() }),
    responses: { 200: { description: "The bytes", contentType: "application/octet-stream" }, ...errors(400, 401, 404) },
  }, async (c) => serveAttachment(c.env, c.req.raw, await attachmentFor(c.env, who(c), c.req.param("id")!)));

  defineRoute(app, {
    method: "get", path: "/v1/attachments/:id/metadata", tag: "attachments", auth: "agent",
    summary: "The attachment's AttachmentRef, no bytes",
    responses: { 200: { description: notes, schema: attachmentRefSchema }, ...errors(401, 404) },
  }, async (c) => c.json(attachmentRef(c.env, await attachmentFor(c.env, who(c), c.req.param("id")!, true))));

  defineRoute(app, {
    method: "delete", path: "/v1/attachments/:id", tag: "attachments", auth: "agent",
    summary: "Soft-delete the attachment and free its bytes; its tokens stop working; idempotent",
    responses: { 200: { description: "Deleted", schema: z.object({ attachment_id: z.string(), deleted: z.literal(true) }) }, ...errors(401, 404) },
  }, async (c) => {
    const id = c.req.param("id")!;
    const row = await deletable(c, id);
    if (row) await softDeleteAttachment(c.env, row);
    return c.json({ attachment_id: id, deleted: true as const });
  });

  defineRoute(app, {
    method: "post", path: "/v1/attachments/:id/tokens", tag: "attachments", auth: "agent",
    summary: "Mint a /b/<token> capability URL (ttl_seconds may only shorten the default: 30 days app scope, 24 h agent scope; once: spent by the first GET)",
    body: z.strictObject({ ttl_seconds: z.number().int().min(1).optional(), once: z.boolean().optional() }), bodyOptional: true,
    responses: {
      201: {
        description: "The token, shown once",
        schema: z.object({ token_id: z.string(), token: z.string(), token_prefix: z.string(), url: z.string(), expires_at: isoTime, once: z.boolean() }),
      },
      ...errors(400, 401, 404),
    },
  }, async (c, { body }) => c.json(await mintToken(c.env, await attachmentFor(c.env, who(c), c.req.param("id")!), body), 201));

  defineRoute(app, {
    method: "get", path: "/v1/attachments/:id/tokens", tag: "attachments", auth: "agent",
    summary: "The attachment's capability tokens with use counts, revoked ones included",
    responses: { 200: { description: "Tokens", schema: z.object({ attachment_id: z.string(), items: z.array(tokenView) }) }, ...errors(401, 404) },
  }, async (c) => c.json(await listTokens(c.env, (await attachmentFor(c.env, who(c), c.req.param("id")!)).id)));

  defineRoute(app, {
    method: "delete", path: "/v1/attachments/:id/tokens/:tokenId", tag: "attachments", auth: "agent",
    summary: "Revoke a capability token; idempotent",
    responses: { 200: { description: "Revoked", schema: z.object({ token_id: z.string(), revoked: z.literal(true) }) }, ...errors(401, 404) },
  }, async (c) => c.json(await revokeToken(c.env, (await attachmentFor(c.env, who(c), c.req.param("id")!)).id, c.req.param("tokenId")!)));

  notePageRoute("get", "/b/:token");
  app.get("/b/:token", async (c) => serveAttachment(c.env, c.req.raw, await redeemToken(c.env, c.req.param("token"))));
}

/** A delete of an already deleted attachment of yours succeeds again; anyone else's is not found. */
async function deletable(c: AppContext, id: string) {
  try {
    return await attachmentFor(c.env, who(c), id, true);
  } catch (err) {
    const row = await attachmentById(c.env, id);
    if (row && row.deletedAt !== null && await mayManage(c.env, who(c), row)) return null;
    throw err;
  }
}
