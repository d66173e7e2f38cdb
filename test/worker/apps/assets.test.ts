// Deploy assets (WIRE §2.2 Asset rules, spec A Deploy package, spec B Limits): inline
// base64 stored content-addressed in R2, path and extension rules, count and size caps,
// base64 and type checks, attachment references; one bad asset refuses the whole deploy
// (create or redeploy) and stores nothing.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, callWith, expectError, json } from "../helpers";
import {
  GIF, MANIFEST, PDF, PNG, b64, blobKeys, deploy, owner, redeploy, sha256Hex, uniqueText, unchanged, versionRecord,
  type Owner,
} from "./fixtures";

type Asset = Record<string, unknown>;

function create(o: Owner, assets: unknown, extra: Record<string, unknown> = {}) {
  return call("/v1/apps", { key: o.key, json: { html: "<p>assets</p>", manifest: MANIFEST, assets, ...extra } });
}

/** A create refused with `code`, nothing of the owner changed; returns the envelope. */
async function refusedCreate(o: Owner, assets: unknown, status: number, code: Parameters<typeof expectError>[2]) {
  let e!: Awaited<ReturnType<typeof expectError>>;
  await unchanged(o, null, async () => {
    e = await expectError(await create(o, assets), status, code);
  });
  return e;
}

const text = (path: string, content = "hello\n", mime?: string): Asset => ({ path, content_base64: b64(content), ...(mime ? { mime } : {}) });

describe("assets: stored content-addressed", () => {
  it("indexes each asset by path with its sha256, size and sniffed type; bytes live once in R2 under asset/<sha256>", async () => {
    const o = await owner();
    const csv = uniqueText("a,b");
    const created = await deploy(o.key, {
      assets: [
        { path: "img/logo.png", content_base64: b64(PNG) },
        { path: "data/table.csv", content_base64: b64(csv), mime: "text/csv" },
        { path: "notes.txt", content_base64: b64("plain") },
        { path: "doc.pdf", content_base64: b64(PDF) },
        { path: "anim.gif", content_base64: b64(GIF), mime: "image/gif" },
        { path: "deep/a/b/c/file.json", content_base64: b64("{}") },
        { path: "Upper_Case-name.v2.TXT", content_base64: b64("x") },
      ],
    });
    const record = await versionRecord(created.app_id, 1);
    const png = await sha256Hex(PNG);
    expect(record.assets).toEqual([
      { path: "img/logo.png", sha256: png, size: PNG.byteLength, mime: "image/png" },
      { path: "data/table.csv", sha256: await sha256Hex(csv), size: csv.byteLength, mime: "text/csv" },
      { path: "notes.txt", sha256: await sha256Hex(new TextEncoder().encode("plain")), size: 5, mime: "text/plain" },
      { path: "doc.pdf", sha256: await sha256Hex(PDF), size: PDF.byteLength, mime: "application/pdf" },
      { path: "anim.gif", sha256: await sha256Hex(GIF), size: GIF.byteLength, mime: "image/gif" },
      { path: "deep/a/b/c/file.json", sha256: await sha256Hex(new TextEncoder().encode("{}")), size: 2, mime: "application/json" },
      { path: "Upper_Case-name.v2.TXT", sha256: await sha256Hex(new TextEncoder().encode("x")), size: 1, mime: "text/plain" },
    ]);
    const object = await env.BLOBS.get(`asset/${png}`);
    expect(object).not.toBeNull();
    expect(new Uint8Array(await object!.arrayBuffer())).toEqual(PNG);
    expect(object!.httpMetadata?.contentType).toBe("image/png");
    const csvObject = await env.BLOBS.head(`asset/${await sha256Hex(csv)}`);
    expect(csvObject?.httpMetadata?.contentType).toBe("text/csv");
  });

  it("two apps with the same bytes share one R2 object, written once", async () => {
    const a = await owner();
    const b = await owner();
    const bytes = uniqueText("shared");
    const sha = await sha256Hex(bytes);
    const first = await deploy(a.key, { assets: [{ path: "shared.txt", content_base64: b64(bytes) }] });
    const before = await env.BLOBS.head(`asset/${sha}`);
    expect(before).not.toBeNull();
    const second = await deploy(b.key, { assets: [{ path: "other/name.txt", content_base64: b64(bytes) }] });
    expect(await blobKeys(`asset/${sha}`)).toEqual([`asset/${sha}`]);
    const after = await env.BLOBS.head(`asset/${sha}`);
    expect(after!.uploaded.getTime()).toBe(before!.uploaded.getTime());
    expect(after!.version).toBe(before!.version);
    expect((await versionRecord(first.app_id, 1)).assets[0].sha256).toBe(sha);
    expect((await versionRecord(second.app_id, 1)).assets[0].sha256).toBe(sha);
    // The same bytes twice in one deploy, under two paths, are one object too.
    const c = await deploy(a.key, { assets: [{ path: "x.txt", content_base64: b64(bytes) }, { path: "y.txt", content_base64: b64(bytes) }] });
    expect((await versionRecord(c.app_id, 1)).assets.map((x) => x.sha256)).toEqual([sha, sha]);
    expect(await blobKeys(`asset/${sha}`)).toEqual([`asset/${sha}`]);
  });

  it("accepts base64 with line breaks and without padding, and an empty file", async () => {
    const o = await owner();
    const bytes = uniqueText("wrapped");
    const wrapped = b64(bytes).replace(/(.{8})/g, "$1\n");
    const unpadded = b64("ab").replace(/=+$/, "");
    const created = await deploy(o.key, {
      assets: [{ path: "w.txt", content_base64: wrapped }, { path: "u.txt", content_base64: unpadded }, { path: "empty.txt", content_base64: "" }],
    });
    const record = await versionRecord(created.app_id, 1);
    expect(record.assets.map((a) => [a.path, a.size])).toEqual([["w.txt", bytes.byteLength], ["u.txt", 2], ["empty.txt", 0]]);
    expect(record.assets[0].sha256).toBe(await sha256Hex(bytes));
  });

  it("takes exactly 50 assets", async () => {
    const o = await owner();
    const assets = Array.from({ length: 50 }, (_, i) => text(`f/${i}.txt`, `file ${i}`));
    const created = await deploy(o.key, { assets });
    expect((await versionRecord(created.app_id, 1)).assets).toHaveLength(50);
  });
});

describe("assets: path rules", () => {
  it.each([
    ["a leading slash", "/logo.png"],
    ["a .. segment", "../logo.png"],
    ["an inner .. segment", "img/../../logo.png"],
    ["a trailing .. segment", "img/.."],
    ["a . segment", "./logo.png"],
    ["an inner . segment", "img/./logo.png"],
    ["an empty segment", "img//logo.png"],
    ["a trailing slash", "img/"],
    ["a backslash", "img\\logo.png"],
    ["a control character", "img/lo\u0001go.png"],
    ["a newline", "logo\n.png"],
    ["a NUL", "logo\u0000.png"],
    ["a space", "my logo.png"],
    ["a non-ASCII letter", "lögo.png"],
    ["a percent escape", "logo%2e.png"],
    ["a query", "logo.png?x=1"],
    ["a fragment", "logo.png#x"],
    ["a colon", "c:logo.png"],
    ["a dot-file", ".env"],
    ["a dot-directory", ".git/config"],
    ["a nested dot-file", "img/.hidden.png"],
    ["the well-known directory", ".well-known/security.txt"],
    ["the relay's _svc prefix", "_svc/feed"],
    ["_svc in another case", "_SVC/x.png"],
    ["_svc itself", "_svc"],
    ["the capability prefix b/", "b/token"],
    ["B/ in another case", "B/x.png"],
    ["b itself", "b"],
    ["robots.txt", "robots.txt"],
    ["favicon.ico", "favicon.ico"],
    ["sitemap.xml", "sitemap.xml"],
    ["manifest.json", "manifest.json"],
    ["MANIFEST.JSON", "MANIFEST.JSON"],
    ["index.html", "index.html"],
    ["empty", ""],
  ])("%s → 400 invalid_request naming the path", async (_name, path) => {
    const o = await owner();
    const e = await refusedCreate(o, [text("ok.txt"), { path, content_base64: b64(PNG) }], 400, "invalid_request");
    expect(e.details?.field).toBe("assets.1.path");
  });

  it("a path over 512 characters → 400", async () => {
    const o = await owner();
    const e = await refusedCreate(o, [{ path: `${"a/".repeat(256)}x.txt`, content_base64: b64("x") }], 400, "invalid_request");
    expect(e.details?.field).toBe("assets.0.path");
  });

  it.each(["app.js", "app.mjs", "app.cjs", "app.jsx", "app.ts", "app.tsx", "style.css", "icon.svg", "page.html", "page.htm", "page.xhtml", "APP.JS", "dir/Style.Css", "x.min.js"])(
    "forbidden extension %s → 400 invalid_request",
    async (path) => {
      const o = await owner();
      const e = await refusedCreate(o, [{ path, content_base64: b64("alert(1)"), mime: "text/plain" }], 400, "invalid_request");
      expect(e.details).toEqual({ field: "assets.0.path", path });
      expect(e.message).toMatch(/inline in index\.html/);
    },
  );

  it("extensions that only look close are fine (served by type, downloads unless inline-safe)", async () => {
    const o = await owner();
    const created = await deploy(o.key, { assets: [text("app.js.txt"), text("style.css.md"), text("json"), text("archive.svgz")] });
    expect((await versionRecord(created.app_id, 1)).assets.map((a) => a.mime)).toEqual(["text/plain", "text/markdown", "application/octet-stream", "application/octet-stream"]);
  });

  it("duplicate paths, including a case variant → 400 naming the second", async () => {
    const o = await owner();
    let e = await refusedCreate(o, [text("a.txt"), text("b.txt"), text("a.txt", "other")], 400, "invalid_request");
    expect(e.details).toEqual({ field: "assets.2.path" });
    e = await refusedCreate(o, [text("Img/Logo.txt"), text("img/logo.TXT")], 400, "invalid_request");
    expect(e.details).toEqual({ field: "assets.1.path" });
  });
});

describe("assets: caps, encoding and types", () => {
  it("more than 50 assets → 400 invalid_request with the limit", async () => {
    const o = await owner();
    const assets = Array.from({ length: 51 }, (_, i) => text(`f/${i}.txt`, `file ${i}`));
    const e = await refusedCreate(o, assets, 400, "invalid_request");
    expect(e.details).toEqual({ field: "assets", limit: 50 });
  });

  it("one asset over MAX_BLOB_BYTES → 413 payload_too_large; exactly the cap is fine", async () => {
    const o = await owner();
    const small = { MAX_BLOB_BYTES: "100" };
    const atCap = uniqueText("cap").slice(0, 100);
    const padded = new Uint8Array(100);
    padded.set(atCap);
    await unchanged(o, null, async () => {
      const over = new Uint8Array(101);
      const res = await callWith(small, "/v1/apps", { key: o.key, json: { html: "<p>x</p>", manifest: MANIFEST, assets: [text("ok.txt"), { path: "big.bin", content_base64: b64(over) }] } });
      const e = await expectError(res, 413, "payload_too_large");
      expect(e.details).toEqual({ field: "assets.1", limit: 100 });
    });
    expect(await blobKeys(`asset/${await sha256Hex(new Uint8Array(101))}`)).toEqual([]);
    const ok = await callWith(small, "/v1/apps", { key: o.key, json: { html: "<p>x</p>", manifest: MANIFEST, assets: [{ path: "cap.bin", content_base64: b64(padded) }] } });
    await json(ok, 201);
  });

  it.each([
    ["characters outside base64", "@@@@"],
    ["a length that cannot be base64", "abcde"],
    ["padding in the middle", "ab=cd"],
    ["too much padding", "a==="],
    ["padding after an odd length", "abcde="],
    ["URL-safe alphabet", "ab-_"],
  ])("bad base64 (%s) → 400 invalid_request naming content_base64", async (_name, content) => {
    const o = await owner();
    const e = await refusedCreate(o, [{ path: "x.bin", content_base64: content }], 400, "invalid_request");
    expect(e.details).toEqual({ field: "assets.0.content_base64" });
  });

  it.each([
    ["PNG bytes declared image/jpeg", PNG, "image/jpeg", "image/png"],
    ["PNG bytes declared text/plain", PNG, "text/plain", "image/png"],
    ["PDF bytes declared application/json", PDF, "application/json", "application/pdf"],
    ["GIF bytes declared image/png; charset", GIF, "image/png; charset=binary", "image/gif"],
  ])("%s → 415 mime_mismatch", async (_name, bytes, declared, sniffed) => {
    const o = await owner();
    const e = await refusedCreate(o, [{ path: "file.bin", content_base64: b64(bytes), mime: declared }], 415, "mime_mismatch");
    expect(e.details).toEqual({ field: "assets.0.mime", declared: declared.split(";")[0], sniffed });
  });

  it("the sniffed type wins over the extension, and a declared type without magic bytes is honoured only from the allowlist", async () => {
    const o = await owner();
    const created = await deploy(o.key, {
      assets: [
        { path: "looks-like.txt", content_base64: b64(PNG) },
        { path: "IMAGE.PNG", content_base64: b64(PNG), mime: "IMAGE/PNG" },
        { path: "data.bin", content_base64: b64("a,b\n1,2\n"), mime: "text/csv" },
        { path: "page.txt", content_base64: b64("<script>alert(1)</script>"), mime: "text/html" },
        { path: "x.md", content_base64: b64("# hi"), mime: "application/javascript" },
      ],
    });
    expect((await versionRecord(created.app_id, 1)).assets.map((a) => a.mime)).toEqual(["image/png", "image/png", "text/csv", "text/plain", "text/markdown"]);
  });

  it("attachment_id → 404 attachment_not_found (no app-scoped attachment exists)", async () => {
    const o = await owner();
    const e = await refusedCreate(o, [text("ok.txt"), { path: "big.mp4", attachment_id: "att_nothing" }], 404, "attachment_not_found");
    expect(e.details).toEqual({ field: "assets.1.attachment_id" });
  });

  it.each([
    ["both content and attachment", { path: "x.txt", content_base64: b64("x"), attachment_id: "att_1" }],
    ["neither content nor attachment", { path: "x.txt" }],
    ["an unknown key", { path: "x.txt", content_base64: b64("x"), size: 1 }],
    ["a path of the wrong type", { path: 1, content_base64: b64("x") }],
    ["content of the wrong type", { path: "x.txt", content_base64: 1 }],
    ["not an object", "x.txt"],
  ])("an asset with %s → 400 invalid_request", async (_name, asset) => {
    const o = await owner();
    const e = await refusedCreate(o, [asset], 400, "invalid_request");
    expect(String(e.details?.field)).toMatch(/^assets\.0/);
  });
});

describe("assets: one bad asset rejects the whole deploy", () => {
  it("create: a valid asset before a bad one is not stored; no app is made", async () => {
    const o = await owner();
    const good = uniqueText("good");
    const html = `<p>${crypto.randomUUID()}</p>`;
    await unchanged(o, null, async () => {
      const res = await call("/v1/apps", { key: o.key, json: { html, manifest: MANIFEST, assets: [{ path: "good.txt", content_base64: b64(good) }, { path: "bad.js", content_base64: b64("x") }] } });
      await expectError(res, 400, "invalid_request");
    });
    expect(await blobKeys(`asset/${await sha256Hex(good)}`)).toEqual([]);
    expect(await blobKeys(`doc/${await sha256Hex(new TextEncoder().encode(html))}`)).toEqual([]);
  });

  it("redeploy: the live version, document and assets stay as they were", async () => {
    const o = await owner();
    const created = await deploy(o.key, { assets: [{ path: "logo.png", content_base64: b64(PNG) }] });
    const before = await versionRecord(created.app_id, 1);
    const good = uniqueText("good");
    const cases: Array<[Asset[], number, Parameters<typeof expectError>[2]]> = [
      [[{ path: "good.txt", content_base64: b64(good) }, { path: "x.css", content_base64: b64("x") }], 400, "invalid_request"],
      [[{ path: "good.txt", content_base64: b64(good) }, { path: "x.png", content_base64: b64(PNG), mime: "image/gif" }], 415, "mime_mismatch"],
      [[{ path: "good.txt", content_base64: b64(good) }, { path: "x.mp4", attachment_id: "att_x" }], 404, "attachment_not_found"],
      [[{ path: "good.txt", content_base64: b64(good) }, { path: "x.bin", content_base64: "!!" }], 400, "invalid_request"],
    ];
    for (const [assets, status, code] of cases) {
      await unchanged(o, created.app_id, async () => {
        const res = await call(`/v1/apps/${created.app_id}/versions`, { key: o.key, json: { html: "<p>new</p>", assets } });
        await expectError(res, status, code);
      });
    }
    expect(await blobKeys(`asset/${await sha256Hex(good)}`)).toEqual([]);
    expect(await versionRecord(created.app_id, 1)).toEqual(before);
    // And a good redeploy still works afterwards.
    expect((await redeploy(o.key, created.app_id, { assets: [{ path: "good.txt", content_base64: b64(good) }] })).version).toBe(2);
  });
});
