/**
 * What an uploaded attachment really is (WIRE §2.9, spec B mime_*): the bytes are sniffed
 * with `file-type` (a maintained signature library, rather than growing mime.ts's table),
 * and the result decides everything after it: whether the type is allowed, which
 * per-file cap applies, how it is served. A declared type is only believed for the few
 * text types that have no magic bytes, and only when the bytes look like that text.
 */
import { RelayError } from "../errors";
import { isSvgDocument } from "./svg";

/** Types with no signature: believed when declared (or named by the extension) and the bytes are text. */
const TEXT_TYPES: Record<string, (bytes: Uint8Array) => boolean> = {
  "text/plain": isUtf8Text,
  "text/csv": isUtf8Text,
  "text/markdown": isUtf8Text,
  "application/json": (bytes) => isUtf8Text(bytes) && parsesAsJson(bytes),
  "image/svg+xml": isSvgDocument,
};

const TEXT_EXTENSIONS: Record<string, string> = { txt: "text/plain", csv: "text/csv", md: "text/markdown", json: "application/json", svg: "image/svg+xml" };

/** Declared types that say nothing about the bytes. */
const UNSPECIFIC = new Set(["", "application/octet-stream", "binary/octet-stream"]);

/** Aliases browsers and tools send for the same type. */
const ALIASES: Record<string, string> = { "image/jpg": "image/jpeg", "audio/mp3": "audio/mpeg", "audio/x-wav": "audio/wav", "audio/wave": "audio/wav", "audio/vnd.wave": "audio/wav", "application/x-zip-compressed": "application/zip" };

export function normaliseMime(declared: string | null | undefined): string {
  const bare = (declared ?? "").split(";")[0].trim().toLowerCase();
  return ALIASES[bare] ?? bare;
}

function isUtf8Text(bytes: Uint8Array): boolean {
  if (bytes.includes(0)) return false;
  try {
    new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}

function parsesAsJson(bytes: Uint8Array): boolean {
  try {
    JSON.parse(new TextDecoder().decode(bytes));
    return true;
  } catch {
    return false;
  }
}

function extensionType(filename: string | null | undefined): string | null {
  const name = filename ?? "";
  const dot = name.lastIndexOf(".");
  return dot > 0 ? TEXT_EXTENSIONS[name.slice(dot + 1).toLowerCase()] ?? null : null;
}

/** Audio and video get the larger per-file cap (WIRE §5.6 MAX_MEDIA_BLOB_BYTES). */
export function isMedia(mime: string): boolean {
  return mime.startsWith("audio/") || mime.startsWith("video/");
}

/** The type file-type reads from the bytes, in the relay's spelling. */
async function signatureType(bytes: Uint8Array): Promise<string | null> {
  // Loaded on the first upload an isolate sniffs, not with the Worker (its signature tables are about 1.5 MiB of heap).
  const { fileTypeFromBuffer } = await import("file-type/core");
  const found = await fileTypeFromBuffer(bytes);
  if (!found) return null;
  // file-type names MP3 and WAV by their registry variants; the allowlist uses the common names.
  if (found.mime === "audio/vnd.wave") return "audio/wav";
  // An SVG that starts with an XML declaration is, to file-type, just XML.
  if (found.mime === "application/xml" && isSvgDocument(bytes)) return "image/svg+xml";
  return normaliseMime(found.mime);
}

/**
 * The sniffed type of `bytes` against the allowlist: `mime_mismatch` when a specific
 * declared type contradicts the bytes, `mime_disallowed` when the real type is not
 * allowed (or the bytes are neither a known format nor the declared text type).
 */
export async function sniffAttachment(bytes: Uint8Array, declaredMime: string | null | undefined, filename: string | null | undefined, allowlist: ReadonlySet<string>): Promise<string> {
  const declared = normaliseMime(declaredMime);
  const sniffed = await signatureType(bytes);
  if (sniffed) {
    if (!UNSPECIFIC.has(declared) && declared !== sniffed) {
      throw new RelayError("mime_mismatch", `The bytes are ${sniffed}, not the declared ${declared.slice(0, 100)}.`, { declared: declared.slice(0, 100), sniffed });
    }
    if (!allowlist.has(sniffed)) throw new RelayError("mime_disallowed", `${sniffed} is not an allowed attachment type.`, { sniffed, allowed: [...allowlist] });
    return sniffed;
  }
  const claimed = UNSPECIFIC.has(declared) ? extensionType(filename) ?? "text/plain" : declared;
  const looksRight = TEXT_TYPES[claimed];
  if (!looksRight && allowlist.has(claimed)) {
    throw new RelayError("mime_mismatch", `The bytes are not ${claimed}.`, { declared: claimed, sniffed: null });
  }
  if (!looksRight) {
    throw new RelayError("mime_disallowed", `The bytes match no allowed type${UNSPECIFIC.has(declared) ? "" : ` (declared ${declared.slice(0, 100)})`}.`, { declared: declared.slice(0, 100) || null, sniffed: null, allowed: [...allowlist] });
  }
  if (!looksRight(bytes)) {
    throw new RelayError(UNSPECIFIC.has(declared) ? "mime_disallowed" : "mime_mismatch", `The bytes are not ${claimed} text.`, { declared: declared.slice(0, 100) || null, sniffed: null });
  }
  if (!allowlist.has(claimed)) throw new RelayError("mime_disallowed", `${claimed} is not an allowed attachment type.`, { sniffed: claimed, allowed: [...allowlist] });
  return claimed;
}
