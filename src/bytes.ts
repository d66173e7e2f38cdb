/**
 * Byte helpers shared by code that assembles binary files and bodies (the PNG writer, the
 * outbound fetch's body reader, the metadata-free GIF and WebP rewrites): one join,
 * instead of a copy of the same loop in each; and the one UTF-8 length that every size
 * cap on text counts in (manifest, taste notes, community snapshots, backfilled bodies,
 * development mode's SQL limits).
 */

const UTF8 = new TextEncoder();

/** How many bytes `text` takes as UTF-8. */
export function utf8Bytes(text: string): number {
  return UTF8.encode(text).byteLength;
}

/** The parts, one after another, in one new array. */
export function joinBytes(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.byteLength, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.byteLength;
  }
  return out;
}
