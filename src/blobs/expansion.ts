/**
 * Files that are small on the wire but huge once opened: a zip whose entries inflate far
 * past the attachment caps, and an image whose header declares more pixels than anyone
 * should decode. Both are refused at upload with `attachment_expansion_exceeded`, from
 * the zip's central directory and the image's header, without inflating or decoding.
 */
import { RelayError } from "../errors";
import { imageDimensions, type Dimensions } from "./dimensions";

/** The most pixels an image may declare (about 8k × 6k). */
export const MAX_IMAGE_PIXELS = 50_000_000;
/** The most a zip may expand to, and the largest expansion ratio. */
export const MAX_ZIP_EXPANDED_BYTES = 1_073_741_824;
export const MAX_ZIP_RATIO = 200;

const EOCD_SIGNATURE = 0x06054b50;
const CENTRAL_SIGNATURE = 0x02014b50;

const u16 = (view: DataView, at: number) => view.getUint16(at, true);
const u32 = (view: DataView, at: number) => view.getUint32(at, true);

/** The sum of the uncompressed sizes the zip's central directory declares, or null when it cannot be read. */
export function zipExpandedBytes(bytes: Uint8Array): number | null {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const earliest = Math.max(0, bytes.length - 22 - 65_535);
  for (let at = bytes.length - 22; at >= earliest; at -= 1) {
    if (u32(view, at) !== EOCD_SIGNATURE) continue;
    const entries = u16(view, at + 10);
    let cursor = u32(view, at + 16);
    let total = 0;
    for (let i = 0; i < entries; i += 1) {
      if (cursor + 46 > bytes.length || u32(view, cursor) !== CENTRAL_SIGNATURE) return null;
      const uncompressed = u32(view, cursor + 24);
      // ZIP64 entries say 0xffffffff here: count them as the largest size the field holds.
      total += uncompressed;
      cursor += 46 + u16(view, cursor + 28) + u16(view, cursor + 30) + u16(view, cursor + 32);
    }
    return total;
  }
  return null;
}

/** Refuses a bomb; answers an image's declared size (null for other types). */
export function checkExpansion(mime: string, bytes: Uint8Array): Dimensions | null {
  if (mime === "application/zip") {
    const expanded = zipExpandedBytes(bytes);
    if (expanded === null) throw new RelayError("attachment_expansion_exceeded", "The zip's central directory cannot be read.", { reason: "unreadable_zip" });
    if (expanded > MAX_ZIP_EXPANDED_BYTES || expanded > Math.max(bytes.length, 1) * MAX_ZIP_RATIO) {
      throw new RelayError("attachment_expansion_exceeded", `The zip expands to ${expanded} bytes from ${bytes.length}.`, { reason: "zip", expanded_bytes: expanded, limit: MAX_ZIP_EXPANDED_BYTES, max_ratio: MAX_ZIP_RATIO });
    }
    return null;
  }
  const dimensions = imageDimensions(mime, bytes);
  if (dimensions) requireImageWithinPixels(dimensions);
  return dimensions;
}

/** Refuses an image (read from its header, or by the Images binding) of more than MAX_IMAGE_PIXELS. */
export function requireImageWithinPixels(dimensions: Dimensions): void {
  if (dimensions.width * dimensions.height > MAX_IMAGE_PIXELS) {
    throw new RelayError("attachment_expansion_exceeded", `The image declares ${dimensions.width}×${dimensions.height} pixels.`, { reason: "image", ...dimensions, max_pixels: MAX_IMAGE_PIXELS });
  }
}
