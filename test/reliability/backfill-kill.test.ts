// Killed mid-backfill (issue 16, Faults). A backfill is the owner loading historic provider
// bodies through an inbound hook's rule in chunks (`POST /v1/apps/:id/ingest-hooks/:name/
// backfill`, src/effects/ingest/backfill.ts; the CLI sends one call per chunk), dedupe on.
// A relay of its own takes the first chunk (acknowledged), then is SIGKILLed while the
// second chunk's call is being written: the kill waits for a condition, not for time — a
// feed long-poll from the acknowledged cursor answers as soon as the chunk's first row
// commits, and the call is then still running (hundreds of bodies to go; should it answer
// first all the same, the third chunk is the one killed). Restarted on the same state, the
// owner re-sends the interrupted chunk as it was (the natural retry), then the rest, and
// part of the first chunk again. Then:
//   - every acknowledged row is there, and every body has exactly one row at version 1;
//   - the re-send answers each body accepted or dropped_duplicate and writes no row twice,
//     and a body the dead relay left in flight is written by the re-send at once;
//   - the change feed has no gap: seqs 1..N, N the number of rows, one create per row.
import { describe, expect, it } from "vitest";
import { waitFor } from "../support/wait.ts";
import { allRows, call, claimedKey, feedEntries, ownRelay } from "./relay-control.ts";

/** Bodies per call: enough that a call is still running well after its first row commits. */
const CHUNK = 200;
/** One acknowledged chunk, up to two tries at a kill, and at least one sent after the restart. */
const CHUNKS = 4;
/** A call of CHUNK bodies on a loaded machine; the re-sends are bounded by it too. */
const CALL_TIMEOUT_MS = 60_000;

const MANIFEST = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  $defs: { Issue: { type: "object", properties: { title: { type: "string", maxLength: 200 } } } },
  "x-service-manifest": {
    app: { name: "Backfill kill" },
    collections: { issues: { schema: { $ref: "#/$defs/Issue" }, read: ["owner"], write: ["owner"], delete: ["owner"] } },
    ingest: [{ name: "history", collection: "issues", map: { title: "title" }, dedupeKey: "n" }],
  },
};

/** The default per-app row quota (1,000) is below what this test writes. */
const QUOTAS = { MAX_ROWS_PER_APP: "100000", MAX_STORAGE_BYTES_PER_APP: "10000000000" };

type Body = { n: number; title: string };
type Outcomes = { total: number; accepted: number; dropped_duplicate: number; failed: number; outcomes: string[] };

describe("reliability: the relay killed mid-backfill", () => {
  const own = ownRelay("relay-backfill-kill-", QUOTAS);

  it("keeps every acknowledged row, writes each body once on the re-send and leaves the feed gapless", async () => {
    const started = Date.now();
    const mark = (what: string) => console.log(`backfill kill: ${what} at ${((Date.now() - started) / 1000).toFixed(1)} s`);
    const base = (await own.start()).url;
    const key = await claimedKey(base);
    const created = await call(base, "POST", "/v1/apps", { key, body: { html: "<h1>backfill</h1>", manifest: MANIFEST } });
    expect(created.status, created.text).toBe(201);
    const appId = created.json.app_id as string;
    const bodies: Body[] = Array.from({ length: CHUNK * CHUNKS }, (_, n) => ({ n, title: `body ${n}` }));
    const chunks = Array.from({ length: CHUNKS }, (_, index) => bodies.slice(index * CHUNK, (index + 1) * CHUNK));
    // A fresh connection per call: none is kept alive across the kill. `wrangler dev`
    // rebuilds the relay whenever a source file changes, and its proxy answers a POST that
    // a rebuild cut short with a plain-text 503 asking for it again: one more restart
    // mid-backfill, answered by the natural retry this test is about, so the chunk is sent
    // again (bounded). `cut` says how often; a call that was cut cannot have exact tallies.
    const send = async (chunk: Body[]) => {
      for (let cut = 0; ; cut++) {
        const res = await fetch(`${base}/v1/apps/${appId}/ingest-hooks/history/backfill`, {
          method: "POST", body: JSON.stringify({ bodies: chunk }), signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json", connection: "close" },
        });
        const text = await res.text();
        if (res.status === 503 && text.includes("restarted mid-request") && cut < 3) {
          mark("a source edit restarted the dev relay mid-call; sending the chunk again");
          continue;
        }
        let json = {} as Outcomes;
        try {
          json = JSON.parse(text) as Outcomes;
        } catch {
          /* not JSON */
        }
        return { status: res.status, json, text: text.slice(0, 500), cut };
      }
    };
    /** A whole answer: 200 with no failure, and the tallies expected when no restart cut the call. */
    const expectAnswer = (res: Awaited<ReturnType<typeof send>>, tallies: Partial<Outcomes>) => {
      expect(res.status, res.text).toBe(200);
      expect(res.json.failed, res.text).toBe(0);
      expect(res.json.accepted + res.json.dropped_duplicate).toBe(res.json.total);
      if (!res.cut) expect(res.json).toMatchObject(tallies);
    };
    mark("relay up, app made");

    // ---- chunk 1: acknowledged ----
    expectAnswer(await send(chunks[0]), { accepted: CHUNK, dropped_duplicate: 0 });
    mark("chunk 1 acknowledged");

    // ---- a later chunk, killed once its first row has committed ----
    // The long-poll is sent before the chunk, so it is already waiting in the store when the
    // chunk's first row commits, not queued behind the backfill's own lookups. Should a call
    // still answer first (it has hundreds of bodies to go by then), the next chunk is tried.
    let acknowledged = 1;
    let partWritten: Set<string> | null = null;
    for (; acknowledged < CHUNKS - 1 && !partWritten; acknowledged++) {
      const poll = waitFor(async () => {
        const progress = await call(base, "GET", `/v1/apps/${appId}/feed?since=${acknowledged * CHUNK}&limit=1&wait=10`, { key });
        expect(progress.status, progress.text).toBe(200);
        return (progress.json.entries as unknown[]).length > 0;
      }, { timeout: CALL_TIMEOUT_MS, interval: 0, message: `a row of chunk ${acknowledged + 1} committed` });
      let answered = false;
      const pending = send(chunks[acknowledged]).then((res) => { answered = true; return res; }, (err: unknown) => err);
      await poll;
      if (answered) {
        expectAnswer(await pending as Awaited<ReturnType<typeof send>>, { accepted: CHUNK });
        mark(`chunk ${acknowledged + 1} answered before the kill; trying the next`);
        continue;
      }
      await own.stop("SIGKILL");
      mark(`killed during chunk ${acknowledged + 1}`);
      expect(await pending, "the interrupted call got no answer").toBeInstanceOf(Error);
      await own.start();
      mark("restarted");
      const survived = await allRows<{ data: { title: string } }>(base, key, appId, "issues");
      partWritten = new Set(survived.map((row) => row.data.title));
      expect(partWritten.size, "no body written twice before the kill").toBe(survived.length);
      break;
    }
    expect(partWritten, "a chunk's call was still running when its first row committed").not.toBeNull();
    const interrupted = chunks[acknowledged];

    // ---- what survived: every acknowledged row and part of the interrupted chunk ----
    for (const body of bodies.slice(0, acknowledged * CHUNK)) expect(partWritten!.has(body.title), `acknowledged ${body.title}`).toBe(true);
    const committedBefore = interrupted.filter((body) => partWritten!.has(body.title)).length;
    expect(committedBefore).toBeGreaterThan(0);
    expect(committedBefore).toBeLessThan(CHUNK);
    mark(`${committedBefore} of the interrupted chunk's ${CHUNK} bodies had committed`);

    // ---- the owner re-sends the interrupted chunk as it was, then the rest ----
    // Each body is accepted (a body the dead relay had claimed is taken over at once) or
    // dropped_duplicate (its row is there); none fails.
    const resent = await send(interrupted);
    expectAnswer(resent, {});
    if (!resent.cut) expect(resent.json.accepted).toBeGreaterThanOrEqual(CHUNK - committedBefore);
    for (const chunk of chunks.slice(acknowledged + 1)) {
      expectAnswer(await send(chunk), { accepted: CHUNK, dropped_duplicate: 0 });
    }
    expectAnswer(await send(chunks[0].slice(0, 50)), { accepted: 0, dropped_duplicate: 50 });
    mark("re-sent the interrupted chunk, sent the rest, re-sent part of chunk 1");

    // ---- one row per body ----
    const rows = await allRows<{ key: string; data: { title: string }; version: number }>(base, key, appId, "issues");
    expect(rows).toHaveLength(bodies.length);
    expect(rows.map((row) => row.data.title).sort()).toEqual(bodies.map((body) => body.title).sort());
    for (const row of rows) expect(row.version).toBe(1);

    // ---- the feed has no gap ----
    const entries = await feedEntries(base, key, appId);
    expect(entries.map((entry) => entry.seq)).toEqual(Array.from({ length: bodies.length }, (_, index) => index + 1));
    expect(entries.every((entry) => entry.op === "create")).toBe(true);
    expect(new Set(entries.map((entry) => entry.row_key))).toEqual(new Set(rows.map((row) => row.key)));
    mark("checked");
  }, 300_000);
});
