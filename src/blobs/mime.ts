/**
 * What a file really is. Types with magic bytes are sniffed from the first bytes (a
 * declared type that contradicts them is refused); text-like types without magic bytes
 * come from the declared type or the extension. Serving decisions (inline or download)
 * are made from the result, never from what the uploader claimed.
 */

interface Signature {
  mime: string;
  test: (b: Uint8Array) => boolean;
}

const at = (b: Uint8Array, offset: number, bytes: number[]) => bytes.every((v, i) => b[offset + i] === v);
const ascii = (b: Uint8Array, offset: number, text: string) => at(b, offset, [...text].map((ch) => ch.charCodeAt(0)));

const signatures: Signature[] = [
  { mime: "image/png", test: (b) => at(b, 0, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]) },
  { mime: "image/jpeg", test: (b) => at(b, 0, [0xff, 0xd8, 0xff]) },
  { mime: "image/gif", test: (b) => ascii(b, 0, "GIF87a") || ascii(b, 0, "GIF89a") },
  { mime: "image/webp", test: (b) => ascii(b, 0, "RIFF") && ascii(b, 8, "WEBP") },
  { mime: "image/avif", test: (b) => ascii(b, 4, "ftypavif") || ascii(b, 4, "ftypavis") },
  { mime: "image/x-icon", test: (b) => at(b, 0, [0x00, 0x00, 0x01, 0x00]) },
  { mime: "application/pdf", test: (b) => ascii(b, 0, "%PDF-") },
  { mime: "audio/wav", test: (b) => ascii(b, 0, "RIFF") && ascii(b, 8, "WAVE") },
  { mime: "audio/ogg", test: (b) => ascii(b, 0, "OggS") },
  { mime: "audio/mpeg", test: (b) => ascii(b, 0, "ID3") || (b[0] === 0xff && (b[1] & 0xe0) === 0xe0) },
  { mime: "audio/flac", test: (b) => ascii(b, 0, "fLaC") },
  { mime: "video/webm", test: (b) => at(b, 0, [0x1a, 0x45, 0xdf, 0xa3]) },
  { mime: "video/mp4", test: (b) => ascii(b, 4, "ftyp") },
  { mime: "font/woff", test: (b) => ascii(b, 0, "wOFF") },
  { mime: "font/woff2", test: (b) => ascii(b, 0, "wOF2") },
  { mime: "font/ttf", test: (b) => at(b, 0, [0x00, 0x01, 0x00, 0x00]) },
  { mime: "font/otf", test: (b) => ascii(b, 0, "OTTO") },
  { mime: "application/zip", test: (b) => at(b, 0, [0x50, 0x4b, 0x03, 0x04]) || at(b, 0, [0x50, 0x4b, 0x05, 0x06]) },
];

const byExtension: Record<string, string> = {
  txt: "text/plain", csv: "text/csv", md: "text/markdown", json: "application/json", zip: "application/zip",
  png: "image/png", jpg: "image/jpeg", jpeg: "image/jpeg", gif: "image/gif", webp: "image/webp", avif: "image/avif",
  ico: "image/x-icon", pdf: "application/pdf", mp3: "audio/mpeg", wav: "audio/wav", ogg: "audio/ogg", flac: "audio/flac",
  mp4: "video/mp4", webm: "video/webm", woff: "font/woff", woff2: "font/woff2", ttf: "font/ttf", otf: "font/otf",
  docx: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
  xlsx: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
  pptx: "application/vnd.openxmlformats-officedocument.presentationml.presentation",
  js: "text/javascript", mjs: "text/javascript", css: "text/css", svg: "image/svg+xml", html: "text/html", htm: "text/html",
  xml: "application/xml", webmanifest: "application/manifest+json", wasm: "application/wasm",
};

/** Types the uploader may declare because they have no magic bytes to check against. */
export const DECLARABLE_WITHOUT_MAGIC = new Set([
  "text/plain", "text/csv", "text/markdown", "application/json", "application/zip",
  byExtension.docx, byExtension.xlsx, byExtension.pptx,
]);

export function sniff(bytes: Uint8Array): string | null {
  return signatures.find((s) => s.test(bytes))?.mime ?? null;
}

export function extensionOf(path: string): string {
  const name = path.slice(path.lastIndexOf("/") + 1);
  const dot = name.lastIndexOf(".");
  return dot > 0 ? name.slice(dot + 1).toLowerCase() : "";
}

export function mimeForExtension(path: string): string {
  return byExtension[extensionOf(path)] ?? "application/octet-stream";
}

export type MimeDecision = { ok: true; mime: string } | { ok: false; declared: string; sniffed: string };

/**
 * The type an asset is stored and served as. A declared type is honoured only for
 * types without magic bytes and only when the bytes do not say otherwise.
 */
export function decideMime(path: string, bytes: Uint8Array, declared?: string): MimeDecision {
  const sniffed = sniff(bytes);
  const normalised = declared?.split(";")[0].trim().toLowerCase();
  if (sniffed) {
    if (normalised && normalised !== sniffed && !(sniffed === "application/zip" && normalised.startsWith("application/vnd.openxmlformats"))) {
      return { ok: false, declared: normalised, sniffed };
    }
    return { ok: true, mime: normalised ?? sniffed };
  }
  if (normalised && DECLARABLE_WITHOUT_MAGIC.has(normalised)) return { ok: true, mime: normalised };
  return { ok: true, mime: mimeForExtension(path) };
}

/** Types a browser may render inline from an app origin; everything else downloads. */
export function isInlineSafe(mime: string): boolean {
  return /^(image\/(png|jpeg|gif|webp|avif|x-icon)|audio\/|video\/|font\/)/.test(mime);
}
