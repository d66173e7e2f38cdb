// The export archive's tar subset (src/apps/archive/tar.ts), on its own: what it writes
// reads back byte for byte and is what `tar` expects (ustar magic, header checksum, blocks
// of 512), and the reader refuses what an export never writes — a damaged header, a link or
// directory, an unknown name, an entry over its cap (from the header alone) — and a stream
// that stops early.
import { describe, expect, it } from "vitest";
import { readTar, tarEnd, tarHeader, tarPadding, BLOCK } from "../../../src/apps/archive/tar";
import { RelayError } from "../../../src/errors";

const utf8 = (text: string) => new TextEncoder().encode(text);

function archive(parts: Uint8Array[]): ReadableStream<Uint8Array> {
  return new Blob(parts).stream();
}

function entry(name: string, bytes: Uint8Array): Uint8Array[] {
  return [tarHeader(name, bytes.byteLength, 1_700_000_000), bytes, tarPadding(bytes.byteLength)];
}

async function read(stream: ReadableStream<Uint8Array>, cap = 1_000_000, maxTotal = 10_000_000): Promise<Array<{ name: string; text: string }>> {
  const out: Array<{ name: string; text: string }> = [];
  for await (const { name, bytes } of readTar(stream, maxTotal, (n) => (n.startsWith("bad/") ? null : cap))) out.push({ name, text: new TextDecoder().decode(bytes) });
  return out;
}

async function refusal(work: Promise<unknown>): Promise<RelayError> {
  const err = await work.then(() => null, (e: unknown) => e);
  expect(err).toBeInstanceOf(RelayError);
  return err as RelayError;
}

describe("the archive's tar", () => {
  it("writes ustar headers in whole blocks and reads entries back as written", async () => {
    const header = tarHeader("rows/000001.ndjson", 600, 0);
    expect(header.byteLength).toBe(BLOCK);
    expect(new TextDecoder().decode(header.subarray(257, 263))).toBe("ustar\0");
    expect(tarPadding(600).byteLength).toBe(424);
    expect(tarPadding(1024).byteLength).toBe(0);
    const big = "x".repeat(1500);
    expect(await read(archive([...entry("a.json", utf8("{}")), ...entry("rows/000001.ndjson", utf8(big)), ...entry("empty", new Uint8Array(0)), tarEnd()])))
      .toEqual([{ name: "a.json", text: "{}" }, { name: "rows/000001.ndjson", text: big }, { name: "empty", text: "" }]);
  });

  it("refuses names an export never writes", () => {
    expect(() => tarHeader("x".repeat(101), 1, 0)).toThrow();
    expect(() => tarHeader("with space", 1, 0)).toThrow();
    expect(() => tarHeader("", 1, 0)).toThrow();
  });

  it("refuses a truncated stream, a damaged header, a non-file entry, an unknown name and an oversize entry", async () => {
    const whole = [...entry("a.json", utf8("{\"a\":1}")), tarEnd()];
    const joined = new Uint8Array(await new Blob(whole).arrayBuffer());
    expect((await refusal(read(archive([joined.subarray(0, 600)])))).code).toBe("import_archive_invalid");
    expect((await refusal(read(archive([joined.subarray(0, BLOCK)])))).code).toBe("import_archive_invalid");
    expect((await refusal(read(archive([...entry("a.json", utf8("{}"))])))).code).toBe("import_archive_invalid");

    const damaged = joined.slice();
    damaged[3] ^= 0xff;
    expect((await refusal(read(archive([damaged])))).message).toMatch(/checksum/);

    const link = tarHeader("a.json", 0, 0);
    link[156] = 0x32; // '2': a symbolic link (the checksum is now wrong too; fix it)
    link.fill(0x20, 148, 156);
    let sum = 0;
    for (const byte of link) sum += byte;
    link.set(utf8(sum.toString(8).padStart(6, "0") + "\0"), 148);
    expect((await refusal(read(archive([link, tarEnd()])))).message).toMatch(/not a regular file/);

    expect((await refusal(read(archive([...entry("bad/x", utf8("1")), tarEnd()])))).code).toBe("import_archive_invalid");

    const oversize = await refusal(read(archive([tarHeader("a.json", 5_000_000, 0)]), 1000));
    expect(oversize.code).toBe("import_archive_too_large");
    expect(oversize.details).toMatchObject({ entry: "a.json", size: 5_000_000, limit: 1000 });
    expect((await refusal(read(archive(whole), 1000, 700))).code).toBe("import_archive_too_large");
  });
});
