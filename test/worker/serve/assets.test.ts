// Assets on an app origin: exact type, nosniff, sandbox CSP, inline only for harmless
// types, ETag/304, single-range 206/416, a short public cache, exact path matching (no
// traversal), the deploy-time refusal of executable types; plus the reserved paths and
// the SDK bundle with its immutable caching.
import { describe, expect, it } from "vitest";
import { call, expectError } from "../helpers";
import { SDK_HASH, SDK_SOURCE } from "../../../src/page-script/bundle.generated";
import { appCall, ASSETS, b64, deploy, manifest, owner, PNG_BASE64, TEXT } from "./helpers";
import { DEFAULT_ICON_SVG } from "../../../src/http/serve/identity";

function bytesOf(base64: string): Uint8Array {
  return Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
}

async function sha256(bytes: Uint8Array): Promise<string> {
  return [...new Uint8Array(await crypto.subtle.digest("SHA-256", bytes))].map((b) => b.toString(16).padStart(2, "0")).join("");
}

describe("assets", () => {
  it("serve an image inline with hardened headers and its bytes", async () => {
    const app = await deploy(await owner(), { assets: ASSETS });
    const res = await appCall(app.slug, "/pic.png");
    expect(res.status).toBe(200);
    const bytes = new Uint8Array(await res.arrayBuffer());
    expect(bytes).toEqual(bytesOf(PNG_BASE64));
    expect(res.headers.get("content-type")).toBe("image/png");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("content-security-policy")).toBe("sandbox; default-src 'none'");
    expect(res.headers.get("content-disposition")).toBe('inline; filename="pic.png"');
    expect(res.headers.get("etag")).toBe(`"${await sha256(bytes)}"`);
    expect(res.headers.get("accept-ranges")).toBe("bytes");
    expect(res.headers.get("cache-control")).toBe("public, max-age=60");
    expect(res.headers.get("content-length")).toBe(String(bytes.byteLength));
    expect(res.headers.get("set-cookie")).toBeNull();
  });

  it("serve text, PDF and JavaScript-in-a-.txt as downloads, nested paths included", async () => {
    const app = await deploy(await owner(), { assets: [...ASSETS, { path: "evil.txt", content_base64: b64("document.title='pwned'") }] });
    const notes = await appCall(app.slug, "/notes.txt");
    expect(await notes.text()).toBe(TEXT);
    expect(notes.headers.get("content-type")).toBe("text/plain");
    expect(notes.headers.get("content-disposition")).toBe('attachment; filename="notes.txt"');
    const pdf = await appCall(app.slug, "/data/report.pdf");
    expect(pdf.status).toBe(200);
    expect(pdf.headers.get("content-type")).toBe("application/pdf");
    expect(pdf.headers.get("content-disposition")).toBe('attachment; filename="report.pdf"');
    const evil = await appCall(app.slug, "/evil.txt");
    expect(evil.headers.get("content-type")).toBe("text/plain");
    expect(evil.headers.get("x-content-type-options")).toBe("nosniff");
    expect(evil.headers.get("content-disposition")).toMatch(/^attachment/);
  });

  it("answer 304 to a matching If-None-Match", async () => {
    const app = await deploy(await owner(), { assets: ASSETS });
    const etag = (await appCall(app.slug, "/pic.png")).headers.get("etag")!;
    for (const value of [etag, `W/${etag}`, `"other", ${etag}`, "*"]) {
      const res = await appCall(app.slug, "/pic.png", { headers: { "if-none-match": value } });
      expect(res.status, value).toBe(304);
      expect(res.headers.get("etag")).toBe(etag);
      expect(await res.text()).toBe("");
    }
    expect((await appCall(app.slug, "/pic.png", { headers: { "if-none-match": '"different"' } })).status).toBe(200);
  });

  it("answer single ranges with 206 and unsatisfiable ones with 416", async () => {
    const app = await deploy(await owner(), { assets: ASSETS });
    const size = TEXT.length;
    const cases: Array<[string, number, string | null, string | null]> = [
      ["bytes=0-4", 206, "hello", `bytes 0-4/${size}`],
      ["bytes=7-", 206, TEXT.slice(7), `bytes 7-${size - 1}/${size}`],
      ["bytes=-4", 206, TEXT.slice(-4), `bytes ${size - 4}-${size - 1}/${size}`],
      ["bytes=20-1000", 206, TEXT.slice(20), `bytes 20-${size - 1}/${size}`],
      [`bytes=${size}-`, 416, null, `bytes */${size}`],
      ["bytes=9-3", 416, null, `bytes */${size}`],
      ["bytes=-0", 416, null, `bytes */${size}`],
      ["bytes=abc", 416, null, `bytes */${size}`],
      ["bytes=99999999999999999999-", 416, null, `bytes */${size}`],
      ["bytes=0-1,3-4", 200, TEXT, null],
      ["items=0-4", 200, TEXT, null],
    ];
    for (const [range, status, body, contentRange] of cases) {
      const res = await appCall(app.slug, "/notes.txt", { headers: { range } });
      expect(res.status, range).toBe(status);
      const text = await res.text();
      if (body !== null) expect(text, range).toBe(body);
      expect(res.headers.get("content-range"), range).toBe(contentRange);
      if (status === 206) expect(res.headers.get("content-length")).toBe(String(body!.length));
    }
  });

  it("match paths exactly: unknown, traversal and encoded paths are 404, never a 500", async () => {
    const app = await deploy(await owner(), { assets: ASSETS });
    const paths = [
      "/nope.png", "/PIC.PNG", "/pic.png/", "/data", "/data/", "/data/../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd",
      "/_svc/../secret", "/..%2fpic.png", "/data%2freport.pdf", "/pic%2Epng", "/pic.png%00", "/%00", "/%", "/%zz",
      "//pic.png", "/./pic.png/..", "/.env", "/.well-known/other", "/index.htm", "/manifest.json",
    ];
    for (const path of paths) {
      const res = await appCall(app.slug, path);
      const text = await res.text();
      expect(res.status, path).toBeLessThan(500);
      if (res.status !== 404) {
        // The URL parser resolved the dots onto a real asset or the document: never outside the app.
        expect([200], path).toContain(res.status);
      } else {
        expect(res.headers.get("content-type"), path).toMatch(/^text\/html/);
        expect(text, path).not.toContain("Secret page body");
      }
    }
    expect((await appCall(app.slug, "/data/../../etc/passwd")).status).toBe(404);
    expect((await appCall(app.slug, "/_svc/../secret")).status).toBe(404);
    expect((await appCall(app.slug, "/data%2freport.pdf")).status).toBe(404);
  });

  it("HEAD answers headers only; other verbs are 405", async () => {
    const app = await deploy(await owner(), { assets: ASSETS });
    const head = await appCall(app.slug, "/pic.png", { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("content-type")).toBe("image/png");
    expect(await head.text()).toBe("");
    const post = await appCall(app.slug, "/pic.png", { method: "POST", body: "x" });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET, HEAD");
  });

  it("deploys refuse executable types", async () => {
    const who = await owner();
    for (const path of ["x.js", "style.css", "logo.svg", "page.html", "nested/app.mjs"]) {
      const res = await call("/v1/apps", { key: who.agent.api_key, json: { html: "<p>x</p>", manifest: manifest(), visibility: "public", assets: [{ path, content_base64: b64("alert(1)") }] } });
      const e = await expectError(res, 400, "invalid_request");
      expect(e.message, path).toContain(path);
    }
  });
});

describe("reserved paths", () => {
  it("robots.txt disallows everything by default", async () => {
    const app = await deploy(await owner());
    const res = await appCall(app.slug, "/robots.txt");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    expect(await res.text()).toBe("User-agent: *\nDisallow: /\n");
    const gated = await deploy(await owner(), { visibility: "private" });
    expect(await (await appCall(gated.slug, "/robots.txt")).text()).toBe("User-agent: *\nDisallow: /\n");
  });

  it("favicon.ico is the public app's emoji icon, else the relay's default icon (never a 404 for the browser to log)", async () => {
    const who = await owner();
    const withIcon = await deploy(who, { manifest: manifest({ icon: "🎲" }) });
    const icon = await appCall(withIcon.slug, "/favicon.ico");
    expect(icon.status).toBe(200);
    expect(icon.headers.get("content-type")).toBe("image/svg+xml");
    expect(icon.headers.get("content-security-policy")).toMatch(/^sandbox/);
    expect(await icon.text()).toContain("🎲");
    for (const app of [await deploy(who), await deploy(who, { visibility: "private", manifest: manifest({ icon: "🎲" }) })]) {
      const fallback = await appCall(app.slug, "/favicon.ico");
      expect(fallback.status).toBe(200);
      expect(fallback.headers.get("content-type")).toBe("image/svg+xml");
      expect(fallback.headers.get("content-security-policy")).toMatch(/^sandbox/);
      expect(await fallback.text()).toBe(DEFAULT_ICON_SVG);
    }
  });

  it("security.txt, sitemap.xml and a bare /b are 404 pages; /b/<token> is a capability URL that refuses an unknown token", async () => {
    const app = await deploy(await owner());
    for (const path of ["/.well-known/security.txt", "/sitemap.xml", "/b/", "/b"]) {
      const res = await appCall(app.slug, path);
      expect(res.status, path).toBe(404);
      expect(res.headers.get("content-type"), path).toMatch(/^text\/html/);
    }
    const unknown = await appCall(app.slug, "/b/abc");
    expect(unknown.status).toBe(401);
    expect(unknown.headers.get("content-type")).toMatch(/^text\/html/);
    const page = await unknown.text();
    expect(page).toContain("<title>Link no longer works</title>");
    expect(page).toContain("This link is unknown, expired, revoked or already used.");
  });
});

describe("the SDK bundle", () => {
  it("is served at its hash, immutable", async () => {
    const app = await deploy(await owner());
    const res = await appCall(app.slug, `/_svc/sdk.${SDK_HASH}.js`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(res.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(await res.text()).toBe(SDK_SOURCE);
  });

  it("any other hash is a 404 envelope", async () => {
    const app = await deploy(await owner());
    for (const path of ["/_svc/sdk.0000000000000000.js", "/_svc/sdk.js", `/_svc/sdk.${SDK_HASH}.js.map`, `/_svc/sdk.${SDK_HASH.toUpperCase()}.js`]) {
      await expectError(await appCall(app.slug, path), 404, "not_found");
    }
  });

  it("is served on gated apps too, without a credential", async () => {
    const app = await deploy(await owner(), { visibility: "private" });
    expect((await appCall(app.slug, `/_svc/sdk.${SDK_HASH}.js`)).status).toBe(200);
  });
});
