// The app feed socket (WIRE §3.1) through the real Worker: the upgrade answers
// `service.v1` and never echoes a credential; hello's shape; sub → batch pages (with
// truncation and resync); writes arrive as entries, filtered per reader; refusals for
// private apps, bad keys and other owners' keys; dormant/suspended apps; and the state
// living in socket attachments, so a store with no memory of its sockets still serves them.
import { env, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import type { AppStore } from "../app-store";
import { pruneFeed } from "../feed";
import { call, expectError, json } from "../../../test/worker/helpers";
import { waitFor } from "../../../test/support/wait";
import { owner, ownerToken, shareToken } from "../../../test/worker/serve/helpers";
import {
  Socket, agentCreate, agentDelete, agentProtocols, agentUpdate, appCall, liveApp, liveManifest, visitor, type Frame, type Obj,
} from "../../../test/worker/live/helpers";

const open: Socket[] = [];
async function subscribed(slug: string, protocols: string[], since = 0) {
  const s = await Socket.subscribed(slug, protocols, since);
  open.push(s.socket);
  return s;
}
async function connect(slug: string, protocols: string[], headers: Record<string, string> = {}) {
  const s = await Socket.connect(slug, protocols, headers);
  open.push(s);
  return s;
}

afterEach(() => {
  for (const s of open.splice(0)) s.close();
});

function stub(appId: string) {
  return env.APP_STORE.get(env.APP_STORE.idFromName(appId));
}

describe("the upgrade", () => {
  it("answers service.v1, never the key, and greets with hello", async () => {
    const { who, app } = await liveApp();
    const socket = await connect(app.slug, agentProtocols(who.agent.api_key));
    expect(socket.res.status).toBe(101);
    expect(socket.res.headers.get("sec-websocket-protocol")).toBe("service.v1");
    const hello = await socket.next();
    expect(hello).toEqual({
      type: "hello",
      seq: 0,
      app: {
        slug: app.slug, name: "Live app", description: "Watched", icon: "📡", visibility: "public",
        collections: [
          { name: "notes", appendOnly: false }, { name: "mine", appendOnly: false },
          { name: "secret", appendOnly: false }, { name: "log", appendOnly: true },
        ],
      },
      session: { kind: "owner", humanId: who.human.humanId, visitorId: null },
      auth: { authorize_url: `http://localhost:8787/authorize?app=${app.slug}` },
    });
    expect(JSON.stringify(hello)).not.toContain(who.agent.api_key);
  });

  it("hello reports the feed head and an anonymous session", async () => {
    const { who, app } = await liveApp();
    await agentCreate(who.agent.api_key, app.app_id, "notes", { n: 1 });
    await agentCreate(who.agent.api_key, app.app_id, "notes", { n: 2 });
    const socket = await connect(app.slug, ["service.v1"]);
    expect(socket.res.headers.get("sec-websocket-protocol")).toBe("service.v1");
    expect(await socket.next()).toMatchObject({ type: "hello", seq: 2, session: { kind: "anonymous", humanId: null, visitorId: null } });
  });

  it("an app session rides in service.session.<token> and reads as the owner", async () => {
    const { who, app } = await liveApp("private");
    const token = await ownerToken(who.human, app.slug);
    const socket = await connect(app.slug, ["service.v1", `service.session.${token}`]);
    expect(socket.res.headers.get("sec-websocket-protocol")).toBe("service.v1");
    expect(await socket.next()).toMatchObject({ type: "hello", session: { kind: "owner", humanId: who.human.humanId }, app: { visibility: "private" } });
  });

  it("refuses a private app's anonymous caller, bad keys, other owners' keys and missing service.v1", async () => {
    const { who, app } = await liveApp("private");
    const refused = async (protocols: string[], status: number, code: Parameters<typeof expectError>[2], headers: Record<string, string> = {}) => {
      const res = await Socket.open(app.slug, protocols, headers);
      expect(res).toBeInstanceOf(Response);
      const e = await expectError(res as Response, status, code);
      expect(JSON.stringify(e)).not.toContain(who.agent.api_key);
      return e;
    };
    const e = await refused(["service.v1"], 401, "unauthorized");
    expect(e.details).toEqual({ authorize_url: `http://localhost:8787/authorize?app=${app.slug}` });
    await refused(["service.v1", `service.agentkey.svc_${"0".repeat(32)}`], 401, "invalid_api_key");
    await refused(["service.v1", "service.session.not-a-token"], 401, "unauthorized");
    const stranger = await owner();
    await refused(agentProtocols(stranger.agent.api_key), 404, "app_not_found");
    await refused([`service.agentkey.${who.agent.api_key}`], 400, "invalid_request");
    // Another site's page cannot open it with a visitor's browser.
    await refused(agentProtocols(who.agent.api_key), 403, "forbidden", { Origin: "https://evil.example" });
    // A plain GET is not an upgrade.
    await expectError(await appCall(app.slug, "/_svc/ws"), 400, "invalid_request");
    // The app's own origin is fine.
    const ok = await connect(app.slug, agentProtocols(who.agent.api_key), { Origin: `http://${app.slug}.localhost:8787` });
    expect((await ok.next()).type).toBe("hello");
  });

  it("a link app needs its current share pass, as service.share.<token>", async () => {
    const { app } = await liveApp("link");
    const share = shareToken(app);
    expect(await Socket.open(app.slug, ["service.v1"])).toBeInstanceOf(Response);
    const res = await Socket.open(app.slug, ["service.v1", `service.share.${"0".repeat(32)}`]);
    await expectError(res as Response, 401, "unauthorized");
    const socket = await connect(app.slug, ["service.v1", `service.share.${share}`]);
    expect(socket.res.headers.get("sec-websocket-protocol")).toBe("service.v1");
    expect(await socket.next()).toMatchObject({ type: "hello", session: { kind: "anonymous" }, app: { visibility: "link" } });
  });
});

describe("sub and batch", () => {
  it("answers sub with the entries after since, caught up", async () => {
    const { who, app } = await liveApp();
    const key = who.agent.api_key;
    const a = await agentCreate(key, app.app_id, "notes", { n: 1 });
    await agentUpdate(key, app.app_id, "notes", a.key as string, { n: 2 });
    await agentDelete(key, app.app_id, "notes", a.key as string);
    const { batch } = await subscribed(app.slug, agentProtocols(key));
    expect(batch).toMatchObject({ type: "batch", cursor: 3, truncated: false });
    const entries = batch.entries as Obj[];
    expect(entries.map((e) => [e.seq, e.op, e.collection_name, e.row_key, e.row_version])).toEqual([
      [1, "create", "notes", a.key, 1], [2, "update", "notes", a.key, 2], [3, "delete", "notes", a.key, 2],
    ]);
    expect(entries[0]).toEqual({
      seq: 1, op: "create", collection_name: "notes", row_key: a.key, row_version: 1, data: { n: 1 },
      author: { kind: "agent", id: who.agent.agent_id }, ts: a.created_at,
    });
    const later = await subscribed(app.slug, agentProtocols(key), 2);
    expect(later.batch).toMatchObject({ cursor: 3, truncated: false });
    expect((later.batch.entries as Obj[]).map((e) => e.seq)).toEqual([3]);
  });

  it("pages a long backlog: truncated until caught up, then live", async () => {
    const { who, app } = await liveApp();
    const key = who.agent.api_key;
    for (let i = 0; i < 6; i++) {
      const rows = Array.from({ length: i < 5 ? 100 : 1 }, (_, j) => ({ data: { n: i * 100 + j } }));
      await json(await call(`/v1/apps/${app.app_id}/collections/notes/batch`, { key, json: { rows } }), 200);
    }
    const { socket, batch } = await subscribed(app.slug, agentProtocols(key));
    expect(batch).toMatchObject({ truncated: true, cursor: 500 });
    expect((batch.entries as Obj[]).length).toBe(500);
    // Not caught up: a write now is not pushed ahead of the pages still to come.
    await agentCreate(key, app.app_id, "notes", { n: "late" });
    await socket.quiet(200);
    socket.send({ type: "sub", since: 500 });
    const rest = await socket.next();
    expect(rest).toMatchObject({ type: "batch", truncated: false, cursor: 502 });
    expect((rest.entries as Obj[]).map((e) => e.seq)).toEqual([501, 502]);
    await agentCreate(key, app.app_id, "notes", { n: "live" });
    expect(await socket.next()).toMatchObject({ type: "entry", entry: { seq: 503, data: { n: "live" } } });
  });

  it("says resync below the retention floor (and for a cursor from the future), then follows from the head", async () => {
    const { who, app } = await liveApp();
    const key = who.agent.api_key;
    for (let n = 0; n < 4; n++) await agentCreate(key, app.app_id, "notes", { n });
    await runInDurableObject(stub(app.app_id), async (_instance: AppStore, state) => {
      expect(pruneFeed(state.storage.sql, 2)).toBe(true);
    });
    const socket = await connect(app.slug, agentProtocols(key));
    expect(await socket.next()).toMatchObject({ type: "hello", seq: 4 });
    socket.send({ type: "sub", since: 1 });
    expect(await socket.next()).toEqual({ type: "resync" });
    expect(await socket.next()).toEqual({ type: "batch", entries: [], cursor: 4, truncated: false });
    await agentCreate(key, app.app_id, "notes", { n: "after" });
    expect(await socket.next()).toMatchObject({ type: "entry", entry: { seq: 5 } });
    // At the floor is still fine.
    expect((await subscribed(app.slug, agentProtocols(key), 2)).batch).toMatchObject({ cursor: 5, truncated: false });
    const future = await connect(app.slug, agentProtocols(key));
    await future.next();
    future.send({ type: "sub", since: 99 });
    expect(await future.next()).toEqual({ type: "resync" });
    expect(await future.next()).toMatchObject({ type: "batch", cursor: 5 });
  });

  it("answers malformed and unknown frames with an error frame and stays open", async () => {
    const { who, app } = await liveApp();
    const socket = await connect(app.slug, agentProtocols(who.agent.api_key));
    await socket.next();
    for (const bad of ["not json", { type: "ping" }, { type: "sub", since: -1 }, { type: "sub", since: "3" }]) {
      socket.send(bad);
      expect(await socket.next()).toMatchObject({ type: "error", error: { code: "invalid_request" } });
    }
    socket.send({ type: "sub" });
    expect(await socket.next()).toMatchObject({ type: "batch", cursor: 0 });
  });
});

describe("live entries", () => {
  it("every write through the API arrives once, as an entry, on every subscribed socket", async () => {
    const { who, app } = await liveApp();
    const key = who.agent.api_key;
    const watchers = [
      (await subscribed(app.slug, agentProtocols(key))).socket,
      (await subscribed(app.slug, ["service.v1"])).socket,
    ];
    const row = await agentCreate(key, app.app_id, "notes", { text: "hi" });
    await agentUpdate(key, app.app_id, "notes", row.key as string, { text: "hi again" });
    await agentDelete(key, app.app_id, "notes", row.key as string);
    for (const w of watchers) {
      const frames = [await w.next(), await w.next(), await w.next()];
      expect(frames.map((f) => f.type)).toEqual(["entry", "entry", "entry"]);
      expect(frames.map((f) => [(f.entry as Obj).seq, (f.entry as Obj).op, (f.entry as Obj).row_version])).toEqual([[1, "create", 1], [2, "update", 2], [3, "delete", 2]]);
      expect((frames[1].entry as Obj).data).toEqual({ text: "hi again" });
      await w.quiet(100);
    }
  });

  it("nothing is pushed before the first sub; the sub's batch carries what happened since hello", async () => {
    const { who, app } = await liveApp();
    const key = who.agent.api_key;
    const socket = await connect(app.slug, agentProtocols(key));
    const hello = await socket.next();
    await agentCreate(key, app.app_id, "notes", { n: 1 });
    await socket.quiet(150);
    socket.send({ type: "sub", since: hello.seq });
    const batch = await socket.next();
    expect((batch.entries as Obj[]).map((e) => e.seq)).toEqual([1]);
    await agentCreate(key, app.app_id, "notes", { n: 2 });
    expect(await socket.next()).toMatchObject({ type: "entry", entry: { seq: 2 } });
  });

  it("a reader never receives a row its read list hides", async () => {
    const { who, app } = await liveApp();
    const key = who.agent.api_key;
    const alice = await visitor(app.slug);
    const bob = await visitor(app.slug);
    const agent = (await subscribed(app.slug, agentProtocols(key))).socket;
    const a = (await subscribed(app.slug, ["service.v1", `service.visitor.${alice.visitor_token}`])).socket;
    const b = (await subscribed(app.slug, ["service.v1", `service.visitor.${bob.visitor_token}`])).socket;
    const anon = (await subscribed(app.slug, ["service.v1"])).socket;

    // Alice writes into `mine` (read: creator): only Alice hears of it.
    const res = await appCall(app.slug, "/_svc/c/mine", { json: { data: { who: "alice" } }, headers: { "x-service-visitor": alice.visitor_token } });
    const aliceRow = (await json<{ row: Obj }>(res, 201)).row;
    expect(aliceRow.author).toEqual({ kind: "visitor", id: alice.visitor_id });
    // The owner's agent writes into `mine` and `secret` (read: owner): only the agent hears.
    await agentCreate(key, app.app_id, "mine", { who: "agent" });
    await agentCreate(key, app.app_id, "secret", { who: "agent" });
    // Then something everyone may read.
    await agentCreate(key, app.app_id, "notes", { who: "everyone" });

    const seen = async (s: Socket) => {
      const frames: Frame[] = [];
      for (;;) {
        const f = await s.next();
        frames.push(f);
        if ((f.entry as Obj | undefined)?.collection_name === "notes") return frames.map((x) => [(x.entry as Obj).collection_name, ((x.entry as Obj).data as Obj).who]);
      }
    };
    expect(await seen(a)).toEqual([["mine", "alice"], ["notes", "everyone"]]);
    expect(await seen(b)).toEqual([["notes", "everyone"]]);
    expect(await seen(anon)).toEqual([["notes", "everyone"]]);
    expect(await seen(agent)).toEqual([["mine", "agent"], ["secret", "agent"], ["notes", "everyone"]]);

    // Alice's delete of her row reaches only Alice too.
    await json(await appCall(app.slug, `/_svc/c/mine/${aliceRow.key}`, { method: "DELETE", headers: { "x-service-visitor": alice.visitor_token } }), 200);
    expect(await a.next()).toMatchObject({ type: "entry", entry: { op: "delete", row_key: aliceRow.key } });
    await agentCreate(key, app.app_id, "notes", { who: "everyone again" });
    expect(await b.next()).toMatchObject({ entry: { collection_name: "notes" } });
    expect(await agent.next()).toMatchObject({ entry: { collection_name: "notes" } });

    // A backlog is filtered the same way.
    const late = await subscribed(app.slug, ["service.v1", `service.visitor.${bob.visitor_token}`]);
    expect((late.batch.entries as Obj[]).map((e) => e.collection_name)).toEqual(["notes", "notes"]);
  });

  it("per-socket state lives in the attachment: a store with no memory of its sockets still serves them", async () => {
    const { who, app } = await liveApp();
    const key = who.agent.api_key;
    const { socket } = await subscribed(app.slug, agentProtocols(key));
    await runInDurableObject(stub(app.app_id), async (_instance: AppStore, state) => {
      const sockets = state.getWebSockets();
      expect(sockets.length).toBe(1);
      expect(sockets[0].deserializeAttachment()).toEqual({ appId: app.app_id, version: 1, principal: { kind: "agent", agentId: who.agent.agent_id }, cursor: 0, live: true });
      expect(state.getTags(sockets[0]).sort()).toEqual(["c:log", "c:mine", "c:notes", "c:secret", "v:1"]);
      // A second instance over the same storage, as after hibernation: nothing in memory.
      const { AppStore: Store } = await import("../app-store");
      const fresh = new Store(state, env);
      const written = await fresh.createRow({ appId: app.app_id, version: 1, principal: { kind: "agent", agentId: who.agent.agent_id } }, "notes", { data: { from: "fresh" } });
      expect(written.ok).toBe(true);
    });
    expect(await socket.next()).toMatchObject({ type: "entry", entry: { seq: 1, data: { from: "fresh" } } });
  });

  it("an anonymous socket is tagged only with what it may read", async () => {
    const { app } = await liveApp();
    await subscribed(app.slug, ["service.v1"]);
    await runInDurableObject(stub(app.app_id), async (_instance: AppStore, state) => {
      const [ws] = state.getWebSockets();
      // No identity, so the creator-scoped `mine` is not readable at all (WIRE §7 row 12); `secret` is the owner's.
      expect(state.getTags(ws).sort()).toEqual(["c:log", "c:notes", "v:1"]);
      expect(ws.deserializeAttachment()).toMatchObject({ principal: { kind: "anonymous" } });
    });
  });

  it("a redeploy keeps sockets accepted under the old version served, under the new read lists", async () => {
    const { who, app } = await liveApp();
    const key = who.agent.api_key;
    const anon = (await subscribed(app.slug, ["service.v1"])).socket;
    // `secret` becomes readable by anyone: the old socket was not tagged for it.
    const widened = { ...(liveManifest() as { "x-service-manifest": { collections: Record<string, Obj> } })["x-service-manifest"].collections };
    widened.secret = { ...widened.secret, read: ["anyone"] };
    const res = await call(`/v1/apps/${app.app_id}/versions`, { key, json: { manifest: liveManifest(widened), force: true } });
    expect(res.status, await res.clone().text()).toBe(200);
    await agentCreate(key, app.app_id, "secret", { now: "public" });
    expect(await anon.next()).toMatchObject({ type: "entry", entry: { collection_name: "secret", data: { now: "public" } } });
  });
});

describe("app lifecycle", () => {
  it("a dormant app answers _dormant then closes; a suspended one _suspended; an archived one an error", async () => {
    const { who, app } = await liveApp();
    const setStatus = (status: string) => env.DB.prepare("UPDATE apps SET status = ?1 WHERE id = ?2").bind(status, app.app_id).run();
    for (const [status, frame] of [["dormant", { type: "_dormant" }], ["suspended", { type: "_suspended" }], ["archived", { type: "error", error: { code: "gone", message: "This app is archived." } }]] as const) {
      await setStatus(status);
      const socket = await connect(app.slug, agentProtocols(who.agent.api_key));
      expect(socket.res.headers.get("sec-websocket-protocol")).toBe("service.v1");
      expect(await socket.next()).toEqual(frame);
      expect((await socket.whenClosed()).code).toBe(1000);
    }
    await setStatus("active");
    const socket = await connect(app.slug, agentProtocols(who.agent.api_key));
    expect((await socket.next()).type).toBe("hello");
  });

  it("closeWatchers tells every socket _dormant and closes it", async () => {
    const { who, app } = await liveApp();
    const socket = (await subscribed(app.slug, agentProtocols(who.agent.api_key))).socket;
    const closed = await runInDurableObject(stub(app.app_id), (instance: AppStore) => instance.closeWatchers("dormant"));
    expect(closed).toBe(1);
    expect(await socket.next()).toEqual({ type: "_dormant" });
    expect((await socket.whenClosed()).code).toBe(1000);
  });

  it("closeWatchers can end one person's sockets only, asking them to reconnect", async () => {
    const { who, app } = await liveApp();
    const token = await ownerToken(who.human, app.slug);
    const person = (await subscribed(app.slug, ["service.v1", `service.session.${token}`])).socket;
    const agent = (await subscribed(app.slug, agentProtocols(who.agent.api_key))).socket;
    const closed = await runInDurableObject(stub(app.app_id), (instance: AppStore) => instance.closeWatchers("reconnect", { humanId: who.human.humanId }));
    expect(closed).toBe(1);
    expect((await person.whenClosed()).code).toBe(1012);
    expect(person.frames).toEqual([]);
    await agentCreate(who.agent.api_key, app.app_id, "notes", { still: "here" });
    expect(await agent.next()).toMatchObject({ type: "entry" });
  });

  it("a socket opened with an app session ends when that session expires", async () => {
    const { who, app } = await liveApp();
    const token = await ownerToken(who.human, app.slug);
    const person = (await subscribed(app.slug, ["service.v1", `service.session.${token}`])).socket;
    const agent = (await subscribed(app.slug, agentProtocols(who.agent.api_key))).socket;
    await runInDurableObject(stub(app.app_id), (instance: AppStore, state) => {
      // The attachment is rewritten behind the store's back, so drop its in-memory copy of
      // the sockets' state too, as hibernation would.
      (instance as unknown as { watchers: { known: WeakMap<WebSocket, unknown> } }).watchers.known = new WeakMap();
      for (const ws of state.getWebSockets()) {
        const attached = ws.deserializeAttachment() as { principal: { kind: string }; expiresAt?: number };
        if (attached.principal.kind === "owner") {
          // Issued for seven days: the expiry rides in the attachment.
          expect(attached.expiresAt! - Date.now()).toBeGreaterThan(6 * 86400_000);
          ws.serializeAttachment({ ...attached, expiresAt: Date.now() - 1 });
        } else {
          expect(attached.expiresAt).toBeUndefined();
        }
      }
    });
    await agentCreate(who.agent.api_key, app.app_id, "notes", { n: 1 });
    expect(await agent.next()).toMatchObject({ type: "entry" });
    expect(await person.next()).toMatchObject({ type: "error", error: { code: "unauthorized" } });
    expect((await person.whenClosed()).code).toBe(4001);
  });

  it("the store's alarm waits for a session socket's expiry, and a due sweep still moves it up", async () => {
    const { who, app } = await liveApp();
    const alarm = () => runInDurableObject(stub(app.app_id), (_instance: AppStore, state) => state.storage.getAlarm());
    const created = await agentCreate(who.agent.api_key, app.app_id, "notes", { n: 1 });
    await runInDurableObject(stub(app.app_id), (_instance: AppStore, state) => state.storage.deleteAlarm());
    const token = await ownerToken(who.human, app.slug);
    (await subscribed(app.slug, ["service.v1", `service.session.${token}`])).socket;
    // Set for the session's expiry, seven days out.
    expect((await alarm())! - Date.now()).toBeGreaterThan(6 * 86400_000);
    // A soft delete makes a tombstone sweep due: within the hour, not in a week.
    await agentDelete(who.agent.api_key, app.app_id, "notes", (created as { key: string }).key);
    // The store moves its alarm up after answering the delete.
    await waitFor(async () => (await alarm())! - Date.now() <= 3_600_000, { message: "the alarm moved up to the sweep" });
    expect((await alarm())! - Date.now()).toBeGreaterThan(3_500_000);
  });

  it("a retention sweep that removed rows tells live sockets to resync", async () => {
    const { who, app } = await liveApp();
    const socket = (await subscribed(app.slug, agentProtocols(who.agent.api_key))).socket;
    await runInDurableObject(stub(app.app_id), (instance: AppStore) => {
      (instance as unknown as { afterCommit(entries: unknown[]): void }).afterCommit([]);
    });
    expect(await socket.next()).toEqual({ type: "resync" });
  });
});
