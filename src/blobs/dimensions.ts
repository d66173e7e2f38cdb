/**
 * An image's pixel size read from its header alone (PNG, JPEG, GIF, WebP, AVIF; an SVG's
 * from its root element, svg.ts), without decoding: the attachment pipeline records width and height on the AttachmentRef and
 * refuses a decompression bomb (a small file declaring a huge canvas) before anything
 * tries to decode it.
 */
import { svgDimensions } from "./svg";

export interface Dimensions {
  width: number;
  height: number;
}

const u16be = (b: Uint8Array, at: number) => (b[at] << 8) | b[at + 1];
const u16le = (b: Uint8Array, at: number) => b[at] | (b[at + 1] << 8);
const u24le = (b: Uint8Array, at: number) => b[at] | (b[at + 1] << 8) | (b[at + 2] << 16);
const u32be = (b: Uint8Array, at: number) => ((b[at] << 24) >>> 0) + ((b[at + 1] << 16) | (b[at + 2] << 8) | b[at + 3]);

function png(b: Uint8Array): Dimensions | null {
  return b.length >= 24 ? { width: u32be(b, 16), height: u32be(b, 20) } : null;
}

function gif(b: Uint8Array): Dimensions | null {
  return b.length >= 10 ? { width: u16le(b, 6), height: u16le(b, 8) } : null;
}

/** Walks the JPEG markers to the first start-of-frame (SOF0..SOF15 but DHT, JPG, DAC). */
function jpeg(b: Uint8Array): Dimensions | null {
  let at = 2;
  while (at + 9 < b.length) {
    if (b[at] !== 0xff) return null;
    const marker = b[at + 1];
    if (marker === 0xff) { at += 1; continue; }
    if (marker === 0xd8 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) { at += 2; continue; }
    const length = u16be(b, at + 2);
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return { width: u16be(b, at + 7), height: u16be(b, at + 5) };
    }
    at += 2 + length;
  }
  return null;
}

function webp(b: Uint8Array): Dimensions | null {
  if (b.length < 30) return null;
  const chunk = String.fromCharCode(b[12], b[13], b[14], b[15]);
  if (chunk === "VP8X") return { width: u24le(b, 24) + 1, height: u24le(b, 27) + 1 };
  if (chunk === "VP8L") {
    const bits = b[21] | (b[22] << 8) | (b[23] << 16) | (b[24] << 24);
    return { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
  }
  if (chunk === "VP8 ") return { width: u16le(b, 26) & 0x3fff, height: u16le(b, 28) & 0x3fff };
  return null;
}

/** How far into an AVIF file its `meta` box (with the image spatial extents) is looked for. */
const AVIF_HEADER_BYTES = 64 * 1024;

/**
 * The largest `ispe` (image spatial extents: version/flags, width, height) box in an AVIF's
 * header: the primary image's, or a larger tile's, so a bomb check never reads too little.
 */
function avif(b: Uint8Array): Dimensions | null {
  let largest: Dimensions | null = null;
  const end = Math.min(b.length, AVIF_HEADER_BYTES) - 16;
  for (let at = 4; at <= end; at += 1) {
    if (b[at] !== 0x69 || b[at + 1] !== 0x73 || b[at + 2] !== 0x70 || b[at + 3] !== 0x65) continue;
    const found = { width: u32be(b, at + 8), height: u32be(b, at + 12) };
    if (!largest || found.width * found.height > largest.width * largest.height) largest = found;
  }
  return largest;
}

const READERS: Record<string, (b: Uint8Array) => Dimensions | null> = {
  "image/png": png, "image/gif": gif, "image/jpeg": jpeg, "image/webp": webp, "image/avif": avif, "image/svg+xml": svgDimensions,
};

/** The declared canvas of an image of a sniffed type, or null when unknown. */
export function imageDimensions(mime: string, bytes: Uint8Array): Dimensions | null {
  return READERS[mime]?.(bytes) ?? null;
}
