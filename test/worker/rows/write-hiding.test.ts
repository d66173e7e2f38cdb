// Write paths never confirm a key the read path would hide (spec B rule 9; WIRE §2.3;
// docs/permissions.md "create"). For every key state — a live row, a soft-deleted one, a
// purged one, and a key that never held a row — a caller that may not read the row there
// gets one answer, byte for byte:
//   - a caller that may not create at all: the create refusal (403, decided before any
//     row is looked at), on a create with a key, an `on` upsert, keyClaim variants and
//     batches, through the store and the app page's /_svc/c;
//   - a caller that may create but not read: row_not_found for the live and the deleted
//     row, exactly as a get answers (purged and missing keys are free, so it creates);
//   - update and delete: row_not_found, the answer to a key that never existed.
// Callers that can read keep the answers they had: a live key dedupes, a deleted one is a
// 409 conflict, a purged or missing one is created.
import { describe, expect, it, vi } from "vitest";
import type { AppStore, BatchItem, CallContext, Outcome } from "../../../durable-objects/app-store/contract";
import { batchResult } from "../../../src/apps/store-call";
import type { Principal } from "../../../src/permissions";
import { json } from "../helpers";
import { appCall, deploy, manifest, owner, type Deployed } from "../serve/helpers";
import { Ctx } from "./fixtures";

vi.setConfig({ testTimeout: 60_000 });

const OWNED = { read: ["owner"], write: ["owner"], delete: ["owner"], unique: ["email"] };
const COLLECTIONS = {
  // Nobody but owner-level callers reads or writes.
  secret: OWNED,
  // Anyone may drop a row in; only the owner reads them.
  dropbox: { read: ["owner"], write: ["anyone"], update: ["owner"], delete: ["owner"], unique: ["email"] },
  // Anyone reads; only the owner writes.
  wall: { read: ["anyone"], write: ["owner"], delete: ["owner"], unique: ["email"] },
  // Rows keyed by the writer's identity; only the owner reads them.
  claimed: { read: ["owner"], write: ["anyone"], update: ["owner"], delete: ["owner"], keyClaim: "caller" },
  // Keys minted by the relay.
  minted: { read: ["owner"], write: ["anyone"], update: ["owner"], delete: ["owner"], keyClaim: "server" },
};

const STATES = ["live", "gone", "purged", "missing"] as const;
type State = (typeof STATES)[number];

interface World {
  ctx: Ctx;
  app: Deployed;
}

/** A public app whose collections hold, at keys live/gone/purged, a live, a soft-deleted and a purged row (emails <state>@x.io). */
async function world(): Promise<World> {
  const who = await owner();
  const app = await deploy(who, { visibility: "public", manifest: manifest({ name: "Hiding" }, { collections: COLLECTIONS }) });
  const ctx = new Ctx(who.human, who.agent, app.app_id);
  for (const collection of ["secret", "dropbox", "wall"]) await placeRows(ctx, collection);
  return { ctx, app };
}

async function placeRows(ctx: Ctx, collection: string, prefix = ""): Promise<void> {
  for (const state of ["live", "gone", "purged"] as const) {
    await ctx.create(collection, { email: `${prefix}${state}@x.io`, secret: `the ${state} one` }, { key: `${prefix}${state}` });
  }
  await ctx.remove(collection, `${prefix}gone`);
  await ctx.remove(collection, `${prefix}purged`);
  await json(await ctx.agentCall(ctx.path(collection, `/${prefix}purged/purge`), { method: "DELETE" }), 200);
}

const anon: Principal = { kind: "anonymous", ip: "203.0.113.9" };

function callAs(ctx: Ctx, principal: Principal): CallContext {
  return { appId: ctx.appId, version: 1, principal, challenge: "absent" };
}

function store<T>(ctx: Ctx, fn: (s: AppStore) => Promise<T>): Promise<T> {
  return ctx.sql((_, instance) => fn(instance));
}

/** Runs `attempt` for every key state, proving each leaves the store as it was; returns the outcomes by state. */
async function perState<T>(ctx: Ctx, attempt: (state: State) => Promise<T>): Promise<Record<State, T>> {
  const out = {} as Record<State, T>;
  for (const state of STATES) out[state] = await ctx.unchanged(() => attempt(state));
  return out;
}

/** Every state answered exactly like `expected`. */
function allEqual<T>(outcomes: Record<State, T>, expected: unknown): void {
  expect(outcomes).toEqual({ live: expected, gone: expected, purged: expected, missing: expected });
}

const refused = (code: string) => ({ ok: false, error: { code, message: expect.any(String) } });

describe("a caller that may neither read nor write the collection", () => {
  it("create with a key, an `on` upsert, update, delete and batches: one answer for live, deleted, purged and missing keys", async () => {
    const { ctx } = await world();
    const a = callAs(ctx, anon);
    const create = await perState(ctx, (state) => store(ctx, (s) => s.createRow(a, "secret", { key: state, data: { secret: "mine" } })));
    allEqual(create, create.missing);
    expect(create.missing).toMatchObject(refused("collection_write_forbidden"));
    const upsert = await perState(ctx, (state) => store(ctx, (s) => s.createRow(a, "secret", { on: "email", data: { email: `${state}@x.io` } })));
    allEqual(upsert, create.missing);
    const update = await perState(ctx, (state) => store(ctx, (s) => s.updateRow(a, "secret", state, { data: { secret: "x" } })));
    const absent = await store(ctx, (s) => s.getRow(a, "secret", "missing"));
    expect(absent).toEqual({ ok: false, error: { code: "row_not_found", message: expect.any(String) } });
    allEqual(update, absent);
    const versioned = await perState(ctx, (state) => store(ctx, (s) => s.updateRow(a, "secret", state, { data: {}, if_match: 1 })));
    allEqual(versioned, absent);
    const remove = await perState(ctx, (state) => store(ctx, (s) => s.deleteRow(a, "secret", state, { if_match: 1 })));
    allEqual(remove, absent);
    const batch = await ctx.unchanged(() => store(ctx, (s) => s.batchCreate(a, "secret", { rows: STATES.map((key) => ({ key, data: {} })) })));
    const rows = batchResult((batch as Outcome<BatchItem[]> & { ok: true }).value).results.map(({ index: _, ...r }) => r);
    expect(new Set(rows.map((r) => JSON.stringify(r))).size).toBe(1);
    expect(rows[0]).toMatchObject({ ok: false, error: { code: "collection_write_forbidden", status: 403 } });
    const deletes = await ctx.unchanged(() => store(ctx, (s) => s.batchDelete(a, "secret", [...STATES])));
    const gone = batchResult((deletes as Outcome<BatchItem[]> & { ok: true }).value).results.map(({ index: _, ...r }) => r);
    expect(gone).toEqual(STATES.map(() => ({ ok: false, error: { code: "row_not_found", message: expect.any(String), status: 404 } })));
  });

  it("the app page's door (/_svc/c): POST with a key, PATCH and DELETE answer the same whatever the key holds", async () => {
    const { ctx, app } = await world();
    const answer = async (res: Response) => ({ status: res.status, body: await res.json() });
    const post = await perState(ctx, async (state) => answer(await appCall(app.slug, "/_svc/c/secret", { json: { key: state, data: { secret: "mine" } } })));
    allEqual(post, post.missing);
    expect(post.missing).toMatchObject({ status: 403, body: { error: { code: "collection_write_forbidden" } } });
    const upsert = await perState(ctx, async (state) => answer(await appCall(app.slug, "/_svc/c/secret", { json: { on: "email", data: { email: `${state}@x.io` } } })));
    allEqual(upsert, post.missing);
    const get = await answer(await appCall(app.slug, "/_svc/c/secret/missing"));
    expect(get).toMatchObject({ status: 404, body: { error: { code: "row_not_found" } } });
    const patch = await perState(ctx, async (state) => answer(await appCall(app.slug, `/_svc/c/secret/${state}`, { method: "PATCH", json: { data: {} } })));
    allEqual(patch, get);
    const del = await perState(ctx, async (state) => answer(await appCall(app.slug, `/_svc/c/secret/${state}`, { method: "DELETE" })));
    allEqual(del, get);
  });

  it("a reader that may not write is refused the same way: no dedupe of a row it can see, no conflict for a deleted one", async () => {
    const { ctx, app } = await world();
    const a = callAs(ctx, anon);
    const create = await perState(ctx, (state) => store(ctx, (s) => s.createRow(a, "wall", { key: state, data: {} })));
    allEqual(create, create.missing);
    expect(create.missing).toMatchObject(refused("collection_write_forbidden"));
    const upsert = await perState(ctx, (state) => store(ctx, (s) => s.createRow(a, "wall", { on: "email", data: { email: `${state}@x.io` } })));
    // The live row is readable: its upsert is the update half, refused by the (inherited) write list.
    allEqual(upsert, create.missing);
    const page = await perState(ctx, async (state) => (await appCall(app.slug, "/_svc/c/wall", { json: { key: state, data: {} } })).status);
    allEqual(page, 403);
  });
});

describe("a caller that may create but not read", () => {
  it("a create at the key of a live or a deleted row → row_not_found, like a get; purged and missing keys are free", async () => {
    const { ctx } = await world();
    const a = callAs(ctx, anon);
    const absent = await store(ctx, (s) => s.getRow(a, "dropbox", "missing"));
    for (const state of ["live", "gone"] as const) {
      expect(await ctx.unchanged(() => store(ctx, (s) => s.createRow(a, "dropbox", { key: state, data: { secret: "mine" } }))), state).toEqual(absent);
      // An upsert whose unique value a hidden live row holds answers the same; a deleted row holds no value.
      const upsert = await ctx.unchanged(() => store(ctx, (s) => s.createRow(a, "dropbox", { on: "email", data: { email: "live@x.io" } })));
      expect(upsert).toEqual(absent);
      expect(await ctx.unchanged(() => store(ctx, (s) => s.updateRow(a, "dropbox", state, { data: {} })))).toEqual(absent);
    }
    expect(await ctx.unchanged(() => store(ctx, (s) => s.updateRow(a, "dropbox", "missing", { data: {} })))).toEqual(absent);
    const batch = await ctx.unchanged(() => store(ctx, (s) => s.batchCreate(a, "dropbox", { rows: [{ key: "live", data: {} }, { key: "gone", data: {} }] })));
    expect(batch.ok).toBe(true);
    expect(batchResult((batch as Outcome<BatchItem[]> & { ok: true }).value)).toMatchObject({ ok_count: 0, results: [{ error: { code: "row_not_found" } }, { error: { code: "row_not_found" } }] });
    for (const state of ["purged", "missing"] as const) {
      expect(await store(ctx, (s) => s.createRow(a, "dropbox", { key: state, data: { n: 1 } }))).toMatchObject({ ok: true, value: { created: true, row: { key: state, version: 1 } } });
    }
    // The hidden rows are untouched.
    expect((await ctx.get("dropbox", "live")).data).toEqual({ email: "live@x.io", secret: "the live one" });
    expect((await json<{ rows: { key: string }[] }>(await ctx.agentCall(ctx.path("dropbox", "/deleted")), 200)).rows.map((r) => r.key)).toEqual(["gone"]);
  });

  it("keyClaim caller: the caller's own key answers the same for a live and a deleted row it cannot read; keyClaim refusals never depend on rows", async () => {
    const { ctx } = await world();
    const visitor = (id: string): CallContext => callAs(ctx, { kind: "visitor", visitorId: id, ip: "203.0.113.7" });
    for (const id of ["v-live", "v-gone", "v-purged"]) {
      expect(await store(ctx, (s) => s.createRow(visitor(id), "claimed", { data: { by: id } }))).toMatchObject({ ok: true, value: { created: true, row: { key: id } } });
    }
    await ctx.remove("claimed", "v-gone");
    await ctx.remove("claimed", "v-purged");
    await json(await ctx.agentCall(ctx.path("claimed", "/v-purged/purge"), { method: "DELETE" }), 200);
    const absent = await store(ctx, (s) => s.getRow(visitor("v-live"), "claimed", "v-live"));
    expect(absent).toEqual({ ok: false, error: { code: "row_not_found", message: expect.any(String) } });
    for (const id of ["v-live", "v-gone"]) {
      expect(await ctx.unchanged(() => store(ctx, (s) => s.createRow(visitor(id), "claimed", { data: { again: true } }))), id).toEqual(absent);
      expect(await ctx.unchanged(() => store(ctx, (s) => s.createRow(visitor(id), "claimed", { key: id, data: { again: true } }))), id).toEqual(absent);
    }
    expect(await store(ctx, (s) => s.createRow(visitor("v-purged"), "claimed", { data: { again: true } }))).toMatchObject({ ok: true, value: { created: true } });
    // Another's key, or no identity at all: the keyClaim refusal, the same for every key state.
    const others = await perState(ctx, (state) => store(ctx, (s) => s.createRow(visitor("v-x"), "claimed", { key: `v-${state}`, data: {} })));
    allEqual(others, others.missing);
    expect(others.missing).toMatchObject(refused("collection_write_forbidden"));
    const nobody = await perState(ctx, (state) => store(ctx, (s) => s.createRow(callAs(ctx, anon), "claimed", { key: `v-${state}`, data: {} })));
    allEqual(nobody, nobody.missing);
    expect(nobody.missing).toMatchObject(refused("collection_write_forbidden"));
    // keyClaim server: any given key is refused alike.
    const keys: Record<State, string> = { live: "", gone: "", purged: "", missing: "never-minted" };
    for (const state of ["live", "gone", "purged"] as const) keys[state] = (await ctx.create("minted", { state })).key;
    await ctx.remove("minted", keys.gone);
    await ctx.remove("minted", keys.purged);
    await json(await ctx.agentCall(ctx.path("minted", `/${keys.purged}/purge`), { method: "DELETE" }), 200);
    const minted = await perState(ctx, (state) => store(ctx, (s) => s.createRow(callAs(ctx, anon), "minted", { key: keys[state], data: {} })));
    allEqual(minted, minted.missing);
    expect(minted.missing).toMatchObject(refused("collection_write_forbidden"));
  });
});

describe("callers that can read keep their answers", () => {
  it("owner-level: a live key dedupes, a deleted one is a 409 conflict, purged and missing keys are created; an upsert updates the live row", async () => {
    const { ctx, app } = await world();
    const agent = callAs(ctx, { kind: "agent", agentId: ctx.agent.agent_id });
    const live = await ctx.get("secret", "live");
    expect(await ctx.unchanged(() => store(ctx, (s) => s.createRow(agent, "secret", { key: "live", data: {} })))).toEqual({ ok: true, value: { row: live, deduped: true, created: false } });
    expect(await ctx.unchanged(() => store(ctx, (s) => s.createRow(agent, "secret", { key: "gone", data: {} })))).toEqual({
      ok: false, error: { code: "conflict", message: expect.any(String), details: { key: "gone" } },
    });
    // Through the page door with the agent's key, the same.
    const page = await appCall(app.slug, "/_svc/c/secret", { json: { key: "gone", data: {} }, headers: { authorization: `Bearer ${ctx.key}` } });
    expect(page.status).toBe(409);
    const dedupe = await appCall(app.slug, "/_svc/c/secret", { json: { key: "live", data: {} }, headers: { authorization: `Bearer ${ctx.key}` } });
    expect(await json(dedupe, 200)).toEqual({ row: live, deduped: true });
    for (const state of ["purged", "missing"] as const) {
      expect(await store(ctx, (s) => s.createRow(agent, "secret", { key: state, data: { fresh: state } }))).toMatchObject({ ok: true, value: { created: true, row: { key: state, version: 1 } } });
    }
    expect(await store(ctx, (s) => s.createRow(agent, "secret", { on: "email", data: { email: "LIVE@x.io", n: 2 } }))).toMatchObject({
      ok: true, value: { created: false, row: { key: "live", version: 2, data: { email: "LIVE@x.io", n: 2 } } },
    });
    // A reader that may write keeps the dedupe: anyone on the wall is not, but the agent is.
    expect(await store(ctx, (s) => s.createRow(agent, "wall", { key: "live", data: {} }))).toMatchObject({ ok: true, value: { deduped: true } });
  });
});
