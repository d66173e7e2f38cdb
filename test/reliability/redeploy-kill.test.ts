// Killed during a redeploy (issue 16, Faults): a relay of its own serves a public app at
// version 1 (document, manifest and assets each saying "v1") holding ROWS rows; version 2
// changes all three, adds an inbound hook and carries several large assets, so its deploy
// spends a while storing bytes. The relay is SIGKILLed twice while v2 is being deployed:
//   1. once the first of v2's large assets shows up in the relay's local R2 files (bytes
//      being stored, nothing recorded yet);
//   2. once the app's detail reports version 2 but the deploy has not answered yet (the
//      version recorded with its hooks in one batch, the store being told),
//      or, if the deploy answers first, right after it.
// After each restart the app serves exactly one version: the page, the asset, the manifest
// in its detail and its inbound hooks all agree with the current version (v1 or v2, never
// a mix); every row is intact; and a redeploy of v2 then succeeds and is served whole.
import { request } from "node:http";
import { describe, expect, it } from "vitest";
import { waitFor } from "../support/wait.ts";
import { allRows, call, claimedKey, ownRelay, type Obj } from "./relay-control.ts";
import { filesHolding } from "./local-r2.ts";

const ROWS = 40;
const BIG_ASSETS = 6;
const RUN = Math.random().toString(36).slice(2, 10);

const manifestOf = (version: 1 | 2) => ({
  $schema: "https://json-schema.org/draft/2020-12/schema",
  $defs: { Item: { type: "object", properties: { i: { type: "integer" }, title: { type: "string" } }, required: ["i"] } },
  "x-service-manifest": {
    app: { name: `Redeploy v${version}` },
    collections: { items: { schema: { $ref: "#/$defs/Item" }, read: ["owner"], write: ["owner"], delete: ["owner"] } },
    ...(version === 2 ? { ingest: [{ name: "v2hook", collection: "items", map: { title: "title" } }] } : {}),
  },
});

/** A big asset that no compressor or dedupe shortens much: its marker at the front, then pseudo-random bytes. */
function bigAsset(version: number, n: number): string {
  const bytes = Buffer.alloc(3_000_000);
  let state = (version * 7919 + n * 104_729 + RUN.length) >>> 0;
  for (let i = 0; i < bytes.length; i++) {
    state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0;
    bytes[i] = state >>> 24;
  }
  Buffer.from(`REDEPLOY-${RUN}-v${version}-${n}`).copy(bytes, 0);
  return bytes.toString("base64");
}

const deployBody = (version: 1 | 2) => ({
  html: `<!doctype html><title>v${version}</title><h1>document v${version} ${RUN}</h1>`,
  manifest: manifestOf(version),
  assets: [
    { path: "data.txt", content_base64: Buffer.from(`asset v${version} ${RUN}`).toString("base64"), mime: "text/plain" },
    ...(version === 2 ? Array.from({ length: BIG_ASSETS }, (_, n) => ({ path: `big-${n}.bin`, content_base64: bigAsset(version, n), mime: "application/octet-stream" })) : []),
  ],
});

/** GET on the app's own origin (its slug under localhost), through the relay's loopback port. */
function onAppOrigin(port: number, slug: string, pathName: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path: pathName, headers: { host: `${slug}.localhost:${port}` }, timeout: 15_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }));
    });
    req.on("timeout", () => req.destroy(new Error("timed out")));
    req.on("error", reject);
    req.end();
  });
}

describe("reliability: the relay killed during a redeploy", () => {
  const own = ownRelay("relay-redeploy-kill-");
  const { persistTo } = own;

  it("serves exactly v1 or v2 after each crash, keeps every row, and redeploys afterwards", async () => {
    const { url: base, port } = await own.start();
    const key = await claimedKey(base);
    const created = await call(base, "POST", "/v1/apps", { key, body: { ...deployBody(1), visibility: "public" } });
    expect(created.status, created.text).toBe(201);
    const appId = created.json.app_id as string;
    const slug = created.json.slug as string;
    for (let i = 0; i < ROWS; i++) {
      const res = await call(base, "POST", `/v1/apps/${appId}/collections/items`, { key, body: { key: `row-${i}`, data: { i, title: `t${i}` } } });
      expect(res.status, res.text).toBe(201);
    }
    const currentVersion = async () => (await call(base, "GET", `/v1/apps/${appId}`, { key })).json.current_version as number;

    /** Page, asset, manifest and hooks all of one version; answers which. */
    const servedVersion = async (): Promise<1 | 2> => {
      const detail = await call(base, "GET", `/v1/apps/${appId}`, { key });
      expect(detail.status, detail.text).toBe(200);
      const name = ((detail.json.manifest as Obj)["x-service-manifest"] as { app: { name: string } }).app.name;
      const fromManifest = Number(/v(\d)$/.exec(name)![1]);
      const page = await onAppOrigin(port, slug, "/");
      expect(page.status, page.text.slice(0, 300)).toBe(200);
      const fromPage = Number(new RegExp(`document v(\\d) ${RUN}`).exec(page.text)?.[1]);
      const asset = await onAppOrigin(port, slug, "/data.txt");
      expect(asset.status, asset.text.slice(0, 300)).toBe(200);
      const fromAsset = Number(new RegExp(`asset v(\\d) ${RUN}`).exec(asset.text)?.[1]);
      const hooks = await call(base, "GET", `/v1/apps/${appId}/ingest-hooks`, { key });
      expect(hooks.status, hooks.text).toBe(200);
      const liveHooks = (hooks.json.hooks as Array<{ name: string; disabledAt: string | null }>).filter((h) => h.disabledAt === null).map((h) => h.name);
      const fromHooks = liveHooks.includes("v2hook") ? 2 : 1;
      const version = detail.json.current_version as number;
      expect({ manifest: fromManifest, page: fromPage, asset: fromAsset, hooks: fromHooks }, `served pieces of version ${version}`)
        .toEqual({ manifest: fromManifest, page: fromManifest, asset: fromManifest, hooks: fromManifest });
      if (fromManifest === 2) {
        const big = await onAppOrigin(port, slug, "/big-0.bin");
        expect(big.status).toBe(200);
      } else {
        expect((await onAppOrigin(port, slug, "/big-0.bin")).status).toBe(404);
      }
      return fromManifest as 1 | 2;
    };
    const rowsIntact = async () => {
      const rows = (await allRows<{ key: string; data: { i: number; title: string }; version: number }>(base, key, appId, "items")).sort((a, b) => a.data.i - b.data.i);
      expect(rows.map((r) => [r.key, r.data.i, r.data.title, r.version])).toEqual(Array.from({ length: ROWS }, (_, i) => [`row-${i}`, i, `t${i}`, 1]));
    };
    expect(await servedVersion()).toBe(1);

    const redeploy = () => call(base, "POST", `/v1/apps/${appId}/versions`, { key, body: deployBody(2) }).then((res) => res, (err: unknown) => err);
    const restart = async () => {
      await own.stop("SIGKILL");
      await own.start();
    };
    const outcomes: string[] = [];

    // ---- 1. killed while v2's bytes are being stored ----
    const versionBefore = await currentVersion();
    const first = redeploy();
    let answered = false;
    void first.then(() => { answered = true; });
    await waitFor(() => answered || filesHolding(persistTo, `REDEPLOY-${RUN}-v2-`).length > 0, { timeout: 60_000, interval: 20, message: "v2's first big asset stored" });
    await restart();
    const firstAnswer = await first;
    outcomes.push(`kill 1: deploy ${answered && !(firstAnswer instanceof Error) ? `answered ${(firstAnswer as { status: number }).status}` : "unanswered"} before the kill`);
    const afterFirst = await servedVersion();
    outcomes.push(`kill 1: serving v${afterFirst} (version ${await currentVersion()}, was ${versionBefore})`);
    await rowsIntact();

    // ---- 2. killed once version 2 is recorded, before (or just after) the deploy answers ----
    const baseline = await currentVersion();
    const second = redeploy();
    answered = false;
    void second.then(() => { answered = true; });
    await waitFor(async () => answered || (await currentVersion()) > baseline, { timeout: 60_000, interval: 10, message: "the new version recorded" });
    const answeredBeforeKill = answered;
    await restart();
    await second;
    const afterSecond = await servedVersion();
    outcomes.push(`kill 2: deploy ${answeredBeforeKill ? "had answered" : "unanswered"} at the kill; serving v${afterSecond} (version ${await currentVersion()})`);
    await rowsIntact();

    // ---- a redeploy afterwards succeeds and is served whole ----
    const again = await call(base, "POST", `/v1/apps/${appId}/versions`, { key, body: deployBody(2) });
    expect(again.status, again.text).toBe(200);
    expect(await servedVersion()).toBe(2);
    await rowsIntact();
    console.log(`redeploy kill: ${outcomes.join("; ")}`);
  }, 900_000);
});
