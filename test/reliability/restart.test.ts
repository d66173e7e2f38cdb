// Kill-and-restart: a relay of its own (not the shared test relay), with its state in a
// temporary folder, takes a bounded burst of row creates from a few concurrent writers.
// Twice during the burst the relay is killed while requests are in flight (first its own
// stop(), a SIGTERM to its process group; then a SIGKILL, a crash), started again on the
// same port with the same state, and the burst goes on; creates that got no answer are
// retried with the same key at the end. Then:
//   - every create that was acknowledged (2xx) is a live row, at version 1, with its data;
//   - no row exists that was never asked for, and none was created twice;
//   - the change feed has no gap: seqs run 1..N, each one more than the last, N equals the
//     number of rows, and every row has exactly one create entry.
// A second relay is killed between its writes' commits and their outbox flush; after the
// restart every write's webhook still reaches a receiver on 127.0.0.1, once per row.
// Only loopback addresses are used; the relay is stopped and its state removed even when
// an assertion fails.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, describe, expect, it } from "vitest";
import { waitFor } from "../support/wait.ts";
import { call, claimedKey, ownRelay } from "./relay-control.ts";

const TOTAL = 300;
const WRITERS = 4;
/** Two kills: a stop (SIGTERM to the relay's process group) and a crash (SIGKILL). */
const KILLS: Array<{ afterAcks: number; signal: "SIGTERM" | "SIGKILL" }> = [
  { afterAcks: 100, signal: "SIGTERM" },
  { afterAcks: 200, signal: "SIGKILL" },
];
const keyOf = (i: number) => `row-${String(i).padStart(4, "0")}`;

const MANIFEST = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  $defs: { Item: { type: "object", properties: { i: { type: "integer" } }, required: ["i"] } },
  "x-service-manifest": {
    app: { name: "Restart" },
    collections: { items: { schema: { $ref: "#/$defs/Item" }, read: ["owner"], write: ["owner"], delete: ["owner"] } },
  },
};

type Outcome = { kind: "acked"; status: number; deduped: boolean } | { kind: "failed"; reason: string };

describe("reliability: kill and restart the relay mid-burst", () => {
  const own = ownRelay("relay-restart-");

  it("keeps every acknowledged create and a gap-free feed across a restart", async () => {
    const first = await own.start();
    const base = first.url;
    expect(new URL(base).hostname).toBe("localhost");
    const firstPid = first.child.pid;

    const key = await claimedKey(base);
    const created = await call(base, "POST", "/v1/apps", { key, body: { html: "<!doctype html><h1>restart</h1>", manifest: MANIFEST } });
    expect(created.status, created.text).toBe(201);
    const appId = created.json.app_id as string;
    const rowsPath = `/v1/apps/${appId}/collections/items`;

    // ---- the burst, with a kill and a restart in the middle ----
    const outcomes = new Map<string, Outcome>();
    let next = 0;
    let acked = 0;
    let inFlight = 0;
    const inFlightAtKill: number[] = [];
    const pids: Array<number | undefined> = [firstPid];
    let paused: Promise<void> | null = null;
    let resume: () => void = () => {};
    let restartFailure: unknown = null;

    const create = async (i: number): Promise<Outcome> => {
      try {
        const res = await call(base, "POST", rowsPath, { key, body: { key: keyOf(i), data: { i } } });
        if (res.status >= 200 && res.status < 300) return { kind: "acked", status: res.status, deduped: res.json.deduped === true };
        return { kind: "failed", reason: `HTTP ${res.status} ${res.text.slice(0, 200)}` };
      } catch (err) {
        return { kind: "failed", reason: String((err as Error)?.message ?? err) };
      }
    };

    let kills = 0;
    let restarting: Promise<void> | null = null;
    const restart = async (signal: "SIGTERM" | "SIGKILL") => {
      try {
        inFlightAtKill.push(inFlight);
        await own.stop(signal);
        pids.push((await own.start()).child.pid);
      } catch (err) {
        restartFailure = err;
      } finally {
        kills++;
        restarting = null;
        paused = null;
        resume();
      }
    };
    const restarts: Promise<void>[] = [];
    const writer = async () => {
      for (;;) {
        if (paused) await paused;
        if (restartFailure) return;
        const i = next++;
        if (i >= TOTAL) return;
        inFlight++;
        const outcome = await create(i);
        inFlight--;
        outcomes.set(keyOf(i), outcome);
        if (outcome.kind === "acked") acked++;
        // A kill: the first writer to reach the threshold stops the relay while the
        // others still have requests on the wire; nobody starts a new one until it is back.
        const kill = KILLS[kills];
        if (kill && acked >= kill.afterAcks && !restarting) {
          paused = new Promise<void>((resolve) => { resume = resolve; });
          restarting = restart(kill.signal);
          restarts.push(restarting);
        }
      }
    };
    await Promise.all(Array.from({ length: WRITERS }, writer));
    await Promise.all(restarts);
    if (restartFailure) throw restartFailure;
    expect(kills, "both kills happened during the burst").toBe(KILLS.length);
    expect(new Set(pids).size, "each restart is a new relay process").toBe(KILLS.length + 1);
    expect(outcomes.size).toBe(TOTAL);

    const ackedBeforeRetry = [...outcomes.entries()].filter(([, o]) => o.kind === "acked").map(([k]) => k);
    const lost = [...outcomes.entries()].filter(([, o]) => o.kind === "failed");
    // Mid-burst: some creates were acknowledged before the kill, more after the restart.
    expect(ackedBeforeRetry.length).toBeGreaterThanOrEqual(KILLS[KILLS.length - 1].afterAcks);
    expect(inFlightAtKill).toHaveLength(KILLS.length);

    // Creates that got no answer are retried with the same key: the relay either creates
    // the row now (201) or answers the row it had already stored (deduped), never twice.
    for (const [k] of lost) {
      const i = Number(k.slice(4));
      const again = await create(i);
      expect(again.kind, `retry of ${k}: ${again.kind === "failed" ? again.reason : ""}`).toBe("acked");
      outcomes.set(k, again);
    }

    // ---- every acknowledged create is a live row ----
    const rows: Array<{ key: string; data: { i: number }; version: number; deleted_at: string | null }> = [];
    let since: string | null = null;
    for (let page = 0; page < 20; page++) {
      const q: string = since ? `?limit=1000&since=${encodeURIComponent(since)}` : "?limit=1000";
      const res = await call(base, "GET", `${rowsPath}${q}`, { key });
      expect(res.status, res.text).toBe(200);
      rows.push(...(res.json.rows as typeof rows));
      if (res.json.has_more !== true || !res.json.next_cursor) break;
      since = res.json.next_cursor as string;
    }
    const byKey = new Map(rows.map((r) => [r.key, r]));
    expect(byKey.size, "no row listed twice").toBe(rows.length);
    for (const k of ackedBeforeRetry) {
      const row = byKey.get(k);
      expect(row, `acknowledged row ${k} is missing after the restart`).toBeDefined();
      expect(row).toMatchObject({ data: { i: Number(k.slice(4)) }, version: 1, deleted_at: null });
    }
    // After the retries every key was acknowledged once, and nothing else exists.
    expect([...byKey.keys()].sort()).toEqual(Array.from({ length: TOTAL }, (_, i) => keyOf(i)));
    for (const row of rows) expect(row.version).toBe(1);

    // ---- the feed has no gap ----
    const entries: Array<{ seq: number; op: string; collection_name: string; row_key: string; row_version: number }> = [];
    let cursor = 0;
    for (let page = 0; page < 20; page++) {
      const res = await call(base, "GET", `/v1/apps/${appId}/feed?since=${cursor}&limit=1000&wait=0`, { key });
      expect(res.status, res.text).toBe(200);
      entries.push(...(res.json.entries as typeof entries));
      cursor = res.json.cursor as number;
      if (res.json.truncated !== true) break;
    }
    expect(entries.map((e) => e.seq)).toEqual(Array.from({ length: entries.length }, (_, i) => i + 1));
    expect(entries.length).toBe(TOTAL);
    expect(cursor).toBe(TOTAL);
    for (const e of entries) expect(e).toMatchObject({ op: "create", collection_name: "items", row_version: 1 });
    const created2 = new Map<string, number>();
    for (const e of entries) created2.set(e.row_key, (created2.get(e.row_key) ?? 0) + 1);
    for (const k of ackedBeforeRetry) expect(created2.get(k), `feed entries for ${k}`).toBe(1);
    expect([...created2.values()].every((n) => n === 1)).toBe(true);

    // The restarted relay still serves the app's detail with the live row count.
    const detail = await call(base, "GET", `/v1/apps/${appId}`, { key });
    expect(detail.status).toBe(200);
    expect(detail.json.row_count).toBe(TOTAL);
  }, 300_000);
});

describe("reliability: a crash between a write's commit and its outbox flush", () => {
  const own = ownRelay("relay-effects-restart-");
  const received: Array<{ delivery: string; rowKey: string }> = [];
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { row: { key: string } };
      received.push({ delivery: String(req.headers["x-service-delivery"]), rowKey: body.row.key });
      res.writeHead(200).end("ok");
    });
  });

  afterAll(async () => {
    receiver.closeAllConnections();
    await new Promise((resolve) => receiver.close(resolve));
  });

  it("still delivers each write's webhook, once per row, after the relay is killed and started again", async () => {
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
    const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    const base = (await own.start()).url;
    const key = await claimedKey(base);
    const manifest = { ...MANIFEST, "x-service-manifest": { ...MANIFEST["x-service-manifest"], webhooks: [{ on: "create", collection: "items", url: hookUrl }] } };
    const created = await call(base, "POST", "/v1/apps", { key, body: { html: "<h1>hooks</h1>", manifest } });
    expect(created.status, created.text).toBe(201);
    const rowsPath = `/v1/apps/${created.json.app_id as string}/collections/items`;
    const keys = Array.from({ length: 5 }, (_, i) => `crash-${i}`);
    for (const [i, rowKey] of keys.entries()) {
      const res = await call(base, "POST", rowsPath, { key, body: { key: rowKey, data: { i } } });
      expect(res.status, res.text).toBe(201);
    }
    // Killed at once: the outbox is flushed a second after a commit, so these are still in it.
    await own.stop("SIGKILL");
    await own.start();
    await waitFor(() => new Set(received.map((r) => r.rowKey)).size === keys.length, {
      timeout: 60_000, interval: 200, message: "every row's webhook after the restart",
    });
    const deliveriesPerRow = new Map<string, Set<string>>();
    for (const { rowKey, delivery } of received) deliveriesPerRow.set(rowKey, (deliveriesPerRow.get(rowKey) ?? new Set()).add(delivery));
    expect([...deliveriesPerRow.keys()].sort()).toEqual(keys);
    for (const rowKey of keys) expect(deliveriesPerRow.get(rowKey)!.size, `distinct deliveries of ${rowKey}`).toBe(1);
  }, 180_000);
});
