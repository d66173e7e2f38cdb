/**
 * Deploy assets: path rules, size and count caps, base64 decoding and the type each file
 * is stored and served as. Pure: it only turns the request's asset list into checked
 * bytes or one catalogue error naming the offending entry; storing is the caller's job.
 */
import { RelayError } from "../errors";
import { decideMime, extensionOf } from "../blobs/mime";
import { sha256Bytes } from "../blobs/store";
import type { AssetEntry } from "../db/apps";

export interface AssetInput {
  path: string;
  content_base64?: string;
  attachment_id?: string;
  mime?: string;
  /** The bytes themselves, from an app import (src/apps/archive); never from a request body, whose schema has no such field. */
  bytes?: Uint8Array;
}

export interface PreparedAsset extends AssetEntry {
  bytes: Uint8Array;
}

/** An attachment's stored facts and bytes, as the deploy shell found them for one entry. */
export interface AttachedFile {
  id: string;
  mime: string;
  sha256: string;
  bytes: Uint8Array;
}

/** Finds an attachment the deploying agent may use here, or throws its catalogue error. */
export type AttachmentResolver = (attachmentId: string, field: string) => Promise<AttachedFile>;

const refuseAttachments: AttachmentResolver = async (attachmentId, field) => {
  throw new RelayError("attachment_not_found", `Attachment ${attachmentId.slice(0, 100)} is not one you may deploy here.`, { field });
};

/** Paths the relay serves itself on every app origin. */
const RESERVED_PREFIXES = ["_svc/", "b/"];
const RESERVED_PATHS = new Set(["_svc", "b", "robots.txt", "favicon.ico", ".well-known/security.txt", "sitemap.xml", "index.html", "manifest.json"]);
/** Files a browser could execute or render as a page: scripts and styles belong inline in index.html. */
export const FORBIDDEN_EXTENSIONS = new Set(["js", "mjs", "cjs", "jsx", "ts", "tsx", "css", "svg", "html", "htm", "xhtml"]);
const PATH_PATTERN = /^[A-Za-z0-9._/-]+$/;

export function checkAssetPath(path: string, field: string): void {
  const fail = (why: string) => {
    throw new RelayError("invalid_request", `Asset path "${path.slice(0, 200)}" ${why}.`, { field, path: path.slice(0, 200) });
  };
  if (path.length === 0 || path.length > 512) fail("must be 1–512 characters");
  if (!PATH_PATTERN.test(path)) fail("may only use A–Z, a–z, 0–9, '.', '_', '-' and '/'");
  if (path.startsWith("/")) fail("must be relative (no leading /)");
  const segments = path.split("/");
  if (segments.some((s) => s === "" || s === "." || s === "..")) fail("may not contain empty, '.' or '..' segments");
  if (segments.some((s) => s.startsWith("."))) fail("may not contain dot-files");
  const lower = path.toLowerCase();
  if (RESERVED_PATHS.has(lower) || RESERVED_PREFIXES.some((p) => lower.startsWith(p))) fail("is reserved by the relay");
  if (FORBIDDEN_EXTENSIONS.has(extensionOf(lower))) fail("has a type that could execute (scripts, styles, SVG and HTML belong inline in index.html)");
}

function decodeBase64(value: string, field: string): Uint8Array {
  const clean = value.replace(/\s+/g, "");
  const invalid = () => new RelayError("invalid_request", "content_base64 is not valid base64.", { field });
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(clean) || clean.length % 4 === 1) throw invalid();
  let binary: string;
  try {
    // atob also refuses what the pattern lets through (padding on a length that is not a multiple of 4).
    binary = atob(clean);
  } catch {
    throw invalid();
  }
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

export async function prepareAssets(
  inputs: AssetInput[],
  limits: { maxAssets: number; maxAssetBytes: number },
  resolveAttachment: AttachmentResolver = refuseAttachments,
): Promise<PreparedAsset[]> {
  if (inputs.length > limits.maxAssets) {
    throw new RelayError("invalid_request", `At most ${limits.maxAssets} assets per deploy; got ${inputs.length}.`, { field: "assets", limit: limits.maxAssets });
  }
  const seen = new Set<string>();
  const prepared: PreparedAsset[] = [];
  for (const [index, input] of inputs.entries()) {
    const field = `assets.${index}`;
    checkAssetPath(input.path, `${field}.path`);
    const key = input.path.toLowerCase();
    if (seen.has(key)) throw new RelayError("invalid_request", `Asset path "${input.path}" appears twice.`, { field: `${field}.path` });
    seen.add(key);
    if (input.attachment_id !== undefined) {
      if (typeof input.attachment_id !== "string" || input.content_base64 !== undefined) {
        throw new RelayError("invalid_request", "An asset carries either content_base64 or attachment_id, not both.", { field });
      }
      // The attachment was sniffed and capped when it was uploaded: its type and hash stand.
      const file = await resolveAttachment(input.attachment_id, `${field}.attachment_id`);
      prepared.push({ path: input.path, bytes: file.bytes, size: file.bytes.byteLength, mime: file.mime, sha256: file.sha256, attachment_id: file.id });
      continue;
    }
    const bytes = input.bytes ?? decodeBase64(input.content_base64 ?? "", `${field}.content_base64`);
    if (bytes.byteLength > limits.maxAssetBytes) {
      throw new RelayError("payload_too_large", `Asset "${input.path}" is ${bytes.byteLength} bytes; the cap is ${limits.maxAssetBytes}.`, { field, limit: limits.maxAssetBytes });
    }
    const mime = decideMime(input.path, bytes, input.mime);
    if (!mime.ok) {
      throw new RelayError("mime_mismatch", `Asset "${input.path}" is declared ${mime.declared} but its bytes are ${mime.sniffed}.`, { field: `${field}.mime`, declared: mime.declared, sniffed: mime.sniffed });
    }
    prepared.push({ path: input.path, bytes, size: bytes.byteLength, mime: mime.mime, sha256: await sha256Bytes(bytes) });
  }
  return prepared;
}
