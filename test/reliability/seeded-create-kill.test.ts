// Killed mid-create (issue 16, Faults): a relay of its own takes a burst of CREATES creates,
// each with ROWS starter rows (input_data) and a slug of its own, and is SIGKILLed once the
// first few have answered, with the rest in flight. A create caught after its app's insert
// and before its rows were in left, before src/apps/seeding.ts, an app listed with no rows.
// After the restart, before any sweep: every listed app has all its starter rows, and every
// create that answered 201 is listed. The slug of a create that never answered is either a
// listed whole app or held by a hidden one (a dry run with it answers slug_taken; counted
// and printed: how many the kill caught depends on timing). After the cron's sweeps (as
// `POST /__dev/cron` past the seeding window) every such slug is free again: the retried
// create goes through with all its rows.
import { describe, expect, it } from "vitest";
import { waitFor } from "../support/wait.ts";
import { call, claimedKey, ownRelay, type Obj } from "./relay-control.ts";

const CREATES = 24;
const ROWS = 1500;
/** Answers to wait for before the kill: the rest are in flight. */
const ANSWERED_BEFORE_KILL = 3;
const RUN = Math.random().toString(36).slice(2, 8);
/** Past the seeding window (five minutes) and the sweep's own period. */
const SWEEP_AHEAD_MS = 30 * 60_000;
/** The default per-app row quota (1,000) is below what each create seeds. */
const QUOTAS = { MAX_ROWS_PER_APP: "100000" };

const MANIFEST = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  $defs: { Item: { type: "object", properties: { i: { type: "integer" }, pad: { type: "string" } }, required: ["i"] } },
  "x-service-manifest": {
    app: { name: "Seeded kill" },
    collections: { items: { schema: { $ref: "#/$defs/Item" }, read: ["owner"], write: ["owner"], delete: ["owner"] } },
  },
};

const slugOf = (n: number) => `sk-${RUN}-${n}`;
const bodyOf = (n: number, extra: Obj = {}) => ({
  html: `<!doctype html><h1>seeded ${n}</h1>`, manifest: MANIFEST, slug: slugOf(n),
  input_data: { items: Array.from({ length: ROWS }, (_, i) => ({ data: { i, pad: "x".repeat(40) } })) }, ...extra,
});

const began = Date.now();
const step = (what: string) => process.stderr.write(`seeded create kill +${((Date.now() - began) / 1000).toFixed(1)}s: ${what}\n`);

describe("reliability: the relay killed mid-create with starter rows", () => {
  const own = ownRelay("relay-seeded-kill-", QUOTAS);

  it("shows no app without its starter rows after a crash, and frees the slugs of creates it cut off", async () => {
    const base = (await own.start()).url;
    const key = await claimedKey(base);
    step("relay up");

    const answers = new Map<number, number>();
    const creates = Array.from({ length: CREATES }, (_, n) => fetch(`${base}/v1/apps`, {
      method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(bodyOf(n)),
    }).then((res) => { answers.set(n, res.status); }, () => undefined));
    await waitFor(() => answers.size >= ANSWERED_BEFORE_KILL, { timeout: 120_000, interval: 5, message: "the first creates answering" });
    const acknowledged = [...answers].filter(([, status]) => status === 201).map(([n]) => n);
    step(`${answers.size} answered (${acknowledged.length} created): killing`);
    await own.stop("SIGKILL");
    await Promise.all(creates);
    await own.start();
    step("restarted");

    // Before any sweep: no listed app without all its rows; every acknowledged create listed.
    const listedRes = await call(base, "GET", "/v1/apps?limit=200", { key });
    expect(listedRes.status, listedRes.text).toBe(200);
    const listed = new Map((listedRes.json.items as Array<{ id: string; slug: string }>).map((app) => [app.slug, app.id]));
    for (const [slug, id] of listed) {
      const detail = await call(base, "GET", `/v1/apps/${id}`, { key });
      expect(detail.json.row_count, `rows of listed app ${slug}`).toBe(ROWS);
    }
    for (const n of acknowledged) expect(listed.has(slugOf(n)), `acknowledged create ${n} listed`).toBe(true);
    const cutOff = Array.from({ length: CREATES }, (_, n) => n).filter((n) => !listed.has(slugOf(n)));
    const hidden: number[] = [];
    for (const n of cutOff) {
      expect((await call(base, "GET", `/v1/apps/${slugOf(n)}`, { key })).status).toBe(404);
      const dry = await call(base, "POST", "/v1/apps", { key, body: bodyOf(n, { dry_run: true }) });
      expect([200, 409], dry.text).toContain(dry.status);
      if (dry.status === 409) {
        expect(dry.json.error).toMatchObject({ code: "slug_taken" });
        hidden.push(n);
      }
    }
    console.log(`seeded create kill: ${listed.size} listed whole, ${cutOff.length} cut off, of which ${hidden.length} left a hidden app holding its slug`);

    const swept = await call(base, "POST", "/__dev/cron", { body: { now: new Date(Date.now() + SWEEP_AHEAD_MS).toISOString() } });
    expect(swept.status, swept.text).toBe(200);
    for (const n of cutOff) {
      const retried = await call(base, "POST", "/v1/apps", { key, body: bodyOf(n) });
      expect(retried.status, `retry of ${n}: ${retried.text.slice(0, 200)}`).toBe(201);
      expect((await call(base, "GET", `/v1/apps/${retried.json.app_id as string}`, { key })).json.row_count).toBe(ROWS);
    }
    step("retries whole");
  }, 300_000);
});
