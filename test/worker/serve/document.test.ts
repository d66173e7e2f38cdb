// The served document: the page script injected first in <head> (inline bootstrap, then
// the deferred SDK tag), head identity only where the author left it out, and every
// security header built from the manifest (CSP variants, Permissions-Policy,
// Referrer-Policy, robots, nosniff, caching).
import { describe, expect, it } from "vitest";
import { expectError } from "../helpers";
import { SDK_HASH, BOOTSTRAP_SOURCE } from "../../../src/page-script/bundle.generated";
import { appCall, csp, deploy, manifest, owner, ownerToken, permissions, type Obj } from "./helpers";
import { DEFAULT_ICON_SVG } from "../../../src/http/serve/identity";

const BOOT = '<script data-svc="';
const SDK_TAG = `<script src="/_svc/sdk.${SDK_HASH}.js" defer></script>`;

async function page(html: string, app: Obj = {}, ext: Obj = {}, visibility = "public") {
  const deployed = await deploy(await owner(), { html, manifest: manifest(app, ext), visibility });
  const res = await appCall(deployed.slug, "/");
  return { deployed, res, text: await res.text() };
}

function count(text: string, needle: string | RegExp): number {
  return text.split(needle).length - 1;
}

function bootConfig(text: string): Obj {
  const match = /<script data-svc="([^"]*)">/.exec(text);
  expect(match).not.toBeNull();
  const raw = match![1].replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
  return JSON.parse(raw) as Obj;
}

describe("page script injection", () => {
  it("puts the inline bootstrap first in <head>, then the deferred SDK tag", async () => {
    const { res, text, deployed } = await page('<!doctype html><html><head><meta charset="utf-8"><title>Mine</title></head><body><p>Hi</p></body></html>');
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(text.startsWith(`<!doctype html><html><head>${BOOT}`)).toBe(true);
    expect(text).toContain(`>${BOOTSTRAP_SOURCE}</script>${SDK_TAG}`);
    expect(count(text, SDK_TAG)).toBe(1);
    expect(text.indexOf(SDK_TAG)).toBeLessThan(text.indexOf('<meta charset="utf-8">'));
    expect(bootConfig(text)).toEqual({
      slug: deployed.slug, name: "Test app", description: null, icon: null, visibility: "public", authorize: "http://localhost:8787/authorize",
    });
    expect(text).toContain("<p>Hi</p>");
  });

  it("adds a <head> when the author wrote none, with or without <html>", async () => {
    const bare = await page("<h1>Hi</h1>");
    expect(bare.text.startsWith(`<head>${BOOT}`)).toBe(true);
    expect(bare.text).toContain("</head><h1>Hi</h1>");

    const doctype = await page("<!DOCTYPE html><p>Hello</p>");
    expect(doctype.text.startsWith(`<!DOCTYPE html><head>${BOOT}`)).toBe(true);

    const html = await page('<html lang="en"><body>x</body></html>');
    expect(html.text.startsWith(`<html lang="en"><head>${BOOT}`)).toBe(true);

    const textOnly = await page("just words");
    expect(textOnly.text).toContain(SDK_TAG);
    expect(textOnly.text.startsWith("just words")).toBe(true);
  });

  it("escapes app facts in the bootstrap's attribute", async () => {
    const { text } = await page("<p>x</p>", { name: `Tom's "<b>app</b>" & co`, description: "</script><script>alert(1)</script>" });
    expect(text).not.toContain("<b>app</b>");
    expect(text).not.toContain("<script>alert(1)");
    expect(bootConfig(text)).toMatchObject({ name: `Tom's "<b>app</b>" & co`, description: "</script><script>alert(1)</script>" });
  });
});

describe("head identity", () => {
  it("adds title, description, icon, Open Graph, Twitter and robots tags when missing", async () => {
    const { text } = await page("<!doctype html><html><head></head><body>x</body></html>",
      { name: "Dice & Co", description: "Roll <dice>", icon: "🎲", ogImage: "https://img.example.com/card.png" });
    expect(text).toContain("<title>Dice &amp; Co</title>");
    expect(text).toContain('<meta name="description" content="Roll &lt;dice&gt;">');
    expect(text).toMatch(/<link rel="icon" href="data:image\/svg\+xml,[^"]*%F0%9F%8E%B2[^"]*">/);
    expect(text).toContain('<meta property="og:title" content="Dice &amp; Co">');
    expect(text).toContain('<meta property="og:description" content="Roll &lt;dice&gt;">');
    expect(text).toContain('<meta property="og:image" content="https://img.example.com/card.png">');
    expect(text).toContain('<meta property="og:type" content="website">');
    expect(text).toMatch(/<meta property="og:url" content="http:\/\/[a-z0-9-]+\.localhost:8787\/">/);
    expect(text).toContain('<meta name="twitter:card" content="summary_large_image">');
    expect(text).toContain('<meta name="robots" content="noindex, nofollow">');
  });

  it("an app without an icon gets the relay's default icon inline, so the browser asks for no favicon", async () => {
    const { text } = await page("<!doctype html><html><head></head><body>x</body></html>", { name: "Plain" });
    expect(count(text, 'rel="icon"')).toBe(1);
    expect(text).toContain(`<link rel="icon" href="data:image/svg+xml,${encodeURIComponent(DEFAULT_ICON_SVG)}">`);
  });

  it("leaves out whatever the author supplied", async () => {
    const html = `<!doctype html><html><head><title>Own title</title><meta name="Description" content="own">
      <link rel="shortcut icon" href="/i.png"><meta property="og:title" content="own og"><meta name="twitter:card" content="summary">
      <meta name="robots" content="noarchive"></head><body></body></html>`;
    const { text } = await page(html, { name: "Named", description: "manifest description", icon: "🎲" });
    expect(count(text, "<title>")).toBe(1);
    expect(text).toContain("<title>Own title</title>");
    expect(text).not.toContain('<meta name="description"');
    expect(text).not.toContain('rel="icon"');
    expect(count(text, 'property="og:title"')).toBe(1);
    expect(count(text, 'name="twitter:card"')).toBe(1);
    expect(count(text, 'name="robots"')).toBe(1);
    // What the author did not supply is still added.
    expect(text).toContain('<meta property="og:description" content="manifest description">');
  });

  it("does not count an SVG <title> as the page title", async () => {
    const { text } = await page('<html><head></head><body><svg><title>icon</title></svg></body></html>', { name: "Has SVG" });
    expect(text).toContain("<title>Has SVG</title>");
  });
});

describe("security headers", () => {
  it("a plain public app: strict CSP, every capability denied, no-referrer, noindex", async () => {
    const { res } = await page("<p>x</p>");
    const policy = csp(res);
    expect(policy["default-src"]).toEqual(["'self'"]);
    expect(policy["script-src"]).toEqual(["'self'", "'unsafe-inline'"]);
    expect(policy["style-src"]).toEqual(["'self'", "'unsafe-inline'"]);
    expect(policy["img-src"]).toEqual(expect.arrayContaining(["'self'", "data:", "https:"]));
    expect(policy["font-src"]).toEqual(expect.arrayContaining(["'self'", "data:", "https:"]));
    expect(policy["media-src"]).toEqual(expect.arrayContaining(["'self'", "data:", "https:"]));
    expect(policy["connect-src"]).toEqual(["'self'"]);
    expect(policy["frame-src"]).toEqual(["'none'"]);
    expect(policy["frame-ancestors"]).toEqual(["'none'"]);
    expect(policy["object-src"]).toEqual(["'none'"]);
    const perms = permissions(res);
    expect(Object.keys(perms)).toHaveLength(21);
    expect(Object.values(perms).every((v) => v === "()")).toBe(true);
    expect(res.headers.get("referrer-policy")).toBe("no-referrer");
    expect(res.headers.get("x-robots-tag")).toBe("noindex, nofollow");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("x-frame-options")).toBe("DENY");
    expect(res.headers.get("cache-control")).toBe("public, max-age=60");
  });

  it("externalHosts widen connect-src only", async () => {
    const { res } = await page("<p>x</p>", {}, { externalHosts: ["https://api.example.com", "https://*.data.example.org"] });
    const policy = csp(res);
    expect(policy["connect-src"]).toEqual(["'self'", "https://api.example.com", "https://*.data.example.org"]);
    expect(policy["script-src"]).toEqual(["'self'", "'unsafe-inline'"]);
  });

  it("cdn widens only script-src and style-src to https:", async () => {
    const { res } = await page("<p>x</p>", {}, { cdn: true });
    const policy = csp(res);
    expect(policy["script-src"]).toEqual(["'self'", "'unsafe-inline'", "https:"]);
    expect(policy["style-src"]).toEqual(["'self'", "'unsafe-inline'", "https:"]);
    expect(policy["connect-src"]).toEqual(["'self'"]);
    expect(policy["frame-src"]).toEqual(["'none'"]);
  });

  it("embeds become frame-src and switch the Referrer-Policy", async () => {
    const { res } = await page("<p>x</p>", {}, { embeds: ["https://www.youtube.com", "https://*.vimeo.com"] });
    expect(csp(res)["frame-src"]).toEqual(["https://www.youtube.com", "https://*.vimeo.com"]);
    expect(res.headers.get("referrer-policy")).toBe("strict-origin-when-cross-origin");
  });

  it("embedAncestors set frame-ancestors on a public app, and nothing on a private one", async () => {
    const ext = { embedAncestors: ["https://blog.example.com", "http://localhost:3000"] };
    const open = await page("<p>x</p>", {}, ext);
    expect(csp(open.res)["frame-ancestors"]).toEqual(["https://blog.example.com", "http://localhost:3000"]);
    expect(open.res.headers.get("x-frame-options")).toBeNull();

    const who = await owner();
    const gated = await deploy(who, { manifest: manifest({}, ext), visibility: "private" });
    const shell = await appCall(gated.slug, "/");
    expect(csp(shell)["frame-ancestors"]).toEqual(["'none'"]);
    expect(shell.headers.get("x-frame-options")).toBe("DENY");
  });

  it("capabilities flip exactly their Permissions-Policy entries to self", async () => {
    const { res } = await page("<p>x</p>", {}, { capabilities: ["camera", "clipboard-write"] });
    const perms = permissions(res);
    expect(perms.camera).toBe("(self)");
    expect(perms["clipboard-write"]).toBe("(self)");
    expect(perms.microphone).toBe("()");
    expect(perms.geolocation).toBe("()");
    expect(Object.values(perms).filter((v) => v === "(self)")).toHaveLength(2);
  });

  it("an indexable public app drops noindex everywhere; indexable on a private app does nothing", async () => {
    const open = await page("<p>x</p>", { indexable: true });
    expect(open.res.headers.get("x-robots-tag")).toBeNull();
    expect(open.text).not.toContain('name="robots"');
    const robots = await appCall(open.deployed.slug, "/robots.txt");
    expect(await robots.text()).toBe("User-agent: *\nAllow: /\n");

    const who = await owner();
    const gated = await deploy(who, { manifest: manifest({ indexable: true }), visibility: "private" });
    const doc = await appCall(gated.slug, "/", { token: await ownerToken(who.human, gated.slug) });
    expect(doc.headers.get("x-robots-tag")).toBe("noindex, nofollow");
    expect(await doc.text()).toContain('<meta name="robots" content="noindex, nofollow">');
    expect(await (await appCall(gated.slug, "/robots.txt")).text()).toBe("User-agent: *\nDisallow: /\n");
  });
});

describe("document routes", () => {
  it("/index.html is the same document; HEAD answers headers only", async () => {
    const { deployed } = await page("<p>same</p>");
    const index = await appCall(deployed.slug, "/index.html");
    expect(index.status).toBe(200);
    expect(await index.text()).toContain("<p>same</p>");
    const head = await appCall(deployed.slug, "/", { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("content-security-policy")).toContain("default-src 'self'");
    expect(await head.text()).toBe("");
  });

  it("other verbs on the document are 405 with Allow", async () => {
    const { deployed } = await page("<p>x</p>");
    for (const method of ["POST", "PUT", "DELETE", "PATCH"]) {
      const res = await appCall(deployed.slug, "/", { method, body: "x" });
      expect(res.status, method).toBe(405);
      expect(res.headers.get("allow")).toBe("GET, HEAD");
      expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    }
  });

  it("a redeploy serves the new document at once", async () => {
    const who = await owner();
    const app = await deploy(who, { html: "<p>one</p>" });
    expect(await (await appCall(app.slug, "/")).text()).toContain("<p>one</p>");
    const { call: apiCall } = await import("../helpers");
    const redeployed = await apiCall(`/v1/apps/${app.app_id}/versions`, { key: who.agent.api_key, json: { html: "<p>two</p>" } });
    expect(redeployed.status).toBe(200);
    const text = await (await appCall(app.slug, "/")).text();
    expect(text).toContain("<p>two</p>");
    expect(text).not.toContain("<p>one</p>");
  });

  it("unknown /_svc/ paths are envelopes", async () => {
    const { deployed } = await page("<p>x</p>");
    await expectError(await appCall(deployed.slug, "/_svc/nope"), 404, "not_found");
    await expectError(await appCall(deployed.slug, "/_svc/"), 404, "not_found");
    // The feed socket exists, but only as a WebSocket upgrade.
    await expectError(await appCall(deployed.slug, "/_svc/ws"), 400, "invalid_request");
  });
});
