// App origins in real Chromium against a real local relay: a public app renders its PNG
// asset and gets `window.service` ready, while JavaScript shipped as a .txt asset does
// not run; a private app shows its gate to an anonymous browser and opens for the owner
// after the /authorize round trip; a link app opens through its share URL and stops
// opening once the link is rotated. Every request stays on loopback.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { type Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { api, ownerWithAgent, relay, signInHere, useBrowser } from "./support";
import { rgbPng } from "./png";

const { newPage } = useBrowser();

/** A 2×2 opaque red PNG. */
const PNG = rgbPng(2, 2, () => [255, 0, 0]).toString("base64");
const EVIL = Buffer.from("window.evilRan = true; document.title = 'pwned';").toString("base64");

function manifest(name: string, ext: Record<string, unknown> = {}) {
  return { $schema: "https://json-schema.org/draft/2020-12/schema", "x-service-manifest": { app: { name, icon: "🎲" }, collections: {}, ...ext } };
}

function page(marker: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>${marker}</title></head>
<body><h1 id="content">${marker}</h1><img id="pic" src="pic.png" alt="a red square"><script src="evil.txt"></script>
<script>
  window.seenBeforeReady = typeof window.service === "object" && window.service.session.kind;
  window.service.ready.then(() => { document.body.dataset.ready = window.service.session.kind; });
</script></body></html>`;
}

/** A human (signed in outside the browser) with a claimed agent, ready to deploy. */
interface Deployed { app_id: string; slug: string; url: string; share_url?: string }

async function deploy(key: string, visibility: string, marker: string, ext: Record<string, unknown> = {}): Promise<Deployed> {
  const res = await api<Deployed>("/v1/apps", {
    key, body: { html: page(marker), manifest: manifest(`A ${visibility} app`, ext), visibility, assets: [{ path: "pic.png", content_base64: PNG }, { path: "evil.txt", content_base64: EVIL }] },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

/** A fresh browser that can reach only the local relay, its app origins and `alsoAllowed` origins. */
async function imageRendered(p: Page): Promise<boolean> {
  const img = p.locator("#pic");
  await img.waitFor();
  return img.evaluate((el: HTMLImageElement) => (el.complete ? Promise.resolve() : new Promise((r) => { el.onload = r; el.onerror = r; })).then(() => el.naturalWidth > 0));
}

async function sessionKind(p: Page): Promise<string> {
  await p.waitForFunction(() => typeof (window as unknown as { service?: unknown }).service === "object");
  return p.evaluate(() => {
    const service = (window as unknown as { service: { ready: Promise<void>; session: { kind: string } } }).service;
    return service.ready.then(() => service.session.kind);
  });
}

describe("app origins in Chromium", () => {
  it("a public app renders its PNG, gets service ready, and a .txt script never runs", async () => {
    const { key } = await ownerWithAgent();
    const app = await deploy(key, "public", "Public page body");
    expect(app.url).toBe(`http://${app.slug}.localhost:${relay.port}/`);

    const p = await newPage();
    const blocked: string[] = [];
    p.on("console", (msg) => { if (msg.type() === "error") blocked.push(msg.text()); });
    const missing: string[] = [];
    p.on("response", (res) => { if (res.status() >= 400) missing.push(`${res.status()} ${res.url()}`); });
    await p.goto(app.url);
    expect(await p.locator("#content").textContent()).toBe("Public page body");
    // No icon declared: the relay's default icon is inline and allowed, and no favicon 404 is logged.
    expect(await p.locator('link[rel="icon"]').getAttribute("href")).toMatch(/^data:image\/svg\+xml,/);
    expect(missing.filter((line) => /favicon/.test(line))).toEqual([]);
    expect(blocked.filter((m) => /favicon|data:image\/svg/.test(m))).toEqual([]);
    expect(await sessionKind(p)).toBe("anonymous");
    await p.locator('body[data-ready="anonymous"]').waitFor();
    expect(await p.evaluate(() => (window as unknown as { seenBeforeReady: unknown }).seenBeforeReady)).toBe("anonymous");
    expect(await p.evaluate(() => (window as unknown as { service: { app: { slug: string; name: string } } }).service.app)).toMatchObject({ slug: app.slug, name: "A public app" });
    expect(await imageRendered(p)).toBe(true);
    expect(await p.evaluate(() => (window as unknown as { evilRan?: boolean }).evilRan)).toBeUndefined();
    expect(await p.title()).toBe("Public page body");
    expect(blocked.some((m) => /evil\.txt/.test(m) && /MIME type|executable|nosniff/i.test(m))).toBe(true);

    // Executable types never get in at all.
    const refused = await api<{ error: { code: string } }>("/v1/apps", {
      key, body: { html: "<p>x</p>", manifest: manifest("x"), visibility: "public", assets: [{ path: "x.js", content_base64: EVIL }] },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe("invalid_request");
  });

  it("a private app shows its gate to an anonymous browser and opens for the owner after /authorize", async () => {
    const { email, key } = await ownerWithAgent();
    const app = await deploy(key, "private", "Private page body");

    const stranger = await newPage();
    await stranger.goto(app.url);
    await stranger.locator("#svc-sign-in").waitFor();
    expect(await stranger.locator("#svc-gate-message").textContent()).toContain("private");
    expect(await stranger.content()).not.toContain("Private page body");
    expect(await stranger.evaluate(() => fetch("/pic.png").then((r) => r.status))).toBe(401);

    const p = await newPage();
    await p.goto(app.url);
    await p.locator("#svc-sign-in").click();
    await signInHere(p, email);
    // verify → /authorize → back on the app origin with a one-time grant the gate trades in.
    await p.locator("#content", { hasText: "Private page body" }).waitFor();
    expect(new URL(p.url()).origin).toBe(new URL(app.url).origin);
    expect(new URL(p.url()).hash).toBe("");
    expect(await sessionKind(p)).toBe("owner");
    expect(await imageRendered(p)).toBe(true);
    expect(await p.evaluate(() => (window as unknown as { evilRan?: boolean }).evilRan)).toBeUndefined();

    // The app session lives in this origin's localStorage: a reload opens again.
    await p.reload();
    await p.locator("#content", { hasText: "Private page body" }).waitFor();
    expect(await sessionKind(p)).toBe("owner");

    // Sign-out clears it and the gate comes back.
    await p.evaluate(() => (window as unknown as { service: { session: { logout(): void } } }).service.session.logout());
    await p.locator("#svc-sign-in").waitFor();
    expect(await p.content()).not.toContain("Private page body");
  });

  it("a link app opens through its share URL and stops opening after rotation", async () => {
    const { key } = await ownerWithAgent();
    const app = await deploy(key, "link", "Link page body");
    expect(app.share_url).toMatch(/#k=[0-9a-f]{32}$/);

    const p = await newPage();
    await p.goto(app.share_url!);
    await p.locator("#content", { hasText: "Link page body" }).waitFor();
    expect(new URL(p.url()).hash).toBe("");
    expect(await sessionKind(p)).toBe("anonymous");
    expect(await imageRendered(p)).toBe(true);
    // The remembered pass opens the plain URL on a later visit.
    await p.goto(app.url);
    await p.locator("#content", { hasText: "Link page body" }).waitFor();

    const rotated = await api<{ share_url: string }>(`/v1/apps/${app.app_id}/share-link/rotate`, { method: "POST", key, body: {} });
    expect(rotated.status).toBe(200);

    const q = await newPage();
    await q.goto(app.share_url!);
    await q.locator("#svc-gate-message", { hasText: "not valid" }).waitFor();
    expect(await q.content()).not.toContain("Link page body");
    // The browser that remembered the old pass is refused too, and forgets it.
    await p.goto(app.url);
    await p.locator("#svc-gate-message", { hasText: "not valid" }).waitFor();
    expect(await p.evaluate(() => localStorage.getItem("service.share"))).toBeNull();

    await q.goto(rotated.body.share_url);
    await q.locator("#content", { hasText: "Link page body" }).waitFor();
  });

  it("session.login() on a public app comes back signed in as the owner", async () => {
    const { email, key } = await ownerWithAgent();
    const app = await deploy(key, "public", "Owner surfaces");
    const p = await newPage();
    await p.goto(`${app.url}?view=admin`);
    expect(await sessionKind(p)).toBe("anonymous");
    await p.evaluate(() => (window as unknown as { service: { session: { login(): void } } }).service.session.login());
    await signInHere(p, email);
    await p.locator('body[data-ready="owner"]').waitFor();
    expect(p.url()).toBe(`${app.url}?view=admin`);
    expect(await p.evaluate(() => (window as unknown as { service: { session: { humanId: string | null; displayName: string | null } } }).service.session.displayName))
      .toBe(email.split("@")[0]);
  });

  it("a framed app reports its height to the parent", async () => {
    // The parent page comes from a loopback server of the test's own, named in embedAncestors.
    let frameUrl = "";
    const server = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      res.end(`<!doctype html><body><script>window.heights = []; addEventListener("message", (e) => {
        const frame = new URL(document.querySelector("iframe").src).origin;
        if (e.origin === frame && e.data && e.data.type === "service:resize") window.heights.push(e.data.height);
      });</script><iframe src="${frameUrl}" style="width:300px;height:100px"></iframe></body>`);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const hostOrigin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const { key } = await ownerWithAgent();
      const app = await deploy(key, "public", "Framed", { embedAncestors: [hostOrigin] });
      frameUrl = app.url;
      const p = await newPage([hostOrigin]);
      await p.goto(`${hostOrigin}/`);
      await p.waitForFunction(() => (window as unknown as { heights: number[] }).heights.length > 0);
      const heights = await p.evaluate(() => (window as unknown as { heights: number[] }).heights);
      expect(heights[heights.length - 1]).toBeGreaterThan(0);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
