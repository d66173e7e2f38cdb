/**
 * A minimal PNG encoder for the relay's own generated images (the screenshot brand card):
 * 8-bit RGB, one IDAT compressed with the platform's CompressionStream ("deflate" is the
 * zlib stream PNG wants), no filter. Kept tiny on purpose: no image library is bundled.
 */
import { joinBytes } from "../bytes";

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

function crc32(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (const byte of bytes) crc = CRC_TABLE[(crc ^ byte) & 0xff] ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

function chunk(type: string, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + data.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, data.length);
  out.set(new TextEncoder().encode(type), 4);
  out.set(data, 8);
  view.setUint32(8 + data.length, crc32(out.subarray(4, 8 + data.length)));
  return out;
}

async function deflate(bytes: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([bytes]).stream().pipeThrough(new CompressionStream("deflate"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** A width × height RGB raster, three bytes per pixel, rows top to bottom. */
export class Raster {
  readonly pixels: Uint8Array;
  constructor(readonly width: number, readonly height: number) {
    this.pixels = new Uint8Array(width * height * 3);
  }

  fill(x: number, y: number, w: number, h: number, rgb: readonly [number, number, number]): void {
    const x0 = Math.max(0, Math.floor(x));
    const y0 = Math.max(0, Math.floor(y));
    const x1 = Math.min(this.width, Math.floor(x + w));
    const y1 = Math.min(this.height, Math.floor(y + h));
    for (let row = y0; row < y1; row++) {
      for (let col = x0; col < x1; col++) this.pixels.set(rgb, (row * this.width + col) * 3);
    }
  }

  async png(): Promise<Uint8Array> {
    const stride = this.width * 3;
    const filtered = new Uint8Array((stride + 1) * this.height);
    for (let row = 0; row < this.height; row++) filtered.set(this.pixels.subarray(row * stride, (row + 1) * stride), row * (stride + 1) + 1);
    const header = new Uint8Array(13);
    const view = new DataView(header.buffer);
    view.setUint32(0, this.width);
    view.setUint32(4, this.height);
    header.set([8, 2, 0, 0, 0], 8);
    const parts = [new Uint8Array([137, 80, 78, 71, 13, 10, 26, 10]), chunk("IHDR", header), chunk("IDAT", await deflate(filtered)), chunk("IEND", new Uint8Array())];
    return joinBytes(parts);
  }
}
