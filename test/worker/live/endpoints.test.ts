// The page's same-origin data endpoints (`/_svc/c/<collection>`, `/_svc/count/<collection>`,
// `/_svc/members`) and visitor identities (`POST /_svc/visitor`): the same shapes and the
// same permission decisions as the agent door, for an app session, a share pass, a
// visitor token or nobody; refusals and failures in the catalogue envelope.
import { afterEach, describe, expect, it } from "vitest";
import { awaitFreshWindow, call, dispatch, expectError, json } from "../helpers";
import { appCall, ownerToken, shareToken } from "../serve/helpers";
import { Socket, agentCreate, agentProtocols, liveApp, liveManifest, visitor, type Obj } from "./helpers";

type RowBody = { row: Obj; deduped?: true };
type Page = { rows: Obj[]; next_cursor: string | null; has_more: boolean };

const open: Socket[] = [];
afterEach(() => {
  for (const s of open.splice(0)) s.close();
});

describe("with the owner's app session", () => {
  it("lists, counts, creates, reads, updates and deletes like the agent door", async () => {
    const { who, app } = await liveApp("private");
    const token = await ownerToken(who.human, app.slug);
    const created = await json<RowBody>(await appCall(app.slug, "/_svc/c/secret", { token, json: { data: { n: 1 } } }), 201);
    expect(Object.keys(created)).toEqual(["row"]);
    expect(created.row).toMatchObject({ data: { n: 1 }, version: 1, author: { kind: "human", id: who.human.humanId }, deleted_at: null });
    const key = created.row.key as string;

    // The same row through the agent door looks the same.
    const viaAgent = await json<RowBody>(await call(`/v1/apps/${app.app_id}/collections/secret/${key}`, { key: who.agent.api_key }), 200);
    expect((await json<RowBody>(await appCall(app.slug, `/_svc/c/secret/${key}`, { token }), 200)).row).toEqual(viaAgent.row);

    const withKey = await json<RowBody>(await appCall(app.slug, "/_svc/c/secret", { token, json: { data: { n: 2 }, key: "fixed" } }), 201);
    expect(withKey.row.key).toBe("fixed");
    const again = await json<RowBody>(await appCall(app.slug, "/_svc/c/secret", { token, json: { data: { n: 99 }, key: "fixed" } }), 200);
    expect(again).toMatchObject({ deduped: true, row: { key: "fixed", data: { n: 2 } } });

    const page = await json<Page>(await appCall(app.slug, "/_svc/c/secret?limit=1", { token }), 200);
    expect(page.rows.length).toBe(1);
    expect(page.has_more).toBe(true);
    const rest = await json<Page>(await appCall(app.slug, `/_svc/c/secret?limit=1&since=${encodeURIComponent(page.next_cursor!)}`, { token }), 200);
    expect(rest.rows.map((r) => r.key)).toEqual(["fixed"]);
    const q = encodeURIComponent(JSON.stringify({ where: [{ field: "n", op: "gt", value: 1 }] }));
    expect((await json<Page>(await appCall(app.slug, `/_svc/c/secret?q=${q}`, { token }), 200)).rows.map((r) => r.key)).toEqual(["fixed"]);
    expect(await json(await appCall(app.slug, "/_svc/count/secret", { token }), 200)).toEqual({ count: 2 });

    const updated = await json<RowBody>(await appCall(app.slug, `/_svc/c/secret/${key}`, { token, method: "PATCH", json: { data: { n: 3 }, if_match: 1 } }), 200);
    expect(updated.row).toMatchObject({ version: 2, data: { n: 3 } });
    const stale = await expectError(await appCall(app.slug, `/_svc/c/secret/${key}`, { token, method: "PATCH", json: { data: { n: 4 }, if_match: 1 } }), 409, "conflict");
    expect(stale.details).toMatchObject({ current: { key, version: 2, data: { n: 3 } } });

    await expectError(await appCall(app.slug, `/_svc/c/secret/${key}`, { token, method: "DELETE", json: { if_match: 1 } }), 409, "conflict");
    expect(await json(await appCall(app.slug, `/_svc/c/secret/${key}`, { token, method: "DELETE" }), 200)).toEqual({ deleted: true, key });
    await expectError(await appCall(app.slug, `/_svc/c/secret/${key}`, { token }), 404, "row_not_found");
    expect(await json(await appCall(app.slug, "/_svc/count/secret", { token }), 200)).toEqual({ count: 1 });
  });

  it("refuses everyone else on a private app, and a token that does not hold", async () => {
    const { who, app } = await liveApp("private");
    await agentCreate(who.agent.api_key, app.app_id, "notes", { n: 1 });
    const e = await expectError(await appCall(app.slug, "/_svc/c/notes"), 401, "unauthorized");
    expect(e.details).toEqual({ authorize_url: `http://localhost:8787/authorize?app=${app.slug}` });
    await expectError(await appCall(app.slug, "/_svc/count/notes"), 401, "unauthorized");
    await expectError(await appCall(app.slug, "/_svc/c/notes", { json: { data: {} } }), 401, "unauthorized");
    await expectError(await appCall(app.slug, "/_svc/c/notes", { token: "x.y.z" }), 401, "unauthorized");
    const other = await liveApp("private");
    const foreign = await ownerToken(other.who.human, other.app.slug);
    await expectError(await appCall(app.slug, "/_svc/c/notes", { token: foreign }), 401, "unauthorized");
  });
});

describe("anonymous callers", () => {
  it("on a public app read and write as the manifest allows, stamped anon", async () => {
    const { who, app } = await liveApp();
    await agentCreate(who.agent.api_key, app.app_id, "secret", { hidden: true });
    const created = await json<RowBody>(await appCall(app.slug, "/_svc/c/notes", { json: { data: { text: "hello" } } }), 201);
    expect(created.row.author).toEqual({ kind: "anon", id: "anon" });
    expect((await json<Page>(await appCall(app.slug, "/_svc/c/notes"), 200)).rows.map((r) => r.key)).toEqual([created.row.key]);
    expect(await json(await appCall(app.slug, "/_svc/count/notes"), 200)).toEqual({ count: 1 });

    await expectError(await appCall(app.slug, `/_svc/c/notes/${created.row.key}`, { method: "PATCH", json: { data: { text: "changed" } } }), 403, "collection_write_forbidden");
    await expectError(await appCall(app.slug, `/_svc/c/notes/${created.row.key}`, { method: "DELETE" }), 403, "collection_delete_forbidden");
    await expectError(await appCall(app.slug, "/_svc/c/secret"), 403, "collection_read_forbidden");
    await expectError(await appCall(app.slug, "/_svc/count/secret"), 403, "collection_count_forbidden");
    await expectError(await appCall(app.slug, "/_svc/c/secret", { json: { data: {} } }), 403, "collection_write_forbidden");
    // Append-only, and written by the owner alone.
    await expectError(await appCall(app.slug, "/_svc/c/log", { json: { data: {} } }), 403, "collection_write_forbidden");
  });

  it("on a link app need the current share pass", async () => {
    const { app } = await liveApp("link");
    await expectError(await appCall(app.slug, "/_svc/c/notes"), 401, "unauthorized");
    await expectError(await appCall(app.slug, "/_svc/c/notes", { share: "0".repeat(32) }), 401, "unauthorized");
    const share = shareToken(app);
    await json(await appCall(app.slug, "/_svc/c/notes", { share, json: { data: { via: "link" } } }), 201);
    expect((await json<Page>(await appCall(app.slug, "/_svc/c/notes", { share }), 200)).rows.length).toBe(1);
  });

  it("get a stable visitor identity where the manifest needs one, and see their own rows", async () => {
    const { app } = await liveApp();
    const alice = await visitor(app.slug);
    expect(alice.visitor_id).toMatch(/^v_[0-9a-f]{32}$/);
    const bob = await visitor(app.slug);
    const as = (v: { visitor_token: string }) => ({ headers: { "x-service-visitor": v.visitor_token } });
    const mineA = await json<RowBody>(await appCall(app.slug, "/_svc/c/mine", { ...as(alice), json: { data: { who: "alice" } } }), 201);
    expect(mineA.row.author).toEqual({ kind: "visitor", id: alice.visitor_id });
    await json(await appCall(app.slug, "/_svc/c/mine", { ...as(bob), json: { data: { who: "bob" } } }), 201);
    expect((await json<Page>(await appCall(app.slug, "/_svc/c/mine", as(alice)), 200)).rows.map((r) => (r.data as Obj).who)).toEqual(["alice"]);
    expect((await json<Page>(await appCall(app.slug, "/_svc/c/mine", as(bob)), 200)).rows.map((r) => (r.data as Obj).who)).toEqual(["bob"]);
    await expectError(await appCall(app.slug, `/_svc/c/mine/${mineA.row.key}`, as(bob)), 404, "row_not_found");
    // Without the token the caller is plain anonymous: no identity, so creator reads are refused.
    await expectError(await appCall(app.slug, "/_svc/c/mine"), 403, "collection_read_forbidden");
    // The session probe names the visitor; a token for another app is ignored, not refused.
    expect(await json(await appCall(app.slug, "/_svc/session", as(alice)), 200)).toMatchObject({ kind: "anonymous", visitorId: alice.visitor_id, visitorIdentity: true });
    const other = await liveApp();
    const elsewhere = await visitor(other.app.slug);
    expect(await json(await appCall(app.slug, "/_svc/session", as(elsewhere)), 200)).toMatchObject({ visitorId: null });
    await expectError(await appCall(app.slug, "/_svc/c/mine", as(elsewhere)), 403, "collection_read_forbidden");
  });

  it("get no visitor identity where the manifest needs none", async () => {
    const { who, app } = await liveApp("public", liveManifest({ notes: { read: ["anyone"], write: ["owner"], delete: ["owner"] } }));
    await expectError(await appCall(app.slug, "/_svc/visitor", { method: "POST" }), 409, "conflict");
    expect(await json(await appCall(app.slug, "/_svc/session"), 200)).toMatchObject({ visitorIdentity: false, app: { collections: [{ name: "notes", appendOnly: false, mirror: "auto" }] } });
    await expectError(await appCall(app.slug, "/_svc/visitor"), 405, "method_not_allowed");
    void who;
  });

  it("are held to 60 writes a minute per address", async () => {
    const { app } = await liveApp();
    const ip = `10.250.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}`;
    const write = () => dispatch(new Request(`http://${app.slug}.localhost:8787/_svc/c/notes`, {
      method: "POST", headers: { "content-type": "application/json", "cf-connecting-ip": ip }, body: JSON.stringify({ data: {} }),
    }));
    // All 61 writes must fall in one fixed window of the limiter: start with at least half of one left.
    await awaitFreshWindow(60, 30);
    const statuses: number[] = [];
    for (let i = 0; i < 60; i++) statuses.push((await write()).status);
    expect(statuses).toEqual(new Array(60).fill(201));
    await expectError(await write(), 429, "rate_limited");
    // A local relay is a test target (CONTRACT §3): with RATE_LIMIT_PAGE_WRITE unset, development mode does not limit.
    const unlimited = { RATE_LIMIT_PAGE_WRITE: undefined };
    const again = await dispatch(new Request(`http://${app.slug}.localhost:8787/_svc/c/notes`, {
      method: "POST", headers: { "content-type": "application/json", "cf-connecting-ip": ip }, body: JSON.stringify({ data: {} }),
    }), unlimited);
    expect(again.status).toBe(201);
  }, 90_000);
});

describe("failures", () => {
  it("are catalogue envelopes", async () => {
    const { who, app } = await liveApp();
    const token = await ownerToken(who.human, app.slug);
    await expectError(await appCall(app.slug, "/_svc/c/nope", { token }), 404, "collection_not_found");
    await expectError(await appCall(app.slug, "/_svc/c/notes/missing", { token }), 404, "row_not_found");
    await expectError(await appCall(app.slug, "/_svc/c/notes", { token, body: "{not json", headers: { "content-type": "application/json" } }), 400, "invalid_request");
    await expectError(await appCall(app.slug, "/_svc/c/notes", { token, json: { key: "k" } }), 400, "invalid_request");
    await expectError(await appCall(app.slug, "/_svc/c/notes", { token, json: { data: {}, extra: 1 } }), 400, "invalid_request");
    await expectError(await appCall(app.slug, "/_svc/c/notes", { token, body: "data=1", headers: { "content-type": "application/x-www-form-urlencoded" } }), 400, "invalid_request");
    await expectError(await appCall(app.slug, "/_svc/c/notes?limit=0", { token }), 400, "invalid_request");
    await expectError(await appCall(app.slug, "/_svc/c/notes?q=nope", { token }), 400, "invalid_request");
    const put = await appCall(app.slug, "/_svc/c/notes", { token, method: "PUT", json: { data: {} } });
    expect(put.headers.get("allow")).toBe("GET, HEAD, POST");
    await expectError(put, 405, "method_not_allowed");
    await expectError(await appCall(app.slug, "/_svc/c/notes/k", { token, method: "POST", json: {} }), 405, "method_not_allowed");
    await expectError(await appCall(app.slug, "/_svc/count/notes", { token, method: "POST", json: {} }), 405, "method_not_allowed");
    // Another site's page may not drive the data paths from a visitor's browser.
    await expectError(await appCall(app.slug, "/_svc/c/notes", { json: { data: {} }, headers: { origin: "https://evil.example" } }), 403, "forbidden");
    await json(await appCall(app.slug, "/_svc/c/notes", { json: { data: {} }, headers: { origin: `http://${app.slug}.localhost:8787` } }), 201);
  });
});

describe("members", () => {
  it("the owner and the owner's agents, for signed-in viewers; never emails", async () => {
    const { who, app } = await liveApp("private");
    const token = await ownerToken(who.human, app.slug);
    const body = await json<{ members: Obj[] }>(await appCall(app.slug, "/_svc/members", { token }), 200);
    expect(body.members).toEqual([
      { kind: "human", id: who.human.humanId, displayName: who.human.email.split("@")[0], role: "owner" },
      { kind: "agent", id: who.agent.agent_id, displayName: "An agent" },
    ]);
    expect(JSON.stringify(body)).not.toContain("@");
    const pub = await liveApp();
    await expectError(await appCall(pub.app.slug, "/_svc/members"), 403, "forbidden");
  });
});

describe("page writes reach the socket", () => {
  it("a row created through /_svc/c arrives on a watcher as an entry", async () => {
    const { who, app } = await liveApp();
    const { socket } = await Socket.subscribed(app.slug, agentProtocols(who.agent.api_key));
    open.push(socket);
    const row = (await json<RowBody>(await appCall(app.slug, "/_svc/c/notes", { json: { data: { from: "page" } } }), 201)).row;
    expect(await socket.next()).toMatchObject({ type: "entry", entry: { op: "create", row_key: row.key, data: { from: "page" }, author: { kind: "anon", id: "anon" } } });
  });
});
