/**
 * Attachments on an app's own origin (WIRE §4.3): `POST /_svc/attachments` uploads an
 * app-scoped file as the page's signed-in owner or member (multipart, field `file`);
 * with `?collection=<name>` whose `write` admits `anyone`, a visitor may upload too,
 * within the anonymous limits (src/blobs/anonymous.ts). `GET /_svc/attachments/<id>`
 * serves one of this app's attachments to whoever may open the app (public: anyone;
 * link: the share pass; private: owner or member). `/b/<token>` works here as on the
 * API origin.
 */
import type { Hono } from "hono";
import * as z from "zod";
import { RelayError } from "../../errors";
import { config } from "../../config";
import { hitRateLimit } from "../../db/rate-limit";
import { liveManifest } from "../../apps/live-manifest";
import { attachmentById, attachmentRef, storeAttachment, type Uploader } from "../../blobs/attachments";
import { anonAddressHash, requireAnonymousAllowance } from "../../blobs/anonymous";
import { redeemToken } from "../../blobs/capability";
import { serveAttachment } from "../../blobs/serve";
import { readMultipartUpload, isMultipart } from "../v1/attachments-body";
import { parseWith } from "../plain-issues";
import { clientIp } from "./caller";
import { noStore, target } from "./data";
import type { ServeContext, ServeEnv } from "./context";
import { assertGatedServable, canOpen, viewerOf } from "./viewer";

const uploadQuery = z.object({ collection: z.string().min(1).max(64).optional() });

/** Whether the live manifest's `collection` lets anyone write. */
async function anyoneWrites(c: ServeContext, collection: string): Promise<boolean> {
  const manifest = await liveManifest(c.env, c.get("served").app);
  const declared = manifest?.collections[collection];
  if (!declared) throw new RelayError("collection_not_found", `The app declares no collection "${collection}".`, { collection });
  return declared.permissions.write.some((subject) => subject.who === "anyone");
}

async function uploaderFor(c: ServeContext, collection: string | undefined): Promise<{ uploader: Uploader; anonymous: string | null }> {
  const served = c.get("served");
  const principal = (await target(c)).caller.principal;
  const account = served.app.ownerHumanId;
  if (principal.kind === "owner" || principal.kind === "member") {
    return { uploader: { accountId: account, ownerAgentId: null, kind: "human", id: principal.humanId }, anonymous: null };
  }
  if (collection !== undefined && await anyoneWrites(c, collection)) {
    await hitRateLimit(c.env, `svc-write:${clientIp(c)}`, config(c.env).rateLimit.pageWrite, 60);
    const hash = await anonAddressHash(clientIp(c), served.app.id);
    const kind = principal.kind === "visitor" ? "visitor" : "anon";
    return { uploader: { accountId: account, ownerAgentId: null, kind, id: principal.kind === "visitor" ? principal.visitorId : null, anonAddressHash: hash }, anonymous: hash };
  }
  if (served.app.visibility === "private") throw new RelayError("unauthorized", "Sign in to upload to this app.");
  throw new RelayError("upload_forbidden", "Only the app's owner and members may upload here.");
}

export function attachmentPageRoutes(app: Hono<ServeEnv>): void {
  app.post("/_svc/attachments", async (c) => {
    const served = c.get("served");
    const { collection } = parseWith(uploadQuery, c.req.query(), "query");
    const { uploader, anonymous } = await uploaderFor(c, collection);
    if (!isMultipart(c)) throw new RelayError("invalid_request", "Upload as multipart/form-data with a `file` part.", { field: "body" });
    const limit = anonymous ? config(c.env).limits.ANON_UPLOAD_MAX_BYTES : undefined;
    const form = await readMultipartUpload(c, c.env, limit);
    const row = await storeAttachment(c.env, uploader, { scope: "app", appId: served.app.id }, form.bytes, {
      declaredMime: form.declaredMime, filename: form.filename,
      admit: anonymous ? (mime, size) => requireAnonymousAllowance(c.env, served.app.id, anonymous, mime, size) : undefined,
    });
    const ref = attachmentRef(c.env, row);
    const brief = { attachment_id: ref.attachment_id, mime: ref.mime, size: ref.size, filename: ref.filename };
    return noStore(c.json(anonymous ? brief : { ...ref, url: `${served.origin}/_svc/attachments/${row.id}` }, 201));
  });

  app.get("/_svc/attachments/:id", async (c) => {
    const served = c.get("served");
    const id = c.req.param("id");
    const row = await attachmentById(c.env, id);
    if (served.app.visibility !== "public") {
      assertGatedServable(served, c.env);
      if (!canOpen(served, await viewerOf(c, served))) throw new RelayError("attachment_not_found", `No attachment "${id.slice(0, 100)}" in this app.`, { attachment_id: id.slice(0, 100) });
    }
    if (!row || row.scope !== "app" || row.appId !== served.app.id || row.deletedAt !== null || row.status !== "ready") {
      throw new RelayError("attachment_not_found", `No attachment "${id.slice(0, 100)}" in this app.`, { attachment_id: id.slice(0, 100) });
    }
    return serveAttachment(c.env, c.req.raw, row);
  });

  app.get("/b/:token", async (c) => serveAttachment(c.env, c.req.raw, await redeemToken(c.env, c.req.param("token"))));
}
