// The store's usage counters (`_svc_usage`: live rows, stored bytes), which the quota
// check of every write reads instead of scanning the rows. Triggers keep them in the same
// transaction as each row change; these tests drive every verb that changes rows —
// create, update, soft delete, restore, purge, recreate after purge, batches, the
// retention sweep — and after each compare the counters with a full scan. The migration
// from schema 2 fills them from rows already there.
import { runDurableObjectAlarm } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { json } from "../../../test/worker/helpers";
import { migrate, readUsage, SCHEMA_VERSION } from "../schema";
import { setup, type Ctx } from "../../../test/worker/rows/fixtures";

vi.setConfig({ testTimeout: 30_000 });

/** The counters and the same figures counted the slow way, side by side. */
async function usage(ctx: Ctx) {
  return ctx.sql((sql) => {
    const scan = sql.exec<{ live: number; bytes: number }>(
      "SELECT COALESCE(sum(deleted_at IS NULL), 0) AS live, COALESCE(sum(CASE WHEN purged = 0 THEN bytes ELSE 0 END), 0) AS bytes FROM _svc_rows",
    ).one();
    return { counters: readUsage(sql), scan: { liveRows: Number(scan.live), storedBytes: Number(scan.bytes) } };
  });
}

async function expectInStep(ctx: Ctx, live: number): Promise<void> {
  const { counters, scan } = await usage(ctx);
  expect(counters).toEqual(scan);
  expect(counters.liveRows).toBe(live);
}

describe("usage counters", () => {
  it("follow every verb that changes rows", async () => {
    const ctx = await setup();
    await expectInStep(ctx, 0);
    const a = await ctx.create("free", { code: "a", text: "x".repeat(100) });
    const b = await ctx.create("tasks", { title: "b" });
    await expectInStep(ctx, 2);
    await ctx.update("free", a.key, { code: "a", text: "y".repeat(500) });
    await expectInStep(ctx, 2);
    const bytesBefore = (await usage(ctx)).counters.storedBytes;
    await ctx.remove("free", a.key);
    await expectInStep(ctx, 1);
    // A soft-deleted row still holds its bytes until it is purged.
    expect((await usage(ctx)).counters.storedBytes).toBe(bytesBefore);
    await json(await ctx.agentCall(ctx.path("free", `/${a.key}/restore`), { method: "POST" }), 200);
    await expectInStep(ctx, 2);
    await ctx.remove("free", a.key);
    await json(await ctx.agentCall(ctx.path("free", `/${a.key}/purge`), { method: "DELETE" }), 200);
    await expectInStep(ctx, 1);
    // The purged key used again: the scrubbed row is replaced by a fresh one.
    await ctx.create("free", { code: "again" }, { key: a.key });
    await expectInStep(ctx, 2);
    const batch = await json<{ ok_count: number }>(await ctx.agentCall(ctx.path("free", "/batch"), {
      json: { rows: [{ data: { code: "c1" } }, { data: { code: "c2" } }, { data: { code: "a" } }, { data: { code: "again" } }] },
    }), 200);
    expect(batch.ok_count).toBe(3);
    await expectInStep(ctx, 5);
    await ctx.remove("tasks", b.key);
    await expectInStep(ctx, 4);
  });

  it("follow the retention sweep", async () => {
    const ctx = await setup();
    for (let i = 0; i < 6; i++) await ctx.create("free", { i });
    await json(await ctx.agentCall(ctx.path("free", "/retention"), { method: "PATCH", json: { maxRows: 2 } }), 200);
    expect(await runDurableObjectAlarm(ctx.stub())).toBe(true);
    await expectInStep(ctx, 2);
  });

  it("are filled from the rows already there when a schema-2 store migrates", async () => {
    const ctx = await setup();
    for (let i = 0; i < 4; i++) await ctx.create("free", { i });
    const gone = await ctx.create("free", { gone: true });
    await ctx.remove("free", gone.key);
    const expected = (await usage(ctx)).scan;
    const migrated = await ctx.sql((sql) => {
      for (const t of ["_svc_usage_insert", "_svc_usage_delete", "_svc_usage_update"]) sql.exec(`DROP TRIGGER ${t}`);
      sql.exec("DROP TABLE _svc_usage");
      sql.exec("ALTER TABLE _svc_feed DROP COLUMN prev");
      sql.exec("DROP TABLE _svc_withdrawals");
      sql.exec("DROP TABLE _svc_due");
      sql.exec("DROP INDEX _svc_outbox_unqueued");
      sql.exec("ALTER TABLE _svc_outbox DROP COLUMN queued_at");
      sql.exec("UPDATE _svc_meta SET value = '2' WHERE key = 'schema_version'");
      migrate(sql);
      return { usage: readUsage(sql), version: sql.exec<{ value: string }>("SELECT value FROM _svc_meta WHERE key = 'schema_version'").one().value };
    });
    expect(migrated).toEqual({ usage: expected, version: String(SCHEMA_VERSION) });
    expect(expected.liveRows).toBe(4);
    await ctx.create("free", { after: true });
    await expectInStep(ctx, 5);
  });
});
