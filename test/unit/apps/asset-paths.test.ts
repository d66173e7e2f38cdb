// Deploy asset rules as pure functions (WIRE §2.2 Asset; spec A Deploy package; spec B
// Limits): the path grammar, reserved paths, forbidden extensions, and prepareAssets'
// count, size, duplicate, base64 and type checks with the field each failure names.
import { describe, expect, it } from "vitest";
import { RelayError } from "../../../src/errors";
import { FORBIDDEN_EXTENSIONS, checkAssetPath, prepareAssets, type AssetInput } from "../../../src/apps/assets";

const LIMITS = { maxAssets: 50, maxAssetBytes: 5_000_000 };
const PNG_HEAD = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d];

function b64(bytes: number[] | string): string {
  const data = typeof bytes === "string" ? [...new TextEncoder().encode(bytes)] : bytes;
  return btoa(String.fromCharCode(...data));
}

async function rejection(inputs: AssetInput[], limits = LIMITS): Promise<RelayError> {
  try {
    await prepareAssets(inputs, limits);
  } catch (err) {
    if (err instanceof RelayError) return err;
    throw err;
  }
  throw new Error("accepted");
}

function pathError(path: string): RelayError | null {
  try {
    checkAssetPath(path, "assets.0.path");
    return null;
  } catch (err) {
    if (err instanceof RelayError) return err;
    throw err;
  }
}

describe("checkAssetPath", () => {
  it.each([
    "logo.png", "img/logo.png", "a/b/c/d/e.txt", "UPPER.TXT", "with-dash_and.dots.v2.json", "no-extension", "b2/x.png", "bb/x.png",
    "svc/x.png", "_svcx/y.png", "robots.txt.bak", "my.well-known/x", "x..y.txt", "app.js.txt", "a".repeat(512),
  ])("accepts %s", (path) => {
    expect(pathError(path)).toBeNull();
  });

  it.each([
    "", "/abs.png", "../up.png", "a/../b.png", "a/..", "./x.png", "a/./b.png", "a//b.png", "dir/", "a\\b.png", "a\tb.png", "a\u0000b",
    "a\u007fb", "a b.png", "é.png", "a%2fb", "a?b", "a#b", "a:b", "~/x", ".env", ".git/HEAD", "a/.b.png", ".well-known/security.txt",
    "_svc", "_svc/x", "_SVC/x", "_Svc/deep/x.png", "b", "b/x", "B/x", "robots.txt", "ROBOTS.TXT", "favicon.ico", "sitemap.xml",
    "index.html", "manifest.json", "a".repeat(513),
  ])("refuses %j with invalid_request naming the field and the path", (path) => {
    const e = pathError(path);
    expect(e?.code).toBe("invalid_request");
    expect(e?.details).toEqual({ field: "assets.0.path", path: path.slice(0, 200) });
  });

  it("refuses every forbidden extension in any case, at any depth", () => {
    expect([...FORBIDDEN_EXTENSIONS].sort()).toEqual(["cjs", "css", "htm", "html", "js", "jsx", "mjs", "svg", "ts", "tsx", "xhtml"]);
    for (const ext of FORBIDDEN_EXTENSIONS) {
      for (const path of [`x.${ext}`, `dir/x.${ext.toUpperCase()}`, `a.b.${ext}`]) {
        expect(pathError(path)?.message, path).toMatch(/could execute/);
      }
    }
  });
});

describe("prepareAssets", () => {
  it("decodes, hashes and types each asset, keeping order and paths", async () => {
    const prepared = await prepareAssets([
      { path: "a.txt", content_base64: b64("hello") },
      { path: "img/p.png", content_base64: b64(PNG_HEAD) },
      { path: "t.bin", content_base64: b64("a,b"), mime: "text/csv" },
    ], LIMITS);
    expect(prepared.map(({ path, size, mime }) => ({ path, size, mime }))).toEqual([
      { path: "a.txt", size: 5, mime: "text/plain" },
      { path: "img/p.png", size: PNG_HEAD.length, mime: "image/png" },
      { path: "t.bin", size: 3, mime: "text/csv" },
    ]);
    expect(prepared[0].sha256).toBe("2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824");
    expect([...prepared[0].bytes]).toEqual([...new TextEncoder().encode("hello")]);
  });

  it("an empty list is fine", async () => {
    expect(await prepareAssets([], LIMITS)).toEqual([]);
  });

  it("over the count cap → invalid_request naming assets, before anything else", async () => {
    const inputs = Array.from({ length: 3 }, (_, i) => ({ path: `/${i}`, content_base64: "!" }));
    const e = await rejection(inputs, { maxAssets: 2, maxAssetBytes: 10 });
    expect(e.code).toBe("invalid_request");
    expect(e.details).toEqual({ field: "assets", limit: 2 });
  });

  it("over the byte cap → payload_too_large naming the entry; the cap itself is fine", async () => {
    expect(await prepareAssets([{ path: "ok.bin", content_base64: b64("x".repeat(10)) }], { maxAssets: 5, maxAssetBytes: 10 })).toHaveLength(1);
    const e = await rejection([{ path: "ok.bin", content_base64: b64("x") }, { path: "big.bin", content_base64: b64("x".repeat(11)) }], { maxAssets: 5, maxAssetBytes: 10 });
    expect(e.code).toBe("payload_too_large");
    expect(e.status).toBe(413);
    expect(e.details).toEqual({ field: "assets.1", limit: 10 });
  });

  it("duplicates compare case-insensitively and name the later entry", async () => {
    const e = await rejection([{ path: "Dir/A.txt", content_base64: "" }, { path: "x.txt", content_base64: "" }, { path: "dir/a.TXT", content_base64: "" }]);
    expect(e.code).toBe("invalid_request");
    expect(e.details).toEqual({ field: "assets.2.path" });
  });

  it.each(["!!!!", "abcde", "ab=c", "a===", "abcde=", "ab-_", "YQ=\u0000"])("bad base64 %j → invalid_request naming content_base64", async (content) => {
    const e = await rejection([{ path: "x.bin", content_base64: content }]);
    expect(e.code).toBe("invalid_request");
    expect(e.details).toEqual({ field: "assets.0.content_base64" });
  });

  it("tolerates whitespace and missing padding in base64", async () => {
    const [a] = await prepareAssets([{ path: "x.txt", content_base64: " aGVs\nbG8 " }], LIMITS);
    expect(new TextDecoder().decode(a.bytes)).toBe("hello");
    const [b] = await prepareAssets([{ path: "y.txt", content_base64: "aGk" }], LIMITS);
    expect(new TextDecoder().decode(b.bytes)).toBe("hi");
  });

  it("a declared type contradicting the magic bytes → mime_mismatch naming the entry's mime", async () => {
    const e = await rejection([{ path: "p.png", content_base64: b64(PNG_HEAD), mime: "image/jpeg" }]);
    expect(e.code).toBe("mime_mismatch");
    expect(e.status).toBe(415);
    expect(e.details).toEqual({ field: "assets.0.mime", declared: "image/jpeg", sniffed: "image/png" });
  });

  it("attachment_id → attachment_not_found, after the path is checked", async () => {
    let e = await rejection([{ path: "v.mp4", attachment_id: "att_1" }]);
    expect(e.code).toBe("attachment_not_found");
    expect(e.details).toEqual({ field: "assets.0.attachment_id" });
    e = await rejection([{ path: "v.js", attachment_id: "att_1" }]);
    expect(e.code).toBe("invalid_request");
  });

  it("the first bad entry is the one reported", async () => {
    const e = await rejection([
      { path: "ok.txt", content_base64: b64("x") },
      { path: "x.css", content_base64: b64("x") },
      { path: "y.png", content_base64: b64(PNG_HEAD), mime: "image/gif" },
    ]);
    expect(e.details).toMatchObject({ field: "assets.1.path" });
  });
});
