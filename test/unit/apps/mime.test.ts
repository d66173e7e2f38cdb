// What a file is (src/blobs/mime.ts; WIRE §2.2: `mime` is honoured only for types without
// magic bytes, otherwise the relay sniffs and a contradicting declared type is refused).
import { describe, expect, it } from "vitest";
import { DECLARABLE_WITHOUT_MAGIC, decideMime, extensionOf, isInlineSafe, mimeForExtension, sniff } from "../../../src/blobs/mime";

const bytes = (...parts: Array<number[] | string>) =>
  new Uint8Array(parts.flatMap((p) => (typeof p === "string" ? [...p].map((c) => c.charCodeAt(0)) : p)));

const SAMPLES: Array<[string, Uint8Array]> = [
  ["image/png", bytes([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], [0, 0])],
  ["image/jpeg", bytes([0xff, 0xd8, 0xff, 0xe0])],
  ["image/gif", bytes("GIF89a", [1, 0])],
  ["image/gif", bytes("GIF87a")],
  ["image/webp", bytes("RIFF", [0, 0, 0, 0], "WEBPVP8 ")],
  ["image/avif", bytes([0, 0, 0, 0x1c], "ftypavif")],
  ["image/x-icon", bytes([0, 0, 1, 0, 1, 0])],
  ["application/pdf", bytes("%PDF-1.7")],
  ["audio/wav", bytes("RIFF", [0, 0, 0, 0], "WAVEfmt ")],
  ["audio/ogg", bytes("OggS", [0])],
  ["audio/mpeg", bytes("ID3", [3, 0])],
  ["audio/flac", bytes("fLaC")],
  ["video/webm", bytes([0x1a, 0x45, 0xdf, 0xa3])],
  ["video/mp4", bytes([0, 0, 0, 0x18], "ftypmp42")],
  ["font/woff", bytes("wOFF")],
  ["font/woff2", bytes("wOF2")],
  ["font/otf", bytes("OTTO")],
  ["application/zip", bytes([0x50, 0x4b, 0x03, 0x04])],
];

describe("sniff", () => {
  it.each(SAMPLES)("recognises %s", (mime, data) => {
    expect(sniff(data)).toBe(mime);
  });

  it.each([["text", bytes("hello")], ["empty", new Uint8Array()], ["html", bytes("<!doctype html>")], ["svg", bytes("<svg xmlns=")], ["short png", bytes([0x89, 0x50])]])(
    "finds nothing in %s",
    (_name, data) => {
      expect(sniff(data)).toBeNull();
    },
  );
});

describe("decideMime", () => {
  const png = SAMPLES[0][1];

  it("magic bytes win over the extension", () => {
    expect(decideMime("photo.txt", png)).toEqual({ ok: true, mime: "image/png" });
    expect(decideMime("photo.jpg", png)).toEqual({ ok: true, mime: "image/png" });
  });

  it("a declared type agreeing with the bytes is fine, in any case and with parameters", () => {
    expect(decideMime("x", png, "image/png")).toEqual({ ok: true, mime: "image/png" });
    expect(decideMime("x", png, "IMAGE/PNG; foo=bar")).toEqual({ ok: true, mime: "image/png" });
  });

  it("a declared type contradicting the bytes is refused", () => {
    expect(decideMime("x.png", png, "image/jpeg")).toEqual({ ok: false, declared: "image/jpeg", sniffed: "image/png" });
    expect(decideMime("x.txt", png, "text/plain")).toEqual({ ok: false, declared: "text/plain", sniffed: "image/png" });
    expect(decideMime("x.html", png, "text/html")).toEqual({ ok: false, declared: "text/html", sniffed: "image/png" });
  });

  it("office documents are zip containers: declaring one over zip bytes is fine", () => {
    const zip = bytes([0x50, 0x4b, 0x03, 0x04]);
    const docx = "application/vnd.openxmlformats-officedocument.wordprocessingml.document";
    expect(decideMime("report.docx", zip, docx)).toEqual({ ok: true, mime: docx });
    expect(decideMime("report.docx", zip)).toEqual({ ok: true, mime: "application/zip" });
  });

  it("without magic bytes, a declared type is honoured only from the allowlist", () => {
    const text = bytes("a,b\n");
    for (const declared of DECLARABLE_WITHOUT_MAGIC) expect(decideMime("file.bin", text, declared)).toEqual({ ok: true, mime: declared });
    for (const declared of ["text/html", "application/javascript", "image/svg+xml", "image/png", "text/css", "application/xhtml+xml"]) {
      expect(decideMime("file.txt", text, declared)).toEqual({ ok: true, mime: "text/plain" });
      expect(decideMime("file", text, declared)).toEqual({ ok: true, mime: "application/octet-stream" });
    }
  });

  it("without magic bytes or a declared type, the extension decides; unknown is octet-stream", () => {
    const text = bytes("x");
    expect(decideMime("a.csv", text)).toEqual({ ok: true, mime: "text/csv" });
    expect(decideMime("a.JSON", text)).toEqual({ ok: true, mime: "application/json" });
    expect(decideMime("a.md", text)).toEqual({ ok: true, mime: "text/markdown" });
    expect(decideMime("a.exe", text)).toEqual({ ok: true, mime: "application/octet-stream" });
    expect(decideMime("Makefile", text)).toEqual({ ok: true, mime: "application/octet-stream" });
  });
});

describe("extensionOf / mimeForExtension", () => {
  it.each([["a.txt", "txt"], ["dir.v2/file", ""], ["a.tar.gz", "gz"], [".env", ""], ["dir/.env", ""], ["A.PNG", "png"], ["x.", ""], ["noext", ""]])(
    "%s → %j",
    (path, ext) => {
      expect(extensionOf(path)).toBe(ext);
    },
  );

  it("maps the executable types too (so they are never served as something else)", () => {
    expect(mimeForExtension("a.js")).toBe("text/javascript");
    expect(mimeForExtension("a.svg")).toBe("image/svg+xml");
    expect(mimeForExtension("a.html")).toBe("text/html");
  });
});

describe("isInlineSafe", () => {
  it.each(["image/png", "image/jpeg", "image/gif", "image/webp", "image/avif", "image/x-icon", "audio/mpeg", "video/mp4", "font/woff2"])("%s renders inline", (mime) => {
    expect(isInlineSafe(mime)).toBe(true);
  });

  it.each(["image/svg+xml", "text/html", "text/plain", "text/javascript", "text/css", "application/pdf", "application/json", "application/xml", "application/octet-stream", "image/svg", "xaudio/x"])(
    "%s downloads",
    (mime) => {
      expect(isInlineSafe(mime)).toBe(false);
    },
  );
});
