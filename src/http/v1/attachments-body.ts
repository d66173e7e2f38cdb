/**
 * Reading an upload's body, for `POST /v1/attachments` and `POST /_svc/attachments`:
 * multipart form data (field `file`, plus text fields) or, on the agent API, inline JSON
 * `{ content_base64, … }`. The body is capped before it is parsed (the largest attachment
 * plus room for the form's framing, or its base64 length), a truncated or malformed form
 * is `invalid_request`, and an oversized one is `attachment_size_exceeded`.
 */
import type { Context } from "hono";
import { RelayError } from "../../errors";
import { decodeUtf8, readBodyBytes } from "../body";
import { refuseUnsafeJsonText, unsafeTextError, unsafeTextProblem } from "../text-safety";
import type { AppContext } from "../types";
import { largestFileCap } from "../../blobs/attachments";

/** Room for multipart boundaries, part headers and the small text fields. */
const FORM_OVERHEAD_BYTES = 65_536;

export interface UploadBody {
  bytes: Uint8Array;
  /** The part's (or the JSON's) declared type. */
  declaredMime: string | null;
  filename: string | null;
  /** The other text fields of a form, or the JSON body's fields. */
  fields: Record<string, unknown>;
}

async function cappedBytes(c: Context, limit: number): Promise<Uint8Array> {
  try {
    return await readBodyBytes(c as AppContext, limit);
  } catch (err) {
    if (err instanceof RelayError && err.code === "payload_too_large") {
      throw new RelayError("attachment_size_exceeded", `The upload is over ${limit} bytes.`, { limit });
    }
    throw err;
  }
}

export function isMultipart(c: Context): boolean {
  return /^multipart\/form-data\s*;/i.test(c.req.header("content-type") ?? "");
}

/** A multipart upload: the `file` part and the form's text fields. */
export async function readMultipartUpload(c: Context, env: object, limit = largestFileCap(env)): Promise<UploadBody> {
  const raw = await cappedBytes(c, limit + FORM_OVERHEAD_BYTES);
  let form: FormData;
  try {
    form = await new Response(raw, { headers: { "content-type": c.req.header("content-type")! } }).formData();
  } catch {
    throw new RelayError("invalid_request", "The multipart body is malformed or truncated.", { field: "body" });
  }
  const file = form.get("file");
  if (file === null || typeof file === "string") throw new RelayError("invalid_request", "The form needs a file part named `file`.", { field: "file" });
  const fields: Record<string, unknown> = {};
  for (const [name, value] of form.entries()) if (name !== "file" && typeof value === "string") fields[name] = value;
  for (const [name, value] of [...Object.entries(fields), ["file (its filename)", file.name] as const]) {
    const problem = typeof value === "string" ? unsafeTextProblem(value) : null;
    if (problem) throw unsafeTextError(name, problem);
  }
  const bytes = new Uint8Array(await file.arrayBuffer());
  if (bytes.length > limit) throw new RelayError("attachment_size_exceeded", `The file is ${bytes.length} bytes; no attachment may pass ${limit}.`, { size: bytes.length, limit });
  const filename = typeof fields.filename === "string" && fields.filename !== "" ? fields.filename : file.name && file.name !== "blob" ? file.name : null;
  return { bytes, declaredMime: file.type || null, filename, fields };
}

/** Raw JSON of an inline upload, capped at the base64 length of the largest attachment. */
export async function readInlineJson(c: Context, env: object): Promise<unknown> {
  const raw = await cappedBytes(c, Math.ceil(largestFileCap(env) / 3) * 4 + FORM_OVERHEAD_BYTES);
  const text = decodeUtf8(raw);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new RelayError("invalid_request", "The body is not valid JSON.", { field: "body" });
  }
  refuseUnsafeJsonText(text, parsed);
  return parsed;
}

/** Decodes standard base64 (whitespace ignored), after the pre-decode size guard. */
export function decodeBase64(text: string, limit: number): Uint8Array {
  const clean = text.replace(/\s+/g, "");
  const decodedLength = Math.floor((clean.length * 3) / 4) - (clean.endsWith("==") ? 2 : clean.endsWith("=") ? 1 : 0);
  if (decodedLength > limit) throw new RelayError("attachment_size_exceeded", `The file is ${decodedLength} bytes; no attachment may pass ${limit}.`, { size: decodedLength, limit });
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(clean) || clean.length % 4 !== 0) {
    throw new RelayError("invalid_request", "content_base64 is not valid base64.", { field: "content_base64" });
  }
  const binary = atob(clean);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i += 1) bytes[i] = binary.charCodeAt(i);
  return bytes;
}
