// GET /v1/apps/:id/feed (WIRE §2.4, spec B "Change feed", CONTRACT §6): entries after
// `since` with the exact FeedEntry shape, every op (restore as create, purge as an audited
// delete with data null), limit/truncated/cursor paging, the long-poll returning as soon as
// a write lands, the wait bound, the collection filter (its cursor still moving past
// other collections), resync after the retention floor moves or for a cursor past the
// head, and the app states (dormant 409 "app is dormant", archived/suspended 410 gone,
// deleted 410 soft_deleted).
import { env, runDurableObjectAlarm } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { callWith, expectError, json } from "../../../test/worker/helpers";
import { FEED_KEYS, ISO, setup, type Ctx, type FeedPage, type Row } from "../../../test/worker/rows/fixtures";
import { waitFor } from "../../../test/support/wait";
import { appendFeed, feedFloor, pruneFeed, FEED_KEEP, FEED_TRIM_EVERY } from "../feed";

vi.setConfig({ testTimeout: 30_000 });


/** Waits until the store holds at least `count` long-polls open (its waiters), so a write after it is one they see happen. */
async function heldPolls(ctx: Ctx, count: number): Promise<void> {
  await waitFor(() => ctx.sql((_, instance) => (instance as unknown as { waiters: Set<unknown> }).waiters.size >= count), { message: `${count} long-poll(s) held` });
}

describe("feed entries", () => {
  it("since=0 reads from the start: { entries, cursor, truncated }, each entry exactly the FeedEntry shape", async () => {
    const ctx = await setup();
    expect(await ctx.feed("since=0")).toEqual({ entries: [], cursor: 0, truncated: false });
    const a = await ctx.create("tasks", { title: "a" });
    const a2 = await ctx.update("tasks", a.key, { title: "a2" }, {}, "owner");
    await ctx.remove("tasks", a.key);
    const restored = (await json<{ row: Row }>(await ctx.agentCall(ctx.path("tasks", `/${a.key}/restore`), { method: "POST" }), 200)).row;
    const base = { collection_name: "tasks", row_key: a.key };
    expect((await ctx.feed("since=0")).entries.map((e) => [e.seq, e.op, e.data])).toEqual([
      [1, "create", { title: "a" }], [2, "update", { title: "a2" }], [3, "delete", { title: "a2" }], [4, "create", { title: "a2" }],
    ]);
    await json(await ctx.agentCall(ctx.path("tasks", `/${a.key}/purge`), { method: "DELETE" }), 200);
    const page = await ctx.feed("since=0");
    expect(Object.keys(page).sort()).toEqual(["cursor", "entries", "truncated"]);
    expect(page.cursor).toBe(5);
    expect(page.truncated).toBe(false);
    // The purge scrubbed the data of the row's earlier entries too; they keep their place.
    expect(page.entries).toEqual([
      { seq: 1, op: "create", ...base, row_version: 1, data: null, author: ctx.agentAuthor, ts: a.created_at },
      { seq: 2, op: "update", ...base, row_version: 2, data: null, author: ctx.humanAuthor, ts: a2.updated_at },
      { seq: 3, op: "delete", ...base, row_version: 2, data: null, author: ctx.agentAuthor, ts: expect.stringMatching(ISO) },
      { seq: 4, op: "create", ...base, row_version: 3, data: null, author: ctx.agentAuthor, ts: restored.updated_at },
      { seq: 5, op: "delete", ...base, row_version: 3, data: null, author: ctx.agentAuthor, ts: expect.stringMatching(ISO), purged: true },
    ]);
    for (const e of page.entries.slice(0, 4)) expect(Object.keys(e).sort()).toEqual(FEED_KEYS);
    // The owner reads the same feed.
    expect(await ctx.feed("since=0", "owner")).toEqual(page);
    // Resuming from the cursor: nothing new.
    expect(await ctx.feed(`since=${page.cursor}`)).toEqual({ entries: [], cursor: 5, truncated: false });
    expect(await ctx.feed("since=3")).toEqual({ entries: page.entries.slice(3), cursor: 5, truncated: false });
  });

  it("entries of every collection interleave in write order", async () => {
    const ctx = await setup();
    await ctx.create("tasks", { title: "t" });
    await ctx.create("free", { f: 1 });
    await ctx.create("logs", { l: 1 });
    const page = await ctx.feed("since=0");
    expect(page.entries.map((e) => [e.seq, e.collection_name])).toEqual([[1, "tasks"], [2, "free"], [3, "logs"]]);
  });

  it("limit pages with truncated and cursor; FEED_PAGE_MAX caps the limit", async () => {
    const ctx = await setup();
    await json(await ctx.agentCall(ctx.path("free", "/batch"), { json: { rows: Array.from({ length: 10 }, (_, i) => ({ data: { i } })) } }), 200);
    const p1 = await ctx.feed("since=0&limit=3");
    expect([p1.entries.map((e) => e.seq), p1.cursor, p1.truncated]).toEqual([[1, 2, 3], 3, true]);
    const p2 = await ctx.feed(`since=${p1.cursor}&limit=3`);
    expect([p2.entries.map((e) => e.seq), p2.cursor, p2.truncated]).toEqual([[4, 5, 6], 6, true]);
    const p3 = await ctx.feed(`since=${p2.cursor}&limit=4`);
    expect([p3.entries.map((e) => e.seq), p3.cursor, p3.truncated]).toEqual([[7, 8, 9, 10], 10, false]);
    expect((await ctx.feed("since=0")).entries).toHaveLength(10);
    const capped = await json<FeedPage>(await callWith({ FEED_PAGE_MAX: "2" }, ctx.feedPath("since=0&limit=100"), { key: ctx.key }), 200);
    expect([capped.entries.map((e) => e.seq), capped.cursor, capped.truncated]).toEqual([[1, 2], 2, true]);
  });

  it("since defaults to 0, the start", async () => {
    const ctx = await setup();
    await ctx.create("free", { n: 1 });
    await ctx.create("tasks", { title: "t" });
    expect(await ctx.feed("")).toEqual(await ctx.feed("since=0"));
    expect(await ctx.feed("limit=1")).toMatchObject({ cursor: 1, truncated: true });
  });

  it("pages of large entries stop early and still carry every entry once", async () => {
    const ctx = await setup();
    const big = "x".repeat(250_000);
    for (let i = 0; i < 40; i++) await ctx.create("docs", { i, big });
    const first = await ctx.feed("since=0&limit=1000");
    expect(first.truncated).toBe(true);
    expect(first.entries.length).toBeGreaterThan(0);
    expect(first.entries.length).toBeLessThan(40);
    const all = await ctx.feedAll();
    expect(all.map((e) => e.seq)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
  }, 120_000);

  it("bad parameters → 400 invalid_request naming the parameter", async () => {
    const ctx = await setup();
    const cases: Array<[string, string]> = [
      ["since=-1", "since"], ["since=abc", "since"], ["since=1.5", "since"],
      ["since=0&limit=0", "limit"], ["since=0&limit=x", "limit"], ["since=0&limit=-3", "limit"],
      ["since=0&wait=31", "wait"], ["since=0&wait=30.5", "wait"], ["since=0&wait=-1", "wait"], ["since=0&wait=x", "wait"],
      ["since=1e400", "since"],
      ["collection=", "collection"], ["collection=free,", "collection"], ["collection=,free", "collection"], ["collection=free,,tasks", "collection"],
      [`collection=${"a".repeat(2001)}`, "collection"],
    ];
    for (const [query, field] of cases) {
      const e = await expectError(await ctx.agentCall(ctx.feedPath(query)), 400, "invalid_request");
      expect(e.details?.field, query).toBe(field);
    }
    expect((await ctx.feed("since=0&wait=0")).entries).toEqual([]);
  });
});

describe("collection filter", () => {
  it("keeps the named collections' entries; the cursor still moves past the others, so nothing is read twice", async () => {
    const ctx = await setup();
    const t1 = await ctx.create("tasks", { title: "1" });
    await ctx.create("free", { n: 1 });
    await ctx.create("logs", { l: 1 });
    const t2 = await ctx.create("tasks", { title: "2" });
    await ctx.create("free", { n: 2 });
    const tasks = await ctx.feed("since=0&collection=tasks");
    expect(tasks.entries.map((e) => [e.seq, e.row_key])).toEqual([[1, t1.key], [4, t2.key]]);
    // Caught up: the cursor is the head (5), past the free entry after the last task.
    expect([tasks.cursor, tasks.truncated]).toEqual([5, false]);
    expect(await ctx.feed(`since=${tasks.cursor}&collection=tasks`)).toEqual({ entries: [], cursor: 5, truncated: false });
    // Several collections, repeated names, and paging with limit.
    const two = await ctx.feed("since=0&collection=free,logs,free");
    expect(two.entries.map((e) => [e.seq, e.collection_name])).toEqual([[2, "free"], [3, "logs"], [5, "free"]]);
    const p1 = await ctx.feed("since=0&collection=free,logs&limit=2");
    expect([p1.entries.map((e) => e.seq), p1.cursor, p1.truncated]).toEqual([[2, 3], 3, true]);
    const p2 = await ctx.feed(`since=${p1.cursor}&collection=free,logs&limit=2`);
    expect([p2.entries.map((e) => e.seq), p2.cursor, p2.truncated]).toEqual([[5], 5, false]);
    // The unfiltered feed is unchanged.
    expect((await ctx.feed("since=0")).entries.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5]);
  });

  it("a long-poll filtered to one collection is not answered by another collection's write", async () => {
    const ctx = await setup();
    const started = Date.now();
    const polling = ctx.feed("since=0&collection=tasks&wait=20");
    await heldPolls(ctx, 1);
    await ctx.create("free", { n: 1 });
    // Woken by the write, the poll found nothing of its collection and waits again.
    await heldPolls(ctx, 1);
    const row = await ctx.create("tasks", { title: "now" });
    const page = await polling;
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(page).toEqual({ entries: [expect.objectContaining({ seq: 2, row_key: row.key })], cursor: 2, truncated: false });
    // With nothing of the collection within wait, it answers empty at the head.
    const idle = await ctx.feed("since=2&collection=tasks&wait=0.5");
    expect(idle).toEqual({ entries: [], cursor: 2, truncated: false });
    await ctx.create("free", { n: 2 });
    expect(await ctx.feed("since=2&collection=tasks&wait=0.5")).toEqual({ entries: [], cursor: 3, truncated: false });
  });

  it("an undeclared collection → 404 collection_not_found naming it; nothing changes", async () => {
    const ctx = await setup();
    await ctx.create("free", { n: 1 });
    for (const [query, name] of [["collection=nope", "nope"], ["collection=free,nope", "nope"], ["collection=Free", "Free"], ["collection=%20", " "]]) {
      const e = await ctx.unchanged(async () => expectError(await ctx.agentCall(ctx.feedPath(`since=0&${query}`)), 404, "collection_not_found"));
      expect(e.details).toEqual({ collection: name });
    }
  });

  it("entries the caller may not read stay out, filtered or not", async () => {
    const ctx = await setup();
    await ctx.create("sealed", { s: 1 });
    await ctx.create("free", { n: 1 });
    expect(await ctx.feed("since=0&collection=sealed")).toEqual({ entries: [], cursor: 2, truncated: false });
    expect((await ctx.feed("since=0")).entries.map((e) => e.collection_name)).toEqual(["free"]);
  });
});

describe("long-poll", () => {
  it("returns as soon as a write lands, well before wait", async () => {
    const ctx = await setup();
    await ctx.create("free", { before: true });
    const started = Date.now();
    const polling = ctx.feed("since=1&wait=20");
    await heldPolls(ctx, 1);
    const row = await ctx.create("free", { during: true }, {}, "owner");
    const page = await polling;
    const took = Date.now() - started;
    expect(took).toBeLessThan(5_000);
    expect(page.entries).toEqual([{
      seq: 2, op: "create", collection_name: "free", row_key: row.key, row_version: 1, data: { during: true }, author: ctx.humanAuthor, ts: row.created_at,
    }]);
    expect(page.cursor).toBe(2);
  });

  it("wakes every waiter; with entries already there it does not wait at all", async () => {
    const ctx = await setup();
    const polls = [ctx.feed("since=0&wait=20"), ctx.feed("since=0&wait=20", "owner"), ctx.feed("since=0&wait=15")];
    await heldPolls(ctx, 3);
    const started = Date.now();
    await ctx.create("free", { n: 1 });
    const pages = await Promise.all(polls);
    expect(Date.now() - started).toBeLessThan(5_000);
    for (const p of pages) expect(p.entries.map((e) => e.seq)).toEqual([1]);
    const t = Date.now();
    expect((await ctx.feed("since=0&wait=30")).entries).toHaveLength(1);
    expect(Date.now() - t).toBeLessThan(3_000);
  });

  it("a failed write does not wake the poll; it waits out `wait` and answers empty", async () => {
    const ctx = await setup();
    const started = Date.now();
    const polling = ctx.feed("since=0&wait=1.5");
    await heldPolls(ctx, 1);
    await expectError(await ctx.agentCall(ctx.path("tasks"), { json: { data: { nope: 1 } } }), 422, "row_schema_violation");
    const page = await polling;
    expect(page).toEqual({ entries: [], cursor: 0, truncated: false });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_400);
  });
});

describe("retention floor", () => {
  it("a cursor below the floor → 410 resync_required after a retention sweep; the head cursor still works", async () => {
    const ctx = await setup();
    for (let i = 0; i < 4; i++) await ctx.create("free", { i });
    await json(await ctx.agentCall(ctx.path("free", "/retention"), { method: "PATCH", json: { maxRows: 2 } }), 200);
    expect(await runDurableObjectAlarm(ctx.stub())).toBe(true);
    for (const since of [0, 1, 3]) await expectError(await ctx.agentCall(ctx.feedPath(`since=${since}`)), 410, "resync_required");
    expect(await ctx.feed("since=4")).toEqual({ entries: [], cursor: 4, truncated: false });
    const row = await ctx.create("free", { i: 4 });
    expect((await ctx.feed("since=4")).entries.map((e) => e.row_key)).toEqual([row.key]);
  });

  it("a cursor past the newest entry → 410 resync_required, as the socket answers resync; details say where to resume", async () => {
    const ctx = await setup();
    await expectError(await ctx.agentCall(ctx.feedPath("since=1")), 410, "resync_required");
    for (let i = 0; i < 3; i++) await ctx.create("free", { i });
    for (const query of ["since=4", "since=50&wait=5", "since=4&collection=free"]) {
      const started = Date.now();
      const e = await ctx.unchanged(async () => expectError(await ctx.agentCall(ctx.feedPath(query)), 410, "resync_required"));
      expect(e.details).toEqual({ since: Number(/since=(\d+)/.exec(query)![1]), floor: 0, head: 3 });
      expect(Date.now() - started).toBeLessThan(3_000);
    }
    expect(await ctx.feed("since=3")).toEqual({ entries: [], cursor: 3, truncated: false });
    // Below the floor, details carry the floor and the head too.
    expect(await ctx.sql((sql) => pruneFeed(sql, 1))).toBe(true);
    const below = await expectError(await ctx.agentCall(ctx.feedPath("since=1")), 410, "resync_required");
    expect(below.details).toEqual({ since: 1, floor: 2, head: 3 });
  });

  it("entries pruned beyond the kept window raise the floor the same way", async () => {
    const ctx = await setup();
    for (let i = 0; i < 6; i++) await ctx.create("free", { i });
    expect(await ctx.sql((sql) => pruneFeed(sql, 2))).toBe(true);
    await expectError(await ctx.agentCall(ctx.feedPath("since=3")), 410, "resync_required");
    const page = await ctx.feed("since=4");
    expect(page.entries.map((e) => e.seq)).toEqual([5, 6]);
  });

  it("is trimmed as it grows, not only by the sweep: it never holds more than FEED_KEEP + FEED_TRIM_EVERY entries", async () => {
    const ctx = await setup();
    const total = FEED_KEEP + 2 * FEED_TRIM_EVERY + 10;
    const grown = await ctx.sql((sql) => {
      const count = () => Number(sql.exec<{ n: number }>("SELECT count(*) AS n FROM _svc_feed").one().n);
      let most = 0;
      for (let i = 1; i <= total; i++) {
        appendFeed(sql, { op: "create", collection: "free", key: `k${i}`, version: 1, data: `{"i":${i}}`, author: { kind: "agent", id: ctx.agent.agent_id }, ts: new Date().toISOString() });
        // Just before a trim is where the feed is largest.
        if (i % FEED_TRIM_EVERY === FEED_TRIM_EVERY - 1) most = Math.max(most, count());
      }
      return { most, size: count(), floor: feedFloor(sql) };
    });
    expect(grown.most).toBeLessThanOrEqual(FEED_KEEP + FEED_TRIM_EVERY);
    // The last trim, at seq FEED_KEEP + 2 * FEED_TRIM_EVERY, kept FEED_KEEP entries; ten came after it.
    expect(grown.floor).toBe(2 * FEED_TRIM_EVERY);
    expect(grown.size).toBe(FEED_KEEP + 10);
    // Readers see the trim as the sweep's: below the floor resyncs, above it reads on.
    await expectError(await ctx.agentCall(ctx.feedPath(`since=${grown.floor - 1}`)), 410, "resync_required");
    const row = await ctx.create("free", { i: total + 1 });
    expect((await ctx.feed(`since=${total}`)).entries.map((e) => [e.seq, e.row_key])).toEqual([[total + 1, row.key]]);
  });
});

describe("app states", () => {
  it("dormant → 409 conflict \"app is dormant\"; archived or suspended → 410 gone; rows still answer", async () => {
    const ctx = await setup();
    await ctx.create("free", {});
    const setStatus = (status: string) => env.DB.prepare("UPDATE apps SET status = ?1 WHERE id = ?2").bind(status, ctx.appId).run();
    await setStatus("dormant");
    const e = await expectError(await ctx.agentCall(ctx.feedPath("since=0")), 409, "conflict");
    expect(e.message).toBe("app is dormant");
    expect(e.details).toEqual({ status: "dormant" });
    await expectError(await ctx.ownerCall(ctx.feedPath("since=0&wait=5")), 409, "conflict");
    for (const status of ["archived", "suspended"]) {
      await setStatus(status);
      const g = await expectError(await ctx.agentCall(ctx.feedPath("since=0")), 410, "gone");
      expect(g.details).toEqual({ status });
    }
    await setStatus("active");
    expect((await ctx.feed("since=0")).entries).toHaveLength(1);
  });

  it("a deleted app → 410 soft_deleted on the feed and every row route; restoring it brings everything back", async () => {
    const ctx = await setup();
    const row = await ctx.create("tasks", { title: "kept" });
    await json(await ctx.agentCall(`/v1/apps/${ctx.appId}`, { method: "DELETE" }), 200);
    await expectError(await ctx.agentCall(ctx.feedPath("since=0")), 410, "soft_deleted");
    const routes: Array<[string, Parameters<typeof ctx.agentCall>[1]]> = [
      [ctx.path("tasks"), {}],
      [ctx.path("tasks"), { json: { data: { title: "x" } } }],
      [ctx.path("tasks", `/${row.key}`), {}],
      [ctx.path("tasks", `/${row.key}`), { method: "PATCH", json: { data: { title: "x" } } }],
      [ctx.path("tasks", `/${row.key}`), { method: "DELETE" }],
      [ctx.path("tasks", "/count"), {}],
      [ctx.path("tasks", "/deleted"), {}],
      [ctx.path("tasks", "/batch"), { json: { rows: [{ data: { title: "x" } }] } }],
      [ctx.path("tasks", "/retention"), {}],
    ];
    for (const [path, opts] of routes) await ctx.unchanged(async () => expectError(await ctx.agentCall(path, opts), 410, "soft_deleted"));
    await json(await ctx.agentCall(`/v1/apps/${ctx.appId}/restore`, { method: "POST" }), 200);
    expect(await ctx.get("tasks", row.key)).toEqual(row);
    expect((await ctx.feed("since=0")).entries).toHaveLength(1);
  });

  it("another owner's app is app_not_found on the feed", async () => {
    const ctx = await setup();
    const other = await setup();
    await expectError(await other.agentCall(ctx.feedPath("since=0")), 404, "app_not_found");
    await expectError(await other.ownerCall(ctx.feedPath("since=0")), 404, "app_not_found");
  });
});
