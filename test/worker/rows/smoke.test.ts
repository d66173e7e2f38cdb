// A first end-to-end pass over the data plane: create, list with where/sort/cursor,
// update with if_match, unique, delete/restore/purge, count and the feed.
import { describe, expect, it } from "vitest";
import { call, claimedAgent, expectError, json, signIn } from "../helpers";

const manifest = {
  $defs: { Task: { type: "object", properties: { title: { type: "string", maxLength: 200 }, n: { type: "integer" }, email: { type: "string" } }, required: ["title"], additionalProperties: false } },
  "x-service-manifest": {
    app: { name: "Tasks" },
    collections: { tasks: { schema: { $ref: "#/$defs/Task" }, read: ["owner"], write: ["owner"], delete: ["owner"], countRead: ["owner"], unique: ["email"] } },
  },
};

describe("data plane smoke", () => {
  it("writes, reads, pages, conflicts and follows the feed", async () => {
    const human = await signIn();
    const agent = await claimedAgent(human);
    const key = agent.api_key;
    const app = await json<{ app_id: string }>(await call("/v1/apps", { key, json: { html: "<p>x</p>", manifest } }), 201);
    const B = `/v1/apps/${app.app_id}/collections/tasks`;
    for (let i = 0; i < 5; i++) {
      await json(await call(B, { key, json: { data: { title: `t${i}`, n: 5 - i, email: `u${i}@x.io` } } }), 201);
    }
    await expectError(await call(B, { key, json: { data: { title: "dup", email: " U1@X.io " } } }), 409, "unique_conflict");
    await expectError(await call(B, { key, json: { data: { nope: 1 } } }), 422, "row_schema_violation");
    const q = encodeURIComponent(JSON.stringify({ where: [{ field: "n", op: "gte", value: 2 }], sort: [{ field: "n", dir: "asc" }] }));
    const page1 = await json<{ rows: { data: { n: number } }[]; next_cursor: string; has_more: boolean }>(await call(`${B}?limit=2&q=${q}`, { key }), 200);
    expect(page1.rows.map((r) => r.data.n)).toEqual([2, 3]);
    expect(page1.has_more).toBe(true);
    const page2 = await json<{ rows: { data: { n: number } }[]; has_more: boolean }>(await call(`${B}?limit=2&q=${q}&since=${page1.next_cursor}`, { key }), 200);
    expect(page2.rows.map((r) => r.data.n)).toEqual([4, 5]);
    expect(page2.has_more).toBe(false);
    const created = await json<{ row: { key: string; version: number } }>(await call(B, { key, json: { data: { title: "v" } } }), 201);
    const updated = await json<{ row: { version: number } }>(await call(`${B}/${created.row.key}`, { method: "PATCH", key, json: { data: { title: "v2" }, if_match: 1 } }), 200);
    expect(updated.row.version).toBe(2);
    const stale = await expectError(await call(`${B}/${created.row.key}`, { method: "PATCH", key, json: { data: { title: "v3" }, if_match: 1 } }), 409, "conflict");
    expect((stale.details as { current: { version: number } }).current.version).toBe(2);
    await json(await call(`${B}/${created.row.key}`, { method: "DELETE", key }), 200);
    await expectError(await call(`${B}/${created.row.key}`, { key }), 404, "row_not_found");
    const restored = await json<{ row: { version: number } }>(await call(`${B}/${created.row.key}/restore`, { method: "POST", key }), 200);
    expect(restored.row.version).toBe(3);
    await json(await call(`${B}/${created.row.key}/purge`, { method: "DELETE", key }), 200);
    await expectError(await call(`${B}/${created.row.key}/restore`, { method: "POST", key }), 410, "restore_expired");
    expect(await json(await call(`${B}/count`, { key }), 200)).toEqual({ count: 5 });
    const feed = await json<{ entries: { seq: number; op: string }[]; cursor: number }>(await call(`/v1/apps/${app.app_id}/feed?since=0`, { key }), 200);
    expect(feed.entries.map((e) => e.op)).toEqual(["create", "create", "create", "create", "create", "create", "update", "delete", "create", "delete"]);
    const waited = Date.now();
    const empty = await json<{ entries: unknown[]; cursor: number }>(await call(`/v1/apps/${app.app_id}/feed?since=${feed.cursor}&wait=1`, { key }), 200);
    expect(empty.entries).toEqual([]);
    expect(Date.now() - waited).toBeGreaterThanOrEqual(900);
  });
});

describe("retention smoke", () => {
  it("reports, overrides and sweeps on the alarm", async () => {
    const { env, runDurableObjectAlarm } = await import("cloudflare:test");
    const human = await signIn();
    const agent = await claimedAgent(human);
    const key = agent.api_key;
    const app = await json<{ app_id: string }>(await call("/v1/apps", { key, json: { html: "<p>x</p>", manifest } }), 201);
    const B = `/v1/apps/${app.app_id}/collections/tasks`;
    for (let i = 0; i < 4; i++) await json(await call(B, { key, json: { data: { title: `t${i}` } } }), 201);
    const view = await json<{ effective: { maxRows: number | null }; wouldPrune: number }>(await call(`${B}/retention`, { method: "PATCH", key, json: { maxRows: 2 } }), 200);
    expect(view).toMatchObject({ effective: { maxRows: 2 }, wouldPrune: 2 });
    const stub = env.APP_STORE.get(env.APP_STORE.idFromName(app.app_id));
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    const listed = await json<{ rows: { data: { title: string } }[] }>(await call(B, { key }), 200);
    expect(listed.rows.map((r) => r.data.title)).toEqual(["t2", "t3"]);
    await expectError(await call(`/v1/apps/${app.app_id}/feed?since=1`, { key }), 410, "resync_required");
  });
});

describe("reserved row keys", () => {
  it("refuses keys that name a collection route", async () => {
    const human = await signIn();
    const key = (await claimedAgent(human)).api_key;
    const app = await json<{ app_id: string }>(await call("/v1/apps", { key, json: { html: "<p>x</p>", manifest } }), 201);
    for (const reserved of ["count", "deleted", "batch", "retention"]) {
      await expectError(await call(`/v1/apps/${app.app_id}/collections/tasks`, { key, json: { key: reserved, data: { title: "x" } } }), 400, "invalid_request");
    }
  });
});
