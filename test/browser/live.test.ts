// The page script's data members in real Chromium against a real local relay: two
// browsers on a public app see each other's rows live (`collections.create` in one, the
// `collections.on` handler and `snapshot` in the other), calls made before the bundle
// arrives are buffered, updates and deletes by an agent arrive too, a reloaded page picks
// up where it was, a dropped socket reconnects from its cursor without losing or
// repeating anything, and the owner's private app shows its rows after /authorize.
import { type Page, type WebSocketRoute } from "playwright-core";
import { describe, expect, it } from "vitest";
import { api, ownerWithAgent, relayUrl, signInLink, useBrowser } from "./support";

const { newPage } = useBrowser();

const budget = { perIpPerDay: 0, perAppPerDay: 0 };

function manifest(collections: Record<string, unknown>) {
  return { $schema: "https://json-schema.org/draft/2020-12/schema", "x-service-manifest": { app: { name: "Live board", icon: "📋" }, collections } };
}

/**
 * The page: registers a handler and a feed listener and asks for a count BEFORE the
 * bundle arrives (the bootstrap buffers them), renders the snapshot on ready and on
 * every change.
 */
function page(collection: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>Live board</title></head>
<body><ul id="rows"></ul>
<script>
  const svc = window.service;
  window.events = [];
  window.entries = [];
  window.earlySnapshot = svc.collections.snapshot(${JSON.stringify(collection)});
  window.earlyCount = null;
  window.keptCreate = svc.collections.create;
  svc.collections.count(${JSON.stringify(collection)}).then((n) => { window.earlyCount = n; }, (e) => { window.earlyCount = e.code; });
  const render = () => {
    const list = document.getElementById("rows");
    list.replaceChildren(...svc.collections.snapshot(${JSON.stringify(collection)}).map((row) => {
      const li = document.createElement("li");
      li.textContent = row.data.text;
      li.dataset.key = row.key;
      return li;
    }));
  };
  svc.collections.on(${JSON.stringify(collection)}, (event) => { window.events.push(event); render(); });
  svc.feed.on((entry) => window.entries.push(entry));
  svc.ready.then(() => { render(); document.body.dataset.ready = svc.session.kind; });
</script></body></html>`;
}

interface Deployed { app_id: string; slug: string; url: string }

async function deploy(key: string, visibility: string, collection: string, collections: Record<string, unknown>): Promise<Deployed> {
  const res = await api<Deployed>("/v1/apps", { key, body: { html: page(collection), manifest: manifest(collections), visibility } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

async function agentWrite(key: string, path: string, method: string, body?: unknown): Promise<Record<string, unknown>> {
  const res = await api<{ row: Record<string, unknown> }>(path, { method, key, body });
  expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
  return res.body?.row ?? {};
}

type Win = Window & {
  service: {
    ready: Promise<void>;
    collections: {
      snapshot(n: string): Array<{ key: string; data: { text: string }; version: number }>;
      get(n: string, k: string): unknown;
      create(n: string, d: unknown): Promise<Record<string, unknown>>;
      update(n: string, k: string, d: unknown, o?: { ifMatch?: number }): Promise<Record<string, unknown>>;
      count(n: string): Promise<number>;
    };
    feed: { cursor: number };
    session: { kind: string };
    app: { slug: string; collections: Array<{ name: string; appendOnly: boolean }> };
  };
  events: Array<{ kind: string; collection: string; row: { key: string; data?: { text: string }; version?: number; deletedAt?: string } }>;
  entries: Array<{ seq: number; op: string; collection: string; key: string }>;
  earlySnapshot: unknown[];
  earlyCount: number | string | null;
  keptCreate(n: string, d: unknown): Promise<Record<string, unknown>>;
};

async function ready(p: Page, kind = "anonymous"): Promise<void> {
  await p.locator(`body[data-ready="${kind}"]`).waitFor({ state: "attached" });
}

const texts = (p: Page) => p.evaluate(() => (window as unknown as Win).service.collections.snapshot("notes").map((r) => r.data.text));

async function eventually(p: Page, predicate: string, arg?: unknown): Promise<void> {
  await p.waitForFunction(new Function("arg", `return (${predicate})(window, arg);`) as (arg: unknown) => boolean, arg, { timeout: 10_000 });
}

const NOTES = { notes: { read: ["anyone"], write: ["anyone"], update: ["owner"], delete: ["owner"], countRead: ["anyone"], anonWriteBudget: budget } };

describe("live data in Chromium", () => {
  it("two browsers on a public app see each other's rows live, and a reload keeps working", async () => {
    const { key } = await ownerWithAgent();
    const app = await deploy(key, "public", "notes", NOTES);
    const rows = `/v1/apps/${app.app_id}/collections/notes`;
    await agentWrite(key, rows, "POST", { data: { text: "seeded" } });

    const a = await newPage();
    const b = await newPage();
    await a.goto(app.url);
    await b.goto(app.url);
    await ready(a);
    await ready(b);
    for (const p of [a, b]) {
      expect(await texts(p)).toEqual(["seeded"]);
      expect(await p.locator("#rows li").allTextContents()).toEqual(["seeded"]);
      // Calls made before the bundle arrived: the sync read answered its default, the network call was replayed.
      expect(await p.evaluate(() => (window as unknown as Win).earlySnapshot)).toEqual([]);
      await eventually(p, "(w) => w.earlyCount !== null");
      expect(await p.evaluate(() => (window as unknown as Win).earlyCount)).toBe(1);
      expect(await p.evaluate(() => (window as unknown as Win).service.app)).toMatchObject({ slug: app.slug, collections: [{ name: "notes", appendOnly: false }] });
    }

    // A writes through the page script; the row comes back flat, in the page shape.
    const created = await a.evaluate(() => (window as unknown as Win).service.collections.create("notes", { text: "from A" }));
    expect(Object.keys(created).sort()).toEqual(["author", "createdAt", "data", "key", "updatedAt", "version"]);
    expect(created).toMatchObject({ data: { text: "from A" }, version: 1, author: { kind: "anon", id: "anon" } });
    expect(await texts(a)).toEqual(["seeded", "from A"]);

    // B's handler hears it and its snapshot holds it.
    await eventually(b, "(w, key) => w.events.some((e) => e.kind === 'upsert' && e.row.key === key)", created.key);
    const heard = await b.evaluate(() => (window as unknown as Win).events);
    expect(heard).toEqual([{ kind: "upsert", collection: "notes", row: created }]);
    expect(await texts(b)).toEqual(["seeded", "from A"]);
    await b.locator("#rows li", { hasText: "from A" }).waitFor();
    expect(await b.evaluate(() => (window as unknown as Win).service.collections.get("notes", "nope"))).toBeUndefined();

    // An agent's update and delete arrive as well, once each.
    await agentWrite(key, `${rows}/${created.key}`, "PATCH", { data: { text: "edited" } });
    await eventually(b, "(w, key) => w.events.some((e) => e.kind === 'upsert' && e.row.key === key && e.row.version === 2)", created.key);
    expect(await texts(b)).toEqual(["seeded", "edited"]);
    await agentWrite(key, `${rows}/${created.key}`, "DELETE");
    await eventually(b, "(w, key) => w.events.some((e) => e.kind === 'delete' && e.row.key === key)", created.key);
    expect(await texts(b)).toEqual(["seeded"]);
    await eventually(a, "(w) => w.events.length === 3");
    const onA = await a.evaluate(() => (window as unknown as Win).events);
    expect(onA.map((e) => [e.kind, e.row.key, e.row.version])).toEqual([["upsert", created.key, 1], ["upsert", created.key, 2], ["delete", created.key, undefined]]);
    expect(typeof onA[2].row.deletedAt).toBe("string");
    const entries = await b.evaluate(() => (window as unknown as Win).entries.map((e) => [e.op, e.collection, e.key]));
    expect(entries).toEqual([["create", "notes", created.key], ["update", "notes", created.key], ["delete", "notes", created.key]]);
    expect(await b.evaluate(() => (window as unknown as Win).service.feed.cursor)).toBe(4);

    // An update the page may not make rejects with the relay's code.
    const refused = await a.evaluate(() => (window as unknown as Win).service.collections.update("notes", "whatever", { text: "x" }).then(() => null, (e: { code: string; status: number }) => [e.code, e.status]));
    expect(refused).toEqual(["row_not_found", 404]);

    // A reload starts over and still follows along.
    await b.reload();
    await ready(b);
    expect(await texts(b)).toEqual(["seeded"]);
    await a.evaluate(() => (window as unknown as Win).service.collections.create("notes", { text: "after reload" }));
    await eventually(b, "(w) => w.service.collections.snapshot('notes').some((r) => r.data.text === 'after reload')");
    await b.locator("#rows li", { hasText: "after reload" }).waitFor();

    // A method the page took from the bootstrap before the bundle arrived still works afterwards.
    const kept = await a.evaluate(() => (window as unknown as Win).keptCreate("notes", { text: "kept reference" }));
    expect(kept).toMatchObject({ data: { text: "kept reference" }, version: 1 });
    await b.locator("#rows li", { hasText: "kept reference" }).waitFor();
  });

  it("a dropped socket reconnects from its cursor: nothing missed, nothing twice", async () => {
    const { key } = await ownerWithAgent();
    const app = await deploy(key, "public", "notes", NOTES);
    const rows = `/v1/apps/${app.app_id}/collections/notes`;
    const p = await newPage();
    const routes: WebSocketRoute[] = [];
    await p.routeWebSocket(/\/_svc\/ws$/, (ws) => {
      routes.push(ws);
      ws.connectToServer();
    });
    await p.goto(app.url);
    await ready(p);
    await agentWrite(key, rows, "POST", { data: { text: "one" } });
    await eventually(p, "(w) => w.events.length === 1");

    // Drop the page's socket; write while it is away.
    expect(routes.length).toBe(1);
    await routes[0].close({ code: 1006 });
    await agentWrite(key, rows, "POST", { data: { text: "two" } });
    await agentWrite(key, rows, "POST", { data: { text: "three" } });
    await eventually(p, "(w) => w.events.length === 3");
    expect(routes.length).toBe(2);
    expect(await texts(p)).toEqual(["one", "two", "three"]);
    const seqs = await p.evaluate(() => (window as unknown as Win).entries.map((e) => e.seq));
    expect(seqs).toEqual([1, 2, 3]);
    await agentWrite(key, rows, "POST", { data: { text: "four" } });
    await eventually(p, "(w) => w.events.length === 4");
    expect(await texts(p)).toEqual(["one", "two", "three", "four"]);
  });

  it("the owner's private app shows its rows after the /authorize round trip", async () => {
    const { email, key } = await ownerWithAgent();
    const app = await deploy(key, "private", "notes", {
      notes: { read: ["owner"], write: ["owner"], update: ["owner"], delete: ["owner"], countRead: ["owner"] },
    });
    const rows = `/v1/apps/${app.app_id}/collections/notes`;
    await agentWrite(key, rows, "POST", { data: { text: "owner only" } });

    const stranger = await newPage();
    await stranger.goto(app.url);
    await stranger.locator("#svc-sign-in").waitFor();
    expect(await stranger.evaluate(() => fetch("/_svc/c/notes").then((r) => r.status))).toBe(401);

    const p = await newPage();
    await p.goto(app.url);
    await p.locator("#svc-sign-in").click();
    await p.waitForURL((url) => url.origin === relayUrl && url.pathname === "/signin");
    await p.getByLabel("Email address").fill(email);
    await p.getByRole("button", { name: "Email me a sign-in link" }).click();
    await p.locator("main h1", { hasText: "Check your mail" }).waitFor();
    await p.goto(await signInLink(email));
    await ready(p, "owner");
    await p.locator("#rows li", { hasText: "owner only" }).waitFor();
    expect(await texts(p)).toEqual(["owner only"]);

    // The owner's page writes, and a row the agent adds arrives live.
    await p.evaluate(() => (window as unknown as Win).service.collections.create("notes", { text: "from the page" }));
    await agentWrite(key, rows, "POST", { data: { text: "from the agent" } });
    await p.locator("#rows li", { hasText: "from the agent" }).waitFor();
    expect(await texts(p)).toEqual(["owner only", "from the page", "from the agent"]);
    const listed = await api<{ rows: Array<{ data: { text: string } }> }>(rows, { key });
    expect(listed.body.rows.map((r) => r.data.text)).toEqual(["owner only", "from the page", "from the agent"]);
  });
});
