// Service credentials end to end: minting (shapes, defaults, clamping, every refusal with
// nothing written), listing without tokens, pause/resume/revoke/rotate with their exact
// effects on the very next request, and the token as a bearer — its own allowlist on its
// own app's collection endpoints, intersected with the owner's authority, and 401 on every
// other route (apps, keys, the feed, credential, grant and member management; reading the
// member list takes the members flag, see credential-members.test.ts).
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, claimedAgent, count, expectError, json, signIn } from "../helpers";
import { waitFor } from "../../support/wait";
import {
  CREDENTIAL_VIEW_KEYS, DAY, offBy, past, setCredentialColumn, setup, sibling, unchanged, type CredentialView, type Row,
} from "./fixtures";

const TOKEN = /^svcs_[0-9a-f]{32}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe("minting", () => {
  it("mints an explicit credential with the default lifetime; the token is shown once and only its hash is stored", async () => {
    const app = await setup();
    const res = await app.call(app.credentials, { json: { grants: [{ collection: "notes", ops: ["read"] }], label: "backend" } });
    const body = await json<Record<string, unknown>>(res, 201);
    expect(Object.keys(body).sort()).toEqual(["created_at", "expires_at", "grants", "id", "label", "members", "mode", "token", "token_prefix"]);
    expect(body.token).toMatch(TOKEN);
    expect(body.token_prefix).toBe((body.token as string).slice(0, 12));
    expect(body).toMatchObject({ mode: "explicit", grants: [{ collection: "notes", ops: ["read"] }], members: false, label: "backend" });
    expect(offBy(body.expires_at as string, 365 * DAY)).toBeLessThan(60_000);
    const stored = await env.DB.prepare("SELECT * FROM service_credentials WHERE id = ?1").bind(body.id).first<Record<string, unknown>>();
    expect(stored!.token_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(stored)).not.toContain(body.token as string);
    expect(stored!.created_by).toBe(`agent:${app.agent.agent_id}`);
  });

  it("mints from the owner's session, with following mode, members, scope own and zero-op entries", async () => {
    const app = await setup();
    const res = await app.call(app.credentials, {
      session: app.human.session,
      json: { mode: "following", members: true, grants: [{ collection: "notes", ops: ["read", "create", "read"], scope: "own" }, { collection: "sealed", ops: [] }] },
    });
    const body = await json<Record<string, unknown>>(res, 201);
    expect(body).toMatchObject({ mode: "following", members: true, label: null, grants: [{ collection: "notes", ops: ["read", "create"], scope: "own" }, { collection: "sealed", ops: [] }] });
    const stored = await env.DB.prepare("SELECT created_by FROM service_credentials WHERE id = ?1").bind(body.id).first<{ created_by: string }>();
    expect(stored!.created_by).toBe(`human:${app.human.humanId}`);
  });

  it("ttl_seconds: a number sets it, a huge one is clamped, null and no_expiry mean none", async () => {
    const app = await setup();
    expect(offBy((await app.mint({ ttl_seconds: 3600 })).expires_at!, 3600)).toBeLessThan(60_000);
    expect(offBy((await app.mint({ ttl_seconds: 10 * 365 * DAY })).expires_at!, 2 * 365 * DAY)).toBeLessThan(60_000);
    expect((await app.mint({ ttl_seconds: null })).expires_at).toBeNull();
    expect((await app.mint({ no_expiry: true })).expires_at).toBeNull();
    expect((await app.mint({ no_expiry: true, ttl_seconds: null })).expires_at).toBeNull();
    expect(offBy((await app.mint({ no_expiry: false })).expires_at!, 365 * DAY)).toBeLessThan(60_000);
  });

  it("refuses bad bodies with 400 invalid_request and writes nothing", async () => {
    const app = await setup();
    const bad: unknown[] = [
      { grants: [{ collection: "nope", ops: ["read"] }] },
      { grants: [{ collection: "notes", ops: ["read"] }, { collection: "notes", ops: ["create"] }] },
      { grants: [{ collection: "notes", ops: ["purge"] }] },
      { grants: [{ collection: "notes", ops: ["read"], scope: "all" }] },
      { grants: [{ collection: "notes" }] },
      { grants: [{ collection: "notes", ops: ["read"], extra: 1 }] },
      { mode: "loose" },
      { ttl_seconds: 0 },
      { ttl_seconds: -5 },
      { ttl_seconds: 1.5 },
      { ttl_seconds: 3600, no_expiry: true },
      { members: "yes" },
      { label: "a\u0007b" },
      { label: "x".repeat(201) },
      { role: "editor" },
      [],
    ];
    for (const body of bad) {
      await unchanged(app.appId, async () => expectError(await app.call(app.credentials, { json: body }), 400, "invalid_request"));
    }
    const unknown = await expectError(await app.call(app.credentials, { json: { grants: [{ collection: "nope", ops: ["read"] }] } }), 400, "invalid_request");
    expect(unknown.details).toMatchObject({ field: "grants.0.collection" });
    await unchanged(app.appId, async () => expectError(await app.call(app.credentials, { body: "{", contentType: "application/json" }), 400, "invalid_request"));
    expect(await count("service_credentials", "app_id = ?1", app.appId)).toBe(0);
  });

  it("an empty body mints an explicit credential that reaches nothing", async () => {
    const app = await setup();
    const res = await app.call(app.credentials, { method: "POST" });
    const minted = await json<{ token: string; grants: unknown[]; mode: string }>(res, 201);
    expect(minted).toMatchObject({ grants: [], mode: "explicit" });
    await expectError(await app.withToken(minted.token, app.rows("notes")), 403, "credential_scope_forbidden");
  });
});

describe("who may manage credentials", () => {
  it("refuses no credential, another owner, a stranger's session, a service credential and an unknown app, changing nothing", async () => {
    const app = await setup();
    const minted = await app.mint({ grants: [{ collection: "notes", ops: ["read"] }] });
    const stranger = await signIn();
    const otherAgent = await claimedAgent(stranger);
    const paths: Array<[string, string, unknown?]> = [
      ["POST", app.credentials, { grants: [] }],
      ["GET", app.credentials],
      ["POST", `${app.credentials}/${minted.id}/pause`],
      ["POST", `${app.credentials}/${minted.id}/resume`],
      ["POST", `${app.credentials}/${minted.id}/rotate`, {}],
      ["DELETE", `${app.credentials}/${minted.id}`],
    ];
    for (const [method, path, body] of paths) {
      const opts = body === undefined ? { method } : { method, json: body };
      await unchanged(app.appId, async () => {
        await expectError(await call(path, opts), 401, "unauthorized");
        await expectError(await call(path, { ...opts, key: minted.token }), 401, "unauthorized");
        await expectError(await call(path, { ...opts, key: otherAgent.api_key }), 404, "app_not_found");
        await expectError(await call(path, { ...opts, session: stranger.session }), 404, "app_not_found");
        await expectError(await call(path.replace(app.appId, "anothermissingappid0000000"), { ...opts, key: app.key }), 404, "app_not_found");
      });
    }
  });

  it("an unknown credential id is 404 not_found on every verb", async () => {
    const app = await setup();
    for (const [method, path] of [["POST", "pause"], ["POST", "resume"], ["POST", "rotate"], ["DELETE", ""]] as const) {
      const url = `${app.credentials}/cred_missing${path ? `/${path}` : ""}`;
      await unchanged(app.appId, async () => expectError(await app.call(url, { method }), 404, "not_found"));
    }
  });

  it("another app's credential id is not found through this app", async () => {
    const app = await setup();
    const other = await sibling(app);
    const minted = await other.mint({ grants: [{ collection: "notes", ops: ["read"] }] });
    await unchanged(other.appId, async () => expectError(await app.call(`${app.credentials}/${minted.id}/pause`, { method: "POST" }), 404, "not_found"));
    await unchanged(other.appId, async () => expectError(await app.call(`${app.credentials}/${minted.id}`, { method: "DELETE" }), 404, "not_found"));
  });

  it("a wrong verb answers 405 with Allow", async () => {
    const app = await setup();
    const res = await app.call(app.credentials, { method: "PUT", json: {} });
    await expectError(res, 405, "method_not_allowed");
  });
});

describe("listing", () => {
  it("lists every credential newest first with prefixes only, never a token or hash", async () => {
    const app = await setup();
    const a = await app.mint({ grants: [{ collection: "notes", ops: ["read"] }], label: "a" });
    const b = await app.mint({ mode: "following", label: "b", ttl_seconds: null });
    const res = await app.call(app.credentials);
    const text = await res.clone().text();
    expect(text).not.toContain(a.token);
    expect(text).not.toContain(b.token);
    expect(text).not.toMatch(/[0-9a-f]{64}/);
    const list = (await json<{ credentials: CredentialView[] }>(res, 200)).credentials;
    expect(list.map((c) => c.id)).toEqual([b.id, a.id]);
    for (const c of list) expect(Object.keys(c).sort()).toEqual(CREDENTIAL_VIEW_KEYS);
    expect(list[1]).toMatchObject({
      label: "a", token_prefix: a.token_prefix, mode: "explicit", grants: [{ collection: "notes", ops: ["read"] }], members: false,
      paused: false, active: true, paused_at: null, revoked_at: null, rotated_at: null, previous_token_prefix: null, previous_expires_at: null,
      last_used_at: null,
    });
    expect(list[0]).toMatchObject({ expires_at: null, mode: "following", active: true });
    expect(list[1].created_at).toMatch(ISO);
  });

  it("reads one credential by id, never its token; unknown ids are 404, a credential token is 401", async () => {
    const app = await setup();
    const minted = await app.mint({ grants: [{ collection: "notes", ops: ["read"] }], label: "one" });
    const res = await app.call(`${app.credentials}/${minted.id}`);
    const text = await res.clone().text();
    expect(text).not.toContain(minted.token);
    const one = await json<CredentialView>(res, 200);
    expect(Object.keys(one).sort()).toEqual(CREDENTIAL_VIEW_KEYS);
    expect(one).toMatchObject({ id: minted.id, label: "one", token_prefix: minted.token_prefix });
    await expectError(await app.call(`${app.credentials}/cred_missing`), 404, "not_found");
    await expectError(await app.withToken(minted.token, `${app.credentials}/${minted.id}`), 401, "unauthorized");
  });

  it("records last use", async () => {
    const app = await setup();
    const minted = await app.mint({ grants: [{ collection: "notes", ops: ["read"] }] });
    await json(await app.withToken(minted.token, app.rows("notes")), 200);
    // The touch runs after the response: poll until it has landed.
    const used = await waitFor(async () => (await app.credential(minted.id)).last_used_at, { message: "last_used_at recorded" });
    expect(used).toMatch(ISO);
  });
});

describe("the token as a bearer", () => {
  it("a read-only credential for one collection lists and reads it and nothing else", async () => {
    const app = await setup();
    const note = await app.create("notes", { text: "hello" });
    await app.create("secrets", { s: 1 }, "s1");
    const { token } = await app.mint({ grants: [{ collection: "notes", ops: ["read"] }] });
    const page = await json<{ rows: Row[] }>(await app.withToken(token, app.rows("notes")), 200);
    expect(page.rows.map((r) => r.key)).toEqual([note.key]);
    expect((await json<{ row: Row }>(await app.withToken(token, app.rows("notes", `/${note.key}`)), 200)).row.data).toEqual({ text: "hello" });
    // Another collection, another verb: the allowlist's 403.
    for (const c of ["secrets", "extra", "sealed"]) {
      const e = await expectError(await app.withToken(token, app.rows(c)), 403, "credential_scope_forbidden");
      expect(e.details).toMatchObject({ collection: c, op: "read" });
    }
    await expectError(await app.withToken(token, app.rows("secrets", "/s1")), 403, "credential_scope_forbidden");
    expect(await json(await app.withToken(token, app.rows("notes", "/count")), 200)).toEqual({ count: 1 });
    const before = await json<{ rows: Row[] }>(await app.call(app.rows("notes")), 200);
    await expectError(await app.withToken(token, app.rows("notes"), { json: { data: { text: "no" } } }), 403, "credential_scope_forbidden");
    await expectError(await app.withToken(token, app.rows("notes", `/${note.key}`), { method: "PATCH", json: { data: { text: "no" } } }), 403, "credential_scope_forbidden");
    await expectError(await app.withToken(token, app.rows("notes", `/${note.key}`), { method: "DELETE" }), 403, "credential_scope_forbidden");
    const batch = await json<{ ok_count: number; results: Array<{ error?: { code: string } }> }>(
      await app.withToken(token, app.rows("notes", "/batch"), { json: { rows: [{ data: { text: "no" } }] } }), 200);
    expect(batch.ok_count).toBe(0);
    expect(batch.results[0].error?.code).toBe("credential_scope_forbidden");
    expect(await json<{ rows: Row[] }>(await app.call(app.rows("notes")), 200)).toEqual(before);
  });

  it("refuses the token with 401 everywhere but the collection endpoints and the member list", async () => {
    const app = await setup();
    const { token, id } = await app.mint({ mode: "following", members: true, grants: [{ collection: "notes", ops: ["read", "create", "update", "delete"] }] });
    const a = app.appId;
    const refused: Array<[string, string, unknown?]> = [
      ["GET", "/v1/apps"],
      ["POST", "/v1/apps", { html: "<p>x</p>", manifest: {} }],
      ["GET", `/v1/apps/${a}`],
      ["PATCH", `/v1/apps/${a}`, { visibility: "public" }],
      ["DELETE", `/v1/apps/${a}`],
      ["POST", `/v1/apps/${a}/versions`, { html: "<p>y</p>" }],
      ["GET", `/v1/apps/${a}/document`],
      ["GET", `/v1/apps/${a}/feed?since=0`],
      ["GET", "/v1/keys"],
      ["POST", "/v1/keys"],
      ["GET", `/v1/apps/${a}/credentials`],
      ["POST", `/v1/apps/${a}/credentials`, { grants: [] }],
      ["POST", `/v1/apps/${a}/credentials/${id}/pause`],
      ["POST", `/v1/apps/${a}/credentials/${id}/rotate`, {}],
      ["DELETE", `/v1/apps/${a}/credentials/${id}`],
      ["GET", `/v1/apps/${a}/grants`],
      ["POST", `/v1/apps/${a}/grants`, { role: "editor" }],
      ["DELETE", `/v1/apps/${a}/grants/grant_x`],
      // GET members answers this members: true credential (credential-members.test.ts).
      ["POST", `/v1/apps/${a}/members`, { email: "x@example.com" }],
      ["GET", `/v1/apps/${a}/roles`],
      ["GET", "/v1/self/apps"],
    ];
    for (const [method, path, body] of refused) {
      await unchanged(a, async () => {
        const res = await app.withToken(token, path, body === undefined ? { method } : { method, json: body });
        const e = await expectError(res, 401, "unauthorized");
        expect(`${method} ${path} ${e.code}`).toBe(`${method} ${path} unauthorized`);
      });
    }
    // The app is still there, unchanged.
    expect((await json<{ id: string }>(await app.call(`/v1/apps/${a}`), 200)).id).toBe(a);
  });

  it("explicit denies unnamed collections; following lets them fall to the owner's authority; grants only narrow", async () => {
    const app = await setup();
    await app.create("secrets", { s: 1 }, "s1");
    const explicit = await app.mint({ mode: "explicit", grants: [{ collection: "notes", ops: ["read", "create"] }] });
    const following = await app.mint({ mode: "following", grants: [{ collection: "notes", ops: ["read"] }, { collection: "extra", ops: [] }] });
    await expectError(await app.withToken(explicit.token, app.rows("secrets")), 403, "credential_scope_forbidden");
    // following: secrets is unnamed, so the owner's authority applies (owner reads and writes it).
    const listed = await json<{ rows: Row[] }>(await app.withToken(following.token, app.rows("secrets")), 200);
    expect(listed.rows.map((r) => r.key)).toEqual(["s1"]);
    const created = await json<{ row: Row }>(await app.withToken(following.token, app.rows("secrets"), { json: { data: { s: 2 } } }), 201);
    expect(created.row.author).toEqual({ kind: "service", id: following.id });
    expect(await json(await app.withToken(following.token, app.rows("secrets", "/count")), 200)).toEqual({ count: 2 });
    // named with fewer ops: narrowed; named with none: carved out.
    await expectError(await app.withToken(following.token, app.rows("notes"), { json: { data: { text: "x" } } }), 403, "credential_scope_forbidden");
    await expectError(await app.withToken(following.token, app.rows("extra")), 403, "credential_scope_forbidden");
    // The owner's authority bounds both: nobody reads `sealed`, whatever the allowlist says.
    const sealedReader = await app.mint({ grants: [{ collection: "sealed", ops: ["read", "create"] }] });
    await expectError(await app.withToken(sealedReader.token, app.rows("sealed")), 403, "collection_read_forbidden");
    await expectError(await app.withToken(following.token, app.rows("sealed")), 403, "collection_read_forbidden");
    // Owner-or-agent-only verbs stay owner-or-agent-only.
    await expectError(await app.withToken(following.token, app.rows("secrets", "/s1/purge"), { method: "DELETE" }), 403, "purge_forbidden");
    await expectError(await app.withToken(following.token, app.rows("secrets", "/deleted")), 403, "forbidden");
    await expectError(await app.withToken(following.token, app.rows("secrets", "/s1/restore"), { method: "POST" }), 403, "forbidden");
    await expectError(await app.withToken(following.token, app.rows("secrets", "/retention")), 403, "forbidden");
    await expectError(await app.withToken(following.token, app.rows("secrets", "/retention"), { method: "PATCH", json: { maxRows: 5 } }), 403, "forbidden");
  });

  it("a credential writes, updates and deletes within its ops, stamped as itself", async () => {
    const app = await setup();
    const { token, id } = await app.mint({ grants: [{ collection: "notes", ops: ["read", "create", "update", "delete"] }] });
    const created = (await json<{ row: Row }>(await app.withToken(token, app.rows("notes"), { json: { data: { text: "a" } } }), 201)).row;
    expect(created).toMatchObject({ author: { kind: "service", id }, creator: { kind: "service", id }, editor: { kind: "service", id } });
    const updated = (await json<{ row: Row }>(await app.withToken(token, app.rows("notes", `/${created.key}`), { method: "PATCH", json: { data: { text: "b" }, if_match: 1 } }), 200)).row;
    expect(updated.version).toBe(2);
    expect(await json(await app.withToken(token, app.rows("notes", `/${created.key}`), { method: "DELETE" }), 200)).toEqual({ deleted: true, key: created.key });
    const batch = await json<{ ok_count: number }>(await app.withToken(token, app.rows("notes", "/batch"), { json: { rows: [{ data: { text: "x" } }, { data: { text: "y" } }] } }), 200);
    expect(batch.ok_count).toBe(2);
  });

  it("scope own: row-addressed verbs reach only rows the credential wrote last", async () => {
    const app = await setup();
    const theirs = await app.create("notes", { text: "agent's" });
    const { token, id } = await app.mint({ grants: [{ collection: "notes", ops: ["read", "create", "update", "delete"], scope: "own" }] });
    const mine = (await json<{ row: Row }>(await app.withToken(token, app.rows("notes"), { json: { data: { text: "mine" } } }), 201)).row;
    const page = await json<{ rows: Row[] }>(await app.withToken(token, app.rows("notes")), 200);
    expect(page.rows.map((r) => r.key)).toEqual([mine.key]);
    await json(await app.withToken(token, app.rows("notes", `/${mine.key}`), { method: "PATCH", json: { data: { text: "mine 2" } } }), 200);
    for (const [method, rest, body] of [["GET", "", undefined], ["PATCH", "", { data: { text: "no" } }], ["DELETE", "", undefined]] as const) {
      const res = await app.withToken(token, app.rows("notes", `/${theirs.key}${rest}`), body ? { method, json: body } : { method });
      await expectError(res, 403, "credential_scope_forbidden");
    }
    // Once someone else writes the row last, it is no longer the credential's.
    await json(await app.call(app.rows("notes", `/${mine.key}`), { method: "PATCH", json: { data: { text: "taken over" } } }), 200);
    await expectError(await app.withToken(token, app.rows("notes", `/${mine.key}`)), 403, "credential_scope_forbidden");
    expect((await app.credential(id)).active).toBe(true);
  });

  it("another app's token (same owner or not) finds no app; a forged or malformed token is 401", async () => {
    const app = await setup();
    const other = await sibling(app);
    const stranger = await setup();
    const { token } = await app.mint({ mode: "following", grants: [] });
    await json(await app.withToken(token, app.rows("notes")), 200);
    await expectError(await app.withToken(token, other.rows("notes")), 404, "app_not_found");
    await expectError(await app.withToken(token, stranger.rows("notes")), 404, "app_not_found");
    await expectError(await app.withToken(token, `/v1/apps/${other.slug}/collections/notes`), 404, "app_not_found");
    // By slug on its own app it works.
    await json(await app.withToken(token, `/v1/apps/${app.slug}/collections/notes`), 200);
    const forged = `svcs_${"0".repeat(32)}`;
    const e = await expectError(await app.withToken(forged, app.rows("notes")), 401, "unauthorized");
    expect(e.details).toMatchObject({ reason: "unknown" });
    await expectError(await app.withToken("svcs_nothex", app.rows("notes")), 401, "unauthorized");
    await expectError(await app.withToken(`${token}x`, app.rows("notes")), 401, "unauthorized");
    await expectError(await call(app.rows("notes"), { authorization: `Basic ${token}` }), 401, "unauthorized");
  });

  it("an expired credential is 401 with reason expired", async () => {
    const app = await setup();
    const { token, id } = await app.mint({ grants: [{ collection: "notes", ops: ["read"] }] });
    await setCredentialColumn(id, "expires_at", past());
    const e = await expectError(await app.withToken(token, app.rows("notes")), 401, "unauthorized");
    expect(e.details).toMatchObject({ reason: "expired" });
    expect((await app.credential(id)).active).toBe(false);
    await expectError(await app.call(`${app.credentials}/${id}/rotate`, { method: "POST", json: {} }), 409, "conflict");
  });

  it("a credential of a deleted app stops with the app", async () => {
    const app = await setup();
    const { token } = await app.mint({ grants: [{ collection: "notes", ops: ["read"] }] });
    const deleted = await app.call(`/v1/apps/${app.appId}`, { method: "DELETE" });
    expect(deleted.ok).toBe(true);
    await deleted.arrayBuffer();
    await expectError(await app.withToken(token, app.rows("notes")), 410, "soft_deleted");
  });
});

describe("pause, resume, revoke", () => {
  it("pause stops the token at once, resume brings it back; both idempotent", async () => {
    const app = await setup();
    const { token, id } = await app.mint({ grants: [{ collection: "notes", ops: ["read"] }] });
    await json(await app.withToken(token, app.rows("notes")), 200);
    const paused = await json<CredentialView>(await app.call(`${app.credentials}/${id}/pause`, { method: "POST" }), 200);
    expect(paused).toMatchObject({ id, paused: true, active: false });
    expect(paused.paused_at).toMatch(ISO);
    const e = await expectError(await app.withToken(token, app.rows("notes")), 401, "unauthorized");
    expect(e.details).toMatchObject({ reason: "paused" });
    const again = await json<CredentialView>(await app.call(`${app.credentials}/${id}/pause`, { method: "POST" }), 200);
    expect(again.paused_at).toBe(paused.paused_at);
    const resumed = await json<CredentialView>(await app.call(`${app.credentials}/${id}/resume`, { method: "POST", session: app.human.session }), 200);
    expect(resumed).toMatchObject({ paused: false, active: true, paused_at: null });
    await json(await app.withToken(token, app.rows("notes")), 200);
    await json(await app.call(`${app.credentials}/${id}/resume`, { method: "POST" }), 200);
  });

  it("revoke is permanent and idempotent; resume, pause and rotate are refused afterwards", async () => {
    const app = await setup();
    const { token, id } = await app.mint({ grants: [{ collection: "notes", ops: ["read"] }] });
    await json(await app.call(`${app.credentials}/${id}/pause`, { method: "POST" }), 200);
    const revoked = await json<CredentialView>(await app.call(`${app.credentials}/${id}`, { method: "DELETE" }), 200);
    expect(revoked).toMatchObject({ id, active: false });
    expect(revoked.revoked_at).toMatch(ISO);
    const e = await expectError(await app.withToken(token, app.rows("notes")), 401, "unauthorized");
    expect(e.details).toMatchObject({ reason: "revoked" });
    const second = await json<CredentialView>(await app.call(`${app.credentials}/${id}`, { method: "DELETE" }), 200);
    expect(second.revoked_at).toBe(revoked.revoked_at);
    for (const verb of ["resume", "pause", "rotate"]) {
      await unchanged(app.appId, async () => expectError(await app.call(`${app.credentials}/${id}/${verb}`, { method: "POST", json: {} }), 409, "conflict"));
    }
    await expectError(await app.withToken(token, app.rows("notes")), 401, "unauthorized");
    expect((await app.credential(id)).revoked_at).toBe(revoked.revoked_at);
  });
});

describe("rotation", () => {
  it("the old token keeps working through the overlap (default 1 day), then stops", async () => {
    const app = await setup();
    const old = await app.mint({ grants: [{ collection: "notes", ops: ["read"] }] });
    const res = await app.call(`${app.credentials}/${old.id}/rotate`, { method: "POST" });
    const rotated = await json<{ id: string; token: string; token_prefix: string; previous_token_prefix: string; previous_expires_at: string }>(res, 200);
    expect(Object.keys(rotated).sort()).toEqual(["id", "previous_expires_at", "previous_token_prefix", "token", "token_prefix"]);
    expect(rotated.token).toMatch(TOKEN);
    expect(rotated.token).not.toBe(old.token);
    expect(rotated.previous_token_prefix).toBe(old.token_prefix);
    expect(offBy(rotated.previous_expires_at, DAY)).toBeLessThan(60_000);
    await json(await app.withToken(old.token, app.rows("notes")), 200);
    await json(await app.withToken(rotated.token, app.rows("notes")), 200);
    const view = await app.credential(old.id);
    expect(view).toMatchObject({ token_prefix: rotated.token_prefix, previous_token_prefix: old.token_prefix, previous_expires_at: rotated.previous_expires_at });
    expect(view.rotated_at).toMatch(ISO);
    // The overlap ends.
    await setCredentialColumn(old.id, "previous_expires_at", past());
    const e = await expectError(await app.withToken(old.token, app.rows("notes")), 401, "unauthorized");
    expect(e.details).toMatchObject({ reason: "expired" });
    await json(await app.withToken(rotated.token, app.rows("notes")), 200);
    expect((await app.credential(old.id)).previous_token_prefix).toBeNull();
  });

  it("overlap 0 kills the old token at once; a long overlap is clamped; a second rotation retires the first old token", async () => {
    const app = await setup();
    const first = await app.mint({ grants: [{ collection: "notes", ops: ["read"] }] });
    const r1 = await json<{ token: string; previous_expires_at: string | null; previous_token_prefix: string | null }>(
      await app.call(`${app.credentials}/${first.id}/rotate`, { method: "POST", json: { overlap_seconds: 0 } }), 200);
    expect(r1.previous_expires_at).toBeNull();
    expect(r1.previous_token_prefix).toBeNull();
    await expectError(await app.withToken(first.token, app.rows("notes")), 401, "unauthorized");
    await json(await app.withToken(r1.token, app.rows("notes")), 200);
    const r2 = await json<{ token: string; previous_expires_at: string }>(
      await app.call(`${app.credentials}/${first.id}/rotate`, { method: "POST", json: { overlap_seconds: 365 * DAY } }), 200);
    expect(offBy(r2.previous_expires_at, 7 * DAY)).toBeLessThan(60_000);
    await json(await app.withToken(r1.token, app.rows("notes")), 200);
    const r3 = await json<{ token: string }>(await app.call(`${app.credentials}/${first.id}/rotate`, { method: "POST", json: { overlap_seconds: 60 } }), 200);
    await expectError(await app.withToken(r1.token, app.rows("notes")), 401, "unauthorized");
    await json(await app.withToken(r2.token, app.rows("notes")), 200);
    await json(await app.withToken(r3.token, app.rows("notes")), 200);
  });

  it("the overlap never outlives the credential", async () => {
    const app = await setup();
    const minted = await app.mint({ ttl_seconds: 120, grants: [{ collection: "notes", ops: ["read"] }] });
    const r = await json<{ previous_expires_at: string }>(await app.call(`${app.credentials}/${minted.id}/rotate`, { method: "POST", json: { overlap_seconds: DAY } }), 200);
    expect(r.previous_expires_at).toBe(minted.expires_at);
  });

  it("revoke kills the overlap token too; a rotated paused credential stays paused", async () => {
    const app = await setup();
    const old = await app.mint({ grants: [{ collection: "notes", ops: ["read"] }] });
    const r = await json<{ token: string }>(await app.call(`${app.credentials}/${old.id}/rotate`, { method: "POST", json: {} }), 200);
    await json(await app.withToken(old.token, app.rows("notes")), 200);
    await json(await app.call(`${app.credentials}/${old.id}`, { method: "DELETE" }), 200);
    await expectError(await app.withToken(old.token, app.rows("notes")), 401, "unauthorized");
    await expectError(await app.withToken(r.token, app.rows("notes")), 401, "unauthorized");
    const stored = await env.DB.prepare("SELECT previous_token_hash FROM service_credentials WHERE id = ?1").bind(old.id).first<{ previous_token_hash: string | null }>();
    expect(stored!.previous_token_hash).toBeNull();

    const p = await app.mint({ grants: [{ collection: "notes", ops: ["read"] }] });
    await json(await app.call(`${app.credentials}/${p.id}/pause`, { method: "POST" }), 200);
    const pr = await json<{ token: string }>(await app.call(`${app.credentials}/${p.id}/rotate`, { method: "POST", json: { overlap_seconds: 0 } }), 200);
    await expectError(await app.withToken(pr.token, app.rows("notes")), 401, "unauthorized");
    await json(await app.call(`${app.credentials}/${p.id}/resume`, { method: "POST" }), 200);
    await json(await app.withToken(pr.token, app.rows("notes")), 200);
  });

  it("refuses a bad overlap with 400 and changes nothing", async () => {
    const app = await setup();
    const minted = await app.mint({ grants: [{ collection: "notes", ops: ["read"] }] });
    for (const body of [{ overlap_seconds: -1 }, { overlap_seconds: 1.5 }, { overlap_seconds: "60" }, { extra: true }]) {
      await unchanged(app.appId, async () => expectError(await app.call(`${app.credentials}/${minted.id}/rotate`, { method: "POST", json: body }), 400, "invalid_request"));
    }
    await json(await app.withToken(minted.token, app.rows("notes")), 200);
  });
});
