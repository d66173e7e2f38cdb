/**
 * Phone cameras often store a photo sideways with an EXIF Orientation tag saying how to
 * turn it for display. Re-encoding without metadata (originals.ts) drops that tag, and the
 * Images binding's local mode does not apply it, so the photo would be stored sideways.
 * Here the tag is read, the JPEG's APP1 segments (EXIF and XMP, where the tag lives) are
 * cut out losslessly before the binding sees the file, so no binding can apply the tag a
 * second time, and the turn is handed to the binding as explicit transforms instead.
 */

/** The turns that bring each EXIF orientation (2–8) upright, in order (rotations clockwise). */
export const UPRIGHT_TRANSFORMS: Readonly<Record<number, ImageTransform[]>> = {
  2: [{ flip: "h" }],
  3: [{ rotate: 180 }],
  4: [{ flip: "v" }],
  5: [{ rotate: 90 }, { flip: "h" }],
  6: [{ rotate: 90 }],
  7: [{ rotate: 270 }, { flip: "h" }],
  8: [{ rotate: 270 }],
};

const APP1 = 0xe1;
const START_OF_SCAN = 0xda;
const ORIENTATION_TAG = 0x0112;

interface Segment {
  marker: number;
  start: number;
  end: number;
}

/** The marker segments before the image data, or null when the JPEG's structure does not hold. */
function segments(bytes: Uint8Array): Segment[] | null {
  const found: Segment[] = [];
  let at = 2;
  while (at + 4 <= bytes.length) {
    if (bytes[at] !== 0xff) return null;
    const marker = bytes[at + 1];
    const end = at + 2 + ((bytes[at + 2] << 8) | bytes[at + 3]);
    if (end > bytes.length) return null;
    found.push({ marker, start: at, end });
    if (marker === START_OF_SCAN) return found;
    at = end;
  }
  return null;
}

/** The Orientation value (1–8) of a JPEG's EXIF block; 1 when there is none or it cannot be read. */
export function jpegOrientation(bytes: Uint8Array): number {
  for (const segment of segments(bytes) ?? []) {
    const tiff = segment.start + 10;
    const isExif = segment.marker === APP1 && String.fromCharCode(...bytes.subarray(segment.start + 4, tiff)) === "Exif\0\0";
    if (!isExif || tiff + 8 > segment.end) continue;
    const view = new DataView(bytes.buffer, bytes.byteOffset + tiff, segment.end - tiff);
    const little = view.getUint16(0) === 0x4949;
    const ifd = view.getUint32(4, little);
    if (ifd + 2 > view.byteLength) return 1;
    const entries = view.getUint16(ifd, little);
    for (let i = 0; i < entries && ifd + 2 + i * 12 + 12 <= view.byteLength; i += 1) {
      const entry = ifd + 2 + i * 12;
      if (view.getUint16(entry, little) !== ORIENTATION_TAG) continue;
      const value = view.getUint16(entry + 8, little);
      return value >= 1 && value <= 8 ? value : 1;
    }
    return 1;
  }
  return 1;
}

/** The JPEG without its APP1 segments (EXIF, XMP); the image data is untouched. */
export function jpegWithoutApp1(bytes: Uint8Array): Uint8Array {
  const dropped = (segments(bytes) ?? []).filter((segment) => segment.marker === APP1);
  if (dropped.length === 0) return bytes;
  const out = new Uint8Array(bytes.length - dropped.reduce((sum, segment) => sum + segment.end - segment.start, 0));
  let read = 0;
  let write = 0;
  for (const segment of dropped) {
    out.set(bytes.subarray(read, segment.start), write);
    write += segment.start - read;
    read = segment.end;
  }
  out.set(bytes.subarray(read), write);
  return out;
}
