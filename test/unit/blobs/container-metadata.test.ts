// The lossless metadata rewrites for GIF and animated WebP (src/blobs/container-metadata.ts),
// on files built block by block: comments and XMP/EXIF blocks go, the looping block,
// frames and colour profile stay, sizes and flags are rewritten, and a file whose blocks
// do not hold together answers null.
import { describe, expect, it } from "vitest";
import { gifWithoutMetadata, isAnimatedWebp, webpWithoutMetadata } from "../../../src/blobs/container-metadata";

const text = (value: string) => [...new TextEncoder().encode(value)];
const le32 = (value: number) => [value & 0xff, (value >> 8) & 0xff, (value >> 16) & 0xff, (value >>> 24) & 0xff];

function riffChunk(fourcc: string, payload: number[]): number[] {
  return [...text(fourcc), ...le32(payload.length), ...payload, ...(payload.length % 2 ? [0] : [])];
}

function webp(chunks: number[][]): Uint8Array {
  const body = chunks.flat();
  return Uint8Array.from([...text("RIFF"), ...le32(4 + body.length), ...text("WEBP"), ...body]);
}

const VP8X = (flags: number) => riffChunk("VP8X", [flags, 0, 0, 0, 1, 0, 0, 1, 0, 0]);
const ANIM = riffChunk("ANIM", [0, 0, 0, 0, 0, 0]);
const FRAME = riffChunk("ANMF", Array.from({ length: 21 }, (_, i) => i));
const ICCP = riffChunk("ICCP", [1, 2, 3, 4]);

describe("animated WebP", () => {
  it("drops EXIF and XMP chunks and their flags, keeps frames and the colour profile", () => {
    const source = webp([VP8X(0x02 | 0x04 | 0x08 | 0x20), ICCP, ANIM, FRAME, FRAME, riffChunk("EXIF", text("GPS 51N")), riffChunk("XMP ", text("<x:xmpmeta/>"))]);
    expect(isAnimatedWebp(source)).toBe(true);
    expect(webpWithoutMetadata(source)).toEqual(webp([VP8X(0x02 | 0x20), ICCP, ANIM, FRAME, FRAME]));
  });

  it("tells a still WebP from an animated one, and refuses a chunk that runs past the end", () => {
    expect(isAnimatedWebp(webp([VP8X(0x08), riffChunk("VP8 ", [1, 2])]))).toBe(false);
    const cut = webp([VP8X(0x02), ANIM, FRAME]).slice(0, 50);
    expect(webpWithoutMetadata(cut)).toBeNull();
  });
});

describe("GIF", () => {
  const header = [...text("GIF89a"), 2, 0, 2, 0, 0x80, 0, 0, 0, 0, 0, 255, 255, 255];
  const loop = [0x21, 0xff, 11, ...text("NETSCAPE2.0"), 3, 1, 0, 0, 0];
  const xmp = [0x21, 0xff, 11, ...text("XMP DataXMP"), 4, ...text("meta"), 0];
  const comment = [0x21, 0xfe, 5, ...text("hello"), 0];
  const control = [0x21, 0xf9, 4, 0, 10, 0, 0, 0];
  const frame = [0x2c, 0, 0, 0, 0, 2, 0, 2, 0, 0, 2, 2, 0x44, 0x01, 0];

  it("drops comments and metadata applications, keeps looping, control and frames", () => {
    const source = Uint8Array.from([...header, loop, comment, xmp, control, frame, control, frame].flat().concat(0x3b));
    expect(gifWithoutMetadata(source)).toEqual(Uint8Array.from([...header, loop, control, frame, control, frame].flat().concat(0x3b)));
  });

  it("answers null for a GIF cut short or with an unknown block", () => {
    expect(gifWithoutMetadata(Uint8Array.from([...header, ...frame.slice(0, 8)]))).toBeNull();
    expect(gifWithoutMetadata(Uint8Array.from([...header, ...frame]))).toBeNull();
    expect(gifWithoutMetadata(Uint8Array.from([...header, 0x99, 0x3b]))).toBeNull();
  });
});
