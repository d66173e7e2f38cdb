/**
 * Metadata removal without decoding, for the two kinds of stored original the Images
 * binding cannot re-encode as they are: GIF (the binding's local mode has no GIF output,
 * and a PNG would lose the animation) and animated WebP (a re-encode keeps only the first
 * frame locally). Both formats keep metadata in blocks of their own, so rewriting the
 * file without those blocks strips it losslessly: GIF comment extensions and application
 * extensions other than the looping ones (XMP lives there); WebP `EXIF` and `XMP ` chunks
 * (with their VP8X flags cleared). Frames and colour profile stay. A file whose block
 * structure does not hold together answers null (it is not a decodable image).
 */
import { joinBytes } from "../bytes";

const GIF_EXTENSION = 0x21;
const GIF_IMAGE = 0x2c;
const GIF_TRAILER = 0x3b;
const GIF_COMMENT = 0xfe;
const GIF_APPLICATION = 0xff;
/** Application extensions that carry playback, not metadata: the loop count. */
const GIF_KEPT_APPLICATIONS = new Set(["NETSCAPE2.0", "ANIMEXTS1.0"]);

/** The end of a run of GIF data sub-blocks starting at `at` (just past its zero terminator), or -1. */
function subBlocksEnd(bytes: Uint8Array, at: number): number {
  while (at < bytes.length) {
    const size = bytes[at];
    at += 1 + size;
    if (size === 0) return at;
  }
  return -1;
}

/** The size of a GIF colour table announced by a packed field, in bytes. */
function colourTableBytes(packed: number): number {
  return packed & 0x80 ? 3 * 2 ** ((packed & 0x07) + 1) : 0;
}

/** The GIF without comments and metadata application blocks, or null when its blocks do not hold together. */
export function gifWithoutMetadata(bytes: Uint8Array): Uint8Array | null {
  if (bytes.length < 13) return null;
  let at = 13 + colourTableBytes(bytes[10]);
  const kept: Uint8Array[] = [bytes.subarray(0, at)];
  while (at < bytes.length) {
    const introducer = bytes[at];
    if (introducer === GIF_TRAILER) {
      kept.push(bytes.subarray(at, at + 1));
      return joinBytes(kept);
    }
    let end: number;
    let keep = true;
    if (introducer === GIF_EXTENSION) {
      const label = bytes[at + 1];
      end = subBlocksEnd(bytes, at + 2);
      if (label === GIF_COMMENT) keep = false;
      if (label === GIF_APPLICATION) {
        const identifier = new TextDecoder("latin1").decode(bytes.subarray(at + 3, at + 14));
        keep = bytes[at + 2] === 11 && GIF_KEPT_APPLICATIONS.has(identifier);
      }
    } else if (introducer === GIF_IMAGE) {
      const descriptorEnd = at + 10 + colourTableBytes(bytes[at + 9] ?? 0);
      end = subBlocksEnd(bytes, descriptorEnd + 1);
    } else {
      return null;
    }
    if (end < 0 || end > bytes.length) return null;
    if (keep) kept.push(bytes.subarray(at, end));
    at = end;
  }
  return null;
}

const WEBP_DROPPED_CHUNKS = new Set(["EXIF", "XMP "]);
const VP8X_EXIF_FLAG = 0x08;
const VP8X_XMP_FLAG = 0x04;
const VP8X_ANIMATION_FLAG = 0x02;

function fourcc(bytes: Uint8Array, at: number): string {
  return String.fromCharCode(bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]);
}

/** Whether a WebP file is animated (its VP8X header says so). */
export function isAnimatedWebp(bytes: Uint8Array): boolean {
  return bytes.length >= 21 && fourcc(bytes, 12) === "VP8X" && (bytes[20] & VP8X_ANIMATION_FLAG) !== 0;
}

/** The WebP without EXIF and XMP chunks, or null when its chunks do not hold together. */
export function webpWithoutMetadata(bytes: Uint8Array): Uint8Array | null {
  if (bytes.length < 20 || fourcc(bytes, 0) !== "RIFF" || fourcc(bytes, 8) !== "WEBP") return null;
  const kept: Uint8Array[] = [];
  let at = 12;
  while (at < bytes.length) {
    if (at + 8 > bytes.length) return null;
    const size = new DataView(bytes.buffer, bytes.byteOffset + at + 4, 4).getUint32(0, true);
    const end = at + 8 + size + (size % 2);
    if (end > bytes.length) return null;
    const chunk = bytes.slice(at, end);
    if (fourcc(chunk, 0) === "VP8X" && chunk.length > 8) chunk[8] &= ~(VP8X_EXIF_FLAG | VP8X_XMP_FLAG);
    if (!WEBP_DROPPED_CHUNKS.has(fourcc(chunk, 0))) kept.push(chunk);
    at = end;
  }
  const body = joinBytes(kept);
  const header = new Uint8Array(12);
  header.set(bytes.subarray(0, 12));
  new DataView(header.buffer).setUint32(4, 4 + body.length, true);
  return joinBytes([header, body]);
}
