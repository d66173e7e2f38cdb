// Soft-deleted rows past the 30-day restore window (WIRE §2.3: restore within 30 days,
// else 410 restore_expired; spec A: the deleted list holds *recoverable* deleted rows).
// The deleted list leaves them out, and the store's periodic sweep (its alarm, armed by
// a soft delete) removes them for good: the row goes, its bytes are freed (the usage
// counters stay equal to a full scan), its old feed entries keep their place with data
// null as after a purge, and nothing is appended to the feed (no entry, no resync).
// Until the sweep reaches a tombstone, restore still answers restore_expired.
import { runDurableObjectAlarm } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { readUsage } from "../schema";
import { expectError, json } from "../../../test/worker/helpers";
import { COLLECTIONS, days, manifestOf, setup, type Ctx, type DeletedRow } from "../../../test/worker/rows/fixtures";

vi.setConfig({ testTimeout: 30_000 });

async function deletedList(ctx: Ctx, collection: string, query = ""): Promise<{ rows: DeletedRow[]; next_before: string | null }> {
  return json(await ctx.agentCall(ctx.path(collection, `/deleted${query}`)), 200);
}

function restore(ctx: Ctx, collection: string, key: string): Promise<Response> {
  return ctx.agentCall(ctx.path(collection, `/${key}/restore`), { method: "POST" });
}

/** The data-plane collections without any retention, so only tombstones can call the sweep. */
const { kept: _, ...UNBOUNDED } = COLLECTIONS;
const NO_RETENTION = manifestOf(UNBOUNDED);

const ago = (n: number) => new Date(Date.now() - n).toISOString();

/** The counters and a full scan of the rows, side by side. */
function usage(ctx: Ctx) {
  return ctx.sql((sql) => {
    const scan = sql.exec<{ live: number; bytes: number }>(
      "SELECT COALESCE(sum(deleted_at IS NULL), 0) AS live, COALESCE(sum(CASE WHEN purged = 0 THEN bytes ELSE 0 END), 0) AS bytes FROM _svc_rows",
    ).one();
    return { counters: readUsage(sql), scan: { liveRows: Number(scan.live), storedBytes: Number(scan.bytes) } };
  });
}

function storedFeed(ctx: Ctx, key: string) {
  return ctx.sql((sql) => sql.exec<{ op: string; data: string | null }>("SELECT op, data FROM _svc_feed WHERE key = ? ORDER BY seq", key).toArray());
}

describe("tombstones past the restore window", () => {
  it("leave the deleted list (paging included) but still answer restore_expired until the sweep takes them", async () => {
    const ctx = await setup();
    const keys = ["old", "older", "fresh", "edge"];
    for (const key of keys) await ctx.create("free", { key, text: "x".repeat(50) }, { key });
    for (const key of keys) await ctx.remove("free", key);
    await ctx.setColumn("free", "old", "deleted_at", ago(days(31)));
    await ctx.setColumn("free", "older", "deleted_at", ago(days(400)));
    await ctx.setColumn("free", "edge", "deleted_at", ago(days(30) - 60_000));
    const list = await deletedList(ctx, "free");
    expect(list.rows.map((r) => r.key)).toEqual(["fresh", "edge"]);
    for (const row of list.rows) expect(Date.parse(row.recoverable_until)).toBeGreaterThan(Date.now());
    const first = await deletedList(ctx, "free", "?limit=1");
    expect(first.rows.map((r) => r.key)).toEqual(["fresh"]);
    const second = await deletedList(ctx, "free", `?limit=1&before=${encodeURIComponent(first.next_before!)}`);
    expect(second).toEqual({ rows: [expect.objectContaining({ key: "edge" })], next_before: null });
    expect((await deletedList(ctx, "free", `?before=${encodeURIComponent(ago(0))}`)).rows.map((r) => r.key)).toEqual(["fresh", "edge"]);
    // Not swept yet: restore says why it cannot, and changes nothing.
    for (const key of ["old", "older"]) await ctx.unchanged(async () => expectError(await restore(ctx, "free", key), 410, "restore_expired"));
    // Inside the window a restore still works.
    expect((await json<{ row: { version: number } }>(await restore(ctx, "free", "edge"), 200)).row.version).toBe(2);
  });

  it("the sweep removes them for good: row gone, bytes freed, old feed entries scrubbed to null, nothing appended", async () => {
    const ctx = await setup(NO_RETENTION);
    const kept = await ctx.create("free", { code: "kept" });
    for (const key of ["old", "recent"]) {
      await ctx.create("free", { code: key, secret: `${key} secret`, pad: "y".repeat(200) }, { key });
      await ctx.update("free", key, { code: key, secret: `${key} secret v2`, pad: "y".repeat(200) });
      await ctx.remove("free", key);
    }
    // A soft delete arms the sweep even with no retention declared.
    expect(await ctx.sql((_, __, state) => state.storage.getAlarm())).not.toBeNull();
    await ctx.setColumn("free", "old", "deleted_at", ago(days(45)));
    const before = await usage(ctx);
    expect(before.counters).toEqual(before.scan);
    const oldBytes = await ctx.sql((sql) => Number(sql.exec<{ bytes: number }>("SELECT bytes FROM _svc_rows WHERE key = 'old'").one().bytes));
    const head = await ctx.feedHead();
    const feedBefore = await ctx.feedAll();

    expect(await runDurableObjectAlarm(ctx.stub())).toBe(true);

    expect(await ctx.storedCount("key = 'old'")).toBe(0);
    expect(await ctx.storedCount("key = 'recent'")).toBe(1);
    const after = await usage(ctx);
    expect(after.counters).toEqual(after.scan);
    expect(after.counters).toEqual({ liveRows: 1, storedBytes: before.counters.storedBytes - oldBytes });
    // Feed-silent: no new entry, no floor move (a cursor from 0 still reads), and the old
    // row's entries keep their place with data null — not marked purged.
    expect(await ctx.feedHead()).toBe(head);
    expect(await storedFeed(ctx, "old")).toEqual([{ op: "create", data: "null" }, { op: "update", data: "null" }, { op: "delete", data: "null" }]);
    // The update's previous state (kept for retractions) is scrubbed with it; the recent row's stays.
    const prevOf = (key: string) => ctx.sql((sql) => sql.exec<{ prev: string | null }>("SELECT prev FROM _svc_feed WHERE key = ? AND op = 'update'", key).one().prev);
    expect(await prevOf("old")).toBeNull();
    expect(await prevOf("recent")).toContain("recent secret");
    const feedAfter = await ctx.feedAll();
    expect(feedAfter.map((e) => e.seq)).toEqual(feedBefore.map((e) => e.seq));
    expect(feedAfter).toEqual(feedBefore.map((e) => (e.row_key === "old" ? { ...e, data: null } : e)));
    expect(feedAfter.some((e) => "purged" in e)).toBe(false);
    expect(feedAfter.filter((e) => e.row_key === "recent").every((e) => e.data !== null)).toBe(true);
    // The rest is as it was: the recent tombstone is still recoverable, the live row lives.
    expect((await deletedList(ctx, "free")).rows.map((r) => r.key)).toEqual(["recent"]);
    expect((await ctx.list("free")).rows).toEqual([kept]);
    // The key is gone, not expired: restore finds nothing, purge finds nothing, and the key is free.
    await ctx.unchanged(async () => expectError(await restore(ctx, "free", "old"), 404, "row_not_found"));
    await ctx.unchanged(async () => expectError(await ctx.agentCall(ctx.path("free", "/old/purge"), { method: "DELETE" }), 404, "row_not_found"));
    expect(await ctx.create("free", { code: "old", again: true }, { key: "old" })).toMatchObject({ key: "old", version: 1 });
    const last = await usage(ctx);
    expect(last.counters).toEqual(last.scan);
  });

  it("the sweep leaves purged markers and fresh tombstones alone, and comes back while tombstones remain, and only then", async () => {
    const ctx = await setup(NO_RETENTION);
    await ctx.create("tasks", { title: "t" }, { key: "t1" });
    await ctx.remove("tasks", "t1");
    await ctx.setColumn("tasks", "t1", "deleted_at", ago(days(31)));
    await ctx.create("free", { n: 2 }, { key: "gone" });
    await ctx.remove("free", "gone");
    await json(await ctx.agentCall(ctx.path("free", "/gone/purge"), { method: "DELETE" }), 200);
    await ctx.setColumn("free", "gone", "deleted_at", ago(days(90)));
    await ctx.create("free", { n: 3 }, { key: "soon" });
    await ctx.remove("free", "soon");
    await ctx.setColumn("free", "soon", "deleted_at", ago(days(29)));
    expect(await runDurableObjectAlarm(ctx.stub())).toBe(true);
    expect(await ctx.storedCount("key = 't1'")).toBe(0);
    // A purged row's marker stays: restore still tells the caller it was purged.
    expect(await ctx.storedCount("key = 'gone' AND purged = 1")).toBe(1);
    await expectError(await restore(ctx, "free", "gone"), 410, "restore_expired");
    expect((await deletedList(ctx, "free")).rows.map((r) => r.key)).toEqual(["soon"]);
    // "soon" will expire: the sweep is still scheduled.
    expect(await ctx.sql((_, __, state) => state.storage.getAlarm())).not.toBeNull();
    await ctx.setColumn("free", "soon", "deleted_at", ago(days(31)));
    expect(await runDurableObjectAlarm(ctx.stub())).toBe(true);
    expect(await ctx.storedCount("deleted_at IS NOT NULL AND purged = 0")).toBe(0);
    const { counters, scan } = await usage(ctx);
    expect(counters).toEqual(scan);
    // Nothing left to expire and no retention: the sweep is not scheduled again.
    expect(await ctx.sql((_, __, state) => state.storage.getAlarm())).toBeNull();
  });
});
