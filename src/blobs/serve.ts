/**
 * The one way an attachment's bytes leave the relay, whichever door asked (the agent API,
 * `/_svc/attachments/<id>` on an app origin, `/b/<token>` on either origin): the stored,
 * sniffed type, nosniff, a sandbox CSP, inline disposition only for types a browser
 * renders harmlessly, a private cache, ETag and single-range 206 (WIRE §4.5). `?w=` asks
 * for a thumbnail (WIRE §4.6) through thumbnails.ts.
 */
import { RelayError } from "../errors";
import { isInlineSafe } from "./mime";
import { objectKey, type AttachmentRow } from "./attachments";
import { parseRange } from "../http/serve/assets";
import { thumbnailFor } from "./thumbnails";

/** A filename safe to put in a header, or `download`. */
function headerFilename(row: AttachmentRow): string {
  const name = (row.filename ?? "").replace(/[^A-Za-z0-9._ -]/g, "_").slice(0, 200).trim();
  return name === "" ? "download" : name;
}

export function attachmentHeaders(row: AttachmentRow, mime = row.mime): Record<string, string> {
  return {
    "Content-Type": mime,
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "sandbox; default-src 'none'",
    "Content-Disposition": `${isInlineSafe(mime) ? "inline" : "attachment"}; filename="${headerFilename(row)}"`,
    ETag: `"${row.sha256}"`,
    "Accept-Ranges": "bytes",
    "Cache-Control": "private, no-store",
    "Referrer-Policy": "no-referrer",
  };
}

/** Reads `?w=`: absent, or a positive width (anything else is invalid_request). */
export function requestedWidth(url: string): number | null {
  const raw = new URL(url).searchParams.get("w");
  if (raw === null) return null;
  if (!/^\d{1,6}$/.test(raw) || Number(raw) === 0) throw new RelayError("invalid_request", "w must be a positive whole number of pixels.", { field: "w" });
  return Number(raw);
}

function gone(row: AttachmentRow): RelayError {
  return new RelayError("attachment_not_found", "The attachment's bytes are gone.", { attachment_id: row.id });
}

export async function serveAttachment(env: Env, request: Request, row: AttachmentRow): Promise<Response> {
  const width = requestedWidth(request.url);
  if (width !== null) {
    const variant = await thumbnailFor(env, row, width);
    if (variant) return new Response(variant.bytes, { headers: { ...attachmentHeaders(row, variant.mime), ETag: `"${row.sha256}-w${variant.width}"` } });
  }
  const headers = attachmentHeaders(row);
  const rangeHeader = request.headers.get("range");
  const range = rangeHeader === null ? null : parseRange(rangeHeader, row.size);
  if (range === "unsatisfiable") return new Response(null, { status: 416, headers: { ...headers, "Content-Range": `bytes */${row.size}` } });
  const object = await env.BLOBS.get(objectKey(row.id), range ? { range } : undefined);
  if (!object) throw gone(row);
  if (range) {
    return new Response(object.body, { status: 206, headers: { ...headers, "Content-Range": `bytes ${range.offset}-${range.offset + range.length - 1}/${row.size}`, "Content-Length": String(range.length) } });
  }
  return new Response(object.body, { headers: { ...headers, "Content-Length": String(row.size) } });
}
