// Real app screenshots through the Browser Rendering binding, which the test relay offers
// when the machine has Chromium (scripts/local-browser.mjs): a public app's page with a
// big coloured block comes back as a PNG of that page (the block's colour where the block
// is, the page's white beside it), not the brand card; the second request is served from
// the cache; the og size renders at its own size; the renderer's visits are not counted
// in the app's analytics; a private app renders through a preview
// token that is revoked afterwards; a link app gets the brand card. The brand card without
// a binding is test/worker/operate/screenshot.test.ts.
import { get } from "node:http";
import { describe, expect, it } from "vitest";
import { api, ownerWithAgent, relayUrl } from "./support";
import { decodePng } from "./png";
import { waitFor } from "../support/wait";

const BLOCK: [number, number, number] = [24, 200, 120];

function page(): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>Block</title>
<style>html, body { margin: 0; background: #fff; } #block { position: absolute; left: 0; top: 0; width: 50%; height: 60%; background: rgb(${BLOCK.join(",")}); }</style></head>
<body><div id="block"></div></body></html>`;
}

function manifest(name: string) {
  return { $schema: "https://json-schema.org/draft/2020-12/schema", "x-service-manifest": { app: { name }, collections: {} } };
}

async function deploy(key: string, visibility: "public" | "private" | "link"): Promise<{ appId: string; url: string }> {
  const res = await api<{ app_id: string; url: string }>("/v1/apps", { key, body: { html: page(), manifest: manifest(`Block ${visibility}`), visibility } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return { appId: res.body.app_id, url: res.body.url };
}

async function screenshot(key: string, appId: string, size = "card") {
  const res = await fetch(`${relayUrl}/v1/apps/${appId}/screenshot?size=${size}`, { headers: { authorization: `Bearer ${key}` } });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toBe("image/png");
  const bytes = Buffer.from(await res.arrayBuffer());
  return { kind: res.headers.get("x-screenshot-kind"), cache: res.headers.get("x-screenshot-cache"), etag: res.headers.get("etag"), bytes, image: decodePng(bytes) };
}

/** One plain page request to an app origin (sent to loopback with the app's Host); answers the status. */
function visit(appUrl: string): Promise<number> {
  const target = new URL(appUrl);
  return new Promise((resolve, reject) => {
    get({ host: "127.0.0.1", port: target.port, path: target.pathname, headers: { host: target.host } }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    }).on("error", reject);
  });
}

/** The block fills the left half and the top 60 %; the rest of the page is white. */
function expectBlockPage(image: ReturnType<typeof decodePng>, width: number, height: number) {
  expect([image.width, image.height]).toEqual([width, height]);
  expect(image.pixel(Math.round(width * 0.25), Math.round(height * 0.3))).toEqual(BLOCK);
  expect(image.pixel(Math.round(width * 0.75), Math.round(height * 0.3))).toEqual([255, 255, 255]);
  expect(image.pixel(Math.round(width * 0.25), Math.round(height * 0.8))).toEqual([255, 255, 255]);
}

describe("screenshots rendered by the browser binding", { timeout: 120_000 }, () => {
  it("pictures a public app's live page, then serves it from the cache", async () => {
    const { key } = await ownerWithAgent("shot");
    const { appId, url } = await deploy(key, "public");
    const started = Date.now();
    const first = await screenshot(key, appId);
    const renderMs = Date.now() - started;
    expect(first.kind).toBe("render");
    expect(first.cache).toBe("miss");
    expectBlockPage(first.image, 640, 360);

    const cachedStart = Date.now();
    const again = await screenshot(key, appId);
    const cachedMs = Date.now() - cachedStart;
    expect(again.cache).toBe("hit");
    expect(again.kind).toBe("render");
    expect(again.bytes.equals(first.bytes)).toBe(true);
    expect(again.etag).toBe(first.etag);
    console.log(`screenshot render: first ${renderMs} ms, cached ${cachedMs} ms`);

    const og = await screenshot(key, appId, "og");
    expect(og.kind).toBe("render");
    expectBlockPage(og.image, 1200, 630);

    // The renderer's visits are not counted: one plain visit afterwards makes the total 1.
    expect(await visit(url)).toBe(200);
    const views = async () => (await api<{ totals: { views: number } }>(`/v1/apps/${appId}/analytics`, { key })).body.totals.views;
    await waitFor(async () => (await views()) >= 1, { timeout: 10_000, message: "the plain visit counted" });
    expect(await views()).toBe(1);
  });

  it("pictures a private app through a preview token revoked afterwards", async () => {
    const { key } = await ownerWithAgent("shot-private");
    const { appId } = await deploy(key, "private");
    const shot = await screenshot(key, appId);
    expect(shot.kind).toBe("render");
    expectBlockPage(shot.image, 640, 360);
    const tokens = await api<{ items: Array<{ label: string | null; status: string }> }>(`/v1/apps/${appId}/preview-tokens`, { key });
    expect(tokens.status).toBe(200);
    expect(tokens.body.items.filter((token) => token.label === "screenshot").map((token) => token.status)).toEqual(["revoked"]);
  });

  it("answers the brand card for a link app", async () => {
    const { key } = await ownerWithAgent("shot-link");
    const { appId } = await deploy(key, "link");
    const shot = await screenshot(key, appId);
    expect(shot.kind).toBe("card");
    expect(shot.image.pixel(Math.round(640 * 0.25), Math.round(360 * 0.3))).not.toEqual(BLOCK);
  });
});
