// Killed mid-backfill (issue 16, Faults). A backfill here is the owner loading historic
// provider bodies through an inbound hook's rule (`POST /v1/apps/:id/ingest-hooks/:name/
// backfill`, src/effects/ingest/backfill.ts): each body is delivered as a live one would
// be, with dedupe on. A relay of its own takes BODIES bodies in calls of BATCH; once part of
// the second call's rows are being written (its store's files growing) it is SIGKILLed, started again on the same state, and the
// owner re-sends every call with the same bodies until each body has its row (a delivery
// the dead relay left `processing` is taken over once its claim is stale, a minute). Then:
//   - every body has exactly one row (no body lost, none written twice);
//   - the change feed has no gap: seqs 1..N, N the number of rows, one create per row and
//     nothing else.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { waitFor } from "../support/wait.ts";
import { allRows, call, claimedKey, feedEntries, stopRelay, type Relay } from "./relay-control.ts";
import { storeBytes } from "./local-r2.ts";
// @ts-expect-error plain ESM helper shared with `npm start`
import { freePort, startRelay } from "../../scripts/relay-process.mjs";

const BODIES = 3000;
/** Large calls (the relay is started allowing them), so the kill lands inside one. */
const BATCH = 1500;
/** A stale claim is taken over after a minute (CLAIM_STALE_MS); re-sends go on for a while past that. */
const SETTLE_MS = 400_000;

const MANIFEST = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  $defs: { Issue: { type: "object", properties: { title: { type: "string", maxLength: 200 } } } },
  "x-service-manifest": {
    app: { name: "Backfill kill" },
    collections: { issues: { schema: { $ref: "#/$defs/Issue" }, read: ["owner"], write: ["owner"], delete: ["owner"] } },
    ingest: [{ name: "history", collection: "issues", map: { title: "title" }, dedupeKey: "n" }],
  },
};

type Outcomes = { total: number; accepted: number; dropped_duplicate: number; failed: number; outcomes: string[] };

/** The default per-app row quota (1,000) and bodies per call (500) are below what this test sends. */
const QUOTAS = { MAX_ROWS_PER_APP: "1000000", MAX_STORAGE_BYTES_PER_APP: "10000000000", INGEST_BACKFILL_MAX_BODIES: String(BATCH) };

describe("reliability: the relay killed mid-backfill", () => {
  const persistTo = mkdtempSync(path.join(tmpdir(), "relay-backfill-kill-"));
  let relay: Relay | null = null;

  afterAll(async () => {
    await stopRelay(relay).catch(() => undefined);
    relay = null;
    rmSync(persistTo, { recursive: true, force: true });
  });

  it("writes every body once and keeps the feed gap-free across a crash", async () => {
    const port = (await freePort()) as number;
    relay = (await startRelay({ port, persistTo, vars: QUOTAS })) as Relay;
    const base = relay.url;
    const key = await claimedKey(base);
    const created = await call(base, "POST", "/v1/apps", { key, body: { html: "<h1>backfill</h1>", manifest: MANIFEST } });
    expect(created.status, created.text).toBe(201);
    const appId = created.json.app_id as string;
    const backfillPath = `/v1/apps/${appId}/ingest-hooks/history/backfill`;
    const bodies = Array.from({ length: BODIES }, (_, n) => ({ n, title: `body ${n}` }));
    const batches = Array.from({ length: BODIES / BATCH }, (_, b) => bodies.slice(b * BATCH, (b + 1) * BATCH));
    const rowCount = async () => (await call(base, "GET", `/v1/apps/${appId}`, { key })).json.row_count as number;
    const send = async (batch: typeof bodies) => {
      const res = await fetch(`${base}${backfillPath}`, {
        method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify({ bodies: batch }),
        signal: AbortSignal.timeout(120_000),
      });
      return { status: res.status, json: (await res.json().catch(() => ({}))) as Outcomes };
    };

    // ---- the backfill, killed during its second call ----
    const firstCall = await send(batches[0]);
    expect(firstCall.status).toBe(200);
    expect(firstCall.json.accepted).toBe(BATCH);
    const secondCall = send(batches[1]).catch((err: unknown) => err);
    let answered = false;
    void secondCall.then(() => { answered = true; });
    // The relay answers little else while a large backfill call runs, so the kill watches its
    // store's files grow (the second call's rows being written) rather than asking it.
    const before = storeBytes(persistTo);
    await waitFor(() => answered || storeBytes(persistTo) > before + 50_000, { timeout: 120_000, interval: 20, message: "part of the second call written" });
    expect(answered, "the second call was still in flight at the kill").toBe(false);
    await stopRelay(relay, "SIGKILL");
    relay = (await startRelay({ port, persistTo, vars: QUOTAS })) as Relay;
    await secondCall;

    // ---- the owner re-sends every call until each body has its row ----
    const tallies: Array<{ accepted: number; dropped_duplicate: number; failed: number }> = [];
    await waitFor(async () => {
      for (const batch of batches) {
        const res = await send(batch);
        expect(res.status).toBe(200);
        tallies.push({ accepted: res.json.accepted, dropped_duplicate: res.json.dropped_duplicate, failed: res.json.failed });
      }
      return (await rowCount()) >= BODIES;
    }, { timeout: SETTLE_MS, interval: 5_000, message: "every body written after the restart" });
    console.log(`backfill kill: re-sends ${JSON.stringify(tallies)}`);
    expect(tallies.every((t) => t.failed === 0)).toBe(true);

    // ---- one row per body ----
    const rows = await allRows<{ key: string; data: { title: string }; version: number }>(base, key, appId, "issues");
    expect(rows).toHaveLength(BODIES);
    expect(rows.map((r) => r.data.title).sort()).toEqual(bodies.map((b) => b.title).sort());
    for (const row of rows) expect(row.version).toBe(1);

    // ---- the feed has no gap ----
    const entries = await feedEntries(base, key, appId);
    expect(entries.map((e) => e.seq)).toEqual(Array.from({ length: BODIES }, (_, i) => i + 1));
    expect(entries.every((e) => e.op === "create")).toBe(true);
    expect(new Set(entries.map((e) => e.row_key))).toEqual(new Set(rows.map((r) => r.key)));
  }, 900_000);
});
