// An update that moves a row out of a reader's read scope reaches that reader as a
// retraction: an `op: "delete"` entry with `data: null` (not `purged`) at the update's
// seq, with the update's collection, key, version and author — over the live socket, a
// `sub` catch-up page, and the long-poll feed alike. Three scopes: an editor-scoped read
// (someone else edits the row), a relation-scoped read (the owner reassigns the relation
// field), and a grant holder's where pin (the data stops matching). A reader who still
// sees the row gets the update; one who never saw it gets nothing. The previous state the
// store keeps for this never reaches a client, and a purge scrubs it.
import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, json } from "../helpers";
import { appCall } from "../serve/helpers";
import { member, team, type Team } from "../members/fixtures";
import { agentProtocols, Socket, type Frame, socketsClosedAfterEach, ownerToken, sessionProtocols as session, grantProtocols as grantSocket } from "./helpers";
import { appStore } from "../../../src/apps/store";
import { findAppBySlug } from "../../../src/db/apps";
import { grantPrincipalFor } from "../../../src/auth/grant-holder";
import type { Principal } from "../../../src/permissions";
import type { AppStore } from "../../../durable-objects/app-store/contract";

type Obj = Record<string, unknown>;
type Entry = { seq: number; op: string; collection_name: string; row_key: string; row_version: number | null; data: unknown; author: Obj; ts: string; purged?: true };

/** Only the data before each update holds this; nothing sent after the update may. */
const MARKER = "PREVIOUS-STATE-7f3a9c";

const sockets = socketsClosedAfterEach();

function retractionManifest(): Obj {
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    "x-service-manifest": {
      app: { name: "Retractions" },
      roles: { staff: { label: "Staff" }, guest: { label: "Guest" } },
      collections: {
        // Staff see every draft; everyone else the drafts it wrote last (the owner holds no role).
        drafts: { read: ["staff", "editor"], write: ["member"], update: ["member"], delete: ["owner"] },
        // The same reads; staff may delete what anyone wrote.
        memos: { read: ["staff", "editor"], write: ["member"], update: ["member"], delete: ["staff"] },
        // The owner's, and whoever the assignee field names.
        tasks: {
          read: ["owner", "assignee"], write: ["owner"], update: ["owner"], delete: ["owner"], unique: ["ref"],
          relations: { assignee: { field: "assignee", set: "caller" } },
        },
        // The owner's and guests' (grant holders, each maybe pinned).
        notes: { read: ["owner", "guest"], write: ["owner"], update: ["owner"], delete: ["owner"] },
      },
    },
  };
}

/** Every frame each socket received after its first batch, exactly as sent. */
const raw = new WeakMap<Socket, string[]>();

async function subscribed(slug: string, protocols: string[], since = 0): Promise<Socket> {
  const { socket } = await Socket.subscribed(slug, protocols, since);
  sockets.keep(socket);
  const log: string[] = [];
  socket.ws.addEventListener("message", (ev) => {
    log.push(typeof ev.data === "string" ? ev.data : new TextDecoder().decode(ev.data as ArrayBuffer));
  });
  raw.set(socket, log);
  return socket;
}

/** Where each socket's log stands now. */
const marks = (...sockets: Socket[]) => sockets.map((s) => raw.get(s)!.length);
/** The raw frames each socket received since `marks`. */
const framesSince = (at: number[], ...sockets: Socket[]) => sockets.map((s, i) => raw.get(s)!.slice(at[i]).join("\n"));



function entriesIn(frames: Frame[]): Entry[] {
  return frames.flatMap((f) => (f.type === "entry" ? [f.entry] : f.type === "batch" ? (f.entries as unknown[]) : [])) as Entry[];
}

/** Waits for the next entry frame on `socket` and returns its entries. */
async function nextEntries(socket: Socket): Promise<Entry[]> {
  const frame = await socket.next();
  expect(["entry", "batch"]).toContain(frame.type);
  return entriesIn([frame]);
}

async function agentCreate(t: Team, collection: string, data: Obj, key: string): Promise<{ version: number }> {
  const res = await call(`${t.path}/collections/${collection}`, { key: t.key, json: { data, key } });
  return (await json<{ row: { version: number } }>(res, 201)).row;
}

async function agentUpdate(t: Team, collection: string, key: string, data: Obj): Promise<{ version: number }> {
  const res = await call(`${t.path}/collections/${collection}/${key}`, { method: "PATCH", key: t.key, json: { data } });
  return (await json<{ row: { version: number } }>(res, 200)).row;
}

/** The update's own entry, as the agent (who reads every row of `tasks`/`notes`) sees it. */
async function ownEntry(t: Team, seq: number): Promise<Entry> {
  const page = await json<{ entries: Entry[] }>(await call(`${t.path}/feed?since=${seq - 1}&limit=1`, { key: t.key }), 200);
  expect(page.entries[0]?.seq).toBe(seq);
  return page.entries[0];
}

async function head(t: Team): Promise<number> {
  return (await json<{ cursor: number }>(await call(`${t.path}/feed?since=0&limit=1000`, { key: t.key }), 200)).cursor;
}

/** The store's long-poll feed (`feed`, what GET /v1/apps/:id/feed calls) as `principal`. */
async function storeFeed(t: Team, principal: Principal, since: number): Promise<{ entries: Entry[]; text: string }> {
  const row = (await findAppBySlug(env, t.app.slug))!;
  const out = await appStore(env, t.app.app_id).feed({ appId: t.app.app_id, version: row.currentVersion!, principal }, since, 100, 0);
  expect(out.ok).toBe(true);
  const value = (out as unknown as { value: { entries: Entry[] } }).value;
  return { entries: value.entries, text: JSON.stringify(out) };
}

function stub(t: Team): DurableObjectStub<AppStore> {
  return env.APP_STORE.get(env.APP_STORE.idFromName(t.app.app_id)) as DurableObjectStub<AppStore>;
}

async function storedFeed(t: Team, key: string): Promise<Array<{ seq: number; op: string; data: string | null; prev: string | null }>> {
  return runInDurableObject(stub(t), (_instance, state) =>
    state.storage.sql.exec<{ seq: number; op: string; data: string | null; prev: string | null }>("SELECT seq, op, data, prev FROM _svc_feed WHERE key = ? ORDER BY seq", key).toArray());
}

/** The retraction a reader must get for the update `update`. */
function retractionOf(update: Entry): Entry {
  return {
    seq: update.seq, op: "delete", collection_name: update.collection_name, row_key: update.row_key, row_version: update.row_version,
    data: null, author: update.author, ts: update.ts,
  };
}

/** Every socket's frames and every answer after the update, checked for the previous data. */
function noLeak(...texts: string[]): void {
  for (const text of texts) expect(text).not.toContain(MARKER);
}

describe("an editor-scoped read", () => {
  it("the last writer gets a retraction when someone else edits the row (socket, sub page, long-poll); the new editor the update; others nothing", async () => {
    const t = await team("private", retractionManifest());
    const writerB = await member(t, ["staff"]);
    const bystander = await member(t, ["guest"]);
    const tokenB = await ownerToken(writerB, t.app.slug);
    const agentSocket = await subscribed(t.app.slug, agentProtocols(t.key));
    const bSocket = await subscribed(t.app.slug, session(tokenB));
    const otherSocket = await subscribed(t.app.slug, session(await ownerToken(bystander, t.app.slug)));

    await agentCreate(t, "drafts", { text: MARKER }, "d1");
    const [created] = await nextEntries(agentSocket);
    expect(created).toMatchObject({ op: "create", row_key: "d1", data: { text: MARKER } });

    expect((await nextEntries(bSocket))[0]).toEqual(created);
    const at = marks(agentSocket, bSocket, otherSocket);
    const res = await appCall(t.app.slug, "/_svc/c/drafts/d1", { method: "PATCH", token: tokenB, json: { data: { text: "rewritten" } } });
    const updated = (await json<{ row: { version: number } }>(res, 200)).row;
    expect(updated.version).toBe(2);
    const seq = created.seq + 1;

    // The agent wrote it last before, not now: a retraction at the update's seq.
    const [retracted] = await nextEntries(agentSocket);
    const expected: Entry = {
      seq, op: "delete", collection_name: "drafts", row_key: "d1", row_version: 2, data: null,
      author: { kind: "human", id: writerB.humanId }, ts: retracted.ts,
    };
    expect(retracted).toEqual(expected);
    expect(retracted).not.toHaveProperty("purged");

    // Staff (the new editor) still see it: the update itself.
    const [update] = await nextEntries(bSocket);
    expect(update).toMatchObject({ seq, op: "update", row_key: "d1", row_version: 2, data: { text: "rewritten" } });
    // Someone who never wrote it gets nothing.
    await otherSocket.quiet();

    // The long-poll feed of the agent says the same, and so does a catch-up page.
    const polled = await call(`${t.path}/feed?since=0`, { key: t.key });
    const pollText = await polled.text();
    const page = JSON.parse(pollText) as { entries: Entry[] };
    expect(page.entries.map((e) => [e.seq, e.op])).toEqual([[created.seq, "create"], [seq, "delete"]]);
    expect(page.entries[1]).toEqual(expected);
    const caughtUp = await subscribed(t.app.slug, agentProtocols(t.key), created.seq);
    expect(caughtUp.frames).toEqual([]);

    const after = await call(`${t.path}/feed?since=${created.seq}`, { key: t.key });
    noLeak(await after.text(), ...framesSince(at, agentSocket, bSocket, otherSocket));
  });

  it("a sub catch-up page carries the retraction from the stored previous state", async () => {
    const t = await team("private", retractionManifest());
    const writerB = await member(t, ["staff"]);
    const tokenB = await ownerToken(writerB, t.app.slug);
    await agentCreate(t, "drafts", { text: MARKER }, "d2");
    const since = await head(t);
    await json(await appCall(t.app.slug, "/_svc/c/drafts/d2", { method: "PATCH", token: tokenB, json: { data: { text: "theirs" } } }), 200);

    const { socket, batch } = await Socket.subscribed(t.app.slug, agentProtocols(t.key), since);
    sockets.keep(socket);
    expect(batch.entries).toEqual([{
      seq: since + 1, op: "delete", collection_name: "drafts", row_key: "d2", row_version: 2, data: null,
      author: { kind: "human", id: writerB.humanId }, ts: (batch.entries as Entry[])[0].ts,
    }]);
    noLeak(JSON.stringify(batch));
    // From the start, the page holds the create (old data, seen then) and the retraction.
    const { socket: full, batch: all } = await Socket.subscribed(t.app.slug, agentProtocols(t.key), 0);
    sockets.keep(full);
    expect((all.entries as Entry[]).map((e) => [e.op, e.data])).toEqual([["create", { text: MARKER }], ["delete", null]]);
 
    // An entry written before the store kept previous states has none: judged by its new state only, as before.
    await runInDurableObject(stub(t), (_instance, state) => { state.storage.sql.exec("UPDATE _svc_feed SET prev = NULL"); });
    const { socket: legacy, batch: old } = await Socket.subscribed(t.app.slug, agentProtocols(t.key), 0);
    sockets.keep(legacy);
    expect((old.entries as Entry[]).map((e) => e.op)).toEqual(["create"]);
  });
});

describe("a delete by someone else", () => {
  it("reaches a reader who saw the row as its last writer; others nothing", async () => {
    const t = await team("private", retractionManifest());
    const writer = await member(t);
    const bystander = await member(t, ["guest"]);
    const token = await ownerToken(writer, t.app.slug);
    const staff = await member(t, ["staff"]);
    const staffToken = await ownerToken(staff, t.app.slug);
    const writerSocket = await subscribed(t.app.slug, session(token));
    const otherSocket = await subscribed(t.app.slug, session(await ownerToken(bystander, t.app.slug)));
    await json(await appCall(t.app.slug, "/_svc/c/memos", { token, json: { key: "m1", data: { text: "mine" } } }), 201);
    const [created] = await nextEntries(writerSocket);
    expect(created).toMatchObject({ op: "create", row_key: "m1" });

    // A staff member deletes it: the entry's author is staff, but the writer saw the row.
    const res = await appCall(t.app.slug, "/_svc/c/memos/m1", { method: "DELETE", token: staffToken });
    expect(res.status).toBe(200);
    const [deleted] = await nextEntries(writerSocket);
    expect(deleted).toMatchObject({ seq: created.seq + 1, op: "delete", row_key: "m1", author: { kind: "human", id: staff.humanId } });
    await otherSocket.quiet();
    // The writer's catch-up page says the same.
    const { socket, batch } = await Socket.subscribed(t.app.slug, session(token), created.seq);
    sockets.keep(socket);
    expect((batch.entries as Entry[]).map((e) => [e.seq, e.op])).toEqual([[created.seq + 1, "delete"]]);
  });
});

describe("a relation-scoped read", () => {
  it("reassigning the relation away retracts the row from the old assignee; the new one gets the update; others nothing", async () => {
    const t = await team("private", retractionManifest());
    const [alice, bob, carol] = [await member(t, ["staff"]), await member(t, ["staff"]), await member(t, ["staff"])];
    const aliceSocket = await subscribed(t.app.slug, session(await ownerToken(alice, t.app.slug)));
    const bobSocket = await subscribed(t.app.slug, session(await ownerToken(bob, t.app.slug)));
    const carolSocket = await subscribed(t.app.slug, session(await ownerToken(carol, t.app.slug)));

    await agentCreate(t, "tasks", { title: MARKER, assignee: alice.humanId }, "t1");
    const [created] = await nextEntries(aliceSocket);
    expect(created).toMatchObject({ op: "create", row_key: "t1", data: { title: MARKER, assignee: alice.humanId } });
    await bobSocket.quiet(100);

    const at = marks(aliceSocket, bobSocket, carolSocket);
    await agentUpdate(t, "tasks", "t1", { title: "moved", assignee: bob.humanId });
    const update = await ownEntry(t, created.seq + 1);
    expect(update).toMatchObject({ op: "update", row_version: 2, data: { title: "moved", assignee: bob.humanId }, author: { kind: "agent" } });

    const [retracted] = await nextEntries(aliceSocket);
    expect(retracted).toEqual(retractionOf(update));
    const [seen] = await nextEntries(bobSocket);
    expect(seen).toEqual(update);
    await carolSocket.quiet();

    // The store's long-poll feed, as each of them.
    const asAlice = await storeFeed(t, { kind: "member", humanId: alice.humanId, roles: ["staff"] }, created.seq);
    expect(asAlice.entries).toEqual([retractionOf(update)]);
    const asBob = await storeFeed(t, { kind: "member", humanId: bob.humanId, roles: ["staff"] }, 0);
    expect(asBob.entries).toEqual([update]);
    const asCarol = await storeFeed(t, { kind: "member", humanId: carol.humanId, roles: ["staff"] }, 0);
    expect(asCarol.entries).toEqual([]);

    noLeak(asAlice.text, asBob.text, asCarol.text, ...framesSince(at, aliceSocket, bobSocket, carolSocket));

    // Assigning it back is an ordinary update again for Alice.
    await agentUpdate(t, "tasks", "t1", { title: "back", assignee: alice.humanId });
    const [back] = await nextEntries(aliceSocket);
    expect(back).toMatchObject({ op: "update", row_version: 3, data: { title: "back" } });
    expect((await nextEntries(bobSocket))[0]).toMatchObject({ op: "delete", row_version: 3, data: null });
  });
});

describe("a purge", () => {
  it("reaches the live sockets of readers who saw the row by its data or as its last writer; others nothing; nothing of the row is kept", async () => {
    const t = await team("private", retractionManifest());
    const [alice, bob] = [await member(t, ["staff"]), await member(t, ["staff"])];
    const writer = await member(t);
    const writerToken = await ownerToken(writer, t.app.slug);
    const aliceSocket = await subscribed(t.app.slug, session(await ownerToken(alice, t.app.slug)));
    const bobSocket = await subscribed(t.app.slug, session(await ownerToken(bob, t.app.slug)));
    const writerSocket = await subscribed(t.app.slug, session(writerToken));

    // Alice reads the task only because the assignee field names her.
    await agentCreate(t, "tasks", { title: MARKER, assignee: alice.humanId }, "t9");
    const [created] = await nextEntries(aliceSocket);
    // The writer reads the memo only as its last writer.
    await json(await appCall(t.app.slug, "/_svc/c/memos", { token: writerToken, json: { key: "m9", data: { text: MARKER } } }), 201);
    const [memo] = await nextEntries(writerSocket);
    expect(memo).toMatchObject({ op: "create", row_key: "m9" });
    expect((await nextEntries(aliceSocket))[0]).toMatchObject({ row_key: "m9" }); // staff read every memo
    expect((await nextEntries(bobSocket))[0]).toMatchObject({ row_key: "m9" });

    const at = marks(aliceSocket, bobSocket, writerSocket);
    for (const [collection, key] of [["tasks", "t9"], ["memos", "m9"]]) {
      expect((await call(`${t.path}/collections/${collection}/${key}/purge`, { method: "DELETE", key: t.key })).status).toBe(200);
    }
    const [taskPurge] = await nextEntries(aliceSocket);
    expect(taskPurge).toMatchObject({ seq: created.seq + 2, op: "delete", row_key: "t9", data: null, purged: true, author: { kind: "agent" } });
    expect((await nextEntries(aliceSocket))[0]).toMatchObject({ op: "delete", row_key: "m9", purged: true });
    expect((await nextEntries(writerSocket))[0]).toMatchObject({ op: "delete", row_key: "m9", data: null, purged: true });
    // Bob never saw the task: only the memo's purge reaches him.
    expect((await nextEntries(bobSocket)).map((e) => e.row_key)).toEqual(["m9"]);
    await bobSocket.quiet();
    await writerSocket.quiet();
    noLeak(...framesSince(at, aliceSocket, bobSocket, writerSocket));
    // The previous state served this commit's sockets only: nothing of it is stored.
    for (const key of ["t9", "m9"]) {
      const stored = await storedFeed(t, key);
      expect(stored.every((r) => r.prev === null)).toBe(true);
      noLeak(JSON.stringify(stored));
    }
  });
});

describe("a grant holder's where pin", () => {
  async function holder(t: Team, pin: Obj | null): Promise<{ token: string; principal: Principal }> {
    const link = await json<{ grant_url: string }>(await call(`${t.path}/grants`, { key: t.key, json: { role: "guest", pin } }), 201);
    const g = /#g=(gr_[0-9a-f]{32})$/.exec(link.grant_url)![1];
    const { token } = await json<{ token: string }>(await appCall(t.app.slug, "/_svc/grant", { json: { grant: g } }), 200);
    const principal = await grantPrincipalFor(env, (await findAppBySlug(env, t.app.slug))!, token);
    expect(principal?.kind).toBe("grant");
    return { token, principal: principal! };
  }

  it("data that leaves the pin is retracted from the pinned holder; an unpinned holder gets the update; another pin nothing", async () => {
    const t = await team("private", retractionManifest());
    const alpha = await holder(t, { where: [{ field: "project", op: "eq", value: "alpha" }] });
    const everything = await holder(t, null);
    const gamma = await holder(t, { where: [{ field: "project", op: "eq", value: "gamma" }] });
    const alphaSocket = await subscribed(t.app.slug, grantSocket(alpha.token));
    const allSocket = await subscribed(t.app.slug, grantSocket(everything.token));
    const gammaSocket = await subscribed(t.app.slug, grantSocket(gamma.token));

    await agentCreate(t, "notes", { project: "alpha", text: MARKER }, "n1");
    const [created] = await nextEntries(alphaSocket);
    expect(created).toMatchObject({ op: "create", row_key: "n1", data: { project: "alpha", text: MARKER } });
    expect((await nextEntries(allSocket))[0]).toEqual(created);

    const at = marks(alphaSocket, allSocket, gammaSocket);
    await agentUpdate(t, "notes", "n1", { project: "beta", text: "elsewhere" });
    const update = await ownEntry(t, created.seq + 1);
    const [retracted] = await nextEntries(alphaSocket);
    expect(retracted).toEqual(retractionOf(update));
    expect(await nextEntries(allSocket)).toEqual([update]);
    await gammaSocket.quiet();

    const asAlpha = await storeFeed(t, alpha.principal, created.seq);
    expect(asAlpha.entries).toEqual([retractionOf(update)]);
    const asAll = await storeFeed(t, everything.principal, created.seq);
    expect(asAll.entries).toEqual([update]);
    const asGamma = await storeFeed(t, gamma.principal, 0);
    expect(asGamma.entries).toEqual([]);
    noLeak(asAlpha.text, asAll.text, asGamma.text, ...framesSince(at, alphaSocket, allSocket, gammaSocket));

    // A further edit outside the pin is nothing to the pinned holder: it saw neither state.
    await agentUpdate(t, "notes", "n1", { project: "beta", text: "still elsewhere" });
    expect(await nextEntries(allSocket)).toMatchObject([{ op: "update", row_version: 3 }]);
    await alphaSocket.quiet();
  });
});

describe("the previous state", () => {
  it("is stored beside update entries (upserts and batch upserts too), never sent, and a purge scrubs it with the data", async () => {
    const t = await team("private", retractionManifest());
    const alice = await member(t, ["staff"]);
    const aliceSocket = await subscribed(t.app.slug, session(await ownerToken(alice, t.app.slug)));
    await agentCreate(t, "tasks", { ref: "R1", title: MARKER, assignee: alice.humanId }, "p1");
    const [created] = await nextEntries(aliceSocket);
    const at = marks(aliceSocket);
    // An upsert's update half moves it away: a retraction for Alice.
    const upsert = await call(`${t.path}/collections/tasks`, { key: t.key, json: { on: "ref", data: { ref: "R1", title: "second", assignee: "nobody" } } });
    expect((await json<{ row: { key: string; version: number } }>(upsert, 200)).row).toMatchObject({ key: "p1", version: 2 });
    expect(await nextEntries(aliceSocket)).toEqual([{ ...retractionOf(await ownEntry(t, created.seq + 1)) }]);
    // The owner gives it back (an update for Alice), then a batch upsert takes it away again.
    await agentUpdate(t, "tasks", "p1", { ref: "R1", title: "third", assignee: alice.humanId });
    expect((await nextEntries(aliceSocket)).map((e) => [e.op, e.row_version])).toEqual([["update", 3]]);
    const batch = await call(`${t.path}/collections/tasks/batch`, { key: t.key, json: { on: "ref", rows: [{ data: { ref: "R1", title: "fourth", assignee: "someone-else" } }] } });
    expect((await json<{ ok_count: number }>(batch, 200)).ok_count).toBe(1);
    const [again] = await nextEntries(aliceSocket);
    expect(again).toEqual(retractionOf(await ownEntry(t, created.seq + 3)));
    noLeak(...framesSince(at, aliceSocket));

    const before = await storedFeed(t, "p1");
    expect(before.map((r) => [r.op, r.prev === null])).toEqual([["create", true], ["update", false], ["update", false], ["update", false]]);
    const agentEditor = { kind: "agent", id: expect.any(String) };
    expect(JSON.parse(before[1].prev!)).toEqual({ data: { ref: "R1", title: MARKER, assignee: alice.humanId }, editor: agentEditor });
    expect(JSON.parse(before[3].prev!)).toEqual({ data: { ref: "R1", title: "third", assignee: alice.humanId }, editor: agentEditor });

    const purged = await call(`${t.path}/collections/tasks/p1/purge`, { method: "DELETE", key: t.key });
    expect(purged.status).toBe(200);
    const after = await storedFeed(t, "p1");
    expect(after.every((r) => r.prev === null)).toBe(true);
    noLeak(JSON.stringify(after));
    // The scrubbed entries retract nothing any more: Alice's feed keeps their places with no retraction.
    const asAlice = await storeFeed(t, { kind: "member", humanId: alice.humanId, roles: ["staff"] }, 0);
    expect(asAlice.entries.filter((e) => e.op === "delete" && !e.purged)).toEqual([]);
  });
});
