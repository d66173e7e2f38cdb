/**
 * The archive container of app export and import: plain POSIX tar (ustar), written and
 * read here in a few dozen lines instead of through a library (docs/decisions/
 * 2026-11-26-export-format.md). Tar needs no index at the end, so an export streams out
 * entry by entry and an import is read entry by entry from the request body; any `tar`
 * on the user's machine lists and unpacks it. Only what the export writes is read back:
 * regular files with short ASCII names. Pure: no I/O beyond the stream it is handed.
 */
import { RelayError } from "../../errors";

export const BLOCK = 512;
const NAME_FIELD = 100;
const MAX_OCTAL_SIZE = 8 ** 11 - 1;

const encoder = new TextEncoder();

function writeOctal(block: Uint8Array, offset: number, width: number, value: number): void {
  block.set(encoder.encode(value.toString(8).padStart(width - 1, "0")), offset);
}

/** The 512-byte header of one regular file. */
export function tarHeader(name: string, size: number, mtimeSeconds: number): Uint8Array {
  if (name.length === 0 || name.length > NAME_FIELD || !/^[\x21-\x7e]+$/.test(name)) throw new Error(`tar: unusable entry name ${JSON.stringify(name)}`);
  if (!Number.isSafeInteger(size) || size < 0 || size > MAX_OCTAL_SIZE) throw new Error(`tar: unusable size ${size}`);
  const block = new Uint8Array(BLOCK);
  block.set(encoder.encode(name), 0);
  writeOctal(block, 100, 8, 0o644);
  writeOctal(block, 108, 8, 0);
  writeOctal(block, 116, 8, 0);
  writeOctal(block, 124, 12, size);
  writeOctal(block, 136, 12, Math.max(0, Math.floor(mtimeSeconds)));
  block.fill(0x20, 148, 156);
  block[156] = 0x30; // '0': a regular file
  block.set(encoder.encode("ustar\u000000"), 257);
  writeOctal(block, 148, 7, checksum(block));
  return block;
}

/** Zero bytes that bring an entry of `size` bytes to a whole block. */
export function tarPadding(size: number): Uint8Array {
  return new Uint8Array((BLOCK - (size % BLOCK)) % BLOCK);
}

/** The two zero blocks that end an archive. */
export function tarEnd(): Uint8Array {
  return new Uint8Array(BLOCK * 2);
}

/** The sum of the header's bytes with its checksum field read as spaces. */
function checksum(block: Uint8Array): number {
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : block[i];
  return sum;
}

export function invalidArchive(why: string, details: Record<string, unknown> = {}): RelayError {
  return new RelayError("import_archive_invalid", `The archive is not a complete app export: ${why}.`, details);
}

function readOctal(block: Uint8Array, offset: number, width: number): number {
  const text = new TextDecoder().decode(block.subarray(offset, offset + width)).replace(/[\0 ]+$/g, "").replace(/^ +/, "");
  if (!/^[0-7]{1,12}$/.test(text)) return Number.NaN;
  return parseInt(text, 8);
}

/** Reads exact byte counts from a stream, counting everything taken against a cap. */
class ByteReader {
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>;
  private held: Uint8Array = new Uint8Array(0);
  total = 0;

  constructor(stream: ReadableStream<Uint8Array>, private readonly maxTotal: number) {
    this.reader = stream.getReader();
  }

  /** Exactly `count` bytes, or null when the stream ends first. */
  async take(count: number): Promise<Uint8Array | null> {
    const parts: Uint8Array[] = [];
    let have = 0;
    while (have < count) {
      if (this.held.byteLength === 0) {
        const { done, value } = await this.reader.read();
        if (done) return null;
        this.total += value.byteLength;
        if (this.total > this.maxTotal) throw tooLarge(`the archive is over ${this.maxTotal} bytes`, { limit: this.maxTotal });
        this.held = value;
      }
      const piece = this.held.subarray(0, count - have);
      this.held = this.held.subarray(piece.byteLength);
      parts.push(piece);
      have += piece.byteLength;
    }
    if (parts.length === 1) return parts[0];
    const joined = new Uint8Array(count);
    let at = 0;
    for (const part of parts) {
      joined.set(part, at);
      at += part.byteLength;
    }
    return joined;
  }

  async cancel(): Promise<void> {
    await this.reader.cancel().catch(() => {});
  }
}

export function tooLarge(why: string, details: Record<string, unknown>): RelayError {
  return new RelayError("import_archive_too_large", `The archive is refused: ${why}.`, details);
}

export interface TarEntry {
  name: string;
  bytes: Uint8Array;
}

/**
 * The entries of a tar stream, one at a time. `capFor(name)` says how large an entry of
 * that name may be (null: no such entry belongs in the archive); an entry over its cap is
 * refused from its header, before its bytes are read. A stream that ends before the end
 * blocks is truncated; a header whose checksum is wrong, or that is not a regular file,
 * makes the archive invalid.
 */
export async function* readTar(stream: ReadableStream<Uint8Array>, maxTotal: number, capFor: (name: string) => number | null): AsyncGenerator<TarEntry> {
  const input = new ByteReader(stream, maxTotal);
  try {
    for (;;) {
      const header = await input.take(BLOCK);
      if (!header) throw invalidArchive("it ends before its last entry (truncated)", { truncated: true });
      if (header.every((byte) => byte === 0)) return;
      if (readOctal(header, 148, 8) !== checksum(header)) throw invalidArchive("an entry header is damaged (its checksum does not match)");
      const nameEnd = header.indexOf(0);
      const name = new TextDecoder().decode(header.subarray(0, nameEnd === -1 || nameEnd > NAME_FIELD ? NAME_FIELD : nameEnd));
      if (header[156] !== 0x30 && header[156] !== 0) throw invalidArchive(`"${name.slice(0, 100)}" is not a regular file`, { entry: name.slice(0, 100) });
      if (header[345] !== 0) throw invalidArchive("an entry name is longer than an export writes");
      const size = readOctal(header, 124, 12);
      if (!Number.isSafeInteger(size)) throw invalidArchive(`the size of "${name.slice(0, 100)}" is unreadable`, { entry: name.slice(0, 100) });
      const cap = capFor(name);
      if (cap === null) throw invalidArchive(`"${name.slice(0, 100)}" is not an entry an app export has`, { entry: name.slice(0, 100) });
      if (size > cap) throw tooLarge(`"${name}" is ${size} bytes; at most ${cap} are allowed`, { entry: name, size, limit: cap });
      const bytes = await input.take(size);
      const padding = await input.take(tarPadding(size).byteLength);
      if (!bytes || !padding) throw invalidArchive(`it ends inside "${name}" (truncated)`, { truncated: true, entry: name });
      yield { name, bytes };
    }
  } finally {
    await input.cancel();
  }
}
