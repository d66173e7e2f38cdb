// JPEG files with camera metadata for the image tests: splices an APP1 "Exif" segment
// holding a GPS position (and an orientation tag and a camera maker) in after a JPEG's SOI
// marker, and lists a JPEG's segments so a test can say which markers a file carries.
// Pure byte work: runs in workerd and in Node alike.

/** The latitude written into the GPS block, as text a test can look for in the bytes. */
export const GPS_MAKER = "RelayTestCam";

function u16(value: number): number[] {
  return [(value >> 8) & 0xff, value & 0xff];
}

function u32(value: number): number[] {
  return [(value >>> 24) & 0xff, (value >>> 16) & 0xff, (value >>> 8) & 0xff, value & 0xff];
}

/** One big-endian IFD entry: tag, type, count, then a value or an offset (4 bytes). */
function ifdEntry(tag: number, type: number, count: number, value: number[]): number[] {
  return [...u16(tag), ...u16(type), ...u32(count), ...value, ...new Array(4 - value.length).fill(0)];
}

const ASCII = 2;
const SHORT = 3;
const LONG = 4;
const RATIONAL = 5;

/**
 * The TIFF body of an Exif block: IFD0 with Make, Orientation and a GPS pointer; a GPS
 * IFD with latitude N 51° 30' 0" and longitude W 0° 7' 0".
 */
function exifTiff(orientation: number): number[] {
  const maker = [...new TextEncoder().encode(GPS_MAKER), 0];
  // Layout (offsets from the TIFF header): header 8, IFD0 at 8 with 3 entries (2 + 36 + 4 = 42 bytes) → 50,
  // maker text at 50, GPS IFD after it, then its rationals.
  const makerAt = 50;
  const gpsAt = makerAt + maker.length + (maker.length % 2);
  const gpsEntries = 4;
  const rationalsAt = gpsAt + 2 + gpsEntries * 12 + 4;
  const latitudeAt = rationalsAt;
  const longitudeAt = rationalsAt + 24;
  const ifd0 = [
    ...u16(3),
    ...ifdEntry(0x010f, ASCII, maker.length, u32(makerAt)),
    ...ifdEntry(0x0112, SHORT, 1, u16(orientation)),
    ...ifdEntry(0x8825, LONG, 1, u32(gpsAt)),
    ...u32(0),
  ];
  const gps = [
    ...u16(gpsEntries),
    ...ifdEntry(0x0001, ASCII, 2, [0x4e, 0]),
    ...ifdEntry(0x0002, RATIONAL, 3, u32(latitudeAt)),
    ...ifdEntry(0x0003, ASCII, 2, [0x57, 0]),
    ...ifdEntry(0x0004, RATIONAL, 3, u32(longitudeAt)),
    ...u32(0),
  ];
  const rationals = [51, 1, 30, 1, 0, 1, 0, 1, 7, 1, 0, 1].flatMap(u32);
  return [
    0x4d, 0x4d, 0x00, 0x2a, ...u32(8),
    ...ifd0,
    ...maker, ...(maker.length % 2 ? [0] : []),
    ...gps,
    ...rationals,
  ];
}

/** The JPEG with an APP1 Exif segment (GPS position, camera maker, an orientation, 1 = upright) right after its SOI marker. */
export function withExifGps(jpeg: Uint8Array, orientation = 1): Uint8Array {
  if (jpeg[0] !== 0xff || jpeg[1] !== 0xd8) throw new Error("not a JPEG: no SOI marker");
  const body = [0x45, 0x78, 0x69, 0x66, 0, 0, ...exifTiff(orientation)];
  const segment = [0xff, 0xe1, ...u16(body.length + 2), ...body];
  const out = new Uint8Array(jpeg.length + segment.length);
  out.set(jpeg.subarray(0, 2), 0);
  out.set(segment, 2);
  out.set(jpeg.subarray(2), 2 + segment.length);
  return out;
}

export interface Segment {
  marker: number;
  /** For APPn segments, the identifier at the start of the payload ("Exif", "JFIF", "http://ns.adobe.com/xap/1.0/"…). */
  label: string;
}

/** The marker segments of a JPEG up to its start of scan (SOS). */
export function jpegSegments(jpeg: Uint8Array): Segment[] {
  const segments: Segment[] = [];
  let at = 2;
  while (at + 4 <= jpeg.length && jpeg[at] === 0xff) {
    const marker = jpeg[at + 1];
    const length = (jpeg[at + 2] << 8) | jpeg[at + 3];
    const payload = jpeg.subarray(at + 4, Math.min(at + 2 + length, at + 4 + 32));
    const end = payload.indexOf(0);
    segments.push({ marker, label: new TextDecoder().decode(payload.subarray(0, end < 0 ? payload.length : end)) });
    if (marker === 0xda) break;
    at += 2 + length;
  }
  return segments;
}

/** Whether `needle` occurs anywhere in `bytes`. */
export function containsText(bytes: Uint8Array, needle: string): boolean {
  const pattern = new TextEncoder().encode(needle);
  outer: for (let at = 0; at + pattern.length <= bytes.length; at += 1) {
    for (let k = 0; k < pattern.length; k += 1) if (bytes[at + k] !== pattern[k]) continue outer;
    return true;
  }
  return false;
}
