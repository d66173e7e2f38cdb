// The one way the CLI sends a file to the relay as an attachment (WIRE §2.9), shared by
// `service attachment upload` and `service deploy --asset`: files under 1 MB go inline
// (POST /v1/attachments, base64), larger ones through presign → PUT to the relay's upload
// URL → confirm, so a big file never has to fit in one JSON body. Progress goes to stderr,
// and only when stderr is a terminal; output meant for programs stays clean.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { mimeForExtension, sniff } from "../blobs/mime.ts";
import { CliError } from "./errors.ts";
import { errorFromResponse, type Auth, type RelayClient } from "./http.ts";

/** From this size on a file goes through presign → PUT → confirm. */
export const PRESIGN_FROM_BYTES = 1_000_000;
const UPLOAD_TIMEOUT_MS = 300_000;
const PROGRESS_CHUNK_BYTES = 256 * 1024;

export interface UploadRequest {
  file: string;
  filename: string;
  scope: "agent" | "app";
  appId?: string;
  mime?: string;
}

function placement(request: UploadRequest): Record<string, unknown> {
  return request.scope === "app" ? { scope: "app", app_id: request.appId } : {};
}

/** The bytes as a stream that reports how far it got (a terminal only). */
function withProgress(bytes: Uint8Array, label: string): ReadableStream<Uint8Array> | Uint8Array {
  if (!process.stderr.isTTY) return bytes;
  let sent = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent >= bytes.byteLength) {
        process.stderr.write(`\r${label}: ${bytes.byteLength} bytes sent\n`);
        controller.close();
        return;
      }
      const chunk = bytes.subarray(sent, sent + PROGRESS_CHUNK_BYTES);
      sent += chunk.byteLength;
      process.stderr.write(`\r${label}: ${Math.floor((sent * 100) / bytes.byteLength)}%`);
      controller.enqueue(chunk);
    },
  });
}

async function putBytes(uploadUrl: string, bytes: Uint8Array, label: string): Promise<void> {
  let res: Response;
  try {
    res = await fetch(uploadUrl, {
      method: "PUT", body: withProgress(bytes, label), headers: { "content-type": "application/octet-stream" },
      signal: AbortSignal.timeout(UPLOAD_TIMEOUT_MS), duplex: "half",
    } as RequestInit);
  } catch (err) {
    throw new CliError("fetch_error", `Sending ${label} to the relay failed: ${err instanceof Error ? err.message : String(err)}.`, { hint: "Check the connection and run the command again." });
  }
  if (!res.ok) throw errorFromResponse({ status: res.status, headers: res.headers, text: await res.text() });
  await res.arrayBuffer();
}

/** Uploads one file and answers the relay's AttachmentRef. */
export async function uploadAttachment(relay: RelayClient, auth: Auth, request: UploadRequest): Promise<Record<string, unknown>> {
  const bytes = new Uint8Array(readFileSync(request.file));
  const declared = request.mime !== undefined ? { mime: request.mime } : {};
  if (bytes.byteLength < PRESIGN_FROM_BYTES) {
    const body = { content_base64: Buffer.from(bytes).toString("base64"), filename: request.filename, ...declared, ...placement(request) };
    return relay.object("POST", "/v1/attachments", { auth, body, timeoutMs: UPLOAD_TIMEOUT_MS });
  }
  const mime = request.mime ?? sniff(bytes) ?? mimeForExtension(request.filename);
  const sha256 = createHash("sha256").update(bytes).digest("hex");
  const presigned = await relay.object("POST", "/v1/attachments/presign", {
    auth, body: { mime, size: bytes.byteLength, sha256, filename: request.filename, ...placement(request) },
  });
  const id = String(presigned.attachment_id);
  await putBytes(String(presigned.upload_url), bytes, request.filename);
  return relay.object("POST", `/v1/attachments/${encodeURIComponent(id)}/confirm`, { auth, body: {}, timeoutMs: UPLOAD_TIMEOUT_MS });
}
