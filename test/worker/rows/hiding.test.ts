// Read hiding (spec B Authentication rules 8–9, spec A "Collection row", WIRE §2.3/§5.2):
// a row the caller's read list does not reach is absent on EVERY verb — get, update,
// delete, a create that collides with its key, an upsert onto it, batches, the list and
// the feed — and answers exactly like a key that never existed. A 403 that names the
// collection only ever comes for a row the caller can read. The owner has no implicit
// access (docs/permissions.md); the owner and its agent are different authors, so a
// `creator` read list splits the rows between them. Count needs countRead; purge,
// restore and the deleted list are for owner-level callers and ignore the read list.
import { describe, expect, it, vi } from "vitest";
import { expectError, json } from "../helpers";
import { setup, type Ctx, type Row } from "./fixtures";

vi.setConfig({ testTimeout: 30_000 });

/** The 404 a key that never existed gets, for comparison. */
async function missing404(ctx: Ctx, collection: string, who: "agent" | "owner"): Promise<unknown> {
  return expectError(await ctx.as(who)(ctx.path(collection, "/never-existed")), 404, "row_not_found");
}

describe("a creator-only read list splits rows between the owner and its agent", () => {
  async function split(): Promise<{ ctx: Ctx; byOwner: Row; byAgent: Row }> {
    const ctx = await setup();
    const byOwner = await ctx.create("private", { who: "owner", email: "o@x.io" }, { key: "owner-row" }, "owner");
    const byAgent = await ctx.create("private", { who: "agent", email: "a@x.io" }, { key: "agent-row" }, "agent");
    return { ctx, byOwner, byAgent };
  }

  it("list shows each caller only its own rows, whatever the filter", async () => {
    const { ctx, byOwner, byAgent } = await split();
    expect((await ctx.list("private", {}, "agent")).rows).toEqual([byAgent]);
    expect((await ctx.list("private", {}, "owner")).rows).toEqual([byOwner]);
    expect((await ctx.list("private", { q: { where: [{ field: "who", op: "eq", value: "owner" }] } }, "agent")).rows).toEqual([]);
    expect((await ctx.list("private", { q: { where: [{ field: "who", op: "neq", value: "x" }], sort: [{ field: "who", dir: "desc" }] } }, "agent")).rows).toEqual([byAgent]);
  });

  it("get, update, delete of a hidden row → 404 row_not_found, the same answer as a key that never existed", async () => {
    const { ctx, byOwner } = await split();
    const absent = await missing404(ctx, "private", "agent");
    const path = ctx.path("private", `/${byOwner.key}`);
    expect(await expectError(await ctx.agentCall(path), 404, "row_not_found")).toEqual(absent);
    const attempts: Array<[string, Parameters<Ctx["agentCall"]>[1]]> = [
      ["PATCH", { method: "PATCH", json: { data: { who: "agent" } } }],
      ["PATCH stale", { method: "PATCH", json: { data: { who: "agent" }, if_match: 99 } }],
      ["PATCH current", { method: "PATCH", json: { data: { who: "agent" }, if_match: 1 } }],
      ["DELETE", { method: "DELETE" }],
      ["DELETE stale", { method: "DELETE", json: { if_match: 99 } }],
    ];
    for (const [label, opts] of attempts) {
      const e = await ctx.unchanged(async () => expectError(await ctx.agentCall(path, opts), 404, "row_not_found"));
      expect(e, label).toEqual(absent);
    }
    // And the other way round.
    const ownerAbsent = await missing404(ctx, "private", "owner");
    expect(await ctx.unchanged(async () => expectError(await ctx.ownerCall(ctx.path("private", "/agent-row"), { method: "PATCH", json: { data: {} } }), 404, "row_not_found"))).toEqual(ownerAbsent);
    expect(await ctx.unchanged(async () => expectError(await ctx.ownerCall(ctx.path("private", "/agent-row"), { method: "DELETE" }), 404, "row_not_found"))).toEqual(ownerAbsent);
  });

  it("a create colliding with a hidden key, an upsert onto a hidden row, and batches all answer row_not_found", async () => {
    const { ctx, byOwner } = await split();
    await ctx.unchanged(async () => expectError(await ctx.agentCall(ctx.path("private"), { json: { key: byOwner.key, data: { who: "agent" } } }), 404, "row_not_found"));
    await ctx.unchanged(async () => expectError(await ctx.agentCall(ctx.path("private"), { json: { on: "email", data: { who: "agent", email: " O@X.IO" } } }), 404, "row_not_found"));
    const created = await ctx.unchanged(async () => json<{ results: unknown[] }>(
      await ctx.agentCall(ctx.path("private", "/batch"), { json: { rows: [{ key: byOwner.key, data: {} }] } }), 200));
    expect(created.results).toEqual([{ index: 0, ok: false, error: { code: "row_not_found", message: expect.any(String), status: 404 } }]);
    const upserted = await ctx.unchanged(async () => json<{ results: unknown[] }>(
      await ctx.agentCall(ctx.path("private", "/batch"), { json: { on: "email", rows: [{ data: { email: "o@x.io" } }] } }), 200));
    expect(upserted.results).toEqual([{ index: 0, ok: false, error: { code: "row_not_found", message: expect.any(String), status: 404 } }]);
    const deleted = await ctx.unchanged(async () => json<{ results: unknown[] }>(
      await ctx.agentCall(ctx.path("private", "/batch"), { method: "DELETE", json: { keys: [byOwner.key, "never-existed"] } }), 200));
    expect(deleted.results).toEqual([
      { index: 0, ok: false, error: { code: "row_not_found", message: expect.any(String), status: 404 } },
      { index: 1, ok: false, error: { code: "row_not_found", message: expect.any(String), status: 404 } },
    ]);
  });

  it("the feed carries each caller only the rows it can read, for every op", async () => {
    const { ctx, byOwner, byAgent } = await split();
    await ctx.update("private", byOwner.key, { who: "owner", n: 2 }, {}, "owner");
    await ctx.update("private", byAgent.key, { who: "agent", n: 2 }, {}, "agent");
    await ctx.remove("private", byOwner.key, "owner");
    await ctx.remove("private", byAgent.key, "agent");
    const agentFeed = await ctx.feedAll("agent");
    const ownerFeed = await ctx.feedAll("owner");
    expect(agentFeed.map((e) => [e.op, e.row_key])).toEqual([["create", "agent-row"], ["update", "agent-row"], ["delete", "agent-row"]]);
    expect(ownerFeed.map((e) => [e.op, e.row_key])).toEqual([["create", "owner-row"], ["update", "owner-row"], ["delete", "owner-row"]]);
    // Cursors still cover the hidden entries, so nobody waits on them.
    expect((await ctx.feed("since=0")).cursor).toBe(6);
    expect((await ctx.feed("since=0", "owner")).cursor).toBe(6);
  });

  it("purge, restore and the deleted list ignore the read list for owner-level callers", async () => {
    const { ctx, byOwner } = await split();
    await ctx.remove("private", byOwner.key, "owner");
    const deleted = await json<{ rows: { key: string }[] }>(await ctx.agentCall(ctx.path("private", "/deleted")), 200);
    expect(deleted.rows.map((r) => r.key)).toEqual([byOwner.key]);
    const restored = await json<{ row: Row }>(await ctx.agentCall(ctx.path("private", `/${byOwner.key}/restore`), { method: "POST" }), 200);
    expect(restored.row).toMatchObject({ key: byOwner.key, creator: ctx.humanAuthor, editor: ctx.agentAuthor, version: 2 });
    // Restored by the agent, still created by the owner: the agent still cannot read it.
    await expectError(await ctx.agentCall(ctx.path("private", `/${byOwner.key}`)), 404, "row_not_found");
    expect((await ctx.get("private", byOwner.key, "owner")).version).toBe(2);
    expect(await json(await ctx.agentCall(ctx.path("private", `/${byOwner.key}/purge`), { method: "DELETE" }), 200)).toEqual({ purged: true, key: byOwner.key });
    await expectError(await ctx.ownerCall(ctx.path("private", `/${byOwner.key}`)), 404, "row_not_found");
  });
});

describe("403s only for rows the caller can read", () => {
  it("a readable row outside the update/delete list → 403 collection_write_forbidden / collection_delete_forbidden", async () => {
    const ctx = await setup();
    const byOwner = await ctx.create("shared", { a: 1 }, {}, "owner");
    const byAgent = await ctx.create("shared", { a: 2 });
    expect((await ctx.list("shared")).rows.map((r) => r.key)).toEqual([byOwner.key, byAgent.key]);
    const w = await ctx.unchanged(async () => expectError(await ctx.agentCall(ctx.path("shared", `/${byOwner.key}`), { method: "PATCH", json: { data: { a: 9 } } }), 403, "collection_write_forbidden"));
    expect(w.details).toEqual({ collection: "shared", list: "update", allowed: ["creator"] });
    const d = await ctx.unchanged(async () => expectError(await ctx.agentCall(ctx.path("shared", `/${byOwner.key}`), { method: "DELETE" }), 403, "collection_delete_forbidden"));
    expect(d.details).toEqual({ collection: "shared", allowed: ["creator"] });
    // A stale if_match on a row you may not update is still the permission answer.
    await ctx.unchanged(async () => expectError(await ctx.agentCall(ctx.path("shared", `/${byOwner.key}`), { method: "PATCH", json: { data: {}, if_match: 5 } }), 403, "collection_write_forbidden"));
    // Each may change its own.
    expect((await ctx.update("shared", byAgent.key, { a: 3 })).version).toBe(2);
    expect((await ctx.update("shared", byOwner.key, { a: 4 }, {}, "owner")).version).toBe(2);
    await ctx.remove("shared", byAgent.key);
    await ctx.remove("shared", byOwner.key, "owner");
  });

  it("read: [] → list 403 collection_read_forbidden; every row-addressed verb 404; nothing in the feed", async () => {
    const ctx = await setup();
    const created = await json<{ row: Row }>(await ctx.agentCall(ctx.path("sealed"), { json: { key: "s1", data: { secret: 1 } } }), 201);
    expect(created.row.key).toBe("s1");
    const e = await expectError(await ctx.agentCall(ctx.path("sealed")), 403, "collection_read_forbidden");
    expect(e.details).toEqual({ collection: "sealed", allowed: [] });
    await expectError(await ctx.ownerCall(ctx.path("sealed", "?q=" + encodeURIComponent(JSON.stringify({ where: [{ field: "secret", op: "eq", value: 1 }] })))), 403, "collection_read_forbidden");
    const absent = await missing404(ctx, "sealed", "agent");
    expect(await expectError(await ctx.agentCall(ctx.path("sealed", "/s1")), 404, "row_not_found")).toEqual(absent);
    await ctx.unchanged(async () => expectError(await ctx.agentCall(ctx.path("sealed", "/s1"), { method: "PATCH", json: { data: {} } }), 404, "row_not_found"));
    await ctx.unchanged(async () => expectError(await ctx.agentCall(ctx.path("sealed", "/s1"), { method: "DELETE" }), 404, "row_not_found"));
    await ctx.unchanged(async () => expectError(await ctx.agentCall(ctx.path("sealed"), { json: { key: "s1", data: {} } }), 404, "row_not_found"));
    expect(await ctx.feedAll()).toEqual([]);
    expect((await ctx.feed("since=0")).cursor).toBe(1);
    await expectError(await ctx.agentCall(ctx.path("sealed", "/count")), 403, "collection_count_forbidden");
    // The trash is still the owner's.
    await json(await ctx.agentCall(ctx.path("sealed", "/s1/purge"), { method: "DELETE" }), 200);
  });
});

describe("count", () => {
  it("countRead: { count } of live rows for owner and agent; without countRead → 403 collection_count_forbidden", async () => {
    const ctx = await setup();
    expect(await json(await ctx.agentCall(ctx.path("tasks", "/count")), 200)).toEqual({ count: 0 });
    const a = await ctx.create("tasks", { title: "a" });
    await ctx.create("tasks", { title: "b" }, {}, "owner");
    await ctx.create("free", {});
    expect(await json(await ctx.agentCall(ctx.path("tasks", "/count")), 200)).toEqual({ count: 2 });
    expect(await json(await ctx.ownerCall(ctx.path("tasks", "/count")), 200)).toEqual({ count: 2 });
    await ctx.remove("tasks", a.key);
    expect(await json(await ctx.agentCall(ctx.path("tasks", "/count")), 200)).toEqual({ count: 1 });
    for (const collection of ["products", "private", "logs"]) {
      for (const who of ["agent", "owner"] as const) {
        const e = await expectError(await ctx.as(who)(ctx.path(collection, "/count")), 403, "collection_count_forbidden");
        expect(e.details).toEqual({ collection, allowed: null });
      }
    }
    await expectError(await ctx.agentCall(ctx.path("nope", "/count")), 404, "collection_not_found");
  });

  it("countRead is independent of read: a sealed-for-reading collection may still be counted", async () => {
    const ctx = await setup({
      $defs: {},
      "x-service-manifest": {
        app: { name: "Ballot" },
        collections: { votes: { read: [], write: ["owner"], delete: ["owner"], countRead: ["owner"] }, closed: { read: ["owner"], write: ["owner"], delete: ["owner"], countRead: [] } },
      },
    });
    await ctx.create("votes", { v: 1 });
    await ctx.create("votes", { v: 2 }, {}, "owner");
    expect(await json(await ctx.agentCall(ctx.path("votes", "/count")), 200)).toEqual({ count: 2 });
    await expectError(await ctx.agentCall(ctx.path("votes")), 403, "collection_read_forbidden");
    const e = await expectError(await ctx.agentCall(ctx.path("closed", "/count")), 403, "collection_count_forbidden");
    expect(e.details).toEqual({ collection: "closed", allowed: [] });
  });
});

describe("no implicit owner access", () => {
  it("a collection whose lists name only a custom role refuses the owner and its agent", async () => {
    const ctx = await setup({
      $defs: {},
      "x-service-manifest": {
        app: { name: "Staff" },
        roles: { staff: { label: "Staff" } },
        collections: { notes: { read: ["staff"], write: ["staff"], delete: ["staff"] } },
      },
    });
    for (const who of ["agent", "owner"] as const) {
      await ctx.unchanged(async () => expectError(await ctx.as(who)(ctx.path("notes"), { json: { data: {} } }), 403, "collection_write_forbidden"));
      await expectError(await ctx.as(who)(ctx.path("notes")), 403, "collection_read_forbidden");
      await expectError(await ctx.as(who)(ctx.path("notes", "/x")), 404, "row_not_found");
      // The trash stays theirs.
      expect(await json(await ctx.as(who)(ctx.path("notes", "/deleted")), 200)).toEqual({ rows: [], next_before: null });
    }
  });
});

describe("relations", () => {
  const TICKETS = {
    $defs: {},
    "x-service-manifest": {
      app: { name: "Tickets" },
      collections: {
        tickets: {
          relations: { assignee: { field: "assignee", set: "writer" } },
          read: ["creator", "assignee"], write: ["owner"], update: ["creator", "assignee"], delete: ["creator"],
        },
      },
    },
  };

  it("a relation field naming the caller makes the row readable and updatable; a writer-set field only the creator may change", async () => {
    const ctx = await setup(TICKETS);
    const mine = await ctx.create("tickets", { title: "for the agent", assignee: ctx.agent.agent_id }, { key: "t1" }, "owner");
    await ctx.create("tickets", { title: "for someone else", assignee: "somebody" }, { key: "t2" }, "owner");
    expect((await ctx.list("tickets")).rows.map((r) => r.key)).toEqual(["t1"]);
    expect(await ctx.get("tickets", "t1")).toEqual(mine);
    await expectError(await ctx.agentCall(ctx.path("tickets", "/t2")), 404, "row_not_found");
    // The assignee may update, keeping the relation field as it is.
    expect((await ctx.update("tickets", "t1", { title: "done", assignee: ctx.agent.agent_id })).version).toBe(2);
    // Changing (or dropping) it is the creator's call: the whole write is refused.
    for (const data of [{ title: "x", assignee: "somebody" }, { title: "x" }]) {
      const e = await ctx.unchanged(async () => expectError(await ctx.agentCall(ctx.path("tickets", "/t1"), { method: "PATCH", json: { data } }), 403, "relation_set_forbidden"));
      expect(e.details).toEqual({ relation: "assignee", field: "assignee" });
    }
    // Not the creator: may not delete a readable row.
    await ctx.unchanged(async () => expectError(await ctx.agentCall(ctx.path("tickets", "/t1"), { method: "DELETE" }), 403, "collection_delete_forbidden"));
    // The creator reassigns it; from then on it is hidden from the agent on every verb.
    await ctx.update("tickets", "t1", { title: "done", assignee: "somebody" }, {}, "owner");
    await expectError(await ctx.agentCall(ctx.path("tickets", "/t1")), 404, "row_not_found");
    await ctx.unchanged(async () => expectError(await ctx.agentCall(ctx.path("tickets", "/t1"), { method: "PATCH", json: { data: { title: "y" } } }), 404, "row_not_found"));
    expect((await ctx.list("tickets")).rows).toEqual([]);
    expect((await ctx.list("tickets", {}, "owner")).rows.map((r) => r.key)).toEqual(["t1", "t2"]);
  });
});
