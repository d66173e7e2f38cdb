// The bot challenge in real Chromium (WIRE §4.4): an anonymous visitor's create and upsert
// on an antiAbuse collection carry a fresh Turnstile token in x-service-challenge without
// the page doing anything. Turnstile's script is a loopback stand-in (the relay's
// TURNSTILE_SCRIPT_URL, see test/support/turnstile-stand-in.ts) that hands out the dummy
// token a development relay accepts. The script loads only on the first write that needs
// it, through the app's CSP; the widget is reset and executed again for every write. When
// the script cannot be loaded the write goes without a token and rejects with
// `turnstile_required`.
import type { Page, Request } from "playwright-core";
import { describe, expect, inject, it } from "vitest";
import { api, ownerWithAgent, useBrowser } from "./support";

const { newPage } = useBrowser();

const scriptUrl = inject("turnstileScriptUrl");
const standIn = new URL(scriptUrl);
if (standIn.hostname !== "127.0.0.1") throw new Error(`refusing a non-local Turnstile stand-in: ${scriptUrl}`);
const DUMMY_TOKEN = "XXXX.DUMMY.TOKEN.XXXX";

const open = { read: ["anyone"], write: ["anyone"], update: ["owner"], delete: ["owner"], anonWriteBudget: { perIpPerDay: 0, perAppPerDay: 0 } };
const COLLECTIONS = { notes: open, guestbook: { ...open, antiAbuse: "turnstile" } };

const PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>Guestbook</title></head>
<body><p>Sign the guestbook</p>
<script>window.service.ready.then(() => { document.body.dataset.ready = window.service.session.kind; });</script>
</body></html>`;

interface Deployed { app_id: string; slug: string; url: string }
interface Row { key: string; data: { text: string }; version: number; author: { kind: string } }
type Outcome = { row: Row } | { code: string; status: number };

type Win = Window & {
  service: {
    collections: {
      create(n: string, d: unknown): Promise<Row>;
      upsert(n: string, k: string, d: unknown): Promise<Row>;
      snapshot(n: string): Row[];
    };
  };
  turnstile?: { log: Array<{ call: string; sitekey?: string; execution?: string; appearance?: string }> };
};

async function deploy(): Promise<{ key: string; app: Deployed }> {
  const { key } = await ownerWithAgent("turnstile");
  const manifest = { $schema: "https://json-schema.org/draft/2020-12/schema", "x-service-manifest": { app: { name: "Guestbook" }, collections: COLLECTIONS } };
  const res = await api<Deployed>("/v1/apps", { key, body: { html: PAGE, manifest, visibility: "public" } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return { key, app: res.body };
}

/** Opens the app as an anonymous visitor, recording the script fetches and the page's writes. */
async function visit(app: Deployed, reachStandIn: boolean) {
  const page = await newPage(reachStandIn ? [standIn.origin] : []);
  const scripts: string[] = [];
  const writes: Array<{ url: string; challenge: string | undefined }> = [];
  page.on("request", (req: Request) => {
    const url = new URL(req.url());
    if (url.origin === standIn.origin) scripts.push(req.url());
    if (req.method() === "POST" && url.pathname.startsWith("/_svc/c/")) writes.push({ url: url.pathname, challenge: req.headers()["x-service-challenge"] });
  });
  await page.goto(app.url);
  await page.locator('body[data-ready="anonymous"]').waitFor({ state: "attached" });
  return { page, scripts, writes };
}

function create(page: Page, collection: string, text: string): Promise<Outcome> {
  return page.evaluate(([c, t]) => (window as unknown as Win).service.collections.create(c, { text: t })
    .then((row) => ({ row }), (e: { code: string; status: number }) => ({ code: e.code, status: e.status })), [collection, text] as const);
}

async function rowsOf(key: string, app: Deployed, collection: string): Promise<string[]> {
  const res = await api<{ rows: Row[] }>(`/v1/apps/${app.app_id}/collections/${collection}`, { key });
  expect(res.status).toBe(200);
  return res.body.rows.map((r) => r.data.text);
}

describe("bot challenge in Chromium", () => {
  it("an anonymous create and upsert on an antiAbuse collection carry a fresh token; Turnstile loads only when first needed", async () => {
    const { key, app } = await deploy();
    const { page, scripts, writes } = await visit(app, true);

    // Ready, and a write elsewhere: nothing of Turnstile yet.
    expect(await create(page, "notes", "plain note")).toMatchObject({ row: { data: { text: "plain note" } } });
    expect(scripts).toEqual([]);
    expect(await page.evaluate(() => (window as unknown as Win).turnstile)).toBeUndefined();
    expect(writes).toEqual([{ url: "/_svc/c/notes", challenge: undefined }]);

    // The first guarded write loads the script (explicit rendering) and sends the token.
    const signed = await create(page, "guestbook", "hello from a visitor");
    expect(signed).toMatchObject({ row: { data: { text: "hello from a visitor" }, version: 1, author: { kind: "anon" } } });
    expect(scripts).toHaveLength(1);
    expect(new URL(scripts[0]).searchParams.get("render")).toBe("explicit");
    expect(writes[1]).toEqual({ url: "/_svc/c/guestbook", challenge: DUMMY_TOKEN });

    // An upsert gets a token of its own: the spent widget is reset and executed again.
    const upserted = await page.evaluate(() => (window as unknown as Win).service.collections.upsert("guestbook", "pinned", { text: "pinned entry" }));
    expect(upserted).toMatchObject({ key: "pinned", data: { text: "pinned entry" } });
    expect(writes[2]).toEqual({ url: "/_svc/c/guestbook", challenge: DUMMY_TOKEN });
    expect(scripts).toHaveLength(1);
    const log = await page.evaluate(() => (window as unknown as Win).turnstile!.log);
    expect(log).toEqual([
      { call: "render", sitekey: "1x00000000000000000000BB", execution: "execute", appearance: "interaction-only" },
      { call: "execute" },
      { call: "reset" },
      { call: "execute" },
    ]);
    // One widget, in the script's own container, out of the page's flow.
    expect(await page.locator("[data-service-challenge]").count()).toBe(1);
    expect(await page.locator("[data-service-challenge]").evaluate((el) => getComputedStyle(el).position)).toBe("fixed");

    expect(await page.evaluate(() => (window as unknown as Win).service.collections.snapshot("guestbook").map((r) => r.data.text)))
      .toEqual(["hello from a visitor", "pinned entry"]);
    expect((await rowsOf(key, app, "guestbook")).sort()).toEqual(["hello from a visitor", "pinned entry"]);
  });

  it("when the script cannot be loaded, the write goes without a token and rejects with turnstile_required", async () => {
    const { key, app } = await deploy();
    const { page, scripts, writes } = await visit(app, false);

    expect(await create(page, "guestbook", "no challenge")).toEqual({ code: "turnstile_required", status: 403 });
    expect(scripts).toHaveLength(1);
    expect(writes).toEqual([{ url: "/_svc/c/guestbook", challenge: undefined }]);
    // A second write does not wait for the unreachable script again.
    const started = Date.now();
    expect(await create(page, "guestbook", "still none")).toEqual({ code: "turnstile_required", status: 403 });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(scripts).toHaveLength(1);
    // Other collections are unaffected, and nothing was written to the guarded one.
    expect(await create(page, "notes", "plain note")).toMatchObject({ row: { data: { text: "plain note" } } });
    expect(await rowsOf(key, app, "guestbook")).toEqual([]);
  });
});
